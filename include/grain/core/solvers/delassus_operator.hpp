// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <grain/core/math/types.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/solver_data.hpp>

namespace grain {

class Reducer;

/// The body-sum stage of a serial DelassusOperator product: every body's impulses come from this
/// process's contacts alone, so there is nothing to combine.
struct LocalBodySums {
  void operator()(std::span<Vec3> /*impulse*/, std::span<Vec3> /*angularImpulse*/) const {}
};

/// Matrix-free Delassus operator of one Moreau step: y = W x with W = W_c^T M^-1 W_c (+ D / dt
/// for UCFD contacts), the matrix assembleLocalProblem() assembles, computed from the contact
/// rows (contact_rows.hpp) without forming W. One product is three passes:
///   1. scatter (over the contacts): the body impulses p_B = sum_i W_iB x_i, i.e. for contact i
///      with percussion x_i (contact frame, N s) and f = A_IC x_i (I frame)
///        body B: p += f, L += J_B x_i (= r_B x f);   body A: p -= f, L -= J_A x_i;
///   2. the body-sum stage (see below), then per body dv = m^-1 p, domega = Theta^-1 L (I frame,
///      Theta^-1 = A_IK Theta_K^-1 A_KI at q^M);
///   3. gather (over the contacts): y_i = A_CI (dv_B - dv_A) + J_B^T domega_B - J_A^T domega_A
///      + D_i x_i / dt; y_i = x_i for a contact without a simulated body (W_ii = I there).
/// Contacts with one simulated body use the signed rows of SolverContacts.
///
/// Distribution seam: between the scatter and the inverse mass, multiply() calls
/// `bodySums(impulse, angularImpulse)` once with the per-body sums of this process (spans indexed
/// as the bound SolverBodies, I frame, N s and N m s). Serially it does nothing (LocalBodySums);
/// a distributed run passes a callable that adds the sums of the other processes holding a copy
/// of a split or remote body (the neighbour exchange), so that every copy then holds the whole
/// impulse. The bound inverse masses must then be the whole bodies' (multiplicity 1), not the
/// mass-split copies'. Global dot products and norms go through the APGD ops' sum, i.e.
/// reducedSum() (the Reducer hook).
///
/// The per-contact and per-body loops make no virtual call and allocate nothing: the two body
/// arrays are sized by bind(). The rows and bodies must outlive the operator's use and be bound
/// again after they change size.
class DelassusOperator {
 public:
  DelassusOperator() = default;
  DelassusOperator(const detail::SolverContacts& contacts, const detail::SolverBodies& bodies) {
    bind(contacts, bodies);
  }

  /// Uses these rows and bodies (kept by reference) and sizes the body arrays.
  void bind(const detail::SolverContacts& contacts, const detail::SolverBodies& bodies);

  /// Number of contacts n (W is 3n x 3n).
  std::size_t contactCount() const { return contacts_ == nullptr ? 0 : contacts_->size(); }

  /// y = W x (x has 3n entries; y is resized).
  template <class BodySums = LocalBodySums>
  void multiply(const VecX& x, VecX& y, BodySums&& bodySums = BodySums{}) {
    scatter(x);
    bodySums(std::span<Vec3>(linear_), std::span<Vec3>(angular_));
    applyInverseMass();
    gather(x, y);
  }

  /// Stage 1: the body impulses of x (overwrites impulse() and angularImpulse()).
  void scatter(const VecX& x);
  /// Stage 2: impulses -> velocity changes, in place.
  void applyInverseMass();
  /// Stage 3: y = W_c^T (velocity changes) + the diagonal terms of x (y is resized).
  void gather(const VecX& x, VecX& y) const;

  /// Per-body linear impulse (after scatter) or velocity change (after applyInverseMass).
  std::span<Vec3> impulse() { return linear_; }
  /// Per-body angular impulse (after scatter) or angular velocity change (after
  /// applyInverseMass), I frame.
  std::span<Vec3> angularImpulse() { return angular_; }

  /// The Delassus block W_ii (contact_rows.hpp's detail::diagonalBlock).
  Mat3 diagonalBlock(std::size_t i) const;

 private:
  const detail::SolverContacts* contacts_ = nullptr;
  const detail::SolverBodies* bodies_ = nullptr;
  std::vector<Vec3> linear_;   // per solver body
  std::vector<Vec3> angular_;  // per solver body
};

/// The sum of `local` over all processes of `reducer` (`local` itself if reducer is null or
/// serial): the reduction hook of the matrix-free solvers' dot products and norms.
Real reducedSum(Real local, Reducer* reducer);

}  // namespace grain
