// SPDX-License-Identifier: MIT
// The local solvers inside the Moreau stepper (InclusionSolverSettings::localMethod): closed-form
// sliding and sticking on an incline with every method of the Coulomb problem, the dilation of
// the interior point method's convex relaxation, and Delassus SOR = velocity SORContact; PQN
// (assembled and matrix-free) against each other and on the settled 96-sphere pile.
#include <cmath>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/solvers/local_method_settings.hpp>

#include "../common/settled_pile.hpp"
#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::addStatic;
using testing::kG;
using testing::makeSystem;

const Box kBox{Vec3(0.2, 0.1, 0.05), Vec3::Zero()};
constexpr Real kTolerance = 1e-10;

StepperSettings localSettings(LocalSolverMethod method, Real dt, bool matrixFree = false,
                              IpmPreconditioner ipm = IpmPreconditioner::BlockJacobi) {
  StepperSettings s;
  s.deltaT = dt;
  s.endTime = 1e9;
  s.solver.localMethod = method;
  s.solver.matrixFree = matrixFree;
  s.solver.ipmPreconditioner = ipm;
  s.solver.convergenceMethod = ConvergenceMethod::NaturalMap;
  s.solver.alphaSorProx = 1.0;
  s.solver.maxIter = 100000;
  s.solver.relTol = kTolerance;
  s.solver.usePercussionCache = true;
  return s;
}

/// Box (four corner contacts) released at rest on a plane inclined by theta; its speed along the
/// slope after T. Every step must converge to the tolerance.
Real slideOnIncline(LocalSolverMethod method, Real theta, Real mu, Real T, bool matrixFree = false,
                    IpmPreconditioner ipm = IpmPreconditioner::BlockJacobi) {
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(mu, 0.0);
  const Vec3 n(std::sin(theta), 0.0, std::cos(theta));
  const Quat tilt = quat::fromAxisAngle(Vec3::UnitY(), theta);
  addStatic(sys, 0, Halfspace{n}, Vec3::Zero());
  const std::size_t box = addSimulated(sys, 0, kBox, 1.0, (0.05 - 1e-9) * n, tilt);
  MoreauStepper stepper(localSettings(method, dt, matrixFree, ipm));
  const int steps = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < steps; ++k) {
    const StepStats s = stepper.step(sys);
    EXPECT_EQ(s.contacts, 4u);
    EXPECT_TRUE(s.converged) << "step " << k;
    EXPECT_LE(s.naturalMapError, kTolerance);
    EXPECT_TRUE(std::isfinite(s.koziaraError));
  }
  // The four normal percussions are not unique, their sum is: m g cos(theta) dt.
  Real normal = 0.0;
  for (const Vec3& p : stepper.percussions()) {
    normal += p.x();
  }
  EXPECT_NEAR(normal, kG * std::cos(theta) * dt, 1e-9);
  const Vec3 downSlope(std::cos(theta), 0.0, -std::sin(theta));
  EXPECT_NEAR(sys.bodies.omegasBody()[box].norm(), 0.0, 1e-5);
  return sys.bodies.velocities()[box].dot(downSlope);
}

class LocalMethodInStepper : public ::testing::TestWithParam<LocalMethodName> {};

TEST_P(LocalMethodInStepper, SlidesWithCoulombAccelerationWhenTanThetaExceedsMu) {
  const Real theta = 0.3;  // tan = 0.309
  const Real mu = 0.1;
  const Real T = 0.3;
  const Real a = kG * (std::sin(theta) - mu * std::cos(theta));
  EXPECT_NEAR(slideOnIncline(GetParam().method, theta, mu, T), a * T, 1e-6 * a * T);
}

TEST_P(LocalMethodInStepper, StaysAtRestWhenMuExceedsTanTheta) {
  EXPECT_NEAR(slideOnIncline(GetParam().method, 0.3, 0.5, 0.3), 0.0, 1e-7);
}

