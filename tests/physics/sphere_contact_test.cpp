// SPDX-License-Identifier: MIT
// Spheres against closed-form solutions: resting, rolling and slipping on an incline,
// bouncing with restitution, Newton's cradle and a resting stack.
#include <gtest/gtest.h>

#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::addStatic;
using testing::kG;
using testing::makeSystem;
using testing::tightSettings;

TEST(SphereContact, RestingSphereCarriesItsWeight) {
  const Real m = 3.0;
  const Real r = 0.25;
  const Real dt = 0.01;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  // A 1e-9 m overlap keeps the persistent contact from being lost to round-off.
  const std::size_t ball = addSimulated(sys, 0, Sphere{r}, m, Vec3(0, 0, r - 1e-9));
  MoreauStepper stepper(tightSettings(dt));
  for (int k = 0; k < 100; ++k) {
    const StepStats s = stepper.step(sys);
    ASSERT_EQ(s.contacts, 1u);
    EXPECT_TRUE(s.converged);
    EXPECT_NEAR(stepper.percussions()[0].x(), m * kG * dt, 1e-10);
    EXPECT_NEAR(stepper.percussions()[0].tail<2>().norm(), 0.0, 1e-12);
  }
  EXPECT_NEAR(sys.bodies.velocities()[ball].norm(), 0.0, 1e-10);
  EXPECT_NEAR(sys.bodies.positions()[ball].z(), r - 1e-9, 1e-10);
}

struct InclineResult {
  Real speedAlongSlope;
  Real omega;
  Real tangentialPercussion;
  Real normalPercussion;
};

/// Sphere released on a plane inclined by theta about the y axis, for time T.
InclineResult rollOnIncline(Real theta, Real mu, UcfSubMethod sub, Real T) {
  const Real m = 1.5;
  const Real r = 0.1;
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(mu, 0.0);
  const Vec3 n(std::sin(theta), 0.0, std::cos(theta));
  addStatic(sys, 0, Halfspace{n}, Vec3::Zero());
  // Start with a 1e-9 m overlap so that the persistent contact is never lost to round-off.
  const std::size_t ball = addSimulated(sys, 0, Sphere{r}, m, (r - 1e-9) * n);
  StepperSettings settings = tightSettings(dt);
  settings.solver.subMethodUcf = sub;
  MoreauStepper stepper(settings);
  const int steps = static_cast<int>(std::lround(T / dt));
  InclineResult res{};
  for (int k = 0; k < steps; ++k) {
    const StepStats s = stepper.step(sys);
    EXPECT_EQ(s.contacts, 1u);
    res.normalPercussion = stepper.percussions()[0].x();
    res.tangentialPercussion = stepper.percussions()[0].tail<2>().norm();
  }
  const Vec3 downSlope(std::cos(theta), 0.0, -std::sin(theta));
  res.speedAlongSlope = sys.bodies.velocities()[ball].dot(downSlope);
  res.omega = sys.bodies.omegasBody()[ball].norm();
  return res;
}

class InclineTest : public ::testing::TestWithParam<UcfSubMethod> {};

TEST_P(InclineTest, RollsWithoutSlipWhenFrictionSuffices) {
  const Real theta = 0.3;
  const Real mu = 0.5;  // > 2/7 tan(theta) = 0.088
  const Real T = 0.5;
  const InclineResult res = rollOnIncline(theta, mu, GetParam(), T);
  const Real a = 5.0 / 7.0 * kG * std::sin(theta);
  EXPECT_NEAR(res.speedAlongSlope, a * T, 1e-6 * a * T);
  EXPECT_NEAR(res.omega * 0.1, res.speedAlongSlope, 1e-6);
  EXPECT_NEAR(res.tangentialPercussion, 2.0 / 7.0 * 1.5 * kG * std::sin(theta) * 1e-3, 1e-9);
  EXPECT_NEAR(res.normalPercussion, 1.5 * kG * std::cos(theta) * 1e-3, 1e-9);
}

