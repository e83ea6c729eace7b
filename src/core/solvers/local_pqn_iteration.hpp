// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <Eigen/LU>

#include <grain/core/solvers/local_pqn.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/prox.hpp>

#include "delassus_ops.hpp"
#include "local_solver_detail.hpp"

/// Koziara's projected quasi-Newton iteration (formulas in local_pqn.hpp), written once for any
/// Delassus operator (private to grain_core): the assembled block-row matrix (AssembledOps) and
/// the matrix-free operator (MatrixFreeProblem) run the same code through an `Ops` type
/// (delassus_ops.hpp). Every norm and dot product of the Newton step and of GMRES is a global
/// sum (Ops::sum), every product with W an Ops::multiply, so that all processes of a distributed
/// solve take the same decisions in the same order; the per-contact work (linearisation,
/// block-Jacobi preconditioner from W_ii, projection) is local.
namespace grain::detail {

/// The operator A = X W + Y + delta I of one Newton step and its block-Jacobi preconditioner.
template <class Ops>
struct PqnNewtonOperator {
  Ops& ops;
  std::vector<Mat3> x;
  std::vector<Mat3> y;
  std::vector<Mat3> preconditioner;  // (X_ii W_ii + Y_ii + delta I)^-1
  Real delta = 0;
  VecX scratch;

  void apply(const VecX& v, VecX& out) {
    ops.multiply(v, scratch);
    out.resize(v.size());
    const std::size_t n = ops.contacts();
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      out.segment<3>(k) =
          x[i] * scratch.segment<3>(k) + y[i] * v.segment<3>(k) + delta * v.segment<3>(k);
    }
  }
  void precondition(const VecX& v, VecX& out) const {
    out.resize(v.size());
    const std::size_t n = ops.contacts();
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      out.segment<3>(k) = preconditioner[i] * v.segment<3>(k);
    }
  }
  /// |v|, summed over the processes.
  Real norm(const VecX& v) const { return std::sqrt(ops.sum(v.squaredNorm())); }
};

using GmresMatrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;

/// GMRES's basis and least-squares problem from x = 0 and |b| = beta (global): V (first column
/// b / beta), Z = M^-1 V, the Hessenberg matrix H, rotated column by column, the Givens rotations
/// (cs, sn) and the rotated residual vector g (g_0 = beta; |g_{k+1}| is the residual after k + 1
/// columns).
struct GmresBasis {
  GmresBasis(const VecX& b, Real beta, Eigen::Index kMax)
      : v(b.size(), kMax + 1),
        z(b.size(), kMax),
        h(GmresMatrix::Zero(kMax + 1, kMax)),
        cs(VecX::Zero(kMax)),
        sn(VecX::Zero(kMax)),
        g(VecX::Zero(kMax + 1)) {
    g[0] = beta;
    v.col(0) = b / beta;
  }

  /// Applies the previous rotations to column c of h, makes rotation c from it and rotates g.
  /// False if the column vanishes from row c down (no rotation: the solve ends before it).
  bool rotateColumn(Eigen::Index c) {
    for (Eigen::Index i = 0; i < c; ++i) {
      const Real t = cs[i] * h(i, c) + sn[i] * h(i + 1, c);
      h(i + 1, c) = -sn[i] * h(i, c) + cs[i] * h(i + 1, c);
      h(i, c) = t;
    }
    const Real rho = std::hypot(h(c, c), h(c + 1, c));
    if (rho == 0.0) {
      return false;
    }
    cs[c] = h(c, c) / rho;
    sn[c] = h(c + 1, c) / rho;
    h(c, c) = rho;
    h(c + 1, c) = 0.0;
    g[c + 1] = -sn[c] * g[c];
    g[c] = cs[c] * g[c];
    return true;
  }

  /// x = Z y with y solving the first k rows of the rotated least-squares problem H y = g (the
  /// same on every process).
  VecX solution(Eigen::Index k) const {
    const VecX yk = h.topLeftCorner(k, k).triangularView<Eigen::Upper>().solve(g.head(k));
    return z.leftCols(k) * yk;
  }

