// SPDX-License-Identifier: MIT
#include <cmath>

#include <grain/core/common/error.hpp>
#include <grain/core/timestepping/external_forces.hpp>

namespace grain {

void ExternalForces::addGravity(const GravityField& g) {
  GRAIN_REQUIRE(std::isfinite(g.value) && g.value >= 0.0, "gravity value must be >= 0");
  GRAIN_REQUIRE(g.direction.allFinite() && g.direction.norm() > 0.0,
                "gravity direction must be non-zero");
  gravity_.push_back(g);
}

Vec3 ExternalForces::gravityAcceleration() const {
  Vec3 a = Vec3::Zero();
  for (const auto& g : gravity_) {
    a += g.acceleration();
  }
  return a;
}

}  // namespace grain
