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

  /// The problem of contact rows built elsewhere (e.g. from an FCLIB global problem's H and M):
  /// W of `contacts` and `bodies`, the given q (3n, contact frames), mu of the contacts' laws.
  /// applyPercussions() needs the rows of build(). Throws grain::Error if q has not 3n entries.
  void assign(detail::SolverBodies bodies, detail::SolverContacts contacts, const VecX& q);

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
  /// The contact rows and solver bodies W is formed from (e.g. for preconditioners built from its
  /// blocks W_ij).
  const detail::SolverContacts& contactRows() const { return contacts_; }
  const detail::SolverBodies& solverBodies() const { return bodies_; }

  /// The measure m (LocalErrorMeasure, the definitions of LocalErrorEvaluator) of (r, u), its
  /// global norms and sums taken over the processes of `reducer` (null: this process only).
  /// `alsoSummed` (if not null) is summed over the processes in the same reduction, in place: a
  /// caller's own sum that needs no reduction of its own.
  Real error(LocalErrorMeasure m, const VecX& r, const VecX& u, Reducer* reducer,
             Real* alsoSummed = nullptr) const;

 private:
  /// mu, W_ii^-1 and the sums of the measures from the rows and q.
  void setUpMeasures();

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

/// The interior point method of LocalSolverMethod::Ipm (local_ipm.hpp) on the matrix-free
/// problem: the same convex relaxation (Anitescu's cone complementarity problem, no De Saxce
/// term: sliding contacts separate with u_N = mu |u_T|), the same start, Nesterov-Todd scaling,
/// Mehrotra predictor-corrector, step rules, relaxed stopping measure, polishing stages and
/// settings, with the Newton systems
///   (N + G^-2) dx = b,   N = S W S,
/// solved by preconditioned conjugate gradients (the assembled method factorises N + G^-2 +
/// delta I and refines towards N + G^-2) from dx = 0 until |b - A dx| <= ipmCgTolerance |b|, at
/// most ipmCgMaxIter iterations per system. W is symmetric positive semi-definite and G^-2
/// symmetric positive definite at interior points, so A is SPD and CG applies. The primal
/// residual does not depend on the accuracy of dx (dy = N dx - r_p is formed from the same
/// products, and y - N x - p shrinks by 1 - a in every step), so an inexact dx only bends the path
/// towards the central path; the iteration stops, as the assembled one when its factorisation
/// fails, if a scaling G_i is not finite.
///
/// Preconditioner: block-Jacobi, per contact (S_i W_ii S_i + G_i^-2 + delta I)^-1, delta =
/// ipmRegularization times the mean positive diagonal entry of N. The barrier makes the Newton
/// matrix ill-conditioned as x . y tends to 0, and most of that sits in the 3 x 3 blocks G_i^-2
/// of the contacts whose pairs (x_i, y_i) approach the cone boundaries (huge for separating
/// contacts, tiny for sticking ones), which the block-Jacobi preconditioner inverts exactly
/// together with the contact's own W_ii (Kleinert et al. find a block-diagonal preconditioner
/// sufficient). It needs no communication: W_ii comes from the contact's own rows. What it does
/// not reach is a rank-deficient W: on the redundant directions of the sticking contacts only
/// G^-2, of the order of x . y, holds the matrix, and PCG then needs many iterations
/// (docs/solvers.md, spheres-in-a-box). settings.ipmPreconditioner = AdditiveSchwarz selects
/// instead the additive Schwarz preconditioner per solver body (the contacts acting on a body
/// solved together with their couplings W_ij, formed from the rows as the operator forms them;
/// src/core/solvers/schwarz_preconditioner.hpp), also without communication (distributed, a
/// body's subdomain holds this process's contacts on it): far fewer products where many
/// contacts share bodies, but not a better IPM everywhere (docs/solvers.md).
///
/// Polishing (if the IPM stops short of the tolerance): the semismooth Newton step of the
/// assembled method, (J + delta' I) dr = -F with J = I - D + D W, by restarted GMRES(30) (block-
/// Jacobi from W_ii), then its Levenberg-Marquardt steps (J^T J + s I) dr = -J^T F by PCG (two
/// products per iteration); both to ipmCgTolerance within ipmCgMaxIter iterations, their
/// iterations counted in cgIterations. Then the APGD steps on the relaxation (solveApgd's
/// iteration).
///
/// Costs per interior point iteration: two PCG solves (predictor and corrector), each one product
/// with W and two global reductions per CG iteration (p . A p; |r|^2 and r . z together) and one
/// for the first residual; plus one product for u = W r + q and five reductions (x . y with the
/// count of non-finite scalings, the predicted complementarity, the two steps to the boundary as
/// global minima, the relaxed error). result counts them (delassusProducts, reductions) and the
/// Krylov iterations (cgIterations). The initial guess is not used (the method needs an interior
/// start); it must have 3n entries if given. Distributed: as solveApgd(); every process makes the
/// same calls in the same order, with or without contacts. result.error and converged refer to
/// LocalErrorMeasure::Relaxed whatever settings.errorMeasure says; settings.method is not read.
void solveIpm(MatrixFreeProblem& problem, const LocalSolverSettings& settings,
              const VecX* initialGuess, LocalSolverResult& result, Reducer* reducer = nullptr,
              SplitBodyExchange* split = nullptr);

/// Throws grain::Error unless PQN can run matrix-free with these settings: pqnDirectSolve (sparse
/// LU of the Newton matrix) and pqnWarmStartTolerance > tolerance (SOR on the assembled matrix
/// first) need the assembled Delassus matrix.
void checkMatrixFreePqn(const LocalSolverSettings& settings);

}  // namespace grain
