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

using testing::settingsFor;
using testing::singleContact;

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
        solve(singleContact(1.0, 2.0, kSlideQ, 0.5), settingsFor(m, 1e-10));
    EXPECT_TRUE(slide.converged) << toString(m);
    EXPECT_LT((slide.r - kSlideR).norm(), 1e-9) << toString(m);
    EXPECT_LT((slide.u - kSlideU).norm(), 1e-9) << toString(m);
    EXPECT_EQ(slide.fallbackIterations, 0u) << toString(m);
    const LocalSolverResult stick =
        solve(singleContact(1.0, 2.0, kStickQ, 0.5), settingsFor(m, 1e-10));
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
      LocalSolverSettings s = settingsFor(m, 1e-12);
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
      LocalSolverSettings s = settingsFor(m, 1e-10);
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
    LocalSolverSettings ref = settingsFor(LocalSolverMethod::SorProx, 1e-13);
    ref.maxIter = 500000;
    const LocalSolverResult sor = solve(p, ref);
    ASSERT_TRUE(sor.converged) << seed;
    for (LocalSolverMethod m : kNewton) {
      for (std::uint32_t dense : {30u, 0u}) {
        LocalSolverSettings s = settingsFor(m, 1e-11);
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
    const LocalSolverResult res = solve(p, settingsFor(m, 0.0));
    EXPECT_TRUE(res.converged) << toString(m);
    EXPECT_EQ(res.iterations, 0u) << toString(m);
    EXPECT_EQ(res.error, 0.0) << toString(m);
    EXPECT_EQ(res.r.norm(), 0.0) << toString(m);
    EXPECT_EQ(res.u, p.q) << toString(m);
  }
  // One approaching contact: the early return does not apply.
  p.q[0] = -0.5;
  const LocalSolverResult res = solve(p, settingsFor(LocalSolverMethod::Nsn, 1e-12));
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
#ifdef GRAIN_TEST_WITH_FCLIB

namespace fs = std::filesystem;

/// nsn and prox reach the tolerance on an FCLIB file and give the same velocities as SorProx
/// (velocityTol < 0: only the tolerance; frictional solutions need not be unique).
void expectAgreeWithSor(const std::string& name, Real tol, Real velocityTol) {
  const fs::path file = grain::testing::testDataDir() / "fclib" / name;
  ASSERT_TRUE(fs::exists(file)) << file << " not found";
  const LocalProblem p = fclib::readProblem(file.string());
  const LocalSolverResult sor = solve(p, settingsFor(LocalSolverMethod::SorProx, tol));
  ASSERT_TRUE(sor.converged) << name;
  for (LocalSolverMethod m : kNewton) {
    const LocalSolverResult res = solve(p, settingsFor(m, tol));
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
