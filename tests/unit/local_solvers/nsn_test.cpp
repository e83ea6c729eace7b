// SPDX-License-Identifier: MIT
// Alart-Curnier semismooth Newton (nsn) and its proximal-point variant (prox): the function at
// closed-form solutions, its Jacobian against finite differences, convergence on closed-form and
// FCLIB problems, and the early return of separating problems.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_nsn.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>

#ifdef GRAIN_TEST_WITH_FCLIB
#include <grain/fclib/fclib_io.hpp>
#endif

#include "../../common/test_util.hpp"
#include "local_test_problems.hpp"

namespace grain {
namespace {

using testing::singleContact;

LocalSolverSettings settings(LocalSolverMethod m, Real tol) {
  LocalSolverSettings s;
  s.method = m;
  s.tolerance = tol;
  return s;
}

const std::vector<LocalSolverMethod> kNewton = {LocalSolverMethod::Nsn, LocalSolverMethod::NsnProx};

// W = diag(1, 2, 2), q = (-1, 2, 0), mu = 0.5: u_N = r_N - 1 = 0 gives r_N = 1; sticking would
// need r_T = -q_T / 2 = (-1, 0), outside the disk of radius mu r_N = 0.5, so the contact slides:
// r_T = -0.5 (1, 0), u_T = 2 r_T + q_T = (1, 0), opposite to r_T.
const Vec3 kSlideQ(-1.0, 2.0, 0.0);
const Vec3 kSlideR(1.0, -0.5, 0.0);
const Vec3 kSlideU(0.0, 1.0, 0.0);
// Same W and mu with q = (-1, 0.5, 0): r_T = -q_T / 2 = (-0.25, 0) lies inside the disk: stick,
// u = 0.
const Vec3 kStickQ(-1.0, 0.5, 0.0);
const Vec3 kStickR(1.0, -0.25, 0.0);

TEST(AlartCurnierFunction, VanishesAtClosedFormSolutions) {
  const Real mu = 0.5;
  for (Real rhoN : {0.1, 1.0, 3.0}) {
    for (Real rhoT : {0.2, 0.5, 2.0}) {
      EXPECT_LT(alartCurnierLinearise(kSlideR, kSlideU, mu, rhoN, rhoT).phi.norm(), 1e-15);
      EXPECT_LT(alartCurnierLinearise(kStickR, Vec3::Zero(), mu, rhoN, rhoT).phi.norm(), 1e-15);
      // Separation: r = 0, u = (0.3, 1, -2).
      EXPECT_LT(
          alartCurnierLinearise(Vec3::Zero(), Vec3(0.3, 1.0, -2.0), mu, rhoN, rhoT).phi.norm(),
          1e-15);
    }
  }
  // Not a solution: a percussion inside the cone with a sliding velocity. x_T = -0.25 - 0.5 * 1
  // lies outside the disk of radius 0.5, so Phi_T = -0.25 - (-0.5) = 0.25.
  EXPECT_NEAR(alartCurnierLinearise(kStickR, kSlideU, mu, 1.0, 0.5).phi.y(), 0.25, 1e-15);
  // Phi = r - P(r - rho u) exactly, e.g. r = 0, u = (-1, 0, 0), rho_N = 2: Phi_N = -2.
  EXPECT_NEAR(alartCurnierLinearise(Vec3::Zero(), Vec3(-1.0, 0.0, 0.0), mu, 2.0, 1.0).phi.x(), -2.0,
              1e-15);
}

TEST(AlartCurnierFunction, JacobianMatchesFiniteDifferencesAwayFromKinks) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<Real> uni(-1.0, 1.0);
  const Real h = 1e-7;
  int tested = 0;
  for (int k = 0; k < 400; ++k) {
    const Vec3 r(uni(gen), uni(gen), uni(gen));
    const Vec3 u(uni(gen), uni(gen), uni(gen));
    const Real mu = k % 10 == 0 ? 0.0 : 0.8 * (uni(gen) + 1.0);
    const Real rhoN = 1.0 + uni(gen) * 0.5;
    const Real rhoT = 1.0 + uni(gen) * 0.5;
    const Vec3 x = r - Vec3(rhoN, rhoT, rhoT).cwiseProduct(u);
    const Real nT = std::hypot(x.y(), x.z());
    if (std::abs(x.x()) < 1e-3 || std::abs(nT - mu * std::max(x.x(), 0.0)) < 1e-3) {
      continue;  // on or near a kink: no derivative
    }
    ++tested;
    const NsnLinearisation lin = alartCurnierLinearise(r, u, mu, rhoN, rhoT);
    Mat3 dR;
    Mat3 dU;
    for (int j = 0; j < 3; ++j) {
      const Vec3 e = Vec3::Unit(j) * h;
      dR.col(j) = (alartCurnierLinearise(r + e, u, mu, rhoN, rhoT).phi -
                   alartCurnierLinearise(r - e, u, mu, rhoN, rhoT).phi) /
                  (2 * h);
      dU.col(j) = (alartCurnierLinearise(r, u + e, mu, rhoN, rhoT).phi -
                   alartCurnierLinearise(r, u - e, mu, rhoN, rhoT).phi) /
                  (2 * h);
    }
    EXPECT_LT((dR - lin.dPhiDr).norm(), 1e-6) << k;
    EXPECT_LT((dU - lin.dPhiDu).norm(), 1e-6) << k;
  }
  EXPECT_GT(tested, 200);
}

TEST(NsnSolver, SingleContactSlidingAndSticking) {
  for (LocalSolverMethod m : kNewton) {
    const LocalSolverResult slide =
        solve(singleContact(1.0, 2.0, kSlideQ, 0.5), settings(m, 1e-10));
    EXPECT_TRUE(slide.converged) << toString(m);
    EXPECT_LT((slide.r - kSlideR).norm(), 1e-9) << toString(m);
    EXPECT_LT((slide.u - kSlideU).norm(), 1e-9) << toString(m);
    EXPECT_EQ(slide.fallbackIterations, 0u) << toString(m);
    const LocalSolverResult stick =
        solve(singleContact(1.0, 2.0, kStickQ, 0.5), settings(m, 1e-10));
    EXPECT_TRUE(stick.converged) << toString(m);
    EXPECT_LT((stick.r - kStickR).norm(), 1e-9) << toString(m);
    EXPECT_LT(stick.u.norm(), 1e-9) << toString(m);
  }
}

TEST(NsnSolver, CoupledFrictionlessContacts) {
  // Normals coupled by W_N = [[2, 1], [1, 2]], tangents decoupled (identity), mu = 0,
  // q_N = (-1, -1), q_T = (0.3, 0, -0.2, 0.1): r_N = W_N^-1 (1, 1) = (1/3, 1/3), r_T = 0,
  // u = (0, 0.3, 0, 0, -0.2, 0.1).
  LocalProblem p;
  p.W.resize(6, 6);
  p.W.insert(0, 0) = 2.0;
  p.W.insert(0, 3) = 1.0;
  p.W.insert(3, 0) = 1.0;
  p.W.insert(3, 3) = 2.0;
  for (int k : {1, 2, 4, 5}) {
    p.W.insert(k, k) = 1.0;
  }
  p.q.resize(6);
  p.q << -1.0, 0.3, 0.0, -1.0, -0.2, 0.1;
  p.mu = VecX::Zero(2);
  VecX r(6);
  r << 1.0 / 3.0, 0.0, 0.0, 1.0 / 3.0, 0.0, 0.0;
  for (LocalSolverMethod m : kNewton) {
    for (std::uint32_t dense : {30u, 0u}) {  // dense and sparse LU
      LocalSolverSettings s = settings(m, 1e-12);
      s.nsnDenseLimit = dense;
      const LocalSolverResult res = solve(p, s);
      EXPECT_TRUE(res.converged) << toString(m) << " dense limit " << dense;
      EXPECT_LT((res.r - r).norm(), 1e-10) << toString(m) << " dense limit " << dense;
    }
  }
}

TEST(NsnSolver, RankDeficientDoubleContact) {
  // A point mass m = 1 resting on two contacts with the same frame: W = [[I, I], [I, I]]
  // (singular). q_i = (-1, 0.2, 0), mu = 0.5: every solution has r_N1 + r_N2 = 1 and
  // r_T1 + r_T2 = (-0.2, 0) (sticking, |r_T| = 0.2 <= mu (r_N1 + r_N2) = 0.5 split suitably),
  // u = 0.
  LocalProblem p;
  p.W.resize(6, 6);
  for (int k = 0; k < 3; ++k) {
    p.W.insert(k, k) = 1.0;
    p.W.insert(k, k + 3) = 1.0;
    p.W.insert(k + 3, k) = 1.0;
    p.W.insert(k + 3, k + 3) = 1.0;
  }
  p.q.resize(6);
  p.q << -1.0, 0.2, 0.0, -1.0, 0.2, 0.0;
  p.mu = VecX::Constant(2, 0.5);
  for (LocalSolverMethod m : kNewton) {
    for (std::uint32_t dense : {30u, 0u}) {
      LocalSolverSettings s = settings(m, 1e-10);
      s.nsnDenseLimit = dense;
      const LocalSolverResult res = solve(p, s);
      EXPECT_TRUE(res.converged) << toString(m) << " dense limit " << dense;
      EXPECT_NEAR(res.r[0] + res.r[3], 1.0, 1e-9) << toString(m);
      EXPECT_NEAR(res.r[1] + res.r[4], -0.2, 1e-9) << toString(m);
      EXPECT_LT(res.u.norm(), 1e-9) << toString(m);
    }
  }
}

TEST(NsnSolver, AgreesWithSorOnRandomProblems) {
  // W = H^T M^-1 H with more body velocities than contact unknowns (W > 0, unique u).
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<Real> uni(-1.0, 1.0);
    const int contacts = 8;
    const int dofs = 36;
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
    LocalSolverSettings ref = settings(LocalSolverMethod::SorProx, 1e-13);
    ref.maxIter = 500000;
    const LocalSolverResult sor = solve(p, ref);
    ASSERT_TRUE(sor.converged) << seed;
    for (LocalSolverMethod m : kNewton) {
      for (std::uint32_t dense : {30u, 0u}) {
        LocalSolverSettings s = settings(m, 1e-11);
        s.nsnDenseLimit = dense;
        const LocalSolverResult res = solve(p, s);
        EXPECT_TRUE(res.converged) << seed << " " << toString(m) << " error " << res.error;
        EXPECT_LT((res.r - sor.r).norm(), 1e-7 * (1.0 + sor.r.norm())) << seed << toString(m);
      }
    }
  }
}