/// The local methods that solve the Coulomb problem (every one but the interior point method,
/// whose convex relaxation dilates: IpmInStepper below).
std::vector<LocalMethodName> coulombMethods() {
  std::vector<LocalMethodName> methods;
  for (const LocalMethodName& m : kLocalMethodNames) {
    if (m.solves == LocalProblemKind::Coulomb) {
      methods.push_back(m);
    }
  }
  return methods;
}

INSTANTIATE_TEST_SUITE_P(EveryCoulombLocalMethod, LocalMethodInStepper,
                         ::testing::ValuesIn(coulombMethods()),
                         [](const ::testing::TestParamInfo<LocalMethodName>& p) {
                           return std::string(p.param.sceneName);
                         });

// APGD on the matrix-free Delassus operator (matrixFree): the same closed forms.
TEST(MatrixFreeApgdInStepper, SlidesAndSticksOnIncline) {
  const Real theta = 0.3;
  const Real a = kG * (std::sin(theta) - 0.1 * std::cos(theta));
  EXPECT_NEAR(slideOnIncline(LocalSolverMethod::Apgd, theta, 0.1, 0.3, true), a * 0.3,
              1e-6 * a * 0.3);
  EXPECT_NEAR(slideOnIncline(LocalSolverMethod::Apgd, theta, 0.5, 0.3, true), 0.0, 1e-7);
}

// PQN on the matrix-free Delassus operator: the same closed forms.
TEST(MatrixFreePqnInStepper, SlidesAndSticksOnIncline) {
  const Real theta = 0.3;
  const Real a = kG * (std::sin(theta) - 0.1 * std::cos(theta));
  EXPECT_NEAR(slideOnIncline(LocalSolverMethod::Pqn, theta, 0.1, 0.3, true), a * 0.3,
              1e-6 * a * 0.3);
  EXPECT_NEAR(slideOnIncline(LocalSolverMethod::Pqn, theta, 0.5, 0.3, true), 0.0, 1e-7);
}

/// The box of slideOnIncline() released at rest on the incline (tan theta > mu), one step with
/// `method`: its velocity along the slope and along the plane's normal (m/s).
std::pair<Real, Real> firstStepOnIncline(LocalSolverMethod method, Real theta, Real mu,
                                         bool matrixFree,
                                         IpmPreconditioner ipm = IpmPreconditioner::BlockJacobi) {
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(mu, 0.0);
  const Vec3 n(std::sin(theta), 0.0, std::cos(theta));
  const Quat tilt = quat::fromAxisAngle(Vec3::UnitY(), theta);
  addStatic(sys, 0, Halfspace{n}, Vec3::Zero());
  const std::size_t box = addSimulated(sys, 0, kBox, 1.0, (0.05 - 1e-9) * n, tilt);
  MoreauStepper stepper(localSettings(method, dt, matrixFree, ipm));
  const StepStats s = stepper.step(sys);
  EXPECT_EQ(s.contacts, 4u);
  EXPECT_TRUE(s.converged);
  EXPECT_NEAR(sys.bodies.omegasBody()[box].norm(), 0.0, 1e-7);
  const Vec3 downSlope(std::cos(theta), 0.0, -std::sin(theta));
  const Vec3 v = sys.bodies.velocities()[box];
  return {v.dot(downSlope), v.dot(n)};
}

