// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <span>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/math/types.hpp>

/// The per-body stages of a Moreau step (thesis eqs. 8.6, 8.7, 8.9) as kernels over a range of
/// BodyStorage indices [begin, end). Each body is updated from its own data only, so a body
/// gives the same bits whatever range, process or storage position it is updated in.
namespace grain::stage {

/// A range of body indices [begin, end).
struct BodyRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// First half step for every local, non-static body: stores p^S in orientationsStart(), then
///   r^M = r^S + dt/2 v^S,   p^M = p^S + dt/2 F(p^S) Omega^S   (quaternion normalised).
/// Remote copies are skipped (their owner sends q^M).
void firstHalfStep(BodyStorage& bodies, BodyRange range, Real dt);

/// Free velocity for every simulated body (local and remote): stores u^S in velocitiesStart() and
/// omegasBodyStart(), then
///   v = v^S + dt (g + f_ext / m),   Omega from the implicit gyroscopic step of Omega^S
///   (gyroscopic.hpp: Theta (Omega - Omega^S) = -dt Omega x Theta Omega, energy-stable),
/// with g the gravity (m/s^2, I) and `bodyForce` (N, I, one per body index, or empty) the
/// external forces at t^M. Non-simulated bodies get their step-start velocities stored only.
void freeVelocity(BodyStorage& bodies, BodyRange range, Real dt, const Vec3& gravity,
                  std::span<const Vec3> bodyForce);

/// Second half step, symmetric form, for every local, non-static body:
///   r^E = r^M + dt/2 v^E,   p^E = p^S + dt/2 F(p^M) (Omega^S + Omega^E)   (normalised).
/// Animated bodies keep their prescribed velocity (Omega^S = Omega^E).
void secondHalfStep(BodyStorage& bodies, BodyRange range, Real dt);

/// The whole storage as a range.
inline BodyRange all(const BodyStorage& bodies) {
  return {0, bodies.size()};
}

}  // namespace grain::stage
