// SPDX-License-Identifier: MIT
// Local (Delassus) solvers and error measures against closed-form single-contact solutions and
// against each other on small random problems.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/block_sparse_matrix.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>

#include "local_test_problems.hpp"

namespace grain {
namespace {

using testing::singleContact;

struct Variant {
  LocalSolverMethod method;
  UcfSubMethod sub;
};

std::vector<Variant> allVariants() {
  std::vector<Variant> v;
  for (LocalSolverMethod m : {LocalSolverMethod::SorProx, LocalSolverMethod::JorProx,
                              LocalSolverMethod::Apgd, LocalSolverMethod::Pqn}) {
    for (UcfSubMethod s : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
      v.push_back({m, s});
    }
  }
  return v;
}

LocalSolverSettings settingsFor(const Variant& v, Real tol = 1e-12) {
  LocalSolverSettings s;
  s.method = v.method;
  s.subMethod = v.sub;
  s.tolerance = tol;
  s.maxIter = 20000;
  return s;
}

std::string name(const Variant& v) {
  return std::string(toString(v.method)) + (v.sub == UcfSubMethod::DeSaxce ? "/DS" : "/AC");
}

TEST(LocalSolver, SingleContactSeparating) {
  // q_N > 0: the contact opens, r = 0, u = q.
  const LocalProblem p = singleContact(2.0, 3.0, Vec3(0.5, -0.2, 0.1), 0.3);
  for (const Variant& v : allVariants()) {
    const LocalSolverResult res = solve(p, settingsFor(v));
    EXPECT_TRUE(res.converged) << name(v);
    EXPECT_NEAR(res.r.norm(), 0.0, 1e-12) << name(v);
    EXPECT_NEAR((res.u - p.q).norm(), 0.0, 1e-12) << name(v);
  }
}

TEST(LocalSolver, SingleContactSticking) {
  // q = (-a, b), |b| <= mu a kN / kT: u = 0, r = -W^-1 q inside the cone.
  const Real kN = 2.0, kT = 5.0, mu = 0.5;
  const Vec3 q(-1.0, 0.3, -0.4);  // |b| = 0.5 <= mu a kT/kN = 1.25
  const LocalProblem p = singleContact(kN, kT, q, mu);
  const Vec3 exact(1.0 / kN, -0.3 / kT, 0.4 / kT);
  for (const Variant& v : allVariants()) {
    const LocalSolverResult res = solve(p, settingsFor(v));
    EXPECT_TRUE(res.converged) << name(v);
    EXPECT_NEAR((Vec3(res.r) - exact).norm(), 0.0, 1e-9) << name(v);
    EXPECT_NEAR(res.u.norm(), 0.0, 1e-9) << name(v);
  }
}

TEST(LocalSolver, SingleContactSliding) {
  // q = (-a, b), |b| > mu a kT / kN: r_N = a / kN, r_T = -mu r_N b/|b|, u_N = 0,
  // u_T = b (1 - kT mu a / (kN |b|)).
  const Real kN = 2.0, kT = 5.0, mu = 0.3, a = 1.0;
  const Vec3 q(-a, 1.2, 1.6);  // |b| = 2 > mu a kT / kN = 0.75
  const LocalProblem p = singleContact(kN, kT, q, mu);
  const Real rN = a / kN;
  const Vec3 bHat(0.0, 0.6, 0.8);
  const Vec3 exactR = Vec3(rN, 0.0, 0.0) - mu * rN * bHat;
  const Vec3 exactU = (2.0 - kT * mu * a / kN) * bHat;
  for (const Variant& v : allVariants()) {
    const LocalSolverResult res = solve(p, settingsFor(v));
    EXPECT_TRUE(res.converged) << name(v);
    EXPECT_NEAR((Vec3(res.r) - exactR).norm(), 0.0, 1e-9) << name(v);
    EXPECT_NEAR((Vec3(res.u) - exactU).norm(), 0.0, 1e-9) << name(v);
  }
}

TEST(LocalErrorMeasures, ValuesAtZeroPercussion) {
  // r = 0, u = q = (-1, 0, 0): e = -(1, 0, 0); ||e|| = 1, scale max(|q|, |r|, |u|) = 1.
  const LocalProblem p = singleContact(2.0, 4.0, Vec3(-1.0, 0.0, 0.0), 0.4);
  const LocalErrorEvaluator ev(p);
  const VecX r = VecX::Zero(3);
  EXPECT_DOUBLE_EQ(ev.naturalMapAbsolute(r, p.q), 1.0);
  EXPECT_DOUBLE_EQ(ev.naturalMap(r, p.q), 1.0);
  EXPECT_DOUBLE_EQ(ev.naturalMapOverQ(r, p.q), 1.0);
  // Koziara: <W^-1 e, e> / <W^-1 q, q> = (1/2) / (1/2).
  EXPECT_DOUBLE_EQ(ev.koziara(r, p.q), 1.0);
}

TEST(LocalErrorMeasures, KoziaraWeightsByInverseDiagonalBlock) {
  // Two decoupled contacts; only the second one violates the law: e_2 = (-1, 0, 0) (r = 0,
  // u_2 = (-1, 0, 0)), so g = (1/k2) / (<q1, q1>/k1 + 1/k2).
  LocalProblem p;
  p.W.resize(6, 6);
  const Real k1 = 4.0, k2 = 0.5;
  for (int d = 0; d < 3; ++d) {
    p.W.insert(d, d) = k1;
    p.W.insert(3 + d, 3 + d) = k2;
  }
  p.q.resize(6);
  p.q << 2.0, 0.0, 0.0, -1.0, 0.0, 0.0;  // contact 1 separates (r = 0 is right there)
  p.mu = VecX::Constant(2, 0.5);
  const LocalErrorEvaluator ev(p);
  const VecX r = VecX::Zero(6);
  EXPECT_NEAR(ev.koziara(r, p.q), (1.0 / k2) / (4.0 / k1 + 1.0 / k2), 1e-15);
  EXPECT_NEAR(ev.naturalMap(r, p.q), 1.0 / std::sqrt(5.0), 1e-15);
}

TEST(LocalErrorMeasures, ResidualVanishesOnTheLaw) {
  const Real mu = 0.6;
  // Sticking, sliding, separated and a sliding contact in the cone's boundary.
  EXPECT_NEAR(naturalMapResidual(Vec3(1.0, 0.2, 0.1), Vec3::Zero(), mu).norm(), 0.0, 1e-15);
  const Vec3 uT(0.0, 0.3, -0.4);
  const Vec3 rSlide = Vec3(2.0, 0.0, 0.0) - mu * 2.0 * uT / uT.norm();
  EXPECT_NEAR(naturalMapResidual(rSlide, uT, mu).norm(), 0.0, 1e-15);
  EXPECT_NEAR(naturalMapResidual(Vec3::Zero(), Vec3(0.5, 1.0, 2.0), mu).norm(), 0.0, 1e-15);
  // Wrong direction of friction: non-zero.
  EXPECT_GT(naturalMapResidual(Vec3(2.0, 0.0, 0.0) + mu * 2.0 * uT / uT.norm(), uT, mu).norm(),
            0.1);
}

/// Random mechanical problem: W = H^T M^-1 H with 6 dofs per body and random contacts.
LocalProblem randomProblem(std::uint32_t seed, int bodies, int contacts, Real mu) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<Real> uni(-1.0, 1.0);
  std::uniform_int_distribution<int> pick(0, bodies - 1);
  const int dofs = 6 * bodies;
  Eigen::MatrixXd h = Eigen::MatrixXd::Zero(dofs, 3 * contacts);
  for (int c = 0; c < contacts; ++c) {
    const int a = pick(gen);
    int b = pick(gen);
    if (b == a) {
      b = (a + 1) % bodies;
    }
    for (int col = 0; col < 3; ++col) {
      for (int d = 0; d < 6; ++d) {
        h(6 * a + d, 3 * c + col) = uni(gen);
        h(6 * b + d, 3 * c + col) = -uni(gen);
      }
    }
  }
  VecX minv(dofs);
  for (int d = 0; d < dofs; ++d) {
    minv[d] = 0.5 + 0.5 * (uni(gen) + 1.0);
  }
  const Eigen::MatrixXd w = h.transpose() * minv.asDiagonal() * h;
  LocalProblem p;
  p.W = w.sparseView();
  p.q.resize(3 * contacts);
  for (int c = 0; c < contacts; ++c) {
    p.q[3 * c] = -0.5 + 0.8 * uni(gen);  // mostly approaching
    p.q[3 * c + 1] = uni(gen);
    p.q[3 * c + 2] = uni(gen);
  }
  p.mu = VecX::Constant(contacts, mu);
  return p;
}

TEST(LocalSolver, AllMethodsAgreeOnRandomProblems) {
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    const LocalProblem p = randomProblem(seed, 6, 8, 0.4);  // 36 dofs > 24 unknowns: W > 0
    LocalSolverSettings ref =
        settingsFor({LocalSolverMethod::SorProx, UcfSubMethod::AlartCurnier}, 1e-13);
    ref.maxIter = 200000;
    const LocalSolverResult sor = solve(p, ref);
    ASSERT_TRUE(sor.converged) << seed << " error " << sor.error;
    for (const Variant& v : allVariants()) {
      LocalSolverSettings s = settingsFor(v, 1e-11);
      s.maxIter = 200000;
      const LocalSolverResult res = solve(p, s);
      EXPECT_TRUE(res.converged) << name(v) << " seed " << seed << " error " << res.error;
      // W is positive definite here, so r is unique.
      EXPECT_LT((res.r - sor.r).norm(), 1e-7 * sor.r.norm()) << name(v) << " seed " << seed;
      EXPECT_LT((res.u - localVelocity(p, res.r)).norm(), 1e-12) << name(v);
      if (v.method == LocalSolverMethod::Pqn) {
        EXPECT_EQ(res.fallbackIterations, 0u) << name(v) << " seed " << seed;
      }
    }
  }
}

