// SPDX-License-Identifier: MIT
// The per-step invariant checks (invariants.hpp): each invariant broken on purpose is reported
// with the step and the body; the stepper calls the checks when built with
// GRAIN_CHECK_INVARIANTS (debug-asan) and stops a run with a NaN velocity naming the body.
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/timestepping/invariants.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>

namespace grain {
namespace {

constexpr Real kNaN = std::numeric_limits<Real>::quiet_NaN();

/// Three spheres of group 2 (numbers 4, 5, 6) resting on a floor (group 1), gravity along -z.
DynamicsSystem pile() {
  DynamicsSystem sys;
  sys.externalForces.addGravity({9.81, -Vec3::UnitZ()});
  ContactParameter p;
  p.mu = 0.3;
  sys.contactParameters.setStandard(p);
  BodyDef floor;
  floor.id = makeBodyId(1, 0);
  floor.motion = BodyMotion::Static;
  floor.shape = sys.shapes.add(Halfspace{});
  sys.addBody(floor);
  const Sphere ball{0.1};
  const ShapeIndex shape = sys.shapes.add(ball);
  for (std::uint32_t k = 0; k < 3; ++k) {
    BodyDef d;
    d.id = makeBodyId(2, 4 + k);
    d.shape = shape;
    d.mass = 1.0;
    d.inertiaBody = homogeneousInertia(ball, 1.0);
    d.position = Vec3(0.3 * k, 0.0, 0.099);  // slightly penetrating: a contact each
    sys.addBody(d);
  }
  return sys;
}

/// The message of the InvariantError thrown by checkStepInvariants, "" if none.
std::string violation(const BodyStorage& bodies, const ContactStorage& contacts, std::uint64_t step,
                      std::size_t splitContacts = 0) {
  std::vector<BodyId> scratch;
  try {
    checkStepInvariants(bodies, contacts, step, scratch, splitContacts);
  } catch (const InvariantError& e) {
    EXPECT_EQ(e.step(), step);
    return e.what();
  }
  return "";
}

TEST(Invariants, ValidStateAndContactsPass) {
  DynamicsSystem sys = pile();
  MoreauStepper stepper(StepperSettings{});
  for (int k = 0; k < 5; ++k) {
    stepper.step(sys);
  }
  ASSERT_EQ(stepper.contacts().size(), 3u);  // each sphere on the floor
  EXPECT_EQ(violation(sys.bodies, stepper.contacts(), 5), "");
  EXPECT_EQ(findNonFiniteBody(sys.bodies), sys.bodies.size());
}

TEST(Invariants, NonFiniteStateNamesBodyGroupAndStep) {
  DynamicsSystem sys = pile();
  const ContactStorage none;
  sys.bodies.velocities()[2].y() = kNaN;  // body (2,5)
  EXPECT_EQ(findNonFiniteBody(sys.bodies), 2u);
  const std::string m = violation(sys.bodies, none, 17);
  EXPECT_NE(m.find("step 17: body (2,5) of group 2 has a non-finite velocity"), std::string::npos)
      << m;
  EXPECT_NE(m.find("nan"), std::string::npos) << m;
  // Every part of the state is checked.
  DynamicsSystem p = pile();
  p.bodies.positions()[3].x() = std::numeric_limits<Real>::infinity();
  EXPECT_NE(violation(p.bodies, none, 3).find("body (2,6) of group 2 has a non-finite position"),
            std::string::npos);
  DynamicsSystem q = pile();
  q.bodies.orientations()[1].w() = kNaN;
  EXPECT_NE(violation(q.bodies, none, 3).find("body (2,4) of group 2 has a non-finite orientation"),
            std::string::npos);
  DynamicsSystem w = pile();
  w.bodies.omegasBody()[0].z() = kNaN;  // even a static body
  EXPECT_NE(
      violation(w.bodies, none, 3).find("body (1,0) of group 1 has a non-finite angular velocity"),
      std::string::npos);
}

TEST(Invariants, NonUnitQuaternion) {
  DynamicsSystem sys = pile();
  sys.bodies.orientations()[3].coeffs() *= 1.001;
  const std::string m = violation(sys.bodies, ContactStorage{}, 9);
  EXPECT_NE(
      m.find("step 9: body (2,6) of group 2 has an orientation that is not a unit quaternion"),
      std::string::npos)
      << m;
  // Rounding of a normalised quaternion passes.
  DynamicsSystem ok = pile();
  ok.bodies.orientations()[3] = Quat(0.5, 0.5, 0.5, 0.5 + 1e-15);
  EXPECT_EQ(violation(ok.bodies, ContactStorage{}, 9), "");
}

TEST(Invariants, BodyStoredTwice) {
  DynamicsSystem sys = pile();
  sys.bodies.ids()[3] = sys.bodies.ids()[1];  // (2,4) twice
  const std::string m = violation(sys.bodies, ContactStorage{}, 2);
  EXPECT_NE(m.find("step 2: body (2,4) of group 2 is stored twice"), std::string::npos) << m;
}

TEST(Invariants, ContactsOutOfOrderOrInvalid) {
  DynamicsSystem sys = pile();
  const Vec3 n = Vec3::UnitZ();
  const Vec3 r = Vec3::Zero();
  ContactStorage sorted;
  sorted.add(0, 1, n, -1e-3, r, r);
  sorted.add(0, 2, n, -1e-3, r, r);
  sorted.add(1, 2, n, -1e-3, r, r);
  EXPECT_EQ(violation(sys.bodies, sorted, 4), "");
  ContactStorage unsorted;
  unsorted.add(0, 2, n, -1e-3, r, r);
  unsorted.add(0, 1, n, -1e-3, r, r);
  const std::string m = violation(sys.bodies, unsorted, 4);
  EXPECT_NE(m.find("step 4: contact 1 (bodies (1,0), (2,4)) comes after contact 0"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("not in canonical order"), std::string::npos) << m;
  // A distributed step's order: the split bodies' contacts first, each part in canonical order.
  ContactStorage splitFirst;
  splitFirst.add(1, 2, n, -1e-3, r, r);
  splitFirst.add(0, 1, n, -1e-3, r, r);
  splitFirst.add(0, 2, n, -1e-3, r, r);
  EXPECT_EQ(violation(sys.bodies, splitFirst, 4, 1), "");
  EXPECT_NE(violation(sys.bodies, splitFirst, 4, 0)
                .find("contact 1 (bodies (1,0), (2,4)) comes after contact 0"),
            std::string::npos);
  ContactStorage secondPartUnsorted;  // the split part, then an unordered rest
  secondPartUnsorted.add(1, 2, n, -1e-3, r, r);
  secondPartUnsorted.add(0, 2, n, -1e-3, r, r);
  secondPartUnsorted.add(0, 1, n, -1e-3, r, r);
  EXPECT_NE(violation(sys.bodies, secondPartUnsorted, 4, 1).find("contact 2 (bodies (1,0), (2,4))"),
            std::string::npos);
  ContactStorage self;
  self.add(2, 2, n, -1e-3, r, r);
  EXPECT_NE(violation(sys.bodies, self, 4).find("contact 0 is between body (2,5) and itself"),
            std::string::npos);
  ContactStorage outside;
  outside.add(0, 7, n, -1e-3, r, r);
  EXPECT_NE(violation(sys.bodies, outside, 4).find("refers to body index 7 of 4 bodies"),
            std::string::npos);
}

TEST(Invariants, StepperStopsOnNaNWhenBuiltWithChecks) {
  // A NaN velocity injected between steps: with GRAIN_CHECK_INVARIANTS the next step throws,
  // naming the body, its group and the step; without it the step reports a non-finite state
  // and the run driver names the body with findNonFiniteBody().
  DynamicsSystem sys = pile();
  MoreauStepper stepper(StepperSettings{});
  for (int k = 0; k < 3; ++k) {
    stepper.step(sys);
  }
  sys.bodies.velocities()[3].x() = kNaN;  // body (2,6)
  if (stepInvariantsChecked()) {
    try {
      stepper.step(sys);
      FAIL() << "no InvariantError";
    } catch (const InvariantError& e) {
      EXPECT_EQ(e.step(), 4u);
      ASSERT_TRUE(e.hasBody());
      EXPECT_EQ(e.body(), makeBodyId(2, 6));
      EXPECT_NE(std::string(e.what()).find("step 4: body (2,6) of group 2 has a non-finite"),
                std::string::npos)
          << e.what();
    }
  } else {
    // Stepping on would stop elsewhere (collision detection refuses the NaN position); the run
    // drivers name the body with the same functions.
    const std::size_t bad = findNonFiniteBody(sys.bodies);
    ASSERT_EQ(bad, 3u);
    EXPECT_NE(nonFiniteBodyMessage(sys.bodies, bad, stepper.stepCount() + 1)
                  .find("step 4: body (2,6) of group 2 has a non-finite velocity"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace grain
