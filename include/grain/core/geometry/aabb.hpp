// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <limits>

#include <grain/core/math/types.hpp>

namespace grain {

/// Axis-aligned bounding box [lo, hi] (m) in the frame named by its user. Intervals are closed:
/// two boxes that share only a face overlap. An empty box has lo > hi.
struct Aabb {
  Vec3 lo = Vec3::Constant(std::numeric_limits<Real>::infinity());
  Vec3 hi = Vec3::Constant(-std::numeric_limits<Real>::infinity());

  /// Box of all points within `halfExtent` (per axis) of `center`.
  static Aabb fromCenterHalf(const Vec3& center, const Vec3& halfExtent) {
    return Aabb{center - halfExtent, center + halfExtent};
  }
  /// The box containing all of space.
  static Aabb infinite() {
    const Real inf = std::numeric_limits<Real>::infinity();
    return Aabb{Vec3::Constant(-inf), Vec3::Constant(inf)};
  }

  /// True if the box contains no point.
  bool empty() const { return (lo.array() > hi.array()).any(); }
  /// Centre (m).
  Vec3 center() const { return 0.5 * (lo + hi); }
  /// Half edge lengths (m).
  Vec3 halfExtent() const { return 0.5 * (hi - lo); }

  /// True if the closed boxes share at least one point.
  bool overlaps(const Aabb& o) const {
    return lo.x() <= o.hi.x() && o.lo.x() <= hi.x() && lo.y() <= o.hi.y() && o.lo.y() <= hi.y() &&
           lo.z() <= o.hi.z() && o.lo.z() <= hi.z();
  }
  /// True if point p lies in the closed box.
  bool contains(const Vec3& p) const {
    return (p.array() >= lo.array()).all() && (p.array() <= hi.array()).all();
  }
  /// Grows the box to contain p.
  void extend(const Vec3& p) {
    lo = lo.cwiseMin(p);
    hi = hi.cwiseMax(p);
  }
  /// Grows the box to contain o.
  void extend(const Aabb& o) {
    lo = lo.cwiseMin(o.lo);
    hi = hi.cwiseMax(o.hi);
  }
  /// Grows the box by `margin` (m) on every side.
  void inflate(Real margin) {
    lo.array() -= margin;
    hi.array() += margin;
  }
};

/// Box (in frame I) of the box `local` (in frame K) after the rigid map x_I = position + rotation
/// x_K.
inline Aabb transformAabb(const Aabb& local, const Vec3& position, const Mat3& rotation) {
  const Vec3 c = position + rotation * local.center();
  const Vec3 h = rotation.cwiseAbs() * local.halfExtent();
  return Aabb::fromCenterHalf(c, h);
}

}  // namespace grain
