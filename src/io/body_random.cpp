// SPDX-License-Identifier: MIT
#include <cmath>

#include <grain/io/body_random.hpp>

namespace grain::io {

std::uint64_t BodyRandom::splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

BodyRandom::BodyRandom(std::uint64_t seed, std::uint64_t bodyIndex)
    : state_(splitmix64(splitmix64(seed) + bodyIndex)) {}

std::uint64_t BodyRandom::next() {
  const std::uint64_t out = splitmix64(state_);
  state_ += 0x9E3779B97F4A7C15ull;
  return out;
}

Real BodyRandom::uniform01() {
  return static_cast<Real>(next() >> 11) * 0x1.0p-53;
}

Real BodyRandom::uniform(Real a, Real b) {
  return a + (b - a) * uniform01();
}

Vec3 BodyRandom::unitVector() {
  for (;;) {
    const Real x = 2.0 * uniform01() - 1.0;
    const Real y = 2.0 * uniform01() - 1.0;
    const Real z = 2.0 * uniform01() - 1.0;
    const Real r2 = x * x + y * y + z * z;
    if (r2 > 1e-12 && r2 <= 1.0) {
      return Vec3(x, y, z) / std::sqrt(r2);
    }
  }
}

}  // namespace grain::io
