// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include <Eigen/LU>
#include <Eigen/SparseLU>

#include <grain/core/solvers/local_nsn.hpp>

#include "local_solver_detail.hpp"

namespace grain {

namespace {

/// Generalized Jacobian M = dP/dx of the Alart-Curnier prox at x (see local_nsn.hpp) and P(x).
inline Mat3 proxJacobian(const Vec3& x, Real mu, Vec3& p) {
  Mat3 m = Mat3::Zero();
  p.setZero();
  if (!(x.x() > 0.0)) {
    return m;
  }
  p.x() = x.x();
  m(0, 0) = 1.0;
  const Real radius = mu * x.x();
  const Real nT = std::sqrt(x.y() * x.y() + x.z() * x.z());
  if (nT <= radius) {
    p.y() = x.y();
    p.z() = x.z();
    m(1, 1) = 1.0;
    m(2, 2) = 1.0;
    return m;
  }
  // Here nT > radius >= 0.
  const Real t1 = x.y() / nT;
  const Real t2 = x.z() / nT;
  p.y() = radius * t1;
  p.z() = radius * t2;
  const Real s = radius / nT;
  m(1, 0) = mu * t1;
  m(2, 0) = mu * t2;
  m(1, 1) = s * (1.0 - t1 * t1);
  m(2, 2) = s * (1.0 - t2 * t2);
  m(1, 2) = m(2, 1) = -s * t1 * t2;
  return m;
}

}  // namespace

NsnLinearisation alartCurnierLinearise(const Vec3& r, const Vec3& u, Real mu, Real rhoN,
                                       Real rhoT) {
  const Vec3 rho(rhoN, rhoT, rhoT);
  const Vec3 x = r - rho.cwiseProduct(u);
  Vec3 p;
  const Mat3 m = proxJacobian(x, mu, p);
  NsnLinearisation lin;
  lin.phi = r - p;
  lin.dPhiDr = Mat3::Identity() - m;
  lin.dPhiDu = m * rho.asDiagonal();
  return lin;
}

namespace detail {

namespace {

/// Outcome of one run of the Newton iteration.
struct NewtonOutcome {
  std::uint32_t iterations = 0;
  bool converged = false;
  bool stalled = false;
  bool finite = true;
};

/// The semismooth Newton iteration on FC(W + sigma I, qEff, mu) (see local_nsn.hpp). The matrix
/// pattern and the sparse LU analysis are set up once and reused for every shift and step.
class NsnNewton {
 public:
  explicit NsnNewton(const LocalContext& ctx) : ctx_(ctx), n_(ctx.n) {
    const auto m = static_cast<Eigen::Index>(3 * n_);
    dense_ = m <= static_cast<Eigen::Index>(ctx.settings.nsnDenseLimit);
    // Diagonal entries for rho (the SOR metric with alpha = 1, Max / Alart-Curnier).
    const std::vector<Vec3> metric =
        proxMetric(ctx.w, 1.0, RStrategy::Max, UcfSubMethod::AlartCurnier);
    diag_.resize(n_);
    rho_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      diag_[i] = metric[i].cwiseInverse();
    }
    jac_.resize(n_);
    phi_.resize(m);
    d_.resize(m);
    wd_.resize(m);
    trial_.resize(m);
    uTrial_.resize(m);
    phiTrial_.resize(m);
    if (dense_) {
      jd_.resize(m, m);
      return;
    }
    // Pattern of J: the blocks of W and the diagonal blocks.
    const auto& start = ctx.w.rowStart();
    std::vector<Eigen::Triplet<Real>> t;
    t.reserve(9 * (ctx.w.blockCount() + n_));
    for (std::size_t i = 0; i < n_; ++i) {
      const auto bi = static_cast<Eigen::Index>(3 * i);
      for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) {
        const auto bj = static_cast<Eigen::Index>(3 * ctx.w.columns()[k]);
        addBlock(t, bi, bj);
      }
      addBlock(t, bi, bi);
    }
    js_.resize(m, m);
    js_.setFromTriplets(t.begin(), t.end());
    js_.makeCompressed();
    blockIndex_.resize(9 * ctx.w.blockCount());
    diagIndex_.resize(9 * n_);
    for (std::size_t i = 0; i < n_; ++i) {
      const auto bi = static_cast<Eigen::Index>(3 * i);
      for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) {
        const auto bj = static_cast<Eigen::Index>(3 * ctx.w.columns()[k]);
        indexBlock(bi, bj, &blockIndex_[9 * k]);
      }
      indexBlock(bi, bi, &diagIndex_[9 * i]);
    }
    lu_.analyzePattern(js_);
  }

