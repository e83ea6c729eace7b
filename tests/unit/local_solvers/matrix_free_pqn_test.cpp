// SPDX-License-Identifier: MIT
// PQN on the matrix-free Delassus operator (MatrixFreeProblem, solvePqn) runs the Newton
// iteration of the assembled PQN: the same steps up to rounding, the same solution to the
// tolerance, without the fallback (which the stepper runs); the options that need the assembled
// matrix are refused.
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/exchange.hpp>

#include "pile_scene.hpp"

namespace grain {
namespace {

using test::pile;
using test::SolverScene;

ContactProblem problemOf(const SolverScene& s) {
  return ContactProblem{s.contacts, s.parameters, s.velocityStart, s.omegaBodyStart, s.dt};
}

LocalSolverSettings pqnSettings(Real tolerance,
                                LocalErrorMeasure measure = LocalErrorMeasure::NaturalMap) {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Pqn;
  s.tolerance = tolerance;
  s.errorMeasure = measure;
  return s;
}

// To a tolerance, from zero and from a warm start, with both stopping measures and both contact
// models: the matrix-free PQN takes the assembled PQN's Newton steps (no fallback on either
// side) and ends on its solution.
TEST(MatrixFreePqn, SolvesTheAssembledProblemWithTheAssembledSteps) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    for (LocalErrorMeasure measure : {LocalErrorMeasure::NaturalMap, LocalErrorMeasure::Koziara}) {
      SCOPED_TRACE(std::string(toString(measure)) +
                   (model == ContactModel::UCFD ? ", UCFD" : ", UCF"));
      SolverScene s = pile(model);
      InclusionSolverSettings set;
      set.driftCorrectionGap = true;
      const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
      MatrixFreeProblem mf;
      mf.build(s.bodies, problemOf(s), set);
      const Real tol = 1e-10;
      const LocalSolverSettings settings = pqnSettings(tol, measure);
      const LocalSolverResult a = solve(assembled, settings);
      LocalSolverResult b;
      solvePqn(mf, settings, nullptr, b);
      ASSERT_TRUE(a.converged);
      ASSERT_EQ(a.fallbackIterations, 0u);  // the comparison is of PQN alone
      ASSERT_TRUE(b.converged);
      EXPECT_GT(b.iterations, 1u);
      EXPECT_EQ(b.iterations, a.iterations);
      EXPECT_EQ(b.fallbackIterations, 0u);
      EXPECT_LE(b.error, tol);
      // Its error on the assembled problem (u = W r + q with the assembled W).
      const LocalErrorEvaluator evaluator(assembled);
      EXPECT_LE(evaluator.evaluate(measure, b.r, assembled.W * b.r + assembled.q), 1.01 * tol);
      ASSERT_GT(a.r.norm(), 0.0);
      EXPECT_LE((a.r - b.r).norm(), 1e-8 * a.r.norm());

      // Warm start from a perturbed solution: the guess is projected onto the cones first.
      VecX guess = a.r * 1.1;
      guess[1] += 0.5 * a.r[0];
      const LocalSolverResult aw = solve(assembled, settings, &guess);
      LocalSolverResult bw;
      solvePqn(mf, settings, &guess, bw);
      ASSERT_TRUE(aw.converged);
      ASSERT_TRUE(bw.converged);
      EXPECT_EQ(bw.iterations, aw.iterations);
      EXPECT_LE((aw.r - bw.r).norm(), 1e-8 * aw.r.norm());
    }
  }
}

// Every globalisation option of the iteration is shared: without backtracking and continuation,
// and with one GMRES iteration per Newton step, the two still agree.
TEST(MatrixFreePqn, SameStepsWithEveryOption) {
  SolverScene s = pile(ContactModel::UCF);
  const InclusionSolverSettings set;
  const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), set);
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    LocalSolverSettings settings = pqnSettings(1e-9);
    settings.pqnBacktracking = variant != 0;
    settings.pqnDeltaContinuation = variant != 1;
    settings.pqnGmresMaxIter = variant == 2 ? 1 : 10;
    settings.pqnMaxIter = 300;
    const LocalSolverResult a = solve(assembled, settings);
    LocalSolverResult b;
    solvePqn(mf, settings, nullptr, b);
    if (a.fallbackIterations == 0) {
      ASSERT_TRUE(b.converged);
      EXPECT_EQ(b.iterations, a.iterations);
      EXPECT_LE((a.r - b.r).norm(), 1e-7 * a.r.norm());
    } else {
      // The assembled solve fell back: the matrix-free one stops unconverged after as many
      // Newton steps (the stepper runs the fallback).
      EXPECT_FALSE(b.converged);
      EXPECT_EQ(b.iterations, settings.pqnMaxIter);
    }
  }
}

// GMRES orthogonalises each new vector by two passes of classical Gram-Schmidt, each pass's inner
// products one global sum and the new norm in the second: two reductions per GMRES iteration
// (modified Gram-Schmidt made k + 2 in iteration k, at least m - 1 more per solve of m
// iterations). Besides, each Newton step sums |C| (GMRES's first residual, not summed again) and
// one error per trial step (more than one only where the backtracking halves the step), and the
// start sums q's check, the diagonal with the contact count (one sum) and the first error.
TEST(MatrixFreePqn, TwoGlobalSumsPerGmresIteration) {
  SolverScene s = pile(ContactModel::UCF);
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  LocalSolverResult b;
  solvePqn(mf, pqnSettings(1e-10), nullptr, b);
  ASSERT_TRUE(b.converged);
  ASSERT_GT(b.iterations, 1u);
  // Several GMRES iterations per Newton step, so that k + 2 sums per iteration would show.
  ASSERT_GE(b.gmresIterations, 3 * b.iterations);
  const std::uint32_t base = 3 + 2 * b.iterations + 2 * b.gmresIterations;
  EXPECT_GE(b.reductions, base);
  EXPECT_LE(b.reductions, base + b.iterations / 4);  // a few halved steps (27 Newton steps: 3)
}

