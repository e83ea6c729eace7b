// SPDX-License-Identifier: MIT
// Narrow phase against static triangle meshes (sphere, capsule, box).
#include <cmath>
#include <memory>

#include <gtest/gtest.h>

#include <grain/core/collision/mesh_bvh.hpp>

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

/// Square [-2, 2]^2 in the plane z = 0 of K, two triangles split along the diagonal x = y,
/// face normals +z.
std::shared_ptr<TriangleMesh> squareMesh() {
  auto m = std::make_shared<TriangleMesh>();
  m->vertices = {Vec3(-2, -2, 0), Vec3(2, -2, 0), Vec3(2, 2, 0), Vec3(-2, 2, 0)};
  m->triangles = {{0, 1, 2}, {0, 2, 3}};
  m->finalize();
  return m;
}

/// Roof: two faces meeting at the ridge x = 0, z = 0.5, sloping down to z = 0 at x = +-1.
std::shared_ptr<TriangleMesh> roofMesh() {
  auto m = std::make_shared<TriangleMesh>();
  m->vertices = {Vec3(-1, -2, 0), Vec3(0, -2, 0.5), Vec3(0, 2, 0.5),
                 Vec3(-1, 2, 0),  Vec3(1, -2, 0),   Vec3(1, 2, 0)};
  m->triangles = {{0, 1, 2}, {0, 2, 3}, {1, 4, 5}, {1, 5, 2}};
  m->finalize();
  return m;
}

/// A posed mesh body owning its hierarchy.
struct MeshBody {
  std::unique_ptr<MeshBvh> bvh;
  Posed posed;
  MeshBody(const std::shared_ptr<TriangleMesh>& m, const Vec3& p, const Mat3& r = Mat3::Identity(),
           bool oneSided = false)
      : bvh(std::make_unique<MeshBvh>(m)), posed(Mesh{m, oneSided}, p, r) {
    posed.pose.meshBvh = bvh.get();
  }
};

TEST(MeshSphere, SphereOnFlatMeshOneContact) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  Posed s(Sphere{0.5}, Vec3(0.3, -0.2, 0.45));
  const ContactManifold m = collidePair(mesh.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.05, Vec3(0.3, -0.2, 0), Vec3(0.3, -0.2, -0.05));
  expectSwapSymmetric(mesh.posed, s);
}

TEST(MeshSphere, RotatedTranslatedMesh) {
  const Mat3 r = rot(Vec3(1, -2, 0.5), 0.8);
  const Vec3 p(1, 2, 3);
  MeshBody mesh(squareMesh(), p, r);
  Posed s(Sphere{0.5}, p + r * Vec3(0.3, -0.2, 0.45));
  const ContactManifold m = collidePair(mesh.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], r.col(2), -0.05, p + r * Vec3(0.3, -0.2, 0), p + r * Vec3(0.3, -0.2, -0.05));
}

TEST(MeshSphere, ShellIsTwoSided) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  Posed s(Sphere{0.5}, Vec3(0.3, -0.2, -0.45));
  const ContactManifold m = collidePair(mesh.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], -Vec3::UnitZ(), -0.05, Vec3(0.3, -0.2, 0), Vec3(0.3, -0.2, 0.05));
}

TEST(MeshSphere, OneSidedPushesACentreBehindTheFaceToTheFront) {
  MeshBody mesh(squareMesh(), Vec3::Zero(), Mat3::Identity(), true);
  // Centre 0.3 behind the face (less than the radius): pushed out to the front, g_N = -0.8.
  Posed s(Sphere{0.5}, Vec3(0.3, -0.2, -0.3));
  ContactManifold m = collidePair(mesh.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.8, Vec3(0.3, -0.2, 0), Vec3(0.3, -0.2, -0.8));
  expectSwapSymmetric(mesh.posed, s);
  // In front: the same contact as a two-sided mesh.
  s.pose.position.z() = 0.45;
  m = collidePair(mesh.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.05, Vec3(0.3, -0.2, 0), Vec3(0.3, -0.2, -0.05));
  // Deeper behind than the radius: the far side of a solid, no contact.
  s.pose.position.z() = -0.55;
  EXPECT_TRUE(collidePair(mesh.posed, s).empty());
  // Behind and beside the triangle (beyond the edge x = 2): no contact.
  s.pose.position = Vec3(2.2, 0.0, -0.1);
  EXPECT_TRUE(collidePair(mesh.posed, s).empty());
}

