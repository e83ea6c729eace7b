// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/math/types.hpp>

namespace grain {

/// Settings of the compatible normal forces (docs/contact-output.md).
struct CompatibleForceSettings {
  /// Exponent e of the elastic law f = k~ c^e (1 = linear springs, 1.5 = Hertz); e >= 1.
  Real exponent = 1.0;
  /// Convergence: ||r|| <= tolerance ||F~|| (Euclidean norms over all body coordinates).
  Real tolerance = 1e-8;
  std::uint32_t maxIterations = 200;  ///< Newton iterations (per phase, see below)
  /// Relative diagonal shift of the Newton matrix (floating bodies, mechanisms, rank defects).
  Real shift = 1e-8;

  /// The description of the members (grain/core/common/settings.hpp): the compatible-force
  /// attributes of <ContactForceOutput>, and the ranges CompatibleForceSolver::solve checks.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = CompatibleForceSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::exponent>("exponent")
          .withBound(Bound::AtLeastOne)
          .withDoc("exponent e >= 1 of the elastic law f = k c^e of the compatible forces (1 "
                   "linear, 1.5 Hertz)"));
    v(field<&S::tolerance>("tolerance")
          .withBound(Bound::Positive)
          .withDoc("compatible forces: relative equilibrium residual at which Newton's method "
                   "stops"));
    v(field<&S::maxIterations>("maxIterations")
          .withBound(Bound::AtLeastOne)
          .withDoc("compatible forces: Newton iterations per phase"));
    v(field<&S::shift>("shift").internal().withBound(Bound::Positive));
  }
};

/// Outcome of one computation.
struct CompatibleForceStats {
  std::uint32_t iterations = 0;  ///< Newton iterations, all phases
  bool converged = false;
  Real relativeResidual = 0.0;       ///< ||r|| / ||F~|| at the end (0 without load)
  std::uint32_t activeContacts = 0;  ///< contacts with a positive compatible force
};

/// Compatible normal contact forces (Olsen & Kamrin, "Resolving force indeterminacy in contact
/// dynamics using compatibility conditions"): among all normal forces that exert the same net
/// force and torque on every simulated body as the solver's normal forces, the one a no-tension
/// elastic contact network produces in the limit of infinite stiffness.
///
/// Formulation (displacement form). Every simulated body b that touches a contact gets a small
/// displacement x_b = (d_b, theta_b): translation d_b and rotation theta_b, both in the inertial
/// frame I. Static and animated bodies do not move. Contact i between A and B (normal n from A
/// to B, lever arms r_A, r_B from the centres of mass, in I) then closes by the overlap
///   c_i(x) = -J_i x,   J_i x = n.(d_B + theta_B x r_B - d_A - theta_A x r_A),
/// i.e. J_i = [ -n^T, -(r_A x n)^T | n^T, (r_B x n)^T ] (the rows of a simulated partner only).
/// The contact carries f_i(x) = k~_i max(0, c_i)^e, with the relative stiffness k~_i of the
/// material pair (ContactParameter::relativeStiffness). The solver's normal values f^s define
/// the load every body must carry, F~ = sum_i J_i^T f^s_i (6 entries per body: force and torque
/// about the centre of mass, I frame). The compatible displacement minimises the convex C^1
/// potential
///   Pi(x) = sum_i k~_i/(e+1) max(0, c_i)^(e+1) + F~^T x,
/// whose gradient is the residual r(x) = F~ - sum_i J_i^T f_i(x): at the minimum the new
/// forces balance the same load on every body (equilibrium with the solver's total load), no
/// contact pulls, and the forces derive from one displacement field (compatibility). The
/// overlaps already present in the rigid model are left out: this is the limit of infinite
/// stiffness scale kappa (k_i = kappa k~_i), in which they vanish against the elastic overlaps
/// and kappa drops out. Forces are unique (the dual objective is strictly convex) although x
/// may not be (mechanisms, free rotations of spheres).
///
/// Newton's method on x with the matrix H = sum_{c_i > 0} J_i^T (e k~_i c_i^(e-1)) J_i
/// (for e = 1 contacts with c_i >= 0 count as active, so the first step from x = 0 is the
/// all-contacts linear solution), plus a diagonal shift `shift` (H_jj + max diagonal of the
/// coordinate's kind, translation or rotation; for rotations at least the translational one
/// times the largest lever arm squared, so that sphere rotations, whose lever arms are
/// central up to round-off, stay out of the problem), factorised by Eigen's SimplicialLDLT (the
/// pattern is analysed once per call). A contact that would go into tension (c_i < 0) leaves
/// the active set. Steps are damped by backtracking: a step length is accepted when it
/// decreases Pi (Armijo) or the residual norm (sufficient decrease, which decides near
/// round-off); the shift only changes steps, not the converged point. The iteration ends at
/// the tolerance, after maxIterations, or when 8 iterations in a row have not halved the best
/// residual (contacts with almost no force switching at the round-off level of the
/// factorisation, seen in large piles near a relative residual of 1e-10); it then returns the
/// best iterate, not converged.
/// For e > 1 the iteration starts from the linear (e = 1) solution, scaled so that its largest
/// overlap carries the same force under the power law.
///
/// Determinate cases (equilibrium fixes the normal forces) return the solver's values up to the
/// tolerance. Tangential components are never changed. Linear in the load for every e.
/// Units: whatever the solver values are in (N s percussions or N forces); the output has the
/// same unit.
class CompatibleForceSolver {
 public:
  /// Computes compatible normal values for `solverNormal` (one per contact, >= 0) with the
  /// per-contact relative stiffness `stiffness` (> 0). Writes one value per contact to
  /// `compatibleNormal`. Bodies: only isSimulated() is used (positions enter via r_A, r_B).
  CompatibleForceStats solve(const BodyStorage& bodies, const ContactStorage& contacts,
                             std::span<const Real> solverNormal, std::span<const Real> stiffness,
                             const CompatibleForceSettings& settings,
                             std::vector<Real>& compatibleNormal);

