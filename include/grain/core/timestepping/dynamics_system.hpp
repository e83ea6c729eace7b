// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/timestepping/external_forces.hpp>

namespace grain {

/// The whole mechanical system: bodies, their shapes, contact laws and external forces, and
/// the current time. This is what a scene file describes and what the stepper advances.
struct DynamicsSystem {
  ShapeStore shapes;
  BodyStorage bodies;
  ContactParameterMap contactParameters;
  ExternalForces externalForces;
  Real time = 0.0;  ///< s

  /// Adds a body using shape `def.shape`; its bounding radius is taken from the shape.
  std::size_t addBody(const BodyDef& def);
  /// Drops the shapes no body uses and renumbers the bodies' shapes (the order of the kept
  /// shapes is unchanged). Distributed runs call it when bodies leaving a process have left
  /// many unused shapes behind.
  void compactShapes();
};

/// Energies of the simulated bodies (J). Potential energy is relative to the origin in the
/// total gravitational field.
struct SystemEnergy {
  Real kineticTranslational = 0.0;
  Real kineticRotational = 0.0;
  Real potential = 0.0;
  Real kinetic() const { return kineticTranslational + kineticRotational; }
  Real total() const { return kinetic() + potential; }
};

SystemEnergy computeEnergy(const DynamicsSystem& system);

}  // namespace grain
