// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>

#include <grain/core/common/error.hpp>
#include <grain/mpi/topology.hpp>

namespace grain::mpi {

GridTopology::GridTopology(const Vec3& lo, const Vec3& hi, const std::array<int, 3>& dims)
    : lo_(lo), dims_(dims) {
  for (int k = 0; k < 3; ++k) {
    GRAIN_REQUIRE(dims[k] >= 1, "grid topology: every dimension must be >= 1");
    GRAIN_REQUIRE(std::isfinite(lo[k]) && std::isfinite(hi[k]) && hi[k] > lo[k],
                  "grid topology: the box must have a positive, finite extent along every axis");
  }
  cellExtent_ = (hi - lo).cwiseQuotient(Vec3(dims[0], dims[1], dims[2]));
}

std::array<int, 3> GridTopology::cellOf(const Vec3& point) const {
  std::array<int, 3> cell{};
  for (int k = 0; k < 3; ++k) {
    const Real x = std::floor((point[k] - lo_[k]) / cellExtent_[k]);
    // Clamp in floating point first: far-away points must not overflow the integer.
    cell[k] = static_cast<int>(std::clamp(x, 0.0, static_cast<Real>(dims_[k] - 1)));
  }
  return cell;
}

Real GridTopology::minCellExtent() const {
  Real extent = std::numeric_limits<Real>::infinity();
  for (int k = 0; k < 3; ++k) {
    if (dims_[static_cast<std::size_t>(k)] >= 3) {
      extent = std::min(extent, cellExtent_[k]);
    }
  }
  return extent;
}

int GridTopology::ownerOf(const Vec3& point) const {
  return rankOf(cellOf(point));
}

void GridTopology::ranksOverlapping(const Vec3& lo, const Vec3& hi, std::vector<int>& ranks) const {
  const std::array<int, 3> a = cellOf(lo);
  const std::array<int, 3> b = cellOf(hi);
  const std::size_t first = ranks.size();
  for (int z = a[2]; z <= b[2]; ++z) {
    for (int y = a[1]; y <= b[1]; ++y) {
      for (int x = a[0]; x <= b[0]; ++x) {
        ranks.push_back(rankOf({x, y, z}));
      }
    }
  }
  std::sort(ranks.begin() + static_cast<std::ptrdiff_t>(first), ranks.end());
}

std::vector<int> GridTopology::neighbours(int rank) const {
  const std::array<int, 3> c{rank % dims_[0], (rank / dims_[0]) % dims_[1],
                             rank / (dims_[0] * dims_[1])};
  std::vector<int> out;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const std::array<int, 3> n{c[0] + dx, c[1] + dy, c[2] + dz};
        bool inside = dx != 0 || dy != 0 || dz != 0;
        for (int k = 0; k < 3; ++k) {
          inside = inside && n[k] >= 0 && n[k] < dims_[k];
        }
        if (inside) {
          out.push_back(rankOf(n));
        }
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::array<int, 3> GridTopology::dimensionsForExtent(int processes, const Vec3& extent) {
  GRAIN_REQUIRE(processes >= 1, "grid topology: at least one process");
  std::array<int, 3> best{processes, 1, 1};
  Real bestScore = std::numeric_limits<Real>::infinity();
  const Vec3 e = extent.cwiseMax(Vec3::Constant(1e-12));
  for (int gx = 1; gx <= processes; ++gx) {
    if (processes % gx != 0) {
      continue;
    }
    for (int gy = 1; gy <= processes / gx; ++gy) {
      if ((processes / gx) % gy != 0) {
        continue;
      }
      const int gz = processes / gx / gy;
      const Vec3 cell = e.cwiseQuotient(Vec3(gx, gy, gz));
      // Cells closest to cubes: the smallest ratio of the largest to the smallest cell edge.
      const Real score = cell.maxCoeff() / cell.minCoeff();
      if (score < bestScore) {
        bestScore = score;
        best = {gx, gy, gz};
      }
    }
  }
  return best;
}

}  // namespace grain::mpi
