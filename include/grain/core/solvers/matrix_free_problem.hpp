// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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
class SplitBodyExchange;

/// The local problem FC(W, q, mu) of one Moreau step in matrix-free form: the problem
/// assembleLocalProblem() assembles (same q and mu, W = the DelassusOperator on the same contact
/// rows), for solvers that only need products with W, its diagonal blocks and global sums.
/// Building it allocates (once the buffers have grown, only when the contacts grow); products
/// and error evaluations do not.
///
/// Distributed (a process's share of the contacts, each contact solved by one process): the
/// bodies of multiplicity p > 1 (ContactProblem::multiplicity, the split bodies) take part with
/// their whole mass and inertia, not as mass-split copies, and every product sums their impulses
/// over the processes holding a copy (SplitBodyExchange::sum); q, mu and W_ii are then those of
/// the global problem, restricted to this process's contacts.
class MatrixFreeProblem {
 public:
  /// Builds the contact rows (contact_rows.hpp), q and mu of the step; the bodies must hold the
  /// free velocities and q^M as for assembleLocalProblem(). Throws grain::Error as it does.
  void build(const BodyStorage& bodies, const ContactProblem& problem,
             const InclusionSolverSettings& settings);

  /// The BodyStorage index of every solver body, in the order of the operator's body arrays
  /// (for SplitBodyExchange::beginSolve()).
  std::span<const std::uint32_t> bodyStorageIndex() const { return bodies_.storageIndex; }

  /// u^E = u + M^-1 W_c r: adds the velocity change of the percussions r (3n, contact frames,
  /// N s) to every solver body of `bodies` (v in I, Omega in K), the split bodies' impulses
  /// summed over their copies by `split` (null: only this process's contacts act), so that every
  /// copy ends with the same velocity. The bodies must be those of build().
  void applyPercussions(BodyStorage& bodies, const VecX& r, SplitBodyExchange* split);

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
/// Distributed: `reducer` spans every process that solves a share of the problem (each makes the
/// same calls, with or without contacts), and `split` (null if this process shares no split
/// body) sums the split bodies' impulses in every product; problem.bodyStorageIndex() must have
/// been given to split->beginSolve().
void solveApgd(MatrixFreeProblem& problem, const LocalSolverSettings& settings,
               const VecX* initialGuess, LocalSolverResult& result, Reducer* reducer = nullptr,
               SplitBodyExchange* split = nullptr);

/// Koziara's PQN on the matrix-free problem: the iteration, linearisation, block-Jacobi
/// preconditioner (from W_ii), GMRES, backtracking, delta continuation, error measures and
/// settings of LocalSolverMethod::Pqn (local_pqn.hpp; the same code runs on the assembled
/// matrix), with every product through problem.delassus() and every norm, dot product (GMRES
/// included) and error sum through `reducer` (null: serial). Starts as solveApgd() does and
/// returns the best iterate of at most settings.pqnMaxIter Newton steps, WITHOUT the SOR
/// fallback of solve(): when result.converged is false the caller runs it (MoreauStepper falls
/// back to the velocity SOR prox, ContactSolver). Distributed: as solveApgd(); every process
/// makes the same reducer calls in the same order, with or without contacts (one global sum per
/// GMRES inner product). Throws grain::Error (checkMatrixFreePqn()) for the options that need
/// the assembled matrix. settings.method is not read.
void solvePqn(MatrixFreeProblem& problem, const LocalSolverSettings& settings,
              const VecX* initialGuess, LocalSolverResult& result, Reducer* reducer = nullptr,
              SplitBodyExchange* split = nullptr);

/// Throws grain::Error unless PQN can run matrix-free with these settings: pqnDirectSolve (sparse
/// LU of the Newton matrix) and pqnWarmStartTolerance > tolerance (SOR on the assembled matrix
/// first) need the assembled Delassus matrix.
void checkMatrixFreePqn(const LocalSolverSettings& settings);

}  // namespace grain