// The interior point method solves the convex relaxation, in the stepper too (assembled and
// matrix-free): a box starting to slide down an incline does not keep to the plane as under
// Coulomb's law (SOR: v_N = 0, v_T = g dt (sin theta - mu cos theta)) but lifts off with the
// dilation v_N = mu v_T, and the larger normal percussion brakes it more:
// v_T = g dt (sin theta - mu cos theta) / (1 + mu^2). Where nothing slides the relaxation is the
// Coulomb problem: the box stays at rest.
TEST(IpmInStepper, SlidingBoxDilatesAndStickingBoxStays) {
  const Real theta = 0.3;
  const Real mu = 0.1;
  const Real dt = 1e-3;
  const Real coulomb = kG * dt * (std::sin(theta) - mu * std::cos(theta));
  const auto [sorT, sorN] = firstStepOnIncline(LocalSolverMethod::SorProx, theta, mu, false);
  EXPECT_NEAR(sorT, coulomb, 1e-8 * coulomb);
  EXPECT_NEAR(sorN, 0.0, 1e-10);
  // Assembled, matrix-free, and matrix-free with the additive Schwarz preconditioner
  // (ipmPreconditioner, passed on by localSolverSettings()).
  for (const int variant : {0, 1, 2}) {
    SCOPED_TRACE(variant == 0 ? "assembled" : variant == 1 ? "matrix-free" : "additive Schwarz");
    const bool matrixFree = variant > 0;
    const IpmPreconditioner ipm =
        variant == 2 ? IpmPreconditioner::AdditiveSchwarz : IpmPreconditioner::BlockJacobi;
    const auto [t, nrm] = firstStepOnIncline(LocalSolverMethod::Ipm, theta, mu, matrixFree, ipm);
    const Real relaxed = coulomb / (1.0 + mu * mu);
    EXPECT_NEAR(t, relaxed, 1e-7 * relaxed);
    EXPECT_NEAR(nrm, mu * relaxed, 1e-7 * relaxed);
    EXPECT_GT(nrm, 1e-3 * coulomb);  // not the Coulomb solution
    EXPECT_NEAR(slideOnIncline(LocalSolverMethod::Ipm, theta, 0.5, 0.3, matrixFree, ipm), 0.0,
                1e-7);
  }
}

/// Nine spheres dropped in a 3 x 3 grid onto a floor, with sphere-sphere contacts from the start.
DynamicsSystem spherePile() {
  DynamicsSystem sys = makeSystem(0.4, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  const Real r = 0.05;
  std::uint32_t number = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int layer = 0; layer < 2; ++layer) {
        const Vec3 pos(0.0999 * i + 0.02 * layer, 0.0999 * j + 0.01 * layer * i,
                       r - 1e-6 + 0.099 * layer);
        const Real mass = 0.5 + 0.1 * number;
        addSimulated(sys, number++, Sphere{r}, mass, pos, Quat::Identity(),
                     Vec3(0.1 * layer, -0.05 * i, -0.2 * layer));
      }
    }
  }
  return sys;
}

// Delassus SOR on the assembled problem with the same metric and contact order is the velocity
// SORContact iteration (docs/solvers.md): with a fixed number of sweeps per step (relTol 0), the
// same warm start and drift correction, both give the same percussions and trajectories.
// (A gtest suite of its own: LocalMethodInStepper is a parametrized fixture.)
TEST(DelassusSorInStepper, EqualsSorContact) {
  StepperSettings sor;
  sor.deltaT = 2e-3;
  sor.endTime = 1e9;
  sor.solver.method = SolverMethod::SorContact;
  sor.solver.convergenceMethod = ConvergenceMethod::NaturalMap;
  sor.solver.alphaSorProx = 1.0;
  sor.solver.maxIter = 7;
  sor.solver.relTol = 0.0;
  sor.solver.usePercussionCache = true;
  sor.solver.driftCorrectionGap = true;
  StepperSettings local = sor;
  local.solver.localMethod = LocalSolverMethod::SorProx;

  DynamicsSystem a = spherePile();
  DynamicsSystem b = spherePile();
  MoreauStepper sa(sor);
  MoreauStepper sb(local);
  std::size_t withContacts = 0;
  for (int k = 0; k < 40; ++k) {
    const StepStats ta = sa.step(a);
    const StepStats tb = sb.step(b);
    ASSERT_EQ(ta.contacts, tb.contacts) << "step " << k;
    // relTol 0: both run maxIter sweeps, unless an iterate is exact (e.g. only floor contacts,
    // one per sphere), which the local solver may detect a few sweeps earlier.
    if (!tb.converged) {
      EXPECT_EQ(ta.iterations, tb.iterations) << "step " << k;
    }
    EXPECT_NEAR(ta.naturalMapError, tb.naturalMapError, 1e-8 * ta.naturalMapError + 1e-14);
    EXPECT_NEAR(ta.koziaraError, tb.koziaraError, 1e-8 * ta.koziaraError + 1e-14);
    Real scale = 0.0;
    for (const Vec3& p : sa.percussions()) {
      scale = std::max(scale, p.norm());
    }
    for (std::size_t c = 0; c < ta.contacts; ++c) {
      EXPECT_LE((sa.percussions()[c] - sb.percussions()[c]).norm(), 1e-9 * scale)
          << "step " << k << " contact " << c;
    }
    withContacts += ta.contacts > 9 && !tb.converged ? 1 : 0;
  }
  EXPECT_GT(withContacts, 20u);
  for (std::size_t i = 0; i < a.bodies.size(); ++i) {
    EXPECT_LE((a.bodies.positions()[i] - b.bodies.positions()[i]).norm(), 1e-10);
    EXPECT_LE((a.bodies.velocities()[i] - b.bodies.velocities()[i]).norm(), 1e-8);
  }
}

