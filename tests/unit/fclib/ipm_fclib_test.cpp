// SPDX-License-Identifier: MIT
// The interior point method on real FCLIB / Siconos problems: it agrees with APGD on the convex
// relaxation, and without friction (where the relaxation is the Coulomb problem) with SOR.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include <grain/core/solvers/local_solver.hpp>
#include <grain/fclib/fclib_io.hpp>

#include "../../common/test_util.hpp"

namespace grain {
namespace {

LocalProblem readTestProblem(const std::string& name) {
  return fclib::readProblem((grain::testing::testDataDir() / "fclib" / name).string());
}

LocalSolverResult solveIpm(const LocalProblem& p, Real tol) {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Ipm;
  s.tolerance = tol;
  return solve(p, s);
}

LocalSolverResult solveRelaxedApgd(const LocalProblem& p, Real tol) {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Apgd;
  s.apgdDeSaxce = false;
  s.errorMeasure = LocalErrorMeasure::Relaxed;
  s.tolerance = tol;
  s.maxIter = 200000;
  return solve(p, s);
}

/// IPM and relaxed APGD reach the tolerance on the relaxed measure and agree on u (unique for
/// a symmetric positive semi-definite W) to uTol relative to |q|.
void expectIpmAgreesWithRelaxedApgd(const std::string& name, Real tol, Real uTol,
                                    std::uint32_t maxIterations = 100) {
  const LocalProblem p = readTestProblem(name);
  const LocalSolverResult ipmRes = solveIpm(p, tol);
  const LocalSolverResult apgd = solveRelaxedApgd(p, tol);
  ASSERT_TRUE(ipmRes.converged) << name << " IPM relaxed error " << ipmRes.error;
  ASSERT_TRUE(apgd.converged) << name << " APGD relaxed error " << apgd.error;
  const LocalErrorEvaluator ev(p);
  EXPECT_LE(ev.relaxed(ipmRes.r, localVelocity(p, ipmRes.r)), tol) << name;
  EXPECT_LT((ipmRes.u - apgd.u).norm(), uTol * p.q.norm()) << name;
  EXPECT_LE(ipmRes.iterations, maxIterations) << name;
}

TEST(FclibIpm, AgreesWithRelaxedApgdOnBoxStacks) {
  expectIpmAgreesWithRelaxedApgd("Box_Stacks-i0122-82-5.hdf5", 1e-10, 1e-6);
}

TEST(FclibIpm, AgreesWithRelaxedApgdOnCapsules) {
  expectIpmAgreesWithRelaxedApgd("Capsules-i122-1617.dat", 1e-10, 1e-6);
}

TEST(FclibIpm, AgreesWithRelaxedApgdOnSpheres) {
  expectIpmAgreesWithRelaxedApgd("Spheres-i099-356-679.hdf5", 1e-10, 1e-6);
}

TEST(FclibIpm, DegenerateCapsulesReachTightToleranceWithApgdPolishing) {
  // The interior point iterations stall near 1e-8 here and the Newton polishing does not settle
  // every contact; the APGD stage reaches 1e-10 (iterations include its steps).
  const LocalProblem p = readTestProblem("Capsules-i100-1090.dat");
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Ipm;
  s.tolerance = 1e-10;
  s.ipmApgdSteps = 0;
  const LocalSolverResult without = solve(p, s);
  EXPECT_FALSE(without.converged) << without.error;
  expectIpmAgreesWithRelaxedApgd("Capsules-i100-1090.dat", 1e-10, 1e-6, 2100);
}

TEST(FclibIpm, FrictionlessProblemAgreesWithSor) {
  // Box_Stacks without friction: relaxed and Coulomb problems coincide, so the IPM solution is
  // also a solution of the Coulomb problem and has SOR's velocities.
  LocalProblem p = readTestProblem("Box_Stacks-i0122-82-5.hdf5");
  p.mu.setZero();
  const LocalSolverResult ipmRes = solveIpm(p, 1e-10);
  ASSERT_TRUE(ipmRes.converged) << ipmRes.error;
  LocalSolverSettings s;
  s.tolerance = 1e-10;
  s.maxIter = 200000;
  const LocalSolverResult sor = solve(p, s);
  ASSERT_TRUE(sor.converged) << sor.error;
  const LocalErrorEvaluator ev(p);
  EXPECT_LE(ev.naturalMap(ipmRes.r, ipmRes.u), 1e-9);
  EXPECT_LT((ipmRes.u - sor.u).norm(), 1e-6 * p.q.norm());
}

TEST(FclibIpm, RelaxationDiffersFromCoulombWhereContactsSlide) {
  // On a problem with sliding contacts the relaxed solution is not a Coulomb solution: its
  // natural-map error stays well above the tolerance the relaxed error reached.
  const LocalProblem p = readTestProblem("Capsules-i122-1617.dat");
  const LocalSolverResult res = solveIpm(p, 1e-10);
  ASSERT_TRUE(res.converged) << res.error;
  const LocalErrorEvaluator ev(p);
  EXPECT_GT(ev.naturalMap(res.r, res.u), 1e-6);
}

}  // namespace
}  // namespace grain
