// SPDX-License-Identifier: MIT
#include <grain/core/common/error.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>

namespace grain {

std::size_t DynamicsSystem::addBody(const BodyDef& def) {
  GRAIN_REQUIRE(def.shape < shapes.size(),
                "body " + formatBodyId(def.id) + ": shape index out of range");
  return bodies.add(def, boundingRadius(shapes[def.shape]));
}

void DynamicsSystem::compactShapes() {
  std::vector<char> used(shapes.size(), 0);
  for (const ShapeIndex s : bodies.shapes()) {
    used[s] = 1;
  }
  bodies.remapShapes(shapes.compact(used));
}

SystemEnergy computeEnergy(const DynamicsSystem& system) {
  SystemEnergy e;
  const auto& b = system.bodies;
  const Vec3 g = system.externalForces.gravityAcceleration();
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!b.isSimulated(i) || b.ownerships()[i] != BodyOwnership::Local) {
      continue;
    }
    const Real m = b.masses()[i];
    e.kineticTranslational += 0.5 * m * b.velocities()[i].squaredNorm();
    const Vec3& w = b.omegasBody()[i];
    e.kineticRotational += 0.5 * w.dot(b.inertiasBody()[i].cwiseProduct(w));
    e.potential -= m * g.dot(b.positions()[i]);
  }
  return e;
}

}  // namespace grain
