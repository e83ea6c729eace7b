// SPDX-License-Identifier: MIT
#include <cmath>
#include <map>

#include <grain/convert/scene_bodies.hpp>
#include <grain/core/geometry/mass_properties.hpp>

namespace grain::convert {

namespace {
constexpr Real kPi = 3.14159265358979323846;
}  // namespace

SceneBodies SceneBodies::load(const std::filesystem::path& scene,
                              const std::filesystem::path& mediaDirectory) {
  io::SceneLoadOptions options;
  options.mediaDirectory = mediaDirectory;
  SceneBodies b;
  b.scene_ = io::loadScene(scene, options);
  return b;
}

std::optional<std::size_t> SceneBodies::indexOf(BodyId id) const {
  if (!scene_) {
    return std::nullopt;
  }
  return scene_->system.bodies.indexOf(id);
}

const Shape* SceneBodies::shape(BodyId id) const {
  const auto i = indexOf(id);
  if (!i) {
    return nullptr;
  }
  return &scene_->system.shapes[scene_->system.bodies.shapes()[*i]];
}

std::uint8_t SceneBodies::shapeCode(BodyId id) const {
  const Shape* s = shape(id);
  return static_cast<std::uint8_t>(s ? shapeType(*s) : ShapeType::Sphere);
}

Real SceneBodies::radius(BodyId id) const {
  const Shape* s = shape(id);
  if (s == nullptr) {
    return defaultRadius_;
  }
  if (const auto* sp = std::get_if<Sphere>(s)) {
    return sp->radius;
  }
  return boundingRadius(*s);
}

Real SceneBodies::volume(BodyId id) const {
  const Shape* s = shape(id);
  if (s == nullptr) {
    return 4.0 / 3.0 * kPi * defaultRadius_ * defaultRadius_ * defaultRadius_;
  }
  const ShapeType t = shapeType(*s);
  if (t == ShapeType::Sphere || t == ShapeType::Box || t == ShapeType::Capsule) {
    return grain::volume(*s);
  }
  return 0.0;
}

MaterialId SceneBodies::material(BodyId id, MaterialId fromFile) const {
  const auto i = indexOf(id);
  return i ? scene_->system.bodies.materials()[*i] : fromFile;
}

std::optional<std::pair<Real, Vec3>> SceneBodies::massProperties(BodyId id) const {
  const auto i = indexOf(id);
  if (!i) {
    return std::nullopt;
  }
  return std::make_pair(scene_->system.bodies.masses()[*i],
                        scene_->system.bodies.inertiasBody()[*i]);
}

std::int64_t SceneBodies::groupIndex(BodyId id) const {
  const auto i = indexOf(id);
  if (!i || *i >= scene_->groupOfBody.size()) {
    return -1;
  }
  return scene_->groupOfBody[*i];
}

Vec3 SceneBodies::gravity() const {
  return scene_ ? scene_->system.externalForces.gravityAcceleration() : Vec3::Zero();
}

void SurfaceMesh::append(const SurfaceMesh& part, const Mat3& rotation, const Vec3& translation,
                         std::uint32_t ownerIndex) {
  const auto base = static_cast<std::uint32_t>(vertices.size());
  for (const Vec3& v : part.vertices) {
    vertices.push_back(rotation * v + translation);
  }
  for (const auto& t : part.triangles) {
    triangles.push_back({t[0] + base, t[1] + base, t[2] + base});
    owner.push_back(ownerIndex);
  }
}

namespace {

/// Unit icosphere with `subdivisions` refinements, outward counter-clockwise triangles.
SurfaceMesh icosphere(int subdivisions) {
  SurfaceMesh m;
  const Real p = (1.0 + std::sqrt(5.0)) / 2.0;
  const Real base[12][3] = {{-1, p, 0}, {1, p, 0}, {-1, -p, 0}, {1, -p, 0},
                            {0, -1, p}, {0, 1, p}, {0, -1, -p}, {0, 1, -p},
                            {p, 0, -1}, {p, 0, 1}, {-p, 0, -1}, {-p, 0, 1}};
  for (const auto& v : base) {
    m.vertices.push_back(Vec3(v[0], v[1], v[2]).normalized());
  }
  m.triangles = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                 {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                 {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                 {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (int s = 0; s < subdivisions; ++s) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> mid;
    auto midpoint = [&](std::uint32_t a, std::uint32_t b) {
      const auto key = std::minmax(a, b);
      const auto it = mid.find(key);
      if (it != mid.end()) {
        return it->second;
      }
      m.vertices.push_back((m.vertices[a] + m.vertices[b]).normalized());
      const auto idx = static_cast<std::uint32_t>(m.vertices.size() - 1);
      mid.emplace(key, idx);
      return idx;
    };
    std::vector<std::array<std::uint32_t, 3>> next;
    for (const auto& t : m.triangles) {
      const std::uint32_t a = midpoint(t[0], t[1]);
      const std::uint32_t b = midpoint(t[1], t[2]);
      const std::uint32_t c = midpoint(t[2], t[0]);
      next.push_back({t[0], a, c});
      next.push_back({t[1], b, a});
      next.push_back({t[2], c, b});
      next.push_back({a, b, c});
    }
    m.triangles.swap(next);
  }
  m.owner.assign(m.triangles.size(), 0);
  return m;
}

/// Two unit vectors completing n to a right-handed orthonormal frame (t1, t2, n).
std::pair<Vec3, Vec3> orthonormalFrame(const Vec3& n) {
  const Vec3 a = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 t1 = n.cross(a).normalized();
  return {t1, n.cross(t1)};
}

SurfaceMesh capsuleMesh(const Capsule& c, int segments) {
  SurfaceMesh m;
  const Vec3 axis = c.axis.normalized();
  const auto [u, w] = orthonormalFrame(axis);
  const int rings = std::max(2, segments / 4);  // per hemisphere
  const Real h = 0.5 * c.length;
  // Rings from the bottom pole to the top pole; the two hemispheres share the cylinder.
  std::vector<std::pair<Real, Real>> ringAxialRadius;  // axial offset, ring radius
  for (int k = 0; k <= rings; ++k) {
    const Real phi = -0.5 * kPi + 0.5 * kPi * k / rings;
    ringAxialRadius.emplace_back(-h + c.radius * std::sin(phi), c.radius * std::cos(phi));
  }
  for (int k = 0; k <= rings; ++k) {
    const Real phi = 0.5 * kPi * k / rings;
    ringAxialRadius.emplace_back(h + c.radius * std::sin(phi), c.radius * std::cos(phi));
  }
  const int nRings = static_cast<int>(ringAxialRadius.size());
  for (int k = 0; k < nRings; ++k) {
    for (int s = 0; s < segments; ++s) {
      const Real a = 2.0 * kPi * s / segments;
      const auto [ax, rr] = ringAxialRadius[static_cast<std::size_t>(k)];
      m.vertices.push_back(ax * axis + rr * (std::cos(a) * u + std::sin(a) * w));
    }
  }
  auto idx = [segments](int k, int s) {
    return static_cast<std::uint32_t>(k * segments + (s % segments));
  };
  for (int k = 0; k + 1 < nRings; ++k) {
    for (int s = 0; s < segments; ++s) {
      m.triangles.push_back({idx(k, s), idx(k, s + 1), idx(k + 1, s + 1)});
      m.triangles.push_back({idx(k, s), idx(k + 1, s + 1), idx(k + 1, s)});
    }
  }
  m.owner.assign(m.triangles.size(), 0);
  return m;
}

SurfaceMesh boxMesh(const Box& b) {
  SurfaceMesh m;
  for (int k = 0; k < 8; ++k) {
    const Vec3 sgn((k & 1) ? 1.0 : -1.0, (k & 2) ? 1.0 : -1.0, (k & 4) ? 1.0 : -1.0);
    m.vertices.push_back(b.center + sgn.cwiseProduct(b.halfExtent));
  }
  m.triangles = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                 {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  m.owner.assign(m.triangles.size(), 0);
  return m;
}

}  // namespace

SurfaceMesh triangulate(const Shape& shape, const TessellationOptions& options,
                        const Vec3& planeCentreInK) {
  if (const auto* s = std::get_if<Sphere>(&shape)) {
    SurfaceMesh m = icosphere(options.sphereSubdivisions);
    for (Vec3& v : m.vertices) {
      v *= s->radius;
    }
    return m;
  }
  if (const auto* b = std::get_if<Box>(&shape)) {
    return boxMesh(*b);
  }
  if (const auto* c = std::get_if<Capsule>(&shape)) {
    return capsuleMesh(*c, std::max(6, options.segments));
  }
  if (const auto* h = std::get_if<Halfspace>(&shape)) {
    const Vec3 n = h->normal.normalized();
    const auto [t1, t2] = orthonormalFrame(n);
    const Vec3 c = planeCentreInK - n * n.dot(planeCentreInK);
    const Real a = options.planeHalfSize;
    SurfaceMesh m;
    m.vertices = {c - a * t1 - a * t2, c + a * t1 - a * t2, c + a * t1 + a * t2,
                  c - a * t1 + a * t2};
    m.triangles = {{0, 1, 2}, {0, 2, 3}};  // counter-clockwise seen from the normal side
    m.owner.assign(2, 0);
    return m;
  }
  const auto& mesh = std::get<Mesh>(shape);
  SurfaceMesh m;
  if (mesh.data) {
    m.vertices = mesh.data->vertices;
    m.triangles = mesh.data->triangles;
  }
  m.owner.assign(m.triangles.size(), 0);
  return m;
}

SurfaceMesh triangulateStaticBodies(const io::SceneDescription& scene,
                                    const TessellationOptions& options,
                                    std::vector<std::size_t>& bodyIndices) {
  SurfaceMesh all;
  bodyIndices.clear();
  const BodyStorage& b = scene.system.bodies;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b.isSimulated(i)) {
      continue;
    }
    const Mat3 r = b.orientations()[i].toRotationMatrix();
    const Vec3& t = b.positions()[i];
    const Vec3 centreInK = r.transpose() * (options.planeCentre - t);
    const SurfaceMesh part = triangulate(scene.system.shapes[b.shapes()[i]], options, centreInK);
    all.append(part, r, t, static_cast<std::uint32_t>(bodyIndices.size()));
    bodyIndices.push_back(i);
  }
  return all;
}

Bounds stateBounds(const io::SimState& state, const SceneBodies& bodies) {
  Bounds b;
  for (const auto& body : state.bodies) {
    const Real r = bodies.radius(body.id);
    b.add(body.position, std::isfinite(r) ? r : 0.0);
  }
  return b;
}

}  // namespace grain::convert
