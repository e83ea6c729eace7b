// SPDX-License-Identifier: MIT
#include <grain/core/collision/collision_detector.hpp>

namespace grain {

void CollisionDetector::detect(const BodyStorage&, const ShapeStore&, ContactStorage& contacts) {
  contacts.clear();
  stats_ = {};
}

}  // namespace grain
