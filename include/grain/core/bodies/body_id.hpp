// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace grain {

/// Global body id, stable for a body's whole life: (group << 32) | number, as in GRSF's
/// .sim files. Numbers count from 0 within a group.
using BodyId = std::uint64_t;

constexpr BodyId makeBodyId(std::uint32_t group, std::uint32_t number) {
  return (static_cast<BodyId>(group) << 32) | number;
}
constexpr std::uint32_t bodyGroup(BodyId id) {
  return static_cast<std::uint32_t>(id >> 32);
}
constexpr std::uint32_t bodyNumber(BodyId id) {
  return static_cast<std::uint32_t>(id & 0xffffffffu);
}

/// "(group,number)" as GRSF prints ids.
inline std::string formatBodyId(BodyId id) {
  return "(" + std::to_string(bodyGroup(id)) + "," + std::to_string(bodyNumber(id)) + ")";
}

/// Material id used to look up contact parameters.
using MaterialId = std::uint32_t;

}  // namespace grain