  /// Newton steps from (r, u = (W + sigma I) r + qEff, err) until the error (the selected
  /// measure of the problem if `outer`, else the natural map of the shifted problem) is <= tol,
  /// at most maxIter steps. Updates r, u, err; offers every iterate to `best` if given.
  NewtonOutcome run(VecX& r, VecX& u, Real& err, Real sigma, const VecX& qEff, bool outer, Real tol,
                    std::uint32_t maxIter, BestIterate* best) {
    NewtonOutcome out;
    setRho(sigma);
    Real theta = 0.5 * phi(r, u, phi_);
    const std::uint32_t memory = ctx_.settings.nsnLineSearchMemory;
    history_.assign(memory, theta);
    std::uint32_t slot = 0;
    Real bestErr = err;
    std::uint32_t sinceImprovement = 0;
    while (true) {
      if (err <= tol) {
        out.converged = true;
        break;
      }
      if (out.iterations >= maxIter) {
        break;
      }
      assemble(r, u, sigma);
      if (!solveStep()) {
        out.stalled = true;
        break;
      }
      ctx_.w.multiply(d_, wd_);
      wd_ += sigma * d_;
      const Real reference = *std::max_element(history_.begin(), history_.end());
      Real t = 1.0;
      bool accepted = false;
      Real thetaTrial = 0.0;
      for (int h = 0; h <= 20; ++h, t *= 0.5) {
        trial_ = r + t * d_;
        uTrial_ = u + t * wd_;
        thetaTrial = 0.5 * phi(trial_, uTrial_, phiTrial_);
        if (thetaTrial <= reference - 2e-4 * t * theta) {
          accepted = true;
          break;
        }
      }
      ++out.iterations;
      if (!accepted) {
        out.stalled = true;
        break;
      }
      r.swap(trial_);
      // Exact velocity of the new iterate (no drift from the linear update).
      ctx_.w.multiply(r, u);
      u += qEff + sigma * r;
      theta = 0.5 * phi(r, u, phi_);
      history_[slot] = theta;
      slot = (slot + 1) % memory;
      err = outer ? ctx_.error(r, u) : shiftedError(r, u, qEff);
      if (!std::isfinite(err) || !std::isfinite(theta)) {
        out.finite = false;
        break;
      }
      if (best != nullptr) {
        best->offer(r, u, err);
      }
      if (err < bestErr) {
        bestErr = err;
        sinceImprovement = 0;
      } else if (++sinceImprovement >= 10) {
        out.stalled = true;
        break;
      }
    }
    return out;
  }

  /// Natural-map error of (r, u) for the problem with free velocity qEff.
  Real shiftedError(const VecX& r, const VecX& u, const VecX& qEff) const {
    const Real e = ctx_.evaluator.naturalMapAbsolute(r, u);
    const Real scale = std::max({qEff.norm(), r.norm(), u.norm()});
    if (!std::isfinite(e) || !std::isfinite(scale)) {
      return std::numeric_limits<Real>::infinity();
    }
    return scale > DBL_EPSILON ? e / scale : e;
  }

