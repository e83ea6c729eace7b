// SPDX-License-Identifier: MIT
// The entry of the local solvers, solve(): the allocation-free SOR path of small problems (same
// sweeps as the general path, exact velocity), solving into a caller-owned result, and the
// validation messages it reports.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>

#include "local_test_problems.hpp"

namespace grain {
namespace {

using testing::settingsFor;

LocalProblem randomDense(std::uint32_t seed, int contacts, int dofs) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<Real> uni(-1.0, 1.0);
  Eigen::MatrixXd h(dofs, 3 * contacts);
  for (int i = 0; i < h.rows(); ++i) {
    for (int j = 0; j < h.cols(); ++j) {
      h(i, j) = uni(gen);
    }
  }
  const Eigen::MatrixXd w = h.transpose() * h / dofs;
  LocalProblem p;
  p.W = w.sparseView();
  p.q.resize(3 * contacts);
  for (int c = 0; c < contacts; ++c) {
    p.q.segment<3>(3 * c) = Vec3(-0.5 + 0.8 * uni(gen), uni(gen), uni(gen));
  }
  p.mu = VecX::Constant(contacts, 0.4);
  return p;
}

TEST(SmallSor, SameSweepsAsTheGeneralPath) {
  // Problems of at most 64 contacts with the adaptive test take the small path (column
  // updates, error after every sweep); ErrorCheck::Every takes the general one. With the
  // tolerance 0 both run exactly maxIter sweeps.
  const LocalProblem p3 = randomDense(7, 6, 24);
  // Planar: 2-D problem embedded (the small path then works without square roots).
  LocalProblem p2d = randomDense(8, 5, 15);
  SparseMat w2(10, 10);
  VecX q2(10);
  for (int a = 0; a < 10; ++a) {
    q2[a] = p2d.q[3 * (a / 2) + a % 2];
    for (int b = 0; b < 10; ++b) {
      w2.insert(a, b) = p2d.W.coeff(3 * (a / 2) + a % 2, 3 * (b / 2) + b % 2);
    }
  }
  const LocalProblem p2 = embedPlanarProblem(w2, q2, p2d.mu);
  for (const LocalProblem* p : {&p3, &p2}) {
    for (UcfSubMethod sub : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
      LocalSolverSettings s = settingsFor(LocalSolverMethod::SorProx, 0.0);
      s.subMethod = sub;
      s.maxIter = 7;
      const LocalSolverResult small = solve(*p, s);
      s.errorCheck = ErrorCheck::Every;
      const LocalSolverResult general = solve(*p, s);
      EXPECT_EQ(small.iterations, 7u);
      EXPECT_EQ(general.iterations, 7u);
      EXPECT_LT((small.r - general.r).norm(), 1e-13 * general.r.norm()) << p->spaceDim;
      EXPECT_LT((small.u - general.u).norm(), 1e-13 * general.u.norm()) << p->spaceDim;
      EXPECT_NEAR(small.error, general.error, 1e-12 * general.error) << p->spaceDim;
      if (p->spaceDim == 2) {
        for (Eigen::Index i = 0; i < 5; ++i) {
          EXPECT_EQ(small.r[3 * i + 2], 0.0);
        }
      }
      // And to convergence: both reach the tolerance.
      s.tolerance = 1e-12;
      s.maxIter = 100000;
      s.errorCheck = ErrorCheck::Adaptive;
      const LocalSolverResult done = solve(*p, s);
      EXPECT_TRUE(done.converged);
      const LocalErrorEvaluator ev(*p);
      EXPECT_NEAR(done.error, ev.naturalMap(done.r, done.u), 1e-18);
      EXPECT_LT((done.u - localVelocity(*p, done.r)).norm(), 1e-14 * done.u.norm());
    }
  }
}

TEST(SmallSor, OneSweepFromZeroReturnsTheExactVelocity) {
  // After one sweep from r = 0 the small path returns the column-updated u without recomputing
  // it: it must be W r + q added column by column (bitwise), and the error that of (r, u).
  const LocalProblem p3 = randomDense(11, 6, 24);
  LocalProblem p2d = randomDense(12, 5, 15);
  SparseMat w2(10, 10);
  VecX q2(10);
  for (int a = 0; a < 10; ++a) {
    q2[a] = p2d.q[3 * (a / 2) + a % 2];
    for (int b = 0; b < 10; ++b) {
      w2.insert(a, b) = p2d.W.coeff(3 * (a / 2) + a % 2, 3 * (b / 2) + b % 2);
    }
  }
  w2.makeCompressed();
  const LocalProblem p2 = embedPlanarProblem(w2, q2, p2d.mu);
  for (const LocalProblem* p : {&p3, &p2}) {
    for (UcfSubMethod sub : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
      LocalSolverSettings s = settingsFor(LocalSolverMethod::SorProx, 0.0);
      s.subMethod = sub;
      s.maxIter = 1;
      const LocalSolverResult one = solve(*p, s);
      ASSERT_EQ(one.iterations, 1u);
      ASSERT_GT(one.r.norm(), 0.0);
      VecX u = p->q;
      for (Eigen::Index c = 0; c < p->W.outerSize(); ++c) {
        for (SparseMat::InnerIterator it(p->W, c); it; ++it) {
          u[it.row()] += it.value() * one.r[c];
        }
      }
      for (Eigen::Index k = 0; k < u.size(); ++k) {
        EXPECT_EQ(one.u[k], u[k]) << p->spaceDim << " " << k;
      }
      const LocalErrorEvaluator ev(*p);
      EXPECT_NEAR(one.error, ev.naturalMap(one.r, one.u), 1e-13 * one.error);
    }
  }
}

TEST(LocalProblemValidate, RejectsNonFiniteEntries) {
  LocalProblem p = randomDense(13, 3, 9);
  EXPECT_NO_THROW(validate(p));
  LocalProblem bad = p;
  bad.W.coeffRef(4, 5) = std::numeric_limits<Real>::quiet_NaN();
  EXPECT_THROW(validate(bad), Error);
  bad = p;
  bad.W.coeffRef(8, 8) = std::numeric_limits<Real>::infinity();
  EXPECT_THROW(validate(bad), Error);
  bad = p;
  bad.q[7] = -std::numeric_limits<Real>::infinity();
  EXPECT_THROW(validate(bad), Error);
  bad = p;
  bad.mu[2] = std::numeric_limits<Real>::quiet_NaN();
  EXPECT_THROW(validate(bad), Error);
  bad = p;
  bad.mu[1] = -0.1;
  EXPECT_THROW(validate(bad), Error);
  bad = p;
  bad.W.uncompress();
  EXPECT_NO_THROW(validate(bad));
  bad.W.coeffRef(2, 6) = std::numeric_limits<Real>::quiet_NaN();
  EXPECT_THROW(validate(bad), Error);
}

/// The message of the grain::Error thrown by f, or "" if none.
template <class F>
std::string errorMessage(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

LocalProblem planarRandom(std::uint32_t seed, int contacts, int dofs) {
  const LocalProblem p = randomDense(seed, contacts, dofs);
  const int m = 2 * contacts;
  SparseMat w2(m, m);
  VecX q2(m);
  for (int a = 0; a < m; ++a) {
    q2[a] = p.q[3 * (a / 2) + a % 2];
    for (int b = 0; b < m; ++b) {
      w2.insert(a, b) = p.W.coeff(3 * (a / 2) + a % 2, 3 * (b / 2) + b % 2);
    }
  }
  w2.makeCompressed();
  return embedPlanarProblem(w2, q2, p.mu);
}

TEST(LocalSolveInto, ReusedResultEqualsAFreshOne) {
  // One result object through problems of changing sizes and paths (small SOR path, general
  // path above 64 contacts or with ErrorCheck::Every, separating r = 0, initial guess): every
  // field equals that of a fresh solve, bitwise.
  LocalProblem separating = randomDense(24, 4, 12);
  for (Eigen::Index i = 0; i < 4; ++i) {
    separating.q[3 * i] = std::abs(separating.q[3 * i]) + 0.1;
  }
  const std::vector<LocalProblem> problems = {randomDense(21, 6, 24),
                                              randomDense(22, 3, 9),
                                              planarRandom(23, 5, 15),
                                              randomDense(25, 70, 240),
                                              separating,
                                              randomDense(26, 6, 24)};
  LocalSolverResult reused;
  reused.iterations = 99;
  reused.error = -1.0;
  reused.finite = false;
  for (const LocalProblem& p : problems) {
    for (ErrorCheck check : {ErrorCheck::Adaptive, ErrorCheck::Every}) {
      for (UcfSubMethod sub : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
        LocalSolverSettings s = settingsFor(LocalSolverMethod::SorProx, 1e-10);
        s.errorCheck = check;
        s.subMethod = sub;
        const VecX guess = VecX::Constant(p.q.size(), 0.01);
        for (const VecX* g : {static_cast<const VecX*>(nullptr), &guess}) {
          const LocalSolverResult fresh = solve(p, s, g);
          solve(p, s, g, reused);
          ASSERT_EQ(reused.r.size(), fresh.r.size());
          ASSERT_EQ(reused.u.size(), fresh.u.size());
          for (Eigen::Index k = 0; k < fresh.r.size(); ++k) {
            EXPECT_EQ(reused.r[k], fresh.r[k]) << p.contactCount() << " " << k;
            EXPECT_EQ(reused.u[k], fresh.u[k]) << p.contactCount() << " " << k;
          }
          EXPECT_EQ(reused.error, fresh.error) << p.contactCount();
          EXPECT_EQ(reused.iterations, fresh.iterations) << p.contactCount();
          EXPECT_EQ(reused.fallbackIterations, fresh.fallbackIterations);
          EXPECT_EQ(reused.warmStartIterations, fresh.warmStartIterations);
          EXPECT_EQ(reused.polishSteps, fresh.polishSteps);
          EXPECT_EQ(reused.converged, fresh.converged);
          EXPECT_EQ(reused.finite, fresh.finite);
          EXPECT_TRUE(fresh.converged) << p.contactCount();
        }
      }
    }
  }
  // Same size on the small path: the storage of r and u is kept.
  const LocalProblem& p = problems[0];
  const LocalSolverSettings s = settingsFor(LocalSolverMethod::SorProx, 1e-10);
  solve(p, s, nullptr, reused);
  const Real* rData = reused.r.data();
  const Real* uData = reused.u.data();
  solve(problems[5], s, nullptr, reused);
  EXPECT_EQ(reused.r.data(), rData);
  EXPECT_EQ(reused.u.data(), uData);
  EXPECT_TRUE(reused.converged);
}

TEST(LocalSolveInto, WarmStartFromTheResultsOwnR) {
  // initialGuess = &result.r: the guess must be read before result.r is overwritten.
  for (const LocalProblem& p : {randomDense(41, 6, 24), randomDense(42, 70, 240)}) {
    LocalSolverSettings s = settingsFor(LocalSolverMethod::SorProx, 1e-6);
    LocalSolverResult reused = solve(p, s);
    const VecX guess = reused.r;
    s.tolerance = 1e-12;
    const LocalSolverResult fresh = solve(p, s, &guess);
    solve(p, s, &reused.r, reused);
    EXPECT_EQ(reused.iterations, fresh.iterations) << p.contactCount();
    EXPECT_EQ(reused.error, fresh.error) << p.contactCount();
    ASSERT_EQ(reused.r.size(), fresh.r.size());
    EXPECT_EQ((reused.r - fresh.r).cwiseAbs().maxCoeff(), 0.0) << p.contactCount();
    EXPECT_EQ((reused.u - fresh.u).cwiseAbs().maxCoeff(), 0.0) << p.contactCount();
    // The warm start saves sweeps against a cold start.
    EXPECT_LT(fresh.iterations, solve(p, s).iterations) << p.contactCount();
  }
}

TEST(LocalSolveValidate, SolveReportsTheMessagesOfValidate) {
  // solve() checks W for NaN and Inf in its own scan on the small SOR path: every path must
  // still report what validate(problem) and then validate(settings) report, in that order.
  const LocalProblem good = randomDense(31, 4, 12);
  LocalProblem separating = good;
  for (Eigen::Index i = 0; i < 4; ++i) {
    separating.q[3 * i] = std::abs(separating.q[3 * i]) + 0.1;
  }
  const Real nan = std::numeric_limits<Real>::quiet_NaN();
  const Real inf = std::numeric_limits<Real>::infinity();
  std::vector<LocalProblem> bad;
  const std::vector<const LocalProblem*> bases = {&good, &separating};
  for (const LocalProblem* base : bases) {
    LocalProblem b = *base;
    b.W.coeffRef(4, 5) = nan;
    bad.push_back(b);
    b = *base;
    b.W.coeffRef(7, 7) = inf;
    bad.push_back(b);
    b = *base;
    b.W.coeffRef(0, 0) = std::numeric_limits<Real>::max();  // finite entries, infinite sum
    b.W.coeffRef(3, 3) = std::numeric_limits<Real>::max();
    bad.push_back(b);
    b = *base;
    b.q[7] = -inf;
    bad.push_back(b);
    b = *base;
    b.q[1] = 1e200;  // finite q, infinite |q|
    bad.push_back(b);
    b = *base;
    b.mu[2] = nan;
    bad.push_back(b);
    b = *base;
    b.mu[1] = inf;
    bad.push_back(b);
    b = *base;
    b.mu[3] = -0.1;
    bad.push_back(b);
    b = *base;
    b.q.conservativeResize(11);
    bad.push_back(b);
    b = *base;
    b.spaceDim = 4;
    bad.push_back(b);
    b = *base;
    b.W.coeffRef(4, 5) = nan;
    b.mu[0] = -1.0;  // mu is checked before W
    bad.push_back(b);
  }
  LocalSolverSettings badSettings = settingsFor(LocalSolverMethod::SorProx, 1e-8);
  badSettings.alphaSor = 2.5;
  int thrown = 0;
  for (const LocalProblem& p : bad) {
    const std::string expected = errorMessage([&] { validate(p); });
    thrown += expected.empty() ? 0 : 1;
    const std::string expectedBoth =
        expected.empty() ? errorMessage([&] { validate(badSettings); }) : expected;
    for (ErrorCheck check : {ErrorCheck::Adaptive, ErrorCheck::Every}) {
      for (UcfSubMethod sub : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
        LocalSolverSettings s = settingsFor(LocalSolverMethod::SorProx, 1e-8);
        s.errorCheck = check;
        s.subMethod = sub;
        EXPECT_EQ(errorMessage([&] { solve(p, s); }), expected) << expected;
        LocalSolverResult reused;
        EXPECT_EQ(errorMessage([&] { solve(p, s, nullptr, reused); }), expected) << expected;
        badSettings.errorCheck = check;
        badSettings.subMethod = sub;
        EXPECT_EQ(errorMessage([&] { solve(p, badSettings); }), expectedBoth) << expected;
      }
    }
  }
  EXPECT_EQ(thrown, 18);  // all but the two large-but-finite cases of each base
  EXPECT_EQ(errorMessage([&] { validate(bad[0]); }), "LocalProblem: W has a NaN or Inf entry");
  // Valid problem, invalid settings or guess: the messages of validate(settings) and the guess.
  EXPECT_EQ(errorMessage([&] { solve(good, badSettings); }),
            errorMessage([&] { validate(badSettings); }));
  const VecX shortGuess = VecX::Zero(5);
  const LocalSolverSettings s = settingsFor(LocalSolverMethod::SorProx, 1e-8);
  EXPECT_EQ(errorMessage([&] { solve(good, s, &shortGuess); }),
            "initial guess must have 3n = 12 entries, got 5");
}

}  // namespace
}  // namespace grain
