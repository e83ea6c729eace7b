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

}  // namespace grain::testing
