// SPDX-License-Identifier: MIT
// Contact solver against closed forms (thesis-numerics §7.2, tests T3, T4, T6, T7, T8) and
// against the thesis's K-frame contact Jacobian (eq. 7.21).
#include <cmath>
#include <tuple>

#include <gtest/gtest.h>

#include <grain/core/math/quaternion.hpp>
#include <grain/core/solvers/contact_solver.hpp>

#include "solver_test_scene.hpp"

namespace grain {
namespace {

using test::SolverScene;
using test::tightSettings;

constexpr Real kG = 9.81;

/// Floor (static, index 0) and one sphere (index 1) resting on it, contact n = +z.
SolverScene restingSphere(Real m, Real r, Real mu) {
  SolverScene s;
  s.addFixed();
  s.addSphere(m, r, Vec3(0.0, 0.0, r));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3(0.0, 0.0, 0.0), Vec3(0.0, 0.0, -r));
  s.setLaw(mu);
  s.prepare();
  return s;
}

// T3: P_N = m g dt, v^E = 0, P_T = 0; alpha = 1 is exact after one sweep.
TEST(ContactSolverPhysics, RestingSphereExactAfterOneSweepWithAlphaOne) {
  const Real m = 2.5;
  SolverScene s = restingSphere(m, 0.1, 0.4);
  InclusionSolverSettings set;
  set.alphaSorProx = 1.0;
  set.maxIter = 1;
  ContactSolver solver(set);
  const SolverStats st = s.solve(solver);
  EXPECT_EQ(st.iterations, 1u);
  const Vec3 p = solver.percussions()[0];
  EXPECT_NEAR(p.x(), m * kG * s.dt, 1e-15);
  EXPECT_EQ(p.y(), 0.0);
  EXPECT_EQ(p.z(), 0.0);
  EXPECT_NEAR(s.bodies.velocities()[1].norm(), 0.0, 1e-15);
  EXPECT_NEAR(s.bodies.omegasBody()[1].norm(), 0.0, 1e-15);
}

// T3: with alpha the error is multiplied by (1 - alpha) each sweep.
TEST(ContactSolverPhysics, RestingSphereErrorContractsByOneMinusAlpha) {
  const Real m = 1.0;
  for (std::uint32_t sweeps = 1; sweeps <= 4; ++sweeps) {
    SolverScene s = restingSphere(m, 0.1, 0.4);
    InclusionSolverSettings set;
    set.alphaSorProx = 1.5;
    set.maxIter = sweeps;
    set.absTol = set.relTol = 0.0;
    ContactSolver solver(set);
    s.solve(solver);
    const Real exact = m * kG * s.dt;
    const Real expected = exact * (1.0 - std::pow(-0.5, sweeps));
    EXPECT_NEAR(solver.percussions()[0].x(), expected, 1e-15) << sweeps;
  }
}

// T3 with every method and sub-method: the converged solution is the same.
TEST(ContactSolverPhysics, RestingSphereAllMethods) {
  for (SolverMethod method : {SolverMethod::SorContact, SolverMethod::SorFull,
                              SolverMethod::SorNormalTangential, SolverMethod::Jor}) {
    for (UcfSubMethod sub : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
      SolverScene s = restingSphere(3.0, 0.2, 0.3);
      ContactSolver solver(tightSettings(method, sub));
      const SolverStats st = s.solve(solver);
      EXPECT_TRUE(st.converged);
      EXPECT_NEAR(solver.percussions()[0].x(), 3.0 * kG * s.dt, 1e-12);
      EXPECT_NEAR(solver.percussions()[0].tail<2>().norm(), 0.0, 1e-14);
      EXPECT_NEAR(s.bodies.velocities()[1].norm(), 0.0, 1e-12);
    }
  }
}

// Body A simulated and body B static: the sign of the frame is handled.
TEST(ContactSolverPhysics, SimulatedBodyAsBodyA) {
  SolverScene s;
  s.addSphere(2.0, 0.1, Vec3(0.0, 0.0, 0.1));
  s.addFixed();
  // Normal from A (sphere) to B (floor) points down.
  s.contacts.add(0, 1, -Vec3::UnitZ(), 0.0, Vec3(0.0, 0.0, -0.1), Vec3::Zero());
  s.setLaw(0.5);
  s.prepare();
  ContactSolver solver(tightSettings());
  s.solve(solver);
  EXPECT_NEAR(solver.percussions()[0].x(), 2.0 * kG * s.dt, 1e-12);
  EXPECT_NEAR(s.bodies.velocities()[0].norm(), 0.0, 1e-12);
}

/// Sphere on an incline of angle theta: incline normal n = (sin, 0, cos), down-slope
/// d = (cos, 0, -sin).
struct Incline {
  SolverScene s;
  Vec3 n;
  Vec3 down;
};

Incline makeIncline(Real theta, Real m, Real r, Real mu) {
  Incline in;
  in.n = Vec3(std::sin(theta), 0.0, std::cos(theta));
  in.down = Vec3(std::cos(theta), 0.0, -std::sin(theta));
  in.s.addFixed();
  in.s.addSphere(m, r, r * in.n);
  in.s.contacts.add(0, 1, in.n, 0.0, Vec3::Zero(), -r * in.n);
  in.s.setLaw(mu);
  in.s.prepare();
  return in;
}

class InclineTest : public ::testing::TestWithParam<std::tuple<UcfSubMethod, SolverMethod>> {};

// T4: rolling without slip when mu >= 2/7 tan(theta).
TEST_P(InclineTest, RollsWithoutSlip) {
  const auto [sub, method] = GetParam();
  const Real theta = 0.5, m = 1.7, r = 0.05;
  const Real mu = 0.4;  // 2/7 tan(0.5) = 0.156
  Incline in = makeIncline(theta, m, r, mu);
  ContactSolver solver(tightSettings(method, sub));
  const SolverStats st = in.s.solve(solver);
  EXPECT_TRUE(st.converged);
  const Real dt = in.s.dt;
  const Vec3 v = in.s.bodies.velocities()[1];
  EXPECT_NEAR(v.dot(in.down), 5.0 / 7.0 * kG * std::sin(theta) * dt, 1e-11);
  EXPECT_NEAR(v.dot(in.n), 0.0, 1e-11);
  EXPECT_NEAR(v.y(), 0.0, 1e-12);
  // Contact point at rest: v + omega x r_B = 0.
  const Vec3 omega = in.s.bodies.omegasBody()[1];
  EXPECT_NEAR((v + omega.cross(-r * in.n)).norm(), 0.0, 1e-11);
  const Vec3 p = solver.percussions()[0];
  EXPECT_NEAR(p.x(), m * kG * std::cos(theta) * dt, 1e-11);
  EXPECT_NEAR(p.tail<2>().norm(), 2.0 / 7.0 * m * kG * std::sin(theta) * dt, 1e-11);
  // Friction points up the slope.
  const Vec3 pWorld = p.y() * in.s.contacts.tangent1(0) + p.z() * in.s.contacts.tangent2(0);
  EXPECT_LT(pWorld.dot(in.down), 0.0);
}

// T4: slipping when mu < 2/7 tan(theta): a = g (sin - mu cos), |P_T| = mu P_N.
TEST_P(InclineTest, SlipsBelowThreshold) {
  const auto [sub, method] = GetParam();
  const Real theta = 0.6, m = 0.8, r = 0.1;
  const Real mu = 0.1;  // 2/7 tan(0.6) = 0.195
  Incline in = makeIncline(theta, m, r, mu);
  ContactSolver solver(tightSettings(method, sub));
  const SolverStats st = in.s.solve(solver);
  EXPECT_TRUE(st.converged);
  const Real dt = in.s.dt;
  const Vec3 v = in.s.bodies.velocities()[1];
  EXPECT_NEAR(v.dot(in.down), kG * (std::sin(theta) - mu * std::cos(theta)) * dt, 1e-11);
  EXPECT_NEAR(v.dot(in.n), 0.0, 1e-11);
  const Vec3 p = solver.percussions()[0];
  EXPECT_NEAR(p.x(), m * kG * std::cos(theta) * dt, 1e-11);
  EXPECT_NEAR(p.tail<2>().norm(), mu * p.x(), 1e-11);
  // omega increment 5 mu g cos / (2 r) dt about the y axis.
  EXPECT_NEAR(std::abs(in.s.bodies.omegasBody()[1].y()),
              5.0 * mu * kG * std::cos(theta) / (2.0 * r) * dt, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(
    SubMethods, InclineTest,
    ::testing::Values(std::make_tuple(UcfSubMethod::AlartCurnier, SolverMethod::SorContact),
                      std::make_tuple(UcfSubMethod::DeSaxce, SolverMethod::SorContact),
                      std::make_tuple(UcfSubMethod::AlartCurnier, SolverMethod::Jor),
                      std::make_tuple(UcfSubMethod::DeSaxce, SolverMethod::Jor),
                      std::make_tuple(UcfSubMethod::AlartCurnier, SolverMethod::SorFull),
                      std::make_tuple(UcfSubMethod::AlartCurnier,
                                      SolverMethod::SorNormalTangential)));

// T6: a sphere hitting the floor with speed v leaves with eps_N v.
TEST(ContactSolverPhysics, RestitutionReflectsNormalVelocity) {
  for (Real eps : {0.0, 0.5, 1.0}) {
    SolverScene s;
    s.gravity.setZero();
    s.addFixed();
    s.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 0.1), Vec3(0.3, 0.0, -2.0));
    s.contacts.add(0, 1, Vec3::UnitZ(), -0.001, Vec3::Zero(), Vec3(0.0, 0.0, -0.1));
    s.setLaw(0.0, eps, 0.0);
    s.prepare();
    ContactSolver solver(tightSettings());
    s.solve(solver);
    const Vec3 v = s.bodies.velocities()[1];
    EXPECT_NEAR(v.z(), eps * 2.0, 1e-12) << eps;
    EXPECT_NEAR(v.x(), 0.3, 1e-14);  // frictionless
    EXPECT_NEAR(solver.percussions()[0].x(), (1.0 + eps) * 2.0, 1e-12);
  }
}

// T6 with gravity: b = eps W^T u^S, so gamma^E = -eps gamma^S (gravity does not enter).
TEST(ContactSolverPhysics, RestitutionUsesStartVelocity) {
  SolverScene s;
  s.addFixed();
  s.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 0.1), Vec3(0.0, 0.0, -1.5));
  s.contacts.add(0, 1, Vec3::UnitZ(), -0.001, Vec3::Zero(), Vec3(0.0, 0.0, -0.1));
  s.setLaw(0.2, 0.8, 0.0);
  s.prepare();
  ContactSolver solver(tightSettings());
  s.solve(solver);
  EXPECT_NEAR(s.bodies.velocities()[1].z(), 0.8 * 1.5, 1e-12);
}

