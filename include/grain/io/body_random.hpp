// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include <grain/core/math/types.hpp>

namespace grain::io {

/// Random numbers of one body of a scene group (position jitter and, later, random geometry).
///
/// Every body has its own counter-based stream, keyed by the element's seed and the body's index
/// k within its <RigidBodies> element (0 for the element's first body):
///   state_0 = splitmix64(splitmix64(seed) + k)
///   output_n = splitmix64(state_0 + n * 0x9E3779B97F4A7C15),  n = 0, 1, 2, ...
/// where splitmix64(x) is Steele, Lea and Flood's SplitMix64 step:
///   z = x + 0x9E3779B97F4A7C15; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
///   z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31).
/// (the outputs are those of a SplitMix64 generator started at state_0). So a body's values do
/// not depend on which other bodies are built (any subset of a group, as a distributed run loads
/// it, gets identical values; no skipping is needed), setting up a body costs a few
/// multiplications, and no standard-library engine or distribution is involved: the numbers are
/// the same with every compiler and library.
class BodyRandom {
 public:
  BodyRandom(std::uint64_t seed, std::uint64_t bodyIndex);

  static std::uint64_t splitmix64(std::uint64_t x);

  /// Next 64-bit output of the stream.
  std::uint64_t next();
  /// Uniform in [0, 1): the top 53 bits of the next output times 2^-53.
  Real uniform01();
  /// Uniform in [a, b): a + (b - a) uniform01().
  Real uniform(Real a, Real b);
  /// Uniformly distributed unit vector: (x, y, z) = 2 uniform01() - 1 each, drawn in this order,
  /// repeated until 1e-12 < |v|^2 <= 1, then normalised.
  Vec3 unitVector();

 private:
  std::uint64_t state_;
};

}  // namespace grain::io
