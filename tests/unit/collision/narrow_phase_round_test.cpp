// SPDX-License-Identifier: MIT
// Narrow phase of round shapes (sphere, capsule) and of halfspaces against closed forms.
#include <cmath>

#include <gtest/gtest.h>

#include "collision_test_utils.hpp"

namespace grain::collision {
namespace {

using testing::collidePair;
using testing::expectContact;
using testing::expectSwapSymmetric;
using testing::kPi;
using testing::Posed;
using testing::rot;

TEST(SphereSphere, PenetratingGivesGapNormalAndSurfacePoints) {
  Posed a(Sphere{1.0}, Vec3(1, 2, 3));
  Posed b(Sphere{0.75}, Vec3(1, 2, 3) + 1.5 * Vec3(0.6, 0.0, 0.8));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 1u);
  const Vec3 n(0.6, 0.0, 0.8);
  expectContact(m[0], n, -0.25, Vec3(1, 2, 3) + n, b.pose.position - 0.75 * n);
  expectSwapSymmetric(a, b);
}

TEST(SphereSphere, ExactTouchIsAContactSeparatedIsNot) {
  Posed a(Sphere{0.5}, Vec3(0, 0, 0));
  Posed b(Sphere{0.25}, Vec3(0.75, 0, 0));
  ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].gap, 0.0);
  b.pose.position.x() = 0.75 + 1e-12;
  m = collidePair(a, b);
  EXPECT_TRUE(m.empty());
}

TEST(SphereHalfspace, RotatedPlaneGapAndPoints) {
  // Halfspace normal +z in K, rotated +90 deg about x: outward normal -y in I, plane y = 0.
  Posed h(Halfspace{Vec3::UnitZ()}, Vec3(0, 0, 1), rot(Vec3::UnitX(), kPi / 2));
  Posed s(Sphere{0.5}, Vec3(3, -0.3, 4));
  const ContactManifold m = collidePair(h, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3(0, -1, 0), -0.2, Vec3(3, 0, 4), Vec3(3, 0.2, 4));
  expectSwapSymmetric(h, s);
  s.pose.position = Vec3(3, -1.2, 4);
  EXPECT_TRUE(collidePair(h, s).empty());
}

TEST(SphereHalfspace, CentreBelowThePlaneIsDeepPenetration) {
  Posed h(Halfspace{Vec3::UnitZ()}, Vec3(0, 0, 0));
  Posed s(Sphere{0.5}, Vec3(1, 2, -0.4));
  const ContactManifold m = collidePair(h, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.9, Vec3(1, 2, 0), Vec3(1, 2, -0.9));
}

TEST(SphereHalfspace, TouchingExactly) {
  Posed h(Halfspace{Vec3::UnitZ()}, Vec3(0, 0, 0.25));
  Posed s(Sphere{0.5}, Vec3(1, 2, 0.75));
  const ContactManifold m = collidePair(h, s);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].gap, 0.0);
}

TEST(CapsuleSphere, SideAndCapContacts) {
  // Capsule axis z in K rotated to x in I: core segment from (-1,0,0) to (1,0,0).
  Posed c(Capsule{Vec3::UnitZ(), 0.5, 2.0}, Vec3(0, 0, 0), rot(Vec3::UnitY(), kPi / 2));
  Posed s(Sphere{0.4}, Vec3(0.5, 0, 0.8));
  ContactManifold m = collidePair(c, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.1, Vec3(0.5, 0, 0.5), Vec3(0.5, 0, 0.4));
  expectSwapSymmetric(c, s);
  // Beyond the cap: closest core point is the end (1, 0, 0).
  s.pose.position = Vec3(1.6, 0, 0);
  s.shape = Sphere{0.2};
  m = collidePair(c, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitX(), -0.1, Vec3(1.5, 0, 0), Vec3(1.4, 0, 0));
}

TEST(CapsuleHalfspace, LyingCapsuleRestsOnBothCapCentres) {
  Posed h(Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  Posed c(Capsule{Vec3::UnitZ(), 0.5, 2.0}, Vec3(0.3, 0.1, 0.45), rot(Vec3::UnitY(), kPi / 2));
  ContactManifold m = collidePair(h, c);
  ASSERT_EQ(m.size(), 2u);
  for (const ContactPoint& p : m) {
    const Real x = p.pointA.x() > 0.3 ? 1.3 : -0.7;
    expectContact(p, Vec3::UnitZ(), -0.05, Vec3(x, 0.1, 0), Vec3(x, 0.1, -0.05));
  }
  expectSwapSymmetric(h, c);
  // Tilted by 30 deg: only the lower end touches.
  c.pose.rotation = rot(Vec3::UnitY(), kPi / 2 + kPi / 6);
  c.pose.position = Vec3(0, 0, 0.9);
  m = collidePair(h, c);
  ASSERT_EQ(m.size(), 1u);
  const Vec3 axis = c.pose.rotation * Vec3::UnitZ();
  const Vec3 low = axis.z() < 0 ? Vec3(c.pose.position + axis) : Vec3(c.pose.position - axis);
  EXPECT_NEAR(m[0].gap, low.z() - 0.5, 1e-12);
  testing::expectVecNear(m[0].pointB, low - 0.5 * Vec3::UnitZ());
}

TEST(CapsuleCapsule, CrossedCapsulesOnePoint) {
  Posed a(Capsule{Vec3::UnitX(), 0.3, 2.0}, Vec3::Zero());
  Posed b(Capsule{Vec3::UnitY(), 0.25, 2.0}, Vec3(0.2, 0.1, 0.5));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.05, Vec3(0.2, 0, 0.3), Vec3(0.2, 0, 0.25));
  expectSwapSymmetric(a, b);
}

TEST(CapsuleCapsule, ParallelCapsulesTwoPointsAtOverlapEnds) {
  Posed a(Capsule{Vec3::UnitX(), 0.3, 2.0}, Vec3::Zero());
  // Axis given as -z in K and rotated to +x or -x: direction must not matter.
  Posed b(Capsule{Vec3::UnitZ(), 0.25, 2.0}, Vec3(0.5, 0, 0.5), rot(Vec3::UnitY(), -kPi / 2));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 2u);
  for (const ContactPoint& p : m) {
    const Real x = p.pointA.x() > 0.0 ? 1.0 : -0.5;
    expectContact(p, Vec3::UnitZ(), -0.05, Vec3(x, 0, 0.3), Vec3(x, 0, 0.25));
  }
  expectSwapSymmetric(a, b);
}

TEST(CapsuleCapsule, SeparatedGivesNothingEndContactIsClamped) {
  Posed a(Capsule{Vec3::UnitX(), 0.3, 2.0}, Vec3::Zero());
  Posed b(Capsule{Vec3::UnitY(), 0.25, 2.0}, Vec3(0.2, 0.1, 0.56));
  EXPECT_TRUE(collidePair(a, b).empty());
  // Beyond the end of a: closest core points (1,0,0) and (1.4,0,0.3), distance 0.5.
  b.pose.position = Vec3(1.4, 0, 0.3);
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 1u);
  const Vec3 n(0.8, 0, 0.6);
  expectContact(m[0], n, -0.05, Vec3(1, 0, 0) + 0.3 * n, Vec3(1.4, 0, 0.3) - 0.25 * n);
  b.pose.position = Vec3(1.5, 0, 0.3);
  EXPECT_TRUE(collidePair(a, b).empty());
}

}  // namespace
}  // namespace grain::collision
