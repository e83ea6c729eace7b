// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>

#include <grain/core/math/types.hpp>

/// Proximal maps (projections) onto the admissible percussion sets of one frictional contact
/// (thesis §6.2, §7.1.3). A percussion is written in the contact frame as P = (P_N, P_T1, P_T2)
/// (N s). All functions are branch-light inline code for the solver's inner loops.
namespace grain::prox {

/// Projection onto the non-negative reals R0+: max(x, 0) (thesis §7.1.1).
inline Real projectNonNegative(Real x) {
  return std::max(x, Real(0));
}

/// Euclidean projection of the tangential pair (x1, x2) onto the disk of radius `radius` >= 0
/// (thesis §7.1.2, C_T(r) = r B2). Modifies x1, x2 in place.
inline void projectDisk(Real& x1, Real& x2, Real radius) {
  const Real n2 = x1 * x1 + x2 * x2;
  if (n2 > radius * radius) {
    // n2 > radius^2 >= 0, so the square root is positive.
    const Real s = radius / std::sqrt(n2);
    x1 *= s;
    x2 *= s;
  }
}

/// Alart-Curnier (SNCF, thesis eq. 7.31) prox of x = P - R^-1 xi for one contact:
/// P_N = max(x_N, 0), then (P_T1, P_T2) = projection of x_T onto the disk of radius mu P_N,
/// using the NEW P_N.
inline Vec3 alartCurnier(const Vec3& x, Real mu) {
  Vec3 p;
  p.x() = projectNonNegative(x.x());
  p.y() = x.y();
  p.z() = x.z();
  projectDisk(p.y(), p.z(), mu * p.x());
  return p;
}

/// Euclidean projection of x = (x_N, x_T) onto the friction cone
/// K_mu = { P : ||P_T|| <= mu P_N } (thesis eq. 7.32):
///   ||x_T|| <= mu x_N, x_N >= 0  -> x          (inside the cone)
///   mu ||x_T|| + x_N <= 0        -> 0          (inside the polar cone)
///   otherwise                    -> (l, mu l x_T/||x_T||),  l = (x_N + mu ||x_T||)/(1 + mu^2).
/// (The test x_N >= 0 matters for mu = 0, x_T = 0, x_N < 0, where 0 <= mu x_N = -0 holds.)
inline Vec3 projectCone(const Vec3& x, Real mu) {
  const Real nT = std::sqrt(x.y() * x.y() + x.z() * x.z());
  if (nT <= mu * x.x() && x.x() >= 0.0) {
    return x;
  }
  if (mu * nT + x.x() <= 0.0) {
    return Vec3::Zero();
  }
  // Here nT > 0: nT = 0 would have been caught by one of the two tests above.
  const Real l = (x.x() + mu * nT) / (1.0 + mu * mu);
  const Real s = mu * l / nT;
  return Vec3(l, s * x.y(), s * x.z());
}

/// De Saxce shift of the contact velocity (thesis eq. 7.33, UNCF):
/// xi_N <- xi_N + mu ||xi_T||; the tangential components are unchanged.
inline Vec3 deSaxceShift(const Vec3& xi, Real mu) {
  return Vec3(xi.x() + mu * std::sqrt(xi.y() * xi.y() + xi.z() * xi.z()), xi.y(), xi.z());
}

}  // namespace grain::prox
