// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>

#include <grain/core/solvers/local_ipm.hpp>

#include "delassus_ops.hpp"
#include "local_ipm_iteration.hpp"
#include "local_solver_detail.hpp"

namespace grain::ipm {

Mat3 NtScaling::matrix() const {
  const Mat3 j = Vec3(1.0, -1.0, -1.0).asDiagonal();
  return beta * (2.0 * v * v.transpose() - j);
}

Mat3 NtScaling::inverseMatrix() const {
  const Mat3 j = Vec3(1.0, -1.0, -1.0).asDiagonal();
  const Vec3 jv(v.x(), -v.y(), -v.z());
  return (2.0 * jv * jv.transpose() - j) / beta;
}

NtScaling ntScaling(const Vec3& x, const Vec3& y) {
  // det = (x_0 - |x_1|)(x_0 + |x_1|) loses less accuracy near the boundary than x_0^2 - |x_1|^2.
  const Real x1 = std::hypot(x.y(), x.z());
  const Real y1 = std::hypot(y.y(), y.z());
  const Real nx = std::sqrt((x.x() - x1) * (x.x() + x1));
  const Real ny = std::sqrt((y.x() - y1) * (y.x() + y1));
  const Vec3 xb = x / nx;
  const Vec3 yb = y / ny;
  const Real g = std::sqrt(0.5 * (1.0 + xb.dot(yb)));
  const Vec3 wb = (xb + Vec3(yb.x(), -yb.y(), -yb.z())) / (2.0 * g);
  NtScaling s;
  s.v = (wb + Vec3(1.0, 0.0, 0.0)) / std::sqrt(2.0 * (wb.x() + 1.0));
  s.beta = std::sqrt(nx / ny);
  s.lambda = s.apply(y);
  return s;
}

Real maxConeStep(const Vec3& x, const Vec3& dx) {
  // det(x + t dx) = a t^2 + b t + c with c = det x > 0; the first positive root is where the
  // segment leaves L (it cannot reach -L without crossing the boundary of L first).
  constexpr Real kInf = std::numeric_limits<Real>::infinity();
  const Real a = coneDet(dx);
  const Real b = 2.0 * (x.x() * dx.x() - x.y() * dx.y() - x.z() * dx.z());
  const Real c = coneDet(x);
  Real t = kInf;
  if (a == 0.0) {
    if (b < 0.0) {
      t = -c / b;
    }
  } else {
    const Real disc = b * b - 4.0 * a * c;
    if (disc >= 0.0) {
      const Real qq = -0.5 * (b + std::copysign(std::sqrt(disc), b));
      for (const Real root : {qq / a, qq != 0.0 ? c / qq : kInf}) {
        if (root > 0.0) {
          t = std::min(t, root);
        }
      }
    }
  }
  // x_0 + t dx_0 >= 0 (guards rounding in the quadratic).
  if (dx.x() < 0.0) {
    t = std::min(t, -x.x() / dx.x());
  }
  return t;
}

Mat3 coneProjectionJacobian(const Vec3& z, Real mu) {
  const Real nT = std::sqrt(z.y() * z.y() + z.z() * z.z());
  if (nT <= mu * z.x() && z.x() >= 0.0) {
    return Mat3::Identity();
  }
  if (mu * nT + z.x() <= 0.0) {
    return Mat3::Zero();
  }
  const Real k = 1.0 / (1.0 + mu * mu);
  const Real l = (z.x() + mu * nT) * k;
  const Vec3 t(0.0, z.y() / nT, z.z() / nT);
  const Vec3 a(1.0, mu * t.y(), mu * t.z());  // P = l a
  Mat3 j = k * a * a.transpose();
  const Real c = l * mu / nT;
  j(1, 1) += c * (1.0 - t.y() * t.y());
  j(2, 2) += c * (1.0 - t.z() * t.z());
  j(1, 2) -= c * t.y() * t.z();
  j(2, 1) -= c * t.y() * t.z();
  return j;
}

}  // namespace grain::ipm

namespace grain::detail {

namespace {

/// Mean of the positive diagonal entries of a sparse matrix (1 if there are none).
Real meanPositiveDiagonal(const SparseMat& a) {
  Real sum = 0.0;
  Eigen::Index count = 0;
  for (Eigen::Index k = 0; k < a.rows(); ++k) {
    const Real d = a.coeff(k, k);
    if (d > 0.0) {
      sum += d;
      ++count;
    }
  }
  return count > 0 ? sum / static_cast<Real>(count) : 1.0;
}

/// A sparse matrix with the pattern of B plus full 3x3 diagonal blocks, and the positions of the
/// diagonal blocks' entries in its value array (so they can be overwritten in place).
struct BlockDiagonalSlots {
  SparseMat a;
  std::vector<std::array<Eigen::Index, 9>> slot;  // per contact, (row r, col c) at 3 c + r

