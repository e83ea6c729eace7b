// SPDX-License-Identifier: MIT
// Narrow phase of boxes (box-sphere, box-halfspace, box-box, box-capsule) against closed forms.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "collision_test_utils.hpp"

namespace grain::collision {
namespace {

using testing::collidePair;
using testing::expectContact;
using testing::expectSwapSymmetric;
using testing::expectVecNear;
using testing::kPi;
using testing::nearestByPointA;
using testing::Posed;
using testing::rot;

/// Box with half extents (1, 0.5, 0.25) and centre offset (0.1, 0, 0) in K, rotated +90 deg
/// about z: in I it spans x in [-0.5, 0.5], y in [-0.9, 1.1], z in [-0.25, 0.25].
Box offsetBox() {
  return Box{Vec3(1.0, 0.5, 0.25), Vec3(0.1, 0, 0)};
}
Mat3 offsetBoxRotation() {
  return rot(Vec3::UnitZ(), kPi / 2);
}

TEST(BoxSphere, FaceContactOfRotatedOffsetBox) {
  Posed b(offsetBox(), Vec3::Zero(), offsetBoxRotation());
  Posed s(Sphere{0.2}, Vec3(0.1, 1.25, 0.05));
  const ContactManifold m = collidePair(b, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitY(), -0.05, Vec3(0.1, 1.1, 0.05), Vec3(0.1, 1.05, 0.05));
  expectSwapSymmetric(b, s);
}

TEST(BoxSphere, CornerContact) {
  Posed b(offsetBox(), Vec3::Zero(), offsetBoxRotation());
  const Vec3 corner(0.5, 1.1, 0.25);
  Posed s(Sphere{0.2}, corner + Vec3::Constant(0.1));
  const ContactManifold m = collidePair(b, s);
  ASSERT_EQ(m.size(), 1u);
  const Vec3 n = Vec3::Ones().normalized();
  expectContact(m[0], n, std::sqrt(0.03) - 0.2, corner, s.pose.position - 0.2 * n);
}

TEST(BoxSphere, CentreInsideLeavesThroughNearestFace) {
  Posed b(offsetBox(), Vec3::Zero(), offsetBoxRotation());
  // Distances to the faces: x: 0.15, y: 0.8, z: 0.2 -> leave through +x.
  Posed s(Sphere{0.2}, Vec3(0.35, 0.3, 0.05));
  const ContactManifold m = collidePair(b, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitX(), -0.35, Vec3(0.5, 0.3, 0.05), Vec3(0.15, 0.3, 0.05));
  expectSwapSymmetric(b, s);
}

TEST(BoxSphere, SeparatedAndTouching) {
  Posed b(Box{Vec3(0.5, 0.5, 0.5)}, Vec3::Zero());
  Posed s(Sphere{0.25}, Vec3(0.75, 0.0, 0.0));
  ContactManifold m = collidePair(b, s);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].gap, 0.0);
  s.pose.position.x() = 0.76;
  EXPECT_TRUE(collidePair(b, s).empty());
}

TEST(BoxHalfspace, RestingBoxFourCorners) {
  Posed h(Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(1, 2, 0.45));
  const ContactManifold m = collidePair(h, b);
  ASSERT_EQ(m.size(), 4u);
  for (const ContactPoint& p : m) {
    EXPECT_NEAR(std::abs(p.pointA.x() - 1), 0.5, 1e-12);
    EXPECT_NEAR(std::abs(p.pointA.y() - 2), 0.5, 1e-12);
    expectContact(p, Vec3::UnitZ(), -0.05, Vec3(p.pointA.x(), p.pointA.y(), 0),
                  Vec3(p.pointA.x(), p.pointA.y(), -0.05));
  }
  expectSwapSymmetric(h, b);
}

