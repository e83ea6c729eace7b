// SPDX-License-Identifier: MIT
// The interior point method of local_ipm.hpp on the matrix-free problem (solveIpm,
// matrix_free_problem.hpp): the iteration of local_ipm_iteration.hpp with Newton systems by
// preconditioned conjugate gradients, polishing by restarted GMRES and CG, every product through
// MatrixFreeOps::multiply and every global quantity through its reductions.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_ipm.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/solvers/prox.hpp>

#include "local_apgd.hpp"
#include "local_ipm_iteration.hpp"
#include "local_pqn_iteration.hpp"
#include "local_solver_detail.hpp"
#include "matrix_free_ops.hpp"

namespace grain {

namespace {

using detail::BestIterate;
using detail::MatrixFreeOps;

/// Inverse of a 3 x 3 block that should be symmetric positive definite (the identity if it is
/// singular or not finite, which leaves that contact unpreconditioned).
Mat3 safeInverse(const Mat3& a) {
  const Eigen::FullPivLU<Mat3> lu(a);
  if (!lu.isInvertible()) {
    return Mat3::Identity();
  }
  const Mat3 inverse = lu.inverse();
  return inverse.allFinite() ? inverse : Mat3::Identity();
}

/// Preconditioned conjugate gradients for A x = b (A symmetric positive definite, applied by
/// `apply(p, ap)`; M^-1 by `precondition(r, z)`) from x = 0, until |b - A x| <= tol |b| (global
/// 2-norms) or maxIter iterations; stops early if p . A p is not positive (breakdown). Each
/// iteration: one apply, two reductions (p . A p; |r|^2 and r . z in one). `onStep(alpha)` is
/// called after every update x += alpha p (the caller accumulates what it derives from p).
/// Returns the iterations taken.
template <class Apply, class Precondition, class OnStep>
std::uint32_t pcg(const MatrixFreeOps& ops, const VecX& b, Real tol, std::uint32_t maxIter,
                  const Apply& apply, const Precondition& precondition, const OnStep& onStep,
                  VecX& x) {
  const Eigen::Index m = b.size();
  x.setZero(m);
  VecX r = b;
  VecX z(m);
  VecX ap(m);
  precondition(r, z);
  std::array<Real, 2> s{r.squaredNorm(), r.dot(z)};
  ops.sum(s);
  const Real target = tol * std::sqrt(s[0]);
  Real rr = s[0];
  Real rz = s[1];
  VecX p = z;
  std::uint32_t k = 0;
  for (; k < maxIter && std::sqrt(rr) > target; ++k) {
    apply(p, ap);
    const Real pap = ops.sum(p.dot(ap));
    if (!(pap > 0.0) || !std::isfinite(pap) || !std::isfinite(rz)) {
      break;
    }
    const Real alpha = rz / pap;
    x += alpha * p;
    r -= alpha * ap;
    onStep(alpha);
    precondition(r, z);
    s = {r.squaredNorm(), r.dot(z)};
    ops.sum(s);
    rr = s[0];
    const Real beta = s[1] / rz;
    rz = s[1];
    p = z + beta * p;
  }
  return k;
}

/// Mean of the positive diagonal entries of the blocks S_i B_i S_i over all processes (1 if there
/// is none), S_i = diag(sc_i): one reduction.
Real meanPositiveDiagonal(const MatrixFreeOps& ops, const VecX& sc) {
  std::array<Real, 2> s{};
  for (std::size_t i = 0; i < ops.contacts(); ++i) {
    const Vec3 d = ops.diagonalBlock(i).diagonal();
    for (Eigen::Index c = 0; c < 3; ++c) {
      const Real sk = sc[static_cast<Eigen::Index>(3 * i) + c];
      const Real v = sk * sk * d[c];
      if (v > 0.0) {
        s[0] += v;
        s[1] += 1.0;
      }
    }
  }
  ops.sum(s);
  return s[1] > 0.0 ? s[0] / s[1] : 1.0;
}

/// Restart length of the polishing GMRES (memory: 2 restart vectors of 3n entries).
constexpr std::uint32_t kPolishGmresRestart = 30;

/// The semismooth Newton and Levenberg-Marquardt polishing of local_ipm.hpp on the matrix-free
/// problem, the linear systems by Krylov methods instead of sparse LU and LDL^T:
///   - (J + delta' I) dr = -F by restarted GMRES(30), right block-Jacobi preconditioner
///     (D_i W_ii + I - D_i + delta' I)^-1 (PqnNewtonOperator with X = D, Y = I - D);
///   - (J^T J + s I) dr = -J^T F by PCG (J^T v = v - D v + W D v, W and D symmetric; two products
///     per iteration), preconditioner (J_ii^T J_ii + s I)^-1, J_ii = I - D_i + D_i W_ii; the
///     shift's scale mean diag(J^T J) is taken from these blocks (the assembled method reads the
///     whole columns of J).
/// Both stop at ipmCgTolerance relative or ipmCgMaxIter iterations. Returns the accepted steps.
std::uint32_t polishMatrixFree(MatrixFreeOps& ops, const LocalSolverSettings& s, BestIterate& best,
                               LocalSolverResult& result) {
  const std::size_t n = ops.contacts();
  const auto m = static_cast<Eigen::Index>(3 * n);
  const Real delta = std::max(s.ipmRegularization, Real(1e-14));
  const Real deltaW = delta * meanPositiveDiagonal(ops, VecX::Ones(m));
  detail::PqnNewtonOperator<MatrixFreeOps> op{ops, {}, {}, {}, deltaW, {}};
  op.x.resize(n);
  op.y.resize(n);
  op.preconditioner.resize(n);
  std::vector<Mat3> jii(n);
  std::vector<Mat3> lmPreconditioner(n);
  VecX f(m);
  VecX uTrial(m);
  VecX scratch(m);
  std::uint32_t steps = 0;
  for (std::uint32_t it = 0; it < s.ipmPolishSteps && !(best.error <= s.tolerance); ++it) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Vec3 z = best.r.segment<3>(k) - best.u.segment<3>(k);
      const Mat3 d = ipm::coneProjectionJacobian(z, ops.mu(i));
      f.segment<3>(k) = best.r.segment<3>(k) - prox::projectCone(z, ops.mu(i));
      op.x[i] = d;
      op.y[i] = Mat3::Identity() - d;
      jii[i] = op.y[i] + d * ops.diagonalBlock(i);
      op.preconditioner[i] = safeInverse(jii[i] + deltaW * Mat3::Identity());
    }
    bool accepted = false;
    auto tryStep = [&](const VecX& dr) {
      if (!ops.allTrue(dr.allFinite())) {
        return;
      }
      Real tau = 1.0;
      for (int halving = 0; halving <= 2 && !accepted; ++halving, tau *= 0.5) {
        const VecX rTrial = best.r + tau * dr;
        ops.multiply(rTrial, uTrial);
        uTrial += ops.q();
        const Real e = ops.error(rTrial, uTrial);
        if (e < best.error) {
          best.offer(rTrial, uTrial, e);
          accepted = true;
        }
      }
    };
    // The semismooth Newton step, restarted GMRES from 0 on the residual of the previous cycles.
    {
      const VecX b = -f;
      const Real bNorm = op.norm(b);
      const Real tol = s.ipmCgTolerance * bNorm;
      VecX dr = VecX::Zero(m);
      VecX residual = b;
      std::uint32_t used = 0;
      while (used < s.ipmCgMaxIter) {
        std::uint32_t cycle = 0;
        dr += detail::pqnGmres(op, residual, tol,
                               std::min(kPolishGmresRestart, s.ipmCgMaxIter - used), cycle);
        used += cycle;
        op.apply(dr, scratch);
        residual = b - scratch;
        if (cycle == 0 || !(op.norm(residual) > tol)) {
          break;
        }
      }
      result.cgIterations += used;
      tryStep(dr);
    }
    if (!accepted) {
      // J v and J^T v (D symmetric, W symmetric).
      VecX jv(m);
      auto applyJ = [&](const VecX& v, VecX& out) {
        ops.multiply(v, scratch);
        out.resize(m);
        for (std::size_t i = 0; i < n; ++i) {
          const auto k = static_cast<Eigen::Index>(3 * i);
          out.segment<3>(k) = op.y[i] * v.segment<3>(k) + op.x[i] * scratch.segment<3>(k);
        }
      };
      auto applyJt = [&](const VecX& v, VecX& out) {
        VecX dv(m);
        for (std::size_t i = 0; i < n; ++i) {
          const auto k = static_cast<Eigen::Index>(3 * i);
          dv.segment<3>(k) = op.x[i] * v.segment<3>(k);
        }
        ops.multiply(dv, scratch);
        out.resize(m);
        for (std::size_t i = 0; i < n; ++i) {
          const auto k = static_cast<Eigen::Index>(3 * i);
          out.segment<3>(k) = op.y[i] * v.segment<3>(k) + scratch.segment<3>(k);
        }
      };
      VecX jtf(m);
      applyJt(f, jtf);
      std::array<Real, 2> diag{};
      for (std::size_t i = 0; i < n; ++i) {
        diag[0] += (jii[i].transpose() * jii[i]).trace();
        diag[1] += 3.0;
      }
      ops.sum(diag);
      const Real meanDiag = diag[0] > 0.0 ? diag[0] / diag[1] : 1.0;
      Real shift = meanDiag * std::max(std::min(best.error, Real(1e-6)), delta);
      for (int attempt = 0; attempt < 4 && !accepted; ++attempt, shift *= 100.0) {
        for (std::size_t i = 0; i < n; ++i) {
          lmPreconditioner[i] = safeInverse(jii[i].transpose() * jii[i] + shift * Mat3::Identity());
        }
        VecX dr;
        result.cgIterations += pcg(
            ops, jtf, s.ipmCgTolerance, s.ipmCgMaxIter,
            [&](const VecX& v, VecX& out) {
              applyJ(v, jv);
              applyJt(jv, out);
              out += shift * v;
            },
            [&](const VecX& v, VecX& out) {
              out.resize(m);
              for (std::size_t i = 0; i < n; ++i) {
                const auto k = static_cast<Eigen::Index>(3 * i);
                out.segment<3>(k) = lmPreconditioner[i] * v.segment<3>(k);
              }
            },
            [](Real) {}, dr);
        tryStep(-dr);
      }
    }
    if (!accepted) {
      break;
    }
    ++steps;
  }
  return steps;
}