  /// The same for percussions (P_N, P_T1, P_T2) per contact: `compatible` gets the compatible
  /// normal component and the solver's tangential components unchanged.
  CompatibleForceStats solve(const BodyStorage& bodies, const ContactStorage& contacts,
                             std::span<const Vec3> percussions, std::span<const Real> stiffness,
                             const CompatibleForceSettings& settings,
                             std::vector<Vec3>& compatible);

 private:
  struct Phase {
    std::uint32_t iterations = 0;
    bool converged = false;
    Real residualNorm = 0.0;
  };
  Phase newton(Real exponent, const CompatibleForceSettings& settings, Real loadNorm);
  void overlaps(const Eigen::VectorXd& x, Eigen::VectorXd& c) const;
  void residual(const Eigen::VectorXd& c, Real exponent, Eigen::VectorXd& r) const;
  Real potential(const Eigen::VectorXd& x, const Eigen::VectorXd& c, Real exponent) const;

  // Per contact (struct of arrays): coordinate offsets of A and B (-1: no coordinates),
  // Jacobian rows (translation and rotation parts for A and B), stiffness.
  std::vector<std::int64_t> dofA_, dofB_;
  std::vector<Vec3> jA_, jRotA_, jB_, jRotB_;
  std::vector<Real> k_;
  Real leverArmSq_ = 0.0;  // largest |r|^2 of a simulated partner (rotational shift scale)
  std::vector<std::int64_t> bodyDof_;  // per body index, -1 if no coordinates
  Eigen::VectorXd load_, x_, xBest_, c_, r_, dx_, xTrial_, cTrial_, rTrial_;
  std::vector<Eigen::Triplet<Real>> triplets_;
  Eigen::SparseMatrix<Real> h_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<Real>> ldlt_;
};

/// Relative stiffness per contact from the material pairs of its bodies.
void contactRelativeStiffness(const BodyStorage& bodies, const ContactStorage& contacts,
                              const ContactParameterMap& parameters, std::vector<Real>& stiffness);

}  // namespace grain