// On a pile, step by step from the same state, matrix-free APGD gives the assembled APGD's
// percussions to its tolerance, with the same convergence and iteration counts (the products
// differ only by rounding); the trajectories stay together.
TEST(MatrixFreeApgdInStepper, EqualsAssembledApgdOnAPile) {
  const Real tol = 1e-8;
  StepperSettings assembled = localSettings(LocalSolverMethod::Apgd, 2e-3);
  assembled.solver.relTol = tol;
  assembled.solver.maxIter = 20000;
  assembled.solver.driftCorrectionGap = true;
  StepperSettings matrixFree = assembled;
  matrixFree.solver.matrixFree = true;

  DynamicsSystem a = spherePile();
  DynamicsSystem b = spherePile();
  MoreauStepper sa(assembled);
  MoreauStepper sb(matrixFree);
  std::size_t withContacts = 0;
  for (int k = 0; k < 40; ++k) {
    const StepStats ta = sa.step(a);
    const StepStats tb = sb.step(b);
    ASSERT_EQ(ta.contacts, tb.contacts) << "step " << k;
    EXPECT_EQ(ta.converged, tb.converged) << "step " << k;
    EXPECT_TRUE(tb.converged) << "step " << k;
    EXPECT_LE(tb.naturalMapError, tol) << "step " << k;
    EXPECT_NEAR(static_cast<Real>(ta.iterations), static_cast<Real>(tb.iterations),
                0.05 * ta.iterations + 2.0)
        << "step " << k;
    Real scale = 0.0;
    for (const Vec3& p : sa.percussions()) {
      scale = std::max(scale, p.norm());
    }
    for (std::size_t c = 0; c < ta.contacts; ++c) {
      EXPECT_LE((sa.percussions()[c] - sb.percussions()[c]).norm(), 1e-5 * scale)
          << "step " << k << " contact " << c;
    }
    withContacts += ta.contacts > 9 && ta.iterations > 10 ? 1 : 0;
  }
  EXPECT_GT(withContacts, 20u);
  for (std::size_t i = 0; i < a.bodies.size(); ++i) {
    EXPECT_LE((a.bodies.positions()[i] - b.bodies.positions()[i]).norm(), 1e-8);
    EXPECT_LE((a.bodies.velocities()[i] - b.bodies.velocities()[i]).norm(), 1e-6);
  }
}

