// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <memory>

#include <grain/core/geometry/shapes.hpp>
#include <grain/core/math/types.hpp>

namespace grain::io {

/// Placement of imported mesh vertices in the body frame K: v_K = rotation (scale * v) +
/// translation (per-axis scale first, then rotation, then translation; lengths in m).
struct MeshImportTransform {
  Vec3 scale = Vec3::Ones();
  Quat rotation = Quat::Identity();
  Vec3 translation = Vec3::Zero();
};

/// Whether this build can read mesh files (grain was built with Assimp).
bool meshSupportAvailable();

/// Reads a triangle mesh file (any format Assimp reads: .obj, .stl, .ply, ...), merges all its
/// meshes (node transforms applied), triangulates, joins identical vertices and applies
/// `transform`. If the scale mirrors (odd number of negative factors), the triangle winding is
/// reversed so that face normals keep pointing outwards. Throws grain::Error naming the file if
/// it cannot be read, has no triangles, or the build has no mesh support.
std::shared_ptr<const TriangleMesh> loadTriangleMesh(const std::filesystem::path& file,
                                                     const MeshImportTransform& transform = {});

}  // namespace grain::io
