// SPDX-License-Identifier: MIT
#include <cmath>

#include <Eigen/LU>

#include <grain/core/timestepping/gyroscopic.hpp>

namespace grain {

namespace {

/// Matrix [a]× with [a]× b = a × b.
Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return s;
}

}  // namespace

Vec3 gyroscopicOmegaUpdateNewton(const Vec3& omegaBody, const Vec3& inertiaBody, Real dt,
                                 int* iterations) {
  if (iterations != nullptr) {
    *iterations = 0;
  }
  // Unknown: the midpoint velocity m = (Ω⁰ + Ω¹)/2. With Ω¹ = 2m − Ω⁰ the equation becomes
  //   f(m) = 2 Θ (m − Ω⁰) + Δt m × (Θ m) = 0,
  //   f'(m) = 2 Θ + Δt ([m]× Θ − [Θ m]×).
  // Ω⁰ is a good first guess (the correction is O(Δt |Ω|)); Newton converges quadratically.
  const Mat3 theta = inertiaBody.asDiagonal();
  const Real scale = inertiaBody.cwiseProduct(omegaBody).norm();  // |L| (kg m²/s)
  if (scale == 0.0) {
    return omegaBody;
  }
  constexpr int kMaxNewton = 8;
  constexpr Real kRelTol = 1e-15;
  Vec3 m = omegaBody;
  for (int it = 0; it < kMaxNewton; ++it) {
    const Vec3 l = inertiaBody.cwiseProduct(m);
    const Vec3 f = 2.0 * inertiaBody.cwiseProduct(m - omegaBody) + dt * m.cross(l);
    const Mat3 jac = 2.0 * theta + dt * (skew(m) * theta - skew(l));
    const Vec3 delta = jac.partialPivLu().solve(f);
    m -= delta;
    if (iterations != nullptr) {
      *iterations = it + 1;
    }
    if (inertiaBody.cwiseProduct(delta).norm() <= kRelTol * scale) {
      break;
    }
  }
  return 2.0 * m - omegaBody;
}

}  // namespace grain
