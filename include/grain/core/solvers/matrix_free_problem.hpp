// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/delassus_operator.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/solver_data.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain {

class Reducer;

/// The local problem FC(W, q, mu) of one Moreau step in matrix-free form: the problem
/// assembleLocalProblem() assembles (same q and mu, W = the DelassusOperator on the same contact
/// rows), for solvers that only need products with W, its diagonal blocks and global sums.
/// Building it allocates (once the buffers have grown, only when the contacts grow); products
/// and error evaluations do not.
class MatrixFreeProblem {
 public:
  /// Builds the contact rows (contact_rows.hpp), q and mu of the step; the bodies must hold the
  /// free velocities and q^M as for assembleLocalProblem(). Throws grain::Error as it does.
  void build(const BodyStorage& bodies, const ContactProblem& problem,
             const InclusionSolverSettings& settings);

  /// Number of contacts n.
  std::size_t contactCount() const { return static_cast<std::size_t>(mu_.size()); }
  const VecX& q() const { return q_; }
  const VecX& mu() const { return mu_; }
  /// y = W x: the operator bound to this problem's rows (bound again on every call, so that a
  /// copied or moved problem never uses another's rows; binding the same sizes allocates
  /// nothing).
  DelassusOperator& delassus() {
    op_.bind(contacts_, bodies_);
    return op_;
  }
  /// W_ii.
  Mat3 diagonalBlock(std::size_t i) const;

  /// The measure m (LocalErrorMeasure, the definitions of LocalErrorEvaluator) of (r, u), its
  /// global norms and sums taken over the processes of `reducer` (null: this process only).
  Real error(LocalErrorMeasure m, const VecX& r, const VecX& u, Reducer* reducer) const;

 private:
  detail::SolverBodies bodies_;
  detail::SolverContacts contacts_;
  detail::SolverRolling rolling_;
  DelassusOperator op_;
  VecX q_;
  VecX mu_;
  std::vector<Mat3> blockInverse_;  // W_ii^-1 of Koziara's measure (blockInverse())
  Real koziaraDenominator_ = 0;     // sum_i q_i . W_ii^-1 q_i over this process's contacts
  Real qSquaredNorm_ = 0;           // |q|^2 over this process's contacts
};

/// APGD on the matrix-free problem: the iteration, restart, step size, scaling, error measures
/// and settings of LocalSolverMethod::Apgd (local_solver.hpp; the same code runs on the assembled
/// matrix), with every product through problem.delassus() and every dot product, norm and error
/// sum through `reducer` (null: serial). Like solve(): r = 0 without any setup when there is no
/// initial guess and every q_N >= 0 (on every process), else from the initial guess projected onto
/// the cones or from 0; returns the best iterate. settings.method is not read.
void solveApgd(MatrixFreeProblem& problem, const LocalSolverSettings& settings,
               const VecX* initialGuess, LocalSolverResult& result, Reducer* reducer = nullptr);

}  // namespace grain