/// The IpmOps (local_ipm_iteration.hpp) of the matrix-free problem: the Newton systems by PCG
/// with the block-Jacobi preconditioner (N_ii + G_i^-2 + delta I)^-1, N dx = S (W S dx)
/// accumulated from the products of the CG directions; polishing by GMRES and PCG (polish above).
class MatrixFreeIpmOps : public MatrixFreeOps {
 public:
  MatrixFreeIpmOps(const MatrixFreeOps& ops, const LocalSolverSettings& s)
      : MatrixFreeOps(ops), settings_(s) {}

  Real scale(const VecX& sc) {
    const std::size_t n = contacts();
    sc_ = sc;
    nBlock_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Vec3 si = sc.segment<3>(static_cast<Eigen::Index>(3 * i));
      nBlock_[i] = si.asDiagonal() * diagonalBlock(i) * si.asDiagonal();
    }
    const Real diagMean = meanPositiveDiagonal(*this, sc);
    delta_ = settings_.ipmRegularization * diagMean;
    return diagMean;
  }
  /// N x = S (W S x).
  void newtonProduct(const VecX& /*x*/, const VecX& wsx, VecX& nx) const {
    nx = sc_.cwiseProduct(wsx);
  }
  bool prepare(const std::vector<Mat3>& gInv2) {
    preconditioner_.resize(gInv2.size());
    for (std::size_t i = 0; i < gInv2.size(); ++i) {
      preconditioner_[i] = safeInverse(nBlock_[i] + gInv2[i] + delta_ * Mat3::Identity());
    }
    gInv2_ = gInv2;
    return true;
  }
  std::uint32_t solve(const VecX& rhs, VecX& dx, VecX& ndx) {
    const auto m = rhs.size();
    auto applyNewton = [&](const VecX& v, VecX& out) {
      multiply(sc_.cwiseProduct(v), wsp_);
      out = sc_.cwiseProduct(wsp_);
      for (std::size_t i = 0; i < gInv2_.size(); ++i) {
        const auto k = static_cast<Eigen::Index>(3 * i);
        out.segment<3>(k) += gInv2_[i] * v.segment<3>(k);
      }
    };
    auto precondition = [&](const VecX& v, VecX& out) {
      out.resize(m);
      for (std::size_t i = 0; i < preconditioner_.size(); ++i) {
        const auto k = static_cast<Eigen::Index>(3 * i);
        out.segment<3>(k) = preconditioner_[i] * v.segment<3>(k);
      }
    };
    wsdx_.setZero(m);
    const std::uint32_t iterations = pcg(
        *this, rhs, settings_.ipmCgTolerance, settings_.ipmCgMaxIter, applyNewton, precondition,
        [&](Real alpha) { wsdx_ += alpha * wsp_; }, dx);
    ndx = sc_.cwiseProduct(wsdx_);
    return iterations;
  }
  std::uint32_t polish(BestIterate& best, LocalSolverResult& result) {
    return polishMatrixFree(*this, settings_, best, result);
  }
  void apgd(const LocalSolverSettings& s, const VecX& r, LocalSolverResult& pg) {
    detail::apgdIterate(static_cast<MatrixFreeOps&>(*this), s, r, pg);
  }

 private:
  const LocalSolverSettings& settings_;
  VecX sc_;                           // S
  std::vector<Mat3> nBlock_;          // N_ii = S_i W_ii S_i
  std::vector<Mat3> preconditioner_;  // (N_ii + G_i^-2 + delta I)^-1
  std::vector<Mat3> gInv2_;           // G_i^-2 of this iteration
  Real delta_ = 0;
  VecX wsp_;   // W S p of the current CG direction
  VecX wsdx_;  // W S dx, accumulated from the CG directions
};

}  // namespace

void solveIpm(MatrixFreeProblem& problem, const LocalSolverSettings& s, const VecX* initialGuess,
              LocalSolverResult& result, Reducer* reducer, SplitBodyExchange* split) {
  const auto start = std::chrono::steady_clock::now();
  validate(s);
  result.resetKeepingStorage();
  const auto m = static_cast<Eigen::Index>(3 * problem.contactCount());
  if (initialGuess != nullptr) {
    GRAIN_REQUIRE(initialGuess->size() == m, "initial guess must have 3n = " + std::to_string(m) +
                                                 " entries, got " +
                                                 std::to_string(initialGuess->size()));
  }
  MatrixFreeIpmOps ops({problem, LocalErrorMeasure::Relaxed, reducer, split,
                        &result.delassusProducts, &result.reductions},
                       s);
  detail::ipmIterate(ops, s, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace grain
