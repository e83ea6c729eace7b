// SPDX-License-Identifier: MIT
// Rolling resistance (ContactParameter::muRolling) against closed forms: a sphere on an incline
// stays at rest for mu_r >= tan(theta) and rolls with a = 5/7 g (sin(theta) - mu_r cos(theta))
// otherwise; two spheres meeting with a relative spin exchange a bounded rolling percussion; the
// methods other than SORContact refuse mu_r > 0.
#include <string>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>

#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::addStatic;
using testing::kG;
using testing::makeSystem;
using testing::tightSettings;

constexpr Real kMass = 1.5;    // kg
constexpr Real kRadius = 0.1;  // m
constexpr Real kDt = 1e-3;     // s

struct RollResult {
  Real speedAlongSlope = 0;  ///< m/s
  Real speed = 0;            ///< |v| (m/s)
  Real omega = 0;            ///< |Omega| (rad/s)
  Real normalPercussion = 0;
  Real rollingPercussion = 0;  ///< |M| (N m s) of the last step
};

/// Sphere released on a static plane inclined by theta, for time T; mu large enough that it
/// never slides. `ballFirst` adds the sphere before the plane, so that it is body A of the
/// contact (the solver then keeps it in the negated single-body slot).
RollResult rollOnIncline(Real theta, Real muRolling, UcfSubMethod sub, Real T, bool ballFirst) {
  DynamicsSystem sys = makeSystem(1.0, 0.0);
  ContactParameter p = sys.contactParameters.standard();
  p.muRolling = muRolling;
  sys.contactParameters.setStandard(p);
  const Vec3 n(std::sin(theta), 0.0, std::cos(theta));
  std::size_t ball = 0;
  // A 1e-9 m overlap keeps the persistent contact from being lost to round-off.
  if (ballFirst) {
    ball = addSimulated(sys, 0, Sphere{kRadius}, kMass, (kRadius - 1e-9) * n);
    addStatic(sys, 0, Halfspace{n}, Vec3::Zero());
  } else {
    addStatic(sys, 0, Halfspace{n}, Vec3::Zero());
    ball = addSimulated(sys, 0, Sphere{kRadius}, kMass, (kRadius - 1e-9) * n);
  }
  StepperSettings settings = tightSettings(kDt);
  settings.solver.subMethodUcf = sub;
  MoreauStepper stepper(settings);
  const int steps = static_cast<int>(std::lround(T / kDt));
  RollResult res;
  for (int k = 0; k < steps; ++k) {
    const StepStats s = stepper.step(sys);
    EXPECT_EQ(s.contacts, 1u);
    EXPECT_TRUE(s.converged);
    res.normalPercussion = stepper.percussions()[0].x();
    const auto& rolling = stepper.solver().rollingPercussions();
    EXPECT_EQ(rolling.size(), muRolling > 0.0 ? 1u : 0u);
    res.rollingPercussion = rolling.empty() ? 0.0 : rolling[0].norm();
  }
  const Vec3 downSlope(std::cos(theta), 0.0, -std::sin(theta));
  res.speedAlongSlope = sys.bodies.velocities()[ball].dot(downSlope);
  res.speed = sys.bodies.velocities()[ball].norm();
  res.omega = sys.bodies.omegasBody()[ball].norm();
  return res;
}

struct RollCase {
  UcfSubMethod sub;
  bool ballFirst;
};

class RollingResistanceIncline : public ::testing::TestWithParam<RollCase> {};

TEST_P(RollingResistanceIncline, StaysAtRestWhenMuRollingReachesTanTheta) {
  const Real theta = 0.3;  // tan(theta) = 0.309
  for (const Real muR : {0.31, 0.5}) {
    const RollResult res = rollOnIncline(theta, muR, GetParam().sub, 1.0, GetParam().ballFirst);
    EXPECT_LT(res.speed, 1e-9) << "mu_r = " << muR;
    EXPECT_LT(res.omega * kRadius, 1e-9) << "mu_r = " << muR;
    // The resting torque balance about the contact point: |M| = m g sin(theta) r dt.
    EXPECT_NEAR(res.rollingPercussion, kMass * kG * std::sin(theta) * kRadius * kDt, 1e-12);
  }
}

