// SPDX-License-Identifier: MIT
#include <grain/core/math/quaternion.hpp>
#include <grain/core/timestepping/gyroscopic.hpp>
#include <grain/core/timestepping/stage_kernels.hpp>

namespace grain::stage {

void firstHalfStep(BodyStorage& bodies, BodyRange range, Real dt) {
  const Real halfDt = 0.5 * dt;
  auto& r = bodies.positions();
  auto& p = bodies.orientations();
  auto& pStart = bodies.orientationsStart();
  const auto& v = bodies.velocities();
  const auto& w = bodies.omegasBody();
  const auto& motion = bodies.motions();
  const auto& ownership = bodies.ownerships();
  for (std::size_t i = range.begin; i < range.end; ++i) {
    if (motion[i] == BodyMotion::Static || ownership[i] != BodyOwnership::Local) {
      continue;
    }
    pStart[i] = p[i];
    r[i] += halfDt * v[i];
    p[i] = quat::integrateNormalized(p[i], p[i], w[i], halfDt);
  }
}

void freeVelocity(BodyStorage& bodies, BodyRange range, Real dt, const Vec3& gravity,
                  std::span<const Vec3> bodyForce) {
  auto& v = bodies.velocities();
  auto& w = bodies.omegasBody();
  auto& vStart = bodies.velocitiesStart();
  auto& wStart = bodies.omegasBodyStart();
  const auto& invMass = bodies.invMasses();
  const auto& inertia = bodies.inertiasBody();
  const auto& motion = bodies.motions();
  const bool withBodyForces = !bodyForce.empty();
  for (std::size_t i = range.begin; i < range.end; ++i) {
    vStart[i] = v[i];
    wStart[i] = w[i];
    if (motion[i] != BodyMotion::Simulated) {
      continue;
    }
    v[i] += dt * gravity;
    if (withBodyForces) {
      v[i] += (dt * invMass[i]) * bodyForce[i];
    }
    w[i] = gyroscopicOmegaUpdate(w[i], inertia[i], dt);
  }
}

void secondHalfStep(BodyStorage& bodies, BodyRange range, Real dt) {
  const Real halfDt = 0.5 * dt;
  auto& r = bodies.positions();
  auto& p = bodies.orientations();
  const auto& pStart = bodies.orientationsStart();
  const auto& v = bodies.velocities();
  const auto& w = bodies.omegasBody();
  const auto& wStart = bodies.omegasBodyStart();
  const auto& motion = bodies.motions();
  const auto& ownership = bodies.ownerships();
  for (std::size_t i = range.begin; i < range.end; ++i) {
    if (motion[i] == BodyMotion::Static || ownership[i] != BodyOwnership::Local) {
      continue;
    }
    const bool simulated = motion[i] == BodyMotion::Simulated;
    const Vec3 wSum = simulated ? Vec3(wStart[i] + w[i]) : Vec3(2.0 * w[i]);
    r[i] += halfDt * v[i];
    p[i] = quat::integrateNormalized(pStart[i], p[i], wSum, halfDt);
  }
}

}  // namespace grain::stage
