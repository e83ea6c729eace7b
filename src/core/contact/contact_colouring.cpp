// SPDX-License-Identifier: MIT
#include <algorithm>
#include <atomic>
#include <bit>

#include <grain/core/contact/contact_colouring.hpp>

#include "../solvers/parallel_items.hpp"

namespace grain {

void ContactColouring::build(const ContactStorage& contacts, const std::vector<bool>& simulated,
                             std::uint32_t blocks, std::uint32_t threads) {
  const std::size_t nc = contacts.size();
  const std::size_t nb = simulated.size();
  const auto& a = contacts.bodyA();
  const auto& b = contacts.bodyB();
  // The same contacts (pairs in the same order), bodies and blocks as the last build give the
  // same colouring: a settled pile keeps its contact graph from step to step.
  reused_ = built_ && blocks == builtBlocks_ && a == builtA_ && b == builtB_ &&
            simulated == builtSimulated_;
  if (reused_) {
    return;
  }
  builtA_ = a;
  builtB_ = b;
  builtSimulated_ = simulated;
  builtBlocks_ = blocks;
  built_ = true;
  const std::uint32_t nBlocks = blocks > 1 ? blocks : 0;
  // With blocks, the passes over the contacts run on `threads` threads, each over one of `parts`
  // consecutive ranges of the contacts; only the colouring of the contacts between blocks, a
  // greedy pass in ContactStorage order, stays on one thread. The same bits on any number of
  // parts.
  const std::size_t parts = nBlocks > 0 && threads > 1 ? threads : 1;
  const int team = static_cast<int>(parts);
  auto partBegin = [&](std::size_t t) { return nc * t / parts; };
  colour_.resize(nc);
  offsets_.assign(kColourCount + 1, 0);
  blockOffsets_.assign(std::max<std::uint32_t>(nBlocks, 1) + 1, 0);
  // The cuts: block k starts at the first body before which k/B of the contacts lie, each
  // contact counted at its first simulated body (bodyColours_ holds the counts meanwhile).
  blockStart_.assign(std::max<std::uint32_t>(nBlocks, 1) + 1, static_cast<std::uint32_t>(nb));
  blockStart_[0] = 0;
  if (nBlocks > 0) {
    bodyColours_.assign(nb, 0);
    partCounts_.assign(parts * nBlocks, 0);
    detail::forEachItem(parts, team, [&](std::size_t t) {
      std::uint32_t counted = 0;
      const std::size_t end = partBegin(t + 1);  // local: the stores could alias a member
      for (std::size_t c = partBegin(t); c < end; ++c) {
        const bool simA = simulated[a[c]];
        const bool simB = simulated[b[c]];
        if (simA || simB) {
          std::uint32_t& count =
              bodyColours_[simA && simB ? std::min(a[c], b[c]) : (simA ? a[c] : b[c])];
          if (parts > 1) {
            std::atomic_ref<std::uint32_t>(count).fetch_add(1, std::memory_order_relaxed);
          } else {
            ++count;
          }
          ++counted;
        }
      }
      partCounts_[t * nBlocks] = counted;
    });
    std::uint64_t counted = 0;
    for (std::size_t t = 0; t < parts; ++t) {
      counted += partCounts_[t * nBlocks];
    }
    std::uint64_t before = 0;
    std::uint32_t k = 1;
    for (std::size_t i = 0; i < nb && k < nBlocks; ++i) {
      // Body i starts block k once the bodies before it hold k/B of the contacts.
      while (k < nBlocks && before * nBlocks >= counted * k) {
        blockStart_[k++] = static_cast<std::uint32_t>(i);
      }
      before += bodyColours_[i];
    }
  }
  bodyColours_.assign(nb, 0);
  // A contact lies in the block of its simulated bodies if they share one (a contact without a
  // simulated body, which constrains nothing, in block 0); else it returns nBlocks and is
  // coloured.
  auto blockOfContact = [&](std::size_t c) -> std::uint32_t {
    const bool simA = simulated[a[c]];
    const bool simB = simulated[b[c]];
    auto blockOf = [&](std::uint32_t i) {
      const auto first = blockStart_.begin() + 1;
      return static_cast<std::uint32_t>(std::upper_bound(first, first + (nBlocks - 1), i) - first);
    };
    const std::uint32_t blockA = simA ? blockOf(a[c]) : (simB ? blockOf(b[c]) : 0);
    const std::uint32_t blockB = simB ? blockOf(b[c]) : blockA;
    return blockA == blockB ? blockA : nBlocks;
  };
  // Regular colours are the low kOverflow bits; the overflow bit is never set in a body's mask.
  constexpr std::uint32_t kRegular = (1u << kOverflow) - 1;
  auto colourContact = [&](std::size_t c) {
    const bool simA = simulated[a[c]];
    const bool simB = simulated[b[c]];
    const std::uint32_t used = (simA ? bodyColours_[a[c]] : 0u) | (simB ? bodyColours_[b[c]] : 0u);
    const std::uint32_t free = ~used & kRegular;
    std::uint32_t k = 0;
    if (simA || simB) {
      k = free != 0 ? static_cast<std::uint32_t>(std::countr_zero(free)) : kOverflow;
      if (k != kOverflow) {
        const std::uint32_t bit = 1u << k;
        if (simA) {
          bodyColours_[a[c]] |= bit;
        }
        if (simB) {
          bodyColours_[b[c]] |= bit;
        }
      }
    }
    colour_[c] = static_cast<std::uint8_t>(k);
    ++offsets_[k + 1];
  };
  order_.resize(nc);
  if (nBlocks == 0) {
    for (std::size_t c = 0; c < nc; ++c) {
      colourContact(c);
    }
    for (std::uint32_t k = 0; k < kColourCount; ++k) {
      offsets_[k + 1] += offsets_[k];
    }
    // Counting sort by colour; scratch cursors on the stack.
    std::uint32_t cursor[kColourCount];
    for (std::uint32_t k = 0; k < kColourCount; ++k) {
      cursor[k] = offsets_[k];
    }
    for (std::size_t c = 0; c < nc; ++c) {
      order_[cursor[colour_[c]]++] = static_cast<std::uint32_t>(c);
    }
    return;
  }
  // The blocks' contacts, counted per part and block; the others listed per part, in order.
  if (between_.size() < parts) {
    between_.resize(parts);
  }
  detail::forEachItem(parts, team, [&](std::size_t t) {
    std::uint32_t* count = partCounts_.data() + t * nBlocks;
    std::fill(count, count + nBlocks, 0u);
    std::vector<std::uint32_t>& between = between_[t];
    between.clear();
    const std::size_t end = partBegin(t + 1);
    for (std::size_t c = partBegin(t); c < end; ++c) {
      const std::uint32_t block = blockOfContact(c);
      if (block < nBlocks) {
        colour_[c] = kInBlock;
        ++count[block];
      } else {
        between.push_back(static_cast<std::uint32_t>(c));
      }
    }
  });
  // The contacts between blocks coloured greedily in ContactStorage order.
  for (std::size_t t = 0; t < parts; ++t) {
    for (const std::uint32_t c : between_[t]) {
      colourContact(c);
    }
  }
  // Offsets; partCounts_ becomes each part's first slot in each block.
  for (std::uint32_t block = 0; block < nBlocks; ++block) {
    std::uint32_t at = blockOffsets_[block];
    for (std::size_t t = 0; t < parts; ++t) {
      const std::uint32_t count = partCounts_[t * nBlocks + block];
      partCounts_[t * nBlocks + block] = at;
      at += count;
    }
    blockOffsets_[block + 1] = at;
  }
  offsets_[0] = blockOffsets_.back();
  for (std::uint32_t k = 0; k < kColourCount; ++k) {
    offsets_[k + 1] += offsets_[k];
  }
  // Counting sort by block, then colour: the blocks' contacts placed per part.
  detail::forEachItem(parts, team, [&](std::size_t t) {
    std::uint32_t* cursor = partCounts_.data() + t * nBlocks;
    const std::size_t end = partBegin(t + 1);
    for (std::size_t c = partBegin(t); c < end; ++c) {
      if (colour_[c] == kInBlock) {
        order_[cursor[blockOfContact(c)]++] = static_cast<std::uint32_t>(c);
      }
    }
  });
  std::uint32_t cursor[kColourCount];
  for (std::uint32_t k = 0; k < kColourCount; ++k) {
    cursor[k] = offsets_[k];
  }
  for (std::size_t t = 0; t < parts; ++t) {
    for (const std::uint32_t c : between_[t]) {
      order_[cursor[colour_[c]]++] = c;
    }
  }
}

}  // namespace grain
