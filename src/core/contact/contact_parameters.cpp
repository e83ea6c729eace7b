// SPDX-License-Identifier: MIT
#include <grain/core/contact/contact_parameters.hpp>

namespace grain {

void validateContactParameter(const ContactParameter& p) {
  settings::checkBounds(p);
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
