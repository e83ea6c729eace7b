// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <grain/core/geometry/aabb.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/math/types.hpp>

/// Narrow phase: exact contact points of one pair of posed shapes. See collision_detector.hpp
/// for the conventions (normal A -> B, gap sign, manifold rules).
namespace grain::collision {

class MeshBvh;

/// A shape placed in the inertial frame I: x_I = position + rotation * x_K.
struct ShapePose {
  const Shape* shape = nullptr;
  Vec3 position = Vec3::Zero();      ///< body origin r_S in I (m)
  Mat3 rotation = Mat3::Identity();  ///< A_IK (not used for spheres)
  const MeshBvh* meshBvh = nullptr;  ///< hierarchy of the mesh shape (meshes only)
};

/// One contact point of a pair (A, B), everything in I.
struct ContactPoint {
  Vec3 normal = Vec3::UnitZ();  ///< unit normal e_n from A towards B
  Real gap = 0.0;               ///< g_N = normal . (pointB - pointA) (m); < 0 when penetrating
  Vec3 pointA = Vec3::Zero();   ///< contact point on the surface of A (m)
  Vec3 pointB = Vec3::Zero();   ///< contact point on the surface of B (m)
};

/// Reusable buffers of the narrow phase (no allocation once warmed up).
struct NarrowPhaseScratch {
  std::vector<std::uint32_t> triangles;  ///< mesh triangles returned by a BVH query

  /// Contact candidate of a mesh pair before the cross-triangle filtering.
  struct MeshCandidate {
    ContactPoint point;   ///< in the mesh body frame
    Real distance = 0.0;  ///< distance between the two features (m), >= 0
    std::uint32_t triangle = 0;
    std::uint8_t feature = 0;  ///< feature of the moving shape (kernel specific)
    bool onFace = false;       ///< mesh point in the interior of its triangle
    bool keep = true;
  };
  std::vector<MeshCandidate> meshCandidates;
};

/// Output of a pair kernel: appended contact points (all with gap <= 0).
using ContactManifold = std::vector<ContactPoint>;

/// Signature of a pair kernel: appends the contacts of (a, b) with gap <= 0 to `out`.
using PairKernel = void (*)(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                            NarrowPhaseScratch& scratch);

/// Kernel for the shape types (typeA, typeB); nullptr for pairs that never collide (two
/// halfspaces, two meshes, halfspace-mesh).
PairKernel pairKernel(ShapeType typeA, ShapeType typeB);

/// Convenience: dispatches through pairKernel() (does nothing for unsupported pairs).
void collide(const ShapePose& a, const ShapePose& b, ContactManifold& out,
             NarrowPhaseScratch& scratch);

/// Tight box (frame of `position`/`rotation`) of a sphere, box or capsule; infinite for a
/// halfspace; for a mesh the box of all its vertices.
Aabb shapeAabb(const Shape& shape, const Vec3& position, const Mat3& rotation);

/// Conservative margin (m) added to boxes so that contacts with g_N = 0 computed with rounding
/// are never lost by a box test: a small multiple of the coordinate magnitude and size.
inline Real aabbMargin(const Aabb& box) {
  const Real scale = std::max(box.lo.cwiseAbs().maxCoeff(), box.hi.cwiseAbs().maxCoeff());
  return 1e-12 * scale + 1e-300;
}

}  // namespace grain::collision