TEST_P(RollingResistanceIncline, RollsWithReducedAccelerationBelowTanTheta) {
  const Real theta = 0.3;
  const Real T = 0.5;
  for (const Real muR : {0.0, 0.1, 0.25}) {
    const RollResult res = rollOnIncline(theta, muR, GetParam().sub, T, GetParam().ballFirst);
    const Real a = 5.0 / 7.0 * kG * (std::sin(theta) - muR * std::cos(theta));
    EXPECT_NEAR(res.speedAlongSlope, a * T, 1e-9 * a * T) << "mu_r = " << muR;
    EXPECT_NEAR(res.omega * kRadius, res.speedAlongSlope, 1e-6 * a * T) << "mu_r = " << muR;
    EXPECT_NEAR(res.normalPercussion, kMass * kG * std::cos(theta) * kDt, 1e-10);
    // Sliding-free rolling at the bound: |M| = mu_r R* P_N with R* = r.
    EXPECT_NEAR(res.rollingPercussion, muR * kRadius * res.normalPercussion, 1e-12)
        << "mu_r = " << muR;
  }
}

INSTANTIATE_TEST_SUITE_P(BothFormulationsAndBodyOrders, RollingResistanceIncline,
                         ::testing::Values(RollCase{UcfSubMethod::AlartCurnier, false},
                                           RollCase{UcfSubMethod::DeSaxce, false},
                                           RollCase{UcfSubMethod::AlartCurnier, true}),
                         [](const ::testing::TestParamInfo<RollCase>& param) {
                           return std::string(param.param.sub == UcfSubMethod::DeSaxce ? "DS"
                                                                                       : "AC") +
                                  (param.param.ballFirst ? "BallIsA" : "BallIsB");
                         });

/// Two equal spheres (no gravity, frictionless, eps = 0) meet head-on at relative speed v with
/// spins +-w/2 about y (relative rolling velocity w about t). The inelastic impact gives
/// P_N = m v / 2; the rolling percussion is bounded by mu_r R* P_N with R* = r/2. If that
/// suffices to stop the relative rolling (I w / 2 <= mu_r R* P_N) both end with the same spin,
/// else the relative spin drops by 2 mu_r R* P_N / I. The total angular momentum is kept.
TEST(RollingResistance, TwoSpheresExchangeABoundedRollingPercussion) {
  const Real m = 1.0;
  const Real r = 0.1;
  const Real v = 1.0;
  const Real muR = 0.2;
  const Real inertia = 0.4 * m * r * r;
  const Real bound = muR * (0.5 * r) * (0.5 * m * v);  // 0.005 N m s
  for (const Real w : {1.0, 10.0}) {
    DynamicsSystem sys = makeSystem(0.0, 0.0, 0.0, 0.0);
    ContactParameter p = sys.contactParameters.standard();
    p.muRolling = muR;
    sys.contactParameters.setStandard(p);
    const std::size_t a = addSimulated(sys, 0, Sphere{r}, m, Vec3::Zero(), Quat::Identity(),
                                       Vec3(0.5 * v, 0, 0), Vec3(0, -0.5 * w, 0));
    const std::size_t b = addSimulated(sys, 1, Sphere{r}, m, Vec3(2 * r - 1e-9, 0, 0),
                                       Quat::Identity(), Vec3(-0.5 * v, 0, 0), Vec3(0, 0.5 * w, 0));
    MoreauStepper stepper(tightSettings(kDt));
    const StepStats s = stepper.step(sys);
    ASSERT_EQ(s.contacts, 1u);
    EXPECT_TRUE(s.converged);
    EXPECT_NEAR(stepper.percussions()[0].x(), 0.5 * m * v, 1e-12);
    const Real relative = sys.bodies.omegasBody()[b].y() - sys.bodies.omegasBody()[a].y();
    const Real expected = inertia * w / 2.0 <= bound ? 0.0 : w - 2.0 * bound / inertia;
    EXPECT_NEAR(relative, expected, 1e-9) << "w = " << w;
    EXPECT_NEAR(sys.bodies.omegasBody()[a].y() + sys.bodies.omegasBody()[b].y(), 0.0, 1e-12);
    EXPECT_NEAR(std::abs(sys.bodies.omegasBody()[a].x()) + std::abs(sys.bodies.omegasBody()[a].z()),
                0.0, 1e-12);
  }
}