TEST(MeshCapsule, OneSidedPushesAnEndBehindTheFaceToTheFront) {
  MeshBody mesh(squareMesh(), Vec3::Zero(), Mat3::Identity(), true);
  // Lying capsule, core 0.1 below the face: both ends pushed up, g_N = -0.1 - 0.2.
  Posed c(Capsule{Vec3::UnitX(), 0.2, 1.0}, Vec3(0.1, 0.3, -0.1));
  const ContactManifold m = collidePair(mesh.posed, c);
  ASSERT_EQ(m.size(), 2u);
  for (const Real x : {-0.4, 0.6}) {
    const ContactPoint& p = m[nearestByPointA(m, Vec3(x, 0.3, 0))];
    expectContact(p, Vec3::UnitZ(), -0.3, Vec3(x, 0.3, 0), Vec3(x, 0.3, -0.3));
  }
}

TEST(MeshBox, OneSidedDropsContactsPushingToTheBack) {
  MeshBody twoSided(squareMesh(), Vec3::Zero());
  MeshBody oneSided(squareMesh(), Vec3::Zero(), Mat3::Identity(), true);
  // Box mostly below the face: a two-sided mesh pushes it down, a one-sided one does not.
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0.3, 0.2, -0.4));
  const ContactManifold m = collidePair(twoSided.posed, b);
  ASSERT_FALSE(m.empty());
  for (const ContactPoint& p : m) {
    EXPECT_LT(p.normal.z(), 0.0);
  }
  for (const ContactPoint& p : collidePair(oneSided.posed, b)) {
    EXPECT_GT(p.normal.z(), 0.0);
  }
  // Resting on the front: unchanged.
  b.pose.position.z() = 0.45;
  EXPECT_EQ(collidePair(oneSided.posed, b).size(), collidePair(twoSided.posed, b).size());
}

TEST(MeshSphere, OnTheSharedDiagonalOneContact) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  Posed s(Sphere{0.5}, Vec3(0.4, 0.4, 0.45));
  const ContactManifold m = collidePair(mesh.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.05, Vec3(0.4, 0.4, 0), Vec3(0.4, 0.4, -0.05));
}

TEST(MeshSphere, InternalEdgeContactIsDropped) {
  // Centre over the triangle x > y, 0.1414 from the diagonal in the plane: the other triangle's
  // closest point (on the diagonal) is within the radius but must not create a contact.
  MeshBody mesh(squareMesh(), Vec3::Zero());
  Posed s(Sphere{0.5}, Vec3(0.5, 0.3, 0.45));
  const ContactManifold m = collidePair(mesh.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.05, Vec3(0.5, 0.3, 0), Vec3(0.5, 0.3, -0.05));
}

TEST(MeshSphere, ConvexRidgeOneContactConcaveCornerTwo) {
  MeshBody roof(roofMesh(), Vec3::Zero());
  Posed s(Sphere{0.5}, Vec3(0, 0.3, 0.95));
  ContactManifold m = collidePair(roof.posed, s);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.05, Vec3(0, 0.3, 0.5), Vec3(0, 0.3, 0.45));

  // Upside down the roof is a V groove: a sphere sitting in it touches both faces.
  MeshBody groove(roofMesh(), Vec3::Zero(), rot(Vec3::UnitY(), kPi));
  // Groove faces: z = -0.5 + 0.5|x|; face normals (-+0.447, 0, 0.894). A sphere of radius r on
  // the axis touches both faces when its centre is at z = -0.5 + r * sqrt(1.25).
  const Real r = 0.3;
  Posed g(Sphere{r}, Vec3(0, 0.1, -0.5 + r * std::sqrt(1.25) - 0.01));
  m = collidePair(groove.posed, g);
  ASSERT_EQ(m.size(), 2u);
  for (const ContactPoint& c : m) {
    EXPECT_NEAR(std::abs(c.normal.x()), 1.0 / std::sqrt(5.0), 1e-12);
    EXPECT_NEAR(c.normal.z(), 2.0 / std::sqrt(5.0), 1e-12);
    EXPECT_NEAR(c.gap, -0.01 * 2.0 / std::sqrt(5.0), 1e-12);
  }
  EXPECT_LT(m[0].normal.x() * m[1].normal.x(), 0.0);
}

