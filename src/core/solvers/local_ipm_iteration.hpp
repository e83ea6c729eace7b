// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <grain/core/solvers/local_ipm.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/prox.hpp>

#include "local_solver_detail.hpp"

/// The interior point iteration of local_ipm.hpp, written once for the assembled problem
/// (local_ipm.cpp: Newton systems by sparse LDL^T or LU, polishing by sparse LU and LDL^T) and the
/// matrix-free problem (matrix_free_ipm.cpp: Newton systems by block-Jacobi PCG, polishing by
/// GMRES and PCG) (private to grain_core). An `IpmOps` type provides the Ops of delassus_ops.hpp,
/// its error() being the relaxed measure whatever the settings say, and
///   Real scale(const VecX& sc);               sets S = diag(sc); returns the mean positive
///                                             diagonal entry of N = S W S (over all processes),
///                                             delta being ipmRegularization times it
///   void newtonProduct(const VecX& x, const VecX& wsx, VecX& nx);
///                                             nx = N x of the iterate x whose W S x is wsx
///   bool prepare(const std::vector<Mat3>& gInv2);
///                                             the Newton matrix N + G^-2 + delta I of this
///                                             iteration (G_i^-2 given); false if it cannot be
///                                             used (the iteration stops)
///   std::uint32_t solve(const VecX& rhs, VecX& dx, VecX& ndx);
///                                             dx = (N + G^-2 + delta I)^-1 rhs, ndx = N dx;
///                                             returns the CG iterations taken (0 if direct)
///   void apgd(const LocalSolverSettings& s, const VecX& r, LocalSolverResult& pg);
///                                             the APGD steps of s from r
/// and for the polishing (J = I - D + D W, F the relaxed natural map at the best iterate):
///   Real polishScale();                       the mean positive diagonal entry of W (over all
///                                             processes)
///   void linearise(const std::vector<Mat3>& d, Real deltaW);
///                                             J of the contacts' D_i, and delta' = deltaW
///   bool newtonStep(const VecX& f, VecX& dr, std::uint32_t& krylov);
///                                             dr with (J + delta' I) dr = -F (false: none)
///   Real levenbergMarquardtScale(const VecX& f);
///                                             keeps J^T F; returns the scale of the shift (the
///                                             mean diagonal entry of J^T J or an estimate of it)
///   bool levenbergMarquardtStep(Real shift, VecX& dr, std::uint32_t& krylov);
///                                             dr with (J^T J + shift I) dr = J^T F (false: none)
/// (krylov: the Krylov iterations taken are added to it).
/// Every process makes the same calls in the same order, with or without contacts, so that the
/// collective ones line up.
namespace grain::detail {

/// The Newton polishing of local_ipm.hpp from the best iterate: at most ipmPolishSteps steps on
/// the relaxed natural map F(r) = r - P_K(r - (W r + q)), each the semismooth Newton step
/// (J + delta' I) dr = -F, and if that does not lower the error, Levenberg-Marquardt steps
/// (J^T J + s I) dr = -J^T F with s = max(min(error, 1e-6), delta) times the scale (delta =
/// max(ipmRegularization, 1e-14)), multiplied by 100 up to three times; a step is tried with the
/// lengths 1, 1/2, 1/4 and kept only if it lowers the relaxed error. Stops at the first step not
/// kept. Returns the steps kept; adds the Krylov iterations to result.cgIterations.
template <class IpmOps>
std::uint32_t ipmPolish(IpmOps& ops, const LocalSolverSettings& s, BestIterate& best,
                        LocalSolverResult& result) {
  const std::size_t n = ops.contacts();
  const auto m = static_cast<Eigen::Index>(3 * n);
  const Real delta = std::max(s.ipmRegularization, Real(1e-14));
  const Real deltaW = delta * ops.polishScale();
  std::vector<Mat3> d(n);
  VecX f(m);
  VecX uTrial(m);
  VecX dr;
  std::uint32_t steps = 0;
  for (std::uint32_t it = 0; it < s.ipmPolishSteps && !(best.error <= s.tolerance); ++it) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Vec3 z = best.r.segment<3>(k) - best.u.segment<3>(k);
      d[i] = ipm::coneProjectionJacobian(z, ops.mu(i));
      f.segment<3>(k) = best.r.segment<3>(k) - prox::projectCone(z, ops.mu(i));
    }
    ops.linearise(d, deltaW);
    bool accepted = false;
    auto tryStep = [&](const VecX& step) {
      if (!ops.allTrue(step.allFinite())) {
        return;
      }
      Real tau = 1.0;
      for (int halving = 0; halving <= 2 && !accepted; ++halving, tau *= 0.5) {
        const VecX rTrial = best.r + tau * step;
        ops.multiply(rTrial, uTrial);
        uTrial += ops.q();
        const Real e = ops.error(rTrial, uTrial);
        if (e < best.error) {
          best.offer(rTrial, uTrial, e);
          accepted = true;
        }
      }
    };
    // First the semismooth Newton step. Where W is rank-deficient J is (nearly) singular and that
    // step can be useless; then Levenberg-Marquardt steps, which stay out of the null space.
    if (ops.newtonStep(f, dr, result.cgIterations)) {
      tryStep(dr);
    }
    if (!accepted) {
      Real shift =
          ops.levenbergMarquardtScale(f) * std::max(std::min(best.error, Real(1e-6)), delta);
      for (int attempt = 0; attempt < 4 && !accepted; ++attempt, shift *= 100.0) {
        if (ops.levenbergMarquardtStep(shift, dr, result.cgIterations)) {
          tryStep(-dr);
        }
      }
    }
    if (!accepted) {
      break;
    }
    ++steps;
  }
  return steps;
}

