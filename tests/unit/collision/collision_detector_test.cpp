// SPDX-License-Identifier: MIT
// CollisionDetector: A/B rule, conventions of the stored contacts, and the grid broad phase
// against the all-pairs reference.
#include <algorithm>
#include <random>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include <grain/core/collision/collision_detector.hpp>
#include <grain/core/common/error.hpp>
#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>

#include "collision_test_utils.hpp"

namespace grain {
namespace {

using collision::testing::expectVecNear;

std::size_t addBody(DynamicsSystem& sys, ShapeIndex shape, const Vec3& position,
                    BodyMotion motion = BodyMotion::Simulated,
                    const Quat& orientation = Quat::Identity()) {
  BodyDef d;
  d.id = makeBodyId(0, static_cast<std::uint32_t>(sys.bodies.size()));
  d.motion = motion;
  d.shape = shape;
  d.mass = 1.0;
  d.inertiaBody = Vec3::Ones();
  d.position = position;
  d.orientation = orientation;
  return sys.addBody(d);
}

ContactStorage detect(const DynamicsSystem& sys, const CollisionSettings& s = {},
                      CollisionStats* stats = nullptr) {
  CollisionDetector det(s);
  ContactStorage c;
  det.detect(sys.bodies, sys.shapes, c);
  if (stats) {
    *stats = det.stats();
  }
  return c;
}

TEST(CollisionDetector, ABRuleAndStoredConventions) {
  DynamicsSystem sys;
  const ShapeIndex big = sys.shapes.add(Sphere{0.5});
  const ShapeIndex small = sys.shapes.add(Sphere{0.25});
  const ShapeIndex plane = sys.shapes.add(Halfspace{Vec3::UnitZ()});
  addBody(sys, big, Vec3(0, 0, 0.45));                            // 0 simulated, on the floor
  addBody(sys, plane, Vec3::Zero(), BodyMotion::Static);          // 1 floor
  addBody(sys, small, Vec3(0.7, 0, 0.45));                        // 2 simulated, touches 0
  addBody(sys, small, Vec3(0.7, 0, 0.9), BodyMotion::Static);     // 3 static, touches 2
  addBody(sys, small, Vec3(0.7, 0.45, 0.9), BodyMotion::Static);  // 4 static, overlaps 3 only
  CollisionStats stats;
  const ContactStorage c = detect(sys, {}, &stats);
  // Body 2 is 0.2 above the floor and body 4 only overlaps the static body 3: no contacts.
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(stats.contacts, 3u);
  EXPECT_GE(stats.candidatePairs, 3u);
  // Canonical order: (0,2), (1,0), (3,2).
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> expected = {{0, 2}, {1, 0}, {3, 2}};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(c.bodyA()[k], expected[k].first);
    EXPECT_EQ(c.bodyB()[k], expected[k].second);
  }
  // (0, 2): normal from 0 to 2 (+x), gap 0.7 - 0.75.
  expectVecNear(c.normals()[0], Vec3::UnitX());
  EXPECT_NEAR(c.gaps()[0], -0.05, 1e-12);
  expectVecNear(c.rA()[0], Vec3(0.5, 0, 0));
  expectVecNear(c.rB()[0], Vec3(-0.25, 0, 0));
  // (1, 0): floor is A, normal +z; rA from the floor body's origin.
  expectVecNear(c.normals()[1], Vec3::UnitZ());
  EXPECT_NEAR(c.gaps()[1], -0.05, 1e-12);
  expectVecNear(c.rA()[1], Vec3(0, 0, 0));
  expectVecNear(c.rB()[1], Vec3(0, 0, -0.5));
  // (3, 2): static 3 is A although its index is larger; normal from 3 to 2 (-z).
  expectVecNear(c.normals()[2], -Vec3::UnitZ());
  EXPECT_NEAR(c.gaps()[2], -0.05, 1e-12);
  expectVecNear(c.rA()[2], Vec3(0, 0, -0.25));
  expectVecNear(c.rB()[2], Vec3(0, 0, 0.25));
  // Tangents complete a right-handed frame.
  for (std::size_t k = 0; k < c.size(); ++k) {
    EXPECT_NEAR(c.normals()[k].cross(c.tangent1(k)).dot(c.tangent2(k)), 1.0, 1e-12);
  }
}

TEST(CollisionDetector, ExactTouchIsAContactInGridAndBruteForce) {
  DynamicsSystem sys;
  const ShapeIndex a = sys.shapes.add(Sphere{0.5});
  const ShapeIndex b = sys.shapes.add(Sphere{0.25});
  addBody(sys, a, Vec3(0, 0, 0));
  addBody(sys, b, Vec3(0.75, 0, 0));
  for (const BroadPhase bp : {BroadPhase::Grid, BroadPhase::BruteForce}) {
    CollisionSettings s;
    s.broadPhase = bp;
    const ContactStorage c = detect(sys, s);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c.gaps()[0], 0.0);
  }
}

