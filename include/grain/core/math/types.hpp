// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include <Eigen/Core>
#include <Eigen/Geometry>

/// Basic numeric types of grain. Every length is in metres, every time in seconds,
/// every mass in kilograms unless a name or comment says otherwise.
namespace grain {

using Real = double;
using Vec3 = Eigen::Matrix<Real, 3, 1>;
using Vec4 = Eigen::Matrix<Real, 4, 1>;
using Mat3 = Eigen::Matrix<Real, 3, 3>;
/// Unit quaternion for the rotation body frame K -> inertial frame I (A_IK = q.toRotationMatrix()).
using Quat = Eigen::Quaternion<Real>;

}  // namespace grain
