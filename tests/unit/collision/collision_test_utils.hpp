// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/collision/narrow_phase.hpp>
#include <grain/core/math/quaternion.hpp>

/// Helpers of the collision unit tests.
namespace grain::collision::testing {

constexpr Real kPi = std::numbers::pi_v<Real>;

inline Mat3 rot(const Vec3& axis, Real angleRad) {
  return quat::fromAxisAngle(axis, angleRad).toRotationMatrix();
}

/// A shape placed in I, owning its shape value.
struct Posed {
  Shape shape;
  ShapePose pose;
  Posed(Shape s, const Vec3& position, const Mat3& rotation = Mat3::Identity())
      : shape(std::move(s)) {
    pose.position = position;
    pose.rotation = rotation;
  }
  Posed(const Posed&) = delete;
  Posed& operator=(const Posed&) = delete;
  const ShapePose& get() {
    pose.shape = &shape;
    return pose;
  }
};

/// Runs the dispatch table on (a, b) and checks the invariants every contact must satisfy:
/// unit normal, gap <= 0 and gap == normal . (pointB - pointA).
inline ContactManifold collidePair(Posed& a, Posed& b) {
  ContactManifold out;
  NarrowPhaseScratch scratch;
  collide(a.get(), b.get(), out, scratch);
  for (const ContactPoint& c : out) {
    EXPECT_NEAR(c.normal.norm(), 1.0, 1e-12);
    EXPECT_LE(c.gap, 0.0);
    EXPECT_NEAR(c.gap, c.normal.dot(c.pointB - c.pointA), 1e-12);
  }
  return out;
}

inline void expectVecNear(const Vec3& actual, const Vec3& expected, Real tol = 1e-12) {
  EXPECT_NEAR((actual - expected).norm(), 0.0, tol)
      << "actual " << actual.transpose() << " expected " << expected.transpose();
}

/// Checks one contact against closed-form values.
inline void expectContact(const ContactPoint& c, const Vec3& normal, Real gap, const Vec3& pointA,
                          const Vec3& pointB, Real tol = 1e-12) {
  expectVecNear(c.normal, normal, tol);
  EXPECT_NEAR(c.gap, gap, tol);
  expectVecNear(c.pointA, pointA, tol);
  expectVecNear(c.pointB, pointB, tol);
}

/// Checks that swapping A and B flips the normal and exchanges the points.
inline void expectSwapSymmetric(Posed& a, Posed& b) {
  const ContactManifold ab = collidePair(a, b);
  const ContactManifold ba = collidePair(b, a);
  ASSERT_EQ(ab.size(), ba.size());
  for (std::size_t k = 0; k < ab.size(); ++k) {
    // Same set of points (order may differ): find the match.
    bool found = false;
    for (std::size_t m = 0; m < ba.size() && !found; ++m) {
      found = (ab[k].normal + ba[m].normal).norm() < 1e-9 &&
              std::abs(ab[k].gap - ba[m].gap) < 1e-9 &&
              (ab[k].pointA - ba[m].pointB).norm() < 1e-9 &&
              (ab[k].pointB - ba[m].pointA).norm() < 1e-9;
    }
    EXPECT_TRUE(found) << "contact " << k << " has no swapped counterpart";
  }
}

/// Index of the contact whose pointA is closest to p.
inline std::size_t nearestByPointA(const ContactManifold& m, const Vec3& p) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < m.size(); ++k) {
    if ((m[k].pointA - p).norm() < (m[best].pointA - p).norm()) {
      best = k;
    }
  }
  return best;
}

}  // namespace grain::collision::testing