TEST(CollisionDetector, NonSimulatedPairsAreNeverTested) {
  DynamicsSystem sys;
  const ShapeIndex s = sys.shapes.add(Sphere{0.5});
  const ShapeIndex plane = sys.shapes.add(Halfspace{Vec3::UnitZ()});
  addBody(sys, s, Vec3(0, 0, 0), BodyMotion::Static);
  addBody(sys, s, Vec3(0.1, 0, 0), BodyMotion::Animated);
  addBody(sys, plane, Vec3::Zero(), BodyMotion::Static);
  CollisionStats stats;
  const ContactStorage c = detect(sys, {}, &stats);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(stats.candidatePairs, 0u);
  CollisionSettings brute;
  brute.broadPhase = BroadPhase::BruteForce;
  EXPECT_EQ(detect(sys, brute, &stats).size(), 0u);
  EXPECT_EQ(stats.candidatePairs, 0u);
}

TEST(CollisionDetector, AnimatedPartnerIsBodyAAndRemoteBodiesCollide) {
  DynamicsSystem sys;
  const ShapeIndex s = sys.shapes.add(Sphere{0.5});
  addBody(sys, s, Vec3(0, 0, 0));                          // 0
  addBody(sys, s, Vec3(0.9, 0, 0), BodyMotion::Animated);  // 1
  sys.bodies.ownerships()[0] = BodyOwnership::Remote;
  const ContactStorage c = detect(sys);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c.bodyA()[0], 1u);
  EXPECT_EQ(c.bodyB()[0], 0u);
  expectVecNear(c.normals()[0], -Vec3::UnitX());
}

TEST(CollisionDetector, SimulatedHalfspaceIsRejected) {
  DynamicsSystem sys;
  const ShapeIndex plane = sys.shapes.add(Halfspace{Vec3::UnitZ()});
  addBody(sys, plane, Vec3::Zero());
  EXPECT_THROW(detect(sys), Error);
}

TEST(CollisionDetector, OrientationOfBoxBodiesIsUsed) {
  // A box standing on a floor, rotated 45 deg about z and tilted: corners from the quaternion.
  DynamicsSystem sys;
  const ShapeIndex plane = sys.shapes.add(Halfspace{Vec3::UnitZ()});
  const ShapeIndex box = sys.shapes.add(Box{Vec3(0.5, 0.25, 0.1)});
  addBody(sys, plane, Vec3::Zero(), BodyMotion::Static);
  const Quat q = quat::fromAxisAngle(Vec3::UnitY(), collision::testing::kPi / 2);  // x -> -z
  addBody(sys, box, Vec3(0, 0, 0.49), BodyMotion::Simulated, q);
  const ContactStorage c = detect(sys);
  ASSERT_EQ(c.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(c.gaps()[k], -0.01, 1e-12);
    EXPECT_NEAR(c.rB()[k].z(), -0.5, 1e-12);
    EXPECT_NEAR(std::abs(c.rB()[k].x()), 0.1, 1e-12);
    EXPECT_NEAR(std::abs(c.rB()[k].y()), 0.25, 1e-12);
    EXPECT_NEAR(c.rA()[k].z(), 0.0, 1e-12);
  }
  // Sorted by gap, then rA lexicographically.
  for (std::size_t k = 1; k < 4; ++k) {
    const bool ordered =
        c.gaps()[k - 1] < c.gaps()[k] ||
        (c.gaps()[k - 1] == c.gaps()[k] &&
         std::lexicographical_compare(c.rA()[k - 1].data(), c.rA()[k - 1].data() + 3,
                                      c.rA()[k].data(), c.rA()[k].data() + 3));
    EXPECT_TRUE(ordered) << k;
  }
}

