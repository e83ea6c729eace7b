// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/exchange.hpp>

/// The Ops (delassus_ops.hpp) of the matrix-free problem, shared by the matrix-free solvers
/// (matrix_free_problem.cpp: APGD, PQN; matrix_free_ipm.cpp: IPM; private to grain_core). It
/// counts the products with W and the global reductions it makes.
namespace grain::detail {

struct MatrixFreeOps {
  MatrixFreeProblem& problem;
  LocalErrorMeasure measure;
  Reducer* reducer;
  SplitBodyExchange* split;
  std::uint32_t* products = nullptr;    ///< incremented per product with W (if set)
  std::uint32_t* reductions = nullptr;  ///< incremented per global reduction (if set)

  std::size_t contacts() const { return problem.contactCount(); }
  const VecX& q() const { return problem.q(); }
  Real mu(std::size_t i) const { return problem.mu()[static_cast<Eigen::Index>(i)]; }
  Mat3 diagonalBlock(std::size_t i) const { return problem.diagonalBlock(i); }

  void multiply(const VecX& x, VecX& y) const {
    count(products);
    if (split == nullptr) {
      problem.delassus().multiply(x, y);
    } else {
      problem.delassus().multiply(x, y, [this](std::span<Vec3> linear, std::span<Vec3> angular) {
        split->sum(linear, angular);
      });
    }
  }
  Real sum(Real local) const {
    count(reductions);
    return reducedSum(local, reducer);
  }
  /// True if the sums are over more than one process (each a global reduction).
  bool distributed() const { return reducer != nullptr && reducer->distributed(); }
  /// Every entry of `values` summed over the processes, in one reduction.
  void sum(std::span<Real> values) const {
    count(reductions);
    if (reducer != nullptr) {
      reducer->sum(values);
    }
  }
  /// The maximum of `local` over the processes.
  Real max(Real local) const {
    count(reductions);
    if (reducer != nullptr) {
      reducer->max(std::span<Real>(&local, 1));
    }
    return local;
  }
  /// Logical AND of `local` over the processes.
  bool allTrue(bool local) const {
    count(reductions);
    return reducer != nullptr ? reducer->allTrue(local) : local;
  }
  /// The measure of (r, u); `alsoSummed` (if not null) is summed over the processes in the same
  /// reduction.
  Real error(const VecX& r, const VecX& u, Real* alsoSummed = nullptr) const {
    count(reductions);
    return problem.error(measure, r, u, reducer, alsoSummed);
  }

 private:
  static void count(std::uint32_t* counter) {
    if (counter != nullptr) {
      ++*counter;
    }
  }
};

}  // namespace grain::detail
