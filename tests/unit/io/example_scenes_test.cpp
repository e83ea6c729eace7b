// SPDX-License-Identifier: MIT
// The example scenes in scenes/ load, and their spheres start apart from each other and from
// the static walls (halfspaces, boxes, capsules).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/io/scene.hpp>

#include "../../common/mesh_support.hpp"
#include "io_test_util.hpp"

namespace grain::io {
namespace {

namespace fs = std::filesystem;

/// Signed distance (m) of point p from the shape of body i (negative inside), for halfspaces,
/// boxes and capsules; nullopt for other shapes.
std::optional<Real> distanceTo(const DynamicsSystem& s, std::size_t i, const Vec3& p) {
  const BodyStorage& b = s.bodies;
  const Vec3 local = b.orientations()[i].conjugate() * (p - b.positions()[i]);
  const Shape& shape = s.shapes[b.shapes()[i]];
  if (const auto* h = std::get_if<Halfspace>(&shape)) {
    return h->normal.normalized().dot(local);
  }
  if (const auto* box = std::get_if<Box>(&shape)) {
    const Vec3 q = (local - box->center).cwiseAbs() - box->halfExtent;
    return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
  }
  if (const auto* c = std::get_if<Capsule>(&shape)) {
    const Vec3 axis = c->axis.normalized();
    const Real t = std::clamp(local.dot(axis), -0.5 * c->length, 0.5 * c->length);
    return (local - t * axis).norm() - c->radius;
  }
  return std::nullopt;
}

std::vector<fs::path> exampleScenes() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(GRAIN_SOURCE_DIR) / "scenes")) {
    if (e.path().extension() == ".xml") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ExampleScenes, SpheresStartApart) {
  const std::vector<fs::path> files = exampleScenes();
  ASSERT_GE(files.size(), 6u);
  for (const fs::path& f : files) {
    if (!io::meshSupportAvailable() && testing::sceneUsesMeshes(f)) {
      continue;  // needs Assimp
    }
    const SceneDescription d = loadScene(f);
    const BodyStorage& b = d.system.bodies;
    EXPECT_TRUE(d.warnings.empty()) << f;
    EXPECT_TRUE(d.ignored.empty()) << f << ": " << d.ignored.front();
    std::vector<std::size_t> spheres, walls;
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (b.isSimulated(i) && std::holds_alternative<Sphere>(d.system.shapes[b.shapes()[i]])) {
        spheres.push_back(i);
      } else if (!b.isSimulated(i)) {
        walls.push_back(i);
      }
    }
    const auto radius = [&](std::size_t i) {
      return std::get<Sphere>(d.system.shapes[b.shapes()[i]]).radius;
    };
    std::size_t overlaps = 0;
    for (std::size_t a = 0; a < spheres.size(); ++a) {
      for (std::size_t c = a + 1; c < spheres.size(); ++c) {
        const std::size_t i = spheres[a], j = spheres[c];
        overlaps += (b.positions()[i] - b.positions()[j]).norm() < radius(i) + radius(j) ? 1 : 0;
      }
      for (const std::size_t w : walls) {
        const auto dist = distanceTo(d.system, w, b.positions()[spheres[a]]);
        overlaps += dist && *dist < radius(spheres[a]) ? 1 : 0;
      }
    }
    EXPECT_EQ(overlaps, 0u) << f;
  }
}

}  // namespace
}  // namespace grain::io