TEST(LocalSolver, PqnVariantsConverge) {
  // Sparse-LU Newton systems, SOR warm start, and Koziara's constant delta without backtracking
  // on a problem where it does not cycle.
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    const LocalProblem p = randomProblem(seed, 6, 8, 0.4);
    LocalSolverSettings ref;
    ref.tolerance = 1e-13;
    const LocalSolverResult sor = solve(p, ref);
    ASSERT_TRUE(sor.converged);
    LocalSolverSettings s;
    s.method = LocalSolverMethod::Pqn;
    s.tolerance = 1e-11;
    s.pqnDirectSolve = true;
    LocalSolverResult res = solve(p, s);
    EXPECT_TRUE(res.converged) << seed;
    EXPECT_EQ(res.fallbackIterations, 0u) << seed;
    EXPECT_LT((res.r - sor.r).norm(), 1e-7 * sor.r.norm()) << seed;
    s.pqnDirectSolve = false;
    s.pqnWarmStartTolerance = 1e-4;
    res = solve(p, s);
    EXPECT_TRUE(res.converged) << seed;
    EXPECT_GT(res.warmStartIterations, 0u) << seed;
    EXPECT_GT(res.iterations, res.warmStartIterations) << seed;
    EXPECT_LT((res.r - sor.r).norm(), 1e-7 * sor.r.norm()) << seed;
  }
  const LocalProblem p = randomProblem(1, 6, 8, 0.4);
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Pqn;
  s.tolerance = 1e-11;
  s.pqnBacktracking = false;
  s.pqnDeltaContinuation = false;
  const LocalSolverResult res = solve(p, s);
  EXPECT_TRUE(res.converged);
}

