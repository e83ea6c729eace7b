// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include <grain/core/collision/narrow_phase.hpp>

/// Internal declarations shared by the narrow-phase translation units. Every kernel is written
/// for one canonical order (A, B) of shape types; the dispatch table in narrow_phase.cpp wraps
/// it to serve the swapped order as well.
namespace grain::collision::detail {

/// Appends a contact; `gap` is the analytic signed distance (m), consistent with
/// normal . (pointB - pointA) up to rounding.
inline void emit(ContactManifold& out, const Vec3& normal, Real gap, const Vec3& pointA,
                 const Vec3& pointB) {
  out.push_back(ContactPoint{normal, gap, pointA, pointB});
}

/// Contact of two spheres (centres cA, cB, radii rA, rB, all in one frame); false if they are
/// separated. `fallbackNormal` is used when the centres coincide. Shared by the sphere-sphere
/// kernel and the detector's inlined sphere-sphere path, so both give identical results.
inline bool sphereContact(const Vec3& cA, Real rA, const Vec3& cB, Real rB,
                          const Vec3& fallbackNormal, ContactPoint& c) {
  const Vec3 d = cB - cA;
  const Real rs = rA + rB;
  const Real d2 = d.squaredNorm();
  if (d2 > rs * rs * (1.0 + 1e-12)) {
    return false;
  }
  const Real dist = std::sqrt(d2);
  c.gap = dist - rs;
  if (c.gap > 0.0) {
    return false;
  }
  c.normal = dist > 0.0 ? Vec3(d / dist) : fallbackNormal;
  c.pointA = cA + rA * c.normal;
  c.pointB = cB - rB * c.normal;
  return true;
}

/// Small convex polytope (a box or a two-sided triangle) in one frame, for SAT and clipping.
struct Polytope {
  int numVerts = 0;
  std::array<Vec3, 8> verts;
  int numFaceAxes = 0;  ///< distinct face normal directions (unit)
  std::array<Vec3, 3> faceAxes;
  int numFaces = 0;  ///< oriented faces (outward normal + vertex loop)
  std::array<Vec3, 6> faceNormals;
  std::array<std::array<std::uint8_t, 4>, 6> faceVerts{};
  std::array<std::uint8_t, 6> faceSize{};
  int numEdgeDirs = 0;  ///< distinct edge directions (unit)
  std::array<Vec3, 3> edgeDirs;
  int numEdges = 0;
  std::array<std::array<std::uint8_t, 2>, 12> edges{};
  std::array<std::uint8_t, 12> edgeDir{};
  Real size = 0.0;  ///< characteristic length (m) for tolerances
};

/// Box with centre `center`, axes the columns of `rotation` and half extents `half`.
Polytope makeBoxPolytope(const Vec3& center, const Mat3& rotation, const Vec3& half);
/// Two-sided triangle (a, b, c) with unit normal n.
Polytope makeTrianglePolytope(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n);

/// Separating-axis test and contact manifold of two convex polytopes; normal from A to B.
/// A face contact gives at most kMaxManifoldPoints points (see reduceManifold).
void collidePolytopes(const Polytope& a, const Polytope& b, ContactManifold& out);

/// Largest number of points of a face manifold (box-halfspace, box-box, box-triangle).
inline constexpr std::size_t kMaxManifoldPoints = 4;

/// Reduces the points out[first ..] of one flat contact patch (all with the unit normal `n`) to
/// at most kMaxManifoldPoints that keep the support polygon: the deepest point p0 (least g_N),
/// the point farthest from p0 across the patch p1, the point p2 farthest from the line p0 p1
/// (largest triangle), then the point adding the largest area outside the triangle p0 p1 p2 (if
/// any point lies outside). Distances are measured in the plane normal to `n`. The choice
/// depends only on the points and their order, so it is reproducible. Does nothing for 4 points
/// or fewer.
void reduceManifold(ContactManifold& out, std::size_t first, const Vec3& n);

// Canonical kernels (A, B).
void sphereSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                  NarrowPhaseScratch& scratch);
void boxSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
               NarrowPhaseScratch& scratch);
void boxBox(const ShapePose& a, const ShapePose& b, ContactManifold& out,
            NarrowPhaseScratch& scratch);
void boxCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                NarrowPhaseScratch& scratch);
void capsuleSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                   NarrowPhaseScratch& scratch);
void capsuleCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                    NarrowPhaseScratch& scratch);
void halfspaceSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                     NarrowPhaseScratch& scratch);
void halfspaceBox(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                  NarrowPhaseScratch& scratch);
void halfspaceCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                      NarrowPhaseScratch& scratch);
void meshSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                NarrowPhaseScratch& scratch);
void meshBox(const ShapePose& a, const ShapePose& b, ContactManifold& out,
             NarrowPhaseScratch& scratch);
void meshCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                 NarrowPhaseScratch& scratch);

}  // namespace grain::collision::detail
