// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <grain/core/geometry/aabb.hpp>
#include <grain/core/math/types.hpp>

namespace grain::collision {

/// Uniform grid ("cell list") over bounding spheres, binned by centre.
///
/// Every item (a body's bounding sphere: centre, radius) is stored once, in the cell that holds
/// its centre. With a cell edge c >= 2 r_max / reach, two overlapping spheres lie at most
/// `reach` cells apart along each axis, so each pair is found by visiting, from every cell, the
/// "half shell" of neighbour cells (13 for reach 1) plus the cell itself: every pair exactly
/// once, no deduplication needed.
///
/// Items are counting-sorted by cell into contiguous arrays, so that spatially close items are
/// close in memory (the pair loop then streams through memory instead of jumping around; this
/// is what keeps a 10^5-body step cache-friendly). Cells are indexed densely over the occupied
/// box when that box has at most ~16 cells per item; then each row of cells along x is one
/// contiguous item range and the half shell is 5 such ranges (reach 1). Otherwise (far-away
/// outliers, sparse scenes) the cell coordinates are hashed into about 2 slots per item and items
/// are told apart by their stored cell. All buffers are reused between builds.
class CellList {
 public:
  /// A bounding sphere as the build reads it: centre (I, m) and radius (m).
  struct Sphere {
    Vec3 center;
    Real radius;
  };

  /// Builds the list. `ids[k]` is the caller's id of item k, `sphereOf(id)` gives its bounding
  /// sphere (a CellList::Sphere; called up to three times per item, so it must give the same
  /// bits every time), `simulated[id]` != 0 marks simulated items. `cellSize` (m) must be
  /// positive. The list keeps the spheres in cell order (what the pair loop streams), so the
  /// caller need not keep them per item.
  template <class SphereOf>
  void build(const std::vector<std::uint32_t>& ids, SphereOf&& sphereOf,
             const std::vector<std::uint8_t>& simulated, Real cellSize);
  /// build() with its passes over the items split into `parts` ranges: forEachPart(f) calls
  /// f(part) for every part in [0, parts), in any order or at once on several threads (this
  /// header starts none); `sphereOf` may then be called concurrently. The bounds and the items'
  /// cells are found per range of items, the items placed per range of cells; the counts stay
  /// serial. The same list as build() (parts <= 1 is build()).
  template <class SphereOf, class ForEachPart>
  void build(const std::vector<std::uint32_t>& ids, SphereOf&& sphereOf,
             const std::vector<std::uint8_t>& simulated, Real cellSize, std::size_t parts,
             ForEachPart&& forEachPart);
  /// build() with the spheres given as arrays indexed by id (m).
  void build(const std::vector<std::uint32_t>& ids, const std::vector<Vec3>& centers,
             const std::vector<Real>& radii, const std::vector<std::uint8_t>& simulated,
             Real cellSize) {
    const auto sphereOf = [&](std::uint32_t id) { return Sphere{centers[id], radii[id]}; };
    build(ids, sphereOf, simulated, cellSize);
  }

  /// Number of items.
  std::size_t size() const { return hot_.size(); }
  /// Cell edge actually used (m): the requested one, widened if needed for the reach.
  Real cellSize() const { return cellSize_; }
  /// True if cells are indexed densely, false if hashed.
  bool dense() const { return dense_; }
  /// Neighbour search reach in cells (1 when the cell edge is >= the largest diameter).
  int reach() const { return reach_; }

  /// Calls f(idA, idB, simulatedA, simulatedB) once for every pair of items whose bounding
  /// spheres touch or overlap and of which at least one is simulated.
  template <class F>
  void forEachPair(F&& f) const {
    forEachPair(std::forward<F>(f), 0, 1);
  }
  /// The pairs of part `part` of `parts`: the parts split the cells (dense grids: rows of cells;
  /// hashed grids: groups of items) into consecutive ranges, and together call f for the same
  /// pairs as forEachPair(f), each pair once. Different parts may run on different threads.
  template <class F>
  void forEachPair(F&& f, std::size_t part, std::size_t parts) const;

