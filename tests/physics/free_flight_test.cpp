// SPDX-License-Identifier: MIT
// Free flight under gravity: the Moreau midpoint scheme is exact for constant acceleration.
#include <gtest/gtest.h>

#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>

namespace grain {
namespace {

TEST(FreeFlight, ParabolaIsExactForAnyStep) {
  DynamicsSystem sys;
  sys.externalForces.addGravity({9.81, -Vec3::UnitZ()});
  const ShapeIndex sphere = sys.shapes.add(Sphere{0.1});
  BodyDef d;
  d.id = makeBodyId(0, 0);
  d.shape = sphere;
  d.mass = 2.0;
  d.inertiaBody = homogeneousInertia(Sphere{0.1}, 2.0);
  d.position = Vec3(1.0, -2.0, 3.0);
  d.velocity = Vec3(0.5, 0.25, 4.0);
  sys.addBody(d);

  StepperSettings settings;
  settings.deltaT = 0.037;
  MoreauStepper stepper(settings);
  const int steps = 50;
  for (int k = 0; k < steps; ++k) {
    stepper.step(sys);
  }
  const Real t = steps * settings.deltaT;
  const Vec3 g(0.0, 0.0, -9.81);
  const Vec3 expectedPos = d.position + d.velocity * t + 0.5 * g * t * t;
  const Vec3 expectedVel = d.velocity + g * t;
  EXPECT_NEAR((sys.bodies.positions()[0] - expectedPos).norm(), 0.0, 1e-12);
  EXPECT_NEAR((sys.bodies.velocities()[0] - expectedVel).norm(), 0.0, 1e-12);
  EXPECT_NEAR(sys.time, t, 1e-12);
}

}  // namespace
}  // namespace grain
