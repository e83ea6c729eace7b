// SPDX-License-Identifier: MIT
// The contact colouring: every contact is coloured once, no simulated body has two contacts of
// one regular colour, static bodies do not constrain the colouring, and the contacts a body
// cannot fit into the regular colours go to the overflow colour.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/contact/contact_colouring.hpp>

namespace grain {
namespace {

void addContact(ContactStorage& contacts, std::uint32_t a, std::uint32_t b) {
  contacts.add(a, b, Vec3::UnitZ(), -1e-6, Vec3::Zero(), Vec3::Zero());
}

/// Checks the colouring invariants of `colouring` for `contacts`; returns the overflow size.
std::size_t checkColouring(const ContactColouring& colouring, const ContactStorage& contacts,
                           const std::vector<bool>& simulated) {
  const std::size_t nc = contacts.size();
  EXPECT_EQ(colouring.size(), nc);
  EXPECT_EQ(colouring.order().size(), nc);
  EXPECT_EQ(colouring.offsets().size(), ContactColouring::kColourCount + 1u);
  EXPECT_EQ(colouring.offsets().front(), 0u);
  EXPECT_EQ(colouring.offsets().back(), nc);
  std::vector<int> seen(nc, 0);
  for (std::uint32_t k = 0; k < ContactColouring::kColourCount; ++k) {
    std::vector<int> uses(simulated.size(), 0);
    std::int64_t previous = -1;
    for (const std::uint32_t c : colouring.contactsOf(k)) {
      EXPECT_LT(c, nc);
      if (c >= nc) {
        continue;
      }
      ++seen[c];
      EXPECT_EQ(colouring.colours()[c], k) << "contact " << c;
      EXPECT_GT(static_cast<std::int64_t>(c), previous) << "colour " << k << " not ascending";
      previous = c;
      if (k == ContactColouring::kOverflow) {
        continue;
      }
      for (const std::uint32_t body : {contacts.bodyA()[c], contacts.bodyB()[c]}) {
        if (simulated[body]) {
          EXPECT_EQ(++uses[body], 1) << "simulated body " << body << " twice in colour " << k;
        }
      }
    }
  }
  for (std::size_t c = 0; c < nc; ++c) {
    EXPECT_EQ(seen[c], 1) << "contact " << c << " coloured " << seen[c] << " times";
  }
  return colouring.contactsOf(ContactColouring::kOverflow).size();
}

TEST(ContactColouring, RandomGraphHasNoSimulatedBodyTwiceInAColour) {
  // 2000 bodies, the first 20 static; 6000 random pairs.
  const std::uint32_t n = 2000;
  std::vector<bool> simulated(n, true);
  for (std::uint32_t i = 0; i < 20; ++i) {
    simulated[i] = false;
  }
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::uint32_t> body(0, n - 1);
  ContactStorage contacts;
  for (int k = 0; k < 6000; ++k) {
    const std::uint32_t a = body(rng);
    std::uint32_t b = body(rng);
    if (a == b) {
      b = (b + 1) % n;
    }
    addContact(contacts, a, b);
  }
  ContactColouring colouring;
  colouring.build(contacts, simulated);
  // Mean degree 6: greedy first fit needs far fewer colours than the regular ones.
  EXPECT_EQ(checkColouring(colouring, contacts, simulated), 0u);
  EXPECT_GT(colouring.contactsOf(0).size(), colouring.contactsOf(5).size());
}

TEST(ContactColouring, StaticBodiesDoNotConstrain) {
  // 100 simulated spheres on one static floor (body 0): one colour holds them all.
  std::vector<bool> simulated(101, true);
  simulated[0] = false;
  ContactStorage contacts;
  for (std::uint32_t i = 1; i <= 100; ++i) {
    addContact(contacts, 0, i);
  }
  // A contact between two static bodies constrains nothing either.
  simulated.push_back(false);
  addContact(contacts, 0, 101);
  ContactColouring colouring;
  colouring.build(contacts, simulated);
  EXPECT_EQ(checkColouring(colouring, contacts, simulated), 0u);
  EXPECT_EQ(colouring.contactsOf(0).size(), contacts.size());
}

TEST(ContactColouring, HubBodyOverflows) {
  // A simulated hub touching 100 simulated bodies: kOverflow regular colours, the rest overflow.
  std::vector<bool> simulated(101, true);
  ContactStorage contacts;
  for (std::uint32_t i = 1; i <= 100; ++i) {
    addContact(contacts, i, 0);
  }
  ContactColouring colouring;
  colouring.build(contacts, simulated);
  EXPECT_EQ(checkColouring(colouring, contacts, simulated), 100u - ContactColouring::kOverflow);
  for (std::uint32_t k = 0; k < ContactColouring::kOverflow; ++k) {
    EXPECT_EQ(colouring.contactsOf(k).size(), 1u) << "colour " << k;
  }
  // Rebuilding for other contacts starts afresh.
  ContactStorage few;
  addContact(few, 1, 2);
  addContact(few, 2, 3);
  colouring.build(few, simulated);
  EXPECT_EQ(checkColouring(colouring, few, simulated), 0u);
  EXPECT_EQ(colouring.colours()[0], 0u);
  EXPECT_EQ(colouring.colours()[1], 1u);
}

TEST(ContactColouring, BlocksKeepTheirContactsUncolouredAndApart) {
  // A chain of 1000 simulated bodies (contacts i - i+1 and i - i+7) and one static body (0) under
  // the first 50, cut into 3 blocks of consecutive indices holding about a third of the contacts
  // each (the first 50 bodies carry one contact more).
  const std::uint32_t n = 1001;
  std::vector<bool> simulated(n, true);
  simulated[0] = false;
  ContactStorage contacts;
  for (std::uint32_t i = 1; i <= 50; ++i) {
    addContact(contacts, 0, i);
  }
  for (std::uint32_t i = 1; i + 7 < n; ++i) {
    addContact(contacts, i, i + 1);
    addContact(contacts, i, i + 7);
  }
  const std::uint32_t blocks = 3;
  ContactColouring colouring;
  colouring.build(contacts, simulated, blocks);
  const std::size_t nc = contacts.size();
  const auto& blockOffsets = colouring.blockOffsets();
  ASSERT_EQ(blockOffsets.size(), blocks + 1u);
  EXPECT_EQ(blockOffsets.front(), 0u);
  EXPECT_EQ(colouring.offsets().front(), blockOffsets.back());
  EXPECT_EQ(colouring.offsets().back(), nc);
  const auto& starts = colouring.blockStarts();
  ASSERT_EQ(starts.size(), blocks + 1u);
  EXPECT_EQ(starts.front(), 0u);
  EXPECT_EQ(starts.back(), n);
  EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end()));
  auto blockOf = [&](std::uint32_t body) {
    return static_cast<std::uint32_t>(std::upper_bound(starts.begin() + 1, starts.end() - 1, body) -
                                      (starts.begin() + 1));
  };
  // Contacts per block, each counted at its first simulated body: a third each, to within the
  // three contacts of one body.
  std::vector<std::size_t> perBlock(blocks, 0);
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const std::uint32_t a = contacts.bodyA()[c];
    const std::uint32_t b = contacts.bodyB()[c];
    ++perBlock[blockOf(simulated[a] ? std::min(a, b) : b)];
  }
  for (std::uint32_t b = 0; b < blocks; ++b) {
    EXPECT_LE(std::abs(static_cast<double>(perBlock[b]) - contacts.size() / 3.0), 3.0)
        << "block " << b;
  }
  EXPECT_LT(starts[1], n / 3) << "the first block's extra contacts make it shorter";
  std::vector<int> seen(nc, 0);
  std::vector<int> owner(n, -1);  // the block that writes a simulated body
  for (std::uint32_t b = 0; b < blocks; ++b) {
    std::int64_t previous = -1;
    for (std::uint32_t j = blockOffsets[b]; j < blockOffsets[b + 1]; ++j) {
      const std::uint32_t c = colouring.order()[j];
      ASSERT_LT(c, nc);
      ++seen[c];
      EXPECT_GT(static_cast<std::int64_t>(c), previous) << "block " << b << " not ascending";
      previous = c;
      EXPECT_EQ(colouring.colours()[c], ContactColouring::kInBlock);
      for (const std::uint32_t body : {contacts.bodyA()[c], contacts.bodyB()[c]}) {
        if (simulated[body]) {
          EXPECT_EQ(blockOf(body), b) << "contact " << c;
          EXPECT_TRUE(owner[body] == -1 || owner[body] == static_cast<int>(b)) << "body " << body;
          owner[body] = static_cast<int>(b);
        }
      }
    }
    EXPECT_GT(blockOffsets[b + 1], blockOffsets[b]) << "block " << b << " empty";
  }
  // The contacts between blocks are coloured: no simulated body twice in a colour.
  std::size_t coloured = 0;
  for (std::uint32_t k = 0; k < ContactColouring::kColourCount; ++k) {
    std::vector<int> uses(n, 0);
    for (const std::uint32_t c : colouring.contactsOf(k)) {
      ++seen[c];
      ++coloured;
      EXPECT_EQ(colouring.colours()[c], k);
      EXPECT_NE(blockOf(contacts.bodyA()[c]), blockOf(contacts.bodyB()[c])) << "contact " << c;
      for (const std::uint32_t body : {contacts.bodyA()[c], contacts.bodyB()[c]}) {
        if (k != ContactColouring::kOverflow && simulated[body]) {
          EXPECT_EQ(++uses[body], 1) << "body " << body << " twice in colour " << k;
        }
      }
    }
  }
  for (std::size_t c = 0; c < nc; ++c) {
    EXPECT_EQ(seen[c], 1) << "contact " << c;
  }
  // Two cuts, each crossed by the chain's two kinds of contacts: 1 + 7 contacts per cut.
  EXPECT_EQ(coloured, 2u * 8u);
}