/// A few thousand polydisperse spheres (radii 0.5 .. 1.5) with boxes, capsules, large bodies,
/// static obstacles, a floor and a mesh, densely packed so that many bodies overlap.
DynamicsSystem randomScene(std::uint32_t seed, int spheres) {
  DynamicsSystem sys;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> uni(0.0, 1.0);
  const Real side = std::cbrt(spheres * 4.19 / 0.45);  // about 45 % volume fraction
  auto randomPos = [&](Real margin) {
    return Vec3(margin + (side - 2 * margin) * uni(rng), margin + (side - 2 * margin) * uni(rng),
                margin + (side - 2 * margin) * uni(rng));
  };
  auto randomQuat = [&]() {
    Quat q(uni(rng) - 0.5, uni(rng) - 0.5, uni(rng) - 0.5, uni(rng) - 0.5);
    return q.normalized();
  };
  std::vector<ShapeIndex> sphereShapes;
  for (int k = 0; k < 32; ++k) {
    sphereShapes.push_back(sys.shapes.add(Sphere{0.5 + k / 31.0}));
  }
  const ShapeIndex box = sys.shapes.add(Box{Vec3(0.8, 0.5, 0.3), Vec3(0.1, -0.05, 0.02)});
  const ShapeIndex cube = sys.shapes.add(Box{Vec3::Constant(0.6)});
  const ShapeIndex capsule = sys.shapes.add(Capsule{Vec3(1, 1, 0), 0.4, 1.5});
  const ShapeIndex bigSphere = sys.shapes.add(Sphere{4.0});
  const ShapeIndex wall = sys.shapes.add(Box{Vec3(0.5, side, side)});
  const ShapeIndex pillar = sys.shapes.add(Capsule{Vec3::UnitZ(), 1.0, side});
  const ShapeIndex floor = sys.shapes.add(Halfspace{Vec3(0.1, 0, 1)});
  auto mesh = std::make_shared<TriangleMesh>();
  // A tilted, bumpy sheet of 2 x 12 x 12 triangles across the domain.
  const int nGrid = 12;
  for (int j = 0; j <= nGrid; ++j) {
    for (int i = 0; i <= nGrid; ++i) {
      const Real x = side * i / nGrid;
      const Real y = side * j / nGrid;
      mesh->vertices.emplace_back(x, y, 0.3 * side + 0.2 * x + 0.8 * std::sin(0.7 * x + 0.3 * y));
    }
  }
  for (int j = 0; j < nGrid; ++j) {
    for (int i = 0; i < nGrid; ++i) {
      const auto v = static_cast<std::uint32_t>(j * (nGrid + 1) + i);
      mesh->triangles.push_back({v, v + 1, v + nGrid + 2});
      mesh->triangles.push_back({v, v + nGrid + 2, v + nGrid + 1});
    }
  }
  mesh->finalize();
  const ShapeIndex sheet = sys.shapes.add(Mesh{mesh});
  auto sheetZ = [&](Real x, Real y) {
    return 0.3 * side + 0.2 * x + 0.8 * std::sin(0.7 * x + 0.3 * y);
  };

  addBody(sys, floor, Vec3(0, 0, 1.0), BodyMotion::Static);
  for (int k = 0; k < spheres; ++k) {
    addBody(sys, sphereShapes[rng() % sphereShapes.size()], randomPos(0.0));
    if (k % 30 == 0) {
      addBody(sys, (k % 60 == 0) ? box : cube, randomPos(0.0), BodyMotion::Simulated, randomQuat());
      addBody(sys, capsule, randomPos(0.0), BodyMotion::Simulated, randomQuat());
    }
    if (k % 500 == 0) {
      addBody(sys, sphereShapes[5], randomPos(0.0), BodyMotion::Static);
      addBody(sys, cube, randomPos(0.0), BodyMotion::Animated, randomQuat());
    }
  }
  addBody(sys, bigSphere, randomPos(4.0));
  addBody(sys, bigSphere, randomPos(4.0));
  addBody(sys, wall, Vec3(0.7 * side, 0.5 * side, 0.5 * side), BodyMotion::Static);
  addBody(sys, pillar, Vec3(0.3 * side, 0.6 * side, 0.5 * side), BodyMotion::Static,
          quat::fromAxisAngle(Vec3(1, 0, 0.3), 0.4));
  addBody(sys, sheet, Vec3(0, 0, 0), BodyMotion::Static);
  // Make sure every shape pair occurs: a box, a capsule and a sphere sunk into the floor
  // (plane z = 1 - 0.1 x) and into the sheet, and a box-box, box-capsule, capsule-capsule stack.
  const Real x0 = 0.5 * side;
  const Real y0 = 0.5 * side;
  addBody(sys, cube, Vec3(2.0, 2.0, 1.3), BodyMotion::Simulated, randomQuat());
  addBody(sys, capsule, Vec3(5.0, 2.0, 0.7), BodyMotion::Simulated, randomQuat());
  addBody(sys, cube, Vec3(x0, y0, sheetZ(x0, y0) + 0.3), BodyMotion::Simulated, randomQuat());
  addBody(sys, capsule, Vec3(x0 + 3, y0, sheetZ(x0 + 3, y0) + 0.2), BodyMotion::Simulated,
          randomQuat());
  addBody(sys, sphereShapes[0], Vec3(x0 - 3, y0, sheetZ(x0 - 3, y0) + 0.1));
  const Vec3 stack(0.2 * side, 0.8 * side, 0.8 * side);
  addBody(sys, cube, stack, BodyMotion::Simulated, randomQuat());
  addBody(sys, cube, stack + Vec3(0.9, 0, 0), BodyMotion::Simulated, randomQuat());
  addBody(sys, capsule, stack + Vec3(0, 0.9, 0), BodyMotion::Simulated, randomQuat());
  addBody(sys, capsule, stack + Vec3(0, 1.6, 0), BodyMotion::Simulated, randomQuat());
  return sys;
}