/// One process that presents its sums as distributed (the identity, as on one process), so that
/// PQN takes the distributed path: GMRES with one global sum per iteration.
class OneProcessAsDistributed final : public Reducer {
 public:
  bool distributed() const override { return true; }
  bool allTrue(bool local) override { return local; }
  void sum(std::span<Real>) override {}
  void max(std::span<Real>) override {}
};

// Distributed, GMRES makes one global sum per iteration (the second Gram-Schmidt pass delayed to
// the next iteration's sum) and one more per solve, for one product more per solve: the same
// Newton steps to the same solution as the two-sum GMRES of a serial solve.
TEST(MatrixFreePqn, OneGlobalSumPerGmresIterationWhenDistributed) {
  SolverScene s = pile(ContactModel::UCF);
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  LocalSolverResult serial;
  solvePqn(mf, pqnSettings(1e-10), nullptr, serial);
  ASSERT_TRUE(serial.converged);
  OneProcessAsDistributed reducer;
  LocalSolverResult b;
  solvePqn(mf, pqnSettings(1e-10), nullptr, b, &reducer);
  ASSERT_TRUE(b.converged);
  EXPECT_EQ(b.iterations, serial.iterations);
  EXPECT_EQ(b.gmresIterations, serial.gmresIterations);
  EXPECT_LE((b.r - serial.r).norm(), 1e-9 * serial.r.norm());
  ASSERT_GE(b.gmresIterations, 3 * b.iterations);
  // The start's 3 (q's check is made only by a distributed solve without a guess: here 4), per
  // Newton step |C| and the trial's error, per GMRES solve one sum more than its iterations.
  const std::uint32_t base = 4 + 3 * b.iterations + b.gmresIterations;
  EXPECT_GE(b.reductions, base);
  EXPECT_LE(b.reductions, base + b.iterations / 4);
  // A GMRES solve that stops on its tolerance makes one product more than its iterations (one
  // that runs to pqnGmresMaxIter makes as many as the two-sum form): one per Newton step at most,
  // here 25 of 26.
  EXPECT_LE(b.delassusProducts - serial.delassusProducts, b.iterations);
  EXPECT_GE(b.delassusProducts - serial.delassusProducts, b.iterations / 2);
}

// Without reaching the tolerance in pqnMaxIter steps solvePqn returns its best iterate,
// unconverged, with the error of that iterate and no fallback sweeps.
TEST(MatrixFreePqn, StopsUnconvergedAfterPqnMaxIterWithoutFallback) {
  SolverScene s = pile(ContactModel::UCF);
  const InclusionSolverSettings set;
  const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), set);
  LocalSolverSettings settings = pqnSettings(1e-14);
  settings.pqnMaxIter = 1;
  LocalSolverResult b;
  solvePqn(mf, settings, nullptr, b);
  EXPECT_FALSE(b.converged);
  EXPECT_EQ(b.iterations, 1u);
  EXPECT_EQ(b.fallbackIterations, 0u);
  EXPECT_GT(b.error, settings.tolerance);
  const LocalErrorEvaluator evaluator(assembled);
  EXPECT_NEAR(evaluator.naturalMap(b.r, assembled.W * b.r + assembled.q), b.error, 1e-9 * b.error);
  // The assembled solve with the same settings falls back to SOR and converges.
  const LocalSolverResult a = solve(assembled, settings);
  EXPECT_GT(a.fallbackIterations, 0u);
}

TEST(MatrixFreePqn, SeparatingContactsGiveZeroWithoutIterating) {
  SolverScene s;
  s.addFixed();
  const Real r = 0.1;
  s.addSphere(1.0, r, Vec3(0.0, 0.0, r), Vec3(0.0, 0.0, 1.0));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  s.setLaw(0.3);
  s.prepare();
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  ASSERT_GT(mf.q()[0], 0.0);
  LocalSolverResult res;
  solvePqn(mf, pqnSettings(1e-8), nullptr, res);
  EXPECT_TRUE(res.converged);
  EXPECT_EQ(res.iterations, 0u);
  EXPECT_EQ(res.r.norm(), 0.0);
}

// The Newton systems are solved by GMRES only: the sparse LU and the SOR warm start on the
// assembled matrix are refused, with a message naming the option.
TEST(MatrixFreePqn, RefusesTheOptionsThatNeedTheAssembledMatrix) {
  SolverScene s = pile(ContactModel::UCF);
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  LocalSolverResult res;
  LocalSolverSettings direct = pqnSettings(1e-8);
  direct.pqnDirectSolve = true;
  try {
    solvePqn(mf, direct, nullptr, res);
    ADD_FAILURE() << "pqnDirectSolve accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pqnDirectSolve"), std::string::npos) << e.what();
  }
  LocalSolverSettings warm = pqnSettings(1e-8);
  warm.pqnWarmStartTolerance = 1e-4;
  EXPECT_THROW(solvePqn(mf, warm, nullptr, res), Error);
  EXPECT_NO_THROW(checkMatrixFreePqn(pqnSettings(1e-8)));
}

}  // namespace
}  // namespace grain
