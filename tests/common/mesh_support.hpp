// SPDX-License-Identifier: MIT
// Tests of scenes with triangle meshes need mesh loading, which builds without Assimp (preset
// minimal) do not have: they are skipped there, with the reason.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <grain/io/mesh_loader.hpp>

#include "test_util.hpp"

namespace grain::testing {

/// Whether a scene file declares mesh geometry (a <Mesh> element).
inline bool sceneUsesMeshes(const std::filesystem::path& scene) {
  return readText(scene).find("<Mesh") != std::string::npos;
}

}  // namespace grain::testing

/// Skips the running test if this build cannot load meshes.
#define GRAIN_REQUIRE_MESH_SUPPORT()                                          \
  if (!::grain::io::meshSupportAvailable()) {                                 \
    GTEST_SKIP() << "needs mesh loading (this build of grain has no Assimp)"; \
  }

/// Skips the running test if `scene` has meshes and this build cannot load them.
#define GRAIN_REQUIRE_MESH_SUPPORT_FOR(scene)                                             \
  if (!::grain::io::meshSupportAvailable() && ::grain::testing::sceneUsesMeshes(scene)) { \
    GTEST_SKIP() << (scene) << " has meshes and this build of grain has no Assimp";       \
  }
