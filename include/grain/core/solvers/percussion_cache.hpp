// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/solvers/solver_data.hpp>

/// The warm-start cache of the contact solvers (usePercussionCache): the percussions of the
/// previous solve as world vectors on the body with the larger id, keyed by (smaller body id,
/// larger body id, ordinal of the contact among the contacts of that pair in ContactStorage
/// order), sorted by key. Used by ContactSolver and by the local solvers in MoreauStepper, so
/// both keep (and restarts restore) the same cache.
namespace grain::detail {

/// The sorted keys of the current contacts and, per contact, its ordinal within its pair.
/// `scratch` (optional, kept by the caller between calls) lets two sorted runs of keys be merged
/// instead of sorted: the order of a distributed step, whose contacts at split bodies come first
/// (ContactProblem::splitContacts), each part in canonical order. With threads > 1 the keys are
/// formed, checked for order and numbered on that many threads (the same bits; the rare sort or
/// merge of unordered keys stays on one thread).
void makePercussionCacheKeys(const BodyStorage& bodies, const ContactStorage& contacts,
                             std::vector<PercussionCacheKey>& keys,
                             std::vector<std::uint32_t>& ordinal,
                             std::vector<PercussionCacheKey>* scratch = nullptr, int threads = 1);

/// Three-way comparison of (lo, hi, ordinal) with a cache entry.
inline int compareCacheEntry(BodyId lo, BodyId hi, std::uint32_t ord,
                             const PercussionCacheEntry& e) {
  if (lo != e.lo)
    return lo < e.lo ? -1 : 1;
  if (hi != e.hi)
    return hi < e.hi ? -1 : 1;
  if (ord != e.ordinal)
    return ord < e.ordinal ? -1 : 1;
  return 0;
}

/// Key order of cache entries (lo, hi, ordinal): the order of a sorted cache.
inline bool cacheEntryLess(const PercussionCacheEntry& a, const PercussionCacheEntry& b) {
  return compareCacheEntry(a.lo, a.hi, a.ordinal, b) < 0;
}

/// Calls found(c, p) for every contact c whose key is in `cache`, with the cached percussion on
/// body B of the contact expressed in its contact frame (N, T1, T2; N s), not projected. One
/// merge of the sorted keys keys[first, last) with the sorted cache, from the first entry not
/// below keys[first] (a binary search unless first is 0): the ranges of a partition of the keys
/// call found for the same contacts with the same p as the whole, and may run on different
/// threads (found then writes only what belongs to contact c).
template <class Found>
void forEachCachedPercussion(const BodyStorage& bodies, const ContactStorage& contacts,
                             const std::vector<PercussionCacheKey>& keys,
                             const std::vector<std::uint32_t>& ordinal,
                             const std::vector<PercussionCacheEntry>& cache, std::size_t first,
                             std::size_t last, Found&& found) {
  const auto& ids = bodies.ids();
  std::size_t e = 0;
  if (first > 0 && first < last) {
    const PercussionCacheKey& key = keys[first];
    const std::uint32_t ord = ordinal[key.contact];
    auto below = [&](const PercussionCacheEntry& x) {
      return compareCacheEntry(key.lo, key.hi, ord, x) > 0;
    };
    e = static_cast<std::size_t>(std::partition_point(cache.begin(), cache.end(), below) -
                                 cache.begin());
  }
  for (std::size_t k = first; k < last; ++k) {
    const PercussionCacheKey& key = keys[k];
    const std::uint32_t c = key.contact;
    const std::uint32_t ord = ordinal[c];
    while (e < cache.size() && compareCacheEntry(key.lo, key.hi, ord, cache[e]) > 0) {
      ++e;
    }
    if (e == cache.size()) {
      return;
    }
    if (compareCacheEntry(key.lo, key.hi, ord, cache[e]) != 0) {
      continue;
    }
    const bool bIsHi = ids[contacts.bodyB()[c]] == key.hi;
    const Vec3 onB = bIsHi ? cache[e].percussionOnHi : Vec3(-cache[e].percussionOnHi);
    const Mat3 frame = contacts.frame(c);
    const Vec3 p(frame.col(0).dot(onB), frame.col(1).dot(onB), frame.col(2).dot(onB));
    found(c, p);
  }
}

/// forEachCachedPercussion over all the keys, in key order.
template <class Found>
void forEachCachedPercussion(const BodyStorage& bodies, const ContactStorage& contacts,
                             const std::vector<PercussionCacheKey>& keys,
                             const std::vector<std::uint32_t>& ordinal,
                             const std::vector<PercussionCacheEntry>& cache, Found&& found) {
  forEachCachedPercussion(bodies, contacts, keys, ordinal, cache, 0, keys.size(),
                          std::forward<Found>(found));
}

/// The cache of the percussions (per contact, contact frame, N s) of the current contacts; with
/// threads > 1 its entries are written by that many threads (the same bits).
void makePercussionCache(const BodyStorage& bodies, const ContactStorage& contacts,
                         const std::vector<PercussionCacheKey>& keys,
                         const std::vector<std::uint32_t>& ordinal,
                         const std::vector<Vec3>& percussions,
                         std::vector<PercussionCacheEntry>& cache, int threads = 1);

}  // namespace grain::detail
