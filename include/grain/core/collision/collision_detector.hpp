// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/geometry/shapes.hpp>

namespace grain {

/// Counters of one detection pass.
struct CollisionStats {
  std::size_t candidatePairs = 0;  ///< pairs handed from the broad to the narrow phase
  std::size_t contacts = 0;        ///< contacts produced
};

/// Finds all contacts with g_N <= 0 between pairs of bodies of which at least one is
/// simulated (placeholder; the broad and narrow phase are defined in src/core/collision).
class CollisionDetector {
 public:
  void detect(const BodyStorage& bodies, const ShapeStore& shapes, ContactStorage& contacts);
  const CollisionStats& stats() const { return stats_; }

 private:
  CollisionStats stats_;
};

}  // namespace grain