// pqnScaling: the Newton variable is rho R with rho = mean diag W, so that the Newton steps do not
// depend on the unit of R. The problem with W scaled by a (the same bodies a times lighter, or R
// in other units) has the solution r / a; without backtracking (whose test on the error measure
// depends on the unit) PQN takes the same iterates, r_k / a, and so the same Newton step count.
// Unscaled, the iteration on the light problem has the Newton model of the original one only
// within |U| ~ |R| (local_pqn.hpp).
TEST(LocalSolver, PqnStepsDoNotDependOnTheUnitOfR) {
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    const LocalProblem p = randomProblem(seed, 6, 8, 0.4);
    LocalSolverSettings s;
    s.method = LocalSolverMethod::Pqn;
    s.tolerance = 1e-10;
    s.pqnBacktracking = false;
    const LocalSolverResult ref = solve(p, s);
    ASSERT_TRUE(ref.converged) << seed;
    ASSERT_EQ(ref.fallbackIterations, 0u) << seed;
    for (const Real a : {1e-3, 1e3}) {
      LocalProblem light = p;
      light.W *= a;
      const LocalSolverResult res = solve(light, s);
      EXPECT_TRUE(res.converged) << seed << " a " << a;
      EXPECT_EQ(res.fallbackIterations, 0u) << seed << " a " << a;
      // The same iterates; the stop tests on the two units' error measures part by up to 3 steps
      // (the measure is not unit-free, and the final convergence is superlinear).
      EXPECT_NEAR(static_cast<Real>(res.iterations), static_cast<Real>(ref.iterations), 3.0)
          << seed << " a " << a;
      EXPECT_LT((a * res.r - ref.r).norm(), 1e-7 * ref.r.norm()) << seed << " a " << a;
    }
  }
}

