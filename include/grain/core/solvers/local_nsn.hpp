// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/math/types.hpp>

namespace grain {

/// Value and generalized derivatives of the Alart-Curnier function of one contact (see
/// alartCurnierLinearise()).
struct NsnLinearisation {
  Vec3 phi;     ///< Phi(r, u) of the contact
  Mat3 dPhiDr;  ///< dPhi/dr with u held fixed: I - M
  Mat3 dPhiDu;  ///< dPhi/du with r held fixed: M diag(rhoN, rhoT, rhoT)
};

/// Semismooth Newton method on the Alart-Curnier function (Alart & Curnier 1991), for the whole
/// local problem FC(W, q, mu) (LocalSolverMethod::Nsn), and its proximal-point variant
/// (LocalSolverMethod::NsnProx).
///
/// Per contact, with u = (W r + q)_i, rho = (rhoN, rhoT, rhoT) > 0 and x = r - rho o u
/// (component-wise product):
///   Phi_N = r_N - max(0, x_N),
///   Phi_T = r_T - proj_disk(mu max(0, x_N))(x_T),
/// i.e. Phi = r - P(x) with P the Alart-Curnier prox of the SOR solver (prox::alartCurnier).
/// (This is the Jean-Moreau form of the function; Alart-Curnier's original uses the radius
/// mu r_N. Both vanish exactly at the solutions of FC(W, q, mu), where r_N = max(0, x_N).)
/// rhoN = 1 / W_NN and rhoT = 1 / max(W_T1T1, W_T2T2) of the diagonal block W_ii (the SOR metric
/// with alpha = 1; a non-positive entry is replaced by the mean positive diagonal entry of W).
///
/// Generalized Jacobian of P at x (an element of Clarke's Jacobian; on a kink the branch written
/// first is taken):
///   x_N <= 0:                      M = 0 (also for the tangential rows: the disk is a point);
///   x_N > 0, |x_T| <= mu x_N:      M = I (stick);
///   x_N > 0, |x_T| >  mu x_N:      M_NN = 1, M_TN = mu t, M_TT = mu x_N / |x_T| (I - t t^T),
///                                  t = x_T / |x_T| (slide).
/// Then dPhi/dr = I - M, dPhi/du = M diag(rho), and the Jacobian of the whole function is
///   J = I - M + M D W  (block (i, j) = delta_ij (I - M_i) + M_i D_i W_ij),
/// which has the 3x3 block pattern of W plus the diagonal blocks.
///
/// One Newton step solves J d = -Phi: with dense partial-pivoting LU when 3n <= nsnDenseLimit,
/// otherwise with sparse LU (Eigen::SparseLU, COLAMD ordering, pattern analysed once per solve).
/// If the factorisation fails or gives a non-finite d, (J + eta I) d = -Phi is solved with
/// eta = 1e-10, 1e-8, ..., 1e-2 times the largest |J_kk|. The step is r <- r + t d with the
/// first t in 1, 1/2, ..., 2^-20 that satisfies the non-monotone Armijo condition on
/// theta = |Phi|^2 / 2
///   theta(r + t d) <= max(theta of the last nsnLineSearchMemory iterates) - 1e-4 t 2 theta(r)
/// (Grippo-Lampariello-Lucidi); u is linear in r, so a trial costs no product with W.
/// The method stops as soon as the selected error measure of (r, u) is <= tolerance and
/// returns the iterate with the smallest error it evaluated.
///
/// Rescue. When the line search fails, or the best error has not decreased for 10 steps, the
/// iteration is stalled: nsnRescueSweeps SOR prox sweeps are run from the best iterate
/// (projected onto the cones) and Newton continues from there. After nsnMaxIter Newton steps
/// without reaching the tolerance, the solver falls back to SorProx from the best iterate (for
/// the remaining maxIter sweeps), as PQN does.
///
/// Proximal-point variant (NsnProx). A rank-deficient W (stacked boxes, capsules: more
/// contact unknowns than body velocities) makes J singular at sticking contacts. The
/// proximal-point iteration (Rockafellar 1976; Siconos' FC3D PROX applies it with its own
/// inner solvers) solves instead
///   r^{k+1} = solution of FC(W + sigma_k I, q - sigma_k r^k, mu),
/// whose Jacobians are regular for sigma_k > 0, and whose fixed points are the solutions of
/// FC(W, q, mu) (at r^{k+1} = r^k the two velocities agree). Each inner problem is solved by
/// the Newton iteration above (with rho from the diagonal of W + sigma_k I) from r^k, for at most
/// proxInnerMaxIter steps, until its own natural-map error is <= max(tolerance / 2,
/// proxInnerFactor e_k), e_k the error of r^k for FC(W, q, mu). The shift follows the progress:
///   sigma_k = mean(diag W) max(proxSigmaMin, c_k min(1, e_k)^proxNu),  c_0 = proxSigma,
/// with c multiplied by 10 when the inner solve does not reach its tolerance (its result is kept
/// only if it lowers e), divided by 10 after an inner solve of one step and by 2 after one of
/// two or three steps (not below 1e-12 proxSigma). sigma must go to zero with e for a fast
/// outer convergence: with proxSigmaMin = 1e-5 (default 0) the outer iteration on
/// spheres-in-a-box-98-i10000-256-10 does not reach 2e-10 in 200 steps, with 0 it takes 9. The
/// price is an occasional inner solve that stalls at a tiny sigma, after which c grows tenfold.
/// After proxMaxIter outer steps without reaching the tolerance the solver falls back to SorProx
/// from the best iterate.
///
/// alartCurnierLinearise() returns Phi, dPhi/dr and dPhi/du of one contact for the percussion
/// r, velocity u = (W r + q)_i, friction coefficient mu and parameters rhoN, rhoT > 0.
NsnLinearisation alartCurnierLinearise(const Vec3& r, const Vec3& u, Real mu, Real rhoN, Real rhoT);

}  // namespace grain
