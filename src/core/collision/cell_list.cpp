// SPDX-License-Identifier: MIT
#include <bit>

#include <grain/core/collision/cell_list.hpp>
#include <grain/core/common/error.hpp>

namespace grain::collision {

bool CellList::inRange(const Cell& c) const {
  return c[0] >= lo_[0] && c[0] <= hi_[0] && c[1] >= lo_[1] && c[1] <= hi_[1] && c[2] >= lo_[2] &&
         c[2] <= hi_[2];
}

void CellList::beginBuild(Real cellSize) {
  GRAIN_REQUIRE(std::isfinite(cellSize) && cellSize > 0.0, "cell list: cell size must be > 0");
  cellSize_ = cellSize;
  invCell_ = 1.0 / cellSize;
  origin_ = Vec3::Constant(std::numeric_limits<Real>::infinity());
  maxRadius_ = 0.0;
}

void CellList::setReach(std::size_t n) {
  if (n == 0) {
    origin_ = Vec3::Zero();
  }
  const Real cellSize = cellSize_;
  // Neighbour reach: overlapping spheres are at most 2 r_max apart per axis. The cell edge is
  // widened by a relative 1e-6 so that rounding in the cell computation can never put two such
  // centres more than `reach` cells apart.
  reach_ = std::max(1, static_cast<int>(std::ceil(2.0 * maxRadius_ * invCell_ - 1e-9)));
  cellSize_ = std::max(cellSize, 2.0 * maxRadius_ * (1.0 + 1e-6) / reach_);
  invCell_ = 1.0 / cellSize_;
  halfShell_.clear();
  rows_.clear();
  for (int dz = -reach_; dz <= reach_; ++dz) {
    for (int dy = -reach_; dy <= reach_; ++dy) {
      if (dz > 0 || (dz == 0 && dy > 0)) {
        rows_.push_back({dy, dz});
      }
      for (int dx = -reach_; dx <= reach_; ++dx) {
        if (dz > 0 || (dz == 0 && dy > 0) || (dz == 0 && dy == 0 && dx > 0)) {
          halfShell_.push_back({dx, dy, dz});
        }
      }
    }
  }
}

void CellList::layOut(std::size_t n) {
  double cells = 1.0;
  for (int a = 0; a < 3; ++a) {
    dims_[a] = std::int64_t{hi_[a]} - lo_[a] + 1;
    cells *= static_cast<double>(dims_[a]);
  }
  // Dense when the box holds at most ~16 cells per item (and slot numbers fit 32 bits).
  dense_ = cells <= 16.0 * static_cast<double>(n) + 4096.0 && cells < 4294967295.0;
  std::size_t slots = 0;
  if (dense_) {
    slots = static_cast<std::size_t>(cells);
  } else {
    slots = std::bit_ceil(std::max<std::size_t>(2 * n, 64));
    hashShift_ = 64 - std::countr_zero(slots);
  }
  GRAIN_REQUIRE(slots <= (std::size_t{1} << 32), "cell list: too many items");  // slot_ is 32-bit
  start_.assign(slots + 1, 0);
  slot_.resize(n);
  hot_.resize(n);
  cold_.resize(n);
  cells_.resize(dense_ ? 0 : n);
}

void CellList::countsToCursors() {
  for (std::size_t s = 0; s + 1 < start_.size(); ++s) {
    start_[s + 1] += start_[s];
  }
}

void CellList::finishBuild() {
  for (std::size_t s = start_.size() - 1; s > 0; --s) {
    start_[s] = start_[s - 1];
  }
  start_[0] = 0;
}

}  // namespace grain::collision