void expectIdentical(const ContactStorage& a, const ContactStorage& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a.bodyA()[k], b.bodyA()[k]) << k;
    ASSERT_EQ(a.bodyB()[k], b.bodyB()[k]) << k;
    ASSERT_EQ(a.gaps()[k], b.gaps()[k]) << k;
    ASSERT_EQ(a.normals()[k], b.normals()[k]) << k;
    ASSERT_EQ(a.rA()[k], b.rA()[k]) << k;
    ASSERT_EQ(a.rB()[k], b.rB()[k]) << k;
  }
}

TEST(CollisionDetector, GridMatchesBruteForceOnRandomPolydisperseScene) {
  const DynamicsSystem sys = randomScene(42, 3000);
  CollisionSettings brute;
  brute.broadPhase = BroadPhase::BruteForce;
  CollisionStats bruteStats;
  const ContactStorage reference = detect(sys, brute, &bruteStats);
  ASSERT_GT(reference.size(), 3000u);  // dense: several contacts per body

  // Every kind of pair occurs.
  std::set<std::pair<ShapeType, ShapeType>> kinds;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    kinds.emplace(sys.shapes.type(sys.bodies.shapes()[reference.bodyA()[k]]),
                  sys.shapes.type(sys.bodies.shapes()[reference.bodyB()[k]]));
  }
  // 12 unordered shape pairs; both orders of (A, B) occur for the simulated ones.
  EXPECT_GE(kinds.size(), 12u);

  // No duplicate contacts: (A, B, rA) unique, and all gaps <= 0.
  std::set<std::tuple<std::uint32_t, std::uint32_t, Real, Real, Real>> seen;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    EXPECT_LE(reference.gaps()[k], 0.0);
    const Vec3& r = reference.rA()[k];
    EXPECT_TRUE(
        seen.emplace(reference.bodyA()[k], reference.bodyB()[k], r.x(), r.y(), r.z()).second)
        << "types " << int(sys.shapes.type(sys.bodies.shapes()[reference.bodyA()[k]])) << " "
        << int(sys.shapes.type(sys.bodies.shapes()[reference.bodyB()[k]])) << " gap "
        << reference.gaps()[k] << " rA " << r.transpose() << " rB " << reference.rB()[k].transpose()
        << " n " << reference.normals()[k].transpose();
  }

  // Default grid; a fine grid (neighbour reach 3) with half of the bodies "large" (cell walks,
  // linear scans and the second cell list of large bodies); a coarse grid. All must give the
  // identical contact set.
  std::vector<CollisionSettings> variants(3);
  variants[1].cellSizeFactor = 0.4;
  variants[1].largeBodyRatio = 1.0;
  variants[2].cellSizeFactor = 3.0;
  std::vector<std::size_t> largeCounts;
  for (const CollisionSettings& s : variants) {
    CollisionDetector det(s);
    ContactStorage c;
    det.detect(sys.bodies, sys.shapes, c);
    expectIdentical(c, reference);
    largeCounts.push_back(det.stats().largeBodies);
    // Candidate pairs: sorted, unique, far fewer than all pairs.
    const auto& pairs = det.candidatePairs();
    EXPECT_TRUE(
        std::is_sorted(pairs.begin(), pairs.end(), [](const BodyPair& p, const BodyPair& q) {
          return p.a < q.a || (p.a == q.a && p.b < q.b);
        }));
    EXPECT_EQ(std::adjacent_find(pairs.begin(), pairs.end()), pairs.end());
    EXPECT_LT(det.stats().candidatePairs, bruteStats.candidatePairs / 50);
    // Second call with the warmed-up detector gives the same result.
    ContactStorage again;
    det.detect(sys.bodies, sys.shapes, again);
    expectIdentical(again, reference);
  }
  EXPECT_GE(largeCounts[0], 4u);  // big spheres, wall, pillar
  EXPECT_LE(largeCounts[0], 10u);
  EXPECT_GT(largeCounts[1], 1000u);  // about half of the bodies
}