/// Three touching balls along x, ball 0 moving at v towards the others.
SolverScene cradle(Real m, Real v, bool reversedContacts) {
  SolverScene s;
  s.gravity.setZero();
  const Real r = 0.05;
  for (int k = 0; k < 3; ++k) {
    s.addSphere(m, r, Vec3(2.0 * r * k, 0.0, 0.0), k == 0 ? Vec3(v, 0.0, 0.0) : Vec3::Zero());
  }
  const Vec3 ra(r, 0.0, 0.0);
  if (reversedContacts) {
    s.contacts.add(1, 2, Vec3::UnitX(), 0.0, ra, -ra);
    s.contacts.add(0, 1, Vec3::UnitX(), 0.0, ra, -ra);
  } else {
    s.contacts.add(0, 1, Vec3::UnitX(), 0.0, ra, -ra);
    s.contacts.add(1, 2, Vec3::UnitX(), 0.0, ra, -ra);
  }
  s.setLaw(0.0, 1.0, 1.0);
  s.prepare();
  return s;
}

// T7: u+ = (-v/3, 2v/3, 2v/3), Lambda_1 = 4mv/3, Lambda_2 = 2mv/3, for any contact order.
TEST(ContactSolverPhysics, NewtonCradleThreeBalls) {
  const Real m = 0.7, v = 1.3;
  for (bool reversed : {false, true}) {
    for (SolverMethod method : {SolverMethod::SorContact, SolverMethod::SorFull,
                                SolverMethod::SorNormalTangential, SolverMethod::Jor}) {
      SolverScene s = cradle(m, v, reversed);
      ContactSolver solver(tightSettings(method));
      const SolverStats st = s.solve(solver);
      EXPECT_TRUE(st.converged);
      const auto& u = s.bodies.velocities();
      EXPECT_NEAR(u[0].x(), -v / 3.0, 1e-10);
      EXPECT_NEAR(u[1].x(), 2.0 * v / 3.0, 1e-10);
      EXPECT_NEAR(u[2].x(), 2.0 * v / 3.0, 1e-10);
      const std::size_t c01 = reversed ? 1 : 0;
      EXPECT_NEAR(solver.percussions()[c01].x(), 4.0 * m * v / 3.0, 1e-10);
      EXPECT_NEAR(solver.percussions()[1 - c01].x(), 2.0 * m * v / 3.0, 1e-10);
      // Energy is conserved.
      EXPECT_NEAR(u[0].squaredNorm() + u[1].squaredNorm() + u[2].squaredNorm(), v * v, 1e-9);
    }
  }
}