  BlockDiagonalSlots() = default;
  BlockDiagonalSlots(const SparseMat& b, std::size_t n) {
    std::vector<Eigen::Triplet<Real>> t;
    t.reserve(static_cast<std::size_t>(b.nonZeros()) + 9 * n);
    for (int k = 0; k < b.outerSize(); ++k) {
      for (SparseMat::InnerIterator it(b, k); it; ++it) {
        t.emplace_back(it.row(), it.col(), it.value());
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      const auto o = static_cast<Eigen::Index>(3 * i);
      for (Eigen::Index c = 0; c < 3; ++c) {
        for (Eigen::Index r = 0; r < 3; ++r) {
          t.emplace_back(o + r, o + c, 0.0);
        }
      }
    }
    const auto m = static_cast<Eigen::Index>(3 * n);
    a.resize(m, m);
    a.setFromTriplets(t.begin(), t.end());
    a.makeCompressed();
    slot.resize(n);
    const int* outer = a.outerIndexPtr();
    const int* inner = a.innerIndexPtr();
    for (std::size_t i = 0; i < n; ++i) {
      const auto o = static_cast<int>(3 * i);
      for (int c = 0; c < 3; ++c) {
        for (int k = outer[o + c]; k < outer[o + c + 1]; ++k) {
          const int r = inner[k] - o;
          if (r >= 0 && r < 3) {
            slot[i][static_cast<std::size_t>(3 * c + r)] = k;
          }
        }
      }
    }
  }
};

/// Factorisation of the Newton matrix: LDL^T if symmetric, LU otherwise.
class NewtonSolver {
 public:
  void setSymmetric(bool symmetric) {
    symmetric_ = symmetric;
    analysed_ = false;
  }

  bool factorize(const SparseMat& a) {
    if (symmetric_) {
      if (!analysed_) {
        ldlt_.analyzePattern(a);
        analysed_ = true;
      }
      ldlt_.factorize(a);
      return ldlt_.info() == Eigen::Success;
    }
    if (!analysed_) {
      lu_.analyzePattern(a);
      analysed_ = true;
    }
    lu_.factorize(a);
    return lu_.info() == Eigen::Success;
  }
  VecX solve(const VecX& b) const { return symmetric_ ? VecX(ldlt_.solve(b)) : VecX(lu_.solve(b)); }

 private:
  bool symmetric_ = true;
  bool analysed_ = false;
  Eigen::SimplicialLDLT<SparseMat, Eigen::Lower> ldlt_;
  Eigen::SparseLU<SparseMat> lu_;
};

/// Factorises a + shift I with `solver` (the pattern analysed on the first call, `analysed`);
/// true if the factorisation succeeded.
template <class Solver>
bool factorizeShifted(Solver& solver, bool& analysed, const SparseMat& a, Real shift) {
  SparseMat shifted = a;
  for (Eigen::Index k = 0; k < shifted.rows(); ++k) {
    shifted.coeffRef(k, k) += shift;
  }
  if (!analysed) {
    solver.analyzePattern(shifted);
    analysed = true;
  }
  solver.factorize(shifted);
  return solver.info() == Eigen::Success;
}

/// The IpmOps (local_ipm_iteration.hpp) of the assembled problem: serial sums, u = W r + q with
/// the block-row matrix of LocalContext, the Newton matrix N + G^-2 + delta I assembled and
/// factorised (sparse LDL^T if W is symmetric, of its symmetric part; sparse LU otherwise;
/// delta multiplied by 100, up to three times, if the factorisation fails) with two steps of
/// iterative refinement against N + G^-2 per solve; the polishing's J + delta' I by sparse LU and
/// J^T J + s I by sparse LDL^T.
class AssembledIpmOps : public AssembledOps {
 public:
  explicit AssembledIpmOps(const LocalContext& context) : AssembledOps{context} {}

  /// The relaxed measure (whatever settings.errorMeasure says).
  Real error(const VecX& r, const VecX& u) const { return ctx.evaluator.relaxed(r, u); }