  GmresMatrix v;
  GmresMatrix z;
  GmresMatrix h;
  VecX cs;
  VecX sn;
  VecX g;
};

/// Right-preconditioned GMRES from x = 0: at most maxIter iterations, stops when the residual
/// |b - A x| <= tol (global). `bNorm` is |b| summed over the processes (op.norm(b)), which every
/// caller has already: passed in, it costs no global sum here. Returns x and adds the iterations
/// taken to `iterations`.
/// Orthogonalisation by classical Gram-Schmidt applied twice (CGS2), so that each pass's k + 1
/// inner products are one global sum (Ops::sum over a span) and the new vector's norm rides on the
/// second: two global sums per iteration instead of modified Gram-Schmidt's k + 2 (each a
/// latency-bound allreduce on a cluster). The norm after the second pass is
/// |w''|^2 = |w'|^2 - |h''|^2 (V orthonormal); only when that difference loses more than half of
/// |w'|^2 to cancellation is it summed once more. Two passes keep V orthonormal to round-off, as
/// modified Gram-Schmidt does (Giraud et al. 2005). Always two: with the block-Jacobi
/// preconditioner A M^-1 is near the identity, so nearly every new vector loses most of its
/// length to the first pass and a selective second pass (Daniel, Gragg, Kaufman and Stewart's
/// test) was needed in 75 of 83 iterations on the test pile.
template <class Ops>
VecX pqnGmresTwoSums(PqnNewtonOperator<Ops>& op, const VecX& b, Real bNorm, Real tol,
                     std::uint32_t maxIter, std::uint32_t& iterations) {
  const Eigen::Index m = b.size();
  const auto kMax = static_cast<Eigen::Index>(maxIter);
  VecX x = VecX::Zero(m);
  const Real beta = bNorm;
  if (!(beta > tol)) {
    return x;
  }
  GmresBasis ls(b, beta, kMax);
  GmresMatrix& v = ls.v;
  GmresMatrix& z = ls.z;
  GmresMatrix& h = ls.h;
  VecX zk;
  VecX w;
  VecX sums(kMax + 1);  // one pass's inner products (and |w'|^2), summed over the processes at once
  Eigen::Index k = 0;
  for (; k < kMax; ++k) {
    op.precondition(v.col(k), zk);
    z.col(k) = zk;
    op.apply(zk, w);
    const auto basis = v.leftCols(k + 1);
    auto pass = sums.head(k + 1);
    pass.noalias() = basis.transpose() * w;  // first pass: k + 1 inner products, one sum
    op.ops.sum(std::span<Real>(pass.data(), static_cast<std::size_t>(k + 1)));
    w.noalias() -= basis * pass;
    h.col(k).head(k + 1) = pass;
    auto again = sums.head(k + 2);  // second pass and |w'|^2, one sum
    again.head(k + 1).noalias() = basis.transpose() * w;
    again[k + 1] = w.squaredNorm();
    op.ops.sum(std::span<Real>(again.data(), static_cast<std::size_t>(k + 2)));
    const Real wSquared = again[k + 1];
    const Real correction = again.head(k + 1).squaredNorm();
    w.noalias() -= basis * again.head(k + 1);
    h.col(k).head(k + 1) += again.head(k + 1);
    h(k + 1, k) = correction <= 0.5 * wSquared ? std::sqrt(wSquared - correction) : op.norm(w);
    if (h(k + 1, k) > 0.0) {
      v.col(k + 1) = w / h(k + 1, k);
    }
    if (!ls.rotateColumn(k)) {
      break;
    }
    if (std::abs(ls.g[k + 1]) <= tol) {
      ++k;
      break;
    }
  }
  iterations += static_cast<std::uint32_t>(k);
  if (k == 0) {
    return x;
  }
  return ls.solution(k);
}