// T8: stack of n spheres: P_N,k = k m g dt counted from the top, all v^E = 0.
TEST(ContactSolverPhysics, StackOfSpheres) {
  const int n = 8;
  const Real m = 0.3, r = 0.02;
  for (SolverMethod method : {SolverMethod::SorContact, SolverMethod::SorFull,
                              SolverMethod::SorNormalTangential, SolverMethod::Jor}) {
    SolverScene s;
    s.addFixed();
    for (int k = 0; k < n; ++k) {
      s.addSphere(m, r, Vec3(0.0, 0.0, r + 2.0 * r * k));
    }
    const Vec3 up(0.0, 0.0, r);
    s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), -up);
    for (int k = 1; k < n; ++k) {
      s.contacts.add(k, k + 1, Vec3::UnitZ(), 0.0, up, -up);
    }
    s.setLaw(0.5);
    s.prepare();
    ContactSolver solver(tightSettings(method));
    const SolverStats st = s.solve(solver);
    EXPECT_TRUE(st.converged) << toString(method);
    for (int c = 0; c < n; ++c) {
      EXPECT_NEAR(solver.percussions()[c].x(), (n - c) * m * kG * s.dt, 1e-11) << c;
    }
    for (int k = 1; k <= n; ++k) {
      EXPECT_NEAR(s.bodies.velocities()[k].norm(), 0.0, 1e-10);
    }
  }
}

