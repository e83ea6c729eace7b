// SPDX-License-Identifier: MIT
// Helpers of the end-to-end tests: run folders in the build tree, plus the shared test helpers
// (running a command, whole-file text I/O, source and data folders).
#pragma once

#include <filesystem>
#include <string>

#include "../common/test_util.hpp"

namespace grain::testing {

/// A fresh empty folder <build>/e2e_tmp/`name` (kept after the test for inspection).
inline std::filesystem::path makeTempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(GRAIN_BINARY_DIR) / "e2e_tmp" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Scene XML of a static floor: one RigidBodies element holding the halfspace z >= 0 through the
/// origin, material 0, in body group `groupId`.
inline std::string floorBodiesXml(int groupId) {
  return R"(    <RigidBodies name="floor" instances="1" groupId=")" + std::to_string(groupId) +
         R"(">
      <Geometry><Halfspace distribute="uniform" normal="0 0 1"/></Geometry>
      <DynamicProperties>
        <DynamicState type="static"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms"><Pos><Trafo trans="0 0 0" axis="1 0 0" deg="0"/></Pos></InitialPosition>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)";
}

}  // namespace grain::testing