/// Matrix-free PQN and the assembled PQN stepping spherePile() side by side from the same state
/// (`forced`: the matrix-free one with one Newton step per solve and so a fallback in every step
/// with contacts); checks step by step and at the end. With the fallback the two runs solve each
/// step to the tolerance by different iterations (not the same Newton steps), so they are compared
/// over 25 steps only: near step 29 a sphere grazes another, and solutions 1e-9 apart then differ
/// by a contact (any two methods do, e.g. DelassusSOR and PQN at relTol 1e-8, 3e-5 m apart after
/// step 29 against 1e-10 m before).
void checkMatrixFreePqnAgainstAssembled(bool forced) {
  const int steps = forced ? 25 : 40;
  const Real tol = 1e-8;
  StepperSettings assembled = localSettings(LocalSolverMethod::Pqn, 2e-3);
  assembled.solver.relTol = tol;
  assembled.solver.maxIter = 20000;
  assembled.solver.driftCorrectionGap = true;
  StepperSettings matrixFree = assembled;
  matrixFree.solver.matrixFree = true;
  if (forced) {
    matrixFree.solver.pqnMaxIter = 1;
  }

  DynamicsSystem a = spherePile();
  DynamicsSystem b = spherePile();
  MoreauStepper sa(assembled);
  MoreauStepper sb(matrixFree);
  std::size_t withContacts = 0;
  std::size_t fallbacks = 0;
  std::size_t assembledFallbacks = 0;
  for (int k = 0; k < steps; ++k) {
    const StepStats ta = sa.step(a);
    const StepStats tb = sb.step(b);
    ASSERT_EQ(ta.contacts, tb.contacts) << "step " << k;
    EXPECT_TRUE(ta.converged) << "step " << k;
    EXPECT_TRUE(tb.converged) << "step " << k;
    EXPECT_LE(tb.naturalMapError, tol) << "step " << k;
    Real scale = 0.0;
    for (const Vec3& p : sa.percussions()) {
      scale = std::max(scale, p.norm());
    }
    for (std::size_t c = 0; c < ta.contacts; ++c) {
      EXPECT_LE((sa.percussions()[c] - sb.percussions()[c]).norm(), 1e-5 * scale)
          << "step " << k << " contact " << c;
    }
    const bool solved = ta.contacts > 0 && ta.iterations > 0;
    withContacts += ta.contacts > 9 ? 1 : 0;
    fallbacks += tb.fallbacks;
    assembledFallbacks += ta.fallbacks;
    if (forced && tb.iterations > 0) {
      // One Newton step, then the SOR sweeps.
      EXPECT_EQ(tb.fallbacks, 1u) << "step " << k;
      EXPECT_GT(tb.iterations, 1u) << "step " << k;
    }
    if (!forced && solved) {
      // The same Newton steps (no fallback on either side): the same counts, up to the few steps
      // by which rounding moves the stop (of 10-100).
      EXPECT_EQ(ta.fallbacks, 0u) << "step " << k;
      EXPECT_EQ(tb.fallbacks, 0u) << "step " << k;
      EXPECT_NEAR(static_cast<Real>(ta.iterations), static_cast<Real>(tb.iterations),
                  0.05 * ta.iterations + 2.0)
          << "step " << k;
    }
  }
  EXPECT_GT(withContacts, static_cast<std::size_t>(steps / 2));
  EXPECT_EQ(assembledFallbacks, 0u);
  if (forced) {
    EXPECT_GT(fallbacks, static_cast<std::size_t>(steps / 2));
  } else {
    EXPECT_EQ(fallbacks, 0u);
  }
  for (std::size_t i = 0; i < a.bodies.size(); ++i) {
    EXPECT_LE((a.bodies.positions()[i] - b.bodies.positions()[i]).norm(), 1e-8);
    EXPECT_LE((a.bodies.velocities()[i] - b.bodies.velocities()[i]).norm(), 1e-6);
  }
}

// On a pile, step by step from the same state, matrix-free PQN takes the assembled PQN's Newton
// steps (no fallback) and gives its percussions to the tolerance; the trajectories stay together.
TEST(MatrixFreePqnInStepper, EqualsAssembledPqnOnAPile) {
  checkMatrixFreePqnAgainstAssembled(false);
}

