// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <memory>
#include <vector>

#include <grain/core/math/types.hpp>

/// Domain decompositions of distributed runs (thesis ch. 10): every point of space belongs to
/// exactly one process (boundary cells extend to infinity), and a box overlaps a set of
/// processes. A body belongs to the process that holds its centre of mass; it has remote copies on
/// the other processes its bounding box overlaps, which must all be neighbours of its owner.
namespace grain::mpi {

/// A decomposition of space into one domain per process.
class Topology {
 public:
  virtual ~Topology() = default;
  /// Number of domains (= processes).
  virtual int size() const = 0;
  /// The process whose domain contains `point` (I frame, m); defined for every finite point.
  virtual int ownerOf(const Vec3& point) const = 0;
  /// Appends to `ranks` every process whose domain overlaps the box [lo, hi] (I frame, m), in
  /// increasing order, without duplicates.
  virtual void ranksOverlapping(const Vec3& lo, const Vec3& hi, std::vector<int>& ranks) const = 0;
  /// True only if the box [lo, hi] (I frame, m) lies inside the domain of `rank`, away from its
  /// boundary: then ranksOverlapping gives `rank` alone and ownerOf any point of the box is `rank`.
  /// A cheap test for the many bodies deep inside a domain; false when unsure (the default), so
  /// callers fall back to the full queries.
  virtual bool insideDomain(int /*rank*/, const Vec3& /*lo*/, const Vec3& /*hi*/) const {
    return false;
  }
  /// The processes whose domains touch the domain of `rank` (faces, edges, corners), increasing.
  virtual std::vector<int> neighbours(int rank) const = 0;
  /// Smallest extent of a domain between two boundaries along an axis (m): no body may be
  /// larger, so a body overlaps only its owner's domain and neighbouring ones.
  virtual Real minCellExtent() const = 0;
};

/// Uniform grid of dims[0] x dims[1] x dims[2] cells over the box [lo, hi] (I frame, axis-aligned);
/// rank = ix + iy dx + iz dx dy (thesis eq. 10.3). Points outside the box belong to the nearest
/// boundary cell (the cell index is clamped, thesis eq. 10.5 with the cell extent as divisor).
class GridTopology final : public Topology {
 public:
  /// Throws grain::Error for an empty box or a zero dimension.
  GridTopology(const Vec3& lo, const Vec3& hi, const std::array<int, 3>& dims);

  int size() const override { return dims_[0] * dims_[1] * dims_[2]; }
  int ownerOf(const Vec3& point) const override;
  void ranksOverlapping(const Vec3& lo, const Vec3& hi, std::vector<int>& ranks) const override;
  std::vector<int> neighbours(int rank) const override;
  /// Over the axes with 3 or more cells: the first and last cell of an axis hold everything
  /// beyond the grid, so only inner cells can be crossed (infinite without any).
  Real minCellExtent() const override;

  const std::array<int, 3>& dimensions() const { return dims_; }
  /// Cell index of a point along each axis (clamped).
  std::array<int, 3> cellOf(const Vec3& point) const;

  /// Grid dimensions for `processes` cells over a box of the given extent: the factorisation
  /// gx gy gz = processes whose cells are closest to cubes (matchProcessDimToExtent).
  static std::array<int, 3> dimensionsForExtent(int processes, const Vec3& extent);

 private:
  int rankOf(const std::array<int, 3>& cell) const {
    return cell[0] + dims_[0] * (cell[1] + dims_[1] * cell[2]);
  }

  Vec3 lo_;
  Vec3 cellExtent_;
  std::array<int, 3> dims_;
};

}  // namespace grain::mpi
