// SPDX-License-Identifier: MIT
// Boxes on four corner contacts: sliding to rest on a floor, sticking and sliding on an incline.
#include <gtest/gtest.h>

#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::addStatic;
using testing::kG;
using testing::makeSystem;
using testing::tightSettings;

const Box kBox{Vec3(0.2, 0.1, 0.05), Vec3::Zero()};

TEST(BoxContact, SlidingBoxDeceleratesAtMuGAndSticks) {
  const Real mu = 0.4;
  const Real v0 = 2.0;
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(mu, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  const std::size_t box =
      addSimulated(sys, 0, kBox, 1.0, Vec3(0, 0, 0.05 - 1e-9), Quat::Identity(), Vec3(v0, 0, 0));
  MoreauStepper stepper(tightSettings(dt));
  const Real tStop = v0 / (mu * kG);
  for (int k = 0; k < 250; ++k) {
    const StepStats s = stepper.step(sys);
    EXPECT_EQ(s.contacts, 4u);
  }
  // Velocities are unique even though the four normal percussions are not: test u, not P.
  EXPECT_NEAR(sys.bodies.velocities()[box].x(), v0 - mu * kG * 0.25, 1e-6);
  for (int k = 250; k < 1000; ++k) {
    stepper.step(sys);
  }
  EXPECT_GT(1.0, tStop);
  EXPECT_NEAR(sys.bodies.velocities()[box].norm(), 0.0, 1e-8);
  EXPECT_NEAR(sys.bodies.omegasBody()[box].norm(), 0.0, 1e-6);
  // Travelled distance v0^2 / (2 mu g), up to one step of discretisation.
  EXPECT_NEAR(sys.bodies.positions()[box].x(), v0 * v0 / (2 * mu * kG), v0 * dt);
}

/// Box released at rest on a plane inclined by theta; returns its speed along the slope after T.
Real slideOnIncline(Real theta, Real mu, Real T) {
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(mu, 0.0);
  const Vec3 n(std::sin(theta), 0.0, std::cos(theta));
  const Quat tilt = quat::fromAxisAngle(Vec3::UnitY(), theta);
  addStatic(sys, 0, Halfspace{n}, Vec3::Zero());
  const std::size_t box = addSimulated(sys, 0, kBox, 1.0, (0.05 - 1e-9) * n, tilt);
  MoreauStepper stepper(tightSettings(dt));
  const int steps = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < steps; ++k) {
    const StepStats s = stepper.step(sys);
    EXPECT_EQ(s.contacts, 4u);
  }
  const Vec3 downSlope(std::cos(theta), 0.0, -std::sin(theta));
  EXPECT_NEAR(sys.bodies.omegasBody()[box].norm(), 0.0, 1e-6);
  return sys.bodies.velocities()[box].dot(downSlope);
}

TEST(BoxContact, SticksOnInclineWhenMuExceedsTanTheta) {
  EXPECT_NEAR(slideOnIncline(0.3, 0.5, 0.5), 0.0, 1e-8);
}

TEST(BoxContact, SlidesOnInclineWithCoulombDeceleration) {
  const Real theta = 0.3;
  const Real mu = 0.1;
  const Real T = 0.5;
  const Real a = kG * (std::sin(theta) - mu * std::cos(theta));
  EXPECT_NEAR(slideOnIncline(theta, mu, T), a * T, 1e-6);
}

TEST(CapsuleContact, RestingCapsuleCarriesItsWeight) {
  const Real dt = 1e-3;
  const Real m = 0.7;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  // Lying capsule (axis along x): two contacts, one under each cap centre.
  const std::size_t cap =
      addSimulated(sys, 0, Capsule{Vec3::UnitX(), 0.05, 0.3}, m, Vec3(0, 0, 0.05 - 1e-9));
  MoreauStepper stepper(tightSettings(dt));
  for (int k = 0; k < 100; ++k) {
    const StepStats s = stepper.step(sys);
    ASSERT_GE(s.contacts, 1u);
    Real total = 0.0;
    for (const Vec3& p : stepper.percussions()) {
      total += p.x();
    }
    EXPECT_NEAR(total, m * kG * dt, 1e-10);
  }
  EXPECT_NEAR(sys.bodies.velocities()[cap].norm(), 0.0, 1e-9);
  EXPECT_NEAR(sys.bodies.omegasBody()[cap].norm(), 0.0, 1e-8);
}

}  // namespace
}  // namespace grain
