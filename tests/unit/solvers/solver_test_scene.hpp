// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/solvers/contact_solver.hpp>

namespace grain::test {

/// A hand-built contact problem: bodies with velocities u^S, contacts, parameters. prepare()
/// records u^S and adds the free-flight increment g dt to the simulated bodies, as the stepper
/// does before the solve.
struct SolverScene {
  BodyStorage bodies;
  ContactStorage contacts;
  ContactParameterMap parameters;
  std::vector<Vec3> velocityStart;
  std::vector<Vec3> omegaBodyStart;
  Real dt = 1e-3;
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);

  /// Solid sphere of mass m (kg) and radius r (m): Theta = 2/5 m r^2.
  std::size_t addSphere(Real m, Real r, const Vec3& position, const Vec3& velocity = Vec3::Zero(),
                        const Vec3& omegaBody = Vec3::Zero()) {
    BodyDef d;
    d.id = makeBodyId(1, static_cast<std::uint32_t>(bodies.size()));
    d.mass = m;
    d.inertiaBody = Vec3::Constant(0.4 * m * r * r);
    d.position = position;
    d.velocity = velocity;
    d.omegaBody = omegaBody;
    return bodies.add(d, r);
  }

  /// Static (or animated, with a prescribed velocity) body, e.g. a floor or a belt.
  std::size_t addFixed(BodyMotion motion = BodyMotion::Static, const Vec3& velocity = Vec3::Zero(),
                       const Vec3& omegaBody = Vec3::Zero()) {
    BodyDef d;
    d.id = makeBodyId(0, static_cast<std::uint32_t>(bodies.size()));
    d.motion = motion;
    d.velocity = velocity;
    d.omegaBody = omegaBody;
    return bodies.add(d, 1e30);
  }

  /// Records u^S and sets the velocities to the free velocity u^S + g dt (no gyroscopic term:
  /// the tests use spheres or bodies at rest).
  void prepare() {
    velocityStart = bodies.velocities();
    omegaBodyStart = bodies.omegasBody();
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies.isSimulated(i)) {
        bodies.velocities()[i] += dt * gravity;
      }
    }
  }

  /// Restores the free velocity (for solving the same problem again).
  void resetToFree() {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies.isSimulated(i)) {
        bodies.velocities()[i] = velocityStart[i] + dt * gravity;
        bodies.omegasBody()[i] = omegaBodyStart[i];
      }
    }
  }

  SolverStats solve(ContactSolver& solver, SplitBodyExchange* exchange = nullptr) {
    const ContactProblem problem{contacts, parameters, velocityStart, omegaBodyStart, dt};
    return solver.solve(bodies, problem, exchange);
  }

  /// UCF parameters with the given mu and restitutions as the standard.
  void setLaw(Real mu, Real epsN = 0.0, Real epsT = 0.0) {
    ContactParameter p;
    p.mu = mu;
    p.epsilonN = epsN;
    p.epsilonT = epsT;
    parameters.setStandard(p);
  }
};

/// Settings with tight tolerances for reference solutions.
inline InclusionSolverSettings tightSettings(SolverMethod method = SolverMethod::SorContact,
                                             UcfSubMethod sub = UcfSubMethod::AlartCurnier) {
  InclusionSolverSettings s;
  s.method = method;
  s.subMethodUcf = sub;
  s.absTol = 1e-14;
  s.relTol = 1e-12;
  s.maxIter = 20000;
  return s;
}

}  // namespace grain::test