TEST(BoxHalfspace, BoxOnEdgeAndOffsetCentreOnTiltedPlane) {
  // Plane through (0,0,1) with normal rotated 30 deg about y; box offset centre c in K.
  const Mat3 rp = rot(Vec3::UnitY(), kPi / 6);
  const Vec3 n = rp * Vec3::UnitZ();
  Posed h(Halfspace{Vec3::UnitZ()}, Vec3(0, 0, 1), rp);
  // Cube rotated 45 deg about x relative to the plane frame rests on an edge: its two lowest
  // corners are at height (centre height - sqrt(0.5)) over the plane.
  const Mat3 rb = rp * rot(Vec3::UnitX(), kPi / 4);
  const Vec3 offsetK(0.2, 0, 0);
  const Vec3 boxCentre = Vec3(0, 0, 1) + 0.7 * n;
  Posed b(Box{Vec3::Constant(0.5), offsetK}, boxCentre - rb * offsetK, rb);
  const ContactManifold m = collidePair(h, b);
  ASSERT_EQ(m.size(), 2u);
  for (const ContactPoint& p : m) {
    expectVecNear(p.normal, n);
    EXPECT_NEAR(p.gap, 0.7 - std::sqrt(0.5), 1e-12);
    EXPECT_NEAR(n.dot(p.pointA - Vec3(0, 0, 1)), 0.0, 1e-12);
  }
}

TEST(BoxHalfspace, SunkenBoxAllCorners) {
  Posed h(Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0, 0, -3), rot(Vec3(1, 2, 3), 0.7));
  const ContactManifold m = collidePair(h, b);
  // All eight corners are below the plane; the manifold keeps four of them, the deepest first.
  ASSERT_EQ(m.size(), 4u);
  Real deepest = 0.0;
  for (int i = 0; i < 8; ++i) {
    const Vec3 corner =
        b.pose.position +
        b.pose.rotation * Vec3((i & 1) ? 0.5 : -0.5, (i & 2) ? 0.5 : -0.5, (i & 4) ? 0.5 : -0.5);
    deepest = std::min(deepest, corner.z());
  }
  Real minGap = 0.0;
  for (const ContactPoint& p : m) {
    minGap = std::min(minGap, p.gap);
  }
  EXPECT_NEAR(minGap, deepest, 1e-12);
  expectSwapSymmetric(h, b);
}

/// Area (m^2) of the convex hull of the pointA of a manifold in the plane z = const (at most
/// four points, any order), by the fan around their centroid after sorting by angle.
Real hullAreaXY(const ContactManifold& m) {
  Vec3 c = Vec3::Zero();
  for (const ContactPoint& p : m) {
    c += p.pointA;
  }
  c /= static_cast<Real>(m.size());
  std::vector<Vec3> v;
  for (const ContactPoint& p : m) {
    v.push_back(p.pointA - c);
  }
  std::sort(v.begin(), v.end(), [](const Vec3& a, const Vec3& b) {
    return std::atan2(a.y(), a.x()) < std::atan2(b.y(), b.x());
  });
  Real area = 0.0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const Vec3& a = v[k];
    const Vec3& b = v[(k + 1) % v.size()];
    area += 0.5 * (a.x() * b.y() - a.y() * b.x());
  }
  return area;
}

TEST(BoxBox, CornerOverhangIsReducedToFourPointsOfTheSupportPolygon) {
  // Top box turned 45 deg about z, centred near the corner (1, 1) of A's top face: its footprint
  // (a square with half diagonal sqrt(0.5)) clipped to A's face is the pentagon below, five
  // points before reduction.
  Posed a(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0.9, 0.9, 0.95), rot(Vec3::UnitZ(), kPi / 4));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 4u);
  const Real d = std::sqrt(0.5);
  const std::vector<Vec3> pentagon = {Vec3(0.9 - d, 0.9, 0.5), Vec3(0.9, 0.9 - d, 0.5),
                                      Vec3(1.0, 1.0 - d, 0.5), Vec3(1.0, 1.0, 0.5),
                                      Vec3(1.0 - d, 1.0, 0.5)};
  for (const ContactPoint& p : m) {
    expectVecNear(p.normal, Vec3::UnitZ());
    EXPECT_NEAR(p.gap, -0.05, 1e-12);
    // Every kept point is a vertex of the pentagon.
    Real nearest = 1.0;
    for (const Vec3& v : pentagon) {
      nearest = std::min(nearest, (p.pointA - v).norm());
    }
    EXPECT_LT(nearest, 1e-12);
  }
  // The four points keep most of the support polygon. The pentagon is the square's area 1
  // minus the two tips beyond x = 1 and y = 1 plus their overlap: 1 - 2 (d - 0.1)^2 +
  // (d - 0.2)^2 / 2 = 0.3914 m^2. The best four vertices keep 0.3561 m^2 (0.91); dropping the
  // corner (1, 1) would keep only 0.1414 m^2.
  ContactManifold full;
  for (const Vec3& v : pentagon) {
    full.push_back(ContactPoint{Vec3::UnitZ(), -0.05, v, v});
  }
  const Real pentagonArea = 1.0 - 2.0 * (d - 0.1) * (d - 0.1) + 0.5 * (d - 0.2) * (d - 0.2);
  EXPECT_NEAR(hullAreaXY(full), pentagonArea, 1e-12);
  EXPECT_GT(hullAreaXY(m), 0.8 * pentagonArea);
  expectSwapSymmetric(a, b);
}

