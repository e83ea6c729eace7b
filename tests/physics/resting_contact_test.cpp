// SPDX-License-Identifier: MIT
// Non-spherical bodies resting on a static box: a box and a capsule come to rest and stay still
// (complete contact manifolds, no rocking on a single point).
#include <cstdio>

#include <gtest/gtest.h>

#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::addStatic;
using testing::kG;
using testing::makeSystem;

/// Settings of the example scenes: SOR prox, warm start, a capped iteration count.
StepperSettings sceneSettings(Real dt) {
  StepperSettings s;
  s.deltaT = dt;
  s.endTime = 1e9;
  s.solver.alphaSorProx = 1.2;
  s.solver.maxIter = 500;
  s.solver.absTol = 1e-8;
  s.solver.relTol = 1e-8;
  s.solver.usePercussionCache = true;
  return s;
}

/// Largest speed (m/s) of any point of body `i`: |v| + |Ω| times the bounding radius.
Real maxPointSpeed(const DynamicsSystem& sys, std::size_t i, Real radius) {
  return sys.bodies.velocities()[i].norm() + radius * sys.bodies.omegasBody()[i].norm();
}

/// Runs 2 s and returns the largest point speed of body `i` over the last 0.5 s.
Real restingSpeed(DynamicsSystem& sys, std::size_t i, Real radius, Real dt, std::size_t& contacts) {
  MoreauStepper stepper(sceneSettings(dt));
  const int steps = static_cast<int>(std::lround(2.0 / dt));
  Real speed = 0.0;
  for (int k = 0; k < steps; ++k) {
    const StepStats s = stepper.step(sys);
    contacts = s.contacts;
    if (k >= 3 * steps / 4) {
      speed = std::max(speed, maxPointSpeed(sys, i, radius));
    }
  }
  return speed;
}

TEST(RestingContact, BoxOnRotatedBoxStaysStill) {
  // Top box turned by 30 deg about z on a larger static box: the incident face clipped against
  // the reference face gives more than four points before reduction.
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  addStatic(sys, 0, Box{Vec3(0.3, 0.2, 0.1), Vec3::Zero()}, Vec3::Zero());
  const Box top{Vec3(0.15, 0.15, 0.05), Vec3::Zero()};
  const std::size_t box = addSimulated(sys, 0, top, 2.0, Vec3(0.05, 0.0, 0.15 + 1e-4),
                                       quat::fromAxisAngle(Vec3::UnitZ(), 0.5));
  std::size_t contacts = 0;
  const Real speed = restingSpeed(sys, box, top.halfExtent.norm(), dt, contacts);
  std::printf("box on box: %zu contacts, max speed %.3e\n", contacts, speed);
  EXPECT_LE(contacts, 4u);
  EXPECT_GE(contacts, 3u);
  EXPECT_LT(speed, 1e-6);
  EXPECT_NEAR(sys.bodies.positions()[box].z(), 0.15, 1e-3);
}

TEST(RestingContact, CapsuleOnABoxFaceStaysStill) {
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  addStatic(sys, 0, Box{Vec3(0.3, 0.2, 0.1), Vec3::Zero()}, Vec3::Zero());
  const Capsule cap{Vec3::UnitX(), 0.03, 0.3};
  const std::size_t c = addSimulated(sys, 0, cap, 1.0, Vec3(0.02, 0.05, 0.1 + 0.03 + 1e-5),
                                     quat::fromAxisAngle(Vec3::UnitZ(), 0.4));
  std::size_t contacts = 0;
  const Real speed = restingSpeed(sys, c, 0.5 * cap.length + cap.radius, dt, contacts);
  std::printf("capsule on box face: %zu contacts, max speed %.3e\n", contacts, speed);
  EXPECT_EQ(contacts, 2u);
  EXPECT_LT(speed, 1e-6);
}

TEST(RestingContact, CapsuleInTheGrooveOfTwoBoxEdgesStaysStill) {
  // Two static boxes 4 cm apart; a capsule (radius 3 cm) lies in the groove, along the two
  // parallel top edges y = +-0.02, z = 0.1. Each edge must carry two points: with one point per
  // edge the capsule could turn about the line through the two points.
  const Real dt = 1e-3;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  const Box block{Vec3(0.3, 0.1, 0.1), Vec3::Zero()};
  addStatic(sys, 0, block, Vec3(0.0, 0.12, 0.0));
  addStatic(sys, 1, block, Vec3(0.0, -0.12, 0.0));
  const Capsule cap{Vec3::UnitX(), 0.03, 0.3};
  const Real z = 0.1 + std::sqrt(0.03 * 0.03 - 0.02 * 0.02) - 1e-6;
  const std::size_t c = addSimulated(sys, 0, cap, 1.0, Vec3(0.05, 0.0, z));
  std::size_t contacts = 0;
  const Real speed = restingSpeed(sys, c, 0.5 * cap.length + cap.radius, dt, contacts);
  std::printf("capsule in groove: %zu contacts, max speed %.3e\n", contacts, speed);
  EXPECT_EQ(contacts, 4u);
  EXPECT_LT(speed, 1e-6);
  EXPECT_NEAR(sys.bodies.positions()[c].z(), z, 1e-4);
}

}  // namespace
}  // namespace grain
