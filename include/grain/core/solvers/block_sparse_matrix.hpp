// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include <grain/core/math/types.hpp>
#include <grain/core/solvers/local_problem.hpp>

namespace grain {

/// Square sparse matrix of 3x3 blocks in block-compressed-row form, the working format of the
/// local solvers: block row i (contact i) holds the blocks (i, col[k]) for k in
/// [rowStart[i], rowStart[i+1]), sorted by column, each a dense 3x3 matrix. A block is stored
/// if any of its 9 entries is stored in the source matrix (stored zeros included).
class BlockSparseMatrix3 {
 public:
  BlockSparseMatrix3() = default;
  /// Converts W (3n x 3n; throws grain::Error otherwise).
  explicit BlockSparseMatrix3(const SparseMat& w);

  /// Number of block rows n.
  std::size_t blockRows() const { return rowStart_.empty() ? 0 : rowStart_.size() - 1; }
  /// Number of stored blocks.
  std::size_t blockCount() const { return blocks_.size(); }

  /// (W x)_i = sum_j W_ij x_j, the three rows of contact i.
  Vec3 rowProduct(std::size_t i, const Real* x) const {
    Vec3 s = Vec3::Zero();
    const std::uint32_t end = rowStart_[i + 1];
    for (std::uint32_t k = rowStart_[i]; k < end; ++k) {
      const Real* xj = x + 3 * static_cast<std::size_t>(col_[k]);
      s.noalias() += blocks_[k] * Eigen::Map<const Vec3>(xj);
    }
    return s;
  }

  /// y = W x (y is resized).
  void multiply(const VecX& x, VecX& y) const;

  /// Diagonal block W_ii (zero if not stored).
  Mat3 diagonalBlock(std::size_t i) const {
    const std::uint32_t k = diagonal_[i];
    return k == kNone ? Mat3::Zero() : blocks_[k];
  }

  const std::vector<std::uint32_t>& rowStart() const { return rowStart_; }
  const std::vector<std::uint32_t>& columns() const { return col_; }
  const std::vector<Mat3>& blocks() const { return blocks_; }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::vector<std::uint32_t> rowStart_;
  std::vector<std::uint32_t> col_;
  std::vector<Mat3> blocks_;
  std::vector<std::uint32_t> diagonal_;  // block index of (i, i) or kNone
};

}  // namespace grain
