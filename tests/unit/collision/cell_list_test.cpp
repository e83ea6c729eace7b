// SPDX-License-Identifier: MIT
// CellList against brute force: every overlapping pair exactly once, box queries.
#include <algorithm>
#include <array>
#include <random>
#include <set>
#include <utility>

#include <gtest/gtest.h>

#include <grain/core/collision/cell_list.hpp>

namespace grain::collision {
namespace {

struct Items {
  std::vector<std::uint32_t> ids;
  std::vector<Vec3> centers;
  std::vector<Real> radii;
  std::vector<std::uint8_t> simulated;
};

/// n random polydisperse spheres (radii 0.3 .. 1) in a cube, every 7th one static; ids are
/// shuffled so that they do not follow the spatial order.
Items randomItems(int n, std::uint32_t seed, Real side) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> u(0.0, 1.0);
  Items it;
  for (int k = 0; k < n; ++k) {
    it.centers.emplace_back(side * u(rng), side * u(rng), side * u(rng));
    it.radii.push_back(0.3 + 0.7 * u(rng));
    it.simulated.push_back(k % 7 == 0 ? 0 : 1);
    it.ids.push_back(static_cast<std::uint32_t>(k));
  }
  std::shuffle(it.ids.begin(), it.ids.end(), rng);
  return it;
}

std::set<std::pair<std::uint32_t, std::uint32_t>> brutePairs(const Items& it) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> out;
  for (std::size_t i = 0; i < it.centers.size(); ++i) {
    for (std::size_t j = i + 1; j < it.centers.size(); ++j) {
      const Real rs = it.radii[i] + it.radii[j];
      if ((it.simulated[i] || it.simulated[j]) &&
          (it.centers[i] - it.centers[j]).squaredNorm() <= rs * rs) {
        out.emplace(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j));
      }
    }
  }
  return out;
}

void expectPairsMatch(const CellList& cl, const Items& it) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> got;
  std::size_t calls = 0;
  cl.forEachPair([&](std::uint32_t a, std::uint32_t b, bool simA, bool simB) {
    ++calls;
    EXPECT_EQ(simA, it.simulated[a] != 0);
    EXPECT_EQ(simB, it.simulated[b] != 0);
    got.emplace(std::min(a, b), std::max(a, b));
  });
  EXPECT_EQ(calls, got.size());  // no pair reported twice
  EXPECT_EQ(got, brutePairs(it));
}

TEST(CellList, DenseGridFindsEveryPairOnce) {
  const Items it = randomItems(3000, 3, 25.0);
  CellList cl;
  cl.build(it.ids, it.centers, it.radii, it.simulated, 2.0);
  EXPECT_TRUE(cl.dense());
  EXPECT_EQ(cl.reach(), 1);
  EXPECT_EQ(cl.size(), 3000u);
  expectPairsMatch(cl, it);
}

TEST(CellList, FineCellsUseAWiderReach) {
  const Items it = randomItems(2000, 4, 20.0);
  CellList cl;
  cl.build(it.ids, it.centers, it.radii, it.simulated, 0.7);
  EXPECT_EQ(cl.reach(), 3);
  expectPairsMatch(cl, it);
}

TEST(CellList, HashedGridWithFarOutlier) {
  Items it = randomItems(2000, 5, 20.0);
  it.centers.emplace_back(3e6, -2e5, 7e4);
  it.radii.push_back(0.5);
  it.simulated.push_back(1);
  it.ids.push_back(2000);
  CellList cl;
  cl.build(it.ids, it.centers, it.radii, it.simulated, 2.0);
  EXPECT_FALSE(cl.dense());
  expectPairsMatch(cl, it);
}

