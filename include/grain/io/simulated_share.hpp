// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <grain/core/bodies/body_id.hpp>

/// Splitting a scene's simulated bodies into contiguous shares, one per process of a distributed
/// run, so that each process builds (and reads the states of) about N/P bodies and can name the
/// process that built any body from its id alone.
namespace grain::io {

struct BodyGroup;

/// Ordinals [begin, end) of a share.
struct OrdinalRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const { return end - begin; }
};

/// Share `part` of `parts` equal contiguous blocks of [0, total): [part total / parts,
/// (part + 1) total / parts) (sizes differ by at most one).
OrdinalRange shareOf(std::uint64_t total, int part, int parts);
/// The share (0 .. parts - 1) that holds `ordinal` < total.
int shareHolding(std::uint64_t ordinal, std::uint64_t total, int parts);

/// The ordinal of every simulated body of a scene: the simulated RigidBodies elements in document
/// order, each contributing its `instances` indices (a body left out by selective loading keeps its
/// index: the ordinals depend on the scene text alone). Body k of a simulated group has ordinal
/// (instances of the simulated groups before it) + k. Lookups are O(log groups).
class SimulatedOrdinals {
 public:
  SimulatedOrdinals() = default;
  explicit SimulatedOrdinals(const std::vector<BodyGroup>& groups);
  /// Sum of the simulated groups' instances.
  std::uint64_t total() const { return total_; }
  /// The ordinal of a simulated body of the scene, nullopt for any other id.
  std::optional<std::uint64_t> ordinalOf(BodyId id) const;
  /// The share (of `parts`) that holds the body, -1 if the id is no simulated body of the scene.
  int shareOfBody(BodyId id, int parts) const;

 private:
  struct Span {
    BodyId first = 0;  ///< id of index 0
    std::uint32_t count = 0;
    std::uint64_t offset = 0;  ///< ordinal of index 0
  };
  std::vector<Span> spans_;  ///< sorted by first id (ranges of ids are disjoint)
  std::uint64_t total_ = 0;
};

}  // namespace grain::io