TEST(BoxBox, StackedBoxesFourPoints) {
  Posed a(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0.2, 0.1, 0.95));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 4u);
  for (const Vec3& corner :
       {Vec3(-0.3, -0.4, 0), Vec3(0.7, -0.4, 0), Vec3(0.7, 0.6, 0), Vec3(-0.3, 0.6, 0)}) {
    const ContactPoint& p = m[nearestByPointA(m, corner + Vec3(0, 0, 0.5))];
    expectContact(p, Vec3::UnitZ(), -0.05, corner + Vec3(0, 0, 0.5), corner + Vec3(0, 0, 0.45));
  }
  expectSwapSymmetric(a, b);
}

TEST(BoxBox, RotatedTopBoxCornersInsideFace) {
  Posed a(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0.2, 0.1, 0.95), rot(Vec3::UnitZ(), kPi / 4));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 4u);
  const Real d = std::sqrt(0.5);
  for (const Vec3& off : {Vec3(d, 0, 0), Vec3(-d, 0, 0), Vec3(0, d, 0), Vec3(0, -d, 0)}) {
    const Vec3 xy = Vec3(0.2, 0.1, 0) + off;
    const ContactPoint& p = m[nearestByPointA(m, xy + Vec3(0, 0, 0.5))];
    expectContact(p, Vec3::UnitZ(), -0.05, xy + Vec3(0, 0, 0.5), xy + Vec3(0, 0, 0.45));
  }
}

TEST(BoxBox, OverhangingBoxIsClippedToTheSupportFace) {
  Posed a(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(1.2, 0, 0.95));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 4u);
  for (const Vec3& xy :
       {Vec3(0.7, -0.5, 0), Vec3(1, -0.5, 0), Vec3(1, 0.5, 0), Vec3(0.7, 0.5, 0)}) {
    const ContactPoint& p = m[nearestByPointA(m, xy + Vec3(0, 0, 0.5))];
    expectContact(p, Vec3::UnitZ(), -0.05, xy + Vec3(0, 0, 0.5), xy + Vec3(0, 0, 0.45));
  }
  expectSwapSymmetric(a, b);
}

TEST(BoxBox, SmallBoxOnTheSideOfARotatedBox) {
  // Big box rotated about an arbitrary axis; a small box resting on its +y face (in K of A).
  const Mat3 ra = rot(Vec3(1, 2, -1), 0.9);
  Posed a(Box{Vec3(2, 1, 1.5), Vec3(0.3, 0, 0)}, Vec3(1, 1, 1), ra);
  const Vec3 faceCentre = Vec3(1, 1, 1) + ra * Vec3(0.3, 1, 0);
  const Vec3 n = ra.col(1);
  Posed b(Box{Vec3::Constant(0.25)}, faceCentre + (0.25 - 0.01) * n, ra);
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 4u);
  for (const ContactPoint& p : m) {
    expectContact(p, n, -0.01, p.pointA, p.pointA - 0.01 * n, 1e-12);
    EXPECT_NEAR((p.pointA - faceCentre).dot(n), 0.0, 1e-12);
    EXPECT_NEAR((p.pointA - faceCentre).norm(), 0.25 * std::sqrt(2.0), 1e-12);
  }
}

