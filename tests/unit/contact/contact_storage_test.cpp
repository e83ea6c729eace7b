// SPDX-License-Identifier: MIT
// ContactStorage::moveToFront: the flagged contacts first, both groups in their order, every
// field of a contact moved with it.
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/contact/contact_storage.hpp>

namespace grain {
namespace {

/// Contact c between bodies c and c + 100, its gap and lever arms c-dependent.
ContactStorage numbered(std::size_t n) {
  ContactStorage s;
  for (std::size_t c = 0; c < n; ++c) {
    const Real x = static_cast<Real>(c);
    const Vec3 normal = Vec3(1.0, x, 0.0).normalized();
    s.add(static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c + 100), normal, -x,
          Vec3(x, 0.0, 0.0), Vec3(0.0, x, 0.0));
  }
  return s;
}

TEST(ContactStorage, MoveToFrontKeepsBothGroupsInOrder) {
  const ContactStorage before = numbered(7);
  ContactStorage s = numbered(7);
  const std::vector<char> first{0, 1, 0, 0, 1, 1, 0};
  ASSERT_EQ(s.moveToFront(first), 3u);
  const std::vector<std::uint32_t> order{1, 4, 5, 0, 2, 3, 6};
  ASSERT_EQ(s.size(), order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::uint32_t c = order[k];
    EXPECT_EQ(s.bodyA()[k], before.bodyA()[c]);
    EXPECT_EQ(s.bodyB()[k], before.bodyB()[c]);
    EXPECT_EQ(s.normals()[k], before.normals()[c]);
    EXPECT_EQ(s.tangent1(k), before.tangent1(c));
    EXPECT_EQ(s.tangent2(k), before.tangent2(c));
    EXPECT_EQ(s.gaps()[k], before.gaps()[c]);
    EXPECT_EQ(s.rA()[k], before.rA()[c]);
    EXPECT_EQ(s.rB()[k], before.rB()[c]);
  }
  // Again, with other flags: the buffers are reused and the result is right.
  const std::vector<char> last{0, 0, 0, 0, 0, 0, 1};
  ASSERT_EQ(s.moveToFront(last), 1u);
  EXPECT_EQ(s.bodyA()[0], 6u);
  EXPECT_EQ(s.bodyA()[1], 1u);
  EXPECT_EQ(s.gaps()[0], -6.0);
}

TEST(ContactStorage, MoveToFrontOfNoneOrAllChangesNothing) {
  const ContactStorage before = numbered(4);
  ContactStorage s = numbered(4);
  EXPECT_EQ(s.moveToFront(std::vector<char>(4, 0)), 0u);
  EXPECT_EQ(s.bodyA(), before.bodyA());
  EXPECT_EQ(s.moveToFront(std::vector<char>(4, 1)), 4u);
  EXPECT_EQ(s.bodyA(), before.bodyA());
  EXPECT_EQ(s.gaps(), before.gaps());
}

}  // namespace
}  // namespace grain
