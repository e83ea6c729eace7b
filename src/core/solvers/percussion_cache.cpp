// SPDX-License-Identifier: MIT
#include <algorithm>

#include <grain/core/solvers/percussion_cache.hpp>

#include "parallel_items.hpp"

namespace grain::detail {

namespace {

/// Key order: by pair (lo, hi), then by contact index. A function object, so the sort inlines it.
struct LessKey {
  bool operator()(const PercussionCacheKey& x, const PercussionCacheKey& y) const {
    if (x.lo != y.lo)
      return x.lo < y.lo;
    if (x.hi != y.hi)
      return x.hi < y.hi;
    return x.contact < y.contact;
  }
};

}  // namespace

void makePercussionCacheKeys(const BodyStorage& bodies, const ContactStorage& contacts,
                             std::vector<PercussionCacheKey>& keys,
                             std::vector<std::uint32_t>& ordinal,
                             std::vector<PercussionCacheKey>* scratch) {
  const std::size_t nc = contacts.size();
  const auto& ids = bodies.ids();
  keys.resize(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    const BodyId ia = ids[contacts.bodyA()[c]];
    const BodyId ib = ids[contacts.bodyB()[c]];
    keys[c] = {std::min(ia, ib), std::max(ia, ib), static_cast<std::uint32_t>(c)};
  }
  // The collision detector emits contacts by body index, which follows the ids in a distributed
  // run (bodies sorted by id), so the keys are often in order already, or in two ordered runs.
  const auto firstRunEnd = std::is_sorted_until(keys.begin(), keys.end(), LessKey{});
  if (firstRunEnd != keys.end()) {
    if (scratch != nullptr && std::is_sorted(firstRunEnd, keys.end(), LessKey{})) {
      scratch->resize(nc);
      std::merge(keys.begin(), firstRunEnd, firstRunEnd, keys.end(), scratch->begin(), LessKey{});
      keys.swap(*scratch);
    } else {
      std::sort(keys.begin(), keys.end(), LessKey{});
    }
  }
  ordinal.resize(nc);
  for (std::size_t k = 0; k < nc; ++k) {
    const bool samePair = k > 0 && keys[k].lo == keys[k - 1].lo && keys[k].hi == keys[k - 1].hi;
    ordinal[keys[k].contact] = samePair ? ordinal[keys[k - 1].contact] + 1 : 0;
  }
}

void makePercussionCache(const BodyStorage& bodies, const ContactStorage& contacts,
                         const std::vector<PercussionCacheKey>& keys,
                         const std::vector<std::uint32_t>& ordinal,
                         const std::vector<Vec3>& percussions,
                         std::vector<PercussionCacheEntry>& cache, int threads) {
  const auto& ids = bodies.ids();
  cache.resize(keys.size());
  auto entry = [&](std::size_t k) {
    const PercussionCacheKey& key = keys[k];
    const std::uint32_t c = key.contact;
    const Vec3& p = percussions[c];
    const Mat3 frame = contacts.frame(c);
    const Vec3 onB = frame.col(0) * p.x() + frame.col(1) * p.y() + frame.col(2) * p.z();
    const bool bIsHi = ids[contacts.bodyB()[c]] == key.hi;
    cache[k] = {key.lo, key.hi, ordinal[c], bIsHi ? onB : Vec3(-onB)};
  };
  forEachItem(keys.size(), threads, entry);
}

}  // namespace grain::detail