// Forced to fall back in every step (pqnMaxIter 1): the velocity SOR prox from PQN's iterate
// finishes every step to the tolerance, counted in StepStats::fallbacks, and the run still
// follows the assembled PQN (which needs no fallback).
TEST(MatrixFreePqnInStepper, FallbackToVelocitySorKeepsTheTolerance) {
  checkMatrixFreePqnAgainstAssembled(true);
}

// The settled 96-sphere pile (tests/common/settled_pile.hpp, about 165 contacts) stepped with PQN
// at a natural-map tolerance of 1e-6, warm-started (the first step from zero): every step
// converges within 200 Newton steps without falling back, assembled and matrix-free alike (the
// same iteration). Measured: 15-93 Newton steps per step (bench/pqn_pile.cpp). Before the
// Newton variable was scaled (pqnScaling, local_pqn.hpp) every step took the 1000 Newton steps
// of pqnMaxIter and fell back to SOR.
TEST(PqnInStepper, ConvergesOnASettledPileWithoutFallback) {
  const DynamicsSystem settled = test::settledPile();
  for (const bool matrixFree : {false, true}) {
    StepperSettings st = localSettings(LocalSolverMethod::Pqn, test::kPileDt, matrixFree);
    st.solver.relTol = 1e-6;
    DynamicsSystem system = settled;
    MoreauStepper stepper(st);
    for (int k = 0; k < 5; ++k) {
      const StepStats s = stepper.step(system);
      ASSERT_GT(s.contacts, 150u) << "step " << k;
      EXPECT_TRUE(s.converged) << "step " << k;
      EXPECT_LE(s.naturalMapError, 1e-6) << "step " << k;
      EXPECT_EQ(s.fallbacks, 0u) << "step " << k << (matrixFree ? " matrix-free" : "");
      EXPECT_EQ(stepper.localResult().fallbackIterations, 0u) << "step " << k;
      EXPECT_LE(s.iterations, 200u) << "step " << k << (matrixFree ? " matrix-free" : "");
      EXPECT_GT(stepper.localResult().gmresIterations, 0u) << "step " << k;
    }
  }
}

/// The lattice pile of bench/smpi_scaling.sh, one tile of 6 x 6 x 15 spheres (r = 5 mm, density
/// 2500, spacing 9.95 mm: every neighbour touches) on a floor, mu 0.5, at rest.
DynamicsSystem latticePile() {
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  const Sphere sphere{0.005};
  const Real mass = 2500.0 * volume(sphere);
  const Real d = 0.00995;
  const int gx = 6;
  const int gy = 6;
  for (int k = 0; k < gx * gy * 15; ++k) {
    const Vec3 p(static_cast<Real>(k % gx) * d - 0.5 * (gx - 1) * d,
                 static_cast<Real>((k / gx) % gy) * d - 0.5 * (gy - 1) * d,
                 static_cast<Real>(k / (gx * gy)) * d + 0.00499);
    addSimulated(sys, static_cast<std::uint32_t>(k), sphere, mass, p);
  }
  return sys;
}

