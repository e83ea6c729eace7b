// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/math/types.hpp>

/// Primal-dual interior point method (LocalSolverMethod::Ipm) for the CONVEX RELAXATION of a
/// local frictional contact problem: Anitescu's cone complementarity problem
///
///   K_mu_i contains r_i  _|_  u_i = (W r + q)_i  in K*_mu_i   for every contact i,
///
/// the optimality condition of min 1/2 r.W r + q.r over the friction cones when W is symmetric
/// positive semi-definite, and the problem Kleinert, Simeon and Dressler solve with an interior
/// point method (their eq. 22). It differs from the Coulomb problem FC(W, q, mu) by the missing De
/// Saxce term: a sliding contact of the relaxation separates with the normal "dilation" velocity
/// u_N = mu ||u_T|| > 0 (the Coulomb law would keep u_N = 0). The two problems coincide where no
/// contact slides (sticking or separating contacts) and for frictionless contacts (mu = 0).
///
/// Formulation. Per contact the scaling S = diag(1, mu, mu) maps the problem onto the Lorentz
/// cone L = { x : x_0 >= ||x_1|| } (self-dual): r = S x with x in L is the same as r in K_mu, and
/// y = S u is in L exactly when u is in K*_mu; x . y = r . u. Hence
///   x in L^n,  y = N x + p in L^n,  x . y = 0,   N = S W S (symmetric if W is), p = S q.
/// (No division by mu: a frictionless contact has S = diag(1, 0, 0), r_T = 0 and x_T, y_T stay 0.)
///
/// Jordan algebra of L: x o y = (x . y, x_0 y_1 + y_0 x_1), identity e = (1, 0, 0),
/// Arw(x) = [[x_0, x_1^T], [x_1, x_0 I]] (x o y = Arw(x) y), det x = x_0^2 - ||x_1||^2, J = diag(1,
/// -1, -1).
///
/// Nesterov-Todd scaling of an interior pair (x, y) (ntScaling()): with x^ = x / sqrt(det x),
/// y^ = y / sqrt(det y), g = sqrt((1 + x^ . y^) / 2), w^ = (x^ + J y^) / (2 g),
/// v = (w^ + e) / sqrt(2 (w^_0 + 1)) and beta = (det x / det y)^(1/4), the symmetric matrix
/// G = beta (2 v v^T - J) has the inverse G^-1 = (2 (J v)(J v)^T - J) / beta and maps
///   G^-1 x = G y = lambda   (the scaled point, in int L).
///
/// Iteration (infeasible primal-dual path following, Mehrotra predictor-corrector): with the
/// residual r_p = y - N x - p and the mean complementarity mu_c = x . y / n, a Newton direction
/// for the target lambda o (G^-1 dx + G dy) = t (t the right-hand side) is
///   dd = Arw(lambda)^-1 t,   (N + G^-2 + delta I) dx = G^-1 dd + r_p,   dy = N dx - r_p.
///   - predictor (affine): t = -lambda o lambda; steps a_x, a_y to the boundary (maxConeStep(),
///     at most 1); sigma = min(1, ((x + a_x dx) . (y + a_y dy) / (x . y))^3);
///   - corrector: t = sigma mu_c e - lambda o lambda - (G^-1 dx_aff) o (G dy_aff), same matrix;
///   - step: x += a dx, y += a dy with a = min(1, ipmStepFraction * step to the boundary), one
///     step length for x and y (r_p then shrinks by the factor 1 - a).
/// The matrix N + G^-2 + delta I (block pattern of W, delta = ipmRegularization times the mean
/// diagonal entry of N; multiplied by 100, up to three times, if the factorisation fails) is
/// factorised once per iteration by sparse LDL^T (Eigen SimplicialLDLT) when W is symmetric
/// (||W - W^T||_F <= 1e-12 ||W||_F; its symmetric part is then used), and by sparse LU (Eigen
/// SparseLU) otherwise; each solve is followed by two steps of iterative refinement against
/// N + G^-2 (without delta). det x is evaluated as (x_0 - ||x_1||)(x_0 + ||x_1||).
/// Start: x = rho_x e with rho_x = ||q||_inf / (mean diagonal entry of N), y = N x + p, and every
/// y_i whose smallest eigenvalue y_0 - ||y_1|| is below rho_y = ||q||_inf is moved along e to it.
/// A given initial guess is not used (the method needs an interior start).
///
/// Stopping and polishing. After every iteration the relaxed error
/// (LocalErrorMeasure::Relaxed) of r = S x, u = W r + q is evaluated; the method stops when it
/// is <= tolerance, after ipmMaxIter iterations, when the step length falls below 1e-12 (or a
/// direction is not finite), when a scaling G_i is not finite (a pair numerically on the cone
/// boundary) or when the Newton matrix cannot be factorised. The
/// iterate with the smallest error is then polished, if it has not converged, by at most
/// ipmPolishSteps Newton steps on the relaxed natural map F(r) = r - P_K(r - (W r + q)) with the
/// generalised Jacobian J = I - D + D W, D = blockdiag of the Jacobians of P_K at r - u
/// (coneProjectionJacobian()). Each step first tries the semismooth Newton step
/// (J + delta' I) dr = -F (sparse LU, delta' = ipmRegularization times the mean diagonal entry
/// of W); where W is rank-deficient J is nearly singular and that step can be useless, and then
/// Levenberg-Marquardt steps (J^T J + s I) dr = -J^T F (sparse LDL^T) are tried with s =
/// min(error, 1e-6) mean diag(J^T J), multiplied by 100 up to three times. A step is accepted
/// (with the lengths 1, 1/2, 1/4) only if it lowers the relaxed error; polishing stops at the
/// first step that is not accepted. If the tolerance is still not reached, at most ipmApgdSteps
/// APGD steps on the relaxation (apgdDeSaxce = false, see local_solver.hpp) follow from the best
/// iterate: on problems with degenerate contacts (r and u both tending to 0) the IPM stalls near
/// a complementarity of 1e-13 with a relaxed error of 1e-9 to 1e-7, and the Newton steps do not
/// always identify those contacts' states.
/// The result's error and converged refer to the relaxed measure, whatever errorMeasure says:
/// this solver solves the relaxed problem, not FC(W, q, mu). iterations counts IPM iterations
/// plus polishing steps (Newton and APGD; polishSteps).
namespace grain::ipm {

/// Jordan product x o y of the Lorentz cone.
inline Vec3 jordanProduct(const Vec3& x, const Vec3& y) {
  return Vec3(x.dot(y), x.x() * y.y() + y.x() * x.y(), x.x() * y.z() + y.x() * x.z());
}

/// d with lambda o d = t (Arw(lambda)^-1 t), lambda in int L.
inline Vec3 arrowSolve(const Vec3& lambda, const Vec3& t) {
  const Real l0 = lambda.x();
  const Real det = l0 * l0 - lambda.y() * lambda.y() - lambda.z() * lambda.z();
  const Real d0 = (l0 * t.x() - lambda.y() * t.y() - lambda.z() * t.z()) / det;
  return Vec3(d0, (t.y() - d0 * lambda.y()) / l0, (t.z() - d0 * lambda.z()) / l0);
}

/// det x = x_0^2 - ||x_1||^2.
inline Real coneDet(const Vec3& x) {
  return x.x() * x.x() - x.y() * x.y() - x.z() * x.z();
}

/// Nesterov-Todd scaling of an interior pair (x, y) of L (see above).
struct NtScaling {
  Real beta = 1;
  Vec3 v = Vec3(1, 0, 0);
  Vec3 lambda = Vec3(1, 0, 0);  ///< G y = G^-1 x

