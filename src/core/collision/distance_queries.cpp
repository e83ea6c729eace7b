// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>

#include <grain/core/collision/distance_queries.hpp>

namespace grain::collision {

namespace {
Real clamp01(Real x) {
  return std::clamp(x, Real(0), Real(1));
}
}  // namespace

Real closestSegmentParameter(const Vec3& p0, const Vec3& p1, const Vec3& q) {
  const Vec3 d = p1 - p0;
  const Real dd = d.squaredNorm();
  if (dd <= 0.0) {
    return 0.0;
  }
  return clamp01(d.dot(q - p0) / dd);
}

SegmentClosest closestPointsSegments(const Vec3& p0, const Vec3& p1, const Vec3& q0,
                                     const Vec3& q1) {
  // Minimise |p0 + s d1 - q0 - t d2|^2 over the unit square. The stationarity conditions are
  // a s - b t = -c and b s - e t = -f with the dot products below; the minimiser of the convex
  // quadratic on the square is found by clamping s, solving for t, and re-solving s if t had
  // to be clamped.
  const Vec3 d1 = p1 - p0;
  const Vec3 d2 = q1 - q0;
  const Vec3 r = p0 - q0;
  const Real a = d1.squaredNorm();
  const Real e = d2.squaredNorm();
  const Real f = d2.dot(r);
  SegmentClosest out;
  constexpr Real kTiny = 1e-300;
  if (a <= kTiny && e <= kTiny) {
    out.s = 0.0;
    out.t = 0.0;
  } else if (a <= kTiny) {
    out.s = 0.0;
    out.t = clamp01(f / e);
  } else {
    const Real c = d1.dot(r);
    if (e <= kTiny) {
      out.t = 0.0;
      out.s = clamp01(-c / a);
    } else {
      const Real b = d1.dot(d2);
      const Real denom = a * e - b * b;  // >= 0, zero for parallel segments
      Real s = 0.0;
      if (denom > 1e-14 * a * e) {
        s = clamp01((b * f - c * e) / denom);
      }
      Real t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = clamp01(-c / a);
      } else if (t > 1.0) {
        t = 1.0;
        s = clamp01((b - c) / a);
      }
      out.s = s;
      out.t = t;
    }
  }
  out.onFirst = p0 + out.s * d1;
  out.onSecond = q0 + out.t * d2;
  return out;
}

TriangleClosest closestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 n = (b - a).cross(c - a);
  const Real nn = n.squaredNorm();
  if (nn > 0.0) {
    // Project onto the plane; inside if the projection is left of all three directed edges.
    const Vec3 q = p - (n.dot(p - a) / nn) * n;
    const bool inside = (b - a).cross(q - a).dot(n) >= 0.0 && (c - b).cross(q - b).dot(n) >= 0.0 &&
                        (a - c).cross(q - c).dot(n) >= 0.0;
    if (inside) {
      return {q, TriangleFeature::Face};
    }
  }
  // Outside (or degenerate): the closest point lies on the boundary.
  const Vec3* verts[3] = {&a, &b, &c};
  TriangleClosest best;
  Real bestDist = std::numeric_limits<Real>::infinity();
  for (int k = 0; k < 3; ++k) {
    const Vec3& u = *verts[k];
    const Vec3& v = *verts[(k + 1) % 3];
    const Real t = closestSegmentParameter(u, v, p);
    const Vec3 x = u + t * (v - u);
    const Real d = (p - x).squaredNorm();
    if (d < bestDist) {
      bestDist = d;
      best.point = x;
      if (t <= 0.0) {
        best.feature = static_cast<TriangleFeature>(static_cast<int>(TriangleFeature::VertexA) + k);
      } else if (t >= 1.0) {
        best.feature =
            static_cast<TriangleFeature>(static_cast<int>(TriangleFeature::VertexA) + (k + 1) % 3);
      } else {
        best.feature = static_cast<TriangleFeature>(static_cast<int>(TriangleFeature::EdgeAB) + k);
      }
    }
  }
  return best;
}

bool segmentIntersectsTriangle(const Vec3& p0, const Vec3& p1, const Vec3& a, const Vec3& b,
                               const Vec3& c, Vec3& point) {
  const Vec3 n = (b - a).cross(c - a);
  const Real d0 = n.dot(p0 - a);
  const Real d1 = n.dot(p1 - a);
  if ((d0 > 0.0 && d1 > 0.0) || (d0 < 0.0 && d1 < 0.0) || d0 == d1) {
    return false;
  }
  const Real t = d0 / (d0 - d1);
  const Vec3 x = p0 + t * (p1 - p0);
  const bool inside = (b - a).cross(x - a).dot(n) >= 0.0 && (c - b).cross(x - b).dot(n) >= 0.0 &&
                      (a - c).cross(x - c).dot(n) >= 0.0;
  if (inside) {
    point = x;
  }
  return inside;
}

Vec3 anyPerpendicular(const Vec3& d) {
  const Vec3 helper = std::abs(d.x()) < 0.57735 ? Vec3::UnitX() : Vec3::UnitY();
  return d.cross(helper).normalized();
}

}  // namespace grain::collision
