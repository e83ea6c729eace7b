// SPDX-License-Identifier: MIT
#include <cmath>
#include <utility>

#include <grain/core/collision/distance_queries.hpp>
#include <grain/core/collision/narrow_phase.hpp>

#include "kernels.hpp"

namespace grain::collision {

namespace detail {

namespace {

/// Appends the contact of two spheres if they touch or overlap.
inline void spherePair(const Vec3& cA, Real rA, const Vec3& cB, Real rB, const Vec3& fallbackNormal,
                       ContactManifold& out) {
  ContactPoint c;
  if (sphereContact(cA, rA, cB, rB, fallbackNormal, c)) {
    out.push_back(c);
  }
}

/// End points (I) of a capsule's core segment.
inline void capsuleEnds(const ShapePose& p, const Capsule& c, Vec3& e0, Vec3& e1) {
  const Vec3 h = (0.5 * c.length) * (p.rotation * c.axis);
  e0 = p.position - h;
  e1 = p.position + h;
}

}  // namespace

void sphereSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                  NarrowPhaseScratch&) {
  const Real rA = std::get_if<Sphere>(a.shape)->radius;
  const Real rB = std::get_if<Sphere>(b.shape)->radius;
  spherePair(a.position, rA, b.position, rB, Vec3::UnitZ(), out);
}

void capsuleSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                   NarrowPhaseScratch&) {
  const Capsule& cap = *std::get_if<Capsule>(a.shape);
  const Real rB = std::get_if<Sphere>(b.shape)->radius;
  Vec3 e0;
  Vec3 e1;
  capsuleEnds(a, cap, e0, e1);
  const Real t = closestSegmentParameter(e0, e1, b.position);
  const Vec3 x = e0 + t * (e1 - e0);
  spherePair(x, cap.radius, b.position, rB, anyPerpendicular(a.rotation * cap.axis), out);
}

void capsuleCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                    NarrowPhaseScratch&) {
  const Capsule& ca = *std::get_if<Capsule>(a.shape);
  const Capsule& cb = *std::get_if<Capsule>(b.shape);
  Vec3 a0;
  Vec3 a1;
  Vec3 b0;
  Vec3 b1;
  capsuleEnds(a, ca, a0, a1);
  capsuleEnds(b, cb, b0, b1);
  const Vec3 axisA = a.rotation * ca.axis;
  const Vec3 axisB = b.rotation * cb.axis;
  const Vec3 cross = axisA.cross(axisB);
  const Vec3 fallback =
      cross.squaredNorm() > 1e-24 ? Vec3(cross.normalized()) : anyPerpendicular(axisA);

  const SegmentClosest cp = closestPointsSegments(a0, a1, b0, b1);
  spherePair(cp.onFirst, ca.radius, cp.onSecond, cb.radius, fallback, out);

  // Nearly parallel axes (angle below ~0.6 deg): add the two ends of the overlap of the
  // segments, so that a capsule lying on another one rests on two points.
  constexpr Real kParallelSin = 1e-2;
  if (ca.length <= 0.0 || cb.length <= 0.0 || cross.norm() > kParallelSin) {
    return;
  }
  const Vec3 da = a1 - a0;
  const Real la2 = da.squaredNorm();
  Real s0 = da.dot(b0 - a0) / la2;
  Real s1 = da.dot(b1 - a0) / la2;
  if (s0 > s1) {
    std::swap(s0, s1);
  }
  s0 = std::max(s0, Real(0));
  s1 = std::min(s1, Real(1));
  constexpr Real kDistinct = 1e-9;
  if (s1 - s0 <= kDistinct) {
    return;
  }
  for (const Real s : {s0, s1}) {
    if (std::abs(s - cp.s) <= kDistinct) {
      continue;  // the closest pair is already there
    }
    const Vec3 x = a0 + s * da;
    const Real t = closestSegmentParameter(b0, b1, x);
    spherePair(x, ca.radius, b0 + t * (b1 - b0), cb.radius, fallback, out);
  }
}

void halfspaceSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                     NarrowPhaseScratch&) {
  const Vec3 n = a.rotation * std::get_if<Halfspace>(a.shape)->normal;
  const Real r = std::get_if<Sphere>(b.shape)->radius;
  const Real h = n.dot(b.position - a.position);  // signed height of the centre over the plane
  const Real gap = h - r;
  if (gap <= 0.0) {
    emit(out, n, gap, b.position - h * n, b.position - r * n);
  }
}

void halfspaceCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                      NarrowPhaseScratch&) {
  const Vec3 n = a.rotation * std::get_if<Halfspace>(a.shape)->normal;
  const Capsule& cap = *std::get_if<Capsule>(b.shape);
  Vec3 e[2];
  capsuleEnds(b, cap, e[0], e[1]);
  const int ends = cap.length > 0.0 ? 2 : 1;
  for (int k = 0; k < ends; ++k) {
    const Real h = n.dot(e[k] - a.position);
    const Real gap = h - cap.radius;
    if (gap <= 0.0) {
      emit(out, n, gap, e[k] - h * n, e[k] - cap.radius * n);
    }
  }
}

}  // namespace detail

namespace {

/// Runs kernel K with the roles of A and B exchanged and flips its output back.
template <PairKernel K>
void swapped(const ShapePose& a, const ShapePose& b, ContactManifold& out,
             NarrowPhaseScratch& scratch) {
  const std::size_t first = out.size();
  K(b, a, out, scratch);
  for (std::size_t k = first; k < out.size(); ++k) {
    out[k].normal = -out[k].normal;
    std::swap(out[k].pointA, out[k].pointB);
  }
}

using Table = std::array<std::array<PairKernel, kShapeTypeCount>, kShapeTypeCount>;

constexpr std::size_t idx(ShapeType t) {
  return static_cast<std::size_t>(t);
}

constexpr Table makeTable() {
  using namespace detail;
  Table t{};
  constexpr auto S = idx(ShapeType::Sphere);
  constexpr auto B = idx(ShapeType::Box);
  constexpr auto C = idx(ShapeType::Capsule);
  constexpr auto H = idx(ShapeType::Halfspace);
  constexpr auto M = idx(ShapeType::Mesh);
  t[S][S] = &sphereSphere;
  t[B][S] = &boxSphere;
  t[S][B] = &swapped<&boxSphere>;
  t[B][B] = &boxBox;
  t[C][S] = &capsuleSphere;
  t[S][C] = &swapped<&capsuleSphere>;
  t[B][C] = &boxCapsule;
  t[C][B] = &swapped<&boxCapsule>;
  t[C][C] = &capsuleCapsule;
  t[H][S] = &halfspaceSphere;
  t[S][H] = &swapped<&halfspaceSphere>;
  t[H][B] = &halfspaceBox;
  t[B][H] = &swapped<&halfspaceBox>;
  t[H][C] = &halfspaceCapsule;
  t[C][H] = &swapped<&halfspaceCapsule>;
  t[M][S] = &meshSphere;
  t[S][M] = &swapped<&meshSphere>;
  t[M][B] = &meshBox;
  t[B][M] = &swapped<&meshBox>;
  t[M][C] = &meshCapsule;
  t[C][M] = &swapped<&meshCapsule>;
  return t;
}

constexpr Table kTable = makeTable();

struct AabbVisitor {
  const Vec3& p;
  const Mat3& r;
  Aabb operator()(const Sphere& s) const {
    return Aabb::fromCenterHalf(p, Vec3::Constant(s.radius));
  }
  Aabb operator()(const Box& b) const {
    return transformAabb(Aabb{b.center - b.halfExtent, b.center + b.halfExtent}, p, r);
  }
  Aabb operator()(const Capsule& c) const {
    const Vec3 h = (0.5 * c.length) * (r * c.axis);
    const Vec3 e = h.cwiseAbs() + Vec3::Constant(c.radius);
    return Aabb::fromCenterHalf(p, e);
  }
  Aabb operator()(const Halfspace&) const { return Aabb::infinite(); }
  Aabb operator()(const Mesh& m) const {
    Aabb local;
    for (const Vec3& v : m.data->vertices) {
      local.extend(v);
    }
    return transformAabb(local, p, r);
  }
};

}  // namespace

PairKernel pairKernel(ShapeType typeA, ShapeType typeB) {
  return kTable[idx(typeA)][idx(typeB)];
}

void collide(const ShapePose& a, const ShapePose& b, ContactManifold& out,
             NarrowPhaseScratch& scratch) {
  const PairKernel k = pairKernel(shapeType(*a.shape), shapeType(*b.shape));
  if (k != nullptr) {
    k(a, b, out, scratch);
  }
}

Aabb shapeAabb(const Shape& shape, const Vec3& position, const Mat3& rotation) {
  return std::visit(AabbVisitor{position, rotation}, shape);
}

}  // namespace grain::collision
