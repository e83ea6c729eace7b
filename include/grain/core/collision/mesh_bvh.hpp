// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <grain/core/geometry/aabb.hpp>
#include <grain/core/geometry/shapes.hpp>

namespace grain::collision {

/// Static bounding-volume hierarchy over the triangles of one TriangleMesh, in the mesh's body
/// frame K. Built once (top-down, median split along the longest axis of the triangle centroids,
/// at most kLeafSize triangles per leaf) and shared by every body that uses the mesh shape.
/// Degenerate triangles (zero face normal) are left out.
class MeshBvh {
 public:
  static constexpr std::uint32_t kLeafSize = 4;

  /// Builds the hierarchy; keeps a reference to the mesh data.
  explicit MeshBvh(std::shared_ptr<const TriangleMesh> mesh);

  /// The mesh (K frame).
  const TriangleMesh& mesh() const { return *mesh_; }
  /// The mesh data this hierarchy was built for (cache key check).
  const TriangleMesh* meshData() const { return mesh_.get(); }
  /// Box of all (non-degenerate) triangles, K frame (m).
  const Aabb& bounds() const { return nodes_.empty() ? empty_ : nodes_.front().box; }
  /// Number of tree nodes.
  std::size_t nodeCount() const { return nodes_.size(); }

  /// Appends to `out` the indices of all triangles whose box overlaps `box` (K frame), in
  /// increasing order of tree traversal (deterministic).
  void query(const Aabb& box, std::vector<std::uint32_t>& out) const;

 private:
  struct Node {
    Aabb box;
    std::uint32_t firstOrRight = 0;  ///< leaf: first slot in order_; inner: right child index
    std::uint32_t count = 0;         ///< leaf: number of triangles; inner: 0 (left = index + 1)
  };
  std::uint32_t build(std::uint32_t begin, std::uint32_t end, std::vector<Vec3>& centroids);

  std::shared_ptr<const TriangleMesh> mesh_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> order_;  ///< triangle indices, grouped by leaf
  std::vector<Aabb> triBox_;          ///< per triangle (indexed by triangle index)
  Aabb empty_;
};

}  // namespace grain::collision