TEST(ContactColouring, ThreadsBuildTheSameBlocksAndColours) {
  // 3000 bodies (every 100th static), 24 000 contacts in no particular order: neighbours along
  // the indices (mostly inside a block), random pairs (many between blocks), a hub body with
  // 120 contacts (the overflow colour) and static-static pairs (in block 0). Built with the
  // contacts' passes on 1, 2 and 3 threads (one range of contacts each), the blocks and colours
  // are the same, bit for bit, for 2 and 3 blocks; a second build of the same input keeps them.
  const std::uint32_t n = 3000;
  std::vector<bool> simulated(n, true);
  for (std::uint32_t i = 0; i < n; i += 100) {
    simulated[i] = false;
  }
  std::mt19937 rng(21);
  std::uniform_int_distribution<std::uint32_t> body(0, n - 1);
  std::uniform_int_distribution<std::uint32_t> step(1, 12);
  ContactStorage contacts;
  for (int k = 0; k < 24000; ++k) {
    const std::uint32_t a = body(rng);
    std::uint32_t b = k % 4 == 0 ? body(rng) : (a + step(rng)) % n;
    if (k % 200 == 0) {
      b = a == 1234 ? 1235 : 1234;  // the hub
    }
    if (k % 1000 == 1) {
      b = (a / 100) * 100;  // a static body, itself static when a is a multiple of 100
    }
    if (a != b) {
      addContact(contacts, a, b);
    }
  }
  for (const std::uint32_t blocks : {2u, 3u}) {
    ContactColouring serial;
    serial.build(contacts, simulated, blocks, 1);
    ASSERT_GT(serial.blockOffsets().back(), contacts.size() / 2) << "blocks " << blocks;
    ASSERT_GT(serial.contactsOf(ContactColouring::kOverflow).size(), 0u) << "blocks " << blocks;
    for (const std::uint32_t threads : {2u, 3u}) {
      ContactColouring threaded;
      for (int round = 0; round < 2; ++round) {
        threaded.build(contacts, simulated, blocks, threads);
        EXPECT_EQ(threaded.reused(), round == 1);
        EXPECT_EQ(threaded.colours(), serial.colours()) << blocks << " blocks, " << threads;
        EXPECT_EQ(threaded.order(), serial.order()) << blocks << " blocks, " << threads;
        EXPECT_EQ(threaded.offsets(), serial.offsets()) << blocks << " blocks, " << threads;
        EXPECT_EQ(threaded.blockOffsets(), serial.blockOffsets()) << blocks << " blocks";
        EXPECT_EQ(threaded.blockStarts(), serial.blockStarts()) << blocks << " blocks";
      }
    }
  }
}

