// SPDX-License-Identifier: MIT
// Torque-free tumbling of an asymmetric body: the implicit gyroscopic step keeps the kinetic
// energy and the angular momentum, and the intermediate-axis (Dzhanibekov) flips still happen.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include <grain/core/timestepping/gyroscopic.hpp>

#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::makeSystem;

/// Kinetic energy ½ Ωᵀ Θ Ω (J) and angular momentum L = A_IK Θ Ω (I, kg m²/s) of body 0.
struct Rotation {
  Real energy;
  Vec3 momentumWorld;
};

Rotation rotationOf(const DynamicsSystem& sys) {
  const Vec3& w = sys.bodies.omegasBody()[0];
  const Vec3& theta = sys.bodies.inertiasBody()[0];
  const Vec3 lBody = theta.cwiseProduct(w);
  return {0.5 * w.dot(lBody), sys.bodies.orientations()[0].toRotationMatrix() * lBody};
}

TEST(Gyroscopic, SingleStepKeepsBothQuadraticInvariants) {
  const Vec3 theta(13.0 / 12.0, 10.0 / 12.0, 5.0 / 12.0);
  const Vec3 w0(0.3, 3.9, -0.7);
  for (const Real dt : {1e-3, 1e-2, 0.1}) {
    int iterations = 0;
    const Vec3 w1 = gyroscopicOmegaUpdateNewton(w0, theta, dt, &iterations);
    EXPECT_NEAR(w1.dot(theta.cwiseProduct(w1)), w0.dot(theta.cwiseProduct(w0)), 1e-13);
    EXPECT_NEAR(theta.cwiseProduct(w1).norm(), theta.cwiseProduct(w0).norm(), 1e-13);
    EXPECT_LE(iterations, 4);
    // The step really turns Ω: to first order Ω¹ − Ω⁰ = −Δt Θ⁻¹ (Ω⁰ × Θ Ω⁰), the rest is of
    // relative order Δt |Ω|.
    const Vec3 explicitChange = -dt * w0.cross(theta.cwiseProduct(w0)).cwiseQuotient(theta);
    EXPECT_LT((w1 - w0 - explicitChange).norm(), dt * w0.norm() * explicitChange.norm());
  }
}

TEST(Gyroscopic, PrincipalAxisSpinAndIsotropicBodiesAreUnchanged) {
  const Vec3 theta(1.0, 2.0, 3.0);
  const Vec3 spin(0.0, 0.0, 5.0);
  EXPECT_EQ(gyroscopicOmegaUpdate(spin, theta, 0.01), spin);
  const Vec3 w(0.3, -2.0, 1.0);
  EXPECT_EQ(gyroscopicOmegaUpdate(w, Vec3::Constant(0.4), 0.01), w);
  EXPECT_TRUE(isIsotropicInertia(Vec3::Constant(0.4)));
  EXPECT_FALSE(isIsotropicInertia(theta));
}

TEST(Gyroscopic, TumblingBoxKeepsEnergyAndMomentumOver1000Seconds) {
  // Box 1 x 2 x 3 m, 1 kg: Θ = (13, 10, 5)/12 kg m², the intermediate axis is y.
  DynamicsSystem sys = makeSystem(0.3, 0.0, 0.0, 0.0);
  const Vec3 w0 = 4.0 * Vec3(0.02, 1.0, 0.01).normalized();
  addSimulated(sys, 0, Box{Vec3(0.5, 1.0, 1.5), Vec3::Zero()}, 1.0, Vec3::Zero(), Quat::Identity(),
               Vec3::Zero(), w0);
  StepperSettings settings;
  settings.deltaT = 0.01;
  MoreauStepper stepper(settings);

  const Rotation start = rotationOf(sys);
  Real maxEnergyDrift = 0.0;
  Real maxMomentumDrift = 0.0;
  Real maxMomentumVectorDrift = 0.0;
  int flips = 0;
  Real previousY = sys.bodies.omegasBody()[0].y();
  const int steps = 100000;  // 1000 s
  for (int k = 0; k < steps; ++k) {
    stepper.step(sys);
    const Rotation now = rotationOf(sys);
    maxEnergyDrift = std::max(maxEnergyDrift, std::abs(now.energy / start.energy - 1.0));
    maxMomentumDrift = std::max(
        maxMomentumDrift, std::abs(now.momentumWorld.norm() / start.momentumWorld.norm() - 1.0));
    maxMomentumVectorDrift =
        std::max(maxMomentumVectorDrift,
                 (now.momentumWorld - start.momentumWorld).norm() / start.momentumWorld.norm());
    const Real y = sys.bodies.omegasBody()[0].y();
    if ((y > 0.0) != (previousY > 0.0)) {
      ++flips;
    }
    previousY = y;
  }
  EXPECT_LT(maxEnergyDrift, 1e-3);
  EXPECT_LT(maxMomentumDrift, 1e-3);
  EXPECT_LT(maxMomentumVectorDrift, 1e-2);
  // The spin about the intermediate axis is unstable: the y component reverses again and again
  // (period about 5 s for this start), it does not settle on the axis of largest inertia.
  EXPECT_GT(flips, 20);
  RecordProperty("maxEnergyDrift", std::to_string(maxEnergyDrift));
  RecordProperty("maxMomentumDrift", std::to_string(maxMomentumDrift));
  RecordProperty("maxMomentumVectorDrift", std::to_string(maxMomentumVectorDrift));
  RecordProperty("flips", flips);
  std::printf("energy drift %.3e, |L| drift %.3e, L drift %.3e, flips %d\n", maxEnergyDrift,
              maxMomentumDrift, maxMomentumVectorDrift, flips);
}

}  // namespace
}  // namespace grain
