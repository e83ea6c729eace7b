// SPDX-License-Identifier: MIT
#include <algorithm>

#include <grain/core/solvers/percussion_cache.hpp>

namespace grain::detail {

namespace {

bool lessKey(const PercussionCacheKey& x, const PercussionCacheKey& y) {
  if (x.lo != y.lo)
    return x.lo < y.lo;
  if (x.hi != y.hi)
    return x.hi < y.hi;
  return x.contact < y.contact;
}

}  // namespace

void makePercussionCacheKeys(const BodyStorage& bodies, const ContactStorage& contacts,
                             std::vector<PercussionCacheKey>& keys,
                             std::vector<std::uint32_t>& ordinal) {
  const std::size_t nc = contacts.size();
  const auto& ids = bodies.ids();
  keys.resize(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    const BodyId ia = ids[contacts.bodyA()[c]];
    const BodyId ib = ids[contacts.bodyB()[c]];
    keys[c] = {std::min(ia, ib), std::max(ia, ib), static_cast<std::uint32_t>(c)};
  }
  std::sort(keys.begin(), keys.end(), lessKey);
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
                         std::vector<PercussionCacheEntry>& cache) {
  const auto& ids = bodies.ids();
  cache.clear();
  for (const auto& key : keys) {
    const std::uint32_t c = key.contact;
    const Vec3& p = percussions[c];
    const Mat3 frame = contacts.frame(c);
    const Vec3 onB = frame.col(0) * p.x() + frame.col(1) * p.y() + frame.col(2) * p.z();
    const bool bIsHi = ids[contacts.bodyB()[c]] == key.hi;
    cache.push_back({key.lo, key.hi, ordinal[c], bIsHi ? onB : Vec3(-onB)});
  }
}

}  // namespace grain::detail
