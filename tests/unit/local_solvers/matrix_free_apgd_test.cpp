// SPDX-License-Identifier: MIT
// APGD on the matrix-free Delassus operator (MatrixFreeProblem, solveApgd) runs the iteration of
// the assembled APGD: the same q, mu and error measures, the same iterates up to rounding, the
// same solution to the tolerance.
#include <cmath>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>

#include "pile_scene.hpp"

namespace grain {
namespace {

using test::pile;
using test::SolverScene;

ContactProblem problemOf(const SolverScene& s) {
  return ContactProblem{s.contacts, s.parameters, s.velocityStart, s.omegaBodyStart, s.dt};
}

LocalSolverSettings apgdSettings(Real tolerance, std::uint32_t maxIter,
                                 LocalErrorMeasure measure = LocalErrorMeasure::NaturalMap) {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Apgd;
  s.tolerance = tolerance;
  s.maxIter = maxIter;
  s.errorMeasure = measure;
  return s;
}

TEST(MatrixFreeApgd, ProblemHasTheAssembledQMuAndMeasures) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    SolverScene s = pile(model);
    InclusionSolverSettings set;
    set.driftCorrectionGap = true;
    const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
    MatrixFreeProblem mf;
    mf.build(s.bodies, problemOf(s), set);
    ASSERT_EQ(mf.contactCount(), assembled.contactCount());
    EXPECT_LE((mf.q() - assembled.q).norm(), 1e-14 * assembled.q.norm());
    EXPECT_TRUE(mf.mu() == assembled.mu);
    // An arbitrary admissible-ish iterate: the measures agree with LocalErrorEvaluator.
    VecX r(assembled.q.size());
    for (Eigen::Index k = 0; k < r.size(); ++k) {
      r[k] = 0.01 * std::cos(0.3 * static_cast<Real>(k));
    }
    const VecX u = assembled.W * r + assembled.q;
    const LocalErrorEvaluator evaluator(assembled);
    for (LocalErrorMeasure m :
         {LocalErrorMeasure::NaturalMap, LocalErrorMeasure::Koziara, LocalErrorMeasure::Relaxed}) {
      const Real reference = evaluator.evaluate(m, r, u);
      ASSERT_GT(reference, 0.0);
      EXPECT_NEAR(mf.error(m, r, u, nullptr), reference, 1e-12 * reference) << toString(m);
    }
  }
}

// With the tolerance 0 both run exactly k steps: the iterates agree to rounding (the products
// differ in the last bits, nothing else).
TEST(MatrixFreeApgd, SameIteratesAsAssembledApgd) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    SolverScene s = pile(model);
    const InclusionSolverSettings set;
    const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
    MatrixFreeProblem mf;
    mf.build(s.bodies, problemOf(s), set);
    for (std::uint32_t steps : {1u, 5u, 40u}) {
      const LocalSolverSettings settings = apgdSettings(0.0, steps);
      const LocalSolverResult a = solve(assembled, settings);
      LocalSolverResult b;
      solveApgd(mf, settings, nullptr, b);
      EXPECT_EQ(a.iterations, steps);
      EXPECT_EQ(b.iterations, steps);
      ASSERT_GT(a.r.norm(), 0.0);
      EXPECT_LE((a.r - b.r).norm(), 1e-10 * a.r.norm()) << steps << " steps";
      EXPECT_LE((a.u - b.u).norm(), 1e-10 * a.u.norm()) << steps << " steps";
      EXPECT_NEAR(a.error, b.error, 1e-8 * a.error) << steps << " steps";
    }
  }
}