 private:
  static void addBlock(std::vector<Eigen::Triplet<Real>>& t, Eigen::Index bi, Eigen::Index bj) {
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        t.emplace_back(bi + a, bj + b, 0.0);
      }
    }
  }
  void indexBlock(Eigen::Index bi, Eigen::Index bj, Eigen::Index* index) {
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        index[3 * a + b] = &js_.coeffRef(bi + a, bj + b) - js_.valuePtr();
      }
    }
  }

  void setRho(Real sigma) {
    for (std::size_t i = 0; i < n_; ++i) {
      rho_[i] = (diag_[i] + Vec3::Constant(sigma)).cwiseInverse();
    }
  }

  /// Phi(r, u) into f; returns |Phi|^2.
  Real phi(const VecX& r, const VecX& u, VecX& f) const {
    const Real* mu = ctx_.problem.mu.data();
    Real s = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Vec3 ri = r.segment<3>(k);
      const Vec3 x = ri - rho_[i].cwiseProduct(u.segment<3>(k));
      const Vec3 fi = ri - prox::alartCurnier(x, mu[i]);
      f.segment<3>(k) = fi;
      s += fi.squaredNorm();
    }
    return s;
  }

  /// Values of J = I - M + M D (W + sigma I) at (r, u).
  void assemble(const VecX& r, const VecX& u, Real sigma) {
    const Real* mu = ctx_.problem.mu.data();
    for (std::size_t i = 0; i < n_; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Vec3 x = r.segment<3>(k) - rho_[i].cwiseProduct(u.segment<3>(k));
      Vec3 p;
      jac_[i] = proxJacobian(x, mu[i], p) * rho_[i].asDiagonal();  // M D
    }
    const auto& start = ctx_.w.rowStart();
    const auto& blocks = ctx_.w.blocks();
    const auto& cols = ctx_.w.columns();
    if (dense_) {
      jd_.setZero();
      for (std::size_t i = 0; i < n_; ++i) {
        const auto bi = static_cast<Eigen::Index>(3 * i);
        for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) {
          jd_.block<3, 3>(bi, static_cast<Eigen::Index>(3 * cols[k])) += jac_[i] * blocks[k];
        }
        jd_.block<3, 3>(bi, bi) += diagonalPart(i, sigma);
      }
      return;
    }
    Real* v = js_.valuePtr();
    std::fill(v, v + js_.nonZeros(), 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      for (std::uint32_t k = start[i]; k < start[i + 1]; ++k) {
        const Mat3 b = jac_[i] * blocks[k];
        const Eigen::Index* index = &blockIndex_[9 * k];
        for (int a = 0; a < 3; ++a) {
          for (int c = 0; c < 3; ++c) {
            v[index[3 * a + c]] += b(a, c);
          }
        }
      }
      const Mat3 b = diagonalPart(i, sigma);
      const Eigen::Index* index = &diagIndex_[9 * i];
      for (int a = 0; a < 3; ++a) {
        for (int c = 0; c < 3; ++c) {
          v[index[3 * a + c]] += b(a, c);
        }
      }
    }
  }

  /// I - M + sigma M D of contact i (jac_ holds M D); M = (M D) D^-1.
  Mat3 diagonalPart(std::size_t i, Real sigma) const {
    const Mat3 m = jac_[i] * rho_[i].cwiseInverse().asDiagonal();
    return Mat3::Identity() - m + sigma * jac_[i];
  }

  /// d = -J^-1 Phi, regularised with eta I if the factorisation fails. False if no finite d.
  bool solveStep() {
    const Real phiNorm = phi_.norm();
    Real scale = 0.0;
    if (dense_) {
      scale = jd_.diagonal().cwiseAbs().maxCoeff();
    } else {
      for (std::size_t i = 0; i < n_; ++i) {
        for (int a = 0; a < 3; ++a) {
          scale = std::max(scale, std::abs(js_.valuePtr()[diagIndex_[9 * i + 4 * a]]));
        }
      }
    }
    if (!(scale > 0.0)) {
      scale = 1.0;
    }
    Real eta = 0.0;
    for (int attempt = 0; attempt < 6; ++attempt) {
      if (attempt > 0) {
        const Real next = scale * std::pow(10.0, -12.0 + 2.0 * attempt);  // 1e-10 .. 1e-2
        addDiagonal(next - eta);
        eta = next;
      }
      if (factoriseAndSolve() && d_.allFinite()) {
        // Accept when J d = -Phi holds to a relative 1e-6 (a near-singular factorisation
        // otherwise returns garbage).
        if (residual() <= 1e-6 * phiNorm) {
          return true;
        }
      }
    }
    return d_.allFinite();
  }

  void addDiagonal(Real delta) {
    if (dense_) {
      jd_.diagonal().array() += delta;
      return;
    }
    for (std::size_t i = 0; i < n_; ++i) {
      for (int a = 0; a < 3; ++a) {
        js_.valuePtr()[diagIndex_[9 * i + 4 * a]] += delta;
      }
    }
  }

  bool factoriseAndSolve() {
    if (dense_) {
      dlu_.compute(jd_);
      d_ = -dlu_.solve(phi_);
      return true;
    }
    lu_.factorize(js_);
    if (lu_.info() != Eigen::Success) {
      return false;
    }
    d_ = -lu_.solve(phi_);
    return lu_.info() == Eigen::Success;
  }

  Real residual() {
    if (dense_) {
      wd_.noalias() = jd_ * d_;
    } else {
      wd_ = js_ * d_;
    }
    return (wd_ + phi_).norm();
  }

  const LocalContext& ctx_;
  std::size_t n_;
  bool dense_ = false;
  std::vector<Vec3> diag_;  // (W_NN, max W_TT, max W_TT) per contact, positive
  std::vector<Vec3> rho_;
  std::vector<Mat3> jac_;  // M_i D_i
  VecX phi_, d_, wd_, trial_, uTrial_, phiTrial_;
  std::vector<Real> history_;
  Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic> jd_;
  Eigen::PartialPivLU<Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>> dlu_;
  SparseMat js_;
  std::vector<Eigen::Index> blockIndex_;  // 9 value positions per block of W
  std::vector<Eigen::Index> diagIndex_;   // 9 value positions per diagonal block
  Eigen::SparseLU<SparseMat> lu_;
};

