// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

#include <grain/core/bodies/body_storage.hpp>

namespace grain {

/// Uniform gravitational field: acceleration `value` (m/s^2) along the unit `direction` (I).
struct GravityField {
  Real value = 9.81;
  Vec3 direction = -Vec3::UnitZ();
  Vec3 acceleration() const { return value * direction.normalized(); }
};

/// External forces acting on simulated bodies. Evaluated at the step midpoint t^M.
class ExternalForces {
 public:
  void addGravity(const GravityField& g);
  const std::vector<GravityField>& gravityFields() const { return gravity_; }
  /// Sum of all gravitational accelerations (m/s^2, I frame).
  Vec3 gravityAcceleration() const;

 private:
  std::vector<GravityField> gravity_;
};

}  // namespace grain