/// The interior point method of local_ipm.hpp (start, Mehrotra predictor-corrector with
/// Nesterov-Todd scaling, steps to the cone boundary, stopping rules), then the polishing and APGD
/// stages; fills `result` (r, u, error, converged, finite, iterations, polishSteps, cgIterations)
/// with the best iterate on the relaxed measure. The initial guess is not used.
template <class IpmOps>
void ipmIterate(IpmOps& ops, const LocalSolverSettings& s, LocalSolverResult& result) {
  const std::size_t n = ops.contacts();
  const auto m = static_cast<Eigen::Index>(3 * n);
  const VecX& q = ops.q();
  // Contacts over all processes (none: r = 0 solves the empty problem, on every process alike).
  const Real total = ops.sum(static_cast<Real>(n));
  if (!(total > 0.0)) {
    result.r = VecX::Zero(m);
    result.u = q;
    result.error = 0.0;
    result.converged = true;
    return;
  }

  BestIterate best;
  best.offer(VecX::Zero(m), q, ops.error(VecX::Zero(m), q));

  // Scaled problem: N = S W S, p = S q, S = diag(1, mu, mu) per contact.
  VecX sc(m);
  for (std::size_t i = 0; i < n; ++i) {
    sc.segment<3>(static_cast<Eigen::Index>(3 * i)) = Vec3(1.0, ops.mu(i), ops.mu(i));
  }
  const VecX p = sc.cwiseProduct(q);
  const Real diagMean = ops.scale(sc);

  // Start.
  const Real pInf = ops.max(n > 0 ? p.cwiseAbs().maxCoeff() : 0.0);
  const Real rhoY = pInf > 0.0 ? pInf : 1.0;
  const Real rhoX = rhoY / diagMean;
  VecX x = VecX::Zero(m);
  for (std::size_t i = 0; i < n; ++i) {
    x[static_cast<Eigen::Index>(3 * i)] = rhoX;
  }
  VecX wsx(m);  // W S x of the current iterate
  VecX nx(m);   // N x of the current iterate
  ops.multiply(sc.cwiseProduct(x), wsx);
  ops.newtonProduct(x, wsx, nx);
  VecX y = nx + p;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    const Real lowest = y[k] - std::hypot(y[k + 1], y[k + 2]);
    if (lowest < rhoY) {
      y[k] += rhoY - lowest;
    }
  }

  std::vector<ipm::NtScaling> nt(n);
  std::vector<Mat3> gInv2(n);  // G_i^-2
  VecX rp(m);
  VecX rhs(m);
  VecX ndx(m);
  VecX dxAff(m);
  VecX dyAff(m);
  VecX dx(m);
  VecX dy(m);
  VecX r(m);
  VecX u(m);
  std::uint32_t iterations = 0;

  // One Newton direction for the complementarity target t (per contact from `target`):
  // dx = (N + G^-2 + delta I)^-1 (G^-1 Arw(lambda)^-1 t + r_p), dy = N dx - r_p.
  auto direction = [&](auto&& target, VecX& dxOut, VecX& dyOut) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Vec3 di = ipm::arrowSolve(nt[i].lambda, target(i));
      rhs.segment<3>(k) = nt[i].applyInverse(di) + rp.segment<3>(k);
    }
    result.cgIterations += ops.solve(rhs, dxOut, ndx);
    dyOut = ndx - rp;
  };
  // The largest step keeping x and y in L over all processes; -infinity if a direction is not
  // finite on some process.
  auto maxStep = [&](const VecX& dxv, const VecX& dyv) {
    Real a = std::numeric_limits<Real>::infinity();
    if (!dxv.allFinite() || !dyv.allFinite()) {
      a = -std::numeric_limits<Real>::infinity();
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<Eigen::Index>(3 * i);
        a = std::min({a, ipm::maxConeStep(x.segment<3>(k), dxv.segment<3>(k)),
                      ipm::maxConeStep(y.segment<3>(k), dyv.segment<3>(k))});
      }
    }
    return -ops.max(-a);
  };

  for (std::uint32_t it = 0; it < s.ipmMaxIter && !(best.error <= s.tolerance); ++it) {
    // Scalings and Newton blocks G_i^-2; x . y and the count of contacts whose scaling is not
    // finite (a pair numerically on the cone boundary) in one reduction.
    std::array<Real, 2> sums{x.dot(y), 0.0};
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      nt[i] = ipm::ntScaling(x.segment<3>(k), y.segment<3>(k));
      const Mat3 gi = nt[i].inverseMatrix();
      gInv2[i] = gi * gi;
      if (!gInv2[i].allFinite() || !nt[i].lambda.allFinite()) {
        sums[1] += 1.0;
      }
    }
    ops.sum(sums);
    if (sums[1] > 0.0 || !ops.prepare(gInv2)) {
      break;
    }
    ops.newtonProduct(x, wsx, nx);
    rp = y - nx - p;
    const Real muC = sums[0] / total;

    // Predictor.
    direction([&](std::size_t i) { return Vec3(-ipm::jordanProduct(nt[i].lambda, nt[i].lambda)); },
              dxAff, dyAff);
    const Real aAff = std::min(1.0, maxStep(dxAff, dyAff));
    const Real muAff = ops.sum((x + aAff * dxAff).dot(y + aAff * dyAff)) / total;
    const Real sigma = std::clamp(std::pow(muAff / muC, 3), 0.0, 1.0);

    // Corrector.
    direction(
        [&](std::size_t i) {
          const auto k = static_cast<Eigen::Index>(3 * i);
          const Vec3 corr = ipm::jordanProduct(nt[i].applyInverse(dxAff.segment<3>(k)),
                                               nt[i].apply(dyAff.segment<3>(k)));
          return Vec3(Vec3(sigma * muC, 0.0, 0.0) - ipm::jordanProduct(nt[i].lambda, nt[i].lambda) -
                      corr);
        },
        dx, dy);
    const Real a = std::min(1.0, s.ipmStepFraction * maxStep(dx, dy));
    if (!(a > 1e-12)) {
      break;
    }
    x += a * dx;
    y += a * dy;
    iterations = it + 1;

    // u = W r + q with r = S x (and W S x for the next residual).
    r = sc.cwiseProduct(x);
    ops.multiply(r, wsx);
    u = wsx + q;
    const Real e = ops.error(r, u);
    if (!std::isfinite(e)) {
      result.finite = false;
      break;
    }
    best.offer(r, u, e);
  }
  result.polishSteps = ipmPolish(ops, s, best, result);
  if (!(best.error <= s.tolerance) && s.ipmApgdSteps > 0) {
    // Projection steps: APGD on the relaxation from the best iterate (linear convergence, but it
    // settles the contacts whose active set the Newton steps do not identify).
    LocalSolverSettings apgd = s;
    apgd.method = LocalSolverMethod::Apgd;
    apgd.apgdDeSaxce = false;
    apgd.errorMeasure = LocalErrorMeasure::Relaxed;
    apgd.maxIter = s.ipmApgdSteps;
    LocalSolverResult pg;
    ops.apgd(apgd, best.r, pg);
    result.polishSteps += pg.iterations;
    if (pg.finite) {
      best.offer(pg.r, pg.u, pg.error);
    }
  }
  result.iterations = iterations + result.polishSteps;
  result.r = std::move(best.r);
  result.u = std::move(best.u);
  result.error = best.error;
  result.converged = result.error <= s.tolerance;
}

}  // namespace grain::detail
