// SPDX-License-Identifier: MIT
#include <cmath>
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
  shapes_.push_back(std::move(shape));
  return static_cast<ShapeIndex>(shapes_.size() - 1);
}

}  // namespace grain
