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
#include "schwarz_preconditioner.hpp"

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

/// The IpmOps (local_ipm_iteration.hpp) of the matrix-free problem: the Newton systems by PCG
/// with the block-Jacobi preconditioner (N_ii + G_i^-2 + delta I)^-1 or, with
/// IpmPreconditioner::AdditiveSchwarz, the additive Schwarz preconditioner per solver body on
/// N + G^-2 + delta I (schwarz_preconditioner.hpp; block-Jacobi where it has no subdomain), N dx =
/// S (W S dx) accumulated from the products of the CG directions. The polishing's linear systems by
/// Krylov methods instead of sparse LU and LDL^T:
///   - (J + delta' I) dr = -F by restarted GMRES(30), right block-Jacobi preconditioner
///     (D_i W_ii + I - D_i + delta' I)^-1 (PqnNewtonOperator with X = D, Y = I - D);
///   - (J^T J + s I) dr = -J^T F by PCG (J^T v = v - D v + W D v, W and D symmetric; two products
///     per iteration), preconditioner (J_ii^T J_ii + s I)^-1, J_ii = I - D_i + D_i W_ii; the
///     shift's scale mean diag(J^T J) is taken from these blocks (the assembled method reads the
///     whole columns of J).
/// Both stop at ipmCgTolerance relative or ipmCgMaxIter iterations.
class MatrixFreeIpmOps : public MatrixFreeOps {
 public:
  MatrixFreeIpmOps(const MatrixFreeOps& ops, const LocalSolverSettings& s)
      : MatrixFreeOps(ops),
        settings_(s),
        schwarz_(s.ipmPreconditioner == IpmPreconditioner::AdditiveSchwarz),
        newton_{*this, {}, {}, {}, 0.0, {}} {
    if (schwarz_) {
      schwarzPreconditioner_.setUp(problem.contactRows(), problem.solverBodies());
    }
  }
  MatrixFreeIpmOps(const MatrixFreeIpmOps&) = delete;
  MatrixFreeIpmOps& operator=(const MatrixFreeIpmOps&) = delete;

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
    if (schwarz_) {
      barrier_.resize(gInv2.size());
      for (std::size_t i = 0; i < gInv2.size(); ++i) {
        barrier_[i] = gInv2[i] + delta_ * Mat3::Identity();
      }
      schwarzPreconditioner_.factorise(sc_, barrier_, preconditioner_);
    }
    return true;
  }
  std::uint32_t solve(const VecX& rhs, VecX& dx, VecX& ndx) {
    const auto m = rhs.size();
    const std::size_t n = gInv2_.size();
    const VecX& sc = sc_;
    VecX& wsp = wsp_;
    const Mat3* gInv2 = gInv2_.data();
    const Mat3* preconditioner = preconditioner_.data();
    auto applyNewton = [&](const VecX& v, VecX& out) {
      multiply(sc.cwiseProduct(v), wsp);
      out = sc.cwiseProduct(wsp);
      for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<Eigen::Index>(3 * i);
        out.segment<3>(k) += gInv2[i] * v.segment<3>(k);
      }
    };
    auto precondition = [&](const VecX& v, VecX& out) {
      if (schwarz_) {
        schwarzPreconditioner_.apply(v, out);
        return;
      }
      out.resize(m);
      for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<Eigen::Index>(3 * i);
        out.segment<3>(k) = preconditioner[i] * v.segment<3>(k);
      }
    };
    wsdx_.setZero(m);
    VecX& wsdx = wsdx_;
    const std::uint32_t iterations = pcg(
        *this, rhs, settings_.ipmCgTolerance, settings_.ipmCgMaxIter, applyNewton, precondition,
        [&](Real alpha) { wsdx += alpha * wsp; }, dx);
    ndx = sc.cwiseProduct(wsdx);
    return iterations;
  }

  Real polishScale() const {
    return meanPositiveDiagonal(*this, VecX::Ones(static_cast<Eigen::Index>(3 * contacts())));
  }
  void linearise(const std::vector<Mat3>& d, Real deltaW) {
    const std::size_t n = d.size();
    newton_.x.resize(n);
    newton_.y.resize(n);
    newton_.preconditioner.resize(n);
    newton_.delta = deltaW;
    jii_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      newton_.x[i] = d[i];
      newton_.y[i] = Mat3::Identity() - d[i];
      jii_[i] = newton_.y[i] + d[i] * diagonalBlock(i);
      newton_.preconditioner[i] = safeInverse(jii_[i] + deltaW * Mat3::Identity());
    }
  }
  /// Restarted GMRES from 0 on the residual of the previous cycles.
  bool newtonStep(const VecX& f, VecX& dr, std::uint32_t& krylov) {
    const VecX b = -f;
    Real residualNorm = newton_.norm(b);  // of each cycle's residual, summed once
    const Real tol = settings_.ipmCgTolerance * residualNorm;
    dr.setZero(b.size());
    VecX residual = b;
    std::uint32_t used = 0;
    while (used < settings_.ipmCgMaxIter) {
      std::uint32_t cycle = 0;
      dr += detail::pqnGmres(newton_, residual, residualNorm, tol,
                             std::min(kPolishGmresRestart, settings_.ipmCgMaxIter - used), cycle);
      used += cycle;
      newton_.apply(dr, scratch_);
      residual = b - scratch_;
      if (cycle == 0) {
        break;
      }
      residualNorm = newton_.norm(residual);
      if (!(residualNorm > tol)) {
        break;
      }
    }
    krylov += used;
    return true;
  }
  /// J^T F; the mean diagonal entry of the blocks J_ii^T J_ii (one reduction).
  Real levenbergMarquardtScale(const VecX& f) {
    applyJt(f, jtf_);
    std::array<Real, 2> diag{};
    for (const Mat3& j : jii_) {
      diag[0] += (j.transpose() * j).trace();
      diag[1] += 3.0;
    }
    sum(diag);
    return diag[0] > 0.0 ? diag[0] / diag[1] : 1.0;
  }
  bool levenbergMarquardtStep(Real shift, VecX& dr, std::uint32_t& krylov) {
    const std::size_t n = jii_.size();
    lmPreconditioner_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      lmPreconditioner_[i] = safeInverse(jii_[i].transpose() * jii_[i] + shift * Mat3::Identity());
    }
    krylov += pcg(
        *this, jtf_, settings_.ipmCgTolerance, settings_.ipmCgMaxIter,
        [&](const VecX& v, VecX& out) {
          applyJ(v, jv_);
          applyJt(jv_, out);
          out += shift * v;
        },
        [&](const VecX& v, VecX& out) {
          out.resize(v.size());
          for (std::size_t i = 0; i < n; ++i) {
            const auto k = static_cast<Eigen::Index>(3 * i);
            out.segment<3>(k) = lmPreconditioner_[i] * v.segment<3>(k);
          }
        },
        [](Real) {}, dr);
    return true;
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
  bool schwarz_;                      // IpmPreconditioner::AdditiveSchwarz
  detail::SchwarzPreconditioner schwarzPreconditioner_;
  std::vector<Mat3> barrier_;  // G_i^-2 + delta I
  Real delta_ = 0;
  VecX wsp_;   // W S p of the current CG direction
  VecX wsdx_;  // W S dx, accumulated from the CG directions
  // Polishing: the operator J + delta' I (X = D, Y = I - D) and its preconditioner, the blocks
  // J_ii, the Levenberg-Marquardt preconditioner, J^T F and scratch vectors.
  detail::PqnNewtonOperator<MatrixFreeOps> newton_;
  std::vector<Mat3> jii_;
  std::vector<Mat3> lmPreconditioner_;
  VecX jtf_;
  VecX jv_;
  VecX scratch_;

  /// out = J v = (I - D) v + D W v.
  void applyJ(const VecX& v, VecX& out) {
    multiply(v, scratch_);
    out.resize(v.size());
    for (std::size_t i = 0; i < jii_.size(); ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      out.segment<3>(k) = newton_.y[i] * v.segment<3>(k) + newton_.x[i] * scratch_.segment<3>(k);
    }
  }
  /// out = J^T v = (I - D) v + W D v (D and W symmetric).
  void applyJt(const VecX& v, VecX& out) {
    dv_.resize(v.size());
    for (std::size_t i = 0; i < jii_.size(); ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      dv_.segment<3>(k) = newton_.x[i] * v.segment<3>(k);
    }
    multiply(dv_, scratch_);
    out.resize(v.size());
    for (std::size_t i = 0; i < jii_.size(); ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      out.segment<3>(k) = newton_.y[i] * v.segment<3>(k) + scratch_.segment<3>(k);
    }
  }
  VecX dv_;
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