  Real scale(const VecX& sc) {
    const SparseMat& w = ctx.problem.W;
    const SparseMat wt = w.transpose();
    const Real asym = SparseMat(w - wt).norm();
    const bool symmetric = asym <= 1e-12 * w.norm();
    const SparseMat wUsed = symmetric ? SparseMat(0.5 * (w + wt)) : w;
    nMat_ = sc.asDiagonal() * wUsed * sc.asDiagonal();
    newton_ = BlockDiagonalSlots(nMat_, contacts());
    base_.assign(newton_.a.valuePtr(), newton_.a.valuePtr() + newton_.a.nonZeros());
    diagMean_ = meanPositiveDiagonal(nMat_);
    delta_ = ctx.settings.ipmRegularization * diagMean_;
    solver_.setSymmetric(symmetric);
    return diagMean_;
  }
  /// N x with the assembled (symmetrised) N; W S x is not used.
  void newtonProduct(const VecX& x, const VecX& /*wsx*/, VecX& nx) const { nx = nMat_ * x; }
  bool prepare(const std::vector<Mat3>& gInv2) {
    bool factorised = false;
    for (int attempt = 0; attempt < 4 && !factorised; ++attempt) {
      deltaUsed_ = attempt == 0 ? delta_ : std::max(100.0 * deltaUsed_, 1e-14 * diagMean_);
      Real* values = newton_.a.valuePtr();
      std::copy(base_.begin(), base_.end(), values);
      for (std::size_t i = 0; i < gInv2.size(); ++i) {
        const Mat3 gi2 = gInv2[i] + deltaUsed_ * Mat3::Identity();
        for (int c = 0; c < 3; ++c) {
          for (int rr = 0; rr < 3; ++rr) {
            values[newton_.slot[i][static_cast<std::size_t>(3 * c + rr)]] += gi2(rr, c);
          }
        }
      }
      factorised = solver_.factorize(newton_.a);
    }
    return factorised;
  }
  std::uint32_t solve(const VecX& rhs, VecX& dx, VecX& ndx) const {
    dx = solver_.solve(rhs);
    // Iterative refinement against the matrix without the shift delta.
    for (int refine = 0; refine < 2; ++refine) {
      const VecX res = rhs - (newton_.a * dx - deltaUsed_ * dx);
      dx += solver_.solve(res);
    }
    ndx = nMat_ * dx;
    return 0;
  }

  Real polishScale() const { return meanPositiveDiagonal(ctx.problem.W); }
  /// J = I - D + D W assembled from the block rows of W.
  void linearise(const std::vector<Mat3>& d, Real deltaW) {
    const auto& rowStart = ctx.w.rowStart();
    const auto& cols = ctx.w.columns();
    const auto& blocks = ctx.w.blocks();
    triplets_.clear();
    triplets_.reserve(9 * (blocks.size() + d.size()));
    for (std::size_t i = 0; i < d.size(); ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Mat3 diag = Mat3::Identity() - d[i];
      for (Eigen::Index c = 0; c < 3; ++c) {
        for (Eigen::Index r = 0; r < 3; ++r) {
          triplets_.emplace_back(k + r, k + c, diag(r, c));
        }
      }
      for (std::uint32_t b = rowStart[i]; b < rowStart[i + 1]; ++b) {
        const Mat3 dw = d[i] * blocks[b];
        const auto kc = static_cast<Eigen::Index>(3 * cols[b]);
        for (Eigen::Index c = 0; c < 3; ++c) {
          for (Eigen::Index r = 0; r < 3; ++r) {
            triplets_.emplace_back(k + r, kc + c, dw(r, c));
          }
        }
      }
    }
    const auto m = static_cast<Eigen::Index>(3 * d.size());
    jac_.resize(m, m);
    jac_.setFromTriplets(triplets_.begin(), triplets_.end());
    jac_.makeCompressed();
    deltaW_ = deltaW;
  }
  /// By sparse LU (false if the factorisation fails).
  bool newtonStep(const VecX& f, VecX& dr, std::uint32_t& /*krylov*/) {
    if (!factorizeShifted(lu_, luAnalysed_, jac_, deltaW_)) {
      return false;
    }
    dr = -lu_.solve(f);
    return true;
  }
  /// J^T J and J^T F assembled; the mean positive diagonal entry of J^T J.
  Real levenbergMarquardtScale(const VecX& f) {
    jtj_ = SparseMat(jac_.transpose() * jac_);
    jtf_ = jac_.transpose() * f;
    return meanPositiveDiagonal(jtj_);
  }
  /// By sparse LDL^T (false if the factorisation fails).
  bool levenbergMarquardtStep(Real shift, VecX& dr, std::uint32_t& /*krylov*/) {
    if (!factorizeShifted(ldlt_, ldltAnalysed_, jtj_, shift)) {
      return false;
    }
    dr = ldlt_.solve(jtf_);
    return true;
  }
  void apgd(const LocalSolverSettings& s, const VecX& r, LocalSolverResult& pg) const {
    const LocalContext apgdCtx(ctx.problem, s);
    runApgd(apgdCtx, r, pg);
  }

 private:
  SparseMat nMat_;  // N = S W S
  BlockDiagonalSlots newton_;
  std::vector<Real> base_;  // the values of N in the pattern of newton_
  Real diagMean_ = 1;
  Real delta_ = 0;
  Real deltaUsed_ = 0;
  NewtonSolver solver_;
  // Polishing: J, its triplets, delta', J^T J, J^T F and their factorisations.
  std::vector<Eigen::Triplet<Real>> triplets_;
  SparseMat jac_;
  Real deltaW_ = 0;
  SparseMat jtj_;
  VecX jtf_;
  Eigen::SparseLU<SparseMat> lu_;
  Eigen::SimplicialLDLT<SparseMat, Eigen::Lower> ldlt_;
  bool luAnalysed_ = false;
  bool ldltAnalysed_ = false;
};

}  // namespace

void runIpm(const LocalContext& ctx, LocalSolverResult& result) {
  AssembledIpmOps ops(ctx);
  ipmIterate(ops, ctx.settings, result);
}

}  // namespace grain::detail