TEST(CollisionDetector, GridMatchesBruteForceOnSecondSeedWithFarOutlier) {
  DynamicsSystem sys = randomScene(7, 1500);
  // A body far away makes the grid coordinates huge; results must not change.
  addBody(sys, sys.bodies.shapes()[1], Vec3(1e7, -3e6, 2e5));
  CollisionSettings brute;
  brute.broadPhase = BroadPhase::BruteForce;
  CollisionStats stats;
  const ContactStorage grid = detect(sys, {}, &stats);
  EXPECT_FALSE(stats.denseGrid);  // the occupied box is almost empty: hashed cells
  expectIdentical(grid, detect(sys, brute));
}

TEST(CollisionDetector, ThreadsFindTheSameContactsInTheSameOrder) {
  // Enough bodies and pairs for three threads (kMinItemsPerThread each: the grid built in parts,
  // its pairs, the plane pairs, the pairs' sort and the narrow phase on the threads): a dense
  // grid, and a hashed one (a far outlier), each with every kind of shape pair.
  DynamicsSystem dense = randomScene(42, 8000);
  DynamicsSystem hashed = randomScene(7, 8000);
  addBody(hashed, hashed.bodies.shapes()[1], Vec3(1e7, -3e6, 2e5));
  for (const DynamicsSystem* sys : {&dense, &hashed}) {
    CollisionDetector serial;
    ContactStorage reference;
    serial.detect(sys->bodies, sys->shapes, reference);
    ASSERT_GE(serial.stats().candidatePairs, 3 * CollisionDetector::kMinItemsPerThread);
    EXPECT_EQ(serial.stats().denseGrid, sys == &dense);
    for (const std::uint32_t threads : {2u, 3u}) {
      CollisionDetector det;
      ContactStorage c;
      det.detect(sys->bodies, sys->shapes, c, threads);
      expectIdentical(c, reference);
      EXPECT_EQ(det.candidatePairs(), serial.candidatePairs());
      // Again with the detector's per-thread storage in use.
      det.detect(sys->bodies, sys->shapes, c, threads);
      expectIdentical(c, reference);
    }
  }
}

}  // namespace
}  // namespace grain
