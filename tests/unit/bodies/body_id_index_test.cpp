// SPDX-License-Identifier: MIT
// BodyIdIndex (BodyStorage's id -> index table): found, missing, after removal and after a
// migration (removals, additions, sortById), against a reference map.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/bodies/body_id_index.hpp>
#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/error.hpp>

namespace grain {
namespace {

BodyDef bodyWithId(BodyId id) {
  BodyDef d;
  d.id = id;
  d.mass = 1.0;
  d.inertiaBody = Vec3::Constant(0.1);
  d.position = Vec3(static_cast<Real>(bodyNumber(id)), static_cast<Real>(bodyGroup(id)), 0.0);
  return d;
}

/// indexOf agrees with the id column for every body, and finds none of `absent`.
void expectLookups(const BodyStorage& b, const std::vector<BodyId>& absent) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b.indexOf(b.ids()[i]), i) << formatBodyId(b.ids()[i]);
  }
  for (const BodyId id : absent) {
    ASSERT_FALSE(b.indexOf(id).has_value()) << formatBodyId(id);
  }
}

TEST(BodyIdIndex, FindsPresentAndNotMissing) {
  std::vector<BodyId> ids;
  BodyIdIndex index;
  EXPECT_FALSE(index.find(makeBodyId(0, 0), ids).has_value());  // empty table
  // Two groups with consecutive numbers (as scenes number them), growing the table on the way.
  for (std::uint32_t k = 0; k < 3000; ++k) {
    ids.push_back(makeBodyId(k % 2, k / 2));
    index.pushed(ids);
  }
  EXPECT_GE(index.slotCount(), 2 * ids.size());  // at most half full
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ASSERT_EQ(index.find(ids[i], ids), i);
  }
  EXPECT_FALSE(index.find(makeBodyId(0, 1500), ids).has_value());
  EXPECT_FALSE(index.find(makeBodyId(2, 0), ids).has_value());
  EXPECT_FALSE(index.find(makeBodyId(1, 0) + (BodyId{1} << 40), ids).has_value());
}

TEST(BodyIdIndex, AfterRemovalAndMigrationAgainstAReferenceMap) {
  BodyStorage b;
  std::map<BodyId, bool> present;  // reference: the ids in the storage
  for (std::uint32_t k = 0; k < 2000; ++k) {
    const BodyId id = makeBodyId(k % 3, k);
    b.add(bodyWithId(id), 0.1);
    present[id] = true;
  }
  std::mt19937 rng(21);
  std::vector<BodyId> gone;
  for (int round = 0; round < 40; ++round) {
    // Bodies leave (swap with the last) and arrive (appended, anywhere in id order), then the
    // storage is put in id order again, as a body exchange does.
    for (int k = 0; k < 60; ++k) {
      auto it = present.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % present.size()));
      const BodyId id = it->first;
      b.remove(id);
      present.erase(it);
      gone.push_back(id);
      EXPECT_FALSE(b.indexOf(id).has_value());
    }
    expectLookups(b, gone);
    for (int k = 0; k < 70; ++k) {
      const BodyId id = makeBodyId(rng() % 4, rng() % 5000);
      if (present.contains(id)) {
        EXPECT_THROW(b.add(bodyWithId(id), 0.1), Error);  // duplicates are refused
        continue;
      }
      b.add(bodyWithId(id), 0.1);
      present[id] = true;
      std::erase(gone, id);
    }
    expectLookups(b, gone);
    b.sortById();
    ASSERT_TRUE(b.sortedById());
    expectLookups(b, gone);
    ASSERT_EQ(b.size(), present.size());
    // Each body still has its own data after the moves.
    for (std::size_t i = 0; i < b.size(); ++i) {
      ASSERT_EQ(b.positions()[i], bodyWithId(b.ids()[i]).position);
    }
  }
  // Down to nothing and back.
  while (!present.empty()) {
    b.remove(present.begin()->first);
    present.erase(present.begin());
  }
  EXPECT_FALSE(b.indexOf(makeBodyId(0, 0)).has_value());
  b.add(bodyWithId(makeBodyId(5, 7)), 0.1);
  EXPECT_EQ(b.indexOf(makeBodyId(5, 7)), 0u);
  EXPECT_THROW(b.remove(makeBodyId(5, 8)), Error);
}

TEST(BodyIdIndex, AnIdChangedOutsideTheStorageIsAnErrorNotAHang) {
  BodyStorage b;
  for (std::uint32_t k = 0; k < 10; ++k) {
    b.add(bodyWithId(makeBodyId(0, k)), 0.1);
  }
  b.ids()[9] = makeBodyId(4, 4);  // the last body, which remove() moves into the hole
  EXPECT_FALSE(b.indexOf(makeBodyId(0, 9)).has_value());
  EXPECT_THROW(b.remove(makeBodyId(0, 0)), Error);
}

}  // namespace
}  // namespace grain
