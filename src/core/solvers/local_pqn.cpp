// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/SparseLU>

#include <grain/core/solvers/local_pqn.hpp>

#include "delassus_ops.hpp"
#include "local_pqn_iteration.hpp"
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

/// Exact solve of A dR = C with A = X W + Y + delta I assembled (3x3 blocks) and factorised by
/// sparse LU; falls back to GMRES if the factorisation fails (its iterations added to
/// `gmresIterations`).
VecX directSolve(const LocalContext& ctx, PqnNewtonOperator<AssembledOps>& op, const VecX& c,
                 std::uint32_t& gmresIterations) {
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
    return pqnGmres(op, c, op.norm(c), 1e-12 * c.norm(), 200, gmresIterations);
  }
  VecX x = lu.solve(c);
  if (!x.allFinite()) {
    return pqnGmres(op, c, op.norm(c), 1e-12 * c.norm(), 200, gmresIterations);
  }
  return x;
}

}  // namespace

void runPqn(const LocalContext& ctx, VecX r, LocalSolverResult& result) {
  AssembledOps ops{ctx};
  pqnIterate(ops, ctx.settings, std::move(r), result,
             [&ctx, &result](PqnNewtonOperator<AssembledOps>& op, const VecX& c) {
               return directSolve(ctx, op, c, result.gmresIterations);
             });
}

}  // namespace detail
}  // namespace grain
