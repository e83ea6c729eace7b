// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/geometry/shapes.hpp>

/// Mass and principal inertia of homogeneous solids ("homogen" in scene files).
namespace grain {

struct MassProperties {
  Real mass = 0.0;                  ///< kg
  Vec3 inertiaBody = Vec3::Zero();  ///< principal moments about the K axes (kg m^2)
};

/// Volume (m^3) of a sphere, box or capsule; throws grain::Error for other shapes.
Real volume(const Shape& s);

/// Mass and inertia of the shape filled with `density` (kg/m^3) about its centre of mass,
/// in the body frame. Throws grain::Error for shapes without a finite volume.
MassProperties homogeneousMassProperties(const Shape& s, Real density);

/// Principal inertia (kg m^2) of the shape for a given total mass (kg).
Vec3 homogeneousInertia(const Shape& s, Real mass);

}  // namespace grain
