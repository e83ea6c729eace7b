// SPDX-License-Identifier: MIT
#include <algorithm>
#include <string>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/block_sparse_matrix.hpp>

namespace grain {

BlockSparseMatrix3::BlockSparseMatrix3(const SparseMat& w) {
  GRAIN_REQUIRE(w.rows() == w.cols() && w.rows() % 3 == 0,
                "BlockSparseMatrix3: matrix must be square with a multiple of 3 rows, got " +
                    std::to_string(w.rows()) + " x " + std::to_string(w.cols()));
  const std::size_t n = static_cast<std::size_t>(w.rows() / 3);
  const Eigen::SparseMatrix<Real, Eigen::RowMajor> rows(w);

  rowStart_.assign(n + 1, 0);
  diagonal_.assign(n, kNone);
  std::vector<std::uint32_t> slot(n, kNone);  // block column -> position in the current row
  std::vector<std::uint32_t> cols;
  // At least one stored entry per block; dense blocks have 9.
  const auto expected = static_cast<std::size_t>(w.nonZeros()) / 9 + n;
  col_.reserve(expected);
  blocks_.reserve(expected);
  for (std::size_t i = 0; i < n; ++i) {
    cols.clear();
    for (int k = 0; k < 3; ++k) {
      for (decltype(rows)::InnerIterator it(rows, static_cast<Eigen::Index>(3 * i + k)); it; ++it) {
        const auto j = static_cast<std::uint32_t>(it.col() / 3);
        if (slot[j] == kNone) {
          slot[j] = 0;
          cols.push_back(j);
        }
      }
    }
    std::sort(cols.begin(), cols.end());
    const auto base = static_cast<std::uint32_t>(col_.size());
    for (std::size_t k = 0; k < cols.size(); ++k) {
      slot[cols[k]] = base + static_cast<std::uint32_t>(k);
      col_.push_back(cols[k]);
      blocks_.push_back(Mat3::Zero());
      if (cols[k] == i) {
        diagonal_[i] = base + static_cast<std::uint32_t>(k);
      }
    }
    for (int k = 0; k < 3; ++k) {
      for (decltype(rows)::InnerIterator it(rows, static_cast<Eigen::Index>(3 * i + k)); it; ++it) {
        const auto j = static_cast<std::uint32_t>(it.col() / 3);
        blocks_[slot[j]](k, static_cast<int>(it.col() % 3)) += it.value();
      }
    }
    for (std::uint32_t j : cols) {
      slot[j] = kNone;
    }
    rowStart_[i + 1] = static_cast<std::uint32_t>(col_.size());
  }
}

void BlockSparseMatrix3::multiply(const VecX& x, VecX& y) const {
  const std::size_t n = blockRows();
  y.resize(static_cast<Eigen::Index>(3 * n));
  const Real* xp = x.data();
  for (std::size_t i = 0; i < n; ++i) {
    y.segment<3>(static_cast<Eigen::Index>(3 * i)) = rowProduct(i, xp);
  }
}

}  // namespace grain