Real meanDiagonal(const LocalContext& ctx) {
  Real sum = 0.0;
  for (std::size_t i = 0; i < ctx.n; ++i) {
    sum += ctx.w.diagonalBlock(i).trace();
  }
  const Real mean = sum / static_cast<Real>(3 * ctx.n);
  return mean > 0.0 ? mean : 1.0;
}

void finishBest(const LocalContext& ctx, BestIterate& best, LocalSolverResult& result) {
  result.r.swap(best.r);
  result.u.swap(best.u);
  result.error = best.error;
  result.converged = best.error <= ctx.settings.tolerance;
  if (!std::isfinite(best.error)) {
    result.finite = false;
  }
}

}  // namespace

void runNsn(const LocalContext& ctx, VecX r, LocalSolverResult& result) {
  const LocalSolverSettings& s = ctx.settings;
  NsnNewton newton(ctx);
  VecX u;
  ctx.velocity(r, u);
  Real e = ctx.error(r, u);
  BestIterate best;
  best.offer(r, u, e);
  std::uint32_t steps = 0;
  std::uint32_t sweeps = 0;
  while (steps < s.nsnMaxIter && !(e <= s.tolerance)) {
    const NewtonOutcome out =
        newton.run(r, u, e, 0.0, ctx.problem.q, true, s.tolerance, s.nsnMaxIter - steps, &best);
    steps += out.iterations;
    if (out.converged || !out.finite || !out.stalled || s.nsnRescueSweeps == 0) {
      break;
    }
    // Stalled: a few SOR sweeps from the best iterate, then Newton again.
    LocalSolverResult sor;
    runSor(ctx, best.r, s.nsnRescueSweeps, sor);
    sweeps += sor.iterations;
    if (!sor.finite) {
      break;
    }
    r = sor.r;
    u = sor.u;
    e = sor.error;
    best.offer(r, u, e);
    if (out.iterations == 0) {
      ++steps;  // a failed factorisation counts as a step, so the loop ends
    }
  }
  result.iterations = steps;
  result.fallbackIterations = sweeps;
  finishBest(ctx, best, result);
}

void runNsnProx(const LocalContext& ctx, VecX r, LocalSolverResult& result) {
  const LocalSolverSettings& s = ctx.settings;
  NsnNewton newton(ctx);
  const Real meanDiag = meanDiagonal(ctx);
  VecX u;
  ctx.velocity(r, u);
  Real e = ctx.error(r, u);
  BestIterate best;
  best.offer(r, u, e);
  VecX qShift;
  VecX rIn;
  VecX uIn;
  Real c = s.proxSigma;
  std::uint32_t steps = 0;
  for (std::uint32_t outer = 0; outer < s.proxMaxIter && !(e <= s.tolerance); ++outer) {
    const Real sigma =
        meanDiag * std::max(s.proxSigmaMin, c * std::pow(std::min(Real(1), e), s.proxNu));
    qShift = ctx.problem.q - sigma * r;
    rIn = r;
    uIn = u;  // (W + sigma I) r + q - sigma r = u
    Real eIn = newton.shiftedError(rIn, uIn, qShift);
    const Real innerTol = std::max(0.5 * s.tolerance, s.proxInnerFactor * e);
    const NewtonOutcome out =
        newton.run(rIn, uIn, eIn, sigma, qShift, false, innerTol, s.proxInnerMaxIter, nullptr);
    steps += std::max<std::uint32_t>(out.iterations, 1);
    if (!out.finite) {
      c *= 10.0;
      if (c > 1e12) {
        break;
      }
      continue;
    }
    ctx.velocity(rIn, uIn);
    const Real eNew = ctx.error(rIn, uIn);
    if (out.converged || eNew < e) {
      r.swap(rIn);
      u.swap(uIn);
      e = eNew;
      best.offer(r, u, e);
    }
    if (!out.converged) {
      c = std::min(c * 10.0, Real(1e12));
    } else if (out.iterations <= 1) {
      c = std::max(1e-12 * s.proxSigma, 0.1 * c);
    } else if (out.iterations <= 3) {
      c = std::max(1e-12 * s.proxSigma, 0.5 * c);
    }
  }
  result.iterations = steps;
  finishBest(ctx, best, result);
}

}  // namespace detail
}  // namespace grain
