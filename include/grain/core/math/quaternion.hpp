// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>

#include <grain/core/math/types.hpp>

/// Quaternion kinematics of the Moreau stepper (thesis eqs. 3.7, 3.32, 4.32).
///
/// A body's orientation p is the unit quaternion of the rotation K -> I, so that
/// A_IK = R(p). The angular velocity Omega is given in the body frame K, hence
/// dp/dt = 1/2 p (x) (0, Omega_K) (multiplication from the right).
namespace grain::quat {

/// Time derivative of p for the body-frame angular velocity omegaBody: 1/2 p (x) (0, omega).
inline Vec4 derivativeCoeffs(const Quat& p, const Vec3& omegaBody) {
  const Quat w(0.0, omegaBody.x(), omegaBody.y(), omegaBody.z());
  const Quat d = p * w;
  return 0.5 * d.coeffs();  // (x, y, z, w) order of Eigen
}

/// Explicit update p + dt * 1/2 p (x) (0, omegaBody), normalised to unit length.
inline Quat integrateNormalized(const Quat& p, const Quat& pEval, const Vec3& omegaBody, Real dt) {
  Quat r;
  r.coeffs() = p.coeffs() + dt * derivativeCoeffs(pEval, omegaBody);
  r.normalize();
  return r;
}

/// Quaternion of a rotation by angleRad about axis (the axis need not be normalised).
inline Quat fromAxisAngle(const Vec3& axis, Real angleRad) {
  return Quat(Eigen::AngleAxis<Real>(angleRad, axis.normalized()));
}

/// Right-handed orthonormal tangents (t1, t2) of the unit normal n, chosen deterministically.
inline void makeTangents(const Vec3& n, Vec3& t1, Vec3& t2) {
  // Pick the coordinate axis least aligned with n, as in Frisvad-style constructions.
  if (std::abs(n.x()) < 0.57735) {
    t1 = Vec3(0.0, n.z(), -n.y());  // n x e_x
  } else {
    t1 = Vec3(-n.z(), 0.0, n.x());  // e_y x n
  }
  t1.normalize();
  t2 = n.cross(t1);
}

}  // namespace grain::quat