TEST(MeshCapsule, LyingAcrossTheDiagonalTwoContacts) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  Posed c(Capsule{Vec3::UnitX(), 0.5, 2.0}, Vec3(0, 0.1, 0.45));
  const ContactManifold m = collidePair(mesh.posed, c);
  ASSERT_EQ(m.size(), 2u);
  for (const Real x : {-1.0, 1.0}) {
    const ContactPoint& p = m[nearestByPointA(m, Vec3(x, 0.1, 0))];
    expectContact(p, Vec3::UnitZ(), -0.05, Vec3(x, 0.1, 0), Vec3(x, 0.1, -0.05));
  }
  expectSwapSymmetric(mesh.posed, c);
}

TEST(MeshCapsule, AcrossTheRidgeOneInteriorContact) {
  MeshBody roof(roofMesh(), Vec3::Zero());
  // Capsule along x over the ridge: its core crosses above the ridge edge (0, 0.2, 0.5).
  Posed c(Capsule{Vec3::UnitX(), 0.2, 1.0}, Vec3(0, 0.2, 0.65));
  const ContactManifold m = collidePair(roof.posed, c);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.05, Vec3(0, 0.2, 0.5), Vec3(0, 0.2, 0.45));
}

TEST(MeshCapsule, PiercingCapsulePushedOutAlongTheFaceNormal) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  Posed c(Capsule{Vec3::UnitZ(), 0.1, 2.0}, Vec3(0.3, -0.2, 0.5));
  const ContactManifold m = collidePair(mesh.posed, c);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.6, Vec3(0.3, -0.2, 0), Vec3(0.3, -0.2, -0.6));
}

TEST(MeshBox, BoxRestingOnTwoTriangles) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  const Mat3 r = rot(Vec3::UnitZ(), kPi / 6);
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0.3, 0.2, 0.45), r);
  const ContactManifold m = collidePair(mesh.posed, b);
  // Each triangle's clipped polygon has corners of its own; the flat patch keeps four points.
  ASSERT_EQ(m.size(), 4u);
  for (const ContactPoint& p : m) {
    expectVecNear(p.normal, Vec3::UnitZ());
    EXPECT_NEAR(p.gap, -0.05, 1e-12);
    EXPECT_NEAR(p.pointA.z(), 0.0, 1e-12);
    for (const ContactPoint& q : m) {
      if (&p != &q) {
        EXPECT_GT((p.pointA - q.pointA).norm(), 1e-6);  // duplicates were merged
      }
    }
  }
  // All four bottom corners are among the points.
  for (int i = 0; i < 4; ++i) {
    const Vec3 corner = Vec3(0.3, 0.2, 0) + r * Vec3((i & 1) ? 0.5 : -0.5, (i & 2) ? 0.5 : -0.5, 0);
    expectVecNear(m[nearestByPointA(m, corner)].pointA, corner, 1e-12);
  }
  expectSwapSymmetric(mesh.posed, b);
}

TEST(MeshBox, TiltedBoxCornerOnTheMesh) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  // Cube balanced on a corner: the body diagonal (1,1,1) rotated onto -z.
  const Vec3 d = Vec3::Ones().normalized();
  const Mat3 r = Quat::FromTwoVectors(d, -Vec3::UnitZ()).toRotationMatrix();
  const Real h = 0.5 * std::sqrt(3.0);
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(-0.7, 0.4, h - 0.02), r);
  const ContactManifold m = collidePair(mesh.posed, b);
  ASSERT_EQ(m.size(), 1u);
  expectContact(m[0], Vec3::UnitZ(), -0.02, Vec3(-0.7, 0.4, 0), Vec3(-0.7, 0.4, -0.02), 1e-12);
}

TEST(MeshBox, FarAwayBoxNoContact) {
  MeshBody mesh(squareMesh(), Vec3::Zero());
  Posed b(Box{Vec3::Constant(0.5)}, Vec3(0.3, 0.2, 0.51));
  EXPECT_TRUE(collidePair(mesh.posed, b).empty());
}

}  // namespace
}  // namespace grain::collision
