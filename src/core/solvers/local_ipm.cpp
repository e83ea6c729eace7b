// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>

#include <grain/core/solvers/local_ipm.hpp>

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

using ipm::NtScaling;

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
  explicit NewtonSolver(bool symmetric) : symmetric_(symmetric) {}

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
  bool symmetric_;
  bool analysed_ = false;
  Eigen::SimplicialLDLT<SparseMat, Eigen::Lower> ldlt_;
  Eigen::SparseLU<SparseMat> lu_;
};

/// Relaxed error of r with u = W r + q (u is filled).
Real relaxedError(const LocalContext& ctx, const VecX& r, VecX& u) {
  ctx.velocity(r, u);
  return ctx.evaluator.relaxed(r, u);
}

/// Newton polishing of r on the relaxed natural map, semismooth and Levenberg-Marquardt steps
/// (see local_ipm.hpp). Returns the number of accepted steps.
std::uint32_t polish(const LocalContext& ctx, BestIterate& best) {
  const LocalSolverSettings& s = ctx.settings;
  const std::size_t n = ctx.n;
  const auto m = static_cast<Eigen::Index>(3 * n);
  const Real* mu = ctx.problem.mu.data();
  const Real delta = std::max(s.ipmRegularization, Real(1e-14));
  const Real deltaW = delta * meanPositiveDiagonal(ctx.problem.W);
  const auto& rowStart = ctx.w.rowStart();
  const auto& cols = ctx.w.columns();
  const auto& blocks = ctx.w.blocks();
  std::vector<Mat3> d(n);
  std::vector<Eigen::Triplet<Real>> t;
  t.reserve(9 * (blocks.size() + n));
  Eigen::SparseLU<SparseMat> lu;
  Eigen::SimplicialLDLT<SparseMat, Eigen::Lower> ldlt;
  bool luAnalysed = false;
  bool ldltAnalysed = false;
  VecX f(m);
  VecX uTrial(m);
  std::uint32_t steps = 0;
  for (std::uint32_t it = 0; it < s.ipmPolishSteps && !(best.error <= s.tolerance); ++it) {
    t.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Vec3 z = best.r.segment<3>(k) - best.u.segment<3>(k);
      d[i] = ipm::coneProjectionJacobian(z, mu[i]);
      f.segment<3>(k) = best.r.segment<3>(k) - prox::projectCone(z, mu[i]);
      const Mat3 diag = Mat3::Identity() - d[i];
      for (Eigen::Index c = 0; c < 3; ++c) {
        for (Eigen::Index r = 0; r < 3; ++r) {
          t.emplace_back(k + r, k + c, diag(r, c));
        }
      }
      for (std::uint32_t b = rowStart[i]; b < rowStart[i + 1]; ++b) {
        const Mat3 dw = d[i] * blocks[b];
        const auto kc = static_cast<Eigen::Index>(3 * cols[b]);
        for (Eigen::Index c = 0; c < 3; ++c) {
          for (Eigen::Index r = 0; r < 3; ++r) {
            t.emplace_back(k + r, kc + c, dw(r, c));
          }
        }
      }
    }
    SparseMat jac(m, m);
    jac.setFromTriplets(t.begin(), t.end());
    jac.makeCompressed();
    // First the semismooth Newton step (J + delta_W I) dr = -F. Where W is rank-deficient J is
    // (nearly) singular and that step can be useless; then Levenberg-Marquardt steps
    // (J^T J + s I) dr = -J^T F, which stay out of the null space, with s growing from
    // (error) mean diag(J^T J) until the error decreases.
    bool accepted = false;
    auto tryStep = [&](const VecX& dr) {
      if (!dr.allFinite()) {
        return;
      }
      Real tau = 1.0;
      for (int halving = 0; halving <= 2 && !accepted; ++halving, tau *= 0.5) {
        const VecX rTrial = best.r + tau * dr;
        const Real e = relaxedError(ctx, rTrial, uTrial);
        if (e < best.error) {
          best.offer(rTrial, uTrial, e);
          accepted = true;
        }
      }
    };
    {
      SparseMat shifted = jac;
      for (Eigen::Index k = 0; k < m; ++k) {
        shifted.coeffRef(k, k) += deltaW;
      }
      if (!luAnalysed) {
        lu.analyzePattern(shifted);
        luAnalysed = true;
      }
      lu.factorize(shifted);
      if (lu.info() == Eigen::Success) {
        tryStep(-lu.solve(f));
      }
    }
    if (!accepted) {
      const SparseMat jtj = SparseMat(jac.transpose() * jac);
      const VecX jtf = jac.transpose() * f;
      Real shift = meanPositiveDiagonal(jtj) * std::max(std::min(best.error, Real(1e-6)), delta);
      for (int attempt = 0; attempt < 4 && !accepted; ++attempt, shift *= 100.0) {
        SparseMat shifted = jtj;
        for (Eigen::Index k = 0; k < m; ++k) {
          shifted.coeffRef(k, k) += shift;
        }
        if (!ldltAnalysed) {
          ldlt.analyzePattern(shifted);
          ldltAnalysed = true;
        }
        ldlt.factorize(shifted);
        if (ldlt.info() == Eigen::Success) {
          tryStep(-ldlt.solve(jtf));
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

}  // namespace

void runIpm(const LocalContext& ctx, LocalSolverResult& result) {
  const LocalSolverSettings& s = ctx.settings;
  const LocalProblem& prob = ctx.problem;
  const std::size_t n = ctx.n;
  const auto m = static_cast<Eigen::Index>(3 * n);
  const Real* mu = prob.mu.data();

  BestIterate best;
  {
    VecX r0 = VecX::Zero(m);
    VecX u0;
    best.offer(r0, u0, relaxedError(ctx, r0, u0));
  }

  // Scaled problem: N = S W S, p = S q, S = diag(1, mu, mu) per contact.
  VecX sc(m);
  for (std::size_t i = 0; i < n; ++i) {
    sc.segment<3>(static_cast<Eigen::Index>(3 * i)) = Vec3(1.0, mu[i], mu[i]);
  }
  const SparseMat wt = prob.W.transpose();
  const Real asym = SparseMat(prob.W - wt).norm();
  const bool symmetric = asym <= 1e-12 * prob.W.norm();
  const SparseMat wUsed = symmetric ? SparseMat(0.5 * (prob.W + wt)) : prob.W;
  const SparseMat nMat = sc.asDiagonal() * wUsed * sc.asDiagonal();
  const VecX p = sc.cwiseProduct(prob.q);

  BlockDiagonalSlots newton(nMat, n);
  const std::vector<Real> base(newton.a.valuePtr(), newton.a.valuePtr() + newton.a.nonZeros());
  const Real diagMean = meanPositiveDiagonal(nMat);
  const Real delta = s.ipmRegularization * diagMean;
  NewtonSolver solver(symmetric);
  Real deltaUsed = delta;

  // Start.
  const Real pInf = p.cwiseAbs().maxCoeff();
  const Real rhoY = pInf > 0.0 ? pInf : 1.0;
  const Real rhoX = rhoY / diagMean;
  VecX x = VecX::Zero(m);
  for (std::size_t i = 0; i < n; ++i) {
    x[static_cast<Eigen::Index>(3 * i)] = rhoX;
  }
  VecX y = nMat * x + p;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    const Real lowest = y[k] - std::hypot(y[k + 1], y[k + 2]);
    if (lowest < rhoY) {
      y[k] += rhoY - lowest;
    }
  }

  std::vector<NtScaling> nt(n);
  VecX rp(m);
  VecX rhs(m);
  VecX dxAff(m);
  VecX dyAff(m);
  VecX r(m);
  VecX u(m);
  std::uint32_t iterations = 0;
  const auto nReal = static_cast<Real>(n);

  // One Newton direction for the complementarity target t (per contact from `target`).
  auto direction = [&](auto&& target, VecX& dx, VecX& dy) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Vec3 di = ipm::arrowSolve(nt[i].lambda, target(i));
      rhs.segment<3>(k) = nt[i].applyInverse(di) + rp.segment<3>(k);
    }
    dx = solver.solve(rhs);
    // Iterative refinement against the matrix without the shift delta.
    for (int refine = 0; refine < 2; ++refine) {
      const VecX res = rhs - (newton.a * dx - deltaUsed * dx);
      dx += solver.solve(res);
    }
    dy = nMat * dx - rp;
  };
  auto maxStep = [&](const VecX& dx, const VecX& dy) {
    Real a = std::numeric_limits<Real>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      a = std::min({a, ipm::maxConeStep(x.segment<3>(k), dx.segment<3>(k)),
                    ipm::maxConeStep(y.segment<3>(k), dy.segment<3>(k))});
    }
    return a;
  };

  for (std::uint32_t it = 0; it < s.ipmMaxIter && !(best.error <= s.tolerance); ++it) {
    // Scalings and the Newton matrix N + G^-2 + delta I (delta raised if the factorisation
    // fails).
    for (std::size_t i = 0; i < n; ++i) {
      nt[i] = ipm::ntScaling(x.segment<3>(static_cast<Eigen::Index>(3 * i)),
                             y.segment<3>(static_cast<Eigen::Index>(3 * i)));
    }
    bool factorised = false;
    for (int attempt = 0; attempt < 4 && !factorised; ++attempt) {
      deltaUsed = attempt == 0 ? delta : std::max(100.0 * deltaUsed, 1e-14 * diagMean);
      Real* values = newton.a.valuePtr();
      std::copy(base.begin(), base.end(), values);
      for (std::size_t i = 0; i < n; ++i) {
        const Mat3 gi = nt[i].inverseMatrix();
        const Mat3 gi2 = gi * gi + deltaUsed * Mat3::Identity();
        for (int c = 0; c < 3; ++c) {
          for (int rr = 0; rr < 3; ++rr) {
            values[newton.slot[i][static_cast<std::size_t>(3 * c + rr)]] += gi2(rr, c);
          }
        }
      }
      factorised = solver.factorize(newton.a);
    }
    if (!factorised) {
      break;
    }
    rp = y - nMat * x - p;
    const Real muC = x.dot(y) / nReal;

    // Predictor.
    direction([&](std::size_t i) { return Vec3(-ipm::jordanProduct(nt[i].lambda, nt[i].lambda)); },
              dxAff, dyAff);
    const Real aAff = std::min(1.0, maxStep(dxAff, dyAff));
    const Real muAff = (x + aAff * dxAff).dot(y + aAff * dyAff) / nReal;
    const Real sigma = std::clamp(std::pow(muAff / muC, 3), 0.0, 1.0);

    // Corrector.
    VecX dx(m);
    VecX dy(m);
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
    if (!(a > 1e-12) || !dx.allFinite() || !dy.allFinite()) {
      break;
    }
    x += a * dx;
    y += a * dy;
    iterations = it + 1;

    r = sc.cwiseProduct(x);
    const Real e = relaxedError(ctx, r, u);
    if (!std::isfinite(e)) {
      result.finite = false;
      break;
    }
    best.offer(r, u, e);
  }
  result.polishSteps = polish(ctx, best);
  if (!(best.error <= s.tolerance) && s.ipmApgdSteps > 0) {
    // Projection steps: APGD on the relaxation from the best iterate (linear convergence, but it
    // settles the contacts whose active set the Newton steps do not identify).
    LocalSolverSettings apgd = s;
    apgd.method = LocalSolverMethod::Apgd;
    apgd.apgdDeSaxce = false;
    apgd.errorMeasure = LocalErrorMeasure::Relaxed;
    apgd.maxIter = s.ipmApgdSteps;
    const LocalContext apgdCtx(prob, apgd);
    LocalSolverResult pg;
    runApgd(apgdCtx, best.r, pg);
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