// Cold PQN (no warm start) on the lattice pile, 10 steps of 0.5 ms to a natural-map error of 1e-6:
// with the continuation of the smoothing (pqnOmegaContinuation, default 1e-4) every step converges
// by Newton steps alone; with the fixed smoothing omega = 1e-3 relTol (continuation 0) some steps
// take the 1000 Newton steps of pqnMaxIter and fall back to SOR. Measured: 26-38 Newton steps per
// step with the continuation; without it 5 of the 10 steps fell back assembled, 2 matrix-free
// (which steps fall back is a matter of round-off: on the 5 x 5 tile, with the sphere mass
// rounded differently, none did in 10 assembled steps; on tiles of 3 x 3 to 8 x 8 spheres 1 to 5
// of 10 matrix-free steps fell back, none with the continuation).
TEST(PqnInStepper, OmegaContinuationSolvesTheColdLatticeWithoutFallback) {
  for (const bool matrixFree : {false, true}) {
    std::size_t fallbacksFixed = 0;
    for (const Real theta : {1e-4, 0.0}) {
      StepperSettings st = localSettings(LocalSolverMethod::Pqn, 5e-4, matrixFree);
      st.solver.relTol = 1e-6;
      st.solver.maxIter = 5000;
      st.solver.usePercussionCache = false;
      st.solver.pqnOmegaContinuation = theta;
      DynamicsSystem system = latticePile();
      MoreauStepper stepper(st);
      for (int k = 0; k < 10; ++k) {
        const StepStats s = stepper.step(system);
        ASSERT_GE(s.contacts, 900u) << "step " << k;
        EXPECT_TRUE(s.converged) << "step " << k;
        if (theta > 0.0) {
          EXPECT_EQ(s.fallbacks, 0u) << "step " << k << (matrixFree ? " matrix-free" : "");
          EXPECT_LE(s.iterations, 100u) << "step " << k << (matrixFree ? " matrix-free" : "");
        } else {
          fallbacksFixed += s.fallbacks;
        }
      }
    }
    EXPECT_GE(fallbacksFixed, 1u) << (matrixFree ? "matrix-free" : "assembled");
  }
}

// Forced to fall back (pqnMaxIter 2), matrix-free PQN's fallback is the step's Gauss-Seidel solve
// (Koziara's Algorithm 1, step 3): the velocity SOR from the step's own warm start, stopping on
// the natural map at relTol / sqrt(3). So on the settled pile it makes exactly the sweeps of
// SORContact with those settings (461, 826, 518 and 410 sweeps in the 4 steps) and leaves its
// percussions and velocities, to round-off. Started from PQN's iterate instead, the sweeps would
// differ.
TEST(MatrixFreePqnInStepper, FallbackIsTheVelocitySorFromTheStepsStart) {
  const DynamicsSystem settled = test::settledPile();
  StepperSettings pqn = localSettings(LocalSolverMethod::Pqn, test::kPileDt, true);
  pqn.solver.relTol = 1e-6;
  pqn.solver.maxIter = 20000;
  pqn.solver.pqnMaxIter = 2;
  StepperSettings sor = pqn;
  sor.solver.localMethod.reset();
  sor.solver.matrixFree = false;
  sor.solver.method = SolverMethod::SorContact;
  sor.solver.relTol = 1e-6 / std::sqrt(3.0);
  DynamicsSystem a = settled;
  DynamicsSystem b = settled;
  MoreauStepper sa(pqn);
  MoreauStepper sb(sor);
  for (int k = 0; k < 4; ++k) {
    const StepStats ta = sa.step(a);
    const StepStats tb = sb.step(b);
    ASSERT_GT(ta.contacts, 150u) << "step " << k;
    ASSERT_EQ(ta.contacts, tb.contacts) << "step " << k;
    EXPECT_EQ(ta.fallbacks, 1u) << "step " << k;
    EXPECT_TRUE(tb.converged) << "step " << k;
    EXPECT_TRUE(ta.converged) << "step " << k;
    EXPECT_GT(tb.iterations, 10u) << "step " << k;
    EXPECT_EQ(sa.localResult().fallbackIterations, tb.iterations) << "step " << k;
    Real dp = 0;
    Real scale = 0;
    Real dv = 0;
    for (std::size_t c = 0; c < ta.contacts; ++c) {
      dp = std::max(dp, (sa.percussions()[c] - sb.percussions()[c]).norm());
      scale = std::max(scale, sb.percussions()[c].norm());
    }
    for (std::size_t i = 0; i < a.bodies.size(); ++i) {
      dv = std::max(dv, (a.bodies.velocities()[i] - b.bodies.velocities()[i]).norm());
    }
    // The same sweeps from the same start; the warm start reaches them through the percussion
    // cache of another solver, which rounds differently (measured: 3e-18 N s of 1.7e-3).
    EXPECT_LE(dp, 1e-12 * scale) << "step " << k;
    EXPECT_LE(dv, 1e-12) << "step " << k;
  }
}

}  // namespace
}  // namespace grain
