// SPDX-License-Identifier: MIT
#include <algorithm>
#include <bit>

#include <grain/core/contact/contact_colouring.hpp>

namespace grain {

void ContactColouring::build(const ContactStorage& contacts, const std::vector<bool>& simulated,
                             std::uint32_t blocks) {
  const std::size_t nc = contacts.size();
  const std::size_t nb = simulated.size();
  const auto& a = contacts.bodyA();
  const auto& b = contacts.bodyB();
  const std::uint32_t nBlocks = blocks > 1 ? blocks : 0;
  colour_.resize(nc);
  offsets_.assign(kColourCount + 1, 0);
  blockOffsets_.assign(std::max<std::uint32_t>(nBlocks, 1) + 1, 0);
  // The cuts: block k starts at the first body before which k/B of the contacts lie, each
  // contact counted at its first simulated body (bodyColours_ holds the counts meanwhile).
  blockStart_.assign(std::max<std::uint32_t>(nBlocks, 1) + 1, static_cast<std::uint32_t>(nb));
  blockStart_[0] = 0;
  if (nBlocks > 0) {
    bodyColours_.assign(nb, 0);
    std::uint64_t counted = 0;
    for (std::size_t c = 0; c < nc; ++c) {
      const bool simA = simulated[a[c]];
      const bool simB = simulated[b[c]];
      if (simA || simB) {
        ++bodyColours_[simA && simB ? std::min(a[c], b[c]) : (simA ? a[c] : b[c])];
        ++counted;
      }
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
  auto blockOfContact = [&](std::size_t c, bool simA, bool simB) -> std::uint32_t {
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
  for (std::size_t c = 0; c < nc; ++c) {
    const bool simA = simulated[a[c]];
    const bool simB = simulated[b[c]];
    if (nBlocks > 0) {
      const std::uint32_t block = blockOfContact(c, simA, simB);
      if (block < nBlocks) {
        colour_[c] = kInBlock;
        ++blockOffsets_[block + 1];
        continue;
      }
    }
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
  }
  for (std::size_t k = 1; k < blockOffsets_.size(); ++k) {
    blockOffsets_[k] += blockOffsets_[k - 1];
  }
  offsets_[0] = blockOffsets_.back();
  for (std::uint32_t k = 0; k < kColourCount; ++k) {
    offsets_[k + 1] += offsets_[k];
  }
  order_.resize(nc);
  // Counting sort by block, then colour; scratch cursors on the stack for the colours.
  std::uint32_t cursor[kColourCount];
  for (std::uint32_t k = 0; k < kColourCount; ++k) {
    cursor[k] = offsets_[k];
  }
  blockCursor_.assign(blockOffsets_.begin(), blockOffsets_.end() - 1);
  for (std::size_t c = 0; c < nc; ++c) {
    const auto index = static_cast<std::uint32_t>(c);
    if (colour_[c] == kInBlock) {
      order_[blockCursor_[blockOfContact(c, simulated[a[c]], simulated[b[c]])]++] = index;
    } else {
      order_[cursor[colour_[c]]++] = index;
    }
  }
}

}  // namespace grain
