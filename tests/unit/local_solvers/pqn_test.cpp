// SPDX-License-Identifier: MIT
// Koziara's smoothed natural map: limits and derivatives against finite differences.
#include <random>

#include <gtest/gtest.h>

#include <grain/core/solvers/local_pqn.hpp>
#include <grain/core/solvers/local_problem.hpp>

namespace grain {
namespace {

TEST(PqnLinearisation, SmallSmoothingGivesTheNaturalMap) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<Real> uni(-1.0, 1.0);
  for (int k = 0; k < 200; ++k) {
    const Vec3 r(uni(gen), uni(gen), uni(gen));
    const Vec3 u(uni(gen), uni(gen), uni(gen));
    const Real mu = 0.5 * (uni(gen) + 1.0);
    const PqnLinearisation lin = pqnLinearise(r, u, mu, 1e-12);
    EXPECT_LT((lin.c - naturalMapResidual(r, u, mu)).norm(), 1e-9) << k;
  }
  // Frictionless: C = r - max(r_N - u_N, 0) e_N - r_T.
  const PqnLinearisation lin = pqnLinearise(Vec3(1.0, 0.2, 0.3), Vec3(0.5, 1.0, 2.0), 0.0, 1e-12);
  EXPECT_LT((lin.c - Vec3(0.5, 0.2, 0.3)).norm(), 1e-9);
}

TEST(PqnLinearisation, DerivativesMatchFiniteDifferences) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<Real> uni(-1.0, 1.0);
  const Real h = 1e-6;
  for (int k = 0; k < 200; ++k) {
    const Vec3 r(uni(gen), uni(gen), uni(gen));
    const Vec3 u(uni(gen), uni(gen), uni(gen));
    const Real mu = k % 10 == 0 ? 0.0 : 0.8 * (uni(gen) + 1.0);
    const Real w = 0.05;
    const PqnLinearisation lin = pqnLinearise(r, u, mu, w);
    Mat3 dR;
    Mat3 dU;
    for (int j = 0; j < 3; ++j) {
      const Vec3 e = Vec3::Unit(j) * h;
      dR.col(j) = (pqnLinearise(r + e, u, mu, w).c - pqnLinearise(r - e, u, mu, w).c) / (2 * h);
      dU.col(j) = (pqnLinearise(r, u + e, mu, w).c - pqnLinearise(r, u - e, mu, w).c) / (2 * h);
    }
    EXPECT_LT((dR - lin.y).norm(), 1e-6) << k << " mu " << mu;
    EXPECT_LT((dU - lin.x).norm(), 1e-6) << k << " mu " << mu;
  }
}

TEST(PqnLinearisation, ZeroTangentialPartGivesScaledIdentity) {
  // z = R - F(U) with z_T = 0: Y = g'(l1 / w) I.
  const Real mu = 0.4, w = 0.1;
  const PqnLinearisation lin = pqnLinearise(Vec3(0.3, 0.0, 0.0), Vec3(0.5, 0.0, 0.0), mu, w);
  const Real l1 = 0.2 / (1.0 + mu * mu);  // z_N = -0.2
  const Real x = l1 / w;
  const Real gp = 0.5 * (1.0 + x / std::sqrt(x * x + 4.0));
  EXPECT_LT((lin.y - gp * Mat3::Identity()).norm(), 1e-14);
}

}  // namespace
}  // namespace grain
