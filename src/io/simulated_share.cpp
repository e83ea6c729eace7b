// SPDX-License-Identifier: MIT
#include <algorithm>

#include <grain/io/scene.hpp>
#include <grain/io/simulated_share.hpp>

namespace grain::io {

OrdinalRange shareOf(std::uint64_t total, int part, int parts) {
  const auto p = static_cast<std::uint64_t>(parts);
  const auto k = static_cast<std::uint64_t>(part);
  return {k * total / p, (k + 1) * total / p};
}

int shareHolding(std::uint64_t ordinal, std::uint64_t total, int parts) {
  // The largest k with floor(k total / parts) <= ordinal: k total < (ordinal + 1) parts.
  const auto p = static_cast<std::uint64_t>(parts);
  return static_cast<int>(((ordinal + 1) * p - 1) / total);
}

SimulatedOrdinals::SimulatedOrdinals(const std::vector<BodyGroup>& groups) {
  for (const BodyGroup& g : groups) {
    if (g.motion != BodyMotion::Simulated || g.count == 0) {
      continue;
    }
    spans_.push_back({g.id(0), g.count, total_});
    total_ += g.count;
  }
  std::sort(spans_.begin(), spans_.end(),
            [](const Span& a, const Span& b) { return a.first < b.first; });
}

std::optional<std::uint64_t> SimulatedOrdinals::ordinalOf(BodyId id) const {
  auto it = std::upper_bound(spans_.begin(), spans_.end(), id,
                             [](BodyId x, const Span& s) { return x < s.first; });
  if (it == spans_.begin()) {
    return std::nullopt;
  }
  --it;
  if (bodyGroup(id) != bodyGroup(it->first) || id - it->first >= it->count) {
    return std::nullopt;
  }
  return it->offset + (id - it->first);
}

int SimulatedOrdinals::shareOfBody(BodyId id, int parts) const {
  const std::optional<std::uint64_t> ordinal = ordinalOf(id);
  return ordinal ? shareHolding(*ordinal, total_, parts) : -1;
}

}  // namespace grain::io