// A rotated body with anisotropic inertia and a lever arm not parallel to the normal:
// compare with the thesis's K-frame Jacobian W_b = [A_IC ; A_KI (r x A_IC)] (eq. 7.21).
TEST(ContactSolverPhysics, MatchesBodyFrameJacobian) {
  SolverScene s;
  s.gravity = Vec3(0.0, 0.0, -9.81);
  s.addFixed();
  BodyDef d;
  d.id = makeBodyId(2, 0);
  d.mass = 2.0;
  d.inertiaBody = Vec3(0.02, 0.05, 0.03);
  d.orientation = quat::fromAxisAngle(Vec3(1.0, 2.0, -0.5), 0.7);
  d.velocity = Vec3(0.3, -0.1, -0.8);
  d.omegaBody = Vec3(1.0, -2.0, 0.5);
  s.bodies.add(d, 1.0);
  const Vec3 n = Vec3(0.1, -0.2, 1.0).normalized();
  const Vec3 rB(0.05, -0.12, -0.2);
  s.contacts.add(0, 1, n, -1e-4, Vec3::Zero(), rB);
  s.setLaw(0.0);
  s.prepare();
  const Vec3 vFree = s.bodies.velocities()[1];
  const Vec3 wFree = s.bodies.omegasBody()[1];

  InclusionSolverSettings set;
  set.alphaSorProx = 1.0;
  set.maxIter = 1;  // frictionless single contact with alpha = 1: exact in one sweep
  ContactSolver solver(set);
  s.solve(solver);

  // Reference with the K-frame Jacobian.
  const Mat3 aIK = d.orientation.toRotationMatrix();
  const Vec3 jRot = aIK.transpose() * rB.cross(n);  // A_KI (r x n)
  const Vec3 invTheta = d.inertiaBody.cwiseInverse();
  const Real gammaFree = n.dot(vFree) + jRot.dot(wFree);
  const Real gNN = 1.0 / d.mass + jRot.dot(invTheta.cwiseProduct(jRot));
  ASSERT_LT(gammaFree, 0.0);
  const Real pN = -gammaFree / gNN;
  EXPECT_NEAR(solver.percussions()[0].x(), pN, 1e-14);
  EXPECT_NEAR((s.bodies.velocities()[1] - (vFree + n * pN / d.mass)).norm(), 0.0, 1e-14);
  EXPECT_NEAR((s.bodies.omegasBody()[1] - (wFree + invTheta.cwiseProduct(jRot) * pN)).norm(), 0.0,
              1e-13);
}

