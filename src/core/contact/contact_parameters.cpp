// SPDX-License-Identifier: MIT
#include <cmath>

#include <grain/core/common/error.hpp>
#include <grain/core/contact/contact_parameters.hpp>

namespace grain {

void validateContactParameter(const ContactParameter& p) {
  GRAIN_REQUIRE(std::isfinite(p.mu) && p.mu >= 0.0, "mu must be >= 0");
  GRAIN_REQUIRE(p.epsilonN >= 0.0 && p.epsilonN <= 1.0, "epsilonN must be in [0, 1]");
  GRAIN_REQUIRE(p.epsilonT >= 0.0 && p.epsilonT <= 1.0, "epsilonT must be in [0, 1]");
  GRAIN_REQUIRE(std::isfinite(p.invDampingN) && p.invDampingN >= 0.0, "invDampingN must be >= 0");
  GRAIN_REQUIRE(std::isfinite(p.invDampingT) && p.invDampingT >= 0.0, "invDampingT must be >= 0");
  GRAIN_REQUIRE(std::isfinite(p.relativeStiffness) && p.relativeStiffness > 0.0,
                "relativeStiffness must be > 0");
  GRAIN_REQUIRE(std::isfinite(p.muRolling) && p.muRolling >= 0.0, "muRolling must be >= 0");
}

void ContactParameterMap::setStandard(const ContactParameter& p) {
  validateContactParameter(p);
  standard_ = p;
}

void ContactParameterMap::set(MaterialId m1, MaterialId m2, const ContactParameter& p) {
  validateContactParameter(p);
  pairs_[key(m1, m2)] = p;
}

const ContactParameter& ContactParameterMap::get(MaterialId m1, MaterialId m2) const {
  const auto it = pairs_.find(key(m1, m2));
  return it == pairs_.end() ? standard_ : it->second;
}

bool ContactParameterMap::hasRollingResistance() const {
  if (standard_.muRolling > 0.0) {
    return true;
  }
  for (const auto& [k, p] : pairs_) {
    if (p.muRolling > 0.0) {
      return true;
    }
  }
  return false;
}

}  // namespace grain