TEST(NsnSolver, SeparatingProblemReturnsZeroAtOnce) {
  // Every q_N >= 0: r = 0 is the exact solution; no iteration at all.
  LocalProblem p = singleContact(1.0, 2.0, Vec3(0.5, -3.0, 1.0), 0.3);
  for (LocalSolverMethod m : {LocalSolverMethod::SorProx, LocalSolverMethod::Nsn,
                              LocalSolverMethod::NsnProx, LocalSolverMethod::Apgd}) {
    const LocalSolverResult res = solve(p, settings(m, 0.0));
    EXPECT_TRUE(res.converged) << toString(m);
    EXPECT_EQ(res.iterations, 0u) << toString(m);
    EXPECT_EQ(res.error, 0.0) << toString(m);
    EXPECT_EQ(res.r.norm(), 0.0) << toString(m);
    EXPECT_EQ(res.u, p.q) << toString(m);
  }
  // One approaching contact: the early return does not apply.
  p.q[0] = -0.5;
  const LocalSolverResult res = solve(p, settings(LocalSolverMethod::Nsn, 1e-12));
  EXPECT_TRUE(res.converged);
  EXPECT_GT(res.r[0], 0.0);
}

TEST(NsnSolver, MethodNamesAndSettings) {
  EXPECT_EQ(toString(LocalSolverMethod::Nsn), "nsn");
  EXPECT_EQ(toString(LocalSolverMethod::NsnProx), "prox");
  EXPECT_EQ(localSolverMethodFromString("NSN"), LocalSolverMethod::Nsn);
  EXPECT_EQ(localSolverMethodFromString("prox"), LocalSolverMethod::NsnProx);
  EXPECT_EQ(localSolverMethodFromString("nsn-prox"), LocalSolverMethod::NsnProx);
  LocalSolverSettings s;
  s.nsnMaxIter = 0;
  EXPECT_ANY_THROW(validate(s));
  s = LocalSolverSettings{};
  s.proxSigma = 0.0;
  EXPECT_ANY_THROW(validate(s));
  s = LocalSolverSettings{};
  s.proxInnerFactor = 1.0;
  EXPECT_ANY_THROW(validate(s));
}