// Two simulated rotated bodies with friction: at the converged solution the contact law holds
// (sticking: gamma^E = 0 with ||P_T|| <= mu P_N), for AC and DS alike.
TEST(ContactSolverPhysics, TwoRotatedBodiesStickingContact) {
  for (UcfSubMethod sub : {UcfSubMethod::AlartCurnier, UcfSubMethod::DeSaxce}) {
    SolverScene s;
    s.gravity.setZero();
    BodyDef d;
    d.id = makeBodyId(3, 0);
    d.mass = 1.0;
    d.inertiaBody = Vec3(0.01, 0.02, 0.015);
    d.orientation = quat::fromAxisAngle(Vec3(0.3, 1.0, 0.2), 0.4);
    d.velocity = Vec3(0.0, 0.0, 0.5);
    s.bodies.add(d, 1.0);
    d.id = makeBodyId(3, 1);
    d.mass = 3.0;
    d.inertiaBody = Vec3(0.05, 0.03, 0.04);
    d.orientation = quat::fromAxisAngle(Vec3(-1.0, 0.2, 0.7), 1.1);
    d.velocity = Vec3(0.02, 0.0, -0.5);
    d.omegaBody = Vec3(0.1, 0.0, 0.0);
    s.bodies.add(d, 1.0);
    const Vec3 n = Vec3(0.05, 0.02, 1.0).normalized();
    s.contacts.add(0, 1, n, 0.0, Vec3(0.02, 0.01, 0.1), Vec3(-0.03, 0.02, -0.1));
    s.setLaw(1.0);
    s.prepare();
    ContactSolver solver(tightSettings(SolverMethod::SorContact, sub));
    const SolverStats st = s.solve(solver);
    EXPECT_TRUE(st.converged);
    const Vec3 p = solver.percussions()[0];
    EXPECT_GT(p.x(), 0.0);
    EXPECT_LT(p.tail<2>().norm(), 1.0 * p.x());
    // Relative contact velocity at the end vanishes.
    const auto& b = s.bodies;
    auto pointVel = [&](std::size_t i, const Vec3& r) {
      return Vec3(b.velocities()[i] +
                  (b.orientations()[i].toRotationMatrix() * b.omegasBody()[i]).cross(r));
    };
    const Vec3 gamma = pointVel(1, s.contacts.rB()[0]) - pointVel(0, s.contacts.rA()[0]);
    EXPECT_NEAR(gamma.norm(), 0.0, 1e-10);
    // Momentum is conserved (no gravity, no static partner).
    const Vec3 mom = b.masses()[0] * b.velocities()[0] + b.masses()[1] * b.velocities()[1];
    EXPECT_NEAR((mom - Vec3(0.06, 0.0, -1.0)).norm(), 0.0, 1e-12);
  }
}

}  // namespace
}  // namespace grain
