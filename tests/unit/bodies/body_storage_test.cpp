// SPDX-License-Identifier: MIT
// BodyStorage: id order after additions and removals (sortById), step-start columns, exact copies.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/bodies/body_storage.hpp>

namespace grain {
namespace {

BodyDef bodyWithId(BodyId id) {
  BodyDef d;
  d.id = id;
  d.mass = 1.0 + static_cast<Real>(id % 7);
  d.inertiaBody = Vec3::Constant(0.1 * d.mass);
  d.position = Vec3(static_cast<Real>(id), -static_cast<Real>(id), 0.5);
  d.velocity = Vec3(0.0, static_cast<Real>(id), 1.0);
  return d;
}

/// Every column still belongs to the body of its id, and indexOf finds every body.
void expectConsistent(const BodyStorage& b) {
  ASSERT_TRUE(b.sortedById());
  for (std::size_t i = 0; i < b.size(); ++i) {
    const BodyId id = b.ids()[i];
    ASSERT_EQ(b.indexOf(id), i);
    EXPECT_EQ(b.positions()[i], bodyWithId(id).position);
    EXPECT_EQ(b.velocities()[i], bodyWithId(id).velocity);
    EXPECT_EQ(b.velocitiesStart()[i], bodyWithId(id).velocity);
    EXPECT_EQ(b.masses()[i], bodyWithId(id).mass);
    EXPECT_EQ(b.invMasses()[i], 1.0 / bodyWithId(id).mass);
  }
}

TEST(BodyStorage, SortByIdAfterRandomAdditionsAndRemovals) {
  BodyStorage b;
  std::vector<BodyId> present;
  for (BodyId id = 0; id < 400; id += 2) {
    b.add(bodyWithId(id), 0.1);
    present.push_back(id);
  }
  EXPECT_FALSE(b.sortById());  // in order already
  std::mt19937 rng(5);
  for (int round = 0; round < 50; ++round) {
    // Remove a few (swap with last), add a few with ids anywhere (as an exchange does).
    for (int k = 0; k < 7 && !present.empty(); ++k) {
      const std::size_t at = rng() % present.size();
      b.remove(present[at]);
      present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
    }
    for (int k = 0; k < 9; ++k) {
      const BodyId id = rng() % 1000;
      if (std::find(present.begin(), present.end(), id) == present.end()) {
        b.add(bodyWithId(id), 0.1);
        present.push_back(id);
      }
    }
    b.sortById();
    expectConsistent(b);
    ASSERT_EQ(b.size(), present.size());
  }
  // A completely reversed storage sorts too.
  BodyStorage r;
  for (BodyId id = 100; id > 0; --id) {
    r.add(bodyWithId(id), 0.1);
  }
  EXPECT_TRUE(r.sortById());
  expectConsistent(r);
}

TEST(BodyStorage, UnitQuaternionsAreStoredBitForBit) {
  BodyStorage b;
  BodyDef d = bodyWithId(1);
  // A unit quaternion (to rounding) is kept exactly; normalising it again could change bits.
  d.orientation = Quat(0.3, 0.5, -0.1, 0.8).normalized();
  d.orientation.coeffs().x() = std::nextafter(d.orientation.x(), 1.0);
  b.add(d, 0.1);
  EXPECT_EQ(b.orientations()[0].coeffs(), d.orientation.coeffs());
  EXPECT_EQ(b.orientationsStart()[0].coeffs(), d.orientation.coeffs());
  // Far from unit: normalised.
  BodyDef e = bodyWithId(2);
  e.orientation = Quat(2.0, 0.0, 0.0, 0.0);
  b.add(e, 0.1);
  EXPECT_NEAR(b.orientations()[1].norm(), 1.0, 1e-15);
}

}  // namespace
}  // namespace grain
