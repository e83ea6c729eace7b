// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <span>

#include <grain/core/solvers/local_problem.hpp>

#include "local_solver_detail.hpp"

/// The Delassus operator as the iterations written once for assembled and matrix-free problems
/// see it (APGD, local_apgd.hpp; PQN, local_pqn_iteration.hpp; IPM, local_ipm_iteration.hpp;
/// private to grain_core). An `Ops` type provides
///   std::size_t contacts() const;            n (this process's contacts)
///   const VecX& q() const;                   q (3n)
///   Real mu(std::size_t i) const;            mu_i
///   Mat3 diagonalBlock(std::size_t i) const; W_ii
///   void multiply(const VecX& x, VecX& y);   y = W x (distributed: the split bodies' impulses
///                                            summed over their copies)
///   Real sum(Real local);                    the sum of `local` over the processes
///   void sum(std::span<Real> values);        every entry summed over the processes (one call)
///   Real max(Real local);                    the maximum of `local` over the processes
///   bool allTrue(bool local);                logical AND of `local` over the processes
///   Real error(const VecX& r, const VecX& u); the selected measure (global)
/// Called once per product, dot product or measure: the per-contact loops of the iterations
/// have no indirect call. Every process makes the same calls in the same order, with or without
/// contacts, so that the collective ones line up.
namespace grain::detail {

/// The Ops of the assembled problem: serial sums, the block-row matrix of LocalContext.
struct AssembledOps {
  const LocalContext& ctx;

  std::size_t contacts() const { return ctx.n; }
  const VecX& q() const { return ctx.problem.q; }
  Real mu(std::size_t i) const { return ctx.problem.mu[static_cast<Eigen::Index>(i)]; }
  Mat3 diagonalBlock(std::size_t i) const { return ctx.w.diagonalBlock(i); }
  void multiply(const VecX& x, VecX& y) const { ctx.w.multiply(x, y); }
  static Real sum(Real local) { return local; }
  static void sum(std::span<Real> /*values*/) {}
  static Real max(Real local) { return local; }
  static bool allTrue(bool local) { return local; }
  static bool distributed() { return false; }
  /// The measure of (r, u); `alsoSummed` is a serial sum already (left as it is).
  Real error(const VecX& r, const VecX& u, Real* /*alsoSummed*/ = nullptr) const {
    return ctx.error(r, u);
  }
};

}  // namespace grain::detail
