// SPDX-License-Identifier: MIT
// Proximal maps of one contact: disk, Alart-Curnier and friction-cone projections.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include <grain/core/solvers/prox.hpp>

namespace grain {
namespace {

TEST(Prox, DiskKeepsInsideAndScalesOutside) {
  Real x1 = 0.3, x2 = 0.4;
  prox::projectDisk(x1, x2, 1.0);
  EXPECT_DOUBLE_EQ(x1, 0.3);
  EXPECT_DOUBLE_EQ(x2, 0.4);
  x1 = 3.0;
  x2 = 4.0;
  prox::projectDisk(x1, x2, 1.0);
  EXPECT_NEAR(x1, 0.6, 1e-15);
  EXPECT_NEAR(x2, 0.8, 1e-15);
  prox::projectDisk(x1, x2, 0.0);
  EXPECT_EQ(x1, 0.0);
  EXPECT_EQ(x2, 0.0);
}

TEST(Prox, AlartCurnierUsesNewNormalPercussion) {
  // x_N = 2, x_T = (3, 4), mu = 0.5: P_N = 2, disk radius 1.
  const Vec3 p = prox::alartCurnier(Vec3(2.0, 3.0, 4.0), 0.5);
  EXPECT_DOUBLE_EQ(p.x(), 2.0);
  EXPECT_NEAR(p.y(), 0.6, 1e-15);
  EXPECT_NEAR(p.z(), 0.8, 1e-15);
  // Negative x_N: P_N = 0, so the disk has radius 0.
  const Vec3 q = prox::alartCurnier(Vec3(-1.0, 3.0, 4.0), 0.5);
  EXPECT_EQ(q, Vec3::Zero());
}

TEST(Prox, ConeProjectionCases) {
  const Real mu = 0.5;
  // Inside the cone.
  EXPECT_EQ(prox::projectCone(Vec3(2.0, 0.3, 0.4), mu), Vec3(2.0, 0.3, 0.4));
  // Inside the polar cone.
  EXPECT_EQ(prox::projectCone(Vec3(-2.0, 0.3, 0.4), mu), Vec3::Zero());
  // Otherwise onto the cone surface: l = (x_N + mu |x_T|)/(1 + mu^2).
  const Vec3 p = prox::projectCone(Vec3(1.0, 3.0, 4.0), mu);
  const Real l = (1.0 + 0.5 * 5.0) / 1.25;
  EXPECT_NEAR(p.x(), l, 1e-15);
  EXPECT_NEAR(p.tail<2>().norm(), mu * l, 1e-15);
  EXPECT_NEAR(p.y() / p.z(), 0.75, 1e-15);
  // mu = 0: the cone is the normal half-line.
  EXPECT_EQ(prox::projectCone(Vec3(1.0, 3.0, 4.0), 0.0), Vec3(1.0, 0.0, 0.0));
}

TEST(Prox, ConeProjectionIsEuclideanProjection) {
  // Characterisation (thesis (6.24)): y = proj(x) iff y in K and (x - y).(z - y) <= 0 for all z
  // in K. Checked against random cone points, and idempotence.
  std::mt19937 rng(7);
  std::uniform_real_distribution<Real> u(-2.0, 2.0);
  const Real mu = 0.7;
  for (int k = 0; k < 200; ++k) {
    const Vec3 x(u(rng), u(rng), u(rng));
    const Vec3 y = prox::projectCone(x, mu);
    EXPECT_LE(y.tail<2>().norm(), mu * y.x() + 1e-12);
    EXPECT_NEAR((prox::projectCone(y, mu) - y).norm(), 0.0, 1e-12);
    for (int j = 0; j < 20; ++j) {
      const Real zn = std::abs(u(rng));
      const Real ang = u(rng) * 3.14159;
      const Real rad = mu * zn * std::abs(u(rng)) / 2.0;
      const Vec3 z(zn, rad * std::cos(ang), rad * std::sin(ang));
      EXPECT_LE((x - y).dot(z - y), 1e-12);
    }
  }
}

TEST(Prox, DeSaxceShiftOnlyChangesNormal) {
  const Vec3 s = prox::deSaxceShift(Vec3(-1.0, 3.0, 4.0), 0.2);
  EXPECT_DOUBLE_EQ(s.x(), -1.0 + 0.2 * 5.0);
  EXPECT_EQ(s.y(), 3.0);
  EXPECT_EQ(s.z(), 4.0);
}

}  // namespace
}  // namespace grain