TEST(BoxBox, EdgeOnEdge) {
  // A: unit cube rotated 45 deg about x (top edge along x at z = sqrt(0.5)).
  // B: unit cube rotated 45 deg about y (bottom edge along y at z = 1.4 - sqrt(0.5)).
  const Real h = std::sqrt(0.5);
  Posed a(Box{Vec3::Constant(0.5)}, Vec3::Zero(), rot(Vec3::UnitX(), kPi / 4));
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0, 0, 1.4), rot(Vec3::UnitY(), kPi / 4));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), 1.4 - 2 * h, Vec3(0, 0, h), Vec3(0, 0, 1.4 - h));
  expectSwapSymmetric(a, b);
}

TEST(BoxBox, SeparatedAlongAnEdgeAxis) {
  const Real h = std::sqrt(0.5);
  Posed a(Box{Vec3::Constant(0.5)}, Vec3::Zero(), rot(Vec3::UnitX(), kPi / 4));
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0, 0, 2 * h + 1e-9), rot(Vec3::UnitY(), kPi / 4));
  EXPECT_TRUE(collidePair(a, b).empty());
}

TEST(BoxBox, DeeplyNestedBoxLeavesThroughNearestFace) {
  Posed a(Box{Vec3(2, 2, 2)}, Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0, 0, 1.8));
  const ContactManifold m = collidePair(a, b);
  ASSERT_EQ(m.size(), 4u);
  for (const ContactPoint& p : m) {
    expectVecNear(p.normal, Vec3::UnitZ());
    // Push B out through A's top face z = 2: B's lowest face is at 1.3.
    EXPECT_NEAR(p.gap, -0.7, 1e-12);
  }
}

TEST(BoxCapsule, LyingCapsuleTwoPointsOnTopFace) {
  Posed b(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed c(Capsule{Vec3::UnitX(), 0.2, 1.0}, Vec3(0.1, 0.2, 0.65));
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 2u);
  for (const Real x : {-0.4, 0.6}) {
    const ContactPoint& p = m[nearestByPointA(m, Vec3(x, 0.2, 0.5))];
    expectContact(p, Vec3::UnitZ(), -0.05, Vec3(x, 0.2, 0.5), Vec3(x, 0.2, 0.45));
  }
  expectSwapSymmetric(b, c);
}

TEST(BoxCapsule, OverhangingCapsuleClippedAtTheEdge) {
  Posed b(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed c(Capsule{Vec3::UnitX(), 0.2, 1.0}, Vec3(0.8, 0, 0.65));
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 2u);
  for (const Real x : {0.3, 1.0}) {
    const ContactPoint& p = m[nearestByPointA(m, Vec3(x, 0, 0.5))];
    expectContact(p, Vec3::UnitZ(), -0.05, Vec3(x, 0, 0.5), Vec3(x, 0, 0.45));
  }
}

TEST(BoxCapsule, UprightCapsuleAgainstSideFaceOfRotatedBox) {
  const Mat3 r = rot(Vec3(0.3, -1, 2), 1.1);
  const Vec3 p(0.5, -1, 2);
  Posed b(Box{Vec3(1, 1, 0.5)}, p, r);
  // In the box frame: capsule along z at x = 1.1, core z in [-0.2, 0.8], radius 0.2.
  Posed c(Capsule{Vec3::UnitZ(), 0.2, 1.0}, p + r * Vec3(1.1, 0, 0.3), r);
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 2u);
  const Vec3 n = r.col(0);
  for (const Real z : {-0.2, 0.5}) {
    const Vec3 onBox = p + r * Vec3(1, 0, z);
    const ContactPoint& q = m[nearestByPointA(m, onBox)];
    expectContact(q, n, -0.1, onBox, p + r * Vec3(0.9, 0, z));
  }
  expectSwapSymmetric(b, c);
}

