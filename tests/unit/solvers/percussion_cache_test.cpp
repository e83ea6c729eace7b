// SPDX-License-Identifier: MIT
// The warm-start cache on threads: the keys and ordinals formed on 2 and 3 threads, and the
// lookup of the cached percussions split into ranges of the keys, give what one thread gives.
#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/solvers/percussion_cache.hpp>

namespace grain {
namespace {

/// 600 bodies, and contacts between them with up to three points each (manifolds): pairs along
/// the index and random pairs, in the keys' order or shuffled.
struct Scene {
  BodyStorage bodies;
  ContactStorage contacts;
};

Scene makeScene(std::uint32_t seed, bool shuffle) {
  Scene s;
  std::mt19937 rng(seed);
  for (std::uint32_t i = 0; i < 600; ++i) {
    BodyDef d;
    d.id = makeBodyId(1, 599 - i);  // ids against the index order: B is the larger id or not
    d.mass = 1.0;
    d.inertiaBody = Vec3::Ones();
    s.bodies.add(d, 0.1);
  }
  std::uniform_int_distribution<std::uint32_t> body(0, 599);
  std::uniform_int_distribution<int> points(1, 3);
  std::uniform_real_distribution<Real> uni(-1.0, 1.0);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::uint32_t a = 0; a + 1 < 600; ++a) {
    pairs.emplace_back(a, a + 1);
    const std::uint32_t b = body(rng);
    if (b != a) {
      pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
  }
  if (shuffle) {
    std::shuffle(pairs.begin(), pairs.end(), rng);
  } else {
    // By id pair: the keys come in order.
    std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
      return std::make_pair(599 - x.second, 599 - x.first) <
             std::make_pair(599 - y.second, 599 - y.first);
    });
  }
  for (const auto& [a, b] : pairs) {
    for (int k = points(rng); k > 0; --k) {
      const Vec3 n = Vec3(uni(rng), uni(rng), 1.0).normalized();
      s.contacts.add(a, b, n, -1e-6, Vec3(uni(rng), uni(rng), uni(rng)), Vec3::Zero());
    }
  }
  return s;
}

/// (contact, percussion) of every contact found in `cache`, the keys split into `ranges`.
std::vector<std::pair<std::uint32_t, Vec3>> lookUp(
    const Scene& s, const std::vector<detail::PercussionCacheEntry>& cache, int threads,
    std::size_t ranges) {
  std::vector<detail::PercussionCacheKey> keys;
  std::vector<std::uint32_t> ordinal;
  std::vector<detail::PercussionCacheKey> scratch;
  detail::makePercussionCacheKeys(s.bodies, s.contacts, keys, ordinal, &scratch, threads);
  std::vector<std::pair<std::uint32_t, Vec3>> found;
  auto add = [&](std::uint32_t c, const Vec3& p) { found.emplace_back(c, p); };
  for (std::size_t r = 0; r < ranges; ++r) {
    detail::forEachCachedPercussion(s.bodies, s.contacts, keys, ordinal, cache,
                                    keys.size() * r / ranges, keys.size() * (r + 1) / ranges, add);
  }
  return found;
}

TEST(PercussionCache, ThreadsAndRangesFindTheSamePercussions) {
  // Last step's cache from one scene, looked up by another with some of the same pairs and other
  // manifold sizes, its contacts in order or shuffled (the keys then sorted).
  const Scene previous = makeScene(1, false);
  std::vector<detail::PercussionCacheKey> keys;
  std::vector<std::uint32_t> ordinal;
  detail::makePercussionCacheKeys(previous.bodies, previous.contacts, keys, ordinal);
  std::vector<Vec3> percussions(previous.contacts.size());
  std::mt19937 rng(3);
  std::uniform_real_distribution<Real> uni(-1.0, 1.0);
  for (Vec3& p : percussions) {
    p = Vec3(uni(rng), uni(rng), uni(rng));
  }
  std::vector<detail::PercussionCacheEntry> cache;
  detail::makePercussionCache(previous.bodies, previous.contacts, keys, ordinal, percussions,
                              cache);
  std::vector<detail::PercussionCacheEntry> threaded;
  detail::makePercussionCache(previous.bodies, previous.contacts, keys, ordinal, percussions,
                              threaded, 3);
  ASSERT_EQ(threaded.size(), cache.size());
  for (std::size_t k = 0; k < cache.size(); ++k) {
    EXPECT_EQ(
        detail::compareCacheEntry(threaded[k].lo, threaded[k].hi, threaded[k].ordinal, cache[k]),
        0);
    EXPECT_EQ(threaded[k].percussionOnHi, cache[k].percussionOnHi) << "entry " << k;
  }
  for (const bool shuffle : {false, true}) {
    const Scene now = makeScene(2, shuffle);
    const auto reference = lookUp(now, cache, 1, 1);
    ASSERT_GT(reference.size(), now.contacts.size() / 4) << "shuffle " << shuffle;
    ASSERT_LT(reference.size(), now.contacts.size()) << "shuffle " << shuffle;
    for (const int threads : {1, 2, 3}) {
      std::vector<detail::PercussionCacheKey> k1;
      std::vector<std::uint32_t> o1;
      std::vector<detail::PercussionCacheKey> kt;
      std::vector<std::uint32_t> ot;
      detail::makePercussionCacheKeys(now.bodies, now.contacts, k1, o1);
      detail::makePercussionCacheKeys(now.bodies, now.contacts, kt, ot, nullptr, threads);
      EXPECT_EQ(ot, o1) << "shuffle " << shuffle << ", threads " << threads;
      ASSERT_EQ(kt.size(), k1.size());
      for (std::size_t k = 0; k < k1.size(); ++k) {
        EXPECT_EQ(kt[k].contact, k1[k].contact) << "key " << k;
        if (!shuffle) {
          EXPECT_EQ(k1[k].contact, k) << "the contacts come in the keys' order";
        }
      }
      for (const std::size_t ranges : {2u, 3u, 7u}) {
        const auto found = lookUp(now, cache, threads, ranges);
        ASSERT_EQ(found.size(), reference.size()) << threads << " threads, " << ranges;
        for (std::size_t k = 0; k < found.size(); ++k) {
          EXPECT_EQ(found[k].first, reference[k].first) << k;
          EXPECT_EQ(found[k].second, reference[k].second) << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace grain
