// SPDX-License-Identifier: MIT
#include <cmath>
#include <vector>

#include <Eigen/LU>
#include <Eigen/SparseLU>

#include <grain/core/solvers/local_pqn.hpp>

#include "local_solver_detail.hpp"

namespace grain {

namespace {

inline Real gSmooth(Real x) {
  return 0.5 * (std::sqrt(x * x + 4.0) + x);
}
inline Real gPrime(Real x) {
  return 0.5 * (1.0 + x / std::sqrt(x * x + 4.0));
}

}  // namespace

PqnLinearisation pqnLinearise(const Vec3& r, const Vec3& u, Real mu, Real w) {
  // F_w(U) and dF_w/dU.
  const Real uT = std::sqrt(u.y() * u.y() + u.z() * u.z());
  const Real sT = std::sqrt(uT * uT + w * w);
  const Vec3 f(u.x() + mu * (sT - w), u.y(), u.z());
  Mat3 dF = Mat3::Identity();
  dF(0, 1) = mu * u.y() / sT;
  dF(0, 2) = mu * u.z() / sT;

  // Spectral decomposition of z = R - F with respect to the polar cone.
  const Vec3 z = r - f;
  const Real zT = std::sqrt(z.y() * z.y() + z.z() * z.z());
  Vec3 e(0.0, 1.0, 0.0);
  if (zT > 0.0) {
    e = Vec3(0.0, z.y() / zT, z.z() / zT);
  }
  const Real k = 1.0 / (1.0 + mu * mu);
  const Real l1 = (-z.x() - mu * zT) * k;
  const Real l2 = (zT - mu * z.x()) * k;
  const Real f1 = w * gSmooth(l1 / w);
  const Real g1 = gPrime(l1 / w);
  Real f2;
  Real g2;
  Real a;
  if (mu > 0.0) {
    f2 = mu * w * gSmooth(l2 / (mu * w));
    g2 = gPrime(l2 / (mu * w));
    a = 0.5 * (1.0 + (l2 + mu * l1) / (std::sqrt(l2 * l2 + 4.0 * mu * mu * w * w) +
                                       mu * std::sqrt(l1 * l1 + 4.0 * w * w)));
  } else {
    f2 = l2;  // = |z_T| >= 0
    g2 = 1.0;
    a = 1.0;
  }
  // m_w(z) = f1 v1 + f2 v2.
  const Vec3 m(-f1 - mu * f2, (f2 - mu * f1) * e.y(), (f2 - mu * f1) * e.z());

  PqnLinearisation lin;
  lin.c = f + m;
  const Real b = (mu * mu * g1 + g2) * k;
  const Real c = mu * (g1 - g2) * k;
  const Real d = (g1 + mu * mu * g2) * k;
  Mat3& y = lin.y;
  if (zT > 0.0) {
    y(0, 0) = d;
    y(0, 1) = y(1, 0) = c * e.y();
    y(0, 2) = y(2, 0) = c * e.z();
    y(1, 1) = a + (b - a) * e.y() * e.y();
    y(2, 2) = a + (b - a) * e.z() * e.z();
    y(1, 2) = y(2, 1) = (b - a) * e.y() * e.z();
  } else {
    y = g1 * Mat3::Identity();
  }
  lin.x = (Mat3::Identity() - y) * dF;
  return lin;
}

namespace detail {

namespace {

/// The operator A = X W + Y + delta I of one Newton step and its block-Jacobi preconditioner.
struct NewtonOperator {
  const LocalContext* ctx;
  std::vector<Mat3> x;
  std::vector<Mat3> y;
  std::vector<Mat3> preconditioner;  // (X_ii W_ii + Y_ii + delta I)^-1
  Real delta = 0;
  VecX scratch;