/// pqnGmres() with one global sum per iteration: classical Gram-Schmidt twice with the second
/// pass delayed by one iteration (Swirydowicz, Langou, Ananthan, Yang and Thomas 2020, "DCGS2").
/// Iteration j makes one product with the tentative vector u (column j - 1's first-pass
/// remainder, neither reorthogonalised nor normalised) and one sum of V^T u, V^T w, u.u and u.w
/// (w = A M^-1 u); from these it reorthogonalises and normalises u into v_j (its norm by
/// |u'|^2 = |u|^2 - |s|^2, summed once more only where that cancels more than half, as the
/// two-sum form does), completes column j - 1 of the Hessenberg matrix, and forms column j's first
/// pass without another sum, through A M^-1 V = V H (the columns already complete). So column
/// j - 1's residual is known one iteration late: a solve of k iterations makes k + 1 products
/// and k + 1 sums where pqnGmresTwoSums() makes k and 2k. Swirydowicz et al. find the basis as
/// orthonormal as with two passes undelayed; the test
/// MatrixFreePqn.OneGlobalSumPerGmresIterationWhenDistributed finds the two-sum form's steps.
template <class Ops>
VecX pqnGmresOneSum(PqnNewtonOperator<Ops>& op, const VecX& b, Real bNorm, Real tol,
                    std::uint32_t maxIter, std::uint32_t& iterations) {
  const Eigen::Index m = b.size();
  const auto kMax = static_cast<Eigen::Index>(maxIter);
  VecX x = VecX::Zero(m);
  const Real beta = bNorm;
  if (!(beta > tol) || kMax == 0) {
    return x;
  }
  GmresBasis ls(b, beta, kMax);  // its h rotated (least squares)
  GmresMatrix& v = ls.v;
  GmresMatrix& z = ls.z;
  GmresMatrix raw = GmresMatrix::Zero(kMax + 1, kMax);  // H as built: A M^-1 V = V H
  VecX u;
  VecX zu;
  VecX w;
  VecX sums(2 * kMax + 2);
  VecX sBuffer(kMax);        // the second pass's coefficients s of the current iteration
  VecX pBuffer(kMax + 1);    // H s
  VecX colBuffer(kMax + 1);  // column j's first pass
  // Column 0's first pass (v_0 is normalised already).
  op.precondition(v.col(0), zu);
  z.col(0) = zu;
  op.apply(zu, w);
  sums[0] = v.col(0).dot(w);
  op.ops.sum(std::span<Real>(sums.data(), 1));
  raw(0, 0) = sums[0];
  u = w - v.col(0) * sums[0];
  Eigen::Index k = 0;  // columns used
  for (Eigen::Index j = 1; j <= kMax; ++j) {
    const bool product = j < kMax;  // column j is built too
    const auto basis = v.leftCols(j);
    if (product) {
      op.precondition(u, zu);
      op.apply(zu, w);
    }
    // One sum: s = V^T u, then (with a product) t = V^T w, then u.u, then (with a product) u.w.
    const Eigen::Index len = product ? 2 * j + 2 : j + 1;
    sums.head(j).noalias() = basis.transpose() * u;
    if (product) {
      sums.segment(j, j).noalias() = basis.transpose() * w;
      sums[2 * j] = u.squaredNorm();
      sums[2 * j + 1] = u.dot(w);
    } else {
      sums[j] = u.squaredNorm();
    }
    op.ops.sum(std::span<Real>(sums.data(), static_cast<std::size_t>(len)));
    auto sv = sBuffer.head(j);
    sv = sums.head(j);
    const Real uu = product ? sums[2 * j] : sums[j];
    const Real ss = sv.squaredNorm();
    u.noalias() -= basis * sv;
    const Real alpha = ss <= 0.5 * uu ? std::sqrt(uu - ss) : op.norm(u);
    // Column j - 1 complete: its delayed second pass and its last entry.
    const Eigen::Index c = j - 1;
    raw.col(c).head(j) += sv;
    raw(j, c) = alpha;
    ls.h.col(c).head(j + 1) = raw.col(c).head(j + 1);
    if (!ls.rotateColumn(c)) {
      k = c;
      break;
    }
    k = j;
    if (std::abs(ls.g[c + 1]) <= tol || !product || !(alpha > 0.0)) {
      break;
    }
    // v_j and z_j = M^-1 v_j, then column j's first pass from the sums already made:
    // A M^-1 v_j = (w - V p) / alpha with p = H s, and V^T w = (t, (u.w - s.t) / alpha).
    v.col(j) = u / alpha;
    z.col(j) = (zu - z.leftCols(j) * sv) / alpha;
    auto p = pBuffer.head(j + 1);
    p.noalias() = raw.topLeftCorner(j + 1, j) * sv;
    auto col = colBuffer.head(j + 1);
    col.head(j) = (sums.segment(j, j) - p.head(j)) / alpha;
    col[j] = ((sums[2 * j + 1] - sv.dot(sums.segment(j, j))) / alpha - p[j]) / alpha;
    raw.col(j).head(j + 1) = col;
    u = (w - v.leftCols(j + 1) * (p + alpha * col)) / alpha;
  }
  iterations += static_cast<std::uint32_t>(k);
  return k == 0 ? x : ls.solution(k);
}