/// With the warm start of the contact percussions (the rolling percussion starts from 0 in every
/// step) the rolling sphere still follows the closed form.
TEST(RollingResistance, WarmStartKeepsTheClosedForm) {
  const Real theta = 0.3;
  DynamicsSystem sys = makeSystem(1.0, 0.0);
  ContactParameter p = sys.contactParameters.standard();
  p.muRolling = 0.1;
  sys.contactParameters.setStandard(p);
  const Vec3 n(std::sin(theta), 0.0, std::cos(theta));
  addStatic(sys, 0, Halfspace{n}, Vec3::Zero());
  const std::size_t ball = addSimulated(sys, 0, Sphere{kRadius}, kMass, (kRadius - 1e-9) * n);
  StepperSettings settings = tightSettings(kDt);
  settings.solver.usePercussionCache = true;
  MoreauStepper stepper(settings);
  for (int k = 0; k < 500; ++k) {
    EXPECT_TRUE(stepper.step(sys).converged);
  }
  const Real a = 5.0 / 7.0 * kG * (std::sin(theta) - 0.1 * std::cos(theta));
  const Vec3 downSlope(std::cos(theta), 0.0, -std::sin(theta));
  EXPECT_NEAR(sys.bodies.velocities()[ball].dot(downSlope), a * 0.5, 1e-6 * a * 0.5);
}

TEST(RollingResistance, OtherMethodsRefuseMuRolling) {
  auto run = [](const InclusionSolverSettings& solver, Real muRolling) {
    DynamicsSystem sys = makeSystem(0.5, 0.0);
    ContactParameter p;
    p.muRolling = muRolling;
    sys.contactParameters.set(0, 1, p);
    addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
    addSimulated(sys, 0, Sphere{kRadius}, kMass, Vec3(0, 0, kRadius - 1e-9));
    StepperSettings settings = tightSettings(kDt);
    settings.solver = solver;
    MoreauStepper stepper(settings);
    stepper.step(sys);
  };
  std::vector<InclusionSolverSettings> refused;
  for (SolverMethod m :
       {SolverMethod::SorFull, SolverMethod::SorNormalTangential, SolverMethod::Jor}) {
    InclusionSolverSettings s = tightSettings(kDt).solver;
    s.method = m;
    refused.push_back(s);
  }
  InclusionSolverSettings local = tightSettings(kDt).solver;
  local.localMethod = LocalSolverMethod::SorProx;
  refused.push_back(local);
  for (const InclusionSolverSettings& s : refused) {
    try {
      run(s, 0.1);
      ADD_FAILURE() << "method " << toString(s.method) << " accepted muRolling";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("muRolling is supported by method SORContact only"),
                std::string::npos)
          << e.what();
    }
    EXPECT_NO_THROW(run(s, 0.0));
  }
  EXPECT_NO_THROW(run(tightSettings(kDt).solver, 0.1));
}

TEST(RollingResistance, NegativeMuRollingIsRejected) {
  ContactParameter p;
  p.muRolling = -0.1;
  EXPECT_THROW(validateContactParameter(p), Error);
  ContactParameterMap map;
  EXPECT_FALSE(map.hasRollingResistance());
  p.muRolling = 0.2;
  map.set(0, 3, p);
  EXPECT_TRUE(map.hasRollingResistance());
}

}  // namespace
}  // namespace grain
