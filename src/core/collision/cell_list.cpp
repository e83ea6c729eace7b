// SPDX-License-Identifier: MIT
#include <bit>

#include <grain/core/collision/cell_list.hpp>
#include <grain/core/common/error.hpp>

namespace grain::collision {

namespace {
/// Cell coordinates are clamped to [0, kMaxCoord] (a monotone map: two points at most k cells
/// apart stay at most k cells apart, so clamping never hides a pair).
constexpr Real kMaxCoord = static_cast<Real>(std::int64_t{1} << 30);
}  // namespace

CellList::Cell CellList::cellOf(const Vec3& p) const {
  Cell c;
  for (int k = 0; k < 3; ++k) {
    const Real x = std::floor((p[k] - origin_[k]) * invCell_);
    c[k] = static_cast<std::int32_t>(std::clamp(x, Real(0), kMaxCoord));
  }
  return c;
}

bool CellList::inRange(const Cell& c) const {
  return c[0] >= lo_[0] && c[0] <= hi_[0] && c[1] >= lo_[1] && c[1] <= hi_[1] && c[2] >= lo_[2] &&
         c[2] <= hi_[2];
}

std::uint64_t CellList::slotOf(const Cell& c) const {
  if (dense_) {
    return static_cast<std::uint64_t>(c[0] - lo_[0]) +
           static_cast<std::uint64_t>(dims_[0]) *
               (static_cast<std::uint64_t>(c[1] - lo_[1]) +
                static_cast<std::uint64_t>(dims_[1]) * static_cast<std::uint64_t>(c[2] - lo_[2]));
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(c[0]) & 0x1fffff) |
                            ((static_cast<std::uint64_t>(c[1]) & 0x1fffff) << 21) |
                            ((static_cast<std::uint64_t>(c[2]) & 0x1fffff) << 42);
  return (key * 0x9E3779B97F4A7C15ull) >> hashShift_;
}

void CellList::build(const std::vector<std::uint32_t>& ids, const std::vector<Vec3>& centers,
                     const std::vector<Real>& radii, const std::vector<std::uint8_t>& simulated,
                     Real cellSize) {
  GRAIN_REQUIRE(std::isfinite(cellSize) && cellSize > 0.0, "cell list: cell size must be > 0");
  const std::size_t n = ids.size();
  cellSize_ = cellSize;
  invCell_ = 1.0 / cellSize;
  origin_ = Vec3::Constant(std::numeric_limits<Real>::infinity());
  maxRadius_ = 0.0;
  for (const std::uint32_t id : ids) {
    origin_ = origin_.cwiseMin(centers[id]);
    maxRadius_ = std::max(maxRadius_, radii[id]);
  }
  if (n == 0) {
    origin_ = Vec3::Zero();
  }
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

  // Cells of all items and the occupied range.
  cellTmp_.resize(n);
  lo_ = {std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::max(),
         std::numeric_limits<std::int32_t>::max()};
  hi_ = {0, 0, 0};
  for (std::size_t k = 0; k < n; ++k) {
    const Cell c = cellOf(centers[ids[k]]);
    cellTmp_[k] = c;
    for (int a = 0; a < 3; ++a) {
      lo_[a] = std::min(lo_[a], c[a]);
      hi_[a] = std::max(hi_[a], c[a]);
    }
  }
  if (n == 0) {
    lo_ = {0, 0, 0};
  }
  double cells = 1.0;
  for (int a = 0; a < 3; ++a) {
    dims_[a] = std::int64_t{hi_[a]} - lo_[a] + 1;
    cells *= static_cast<double>(dims_[a]);
  }
  dense_ = cells <= 16.0 * static_cast<double>(n) + 4096.0;
  std::size_t slots = 0;
  if (dense_) {
    slots = static_cast<std::size_t>(cells);
  } else {
    slots = std::bit_ceil(std::max<std::size_t>(2 * n, 64));
    hashShift_ = 64 - std::countr_zero(slots);
  }

  // Counting sort by slot; stable, so items of one slot keep the input order.
  start_.assign(slots + 1, 0);
  slot_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    slot_[k] = slotOf(cellTmp_[k]);
    ++start_[slot_[k] + 1];
  }
  for (std::size_t s = 0; s < slots; ++s) {
    start_[s + 1] += start_[s];
  }
  hot_.resize(n);
  cold_.resize(n);
  // Scatter using start_ as cursors, then shift back.
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t dst = start_[slot_[k]]++;
    const std::uint32_t id = ids[k];
    hot_[dst] = Hot{centers[id], radii[id]};
    cold_[dst] = Cold{cellTmp_[k], id, simulated[id]};
  }
  for (std::size_t s = slots; s > 0; --s) {
    start_[s] = start_[s - 1];
  }
  start_[0] = 0;
}

}  // namespace grain::collision
