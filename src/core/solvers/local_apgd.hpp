// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>

#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/prox.hpp>

#include "delassus_ops.hpp"
#include "local_solver_detail.hpp"

/// The APGD iteration of local_solver.hpp, written once for any Delassus operator (private to
/// grain_core): the assembled block-row matrix (AssembledOps) and the matrix-free operator
/// (MatrixFreeProblem) run the same code through an `Ops` type (delassus_ops.hpp).
namespace grain::detail {

/// Largest eigenvalue of D^-1/2 W D^-1/2 by power iteration (s3 = D^-1/2 per component), from
/// the normalised vector of ones, at most `iterations` products, stopped when the estimate
/// changes by less than 0.1 %; 1 if no positive estimate was found.
template <class Ops>
Real apgdLargestEigenvalue(Ops& ops, const VecX& s3, std::uint32_t iterations) {
  const auto m = s3.size();
  VecX v = VecX::Ones(m) / std::sqrt(ops.sum(static_cast<Real>(m)));
  VecX w(m);
  VecX sv(m);
  Real lambda = 0.0;
  for (std::uint32_t k = 0; k < iterations; ++k) {
    sv = s3.cwiseProduct(v);
    ops.multiply(sv, w);
    w = s3.cwiseProduct(w);
    const Real norm = std::sqrt(ops.sum(w.squaredNorm()));
    if (!(norm > 0.0) || !std::isfinite(norm)) {
      break;
    }
    const Real previous = lambda;
    lambda = norm;
    v = w / norm;
    if (k > 2 && std::abs(lambda - previous) <= 1e-3 * lambda) {
      break;
    }
  }
  return lambda > 0.0 ? lambda : 1.0;
}

/// APGD from x (projected onto the cones) for at most settings.maxIter steps; fills `result`
/// (r, u, error, iterations, converged, finite) with the best iterate.
template <class Ops>
void apgdIterate(Ops& ops, const LocalSolverSettings& s, VecX x, LocalSolverResult& result) {
  const std::size_t n = ops.contacts();
  const auto m = static_cast<Eigen::Index>(3 * n);
  const VecX& q = ops.q();

  // Per-contact scaling d_i and step t.
  VecX s3(m);     // d_i^-1/2 per component
  VecX dInv3(m);  // t / d_i per component
  for (std::size_t i = 0; i < n; ++i) {
    Real d = 1.0;
    if (s.apgdDiagonalScaling) {
      d = ops.diagonalBlock(i).diagonal().maxCoeff();
      if (!(d > 0.0)) {
        d = 1.0;
      }
    }
    s3.segment<3>(static_cast<Eigen::Index>(3 * i)).setConstant(1.0 / std::sqrt(d));
    dInv3.segment<3>(static_cast<Eigen::Index>(3 * i)).setConstant(1.0 / d);
  }
  const Real lambda = apgdLargestEigenvalue(ops, s3, s.powerIterations);
  dInv3 *= 1.0 / (1.05 * lambda);

  VecX wx;
  ops.multiply(x, wx);
  VecX u = wx + q;
  BestIterate best;
  Real e = ops.error(x, u);
  best.offer(x, u, e);

  VecX y = x;
  VecX wy = wx;
  VecX xNew(m);
  VecX wxNew(m);
  Real theta = 1.0;
  for (std::uint32_t it = 0; it < s.maxIter && !(e <= s.tolerance); ++it) {
    Real restartTest = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Real mu = ops.mu(i);
      Vec3 g = wy.segment<3>(k) + q.segment<3>(k);
      if (s.apgdDeSaxce) {
        g = prox::deSaxceShift(g, mu);
      }
      const Vec3 xi = prox::projectCone(y.segment<3>(k) - dInv3.segment<3>(k).cwiseProduct(g), mu);
      restartTest += g.dot(xi - x.segment<3>(k));
      xNew.segment<3>(k) = xi;
    }
    ops.multiply(xNew, wxNew);
    u = wxNew + q;
    e = ops.error(xNew, u, &restartTest);  // the restart test summed with the measure's sums
    result.iterations = it + 1;
    if (!std::isfinite(e)) {
      result.finite = false;
      break;
    }
    best.offer(xNew, u, e);

    const Real thetaNew = 0.5 * (theta * std::sqrt(theta * theta + 4.0) - theta * theta);
    if (restartTest > 0.0) {
      y = xNew;
      wy = wxNew;
      theta = 1.0;
    } else {
      const Real beta = theta * (1.0 - theta) / (theta * theta + thetaNew);
      y = xNew + beta * (xNew - x);
      wy = wxNew + beta * (wxNew - wx);
      theta = thetaNew;
    }
    x.swap(xNew);
    wx.swap(wxNew);
  }
  result.r.swap(best.r);
  result.u.swap(best.u);
  result.error = best.error;
  result.converged = best.error <= s.tolerance;
}

}  // namespace grain::detail
