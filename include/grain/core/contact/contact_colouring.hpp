// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <grain/core/contact/contact_storage.hpp>

namespace grain {

/// Colouring of the contact graph for threaded Gauss-Seidel sweeps (Box2D v3 style): the
/// contacts of one colour share no simulated body, so one colour's updates can run in any order
/// and on any number of threads with the same result, and the colours are swept one after the
/// other. Static and animated bodies do not constrain the colouring: the solver never writes
/// them. A contact that finds no free colour among the kColourCount - 1 regular ones (a body
/// touching many others) goes to the overflow colour, which is swept serially after the others.
/// Contacts without a simulated body take colour 0 and constrain nothing.
///
/// Built every step after collision detection, greedily in ContactStorage order: contact c
/// takes the lowest colour free at both simulated bodies (one bit per colour and body, so a
/// contact costs a few operations); the contacts are then grouped by colour, ascending within
/// a colour.
///
/// With B > 1 blocks, the bodies are first cut into B ranges of consecutive storage indices,
/// which keeps neighbours together as the scenes' generators and the body exchange place them;
/// the cuts give each range about 1/B of the contacts (counted at each contact's first simulated
/// body), as the threads' sweeps take the longer the more contacts their block holds. A
/// contact whose simulated bodies all lie in block b belongs to
/// block b and is not coloured: the blocks share no simulated body, so each is swept by one
/// thread in ContactStorage order (the serial order, with its locality and its short chains of
/// updates through a body), all at once. Only the contacts between blocks are coloured, and swept
/// colour by colour after them. The blocks come first in order(), block by block.
class ContactColouring {
 public:
  /// Colours including the overflow colour (per-body masks are 32 bits wide).
  static constexpr std::uint32_t kColourCount = 32;
  /// The overflow colour: contacts solved serially after the regular colours.
  static constexpr std::uint32_t kOverflow = kColourCount - 1;

  /// colours()[c] of a contact that belongs to a block.
  static constexpr std::uint8_t kInBlock = 0xff;

  /// Colours `contacts` (body indices into a storage of simulated.size() bodies);
  /// `simulated[i]` says whether body i is simulated. With blocks > 1 the contacts inside each of
  /// `blocks` body ranges are kept apart uncoloured (see the class notes); 0 and 1 colour all.
  /// With blocks, `threads` > 1 runs the passes over the contacts (the cuts' counts, sorting out
  /// the blocks' contacts, placing them in order()) on that many threads, each over a range of
  /// the contacts; the contacts between blocks are coloured on one thread. The result is the same
  /// for every thread count. If the contacts' bodies (in order), `simulated` and `blocks` equal
  /// those of the last build, the colouring is kept as it is (the same result; reused() says so).
  void build(const ContactStorage& contacts, const std::vector<bool>& simulated,
             std::uint32_t blocks = 1, std::uint32_t threads = 1);
  /// True if the last build() kept the colouring of the one before (same input).
  bool reused() const { return reused_; }

  /// Contacts of colour k (k <= kOverflow), ascending ContactStorage indices.
  std::span<const std::uint32_t> contactsOf(std::uint32_t k) const {
    return {order_.data() + offsets_[k], order_.data() + offsets_[k + 1]};
  }
  /// All contacts, the blocks' first, then grouped by colour: block b is
  /// order()[blockOffsets()[b] .. blockOffsets()[b+1]), colour k is
  /// order()[offsets()[k] .. offsets()[k+1]).
  const std::vector<std::uint32_t>& order() const { return order_; }
  const std::vector<std::uint32_t>& offsets() const { return offsets_; }
  /// blocks + 1 entries (one block, empty, without blocks): ascending ContactStorage indices
  /// within a block.
  const std::vector<std::uint32_t>& blockOffsets() const { return blockOffsets_; }
  /// blocks + 1 entries: block b holds the bodies [blockStarts()[b], blockStarts()[b+1]) (one
  /// block of all bodies without blocks).
  const std::vector<std::uint32_t>& blockStarts() const { return blockStart_; }
  /// Colour of every contact (ContactStorage order), kInBlock for a contact of a block.
  const std::vector<std::uint8_t>& colours() const { return colour_; }
  /// Number of contacts coloured.
  std::size_t size() const { return colour_.size(); }

 private:
  std::vector<std::uint32_t> bodyColours_;   ///< per body: bit k set if a contact of colour k
  std::vector<std::uint8_t> colour_;         ///< per contact
  std::vector<std::uint32_t> offsets_;       ///< kColourCount + 1 entries
  std::vector<std::uint32_t> order_;         ///< contacts: the blocks', then grouped by colour
  std::vector<std::uint32_t> blockOffsets_;  ///< blocks + 1 entries
  std::vector<std::uint32_t> blockStart_;    ///< blocks + 1 entries: first body of each block
  std::vector<std::uint32_t> partCounts_;    ///< build scratch: per range of contacts and block
  std::vector<std::vector<std::uint32_t>> between_;  ///< build scratch: per range, the contacts
                                                     ///< between blocks
  // The input of the last build (reused when the next one is the same).
  std::vector<std::uint32_t> builtA_;
  std::vector<std::uint32_t> builtB_;
  std::vector<bool> builtSimulated_;
  std::uint32_t builtBlocks_ = 0;
  bool built_ = false;
  bool reused_ = false;
};

}  // namespace grain
