// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <grain/core/common/error.hpp>
#include <grain/core/geometry/shapes.hpp>

namespace grain {

void TriangleMesh::finalize() {
  GRAIN_REQUIRE(!triangles.empty(), "mesh: no triangles");
  faceNormals.clear();
  faceNormals.reserve(triangles.size());
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const auto& tri = triangles[t];
    for (auto v : tri) {
      GRAIN_REQUIRE(v < vertices.size(),
                    "mesh: triangle " + std::to_string(t) + " has vertex index out of range");
    }
    const Vec3 n = (vertices[tri[1]] - vertices[tri[0]]).cross(vertices[tri[2]] - vertices[tri[0]]);
    const Real len = n.norm();
    // Degenerate triangles get a zero normal and are skipped by the narrow phase.
    faceNormals.push_back(len > 0.0 ? Vec3(n / len) : Vec3::Zero());
  }
}

namespace {
struct BoundingRadiusVisitor {
  Real operator()(const Sphere& s) const { return s.radius; }
  Real operator()(const Box& b) const { return b.center.norm() + b.halfExtent.norm(); }
  Real operator()(const Capsule& c) const { return 0.5 * c.length + c.radius; }
  Real operator()(const Halfspace&) const { return std::numeric_limits<Real>::infinity(); }
  Real operator()(const Mesh& m) const {
    Real r = 0.0;
    for (const Vec3& v : m.data->vertices) {
      r = std::max(r, v.norm());
    }
    return r;
  }
};

bool finitePositive(Real x) {
  return std::isfinite(x) && x > 0.0;
}
}  // namespace

Real boundingRadius(const Shape& s) {
  return std::visit(BoundingRadiusVisitor{}, s);
}

void validateShape(const Shape& s) {
  if (const auto* sp = std::get_if<Sphere>(&s)) {
    GRAIN_REQUIRE(finitePositive(sp->radius), "sphere radius must be > 0");
  } else if (const auto* b = std::get_if<Box>(&s)) {
    GRAIN_REQUIRE(finitePositive(b->halfExtent.x()) && finitePositive(b->halfExtent.y()) &&
                      finitePositive(b->halfExtent.z()),
                  "box extent must be > 0 in every direction");
    GRAIN_REQUIRE(b->center.allFinite(), "box center must be finite");
  } else if (const auto* c = std::get_if<Capsule>(&s)) {
    GRAIN_REQUIRE(finitePositive(c->radius), "capsule radius must be > 0");
    GRAIN_REQUIRE(std::isfinite(c->length) && c->length >= 0.0, "capsule length must be >= 0");
    GRAIN_REQUIRE(c->axis.allFinite() && c->axis.norm() > 0.0, "capsule normal must be non-zero");
  } else if (const auto* h = std::get_if<Halfspace>(&s)) {
    GRAIN_REQUIRE(h->normal.allFinite() && h->normal.norm() > 0.0,
                  "halfspace normal must be non-zero");
  } else if (const auto* m = std::get_if<Mesh>(&s)) {
    GRAIN_REQUIRE(m->data != nullptr, "mesh has no data");
    GRAIN_REQUIRE(!m->data->triangles.empty(), "mesh has no triangles");
    GRAIN_REQUIRE(m->data->faceNormals.size() == m->data->triangles.size(), "mesh not finalized");
  }
}

ShapeIndex ShapeStore::add(Shape shape) {
  // Normalise direction vectors once so that kernels can rely on unit length.
  if (auto* c = std::get_if<Capsule>(&shape)) {
    validateShape(shape);
    c->axis.normalize();
  } else if (auto* h = std::get_if<Halfspace>(&shape)) {
    validateShape(shape);
    h->normal.normalize();
  } else {
    validateShape(shape);
  }
  const auto index = static_cast<ShapeIndex>(shapes_.size());
  byValue_.emplace(shapeKey(shape), index);
  shapes_.push_back(std::move(shape));
  return index;
}

namespace {
template <typename T>
void appendBytes(std::string& key, const T& value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof(T));
}
void appendVec(std::string& key, const Vec3& v) {
  for (int k = 0; k < 3; ++k) {
    appendBytes(key, v[k]);
  }
}
}  // namespace

std::string shapeKey(const Shape& s) {
  std::string key(1, static_cast<char>(s.index()));
  if (const auto* sp = std::get_if<Sphere>(&s)) {
    appendBytes(key, sp->radius);
  } else if (const auto* b = std::get_if<Box>(&s)) {
    appendVec(key, b->halfExtent);
    appendVec(key, b->center);
  } else if (const auto* c = std::get_if<Capsule>(&s)) {
    appendVec(key, c->axis);
    appendBytes(key, c->radius);
    appendBytes(key, c->length);
  } else if (const auto* h = std::get_if<Halfspace>(&s)) {
    appendVec(key, h->normal);
  } else if (const auto* m = std::get_if<Mesh>(&s)) {
    appendBytes(key, reinterpret_cast<std::uintptr_t>(m->data.get()));
    appendBytes(key, m->oneSided);
  }
  return key;
}

ShapeIndex ShapeStore::intern(const Shape& shape) {
  std::string key = shapeKey(shape);
  if (const auto it = byValue_.find(key); it != byValue_.end()) {
    return it->second;
  }
  validateShape(shape);
  GRAIN_REQUIRE(shapes_.size() < kNoShape, "shape store: too many shapes");
  const auto index = static_cast<ShapeIndex>(shapes_.size());
  byValue_.emplace(std::move(key), index);
  shapes_.push_back(shape);
  return index;
}

std::vector<ShapeIndex> ShapeStore::compact(const std::vector<char>& used) {
  GRAIN_REQUIRE(used.size() == shapes_.size(), "shape store: one flag per shape");
  std::vector<ShapeIndex> newIndex(shapes_.size(), kNoShape);
  std::vector<Shape> kept;
  byValue_.clear();
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    if (used[i] != 0) {
      newIndex[i] = static_cast<ShapeIndex>(kept.size());
      byValue_.emplace(shapeKey(shapes_[i]), newIndex[i]);
      kept.push_back(std::move(shapes_[i]));
    }
  }
  shapes_ = std::move(kept);
  return newIndex;
}

}  // namespace grain
