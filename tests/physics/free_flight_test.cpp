// SPDX-License-Identifier: MIT
// Contact-free motion: free flight (exact) and torque-free spin about a principal axis.
#include <gtest/gtest.h>

#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::makeSystem;

TEST(FreeFlight, ParabolaIsExactForAnyStep) {
  DynamicsSystem sys = makeSystem(0.3, 0.0);
  const Vec3 r0(1.0, -2.0, 3.0);
  const Vec3 v0(0.5, 0.25, 4.0);
  addSimulated(sys, 0, Sphere{0.1}, 2.0, r0, Quat::Identity(), v0);

  StepperSettings settings;
  settings.deltaT = 0.037;
  MoreauStepper stepper(settings);
  const int steps = 50;
  for (int k = 0; k < steps; ++k) {
    stepper.step(sys);
  }
  const Real t = steps * settings.deltaT;
  const Vec3 g(0.0, 0.0, -testing::kG);
  EXPECT_NEAR((sys.bodies.positions()[0] - (r0 + v0 * t + 0.5 * g * t * t)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((sys.bodies.velocities()[0] - (v0 + g * t)).norm(), 0.0, 1e-12);
  EXPECT_NEAR(sys.time, t, 1e-12);
}

/// Rotation angle error after time T of a spin about the body z axis.
Real spinAngleError(Real dt, Real omega, Real T) {
  DynamicsSystem sys = makeSystem(0.3, 0.0, 0.0, 0.0);
  addSimulated(sys, 0, Box{Vec3(0.3, 0.2, 0.1), Vec3::Zero()}, 1.0, Vec3::Zero(), Quat::Identity(),
               Vec3::Zero(), Vec3(0.0, 0.0, omega));
  StepperSettings settings;
  settings.deltaT = dt;
  MoreauStepper stepper(settings);
  const int steps = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < steps; ++k) {
    stepper.step(sys);
    EXPECT_NEAR(sys.bodies.orientations()[0].norm(), 1.0, 1e-14);
  }
  // Omega about a principal axis is constant (the gyroscopic term vanishes).
  EXPECT_NEAR((sys.bodies.omegasBody()[0] - Vec3(0, 0, omega)).norm(), 0.0, 1e-12);
  const Quat exact = quat::fromAxisAngle(Vec3::UnitZ(), omega * T);
  return exact.angularDistance(sys.bodies.orientations()[0]);
}

TEST(FreeFlight, TorqueFreeSpinIsSecondOrderAccurate) {
  const Real e1 = spinAngleError(0.02, 3.0, 2.0);
  const Real e2 = spinAngleError(0.01, 3.0, 2.0);
  EXPECT_LT(e1, 1e-3);
  // Halving the step divides the error by about four.
  EXPECT_NEAR(e1 / e2, 4.0, 0.3);
}

}  // namespace
}  // namespace grain