/// Right-preconditioned GMRES from x = 0 (pqnGmresTwoSums() above): with the sums over more
/// than one process (Ops::distributed()), each a latency-bound reduction, in its one-sum form
/// (pqnGmresOneSum()); serially in the two-sum form, whose results the serial tables were
/// measured with.
template <class Ops>
VecX pqnGmres(PqnNewtonOperator<Ops>& op, const VecX& b, Real bNorm, Real tol,
              std::uint32_t maxIter, std::uint32_t& iterations) {
  return op.ops.distributed() ? pqnGmresOneSum(op, b, bNorm, tol, maxIter, iterations)
                              : pqnGmresTwoSums(op, b, bNorm, tol, maxIter, iterations);
}

/// The PQN iteration from r (local_pqn.hpp) for at most settings.pqnMaxIter Newton steps,
/// without the fallback (the caller runs it); fills `result` (r, u, error, iterations,
/// converged, finite) with the best iterate. `directSolve(op, c)` returns the Newton step of
/// settings.pqnDirectSolve (only called then; it needs the assembled matrix).
template <class Ops, class DirectSolve>
void pqnIterate(Ops& ops, const LocalSolverSettings& s, VecX r, LocalSolverResult& result,
                const DirectSolve& directSolve) {
  const std::size_t n = ops.contacts();
  const Real omegaFloor = std::max(s.pqnOmegaFactor * s.tolerance, Real(1e-300));
  // pqnOmegaContinuation: omega_k = max(omega, theta_k e_k |q|_inf) (m/s, e relative); |q|_inf
  // (one reduction) at the first Newton step, so a solve that starts converged makes none.
  Real theta = s.pqnOmegaContinuation;
  Real qInf = 0.0;

  // delta relative to the mean diagonal entry of W (over all processes' contacts) and the scaling
  // rho, set up at the first Newton step (one global sum), so a solve that starts converged makes
  // no reduction for them.
  PqnNewtonOperator<Ops> op{ops, {}, {}, {}, 0.0, {}};
  op.x.resize(n);
  op.y.resize(n);
  op.preconditioner.resize(n);
  Real delta0 = 0.0;
  std::vector<Real> rho(n, 1.0);
  auto setUpNewton = [&] {
    Real diagSum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      diagSum += ops.diagonalBlock(i).trace();
    }
    std::array<Real, 2> diagAndCount{diagSum, static_cast<Real>(3 * n)};  // one global sum
    ops.sum(std::span<Real>(diagAndCount));
    const Real meanDiag = diagAndCount[0] / diagAndCount[1];
    delta0 = s.pqnDelta * meanDiag;
    // pqnScaling: contact i's Newton variable is rho_i R_i (velocity units, rho_i = (W_ii)_NN,
    // else the mean diagonal entry): C_i = F(U_i) + m(rho_i R_i - F(U_i)),
    // dC_i = X dU_i + rho_i Y dR_i (local_pqn.hpp).
    const Real rhoDefault = meanDiag > 0.0 && std::isfinite(meanDiag) ? meanDiag : 1.0;
    if (s.pqnScaling) {
      for (std::size_t i = 0; i < n; ++i) {
        const Real wNN = ops.diagonalBlock(i)(0, 0);
        rho[i] = wNN > 0.0 && std::isfinite(wNN) ? wNN : rhoDefault;
      }
    }
  };
  Real cNorm0 = 0.0;

  const auto m = static_cast<Eigen::Index>(3 * n);
  VecX u;
  VecX c(m);
  VecX trial(m);
  VecX uTrial(m);
  BestIterate best;
  ops.multiply(r, u);
  u += ops.q();
  Real e = ops.error(r, u);
  for (std::uint32_t it = 0;; ++it) {
    if (!std::isfinite(e)) {
      result.finite = false;
      break;
    }
    best.offer(r, u, e);
    if (e <= s.tolerance || it == s.pqnMaxIter) {
      break;
    }
    if (it == 0) {
      setUpNewton();
      if (theta > 0.0) {
        const VecX& q = ops.q();
        qInf = ops.max(q.size() > 0 ? q.cwiseAbs().maxCoeff() : Real(0));
      }
    }
    const Real omega = std::max(omegaFloor, theta * e * qInf);
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const PqnLinearisation lin =
          pqnLinearise(Vec3(rho[i] * r.segment<3>(k)), u.segment<3>(k), ops.mu(i), omega);
      c.segment<3>(k) = lin.c;
      op.x[i] = lin.x;
      op.y[i] = rho[i] * lin.y;
    }
    const Real cNorm = op.norm(c);
    if (it == 0) {
      cNorm0 = cNorm;
    }
    op.delta = delta0;
    if (s.pqnDeltaContinuation && cNorm0 > 0.0) {
      op.delta = delta0 * std::min(Real(1), cNorm / cNorm0);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Mat3 aii = op.x[i] * ops.diagonalBlock(i) + op.y[i] + op.delta * Mat3::Identity();
      const Eigen::FullPivLU<Mat3> lu(aii);
      op.preconditioner[i] = lu.isInvertible() ? Mat3(lu.inverse()) : Mat3::Identity();
    }
    VecX dr;
    if (s.pqnDirectSolve) {
      dr = directSolve(op, c);
    } else {
      dr = pqnGmres(op, c, cNorm, s.pqnGmresEpsilon * cNorm, s.pqnGmresMaxIter,
                    result.gmresIterations);
    }
    // Projected step R - tau dR, tau = 1, 1/2, ... while the error does not decrease
    // (pqnBacktracking; Koziara's Algorithm 1 always takes tau = 1).
    Real tau = 1.0;
    const std::uint32_t halvings = s.pqnBacktracking ? 10 : 0;
    for (std::uint32_t h = 0;; ++h) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<Eigen::Index>(3 * i);
        trial.segment<3>(k) =
            prox::projectCone(r.segment<3>(k) - tau * dr.segment<3>(k), ops.mu(i));
      }
      ops.multiply(trial, uTrial);
      uTrial += ops.q();
      const Real eTrial = ops.error(trial, uTrial);
      if (eTrial < e || h >= halvings || !std::isfinite(eTrial)) {
        if (!(eTrial < Real(0.9) * e)) {
          theta *= Real(0.1);  // a stalled step: less smoothing from now on
        }
        r.swap(trial);
        u.swap(uTrial);
        e = eTrial;
        break;
      }
      tau *= 0.5;
    }
    result.iterations = it + 1;
  }
  result.r = best.r;
  result.u = best.u;
  result.error = best.error;
  result.converged = best.error <= s.tolerance;
}

}  // namespace grain::detail
