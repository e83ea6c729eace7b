// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <grain/core/math/types.hpp>
#include <grain/core/solvers/prox.hpp>

/// Local (Delassus-matrix) frictional contact problems and the accuracy measures shared by all
/// solvers of such problems.
namespace grain {

/// Dynamic-size vector of reals.
using VecX = Eigen::Matrix<Real, Eigen::Dynamic, 1>;
/// Column-major sparse matrix of reals.
using SparseMat = Eigen::SparseMatrix<Real>;

/// Local frictional contact problem FC(W, q, mu) of n contacts (the FCLIB "local" problem,
/// Acary, Bremond, Koziara, Perignon 2014):
///
///   u = W r + q,
///   u^_i = u_i + mu_i ||u_T,i|| e_N               (De Saxce modified velocity)
///   K*_mu_i  contains  u^_i  _|_  r_i  in  K_mu_i  for every contact i,
///
/// with K_mu = { r : ||r_T|| <= mu r_N } and its dual cone K*_mu. Per contact the three
/// components are ordered (normal, tangent 1, tangent 2); W is 3n x 3n, its 3x3 block (i, j)
/// couples contacts i and j. W is symmetric positive semi-definite for problems that come
/// from mechanics (W = H^T M^-1 H); files may carry small asymmetries, which the solvers
/// tolerate (they only read rows of W).
///
/// Mapping onto grain's contact problem of one Moreau step (ContactSolver, thesis eqs. 8.14,
/// 7.33): r = P (percussions in the contact frames, N s), u = xi = gamma^E + eps gamma^S (the
/// velocity the contact law acts on, m/s), W = G = W_c^T M^-1 W_c (+ D/dt for UCFD contacts),
/// q = xi at P = 0. grain's velocity convention (gamma = xi) is FCLIB's directly: there is no
/// sign change and the component order is the same. assembleLocalProblem() builds this problem
/// from a ContactStorage.
///
/// Planar problems (FCLIB spacedim 2, one tangent) are embedded exactly: each contact gets a
/// second tangent t2 with W(t2, t2) = 1, no coupling and q_t2 = 0. Then u_t2 = r_t2, and the
/// Coulomb law forces r_t2 = 0 in every solution (sticking needs u_T = 0; sliding needs r_T
/// opposite to u_T, impossible with r_t2 = u_t2 != 0). Both error measures are unchanged by the
/// embedding. spaceDim records the dimension of the source so writers can undo it.
struct LocalProblem {
  SparseMat W;        ///< Delassus matrix (3n x 3n)
  VecX q;             ///< free local velocity (3n)
  VecX mu;            ///< Coulomb friction coefficient per contact (n), >= 0
  int spaceDim = 3;   ///< dimension of the original problem: 3, or 2 for an embedded planar one
  std::string title;  ///< optional information (e.g. FCLIB /info/title)
  std::string description;  ///< optional information (e.g. FCLIB /info/description)

