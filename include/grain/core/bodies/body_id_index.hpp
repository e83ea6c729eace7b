// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <grain/core/bodies/body_id.hpp>

namespace grain {

/// The index of each body by its id, for BodyStorage: an open-addressing table (linear probing,
/// at most half full, a power of two of slots) of 4-byte body indices. A slot holds an index
/// only; its key is the id at that index in the storage's id column, which every call is given.
/// So the table takes 8-16 bytes per body (8.4 at 10^6 bodies), where a node-based hash map
/// takes about 33-40, and a lookup reads one or two slots and the id they point to.
///
/// The table must describe the id column it is given: each call states which change of the
/// column it follows. Not thread-safe for writers; find() is const and may run concurrently.
class BodyIdIndex {
 public:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;

  /// Index of `id` in `ids`, if present.
  std::optional<std::uint32_t> find(BodyId id, std::span<const BodyId> ids) const {
    if (slots_.empty()) {
      return std::nullopt;
    }
    for (std::size_t s = home(id);; s = (s + 1) & mask_) {
      const std::uint32_t i = slots_[s];
      if (i == kEmpty) {
        return std::nullopt;
      }
      if (ids[i] == id) {
        return i;
      }
    }
  }

  /// `ids` got `ids.back()` appended (not present before) at index ids.size() - 1.
  void pushed(std::span<const BodyId> ids);
  /// The body at index i (ids[i]) is about to be removed by moving the last one
  /// (ids.back()) into its place; call before changing `ids`.
  void removing(std::size_t i, std::span<const BodyId> ids);
  /// `ids` is about to be permuted: for every k of `moved` (entries equal to kEmpty are
  /// skipped), the body at index order[k] goes to index k; bodies not named keep their index.
  /// Call before changing `ids`. O(moved) (with the slots found first, then rewritten).
  void permuting(std::span<const std::uint32_t> moved, std::span<const std::uint32_t> order,
                 std::span<const BodyId> ids);
  /// Room for n bodies without growing (`ids` is the current column).
  void reserve(std::size_t n, std::span<const BodyId> ids);
  /// Number of slots (for tests and the memory figures).
  std::size_t slotCount() const { return slots_.size(); }

 private:
  std::size_t home(BodyId id) const {
    // Fibonacci hashing: the top bits of id * 2^64/phi spread consecutive numbers of a group.
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  /// Slot holding index i of `ids` (present).
  std::size_t slotOf(std::uint32_t i, std::span<const BodyId> ids) const;
  /// Enters index i (ids[i] absent) without growing.
  void insert(std::uint32_t i, std::span<const BodyId> ids);
  /// Slots for at least 2n bodies' worth of room, rebuilt from `ids`.
  void resize(std::size_t n, std::span<const BodyId> ids);

  std::vector<std::uint32_t> slots_;
  std::vector<std::size_t> movedSlots_;  ///< permuting()'s scratch
  std::size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace grain
