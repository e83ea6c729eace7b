// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/io/sim_file.hpp>

#include "../../common/test_util.hpp"

namespace grain::convert::test {

/// A fresh directory below the system temp dir (grain_convert_<suite>_<test>), removed at
/// destruction.
class TempDir : public grain::testing::TempDir {
 public:
  TempDir() : grain::testing::TempDir("grain_convert_") {}
};

using grain::testing::readText;
using grain::testing::writeText;

/// Decodes base64 (RFC 4648 with padding).
inline std::vector<unsigned char> base64Decode(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::vector<unsigned char> out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    const int v = value(c);
    if (v < 0) {
      continue;  // padding, whitespace
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

/// Body `i` of a synthetic free-flight state at time t: r = r0 + v0 t + g t^2 / 2 with
/// g = (0, 0, -10), r0 = (i, 0.1 i, 2 + 0.05 i), v0 = (0.5, 0, 0.1 i), omega = (0, 0, i).
inline io::SimBodyState freeFlightBody(BodyId id, std::uint32_t i, double t) {
  io::SimBodyState b;
  b.id = id;
  const Vec3 r0(i, 0.1 * i, 2.0 + 0.05 * i);
  const Vec3 v0(0.5, 0.0, 0.1 * i);
  const Vec3 g(0, 0, -10);
  b.position = r0 + v0 * t + 0.5 * g * t * t;
  b.velocity = v0 + g * t;
  b.orientation = Quat(Eigen::AngleAxis<Real>(i * t, Vec3::UnitZ()));
  b.omegaBody = Vec3(0, 0, i);
  return b;
}

/// Writes `states` states (t = 0, dt, ...) of `n` free-flight bodies with ids (g, i), g = i % 2,
/// in reverse id order (so readers must key by id).
inline void writeFreeFlight(const std::filesystem::path& file, std::uint32_t n, int states,
                            double dt = 0.1, double t0 = 0.0) {
  io::SimFileWriter w;
  w.open(file);
  w.writeHeader(n);
  for (int s = 0; s < states; ++s) {
    const double t = t0 + dt * s;
    std::vector<io::SimBodyState> bodies;
    for (std::uint32_t i = n; i-- > 0;) {
      bodies.push_back(freeFlightBody(makeBodyId(i % 2, i), i, t));
    }
    w.writeState(t, bodies);
  }
}

}  // namespace grain::convert::test
