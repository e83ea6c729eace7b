// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/math/types.hpp>

namespace grain {

/// Linearisation of one contact for PqnSolver steps (see pqnLinearise()).
struct PqnLinearisation {
  Vec3 c;  ///< C_w(R) of the contact
  Mat3 x;  ///< X = (I - Y) dF_w/dU
  Mat3 y;  ///< Y = dm_w/dz
};

/// Projected quasi-Newton method of Koziara ("A projected quasi-Newton method for dynamic
/// multibody frictional contact problems", PARMES report 2019, Algorithm 1), written with the
/// normal component first.
///
/// Per contact, with U = (W R + q)_i and the smoothing parameter w > 0:
///   F_w(U) = (U_N + mu (sqrt(|U_T|^2 + w^2) - w), U_T)          (smoothed De Saxce velocity)
///   z      = R - F_w(U)
///   l1 = (-z_N - mu |z_T|) / (1 + mu^2),  l2 = (|z_T| - mu z_N) / (1 + mu^2)  (spectral values)
///   v1 = (-1, -mu e),  v2 = (-mu, e),  e = z_T / |z_T|  (any unit vector if z_T = 0)
///   m(z)   = max(0, l1) v1 + max(0, l2) v2 = projection of z onto the polar cone of K_mu
///   m_w(z) = f1 v1 + f2 v2,  f1 = w g(l1 / w),  f2 = mu w g(l2 / (mu w)),
///            g(x) = (sqrt(x^2 + 4) + x) / 2         (Fukushima-Luo-Tseng smoothing)
///   C_w(R) = F_w(U) + m_w(R - F_w(U))               (C_0(R) = R - P_K(R - u^), the natural map)
/// The Jacobian of m_w with respect to z (normal first) is
///   [[d, c e^T], [c e, a I + (b - a) e e^T]],
///   g1' = g'(l1 / w), g2' = g'(l2 / (mu w)), g'(x) = (1 + x / sqrt(x^2 + 4)) / 2,
///   a = (1 + (l2 + mu l1) / (sqrt(l2^2 + 4 mu^2 w^2) + mu sqrt(l1^2 + 4 w^2))) / 2
///       (= (f2 - mu f1) / |z_T|, written without cancellation),
///   b = (mu^2 g1' + g2') / (1 + mu^2), c = mu (g1' - g2') / (1 + mu^2), d = (g1' + mu^2 g2') / (1
///   + mu^2),
/// which is g'(l1 / w) I when z_T = 0. For mu = 0 the tangential part is not smoothed
/// (f2 = l2 = |z_T|, g2' = 1, a = 1).
/// Treating U and R as independent, dC_w = X dU + Y dR with Y = dm_w/dz and
/// X = (I - Y) dF_w/dU (dF_w/dU is the identity except the normal row
/// (1, mu U_T^T / sqrt(|U_T|^2 + w^2))), so grad C_w = X W + Y. One step:
///   solve (X W + Y + delta I) dR = C_w(R) by GMRES (right preconditioned by the inverses of the
///   3x3 diagonal blocks X_ii W_ii + Y_ii + delta I, zero start, stop at eps |C_w| or after m
///   iterations), then R <- P_K(R - dR).
/// Koziara's only globalisation is the shift delta and the projection. grain adds four
/// options (documented as not in his report):
///   - pqnScaling (default on): contact i's Newton variable is rho_i R_i with rho_i = (W_ii)_NN,
///     the inverse effective mass of the contact along its normal (the mean diagonal entry of W
///     if that is not positive), so that both parts of z = rho_i R_i - F_w(U_i) are velocities:
///     C_w,i = F_w(U_i) + m_w(rho_i R_i - F_w(U_i)), whose zeros are those of C_w (K_i is a
///     cone), and grad C_w = X W + rho Y per unit of R; the step is R <- P_K(R - dR) with
///     (X W + rho Y + delta I) dR = C_w, rho = diag(rho_i I). It is the natural map's
///     parameter: C_w,i is rho_i (R_i - P_K(R_i - F(U_i) / rho_i)) for w -> 0, the same
///     solutions. Without it R (N s) and U (m/s) are compared directly: where W is large (light
///     bodies: (W_ii)_NN ~ 240-480 1/kg for 1 cm spheres of density 1000) z is U to within
///     |R| / |U| ~ 1e-3, so a contact's smoothed projection turns from sticking to sliding or
///     separating within |U| ~ |R|, the Newton model holds only there, and the identity-like
///     rows Y of separating contacts get delta = 0.01 mean diag W ~ 9 against entries ~ 1, so
///     each Newton step removes about a tenth of their residual. On the settled 96-sphere pile
///     of bench/pqn_pile.cpp (natural map 1e-6) PQN then did not converge in 1000 Newton steps
///     in any step (not even with exact Newton solves); with it, 26 Newton steps per step
///     (docs/solvers.md). (Solfec, the report's code, works with reaction forces and
///     W = h H M^-1 H^T, nearer to unit scale for such bodies.) With rho the Newton step does not
///     depend on the unit of R (R = a R', W' = a W gives dR' = dR / a); contacts with
///     (W_ii)_NN = 1 are unchanged.
///   - pqnBacktracking (default on): the step is R <- P_K(R - tau dR) with the first tau in
///     1, 1/2, ..., 2^-10 that lowers the selected error measure (the last one if none does);
///     each trial costs one product with W. Without it, some small random problems 2-cycle (as his
///     report warns for exact solves).
///   - pqnDeltaContinuation (default on): delta_k = delta |C_k| / |C_0| (switched evolution
///     relaxation of pseudo-transient continuation, Kelley-Keyes 1998). A constant delta acts as
///     a proximal term and makes the final convergence linear and slow on rank-deficient W (one
///     exact step from an SOR iterate at 1e-10 reaches 3e-13 with delta = 0, while 30 steps with
///     delta = 0.01 mean(diag W) gain less than 1 %; Capsules-i100-1090).
///   - pqnOmegaContinuation theta (default 1e-4): the smoothing of step k is
///     w_k = max(w, theta_k e_k |q|_inf), e_k the iterate's (relative) error, theta_0 = theta,
///     and theta_k divided by 10 after every Newton step that lowers e by less than a tenth. w is
///     an absolute velocity formed from a relative tolerance (1e-9 m/s at 1e-6); on the
///     second cold step of the settled lattice pile (1500 spheres, g dt = 5e-3 m/s) the Newton
///     iteration failed with w (1000 steps, then the fallback) and converged with any w from
///     1e-8 to 1e-7; the continuation gives such a w while e is large and w near the solution.
///     Dividing theta where a step stalls keeps it from holding a stalled iteration at its own
///     smoothing (Capsules-i101-404: 63 Newton steps, 1144 iterations with fallback without the
///     division, 28 with w alone). docs/solvers.md has the FCLIB and lattice figures.
///   - pqnDirectSolve: the Newton system is assembled (it has the 3x3 block pattern of W) and
///     solved by sparse LU instead of GMRES; pqnWarmStartTolerance: SOR prox until that error
///     before the first Newton step.
/// Without reaching the tolerance after pqnMaxIter steps the solver falls back to SOR prox from
/// the best iterate (Koziara's Algorithm 1, step 3).
/// Defaults (Koziara's Table 1 with the recommended relative delta): w = 1e-3 tol,
/// delta = 0.01 mean(diag W), eps = 0.25, m = 10.
///
/// pqnLinearise() returns C_w, X and Y of one contact for percussion r, velocity u = (W r + q)_i,
/// friction coefficient mu and smoothing w > 0.
PqnLinearisation pqnLinearise(const Vec3& r, const Vec3& u, Real mu, Real w);

}  // namespace grain
