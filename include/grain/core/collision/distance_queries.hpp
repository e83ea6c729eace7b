// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include <grain/core/math/types.hpp>

/// Closest-point queries between points, segments and triangles, used by the narrow phase.
/// All points are in one common frame (any frame, as long as every argument uses it); lengths in m.
namespace grain::collision {

/// Parameter t in [0, 1] of the point of segment p0 + t (p1 - p0) closest to q.
/// A degenerate segment (p0 == p1) gives t = 0.
Real closestSegmentParameter(const Vec3& p0, const Vec3& p1, const Vec3& q);

/// Closest points of two segments: p(s) = p0 + s (p1 - p0), q(t) = q0 + t (q1 - q0).
struct SegmentClosest {
  Real s = 0.0;  ///< parameter on the first segment, in [0, 1]
  Real t = 0.0;  ///< parameter on the second segment, in [0, 1]
  Vec3 onFirst = Vec3::Zero();
  Vec3 onSecond = Vec3::Zero();
};

/// Closest points of the segments [p0, p1] and [q0, q1]. For parallel segments one of the
/// (non-unique) closest pairs is returned, with s at 0 or at the projection of q0 or q1.
SegmentClosest closestPointsSegments(const Vec3& p0, const Vec3& p1, const Vec3& q0,
                                     const Vec3& q1);

/// Feature of a triangle (a, b, c) on which a closest point lies.
enum class TriangleFeature : std::uint8_t {
  Face,    ///< interior of the triangle
  EdgeAB,  ///< interior of edge a-b
  EdgeBC,  ///< interior of edge b-c
  EdgeCA,  ///< interior of edge c-a
  VertexA,
  VertexB,
  VertexC,
};

/// Closest point of a triangle to a query point and the feature it lies on.
struct TriangleClosest {
  Vec3 point = Vec3::Zero();
  TriangleFeature feature = TriangleFeature::Face;
};

/// Closest point of the (filled) triangle (a, b, c) to p. Degenerate triangles are treated as
/// the union of their edges.
TriangleClosest closestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

/// True if the segment [p0, p1] crosses or touches the plane of the filled triangle (a, b, c)
/// at a point inside the triangle; `point` is that point. A segment lying in the
/// plane is reported as not crossing (its closest points are found by the edge and end-point
/// queries).
bool segmentIntersectsTriangle(const Vec3& p0, const Vec3& p1, const Vec3& a, const Vec3& b,
                               const Vec3& c, Vec3& point);

/// A unit vector perpendicular to the unit vector d (deterministic choice).
Vec3 anyPerpendicular(const Vec3& d);

}  // namespace grain::collision