  /// G a = beta (2 v (v . a) - J a).
  Vec3 apply(const Vec3& a) const {
    return beta * (2.0 * v.dot(a) * v - Vec3(a.x(), -a.y(), -a.z()));
  }
  /// G^-1 a = (2 Jv (Jv . a) - J a) / beta.
  Vec3 applyInverse(const Vec3& a) const {
    const Vec3 jv(v.x(), -v.y(), -v.z());
    return (2.0 * jv.dot(a) * jv - Vec3(a.x(), -a.y(), -a.z())) / beta;
  }
  /// G as a matrix.
  Mat3 matrix() const;
  /// G^-1 as a matrix.
  Mat3 inverseMatrix() const;
};

/// NT scaling of x, y in int L (det x > 0, det y > 0, x_0 > 0, y_0 > 0).
NtScaling ntScaling(const Vec3& x, const Vec3& y);

/// Largest t >= 0 with x + t dx in L for x in int L (+infinity if dx keeps it in L for all t).
Real maxConeStep(const Vec3& x, const Vec3& dx);

/// Jacobian of P_K_mu (prox::projectCone) at z: I inside K_mu, 0 inside the polar cone,
/// otherwise that of (l, mu l z_T / ||z_T||), l = (z_N + mu ||z_T||) / (1 + mu^2) (symmetric).
/// On the boundaries between the regions it returns the Jacobian of the first of the three cases
/// of projectCone() that applies (an element of the generalised Jacobian).
Mat3 coneProjectionJacobian(const Vec3& z, Real mu);

}  // namespace grain::ipm