  /// Calls f(id, simulated) once for every item whose bounding sphere meets `box`.
  template <class F>
  void forEachInBox(const Aabb& box, F&& f) const;

 private:
  using Cell = std::array<std::int32_t, 3>;
  struct Hot {
    Vec3 center;
    Real radius;
  };
  struct Cold {
    std::uint32_t id;
    std::uint8_t simulated;
  };

  /// Cell coordinates are clamped to [0, kMaxCoord] (a monotone map: two points at most k cells
  /// apart stay at most k cells apart, so clamping never hides a pair).
  static constexpr Real kMaxCoord = static_cast<Real>(std::int64_t{1} << 30);
  [[gnu::always_inline]] Cell cellOf(const Vec3& p) const {
    Cell c;
    for (int k = 0; k < 3; ++k) {
      const Real x = std::floor((p[k] - origin_[k]) * invCell_);
      c[k] = static_cast<std::int32_t>(std::clamp(x, Real(0), kMaxCoord));
    }
    return c;
  }
  /// build()'s steps that do not read the items: checks `cellSize` and resets the origin.
  void beginBuild(Real cellSize);
  /// After the origin and largest radius are known: the reach, the cell edge, the offsets.
  void setReach(std::size_t n);
  /// After the occupied range (lo_, hi_) is known: dense or hashed, start_ zeroed, slot_,
  /// hot_, cold_ and (hashed grids) cells_ sized.
  void layOut(std::size_t n);
  /// After the counts: start_ made the cursors at each slot's first item.
  void countsToCursors();
  /// After the scatter: start_ shifted back to each slot's first item.
  void finishBuild();
  /// The scatter of one item: body `id` with its sphere `s` into the next place of its slot.
  void place(std::uint32_t slot, std::uint32_t id, const Sphere& s,
             const std::vector<std::uint8_t>& simulated) {
    const std::uint32_t dst = start_[slot]++;
    hot_[dst] = Hot{s.center, s.radius};
    cold_[dst] = Cold{id, simulated[id]};
    if (!dense_) {
      cells_[dst] = cellOf(s.center);
    }
  }
  std::uint64_t slotOf(const Cell& c) const {
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
  bool inRange(const Cell& c) const;
  static bool spheresTouch(const Hot& a, const Hot& b) {
    const Real rs = a.radius + b.radius;
    const Real dx = a.center.x() - b.center.x();
    const Real dy = a.center.y() - b.center.y();
    const Real dz = a.center.z() - b.center.z();
    return dx * dx + dy * dy + dz * dz <= rs * rs;
  }

  Real cellSize_ = 1.0;
  Real invCell_ = 1.0;
  Real maxRadius_ = 0.0;
  int reach_ = 1;
  bool dense_ = true;
  Vec3 origin_ = Vec3::Zero();
  Cell lo_{};  ///< occupied cell range
  Cell hi_{};
  std::array<std::int64_t, 3> dims_{};
  int hashShift_ = 63;
  std::vector<Hot> hot_;  ///< items in cell order
  std::vector<Cold> cold_;
  std::vector<Cell> cells_;           ///< items' cells, in cell order (hashed grids only)
  std::vector<std::uint32_t> start_;  ///< per slot: first item (size slots + 1)
  std::vector<std::uint32_t> slot_;   ///< per input item during the build
  std::vector<std::array<std::int32_t, 3>> halfShell_;  ///< neighbour offsets (hashed grids)
  std::vector<std::array<std::int32_t, 2>> rows_;       ///< (dy, dz) of whole rows (dense grids)
  /// Per part of a build in parts: its items' bounds, then its first slot.
  struct PartBounds {
    Vec3 lo;
    Vec3 hi;
    Real maxRadius;
    std::size_t firstSlot;
  };
  /// The smallest and largest centres and the largest radius of items [begin, end) of `ids`
  /// (minima and maxima: the same bits however the items are split into ranges).
  template <class SphereOf>
  [[gnu::always_inline]] static PartBounds boundsOf(const std::vector<std::uint32_t>& ids,
                                                    std::size_t begin, std::size_t end,
                                                    SphereOf& sphereOf) {
    PartBounds b{Vec3::Constant(std::numeric_limits<Real>::infinity()),
                 Vec3::Constant(-std::numeric_limits<Real>::infinity()), 0.0, 0};
    for (std::size_t k = begin; k < end; ++k) {
      const Sphere s = sphereOf(ids[k]);
      b.lo = b.lo.cwiseMin(s.center);
      b.hi = b.hi.cwiseMax(s.center);
      b.maxRadius = std::max(b.maxRadius, s.radius);
    }
    return b;
  }
  std::vector<PartBounds> parts_;
};

template <class SphereOf>
void CellList::build(const std::vector<std::uint32_t>& ids, SphereOf&& sphereOf,
                     const std::vector<std::uint8_t>& simulated, Real cellSize) {
  beginBuild(cellSize);
  const std::size_t n = ids.size();
  const PartBounds all = boundsOf(ids, 0, n, sphereOf);
  origin_ = origin_.cwiseMin(all.lo);
  const Vec3 top = all.hi;  // largest centre
  maxRadius_ = std::max(maxRadius_, all.maxRadius);
  setReach(n);
  // The occupied range. cellOf is monotone along each axis, so the cells of the smallest and
  // largest centres bound every item's: lo_ is cell 0 (the origin is the smallest centre) and
  // hi_ the cell of the largest. An item's cell is formed where it is needed (the same bits each
  // time) rather than kept per item.
  lo_ = {0, 0, 0};
  hi_ = n > 0 ? cellOf(top) : Cell{0, 0, 0};
  layOut(n);
  // Counting sort by slot; stable, so items of one slot keep the input order.
  for (std::size_t k = 0; k < n; ++k) {
    slot_[k] = static_cast<std::uint32_t>(slotOf(cellOf(sphereOf(ids[k]).center)));
    ++start_[slot_[k] + 1];
  }
  countsToCursors();
  // Scatter using start_ as cursors (finishBuild() shifts them back).
  for (std::size_t k = 0; k < n; ++k) {
    place(slot_[k], ids[k], sphereOf(ids[k]), simulated);
  }
  finishBuild();
}

template <class SphereOf, class ForEachPart>
void CellList::build(const std::vector<std::uint32_t>& ids, SphereOf&& sphereOf,
                     const std::vector<std::uint8_t>& simulated, Real cellSize, std::size_t parts,
                     ForEachPart&& forEachPart) {
  if (parts <= 1) {
    build(ids, sphereOf, simulated, cellSize);
    return;
  }
  beginBuild(cellSize);
  const std::size_t n = ids.size();
  parts_.resize(parts);
  // The bounds per range of items, then joined (minima and maxima: the same bits in any order).
  forEachPart([&](std::size_t t) {
    parts_[t] = boundsOf(ids, n * t / parts, n * (t + 1) / parts, sphereOf);
  });
  Vec3 top = Vec3::Constant(-std::numeric_limits<Real>::infinity());
  for (const PartBounds& b : parts_) {
    origin_ = origin_.cwiseMin(b.lo);
    top = top.cwiseMax(b.hi);
    maxRadius_ = std::max(maxRadius_, b.maxRadius);
  }
  setReach(n);
  lo_ = {0, 0, 0};
  hi_ = n > 0 ? cellOf(top) : Cell{0, 0, 0};
  layOut(n);
  // The items' slots per range of items; counted on one thread.
  forEachPart([&](std::size_t t) {
    std::uint32_t* const slot = slot_.data();
    const std::size_t end = n * (t + 1) / parts;
    for (std::size_t k = n * t / parts; k < end; ++k) {
      slot[k] = static_cast<std::uint32_t>(slotOf(cellOf(sphereOf(ids[k]).center)));
    }
  });
  for (std::size_t k = 0; k < n; ++k) {
    ++start_[slot_[k] + 1];
  }
  countsToCursors();
  // Each part places the items of a range of slots (about n / parts items), in input order.
  const std::size_t slots = start_.size() - 1;
  for (std::size_t t = 0; t < parts; ++t) {
    parts_[t].firstSlot = static_cast<std::size_t>(
        std::lower_bound(start_.begin(), start_.begin() + static_cast<std::ptrdiff_t>(slots),
                         static_cast<std::uint32_t>(n * t / parts)) -
        start_.begin());
  }
  forEachPart([&](std::size_t t) {
    const std::size_t first = parts_[t].firstSlot;
    const std::size_t last = t + 1 < parts ? parts_[t + 1].firstSlot : slots;
    const std::uint32_t* const slot = slot_.data();
    for (std::size_t k = 0; k < n; ++k) {
      if (slot[k] < first || slot[k] >= last) {
        continue;
      }
      place(slot[k], ids[k], sphereOf(ids[k]), simulated);
    }
  });
  finishBuild();
}

template <class F>
void CellList::forEachPair(F&& f, std::size_t part, std::size_t parts) const {
  const std::size_t n = hot_.size();
  // Tests item a against items [b0, b1); `cell` (hashed grids) restricts b to one cell.
  // Local pointers: the callback writes to memory, which would otherwise force reloads.
  const Hot* const hot = hot_.data();
  const Cold* const cold = cold_.data();
  // Hits are collected without branching (the sphere test passes at random, which a branch
  // would mispredict) and reported in a second, short loop.
  constexpr std::size_t kChunk = 32;
  std::array<std::uint32_t, kChunk> hits{};
  auto scan = [&](std::size_t a, std::size_t b0, std::size_t b1, const Cell* cell) {
    const Hot ha = hot[a];
    const Cold ca = cold[a];
    for (std::size_t c0 = b0; c0 < b1; c0 += kChunk) {
      const std::size_t c1 = std::min(b1, c0 + kChunk);
      std::size_t m = 0;
      for (std::size_t b = c0; b < c1; ++b) {
        hits[m] = static_cast<std::uint32_t>(b);
        m += spheresTouch(ha, hot[b]) ? 1 : 0;
      }
      for (std::size_t k = 0; k < m; ++k) {
        const Cold& cb = cold[hits[k]];
        if ((ca.simulated || cb.simulated) && (cell == nullptr || cells_[hits[k]] == *cell)) {
          f(ca.id, cb.id, ca.simulated != 0, cb.simulated != 0);
        }
      }
    }
  };
  if (dense_) {
    // Walk the cells row by row. Cells along x are consecutive slots: the half shell is the
    // rest of the own row (this cell's later items and cells x+1..x+reach) plus whole rows
    // x-reach..x+reach at the (dy, dz) offsets in rows_.
    const std::uint32_t* const start = start_.data();
    const std::int64_t nx = dims_[0];
    const std::int64_t ny = dims_[1];
    const std::int64_t nz = dims_[2];
    // This part's rows (z, y), numbered z ny + y.
    const auto rows = static_cast<std::uint64_t>(ny * nz);
    const auto rowBegin = static_cast<std::int64_t>(rows * part / parts);
    const auto rowEnd = static_cast<std::int64_t>(rows * (part + 1) / parts);
    for (std::int64_t z = rowBegin / ny; z < nz && z * ny < rowEnd; ++z) {
      const std::int64_t yBegin = std::max<std::int64_t>(rowBegin - z * ny, 0);
      const std::int64_t yEnd = std::min<std::int64_t>(rowEnd - z * ny, ny);
      for (std::int64_t y = yBegin; y < yEnd; ++y) {
        const std::int64_t rowBase = (z * ny + y) * nx;
        for (std::int64_t x = 0; x < nx; ++x) {
          const std::uint32_t i0 = start[rowBase + x];
          const std::uint32_t i1 = start[rowBase + x + 1];
          if (i0 == i1) {
            continue;
          }
          const std::int64_t xa = std::max<std::int64_t>(x - reach_, 0);
          const std::int64_t xb = std::min<std::int64_t>(x + reach_, nx - 1);
          const std::uint32_t ownEnd = start[rowBase + xb + 1];
          for (std::size_t a = i0; a < i1; ++a) {
            scan(a, a + 1, ownEnd, nullptr);
          }
          for (const auto& row : rows_) {
            const std::int64_t yy = y + row[0];
            const std::int64_t zz = z + row[1];
            if (yy < 0 || yy >= ny || zz >= nz) {
              continue;
            }
            const std::int64_t base = (zz * ny + yy) * nx;
            const std::uint32_t b0 = start[base + xa];
            const std::uint32_t b1 = start[base + xb + 1];
            if (b0 == b1) {
              continue;
            }
            for (std::size_t a = i0; a < i1; ++a) {
              scan(a, b0, b1, nullptr);
            }
          }
        }
      }
    }
    return;
  }
  // Hashed cells: groups of consecutive items of one cell (a cell may form several groups when
  // it shares its slot with another cell); neighbours are looked up cell by cell. This part's
  // groups are those that start in its range of items.
  auto groupStart = [&](std::size_t k) {
    while (k > 0 && k < n && cells_[k] == cells_[k - 1]) {
      ++k;
    }
    return std::min(k, n);
  };
  std::size_t i = groupStart(n * part / parts);
  const std::size_t end = groupStart(n * (part + 1) / parts);
  while (i < end) {
    const Cell c = cells_[i];
    std::size_t groupEnd = i + 1;
    while (groupEnd < n && cells_[groupEnd] == c) {
      ++groupEnd;
    }
    const std::uint64_t own = slotOf(c);
    for (std::size_t a = i; a < groupEnd; ++a) {
      scan(a, a + 1, start_[own + 1], &c);
    }
    for (const auto& off : halfShell_) {
      const Cell d{c[0] + off[0], c[1] + off[1], c[2] + off[2]};
      if (!inRange(d)) {
        continue;
      }
      const std::uint64_t sd = slotOf(d);
      for (std::size_t a = i; a < groupEnd && start_[sd] < start_[sd + 1]; ++a) {
        scan(a, start_[sd], start_[sd + 1], &d);
      }
    }
    i = groupEnd;
  }
}

template <class F>
void CellList::forEachInBox(const Aabb& box, F&& f) const {
  if (hot_.empty()) {
    return;
  }
  auto meets = [&](const Hot& h) {
    const Vec3 q = h.center.cwiseMax(box.lo).cwiseMin(box.hi);
    return (q - h.center).squaredNorm() <= h.radius * h.radius;
  };
  // Items are binned by centre: widen the box by the largest radius to find their cells.
  Aabb wide = box;
  wide.inflate(maxRadius_);
  const Cell a = cellOf(wide.lo);
  const Cell b = cellOf(wide.hi);
  Cell lo;
  Cell hi;
  std::int64_t cells = 1;
  for (int k = 0; k < 3; ++k) {
    lo[k] = std::max(a[k], lo_[k]);
    hi[k] = std::min(b[k], hi_[k]);
    cells *= std::max<std::int64_t>(0, std::int64_t{hi[k]} - lo[k] + 1);
  }
  if (cells == 0) {
    return;
  }
  if (cells > static_cast<std::int64_t>(hot_.size())) {
    for (std::size_t k = 0; k < hot_.size(); ++k) {
      if (meets(hot_[k])) {
        f(cold_[k].id, cold_[k].simulated != 0);
      }
    }
    return;
  }
  for (std::int32_t z = lo[2]; z <= hi[2]; ++z) {
    for (std::int32_t y = lo[1]; y <= hi[1]; ++y) {
      for (std::int32_t x = lo[0]; x <= hi[0]; ++x) {
        const Cell c{x, y, z};
        const std::uint64_t s = slotOf(c);
        for (std::uint32_t k = start_[s]; k < start_[s + 1]; ++k) {
          if ((dense_ || cells_[k] == c) && meets(hot_[k])) {
            f(cold_[k].id, cold_[k].simulated != 0);
          }
        }
      }
    }
  }
}

}  // namespace grain::collision
