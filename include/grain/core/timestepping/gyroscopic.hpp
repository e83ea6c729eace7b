// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/math/types.hpp>

namespace grain {

/// Torque-free gyroscopic step of one rigid body in its body frame K.
///
/// Solves the implicit midpoint form of Euler's equation Θ Ω̇ = −Ω × (Θ Ω) over one step,
///
///     Θ (Ω¹ − Ω⁰) + Δt Ωᴹ × (Θ Ωᴹ) = 0,      Ωᴹ = (Ω⁰ + Ω¹)/2,
///
/// by Newton's method on Ωᴹ (converged to rounding, at most a few iterations), and returns Ω¹.
/// The midpoint rule keeps the two quadratic invariants of the free body, the kinetic energy
/// ½ Ωᵀ Θ Ω and |Θ Ω| = |L|, exactly up to the Newton tolerance, so a tumbling asymmetric body
/// neither gains nor loses energy (the explicit term Δt Θ⁻¹(−Ω⁰ × Θ Ω⁰) gains energy every step).
///
/// `omegaBody` Ω⁰ (rad/s, frame K), `inertiaBody` the principal moments Θ (kg m², all > 0),
/// `dt` the step Δt (s). Isotropic inertia (spheres) returns Ω⁰ at the cost of two inlined
/// comparisons: no call, no work.
inline Vec3 gyroscopicOmegaUpdate(const Vec3& omegaBody, const Vec3& inertiaBody, Real dt);

/// True when the principal moments are all equal (Ω × Θ Ω = 0 for every Ω).
inline bool isIsotropicInertia(const Vec3& inertiaBody) {
  return inertiaBody.x() == inertiaBody.y() && inertiaBody.y() == inertiaBody.z();
}

/// The Newton solve of gyroscopicOmegaUpdate() for anisotropic inertia (any inertia is valid).
/// Also returns the number of Newton iterations used in `iterations` if it is not null.
Vec3 gyroscopicOmegaUpdateNewton(const Vec3& omegaBody, const Vec3& inertiaBody, Real dt,
                                 int* iterations = nullptr);

inline Vec3 gyroscopicOmegaUpdate(const Vec3& omegaBody, const Vec3& inertiaBody, Real dt) {
  if (isIsotropicInertia(inertiaBody)) {
    return omegaBody;
  }
  return gyroscopicOmegaUpdateNewton(omegaBody, inertiaBody, dt);
}

}  // namespace grain