TEST(CellList, BuildInPartsGivesTheSameList) {
  // Built in 2, 3 and 5 parts (run here one after the other, in reverse order), a dense and a
  // hashed grid report the same pairs in the same order, and the same box queries, as built whole.
  for (const bool hashed : {false, true}) {
    Items it = randomItems(3000, 11, 25.0);
    if (hashed) {
      it.centers.emplace_back(3e6, -2e5, 7e4);
      it.radii.push_back(0.5);
      it.simulated.push_back(1);
      it.ids.push_back(3000);
    }
    const auto sphereOf = [&](std::uint32_t id) {
      return CellList::Sphere{it.centers[id], it.radii[id]};
    };
    auto listing = [](const CellList& cl) {
      std::vector<std::array<std::uint32_t, 4>> pairs;
      cl.forEachPair([&](std::uint32_t a, std::uint32_t b, bool simA, bool simB) {
        pairs.push_back({a, b, simA ? 1u : 0u, simB ? 1u : 0u});
      });
      cl.forEachInBox(Aabb{Vec3(3, 4, 5), Vec3(9, 8, 12)}, [&](std::uint32_t id, bool sim) {
        pairs.push_back({id, id, sim ? 1u : 0u, 2u});
      });
      return pairs;
    };
    CellList whole;
    whole.build(it.ids, sphereOf, it.simulated, 2.0);
    EXPECT_EQ(whole.dense(), !hashed);
    const auto reference = listing(whole);
    ASSERT_GT(reference.size(), 2000u);
    for (const std::size_t parts : {2u, 3u, 5u}) {
      CellList cl;
      cl.build(it.ids, sphereOf, it.simulated, 2.0, parts, [parts](const auto& part) {
        for (std::size_t t = parts; t-- > 0;) {
          part(t);
        }
      });
      EXPECT_EQ(cl.dense(), whole.dense());
      EXPECT_EQ(cl.cellSize(), whole.cellSize());
      EXPECT_EQ(listing(cl), reference) << parts << " parts, hashed " << hashed;
    }
  }
}

TEST(CellList, SubsetOfIdsAndEmptyList) {
  const Items all = randomItems(500, 6, 10.0);
  Items even;
  even.centers = all.centers;
  even.radii = all.radii;
  even.simulated = all.simulated;
  for (std::uint32_t id : all.ids) {
    if (id % 2 == 0) {
      even.ids.push_back(id);
    }
  }
  CellList cl;
  cl.build(even.ids, even.centers, even.radii, even.simulated, 2.0);
  std::size_t calls = 0;
  cl.forEachPair([&](std::uint32_t a, std::uint32_t b, bool, bool) {
    ++calls;
    EXPECT_EQ(a % 2, 0u);
    EXPECT_EQ(b % 2, 0u);
  });
  EXPECT_GT(calls, 0u);
  cl.build({}, even.centers, even.radii, even.simulated, 2.0);
  EXPECT_EQ(cl.size(), 0u);
  cl.forEachPair([&](std::uint32_t, std::uint32_t, bool, bool) { ADD_FAILURE(); });
}

TEST(CellList, BoxQueriesWalkOrScan) {
  for (const bool outlier : {false, true}) {
    Items it = randomItems(2000, 8, 20.0);
    if (outlier) {
      it.centers.emplace_back(-4e5, 0, 0);
      it.radii.push_back(1.0);
      it.simulated.push_back(1);
      it.ids.push_back(2000);
    }
    CellList cl;
    cl.build(it.ids, it.centers, it.radii, it.simulated, 2.0);
    std::mt19937 rng(9);
    std::uniform_real_distribution<Real> u(-2.0, 22.0);
    for (int q = 0; q < 40; ++q) {
      // Small boxes (cell walk) and boxes larger than the domain (linear scan).
      const Vec3 c(u(rng), u(rng), u(rng));
      const Vec3 h = q % 4 == 0 ? Vec3(50, 60, 40) : Vec3(1.5, 0.5, 2.5);
      const Aabb box = Aabb::fromCenterHalf(c, h);
      std::set<std::uint32_t> got;
      std::size_t calls = 0;
      cl.forEachInBox(box, [&](std::uint32_t id, bool sim) {
        ++calls;
        EXPECT_EQ(sim, it.simulated[id] != 0);
        got.insert(id);
      });
      EXPECT_EQ(calls, got.size());
      std::set<std::uint32_t> expected;
      for (std::uint32_t id : it.ids) {
        const Vec3 p = it.centers[id].cwiseMax(box.lo).cwiseMin(box.hi);
        if ((p - it.centers[id]).squaredNorm() <= it.radii[id] * it.radii[id]) {
          expected.insert(id);
        }
      }
      EXPECT_EQ(got, expected);
    }
  }
}

}  // namespace
}  // namespace grain::collision
