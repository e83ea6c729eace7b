// SPDX-License-Identifier: MIT
// Closest-point queries against closed forms, and the mesh BVH against a linear scan.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include <grain/core/collision/distance_queries.hpp>
#include <grain/core/collision/mesh_bvh.hpp>

#include "collision_test_utils.hpp"

namespace grain::collision {
namespace {

using testing::expectVecNear;

TEST(DistanceQueries, SegmentParameterClampsToEnds) {
  const Vec3 p0(0, 0, 0);
  const Vec3 p1(2, 0, 0);
  EXPECT_DOUBLE_EQ(closestSegmentParameter(p0, p1, Vec3(0.5, 3, 1)), 0.25);
  EXPECT_DOUBLE_EQ(closestSegmentParameter(p0, p1, Vec3(-1, 3, 1)), 0.0);
  EXPECT_DOUBLE_EQ(closestSegmentParameter(p0, p1, Vec3(5, 3, 1)), 1.0);
  EXPECT_DOUBLE_EQ(closestSegmentParameter(p0, p0, Vec3(5, 3, 1)), 0.0);
}

TEST(DistanceQueries, SkewSegmentsMeetAtCommonPerpendicular) {
  // x axis segment and a y-parallel segment one unit above x = 0.5.
  const SegmentClosest c =
      closestPointsSegments(Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(0.5, -1, 1), Vec3(0.5, 3, 1));
  EXPECT_NEAR(c.s, 0.25, 1e-15);
  EXPECT_NEAR(c.t, 0.25, 1e-15);
  expectVecNear(c.onFirst, Vec3(0.5, 0, 0));
  expectVecNear(c.onSecond, Vec3(0.5, 0, 1));
}

TEST(DistanceQueries, SegmentsClampedAtEndPoints) {
  // Second segment lies beyond the end of the first one.
  const SegmentClosest c =
      closestPointsSegments(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, -1, 0), Vec3(2, 1, 0));
  EXPECT_DOUBLE_EQ(c.s, 1.0);
  EXPECT_NEAR(c.t, 0.5, 1e-15);
  expectVecNear(c.onSecond, Vec3(2, 0, 0));
}

TEST(DistanceQueries, ParallelSegmentsGiveAClosestPair) {
  const SegmentClosest c =
      closestPointsSegments(Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(1, 0, 1), Vec3(3, 0, 1));
  EXPECT_NEAR((c.onFirst - c.onSecond).norm(), 1.0, 1e-15);
  EXPECT_GE(c.onFirst.x(), 1.0 - 1e-15);
  EXPECT_LE(c.onFirst.x(), 2.0 + 1e-15);
}

TEST(DistanceQueries, TriangleRegions) {
  const Vec3 a(0, 0, 0);
  const Vec3 b(2, 0, 0);
  const Vec3 c(0, 2, 0);
  TriangleClosest r = closestPointOnTriangle(Vec3(0.5, 0.5, 3), a, b, c);
  EXPECT_EQ(r.feature, TriangleFeature::Face);
  expectVecNear(r.point, Vec3(0.5, 0.5, 0));
  r = closestPointOnTriangle(Vec3(1, -1, 1), a, b, c);
  EXPECT_EQ(r.feature, TriangleFeature::EdgeAB);
  expectVecNear(r.point, Vec3(1, 0, 0));
  r = closestPointOnTriangle(Vec3(2, 2, -1), a, b, c);
  EXPECT_EQ(r.feature, TriangleFeature::EdgeBC);
  expectVecNear(r.point, Vec3(1, 1, 0));
  r = closestPointOnTriangle(Vec3(-1, -1, 0), a, b, c);
  EXPECT_EQ(r.feature, TriangleFeature::VertexA);
  expectVecNear(r.point, a);
  r = closestPointOnTriangle(Vec3(3, -0.5, 0), a, b, c);
  EXPECT_EQ(r.feature, TriangleFeature::VertexB);
  expectVecNear(r.point, b);
  r = closestPointOnTriangle(Vec3(-0.5, 1, 0.2), a, b, c);
  EXPECT_EQ(r.feature, TriangleFeature::EdgeCA);
  expectVecNear(r.point, Vec3(0, 1, 0));
}

TEST(DistanceQueries, SegmentPiercesTriangle) {
  const Vec3 a(0, 0, 0);
  const Vec3 b(2, 0, 0);
  const Vec3 c(0, 2, 0);
  Vec3 x;
  ASSERT_TRUE(segmentIntersectsTriangle(Vec3(0.5, 0.5, -1), Vec3(0.5, 0.5, 3), a, b, c, x));
  expectVecNear(x, Vec3(0.5, 0.5, 0));
  EXPECT_FALSE(segmentIntersectsTriangle(Vec3(1.5, 1.5, -1), Vec3(1.5, 1.5, 3), a, b, c, x));
  EXPECT_FALSE(segmentIntersectsTriangle(Vec3(0.5, 0.5, 0.1), Vec3(0.5, 0.5, 3), a, b, c, x));
}

TEST(MeshBvh, QueryMatchesLinearScan) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<Real> u(-10.0, 10.0);
  std::uniform_real_distribution<Real> small(-0.7, 0.7);
  auto mesh = std::make_shared<TriangleMesh>();
  for (int t = 0; t < 500; ++t) {
    const Vec3 c(u(rng), u(rng), u(rng));
    const auto base = static_cast<std::uint32_t>(mesh->vertices.size());
    for (int k = 0; k < 3; ++k) {
      mesh->vertices.push_back(c + Vec3(small(rng), small(rng), small(rng)));
    }
    mesh->triangles.push_back({base, base + 1, base + 2});
  }
  mesh->finalize();
  const MeshBvh bvh(mesh);
  EXPECT_GT(bvh.nodeCount(), 100u);
  std::vector<std::uint32_t> got;
  for (int q = 0; q < 200; ++q) {
    const Vec3 c(u(rng), u(rng), u(rng));
    const Aabb box = Aabb::fromCenterHalf(c, Vec3(1.0 + small(rng), 1.5, 0.8));
    got.clear();
    bvh.query(box, got);
    std::vector<std::uint32_t> expected;
    for (std::uint32_t t = 0; t < mesh->triangles.size(); ++t) {
      Aabb tb;
      for (auto v : mesh->triangles[t]) {
        tb.extend(mesh->vertices[v]);
      }
      if (tb.overlaps(box)) {
        expected.push_back(t);
      }
    }
    std::sort(got.begin(), got.end());
    // The BVH boxes carry a 1e-12 margin; random data never lands within it.
    EXPECT_EQ(got, expected);
  }
}

}  // namespace
}  // namespace grain::collision