  void apply(const VecX& v, VecX& out) {
    ctx->w.multiply(v, scratch);
    out.resize(v.size());
    for (std::size_t i = 0; i < ctx->n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      out.segment<3>(k) =
          x[i] * scratch.segment<3>(k) + y[i] * v.segment<3>(k) + delta * v.segment<3>(k);
    }
  }
  void precondition(const VecX& v, VecX& out) const {
    out.resize(v.size());
    for (std::size_t i = 0; i < ctx->n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      out.segment<3>(k) = preconditioner[i] * v.segment<3>(k);
    }
  }
};

/// Right-preconditioned GMRES from x = 0: at most maxIter iterations, stops when the residual
/// |b - A x| <= tol. Returns x.
VecX gmres(NewtonOperator& op, const VecX& b, Real tol, std::uint32_t maxIter) {
  const Eigen::Index m = b.size();
  const auto kMax = static_cast<Eigen::Index>(maxIter);
  VecX x = VecX::Zero(m);
  const Real beta = b.norm();
  if (!(beta > tol)) {
    return x;
  }
  Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic> v(m, kMax + 1);
  Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic> z(m, kMax);
  Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic> h =
      Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>::Zero(kMax + 1, kMax);
  VecX cs = VecX::Zero(kMax);
  VecX sn = VecX::Zero(kMax);
  VecX g = VecX::Zero(kMax + 1);
  g[0] = beta;
  v.col(0) = b / beta;
  VecX zk;
  VecX w;
  Eigen::Index k = 0;
  for (; k < kMax; ++k) {
    op.precondition(v.col(k), zk);
    z.col(k) = zk;
    op.apply(zk, w);
    for (Eigen::Index j = 0; j <= k; ++j) {  // modified Gram-Schmidt
      h(j, k) = w.dot(v.col(j));
      w -= h(j, k) * v.col(j);
    }
    h(k + 1, k) = w.norm();
    if (h(k + 1, k) > 0.0) {
      v.col(k + 1) = w / h(k + 1, k);
    }
    for (Eigen::Index j = 0; j < k; ++j) {  // apply the previous rotations
      const Real t = cs[j] * h(j, k) + sn[j] * h(j + 1, k);
      h(j + 1, k) = -sn[j] * h(j, k) + cs[j] * h(j + 1, k);
      h(j, k) = t;
    }
    const Real rho = std::hypot(h(k, k), h(k + 1, k));
    if (rho == 0.0) {
      break;
    }
    cs[k] = h(k, k) / rho;
    sn[k] = h(k + 1, k) / rho;
    h(k, k) = rho;
    h(k + 1, k) = 0.0;
    g[k + 1] = -sn[k] * g[k];
    g[k] = cs[k] * g[k];
    if (std::abs(g[k + 1]) <= tol) {
      ++k;
      break;
    }
  }
  if (k == 0) {
    return x;
  }
  // Solve the k x k upper triangular system H y = g.
  const VecX yk = h.topLeftCorner(k, k).triangularView<Eigen::Upper>().solve(g.head(k));
  x = z.leftCols(k) * yk;
  return x;
}

/// Exact solve of A dR = C with A = X W + Y + delta I assembled (3x3 blocks) and factorised by
/// sparse LU; falls back to GMRES if the factorisation fails.
VecX directSolve(NewtonOperator& op, const VecX& c) {
  const LocalContext& ctx = *op.ctx;
  std::vector<Eigen::Triplet<Real>> t;
  t.reserve(9 * (ctx.w.blockCount() + ctx.n));
  const auto& start = ctx.w.rowStart();
  for (std::size_t i = 0; i < ctx.n; ++i) {
    const auto bi = static_cast<Eigen::Index>(3 * i);
    for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) {
      const Mat3 b = op.x[i] * ctx.w.blocks()[k];
      const auto bj = static_cast<Eigen::Index>(3 * ctx.w.columns()[k]);
      for (int r = 0; r < 3; ++r) {
        for (int q = 0; q < 3; ++q) {
          t.emplace_back(bi + r, bj + q, b(r, q));
        }
      }
    }
    const Mat3 d = op.y[i] + op.delta * Mat3::Identity();
    for (int r = 0; r < 3; ++r) {
      for (int q = 0; q < 3; ++q) {
        t.emplace_back(bi + r, bi + q, d(r, q));
      }
    }
  }
  SparseMat a(c.size(), c.size());
  a.setFromTriplets(t.begin(), t.end());
  Eigen::SparseLU<SparseMat> lu;
  lu.compute(a);
  if (lu.info() != Eigen::Success) {
    return gmres(op, c, 1e-12 * c.norm(), 200);
  }
  VecX x = lu.solve(c);
  if (!x.allFinite()) {
    return gmres(op, c, 1e-12 * c.norm(), 200);
  }
  return x;
}

}  // namespace

void runPqn(const LocalContext& ctx, VecX r, LocalSolverResult& result) {
  const LocalSolverSettings& s = ctx.settings;
  const Real* mu = ctx.problem.mu.data();
  const Real omega = std::max(s.pqnOmegaFactor * s.tolerance, Real(1e-300));

  // delta relative to the mean diagonal entry of W.
  Real diagSum = 0.0;
  for (std::size_t i = 0; i < ctx.n; ++i) {
    diagSum += ctx.w.diagonalBlock(i).trace();
  }
  const Real meanDiag = diagSum / static_cast<Real>(3 * ctx.n);

  NewtonOperator op;
  op.ctx = &ctx;
  op.x.resize(ctx.n);
  op.y.resize(ctx.n);
  op.preconditioner.resize(ctx.n);
  const Real delta0 = s.pqnDelta * meanDiag;
  Real cNorm0 = 0.0;

  const auto m = static_cast<Eigen::Index>(3 * ctx.n);
  VecX u;
  VecX c(m);
  VecX trial(m);
  VecX uTrial(m);
  BestIterate best;
  ctx.velocity(r, u);
  Real e = ctx.error(r, u);
  for (std::uint32_t it = 0;; ++it) {
    if (!std::isfinite(e)) {
      result.finite = false;
      break;
    }
    best.offer(r, u, e);
    if (e <= s.tolerance || it == s.pqnMaxIter) {
      break;
    }
    for (std::size_t i = 0; i < ctx.n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const PqnLinearisation lin = pqnLinearise(r.segment<3>(k), u.segment<3>(k), mu[i], omega);
      c.segment<3>(k) = lin.c;
      op.x[i] = lin.x;
      op.y[i] = lin.y;
    }
    const Real cNorm = c.norm();
    if (it == 0) {
      cNorm0 = cNorm;
    }
    op.delta = delta0;
    if (s.pqnDeltaContinuation && cNorm0 > 0.0) {
      op.delta = delta0 * std::min(Real(1), cNorm / cNorm0);
    }
    for (std::size_t i = 0; i < ctx.n; ++i) {
      const Mat3 aii = op.x[i] * ctx.w.diagonalBlock(i) + op.y[i] + op.delta * Mat3::Identity();
      const Eigen::FullPivLU<Mat3> lu(aii);
      op.preconditioner[i] = lu.isInvertible() ? Mat3(lu.inverse()) : Mat3::Identity();
    }
    VecX dr;
    if (s.pqnDirectSolve) {
      dr = directSolve(op, c);
    } else {
      dr = gmres(op, c, s.pqnGmresEpsilon * cNorm, s.pqnGmresMaxIter);
    }
    // Projected step R - tau dR, tau = 1, 1/2, ... while the error does not decrease
    // (pqnBacktracking; Koziara's Algorithm 1 always takes tau = 1).
    Real tau = 1.0;
    const std::uint32_t halvings = s.pqnBacktracking ? 10 : 0;
    for (std::uint32_t h = 0;; ++h) {
      for (std::size_t i = 0; i < ctx.n; ++i) {
        const auto k = static_cast<Eigen::Index>(3 * i);
        trial.segment<3>(k) = prox::projectCone(r.segment<3>(k) - tau * dr.segment<3>(k), mu[i]);
      }
      ctx.velocity(trial, uTrial);
      const Real eTrial = ctx.error(trial, uTrial);
      if (eTrial < e || h >= halvings || !std::isfinite(eTrial)) {
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

}  // namespace detail
}  // namespace grain