TEST(LocalSolver, KoziaraMeasureAsStoppingTest) {
  const LocalProblem p = randomProblem(7, 5, 6, 0.3);
  LocalSolverSettings s;
  s.errorMeasure = LocalErrorMeasure::Koziara;
  s.tolerance = 1e-10;
  const LocalSolverResult res = solve(p, s);
  EXPECT_TRUE(res.converged);
  const LocalErrorEvaluator ev(p);
  EXPECT_NEAR(res.error, ev.koziara(res.r, res.u), 1e-20);
  EXPECT_LE(ev.koziara(res.r, res.u), 1e-10);
}

TEST(LocalSolver, ErrorCheckModesGiveConvergedResults) {
  const LocalProblem p = randomProblem(11, 6, 8, 0.5);
  LocalSolverSettings s;
  s.tolerance = 1e-9;
  for (ErrorCheck mode : {ErrorCheck::Every, ErrorCheck::Adaptive}) {
    s.errorCheck = mode;
    const LocalSolverResult res = solve(p, s);
    EXPECT_TRUE(res.converged);
    EXPECT_LE(res.error, 1e-9);
    const LocalErrorEvaluator ev(p);
    EXPECT_NEAR(res.error, ev.naturalMap(res.r, res.u), 1e-18);
  }
  s.errorCheck = ErrorCheck::Every;
  s.errorCheckPeriod = 7;
  const LocalSolverResult res = solve(p, s);
  EXPECT_TRUE(res.converged);
  EXPECT_EQ(res.iterations % 7, 0u);
}

TEST(LocalSolver, InitialGuessAtSolutionConvergesAtOnce) {
  const LocalProblem p = randomProblem(5, 6, 8, 0.5);
  LocalSolverSettings s;
  s.tolerance = 1e-12;
  const LocalSolverResult first = solve(p, s);
  ASSERT_TRUE(first.converged);
  for (const Variant& v : allVariants()) {
    const LocalSolverResult again = solve(p, settingsFor(v), &first.r);
    EXPECT_TRUE(again.converged) << name(v);
    EXPECT_EQ(again.iterations, 0u) << name(v);
  }
}

TEST(LocalSolver, MaxIterStopsAndReportsTheReturnedIterate) {
  const LocalProblem p = randomProblem(3, 6, 8, 0.5);
  LocalSolverSettings s;
  s.tolerance = 0.0;
  s.maxIter = 5;
  s.errorCheck = ErrorCheck::Every;
  const LocalSolverResult res = solve(p, s);
  EXPECT_FALSE(res.converged);
  EXPECT_EQ(res.iterations, 5u);
  const LocalErrorEvaluator ev(p);
  EXPECT_NEAR(res.error, ev.naturalMap(res.r, res.u), 1e-18);
  EXPECT_GT(res.error, 0.0);
}

TEST(LocalSolver, RejectsInvalidInput) {
  LocalProblem p = singleContact(1.0, 1.0, Vec3(-1.0, 0.0, 0.0), 0.3);
  p.mu[0] = -0.1;
  EXPECT_THROW(solve(p, LocalSolverSettings{}), Error);
  p.mu[0] = 0.3;
  p.q.resize(4);
  EXPECT_THROW(solve(p, LocalSolverSettings{}), Error);
  LocalSolverSettings s;
  s.alphaSor = 2.0;
  EXPECT_THROW(validate(s), Error);
}

TEST(LocalSolver, MethodNames) {
  for (LocalSolverMethod m : {LocalSolverMethod::SorProx, LocalSolverMethod::JorProx,
                              LocalSolverMethod::Apgd, LocalSolverMethod::Pqn}) {
    EXPECT_EQ(localSolverMethodFromString(toString(m)), m);
  }
  EXPECT_EQ(localSolverMethodFromString("NSGS"), LocalSolverMethod::SorProx);
  EXPECT_FALSE(localSolverMethodFromString("newton").has_value());
}

TEST(BlockSparseMatrix3, MatchesSparseProduct) {
  const LocalProblem p = randomProblem(2, 4, 7, 0.3);
  SparseMat w = p.W;
  w.coeffRef(4, 17) += 0.25;  // make it unsymmetric
  const BlockSparseMatrix3 b(w);
  EXPECT_EQ(b.blockRows(), 7u);
  VecX x = VecX::LinSpaced(21, -1.0, 2.0);
  VecX y;
  b.multiply(x, y);
  EXPECT_LT((y - w * x).norm(), 1e-13);
  const Eigen::MatrixXd dense(w);
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(b.diagonalBlock(i), Mat3(dense.block<3, 3>(3 * i, 3 * i)));
  }
}

}  // namespace
}  // namespace grain