TEST(BoxCapsule, CapsuleAlongAnEdgeTwoPoints) {
  // Capsule parallel to the edge x = 1, z = 0.5 (along y), beside it: both ends of the part of
  // the segment along the edge rest on it.
  Posed b(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed c(Capsule{Vec3::UnitY(), 0.2, 1.0}, Vec3(1.1, 0, 0.6));
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 2u);
  const Vec3 n = Vec3(1, 0, 1).normalized();
  for (const Real y : {-0.5, 0.5}) {
    const ContactPoint& p = m[nearestByPointA(m, Vec3(1, y, 0.5))];
    expectContact(p, n, std::sqrt(0.02) - 0.2, Vec3(1, y, 0.5), Vec3(1.1, y, 0.6) - 0.2 * n);
  }
  expectSwapSymmetric(b, c);
}

TEST(BoxCapsule, LongCapsuleAlongAnEdgeIsClippedToTheEdge) {
  // Capsule longer than the edge (y in [-1.5, 1.5] against the edge y in [-1, 1]) and slightly
  // tilted (0.1 deg): the two points sit at the ends of the edge.
  Posed b(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed c(Capsule{Vec3::UnitY(), 0.2, 3.0}, Vec3(1.1, 0, 0.6),
          rot(Vec3::UnitX(), 1e-3 * kPi / 180));
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 2u);
  for (const Real y : {-1.0, 1.0}) {
    const ContactPoint& p = m[nearestByPointA(m, Vec3(1, y, 0.5))];
    expectVecNear(p.pointA, Vec3(1, y, 0.5), 1e-9);
    EXPECT_NEAR(p.gap, std::sqrt(0.02) - 0.2, 1e-4);
  }
  expectSwapSymmetric(b, c);
}

TEST(BoxCapsule, CapsuleAcrossAnEdgeOnePoint) {
  // Capsule crossing the edge x = 1, z = 0.5 at right angles: one point.
  Posed b(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  // Axis (1, 0, -1)/sqrt(2), perpendicular to the edge and to the corner normal (1, 0, 1).
  Posed c(Capsule{Vec3::UnitX(), 0.2, 1.0}, Vec3(1.1, 0.0, 0.6), rot(Vec3::UnitY(), kPi / 4));
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 1u);
  expectVecNear(m[0].pointA, Vec3(1, 0, 0.5));
  expectVecNear(m[0].normal, Vec3(1, 0, 1).normalized());
  EXPECT_NEAR(m[0].gap, std::sqrt(0.02) - 0.2, 1e-12);
  expectSwapSymmetric(b, c);
}

TEST(BoxCapsule, CoreSegmentThroughTheBox) {
  Posed b(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  Posed c(Capsule{Vec3::UnitX(), 0.1, 4.0}, Vec3(0, 0, 0.4));
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 2u);
  for (const Real x : {-1.0, 1.0}) {
    const ContactPoint& p = m[nearestByPointA(m, Vec3(x, 0, 0.5))];
    expectContact(p, Vec3::UnitZ(), -0.2, Vec3(x, 0, 0.5), Vec3(x, 0, 0.3));
  }
  expectSwapSymmetric(b, c);
}

TEST(BoxCapsule, SeparatedNearACorner) {
  Posed b(Box{Vec3(1, 1, 0.5)}, Vec3::Zero());
  // End cap centre beyond the corner (1,1,0.5) at distance sqrt(3)*0.2 > 0.3.
  Posed c(Capsule{Vec3::UnitX(), 0.3, 1.0}, Vec3(1.7, 1.2, 0.7));
  EXPECT_TRUE(collidePair(b, c).empty());
  c.pose.position = Vec3(1.6, 1.1, 0.6);  // now at distance sqrt(3)*0.1 < 0.3
  const ContactManifold m = collidePair(b, c);
  ASSERT_EQ(m.size(), 1u);
  expectVecNear(m[0].pointA, Vec3(1, 1, 0.5));
  EXPECT_NEAR(m[0].gap, std::sqrt(0.03) - 0.3, 1e-12);
}

}  // namespace
}  // namespace grain::collision