/// A random W = H^T H / dofs problem of `contacts` contacts (W > 0 when dofs >= 3 contacts).
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
      LocalSolverSettings s = settings(LocalSolverMethod::SorProx, 0.0);
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
      LocalSolverSettings s = settings(LocalSolverMethod::SorProx, 0.0);
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
        LocalSolverSettings s = settings(LocalSolverMethod::SorProx, 1e-10);
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
  const LocalSolverSettings s = settings(LocalSolverMethod::SorProx, 1e-10);
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
    LocalSolverSettings s = settings(LocalSolverMethod::SorProx, 1e-6);
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
  LocalSolverSettings badSettings = settings(LocalSolverMethod::SorProx, 1e-8);
  badSettings.alphaSor = 2.5;
  int thrown = 0;
  for (const LocalProblem& p : bad) {
    const std::string expected = errorMessage([&] { validate(p); });
    thrown += expected.empty() ? 0 : 1;
    const std::string expectedBoth =
        expected.empty() ? errorMessage([&] { validate(badSettings); }) : expected;
    for (ErrorCheck check : {ErrorCheck::Adaptive, ErrorCheck::Every}) {
      for (UcfSubMethod sub : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
        LocalSolverSettings s = settings(LocalSolverMethod::SorProx, 1e-8);
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
  const LocalSolverSettings s = settings(LocalSolverMethod::SorProx, 1e-8);
  EXPECT_EQ(errorMessage([&] { solve(good, s, &shortGuess); }),
            "initial guess must have 3n = 12 entries, got 5");
}

#ifdef GRAIN_TEST_WITH_FCLIB

namespace fs = std::filesystem;

/// nsn and prox reach the tolerance on an FCLIB file and give the same velocities as SorProx
/// (velocityTol < 0: only the tolerance; frictional solutions need not be unique).
void expectAgreeWithSor(const std::string& name, Real tol, Real velocityTol) {
  const fs::path file = grain::testing::sharedDataDir() / "fclib" / name;
  if (!fs::exists(file)) {
    GTEST_SKIP() << file << " not found";
  }
  const LocalProblem p = fclib::readProblem(file.string());
  const LocalSolverResult sor = solve(p, settings(LocalSolverMethod::SorProx, tol));
  ASSERT_TRUE(sor.converged) << name;
  for (LocalSolverMethod m : kNewton) {
    const LocalSolverResult res = solve(p, settings(m, tol));
    EXPECT_TRUE(res.converged) << name << " " << toString(m) << " error " << res.error;
    const LocalErrorEvaluator ev(p);
    EXPECT_NEAR(res.error, ev.naturalMap(res.r, res.u), 1e-18) << name << " " << toString(m);
    if (velocityTol >= 0.0) {
      EXPECT_LT((res.u - sor.u).norm(), velocityTol * p.q.norm()) << name << " " << toString(m);
    }
  }
}

TEST(NsnFclib, AgreesWithSorOnBoxStacks) {
  expectAgreeWithSor("Box_Stacks-i0122-82-5.hdf5", 1e-10, 1e-6);
}

TEST(NsnFclib, AgreesWithSorOnRover) {
  expectAgreeWithSor("Rover4144.dat", 1e-10, 1e-6);
}

TEST(NsnFclib, AgreesWithSorOnSpheres) {
  expectAgreeWithSor("Spheres-i099-356-679.hdf5", 1e-10, 1e-6);
}

TEST(NsnFclib, ReachesToleranceOnRankDeficientProblems) {
  // More contact unknowns than body velocities: the velocities of solutions differ.
  expectAgreeWithSor("OneObject-i1028-138.hdf5.dat", 1e-10, -1.0);
  expectAgreeWithSor("Capsules-i101-404.dat", 1e-8, -1.0);
}

TEST(NsnFclib, AgreesWithSorOnFrictionContactProblem) {
  expectAgreeWithSor("FrictionContactProblem00071.dat", 1e-9, 1e-6);
}

#endif

}  // namespace
}  // namespace grain