// To a tolerance, from zero and from a warm start, with both stopping measures: the matrix-free
// solution solves the assembled problem to the tolerance and is the assembled APGD's.
TEST(MatrixFreeApgd, SolvesTheAssembledProblemToTheTolerance) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    for (LocalErrorMeasure measure : {LocalErrorMeasure::NaturalMap, LocalErrorMeasure::Koziara}) {
      SolverScene s = pile(model);
      const InclusionSolverSettings set;
      const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
      MatrixFreeProblem mf;
      mf.build(s.bodies, problemOf(s), set);
      const Real tol = 1e-9;
      const LocalSolverSettings settings = apgdSettings(tol, 100000, measure);
      const LocalSolverResult a = solve(assembled, settings);
      LocalSolverResult b;
      solveApgd(mf, settings, nullptr, b);
      ASSERT_TRUE(a.converged);
      ASSERT_TRUE(b.converged);
      EXPECT_LE(b.error, tol);
      // Its error on the assembled problem (u = W r + q with the assembled W).
      const LocalErrorEvaluator evaluator(assembled);
      EXPECT_LE(evaluator.evaluate(measure, b.r, assembled.W * b.r + assembled.q), 1.01 * tol);
      EXPECT_LE((a.r - b.r).norm(), 1e-6 * a.r.norm());
      EXPECT_NEAR(static_cast<Real>(a.iterations), static_cast<Real>(b.iterations),
                  0.02 * a.iterations + 1.0);

      // Warm start from a perturbed solution: the guess is projected onto the cones first.
      VecX guess = a.r * 1.1;
      guess[1] += 0.5 * a.r[0];
      const LocalSolverResult aw = solve(assembled, settings, &guess);
      LocalSolverResult bw;
      solveApgd(mf, settings, &guess, bw);
      ASSERT_TRUE(bw.converged);
      EXPECT_LE((aw.r - bw.r).norm(), 1e-6 * aw.r.norm());
    }
  }
}

// One global reduction per iteration: the restart test's sum rides on the natural-map sums of
// the new iterate (made after the same product), so ten more iterations cost ten more
// reductions (twenty with a reduction of its own).
TEST(MatrixFreeApgd, OneGlobalSumPerIteration) {
  SolverScene s = pile(ContactModel::UCF);
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  LocalSolverResult ten;
  LocalSolverResult twenty;
  solveApgd(mf, apgdSettings(1e-15, 10), nullptr, ten);
  solveApgd(mf, apgdSettings(1e-15, 20), nullptr, twenty);
  ASSERT_EQ(ten.iterations, 10u);
  ASSERT_EQ(twenty.iterations, 20u);
  EXPECT_EQ(twenty.reductions - ten.reductions, 10u);
  EXPECT_EQ(twenty.delassusProducts - ten.delassusProducts, 10u);
}

TEST(MatrixFreeApgd, SeparatingContactsGiveZeroWithoutIterating) {
  // Two spheres on a floor, lifting off: every q_N > 0.
  SolverScene s;
  s.addFixed();
  const Real r = 0.1;
  s.addSphere(1.0, r, Vec3(0.0, 0.0, r), Vec3(0.0, 0.0, 1.0));
  s.addSphere(2.0, r, Vec3(0.5, 0.0, r), Vec3(0.2, 0.0, 0.5), Vec3(1.0, 0.0, 0.0));
  for (std::uint32_t b : {1u, 2u}) {
    s.contacts.add(0, b, Vec3::UnitZ(), 0.0, Vec3(s.bodies.positions()[b].x(), 0.0, 0.0),
                   Vec3(0.0, 0.0, -r));
  }
  s.setLaw(0.3);
  s.prepare();
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  ASSERT_EQ(mf.contactCount(), 2u);
  ASSERT_GT(mf.q()[0], 0.0);
  ASSERT_GT(mf.q()[3], 0.0);
  LocalSolverResult res;
  solveApgd(mf, apgdSettings(1e-8, 100), nullptr, res);
  EXPECT_TRUE(res.converged);
  EXPECT_EQ(res.iterations, 0u);
  EXPECT_EQ(res.r.norm(), 0.0);
  EXPECT_TRUE(res.u == mf.q());
}

TEST(MatrixFreeApgd, OnlyWithMethodsApgdAndPqn) {
  InclusionSolverSettings s;
  s.matrixFree = true;
  EXPECT_THROW(validate(s), Error);
  for (LocalSolverMethod m : {LocalSolverMethod::SorProx, LocalSolverMethod::JorProx,
                              LocalSolverMethod::Nsn, LocalSolverMethod::NsnProx}) {
    s.localMethod = m;
    EXPECT_THROW(validate(s), Error) << toString(m);
  }
  s.localMethod = LocalSolverMethod::Apgd;
  EXPECT_NO_THROW(validate(s));
  s.localMethod = LocalSolverMethod::Pqn;
  EXPECT_NO_THROW(validate(s));
}

}  // namespace
}  // namespace grain
