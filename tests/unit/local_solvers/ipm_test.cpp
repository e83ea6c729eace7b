// SPDX-License-Identifier: MIT
// Interior point method for the convex relaxation: Lorentz-cone algebra (Nesterov-Todd scaling,
// steps to the boundary, projection Jacobian), the relaxed error measure and closed-form
// single-contact relaxed problems.
#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_ipm.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/prox.hpp>

#include "local_test_problems.hpp"

namespace grain {
namespace {

using testing::singleContact;

/// A random point of int L (x_0 > ||x_1||).
Vec3 randomInterior(std::mt19937& gen) {
  std::normal_distribution<Real> g(0.0, 1.0);
  std::uniform_real_distribution<Real> margin(1e-3, 2.0);
  const Vec3 a(0.0, g(gen), g(gen));
  return Vec3(a.norm() + margin(gen), a.y(), a.z());
}

TEST(IpmAlgebra, NesterovToddScalingMapsXAndYToTheSamePoint) {
  std::mt19937 gen(7);
  for (int k = 0; k < 1000; ++k) {
    const Vec3 x = randomInterior(gen);
    const Vec3 y = 3.0 * randomInterior(gen);
    const ipm::NtScaling s = ipm::ntScaling(x, y);
    const Mat3 g = s.matrix();
    const Mat3 gi = s.inverseMatrix();
    // G^-1 is the inverse of G, G is symmetric, and G^-1 x = G y = lambda in int L.
    EXPECT_LT((g * gi - Mat3::Identity()).norm(), 1e-12);
    EXPECT_LT((g - g.transpose()).norm(), 1e-14 * g.norm());
    const Real scale = s.lambda.norm();
    EXPECT_LT((gi * x - s.lambda).norm(), 1e-12 * scale);
    EXPECT_LT((g * y - s.lambda).norm(), 1e-12 * scale);
    EXPECT_GT(ipm::coneDet(s.lambda), 0.0);
    EXPECT_GT(s.lambda.x(), 0.0);
    // The scaling is an automorphism of L: det(G a) = beta^2 det(a), and the scaled
    // complementarity equals the original one: lambda . lambda = x . y.
    const Vec3 a = randomInterior(gen);
    EXPECT_NEAR(ipm::coneDet(s.apply(a)), s.beta * s.beta * ipm::coneDet(a),
                1e-10 * s.beta * s.beta * a.squaredNorm());
    EXPECT_NEAR(s.lambda.squaredNorm(), x.dot(y), 1e-12 * x.dot(y));
    // The inline products agree with the matrices.
    EXPECT_LT((s.apply(a) - g * a).norm(), 1e-13 * (g * a).norm() + 1e-15);
    EXPECT_LT((s.applyInverse(a) - gi * a).norm(), 1e-13 * (gi * a).norm() + 1e-15);
  }
}

TEST(IpmAlgebra, JordanProductAndArrowSolve) {
  const Vec3 x(3.0, 1.0, -2.0);
  const Vec3 y(2.0, 0.5, 1.0);
  // x o y = (x . y, x0 y1 + y0 x1) = (6 + 0.5 - 2, 3 (0.5, 1) + 2 (1, -2)).
  EXPECT_LT((ipm::jordanProduct(x, y) - Vec3(4.5, 3.5, -1.0)).norm(), 1e-15);
  EXPECT_LT((ipm::jordanProduct(Vec3(1, 0, 0), y) - y).norm(), 1e-15);
  const Vec3 d = ipm::arrowSolve(x, y);
  EXPECT_LT((ipm::jordanProduct(x, d) - y).norm(), 1e-14);
}

TEST(IpmAlgebra, MaxConeStepReachesTheBoundary) {
  std::mt19937 gen(11);
  std::normal_distribution<Real> g(0.0, 1.0);
  for (int k = 0; k < 1000; ++k) {
    const Vec3 x = randomInterior(gen);
    const Vec3 dx(g(gen), g(gen), g(gen));
    const Real t = ipm::maxConeStep(x, dx);
    if (!std::isfinite(t)) {
      // Then dx is in L: x + t dx stays in L for every t.
      EXPECT_GE(dx.x(), std::hypot(dx.y(), dx.z()) - 1e-12);
      continue;
    }
    ASSERT_GT(t, 0.0);
    const Vec3 b = x + t * dx;
    EXPECT_NEAR(b.x(), std::hypot(b.y(), b.z()), 1e-9 * (x.norm() + t * dx.norm()));
    EXPECT_GE(b.x(), -1e-12);
    const Vec3 inside = x + 0.99 * t * dx;
    EXPECT_GT(inside.x(), std::hypot(inside.y(), inside.z()));
  }
  // Along -e from e: the apex is reached at t = 1.
  EXPECT_DOUBLE_EQ(ipm::maxConeStep(Vec3(1, 0, 0), Vec3(-1, 0, 0)), 1.0);
  EXPECT_EQ(ipm::maxConeStep(Vec3(1, 0, 0), Vec3(1, 0.5, 0)),
            std::numeric_limits<Real>::infinity());
}

TEST(IpmAlgebra, ConeProjectionJacobianMatchesFiniteDifferences) {
  std::mt19937 gen(3);
  std::normal_distribution<Real> g(0.0, 1.0);
  for (const Real mu : {0.0, 0.3, 1.0, 2.5}) {
    for (int k = 0; k < 200; ++k) {
      const Vec3 z(g(gen), g(gen), g(gen));
      const Mat3 j = ipm::coneProjectionJacobian(z, mu);
      const Real h = 1e-7;
      for (int c = 0; c < 3; ++c) {
        Vec3 dz = Vec3::Zero();
        dz[c] = h;
        const Vec3 fd = (prox::projectCone(z + dz, mu) - prox::projectCone(z - dz, mu)) / (2 * h);
        EXPECT_LT((fd - j.col(c)).norm(), 1e-6) << "mu " << mu << " z " << z.transpose();
      }
    }
  }
}

TEST(ProxCone, FrictionlessConeProjectsNegativeNormalToZero) {
  // mu = 0: K_0 is the ray r_T = 0, r_N >= 0. A point with x_T = 0 and x_N < 0 lies in the polar
  // cone and projects onto 0 (0 <= mu x_N = -0 must not count as "inside").
  EXPECT_EQ(prox::projectCone(Vec3(-1.5, 0.0, 0.0), 0.0), Vec3::Zero());
  EXPECT_EQ(prox::projectCone(Vec3(2.0, 0.0, 0.0), 0.0), Vec3(2.0, 0.0, 0.0));
  EXPECT_EQ(prox::projectCone(Vec3(2.0, 1.0, -1.0), 0.0), Vec3(2.0, 0.0, 0.0));
  EXPECT_EQ(prox::projectCone(Vec3(-2.0, 1.0, -1.0), 0.0), Vec3::Zero());
  // A separated frictionless contact (r = 0, u_N > 0) satisfies the law: zero residual.
  EXPECT_EQ(naturalMapResidual(Vec3::Zero(), Vec3(1.0, 0.3, 0.0), 0.0), Vec3::Zero());
  EXPECT_EQ(relaxedResidual(Vec3::Zero(), Vec3(1.0, 0.3, 0.0), 0.0), Vec3::Zero());
}

LocalSolverSettings ipmSettings(Real tol) {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Ipm;
  s.tolerance = tol;
  return s;
}

TEST(RelaxedMeasure, DiffersFromTheNaturalMapOnlyBySliding) {
  // W = I, q = (-1, 2, 0), mu = 0.5. Coulomb solution: r = (1, -0.5, 0), u = (0, 1.5, 0).
  // Relaxed solution: r = P_K(-q) = (1.6, -0.8, 0), u = (0.6, 1.2, 0), u_N = mu |u_T|.
  const LocalProblem p = singleContact(1.0, 1.0, Vec3(-1.0, 2.0, 0.0), 0.5);
  const LocalErrorEvaluator ev(p);
  const VecX rC = Vec3(1.0, -0.5, 0.0);
  const VecX rR = Vec3(1.6, -0.8, 0.0);
  const VecX uC = localVelocity(p, rC);
  const VecX uR = localVelocity(p, rR);
  EXPECT_LT(ev.naturalMap(rC, uC), 1e-15);
  EXPECT_LT(ev.relaxed(rR, uR), 1e-15);
  EXPECT_GT(ev.naturalMap(rR, uR), 0.1);
  EXPECT_GT(ev.relaxed(rC, uC), 0.1);
  EXPECT_DOUBLE_EQ(ev.evaluate(LocalErrorMeasure::Relaxed, rC, uC), ev.relaxed(rC, uC));
  // At r = 0: e = r - P_K(-q) = -(1.6, -0.8, 0), scale max(|q|, 0, |q|) = sqrt(5).
  const VecX zero = VecX::Zero(3);
  EXPECT_NEAR(ev.relaxed(zero, p.q), std::sqrt(1.6 * 1.6 + 0.8 * 0.8) / std::sqrt(5.0), 1e-15);
  EXPECT_EQ(toString(LocalErrorMeasure::Relaxed), "relaxed");
}

TEST(IpmSolver, SlidingContactDilates) {
  const LocalProblem p = singleContact(1.0, 1.0, Vec3(-1.0, 2.0, 0.0), 0.5);
  const LocalSolverResult res = solve(p, ipmSettings(1e-12));
  ASSERT_TRUE(res.converged) << res.error;
  EXPECT_LT((Vec3(res.r) - Vec3(1.6, -0.8, 0.0)).norm(), 1e-10);
  EXPECT_LT((Vec3(res.u) - Vec3(0.6, 1.2, 0.0)).norm(), 1e-10);
  // The relaxation separates the sliding contact: u_N = mu |u_T| > 0.
  EXPECT_NEAR(res.u[0], 0.5 * std::abs(res.u[1]), 1e-10);
  const LocalErrorEvaluator ev(p);
  EXPECT_NEAR(res.error, ev.relaxed(res.r, res.u), 1e-15);
  EXPECT_GT(ev.naturalMap(res.r, res.u), 0.1);  // not a Coulomb solution
}

TEST(IpmSolver, SlidingContactAnisotropic) {
  // W = diag(kN, kT, kT): the relaxed solution minimises 1/2 r.W r + q.r on K_mu. On the
  // boundary r = l (1, -mu t^) with t^ = b / |b|: l = (a + mu |b|) / (kN + mu^2 kT).
  const Real kN = 2.0, kT = 5.0, mu = 0.3;
  const Vec3 q(-1.0, 1.2, 1.6);
  const LocalProblem p = singleContact(kN, kT, q, mu);
  const Real l = (1.0 + mu * 2.0) / (kN + mu * mu * kT);
  const Vec3 exact(l, -mu * l * 0.6, -mu * l * 0.8);
  const LocalSolverResult res = solve(p, ipmSettings(1e-12));
  ASSERT_TRUE(res.converged) << res.error;
  EXPECT_LT((Vec3(res.r) - exact).norm(), 1e-10);
  const Vec3 u = res.u;
  EXPECT_GT(u.x(), 0.0);
  EXPECT_NEAR(u.x(), mu * std::hypot(u.y(), u.z()), 1e-10);
}

TEST(IpmSolver, StickingContactIsTheCoulombSolution) {
  const Real kN = 2.0, kT = 5.0, mu = 0.5;
  const Vec3 q(-1.0, 0.3, -0.4);
  const LocalProblem p = singleContact(kN, kT, q, mu);
  const LocalSolverResult res = solve(p, ipmSettings(1e-12));
  ASSERT_TRUE(res.converged) << res.error;
  EXPECT_LT((Vec3(res.r) - Vec3(0.5, -0.06, 0.08)).norm(), 1e-10);
  EXPECT_LT(res.u.norm(), 1e-10);
  const LocalErrorEvaluator ev(p);
  EXPECT_LT(ev.naturalMap(res.r, res.u), 1e-10);
}

TEST(IpmSolver, SeparatingContact) {
  const LocalProblem p = singleContact(2.0, 3.0, Vec3(0.5, -0.2, 0.1), 0.3);
  const LocalSolverResult res = solve(p, ipmSettings(1e-12));
  ASSERT_TRUE(res.converged) << res.error;
  EXPECT_LT(res.r.norm(), 1e-12);
  EXPECT_LT((res.u - p.q).norm(), 1e-12);
}

TEST(IpmSolver, FrictionlessContact) {
  // mu = 0: r = (a / kN, 0, 0), u = (0, q_T).
  const LocalProblem p = singleContact(2.0, 3.0, Vec3(-1.0, 0.7, -0.2), 0.0);
  const LocalSolverResult res = solve(p, ipmSettings(1e-12));
  ASSERT_TRUE(res.converged) << res.error;
  EXPECT_LT((Vec3(res.r) - Vec3(0.5, 0.0, 0.0)).norm(), 1e-10);
  EXPECT_LT((Vec3(res.u) - Vec3(0.0, 0.7, -0.2)).norm(), 1e-10);
  const LocalErrorEvaluator ev(p);
  EXPECT_LT(ev.naturalMap(res.r, res.u), 1e-10);  // relaxed = Coulomb without friction
}

TEST(IpmSolver, RandomCoupledProblemsAgreeWithRelaxedApgd) {
  // Random W = A A^T + 0.1 I (SPD, dense 3n x 3n), mixed mu including 0: the relaxed problem
  // is strictly convex, so IPM and APGD on the relaxation find the same r.
  std::mt19937 gen(5);
  std::normal_distribution<Real> g(0.0, 1.0);
  std::uniform_real_distribution<Real> muDist(0.0, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    const int n = 6;
    Eigen::MatrixXd a(3 * n, 3 * n);
    for (int i = 0; i < 3 * n; ++i) {
      for (int j = 0; j < 3 * n; ++j) {
        a(i, j) = g(gen);
      }
    }
    const Eigen::MatrixXd w =
        a * a.transpose() / (3 * n) + 0.1 * Eigen::MatrixXd::Identity(3 * n, 3 * n);
    LocalProblem p;
    p.W = w.sparseView();
    p.q = VecX(3 * n);
    for (int i = 0; i < 3 * n; ++i) {
      p.q[i] = g(gen);
    }
    p.mu = VecX(n);
    for (int i = 0; i < n; ++i) {
      p.mu[i] = i == 0 ? 0.0 : muDist(gen);
    }
    const LocalSolverResult ipmRes = solve(p, ipmSettings(1e-12));
    ASSERT_TRUE(ipmRes.converged) << trial << " " << ipmRes.error;
    LocalSolverSettings s;
    s.method = LocalSolverMethod::Apgd;
    s.apgdDeSaxce = false;
    s.errorMeasure = LocalErrorMeasure::Relaxed;
    s.tolerance = 1e-12;
    s.maxIter = 200000;
    const LocalSolverResult apgd = solve(p, s);
    ASSERT_TRUE(apgd.converged) << trial << " " << apgd.error;
    EXPECT_LT((ipmRes.r - apgd.r).norm(), 1e-8 * apgd.r.norm()) << trial;
  }
}

TEST(IpmSolver, NonSymmetricWUsesLu) {
  // A slightly non-symmetric W (beyond the symmetry threshold) is solved with sparse LU.
  LocalProblem p = singleContact(2.0, 3.0, Vec3(-1.0, 0.3, -0.4), 0.5);
  p.W.coeffRef(0, 1) = 0.05;
  const LocalSolverResult res = solve(p, ipmSettings(1e-12));
  ASSERT_TRUE(res.converged) << res.error;
  const LocalErrorEvaluator ev(p);
  EXPECT_LE(ev.relaxed(res.r, res.u), 1e-12);
}

TEST(IpmSolver, SettingsAreValidated) {
  const LocalProblem p = singleContact(1.0, 1.0, Vec3(-1.0, 2.0, 0.0), 0.5);
  LocalSolverSettings s = ipmSettings(1e-8);
  s.ipmStepFraction = 1.0;
  EXPECT_THROW(solve(p, s), Error);
  s = ipmSettings(1e-8);
  s.ipmMaxIter = 0;
  EXPECT_THROW(solve(p, s), Error);
  s = ipmSettings(1e-8);
  s.ipmRegularization = -1.0;
  EXPECT_THROW(solve(p, s), Error);
  EXPECT_EQ(toString(LocalSolverMethod::Ipm), "ipm");
  EXPECT_EQ(localSolverMethodFromString("IPM"), LocalSolverMethod::Ipm);
}

}  // namespace
}  // namespace grain
