// SPDX-License-Identifier: MIT
// A fast bead thrown at a thin mesh wall: a two-sided shell may push a bead whose centre has
// crossed the plane within one step out of the far side; a one-sided wall never lets it through.
#include <cstdio>
#include <memory>

#include <gtest/gtest.h>

#include "physics_fixture.hpp"

namespace grain {
namespace {

using testing::addSimulated;
using testing::makeSystem;

/// Square wall [-0.1, 0.1]^2 in the plane x = 0 of K, front (face normal) towards -x.
std::shared_ptr<TriangleMesh> wallMesh() {
  auto m = std::make_shared<TriangleMesh>();
  m->vertices = {Vec3(0, -0.1, -0.1), Vec3(0, 0.1, -0.1), Vec3(0, 0.1, 0.1), Vec3(0, -0.1, 0.1)};
  m->triangles = {{0, 2, 1}, {0, 3, 2}};
  m->finalize();
  return m;
}

/// Where a bead thrown at the wall ends up: its centre's largest and final x (m).
struct Throw {
  Real reach;
  Real finalX;
};

/// Throws a bead (radius r) at 5 m/s along +x at the wall from a start offset and follows it
/// for 0.05 s (Δt = 1e-3 s, no gravity, ε_N = 0, drift correction α = 0.2).
Throw throwAtWall(bool oneSided, Real r, Real startOffset) {
  DynamicsSystem sys = makeSystem(0.3, 0.0, 0.0, 0.0);
  BodyDef wall;
  wall.id = makeBodyId(1, 0);
  wall.motion = BodyMotion::Static;
  wall.shape = sys.shapes.add(Mesh{wallMesh(), oneSided});
  sys.addBody(wall);
  const std::size_t bead =
      addSimulated(sys, 0, Sphere{r}, 2500.0 * 4.18879 * r * r * r,
                   Vec3(-0.02 - startOffset, 0.01, -0.02), Quat::Identity(), Vec3(5.0, 0.0, 0.0));
  StepperSettings settings = testing::tightSettings(1e-3);
  settings.solver.driftCorrectionGap = true;  // as in the example scenes: overlaps are undone
  settings.solver.driftCorrectionGapAlpha = 0.2;
  MoreauStepper stepper(settings);
  Throw t{-1.0, 0.0};
  for (int k = 0; k < 50; ++k) {
    stepper.step(sys);
    t.reach = std::max(t.reach, sys.bodies.positions()[bead].x());
  }
  t.finalX = sys.bodies.positions()[bead].x();
  return t;
}

TEST(MeshWall, BeadAt5MetresPerSecondNeverTunnelsThroughAOneSidedWall) {
  const Real r = 0.003;  // 3 mm bead: one step of travel (5 mm) is less than its diameter
  int twoSidedThrough = 0;
  for (int k = 0; k < 20; ++k) {
    const Real offset = 0.005 * k / 20.0;  // every phase of the step against the wall
    const Throw t = throwAtWall(true, r, offset);
    // The centre may cross the plane within a step, never by a radius, and ends in front.
    EXPECT_LT(t.reach, r) << "offset " << offset;
    EXPECT_LT(t.finalX, -0.9 * r) << "offset " << offset;
    if (throwAtWall(false, r, offset).finalX > 0.0) {
      ++twoSidedThrough;
    }
  }
  RecordProperty("twoSidedThrough", twoSidedThrough);
  std::printf("two-sided wall: %d of 20 start phases went through\n", twoSidedThrough);
}

}  // namespace
}  // namespace grain
