// SPDX-License-Identifier: MIT
// Mesh support switch: the Assimp reader lives in assimp_mesh_loader.cpp, which the build
// drops when grain is configured without Assimp; this file then provides the stub.
#include <grain/core/common/error.hpp>
#include <grain/io/mesh_loader.hpp>

namespace grain::io {

bool meshSupportAvailable() {
#ifdef GRAIN_WITH_ASSIMP
  return true;
#else
  return false;
#endif
}

#ifndef GRAIN_WITH_ASSIMP
std::shared_ptr<const TriangleMesh> loadTriangleMesh(const std::filesystem::path& file,
                                                     const MeshImportTransform&) {
  throw Error(file.string() + ": this build of grain has no Assimp and cannot read mesh files");
}
#endif

}  // namespace grain::io