  /// Number of contacts n.
  std::size_t contactCount() const { return static_cast<std::size_t>(mu.size()); }
};

/// The 3-D local problem of a planar one (see LocalProblem): w2 is 2n x 2n with the components
/// (normal, tangent) per contact, q2 has 2n and mu n entries. Sets spaceDim = 2. Throws
/// grain::Error on inconsistent sizes.
LocalProblem embedPlanarProblem(const SparseMat& w2, const VecX& q2, const VecX& mu);

/// The (normal, tangent 1) components of every contact of a 3n vector: the planar vector of an
/// embedded problem (2n entries).
VecX planarPart(const VecX& v3);

/// Throws grain::Error (naming the field) unless W is 3n x 3n, q has 3n and mu n entries,
/// every value is finite, mu >= 0 and spaceDim is 2 or 3.
void validate(const LocalProblem& problem);

/// u = W r + q.
VecX localVelocity(const LocalProblem& problem, const VecX& r);

/// Natural-map residual of one contact (Siconos' fc3d error, Acary-Bremond-Huber 2018):
///   e = r - P_K_mu(r - (u + mu ||u_T|| e_N)).
/// e = 0 if and only if (r, u) satisfy the De Saxce/Coulomb law at this contact.
inline Vec3 naturalMapResidual(const Vec3& r, const Vec3& u, Real mu) {
  return r - prox::projectCone(r - prox::deSaxceShift(u, mu), mu);
}

/// Natural-map residual of one contact for the convex relaxation (Anitescu's cone
/// complementarity problem K_mu contains r _|_ u in K*_mu, u linear in r, no De Saxce term):
///   e = r - P_K_mu(r - u).
/// e = 0 if and only if r is in K_mu, u in K*_mu and r . u = 0. A sliding contact of the
/// relaxation separates with u_N = mu ||u_T|| > 0, so e = 0 here does not mean that the Coulomb
/// law holds (it does where u_T = 0 or mu = 0).
inline Vec3 relaxedResidual(const Vec3& r, const Vec3& u, Real mu) {
  return r - prox::projectCone(r - u, mu);
}

/// Which accuracy measure a solver stops on.
enum class LocalErrorMeasure : std::uint8_t {
  /// Siconos / Acary-Bremond-Huber: ||e||_2 / max(||q||, ||r||, ||u||), e the natural-map
  /// residual of all contacts (the plain ||e||_2 if the three norms are all <= DBL_EPSILON).
  NaturalMap,
  /// Koziara (PQN report, eq. 40): g = sum_i <W_ii^-1 e_i, e_i> / sum_i <W_ii^-1 q_i, q_i>,
  /// with e_i the same natural-map residual (Koziara's C(R) = F(R) + m(R - F(R)) equals
  /// r - P_K(r - u^)). It is an energy ratio: the work of the constraint violation against the
  /// kinetic energy of the free relative motion. (The plain numerator if the denominator is 0.)
  Koziara,
  /// The natural map of the convex relaxation: ||e||_2 / max(||q||, ||r||, ||u||) (the plain
  /// ||e||_2 if the three norms are all <= DBL_EPSILON), e the relaxedResidual() of all contacts.
  /// It measures how well (r, u) solve the relaxed problem, not the Coulomb problem.
  Relaxed,
};

/// The normalised natural-map error from the global norms: residual / max(normQ, normR, normU),
/// or the plain residual if the three norms are all <= DBL_EPSILON; +inf if a value is not
/// finite. (Shared by LocalErrorEvaluator and ContactSolver, so both report the same number.)
Real naturalMapError(Real residualNorm, Real normQ, Real normR, Real normU);
/// Koziara's measure from its sums: numerator / denominator, or the numerator if the
/// denominator is not positive.
Real koziaraError(Real numerator, Real denominator);

/// The W_ii^-1 of Koziara's measure: the inverse of the symmetric part of the 3x3 block w, or its
/// pseudo-inverse if it is singular (eigenvalues below 1e-12 of the largest dropped).
Mat3 blockInverse(const Mat3& w);

/// Name of a measure ("natural-map", "koziara", "relaxed").
std::string_view toString(LocalErrorMeasure m);

/// Evaluates the error measures of a problem; computes ||q|| at construction and the inverses of
/// the diagonal blocks W_ii on the first use of the Koziara measure. W_ii^-1 is the inverse of the
/// symmetric part of W_ii, or, for a singular block, the pseudo-inverse (eigenvalues below 1e-12 of
/// the largest are dropped). The problem must outlive the evaluator.
class LocalErrorEvaluator {
 public:
  explicit LocalErrorEvaluator(const LocalProblem& problem);

  /// ||e||_2 over all contacts (absolute natural-map residual).
  Real naturalMapAbsolute(const VecX& r, const VecX& u) const;
  /// Normalised natural-map error (LocalErrorMeasure::NaturalMap).
  Real naturalMap(const VecX& r, const VecX& u) const;
  /// ||e||_2 / ||q||_2 (the normalisation of Acary-Bremond-Huber's profiles).
  Real naturalMapOverQ(const VecX& r, const VecX& u) const;
  /// ||e||_2 over all contacts with e the relaxedResidual() (absolute).
  Real relaxedAbsolute(const VecX& r, const VecX& u) const;
  /// Normalised relaxed error (LocalErrorMeasure::Relaxed).
  Real relaxed(const VecX& r, const VecX& u) const;
  /// Koziara's energy measure (LocalErrorMeasure::Koziara).
  Real koziara(const VecX& r, const VecX& u) const;
  /// The selected measure.
  Real evaluate(LocalErrorMeasure m, const VecX& r, const VecX& u) const;

  /// ||q||_2.
  Real normQ() const { return normQ_; }

 private:
  void prepareKoziara() const;

  const LocalProblem* problem_;
  Real normQ_ = 0;
  mutable bool koziaraReady_ = false;
  mutable Real koziaraDenominator_ = 0;
  mutable std::vector<Mat3> blockInverse_;  // per contact, (sym W_ii)^-1 or its pseudo-inverse
};

}  // namespace grain
