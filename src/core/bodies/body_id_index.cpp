// SPDX-License-Identifier: MIT
#include <algorithm>
#include <bit>

#include <grain/core/bodies/body_id_index.hpp>
#include <grain/core/common/error.hpp>

namespace grain {

std::size_t BodyIdIndex::slotOf(std::uint32_t i, std::span<const BodyId> ids) const {
  std::size_t s = home(ids[i]);
  while (slots_[s] != i) {
    // An empty slot ends the probe run: the id column was changed behind the storage's back.
    GRAIN_REQUIRE(slots_[s] != kEmpty,
                  "body " + formatBodyId(ids[i]) + ": its id changed outside BodyStorage");
    s = (s + 1) & mask_;
  }
  return s;
}

void BodyIdIndex::insert(std::uint32_t i, std::span<const BodyId> ids) {
  std::size_t s = home(ids[i]);
  while (slots_[s] != kEmpty) {
    s = (s + 1) & mask_;
  }
  slots_[s] = i;
}

void BodyIdIndex::resize(std::size_t n, std::span<const BodyId> ids) {
  const std::size_t count = std::bit_ceil(std::max<std::size_t>(2 * n, 16));
  slots_.assign(count, kEmpty);
  mask_ = count - 1;
  shift_ = 64 - std::countr_zero(count);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    insert(static_cast<std::uint32_t>(i), ids);
  }
}

void BodyIdIndex::reserve(std::size_t n, std::span<const BodyId> ids) {
  if (2 * n > slots_.size()) {
    resize(n, ids);
  }
}

void BodyIdIndex::permuting(std::span<const std::uint32_t> moved,
                            std::span<const std::uint32_t> order, std::span<const BodyId> ids) {
  // All slots are found while the table still describes `ids`, then given their new indices.
  movedSlots_.clear();
  for (const std::uint32_t k : moved) {
    movedSlots_.push_back(k == kEmpty ? 0 : slotOf(order[k], ids));
  }
  for (std::size_t m = 0; m < moved.size(); ++m) {
    if (moved[m] != kEmpty) {
      slots_[movedSlots_[m]] = moved[m];
    }
  }
}

void BodyIdIndex::pushed(std::span<const BodyId> ids) {
  if (2 * ids.size() > slots_.size()) {
    resize(ids.size(), ids);  // enters the new body too
    return;
  }
  insert(static_cast<std::uint32_t>(ids.size() - 1), ids);
}

void BodyIdIndex::removing(std::size_t i, std::span<const BodyId> ids) {
  const auto index = static_cast<std::uint32_t>(i);
  const auto last = static_cast<std::uint32_t>(ids.size() - 1);
  // Backward-shift deletion: later entries of the probe run move into the hole unless their
  // home lies cyclically in (hole, entry].
  std::size_t hole = slotOf(index, ids);
  for (std::size_t s = (hole + 1) & mask_; slots_[s] != kEmpty; s = (s + 1) & mask_) {
    const std::size_t h = home(ids[slots_[s]]);
    const bool stays = hole <= s ? (hole < h && h <= s) : (hole < h || h <= s);
    if (!stays) {
      slots_[hole] = slots_[s];
      hole = s;
    }
  }
  slots_[hole] = kEmpty;
  if (index != last) {
    // The last body moves to index i (its entry may have moved in the shift; `ids` still has
    // its id at `last`).
    slots_[slotOf(last, ids)] = index;
  }
}

}  // namespace grain
