// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>

#include <grain/core/collision/mesh_bvh.hpp>
#include <grain/core/common/error.hpp>

namespace grain::collision {

MeshBvh::MeshBvh(std::shared_ptr<const TriangleMesh> mesh) : mesh_(std::move(mesh)) {
  GRAIN_REQUIRE(mesh_ != nullptr, "MeshBvh: no mesh data");
  const TriangleMesh& m = *mesh_;
  GRAIN_REQUIRE(m.faceNormals.size() == m.triangles.size(), "MeshBvh: mesh not finalized");
  const std::size_t nt = m.triangles.size();
  triBox_.assign(nt, Aabb{});
  std::vector<Vec3> centroids(nt, Vec3::Zero());
  order_.clear();
  order_.reserve(nt);
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& tri = m.triangles[t];
    Aabb b;
    for (auto v : tri) {
      b.extend(m.vertices[v]);
    }
    // A tiny relative margin keeps the box conservative for points computed with rounding.
    b.inflate(1e-12 * (b.hi - b.lo).cwiseAbs().maxCoeff() + 1e-12 * b.lo.cwiseAbs().maxCoeff() +
              1e-300);
    triBox_[t] = b;
    centroids[t] = (m.vertices[tri[0]] + m.vertices[tri[1]] + m.vertices[tri[2]]) / 3.0;
    if (m.faceNormals[t].squaredNorm() > 0.0) {
      order_.push_back(static_cast<std::uint32_t>(t));
    }
  }
  nodes_.clear();
  if (!order_.empty()) {
    nodes_.reserve(2 * order_.size() / kLeafSize + 2);
    build(0, static_cast<std::uint32_t>(order_.size()), centroids);
  }
}

std::uint32_t MeshBvh::build(std::uint32_t begin, std::uint32_t end, std::vector<Vec3>& centroids) {
  const auto index = static_cast<std::uint32_t>(nodes_.size());
  nodes_.emplace_back();
  Aabb box;
  Aabb centroidBox;
  for (std::uint32_t k = begin; k < end; ++k) {
    box.extend(triBox_[order_[k]]);
    centroidBox.extend(centroids[order_[k]]);
  }
  nodes_[index].box = box;
  if (end - begin <= kLeafSize) {
    nodes_[index].firstOrRight = begin;
    nodes_[index].count = end - begin;
    return index;
  }
  int axis = 0;
  (centroidBox.hi - centroidBox.lo).maxCoeff(&axis);
  const std::uint32_t mid = begin + (end - begin) / 2;
  std::nth_element(order_.begin() + begin, order_.begin() + mid, order_.begin() + end,
                   [&](std::uint32_t x, std::uint32_t y) {
                     const Real cx = centroids[x][axis];
                     const Real cy = centroids[y][axis];
                     return cx < cy || (cx == cy && x < y);
                   });
  build(begin, mid, centroids);
  const std::uint32_t right = build(mid, end, centroids);
  nodes_[index].firstOrRight = right;
  nodes_[index].count = 0;
  return index;
}

void MeshBvh::query(const Aabb& box, std::vector<std::uint32_t>& out) const {
  if (nodes_.empty()) {
    return;
  }
  // Median splits keep the depth below log2(#triangles) + 1, far below the stack size.
  std::array<std::uint32_t, 96> stack{};
  std::size_t top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const std::uint32_t ni = stack[--top];
    const Node& node = nodes_[ni];
    if (!node.box.overlaps(box)) {
      continue;
    }
    if (node.count > 0) {
      for (std::uint32_t k = node.firstOrRight; k < node.firstOrRight + node.count; ++k) {
        const std::uint32_t t = order_[k];
        if (triBox_[t].overlaps(box)) {
          out.push_back(t);
        }
      }
    } else {
      stack[top++] = node.firstOrRight;  // right child popped last
      stack[top++] = ni + 1;             // left child first
    }
  }
}

}  // namespace grain::collision
