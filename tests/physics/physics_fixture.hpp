// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <numbers>

#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/math/quaternion.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>

/// Small helpers to set up closed-form physics tests without scene files.
namespace grain::testing {

constexpr Real kPi = std::numbers::pi_v<Real>;
constexpr Real kG = 9.81;

/// A system with gravity kG along -z and one contact law for every pair.
inline DynamicsSystem makeSystem(Real mu, Real epsilonN, Real epsilonT = 0.0, Real g = kG) {
  DynamicsSystem sys;
  if (g > 0.0) {
    sys.externalForces.addGravity({g, -Vec3::UnitZ()});
  }
  ContactParameter p;
  p.mu = mu;
  p.epsilonN = epsilonN;
  p.epsilonT = epsilonT;
  sys.contactParameters.setStandard(p);
  return sys;
}

/// Adds a simulated homogeneous body of the given shape and mass; returns its index.
inline std::size_t addSimulated(DynamicsSystem& sys, std::uint32_t number, const Shape& shape,
                                Real mass, const Vec3& position,
                                const Quat& orientation = Quat::Identity(),
                                const Vec3& velocity = Vec3::Zero(),
                                const Vec3& omegaBody = Vec3::Zero()) {
  BodyDef d;
  d.id = makeBodyId(0, number);
  d.shape = sys.shapes.add(shape);
  d.mass = mass;
  d.inertiaBody = homogeneousInertia(shape, mass);
  d.position = position;
  d.orientation = orientation;
  d.velocity = velocity;
  d.omegaBody = omegaBody;
  return sys.addBody(d);
}

/// Adds a static body (group 1); returns its index.
inline std::size_t addStatic(DynamicsSystem& sys, std::uint32_t number, const Shape& shape,
                             const Vec3& position, const Quat& orientation = Quat::Identity()) {
  BodyDef d;
  d.id = makeBodyId(1, number);
  d.motion = BodyMotion::Static;
  d.shape = sys.shapes.add(shape);
  d.position = position;
  d.orientation = orientation;
  return sys.addBody(d);
}

/// Solver settings converging tightly (for comparisons with closed forms).
inline StepperSettings tightSettings(Real dt, SolverMethod method = SolverMethod::SorContact) {
  StepperSettings s;
  s.deltaT = dt;
  s.endTime = 1e9;
  s.solver.method = method;
  s.solver.alphaSorProx = 1.0;
  s.solver.alphaJorProx = 0.5;
  s.solver.maxIter = 20000;
  s.solver.absTol = 1e-14;
  s.solver.relTol = 1e-12;
  return s;
}

}  // namespace grain::testing
