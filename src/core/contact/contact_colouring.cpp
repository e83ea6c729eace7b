// SPDX-License-Identifier: MIT
#include <bit>

#include <grain/core/contact/contact_colouring.hpp>

namespace grain {

void ContactColouring::build(const ContactStorage& contacts, const std::vector<bool>& simulated) {
  const std::size_t nc = contacts.size();
  const auto& a = contacts.bodyA();
  const auto& b = contacts.bodyB();
  bodyColours_.assign(simulated.size(), 0);
  colour_.resize(nc);
  offsets_.assign(kColourCount + 1, 0);
  // Regular colours are the low kOverflow bits; the overflow bit is never set in a body's mask.
  constexpr std::uint32_t kRegular = (1u << kOverflow) - 1;
  for (std::size_t c = 0; c < nc; ++c) {
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
  }
  for (std::uint32_t k = 0; k < kColourCount; ++k) {
    offsets_[k + 1] += offsets_[k];
  }
  order_.resize(nc);
  // Counting sort by colour; a scratch cursor per colour (kColourCount entries on the stack).
  std::uint32_t cursor[kColourCount];
  for (std::uint32_t k = 0; k < kColourCount; ++k) {
    cursor[k] = offsets_[k];
  }
  for (std::size_t c = 0; c < nc; ++c) {
    order_[cursor[colour_[c]]++] = static_cast<std::uint32_t>(c);
  }
}

}  // namespace grain
