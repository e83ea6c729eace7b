// SPDX-License-Identifier: MIT
#include <algorithm>
#include <atomic>

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
                             std::vector<PercussionCacheKey>* scratch, int threads) {
  const std::size_t nc = contacts.size();
  const auto& ids = bodies.ids();
  keys.resize(nc);
  ordinal.resize(nc);
  // With threads > 1 each thread takes one of `parts` consecutive ranges of the keys; every pass
  // below gives the same bits on any number of ranges.
  const std::size_t parts = threads > 1 ? static_cast<std::size_t>(threads) : 1;
  auto rangeBegin = [&](std::size_t t) { return nc * t / parts; };
  forEachItem(parts, threads, [&](std::size_t t) {
    // Local bounds and pointers: the stores would otherwise make the compiler reload them.
    const std::uint32_t* const a = contacts.bodyA().data();
    const std::uint32_t* const b = contacts.bodyB().data();
    const BodyId* const id = ids.data();
    PercussionCacheKey* const key = keys.data();
    const std::size_t end = rangeBegin(t + 1);
    for (std::size_t c = rangeBegin(t); c < end; ++c) {
      const BodyId ia = id[a[c]];
      const BodyId ib = id[b[c]];
      key[c] = {std::min(ia, ib), std::max(ia, ib), static_cast<std::uint32_t>(c)};
    }
  });
  // The collision detector emits contacts by body index, which follows the ids in a distributed
  // run (bodies sorted by id), so the keys are often in order already, or in two ordered runs.
  bool sorted = true;
  if (parts > 1) {
    // Whether some range holds a key out of order (its predecessor may lie in the range before).
    std::atomic<bool> unsorted{false};
    forEachItem(parts, threads, [&](std::size_t t) {
      for (std::size_t k = std::max<std::size_t>(rangeBegin(t), 1); k < rangeBegin(t + 1); ++k) {
        if (LessKey{}(keys[k], keys[k - 1])) {
          unsorted.store(true, std::memory_order_relaxed);
          break;
        }
      }
    });
    sorted = !unsorted.load(std::memory_order_relaxed);
  }
  const auto firstRunEnd =
      sorted && parts > 1 ? keys.end() : std::is_sorted_until(keys.begin(), keys.end(), LessKey{});
  if (firstRunEnd != keys.end()) {
    if (scratch != nullptr && std::is_sorted(firstRunEnd, keys.end(), LessKey{})) {
      scratch->resize(nc);
      std::merge(keys.begin(), firstRunEnd, firstRunEnd, keys.end(), scratch->begin(), LessKey{});
      keys.swap(*scratch);
    } else {
      std::sort(keys.begin(), keys.end(), LessKey{});
    }
  }
  auto samePair = [&](std::size_t k) {
    return k > 0 && keys[k].lo == keys[k - 1].lo && keys[k].hi == keys[k - 1].hi;
  };
  forEachItem(parts, threads, [&](std::size_t t) {
    const std::size_t begin = rangeBegin(t);
    const std::size_t end = rangeBegin(t + 1);
    if (begin == end) {
      return;
    }
    // The ordinal of the range's first key: the keys of its pair just before it.
    std::uint32_t run = 0;
    for (std::size_t k = begin; samePair(k); --k) {
      ++run;
    }
    ordinal[keys[begin].contact] = run;
    for (std::size_t k = begin + 1; k < end; ++k) {
      run = samePair(k) ? run + 1 : 0;
      ordinal[keys[k].contact] = run;
    }
  });
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
