// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <grain/core/math/types.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/solver_data.hpp>

/// The additive Schwarz preconditioner per solver body of the matrix-free interior point method
/// (IpmPreconditioner::AdditiveSchwarz, matrix_free_ipm.cpp; private to grain_core).
namespace grain::detail {

/// The Delassus block W_ij of contacts i and j (also i = j, without the compliance): the sum over
/// the simulated bodies k both act on of bodyCouplingBlock() (contact_rows.hpp, the formula of
/// assembleLocalProblem()), s = -1 on a contact's A side (the signed rows of a one-body contact
/// act with s = 1); zero if they share no simulated body. Exact for any frames F (unlike
/// diagonalBlock(), which takes them orthonormal); W_ji = W_ij^T.
Mat3 couplingBlock(const SolverContacts& c, const SolverBodies& b, std::size_t i, std::size_t j);

/// M^-1 = sum_b R_b^T D_b A_b^-1 D_b R_b for A = S W S + B (S = diag(sc), B block-diagonal): one
/// subdomain per solver body, the contacts acting on it (R_b restricts to them), A_b the block of
/// A on them, D_b = diag(1/sqrt(c_i)) with c_i the number of subdomains holding contact i (1 or 2).
/// M^-1 is symmetric positive definite when every A_b is; the weights make it A^-1 for a
/// block-diagonal A (block-Jacobi where no two contacts share a body). Contacts in no subdomain
/// (passive, or whose bodies have more than kMaxContacts contacts each) and the subdomains whose
/// block is not positive definite use the per-contact inverses given to factorise(). No
/// communication: distributed, a subdomain holds this process's contacts of the body only.
///
/// The blocks are formed from the rows as DelassusOperator forms W, W_ii included (not
/// detail::diagonalBlock(), which takes the frame as orthonormal): each A_b is a principal block
/// of A, positive definite as A is. One whose Cholesky factorisation fails or has a pivot below
/// 1e-14 of its largest diagonal entry (a condition number beyond double precision, where the
/// computed inverse is no inverse) is factorised again with its diagonal shifted by 1e-12,
/// 1e-10, ..., 1e-6 of that entry.
///
/// Costs: setUp() O(sum k_b^2) for the couplings (once per solve), factorise() O(sum k_b^3)
/// (every interior point iteration), apply() O(sum k_b^2) (every PCG iteration), k_b the
/// contacts of body b. A body's block is dense; a body with more than kMaxContacts contacts (a
/// container, a floor simulated as a body) forms none, so that one body cannot make the
/// preconditioner cubic in the contact count.
class SchwarzPreconditioner {
 public:
  /// The largest subdomain (contacts of one body).
  static constexpr std::size_t kMaxContacts = 64;

  /// The subdomains of the rows and their blocks W_ij (not scaled). Allocates.
  void setUp(const SolverContacts& rows, const SolverBodies& bodies);

  /// Forms and inverts every subdomain's block of A = S W S + B: A_ij = S_i W_ij S_j (W_ii
  /// included), B_ii = barrier[i]. `inverse[i]` (A_ii^-1, e.g. the block-Jacobi preconditioner)
  /// serves the contacts in no subdomain and, as block-Jacobi, the subdomains whose block is not
  /// positive definite even when shifted or whose inverse is not finite. Works in the storage of
  /// setUp().
  void factorise(const VecX& sc, std::span<const Mat3> barrier, std::span<const Mat3> inverse);

  /// out = M^-1 v (3n entries; out is resized).
  void apply(const VecX& v, VecX& out);

  /// Subdomains (solver bodies with at least one and at most kMaxContacts contacts).
  std::size_t subdomains() const { return begin_.empty() ? 0 : begin_.size() - 1; }
  /// Subdomains that fell back to block-Jacobi in the last factorise().
  std::size_t fallbacks() const { return fallbacks_; }
  /// Shifted factorisations in the last factorise().
  std::size_t shifted() const { return shifted_; }

 private:
  // Subdomain s holds contacts members_[begin_[s], begin_[s + 1]).
  std::vector<std::uint32_t> begin_;
  std::vector<std::uint32_t> members_;
  // The couplings W_pq (p < q) of subdomain s, row by row from couplingBegin_[s].
  std::vector<std::size_t> couplingBegin_;
  std::vector<Mat3> coupling_;
  // The inverse of subdomain s's block, 3k x 3k column-major from inverseBegin_[s].
  std::vector<std::size_t> inverseBegin_;
  std::vector<Real> inverse_;
  std::vector<Mat3> own_;               // per contact: W_ii
  std::vector<Real> weight_;            // per contact: 1/sqrt(subdomains holding it)
  std::vector<std::uint32_t> outside_;  // contacts in no subdomain
  std::vector<Mat3> outsideInverse_;    // their A_ii^-1
  std::size_t fallbacks_ = 0;
  std::size_t shifted_ = 0;
  std::vector<Real> block_;  // scratch: one subdomain's block (sized for the largest)
  VecX in_;                  // scratch: D_b R_b v
  VecX out_;                 // scratch: A_b^-1 D_b R_b v
};

}  // namespace grain::detail