TEST_P(InclineTest, SlipsWhenFrictionIsTooSmall) {
  const Real theta = 0.6;
  const Real mu = 0.05;  // < 2/7 tan(theta) = 0.195
  const Real T = 0.5;
  const InclineResult res = rollOnIncline(theta, mu, GetParam(), T);
  const Real a = kG * (std::sin(theta) - mu * std::cos(theta));
  EXPECT_NEAR(res.speedAlongSlope, a * T, 1e-6 * a * T);
  const Real omegaDot = 5.0 * mu * kG * std::cos(theta) / (2.0 * 0.1);
  EXPECT_NEAR(res.omega, omegaDot * T, 1e-6 * omegaDot * T);
  EXPECT_NEAR(res.tangentialPercussion, mu * res.normalPercussion, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(BothCoulombFormulations, InclineTest,
                         ::testing::Values(UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce));

TEST(SphereContact, BouncingBallReboundsWithRestitution) {
  const Real e = 0.7;
  const Real r = 0.05;
  const Real h0 = 1.0;
  const Real dt = 1e-4;
  DynamicsSystem sys = makeSystem(0.0, e);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  const std::size_t ball = addSimulated(sys, 0, Sphere{r}, 0.2, Vec3(0, 0, r + h0));
  MoreauStepper stepper(tightSettings(dt));
  bool bounced = false;
  Real apex = 0.0;
  for (int k = 0; k < 15000; ++k) {
    const Real vBefore = sys.bodies.velocities()[ball].z();
    const StepStats s = stepper.step(sys);
    const Real vAfter = sys.bodies.velocities()[ball].z();
    if (!bounced && s.contacts == 1) {
      // Newton's law: the post-impact normal velocity is -e times the pre-step velocity.
      EXPECT_NEAR(vAfter, -e * vBefore, 1e-9);
      bounced = true;
    }
    if (bounced && vBefore > 0.0 && vAfter <= 0.0) {
      apex = sys.bodies.positions()[ball].z() - r;
      break;
    }
  }
  ASSERT_TRUE(bounced);
  EXPECT_NEAR(apex / h0, e * e, 0.01);
}

TEST(SphereContact, InelasticBallStaysDown) {
  const Real r = 0.05;
  DynamicsSystem sys = makeSystem(0.3, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  const std::size_t ball = addSimulated(sys, 0, Sphere{r}, 0.2, Vec3(0, 0, r + 0.2));
  MoreauStepper stepper(tightSettings(1e-3));
  for (int k = 0; k < 1000; ++k) {
    stepper.step(sys);
  }
  EXPECT_NEAR(sys.bodies.velocities()[ball].norm(), 0.0, 1e-9);
  // Penetration stays below one step of impact speed (|v| dt / 2 bound).
  EXPECT_GT(sys.bodies.positions()[ball].z(), r - 2.0 * 1e-3);
}

TEST(SphereContact, NewtonCradleWithSimultaneousImpacts) {
  // Three equal touching balls, the first moving at v towards the others, frictionless, e = 1.
  // The simultaneous Newton law gives u+ = (-v/3, 2v/3, 2v/3) (thesis test T7).
  const Real r = 0.5;
  const Real v = 1.0;
  const Real m = 2.0;
  for (SolverMethod method : {SolverMethod::SorContact, SolverMethod::Jor}) {
    DynamicsSystem sys = makeSystem(0.0, 1.0, 1.0, 0.0);
    addSimulated(sys, 0, Sphere{r}, m, Vec3(0, 0, 0), Quat::Identity(), Vec3(v, 0, 0));
    addSimulated(sys, 1, Sphere{r}, m, Vec3(2 * r, 0, 0));
    addSimulated(sys, 2, Sphere{r}, m, Vec3(4 * r - 1e-12, 0, 0));
    MoreauStepper stepper(tightSettings(1e-3, method));
    const StepStats s = stepper.step(sys);
    ASSERT_EQ(s.contacts, 2u);
    EXPECT_TRUE(s.converged);
    const auto& vel = sys.bodies.velocities();
    EXPECT_NEAR(vel[0].x(), -v / 3.0, 1e-8);
    EXPECT_NEAR(vel[1].x(), 2.0 * v / 3.0, 1e-8);
    EXPECT_NEAR(vel[2].x(), 2.0 * v / 3.0, 1e-8);
    // Energy is conserved by the simultaneous impact with e = 1.
    const Real e0 = 0.5 * m * v * v;
    const Real e1 = 0.5 * m * (vel[0].squaredNorm() + vel[1].squaredNorm() + vel[2].squaredNorm());
    EXPECT_NEAR(e1, e0, 1e-8);
  }
}

TEST(SphereContact, RestingStackCarriesTheWeightAbove) {
  const int n = 5;
  const Real r = 0.5;
  const Real m = 1.0;
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  for (int k = 0; k < n; ++k) {
    // Each contact starts with a 1e-9 m overlap (see RestingSphereCarriesItsWeight).
    addSimulated(sys, static_cast<std::uint32_t>(k), Sphere{r}, m,
                 Vec3(0, 0, r + 2 * r * k - (k + 1) * 1e-9));
  }
  MoreauStepper stepper(tightSettings(dt));
  for (int step = 0; step < 20; ++step) {
    const StepStats s = stepper.step(sys);
    ASSERT_EQ(s.contacts, static_cast<std::size_t>(n));
    EXPECT_TRUE(s.converged);
  }
  // Contact below body k (index k+1 in storage: the floor is index 0) carries (n - k) m g dt.
  const auto& c = stepper.contacts();
  for (std::size_t i = 0; i < c.size(); ++i) {
    const std::size_t upper = std::max(c.bodyA()[i], c.bodyB()[i]);
    const int k = static_cast<int>(upper) - 1;
    EXPECT_NEAR(stepper.percussions()[i].x(), (n - k) * m * kG * dt, 1e-8) << "contact " << i;
  }
  for (std::size_t b = 1; b < sys.bodies.size(); ++b) {
    EXPECT_NEAR(sys.bodies.velocities()[b].norm(), 0.0, 1e-9);
  }
}

}  // namespace
}  // namespace grain
