// SPDX-License-Identifier: MIT
// Mesh import with Assimp (compiled only when grain is built with Assimp).
#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <grain/core/common/error.hpp>
#include <grain/io/mesh_loader.hpp>

namespace grain::io {

std::shared_ptr<const TriangleMesh> loadTriangleMesh(const std::filesystem::path& file,
                                                     const MeshImportTransform& transform) {
  Assimp::Importer importer;
  // Drop points and lines; keep only polygons, which Triangulate turns into triangles.
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE,
                              aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const unsigned flags = aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                         aiProcess_SortByPType | aiProcess_PreTransformVertices;
  const aiScene* scene = importer.ReadFile(file.string(), flags);
  if (scene == nullptr || (scene->mFlags & AI_SCENE_FLAGS_INCOMPLETE) != 0) {
    throw Error(file.string() + ": cannot read mesh: " + importer.GetErrorString());
  }

  auto mesh = std::make_shared<TriangleMesh>();
  const bool mirrored = transform.scale.x() * transform.scale.y() * transform.scale.z() < 0.0;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const aiMesh* am = scene->mMeshes[m];
    if ((am->mPrimitiveTypes & aiPrimitiveType_TRIANGLE) == 0) {
      continue;
    }
    const auto base = static_cast<std::uint32_t>(mesh->vertices.size());
    for (unsigned v = 0; v < am->mNumVertices; ++v) {
      const aiVector3D& p = am->mVertices[v];
      const Vec3 scaled = transform.scale.cwiseProduct(Vec3(p.x, p.y, p.z));
      mesh->vertices.push_back(transform.rotation * scaled + transform.translation);
    }
    for (unsigned f = 0; f < am->mNumFaces; ++f) {
      const aiFace& face = am->mFaces[f];
      if (face.mNumIndices != 3) {
        continue;
      }
      std::array<std::uint32_t, 3> tri{base + face.mIndices[0], base + face.mIndices[1],
                                       base + face.mIndices[2]};
      if (mirrored) {
        std::swap(tri[1], tri[2]);
      }
      mesh->triangles.push_back(tri);
    }
  }
  if (mesh->triangles.empty()) {
    throw Error(file.string() + ": mesh has no triangles");
  }
  mesh->finalize();
  return mesh;
}

}  // namespace grain::io