TEST(ContactColouring, TheSameContactsKeepTheColouringAndAnyChangeRebuildsIt) {
  // 400 bodies, 1600 contacts between near indices (a pile's graph), 2 blocks. A build on the
  // input of the last one keeps its colouring; a changed pair, simulated flag, contact order or
  // block count rebuilds it, as a fresh object builds it, and the first input rebuilds it again.
  const std::uint32_t n = 400;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> body(0, n - 1);
  std::uniform_int_distribution<std::uint32_t> step(1, 9);
  for (int k = 0; k < 1600; ++k) {
    const std::uint32_t a = body(rng);
    pairs.emplace_back(a, (a + step(rng)) % n);
  }
  auto storage = [](const std::vector<std::pair<std::uint32_t, std::uint32_t>>& list) {
    ContactStorage contacts;
    for (const auto& [a, b] : list) {
      addContact(contacts, a, b);
    }
    return contacts;
  };
  const std::vector<bool> all(n, true);
  std::vector<bool> oneStatic = all;
  oneStatic[200] = false;
  auto changedPair = pairs;
  changedPair[800].second = (changedPair[800].second + 1) % n;
  auto swapped = pairs;
  std::swap(swapped[10], swapped[11]);
  struct Input {
    const std::vector<std::pair<std::uint32_t, std::uint32_t>>* pairs;
    const std::vector<bool>* simulated;
    std::uint32_t blocks;
    bool reused;
  };
  const Input inputs[] = {{&pairs, &all, 2, false},        {&pairs, &all, 2, true},
                          {&changedPair, &all, 2, false},  {&changedPair, &all, 2, true},
                          {&pairs, &all, 2, false},        {&pairs, &oneStatic, 2, false},
                          {&pairs, &oneStatic, 3, false},  {&swapped, &oneStatic, 3, false},
                          {&swapped, &oneStatic, 3, true}, {&pairs, &all, 2, false}};
  ContactColouring kept;
  int k = 0;
  for (const Input& in : inputs) {
    SCOPED_TRACE("input " + std::to_string(k++));
    const ContactStorage contacts = storage(*in.pairs);
    kept.build(contacts, *in.simulated, in.blocks, 2);
    EXPECT_EQ(kept.reused(), in.reused);
    ContactColouring fresh;
    fresh.build(contacts, *in.simulated, in.blocks, 2);
    EXPECT_FALSE(fresh.reused());
    EXPECT_EQ(kept.colours(), fresh.colours());
    EXPECT_EQ(kept.order(), fresh.order());
    EXPECT_EQ(kept.offsets(), fresh.offsets());
    EXPECT_EQ(kept.blockOffsets(), fresh.blockOffsets());
    EXPECT_EQ(kept.blockStarts(), fresh.blockStarts());
  }
}

TEST(ContactColouring, NoContacts) {
  ContactColouring colouring;
  colouring.build(ContactStorage{}, std::vector<bool>(3, true));
  EXPECT_EQ(colouring.size(), 0u);
  EXPECT_EQ(colouring.offsets().back(), 0u);
}

}  // namespace
}  // namespace grain
