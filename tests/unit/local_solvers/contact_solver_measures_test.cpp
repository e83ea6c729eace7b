// SPDX-License-Identifier: MIT
// The accuracy measures of ContactSolver (computed from its own data) against closed forms and
// against LocalErrorEvaluator on the assembled problem; NaturalMap/Koziara as stopping tests.
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/timestepping/exchange.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>

#include "pile_scene.hpp"

namespace grain {
namespace {

using test::pile;
using test::SolverScene;

constexpr Real kG = 9.81;

/// Sphere of mass m at rest on a floor, one contact with normal +z through its centre.
SolverScene restingSphere(Real m) {
  SolverScene s;
  s.addFixed();
  const Real r = 0.1;
  s.addSphere(m, r, Vec3(0.0, 0.0, r));
  s.contacts.add(0, 1, Vec3::UnitZ(), -1e-9, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  s.setLaw(0.5);
  s.prepare();
  return s;
}

InclusionSolverSettings sweeps(Real alpha, std::uint32_t maxIter, ConvergenceMethod method,
                               Real relTol) {
  InclusionSolverSettings set;
  set.alphaSorProx = alpha;
  set.maxIter = maxIter;
  set.convergenceMethod = method;
  set.relTol = relTol;
  set.absTol = 0.0;
  return set;
}

// Resting sphere, q_N = -g dt, W_NN = 1/m, no tangential motion. With alpha = 1 one sweep is
// exact: P_N = m g dt, u = 0, both errors 0.
TEST(ContactSolverMeasures, ExactSolutionHasZeroError) {
  SolverScene s = restingSphere(4.0);
  ContactSolver solver(sweeps(1.0, 1, ConvergenceMethod::InVelocity, 0.0));
  const SolverStats st = s.solve(solver);
  EXPECT_NEAR(solver.percussions()[0].x(), 4.0 * kG * s.dt, 1e-15);
  EXPECT_LT(st.naturalMapError, 1e-15);
  EXPECT_LT(st.koziaraError, 1e-28);
}

// alpha = 1/2: after k sweeps P_N = (1 - 2^-k) m g dt and u_N = -2^-k g dt. The natural-map
// residual is e = (u_N, 0, 0) (r - u is inside the cone), so with m >= 2
//   NaturalMap = 2^-k g dt / max(g dt, (1 - 2^-k) m g dt, 2^-k g dt) = 2^-k / ((1 - 2^-k) m),
//   Koziara    = e W_NN^-1 e / q W_NN^-1 q = 4^-k.
TEST(ContactSolverMeasures, PerturbedPercussionHasClosedFormError) {
  const Real m = 4.0;
  for (std::uint32_t k : {1u, 2u, 5u}) {
    SolverScene s = restingSphere(m);
    ContactSolver solver(sweeps(0.5, k, ConvergenceMethod::InVelocity, 0.0));
    const SolverStats st = s.solve(solver);
    const Real h = std::ldexp(1.0, -static_cast<int>(k));
    EXPECT_NEAR(solver.percussions()[0].x(), (1.0 - h) * m * kG * s.dt, 1e-15);
    EXPECT_NEAR(st.naturalMapError, h / ((1.0 - h) * m), 1e-13) << k;
    EXPECT_NEAR(st.koziaraError, h * h, 1e-13) << k;
  }
}

// As stopping tests: NaturalMap stops at the first k with 2^-k / (4 (1 - 2^-k)) <= 1e-3, k = 8;
// Koziara at the first k with 4^-k <= 1e-3, k = 5.
TEST(ContactSolverMeasures, StopsAtFirstSweepWithMeasureBelowRelTol) {
  {
    SolverScene s = restingSphere(4.0);
    ContactSolver solver(sweeps(0.5, 100, ConvergenceMethod::NaturalMap, 1e-3));
    const SolverStats st = s.solve(solver);
    EXPECT_TRUE(st.converged);
    EXPECT_EQ(st.iterations, 8u);
    EXPECT_LE(st.naturalMapError, 1e-3);
  }
  {
    SolverScene s = restingSphere(4.0);
    ContactSolver solver(sweeps(0.5, 100, ConvergenceMethod::Koziara, 1e-3));
    const SolverStats st = s.solve(solver);
    EXPECT_TRUE(st.converged);
    EXPECT_EQ(st.iterations, 5u);
    EXPECT_NEAR(st.koziaraError, std::pow(0.25, 5), 1e-15);
  }
  {
    // Not reached within maxIter: not converged, the error of the last iterate reported.
    SolverScene s = restingSphere(4.0);
    ContactSolver solver(sweeps(0.5, 3, ConvergenceMethod::Koziara, 1e-3));
    const SolverStats st = s.solve(solver);
    EXPECT_FALSE(st.converged);
    EXPECT_EQ(st.iterations, 3u);
    EXPECT_NEAR(st.koziaraError, std::pow(0.25, 3), 1e-15);
  }
}

/// An exchange that sees the measure sums: as if another process had the same residuals again
/// (residual sums x 4, everything else unchanged).
class ScalingExchange final : public SplitBodyExchange, public Reducer {
 public:
  void planSplits(const BodyStorage&, const ContactStorage&, std::vector<std::uint32_t>&,
                  std::vector<detail::PercussionCacheEntry>&) override {}
  bool beginSolve(const BodyStorage&, std::span<const std::uint32_t>) override { return true; }
  unsigned period() const override { return 1; }
  unsigned checkRatio() const override { return 1; }
  void average(std::span<Vec3>, std::span<Vec3>) override {}
  void sum(std::span<Vec3>, std::span<Vec3>) override {
    ADD_FAILURE() << "the velocity prox solver averages, it does not sum";
  }
  Reducer& coupledReducer() override { return *this; }
  bool distributed() const override { return true; }
  bool allTrue(bool local) override {
    ++allTrueCalls;
    return local;
  }
  void max(std::span<Real>) override {}
  void sum(std::span<Real> sums) override {
    ++calls;
    size = sums.size();
    sums[detail::MeasureSums::Residual2] *= 4.0;
    sums[detail::MeasureSums::KoziaraNumerator] *= 4.0;
  }
  int calls = 0;
  int allTrueCalls = 0;
  std::size_t size = 0;
};

/// Two processes' step statistics: sumAndMax() first records the other process's values
/// (`recording`), then combines the caller's with them.
class TwoProcessReducer final : public Reducer {
 public:
  bool distributed() const override { return true; }
  bool allTrue(bool local) override { return local; }
  void sum(std::span<Real>) override {}
  void max(std::span<Real>) override {}
  void sumAndMax(std::span<Real> sums, std::span<Real> maxima) override {
    if (recording) {
      otherSums.assign(sums.begin(), sums.end());
      otherMaxima.assign(maxima.begin(), maxima.end());
      return;
    }
    for (std::size_t i = 0; i < sums.size(); ++i) {
      sums[i] += otherSums[i];
    }
    for (std::size_t i = 0; i < maxima.size(); ++i) {
      maxima[i] = std::max(maxima[i], otherMaxima[i]);
    }
  }
  bool recording = true;
  std::vector<Real> otherSums, otherMaxima;
};

TEST(ContactSolverMeasures, GlobalNormsComeFromReduceSums) {
  // After the last allowed sweep the solve makes no reduction: the measures are this process's
  // own (serial values 0.25 and 0.25), with their sums for the step's statistics reduction.
  SolverScene s = restingSphere(4.0);
  ContactSolver solver(sweeps(0.5, 1, ConvergenceMethod::InVelocity, 0.0));
  ScalingExchange exchange;
  const SolverStats st = s.solve(solver, &exchange);
  EXPECT_EQ(exchange.calls, 0);
  EXPECT_NEAR(st.naturalMapError, 0.25, 1e-13);
  EXPECT_NEAR(st.koziaraError, 0.25, 1e-13);
  const detail::ContactMeasures own = detail::measuresFromSums(st.localMeasureSums);
  EXPECT_EQ(own.naturalMap, st.naturalMapError);
  EXPECT_EQ(own.koziara, st.koziaraError);
  // reduceStats with a second process whose residual sums are three times these: the step's
  // errors are those of all contacts together, from the summed norms (residual norm doubled:
  // 0.5 and 1), not the maximum of the two processes' own errors; not converged if either is not.
  detail::MeasureSums other = st.localMeasureSums;
  other.value[detail::MeasureSums::Residual2] *= 3.0;
  other.value[detail::MeasureSums::KoziaraNumerator] *= 3.0;
  TwoProcessReducer reducer;
  StepStats b;
  b.contacts = 1;
  b.converged = false;
  b.naturalMapError = detail::measuresFromSums(other).naturalMap;
  reduceStats(reducer, b, &other);
  reducer.recording = false;
  StepStats a;
  a.contacts = 1;
  a.converged = true;
  a.naturalMapError = st.naturalMapError;
  a.koziaraError = st.koziaraError;
  reduceStats(reducer, a, &st.localMeasureSums);
  EXPECT_EQ(a.contacts, 2u);
  EXPECT_FALSE(a.converged);
  // Together: the sums of q, r, u doubled, the residual's quadrupled.
  detail::MeasureSums fourfold = st.localMeasureSums;
  fourfold.value[detail::MeasureSums::Residual2] *= 4.0;
  fourfold.value[detail::MeasureSums::KoziaraNumerator] *= 4.0;
  for (std::size_t i = 0; i < fourfold.value.size(); ++i) {
    if (i != detail::MeasureSums::Residual2 && i != detail::MeasureSums::KoziaraNumerator) {
      fourfold.value[i] *= 2.0;
    }
  }
  const detail::ContactMeasures together = detail::measuresFromSums(fourfold);
  EXPECT_NEAR(a.naturalMapError, together.naturalMap, 1e-15);
  EXPECT_NEAR(a.koziaraError, together.koziara, 1e-15);
  // Not the larger of the two processes' own errors (0.43 against 0.35 together).
  EXPECT_LT(a.naturalMapError, b.naturalMapError - 0.05);

  // As a stopping test: one reduction per tested sweep, the last one reused; the summed measure
  // decides alone (no allTrue).
  SolverScene s2 = restingSphere(4.0);
  ContactSolver solver2(sweeps(0.5, 100, ConvergenceMethod::NaturalMap, 1e-3));
  ScalingExchange exchange2;
  const SolverStats st2 = s2.solve(solver2, &exchange2);
  EXPECT_EQ(exchange2.calls, static_cast<int>(st2.iterations));
  EXPECT_EQ(exchange2.allTrueCalls, 0);
  EXPECT_EQ(st2.iterations, 9u);  // 2^-k / (2 (1 - 2^-k)) <= 1e-3 first at k = 9
  // A velocity test is each process's own: decided together with allTrue after every tested
  // sweep but the last allowed one, with no sum.
  SolverScene s3 = restingSphere(4.0);
  InclusionSolverSettings velocity = sweeps(0.5, 100, ConvergenceMethod::InVelocity, 1e-3);
  velocity.absTol = 1e-9;
  ContactSolver solver3(velocity);
  ScalingExchange exchange3;
  const SolverStats st3 = s3.solve(solver3, &exchange3);
  EXPECT_TRUE(st3.converged);
  EXPECT_EQ(exchange3.allTrueCalls, static_cast<int>(st3.iterations));
  EXPECT_EQ(exchange3.calls, 0);
}

// The measure is tested after sweeps 1..16, then 18, 20, 22, 24, 27 (k + floor(k/8)): with
// relTol 1e-8 the first converged sweep is 26 (2^-k / (2 (1 - 2^-k)) <= 1e-8), found at 27.
TEST(ContactSolverMeasures, MeasureIsTestedOnAGeometricSchedule) {
  SolverScene s = restingSphere(4.0);
  ContactSolver solver(sweeps(0.5, 1000, ConvergenceMethod::NaturalMap, 1e-8));
  ScalingExchange exchange;
  const SolverStats st = s.solve(solver, &exchange);
  EXPECT_TRUE(st.converged);
  EXPECT_EQ(st.iterations, 27u);
  EXPECT_EQ(exchange.calls, 21);
  EXPECT_LE(st.naturalMapError, 1e-8);
  // The last allowed sweep is always tested: maxIter 26 converges at 26.
  SolverScene s2 = restingSphere(4.0);
  ContactSolver solver2(sweeps(0.5, 26, ConvergenceMethod::NaturalMap, 1e-8));
  ScalingExchange exchange2;
  const SolverStats st2 = s2.solve(solver2, &exchange2);
  EXPECT_TRUE(st2.converged);
  EXPECT_EQ(st2.iterations, 26u);
  // 1..16, 18, 20, 22, 24 reduced; the last allowed sweep (26) is tested on this process's sums.
  EXPECT_EQ(exchange2.calls, 20);
}

/// The measures from the solver's data equal LocalErrorEvaluator's on the assembled problem at
/// the same iterate (r = P, u = W r + q), for hard and compliant contacts, with restitution,
/// drift correction, an animated belt and warm start.
TEST(ContactSolverMeasures, EqualEvaluatorOnAssembledProblem) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    for (std::uint32_t iterations : {1u, 3u, 200u}) {
      SolverScene s = pile(model);
      InclusionSolverSettings set = sweeps(1.2, iterations, ConvergenceMethod::InVelocity, 0.0);
      set.driftCorrectionGap = true;
      const ContactProblem problem{s.contacts, s.parameters, s.velocityStart, s.omegaBodyStart,
                                   s.dt};
      const LocalProblem local = assembleLocalProblem(s.bodies, problem, set);
      ContactSolver solver(set);
      const SolverStats st = solver.solve(s.bodies, problem, nullptr);
      VecX r(3 * static_cast<Eigen::Index>(s.contacts.size()));
      for (std::size_t c = 0; c < s.contacts.size(); ++c) {
        r.segment<3>(3 * static_cast<Eigen::Index>(c)) = solver.percussions()[c];
      }
      const VecX u = localVelocity(local, r);
      const LocalErrorEvaluator evaluator(local);
      const Real nm = evaluator.naturalMap(r, u);
      const Real kz = evaluator.koziara(r, u);
      if (iterations < 200) {
        EXPECT_GT(nm, 1e-6);  // a non-trivial iterate
      }
      EXPECT_NEAR(st.naturalMapError, nm, 1e-9 * nm + 1e-14) << iterations;
      EXPECT_NEAR(st.koziaraError, kz, 1e-9 * kz + 1e-14) << iterations;
    }
  }
}

TEST(ContactSolverMeasures, NoContactsNoError) {
  SolverScene s;
  s.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 1.0));
  s.setLaw(0.3);
  s.prepare();
  ContactSolver solver(sweeps(1.0, 10, ConvergenceMethod::NaturalMap, 1e-6));
  const SolverStats st = s.solve(solver);
  EXPECT_TRUE(st.converged);
  EXPECT_EQ(st.naturalMapError, 0.0);
  EXPECT_EQ(st.koziaraError, 0.0);
}

}  // namespace
}  // namespace grain
