// SPDX-License-Identifier: MIT
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include <Eigen/Eigenvalues>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/block_sparse_matrix.hpp>
#include <grain/core/solvers/local_problem.hpp>

#include "local_solver_detail.hpp"

namespace grain {

namespace {

/// True if none of the `count` values at `v` is NaN or infinite: x - x is 0 for a finite x and NaN
/// otherwise, so the (vectorised) sum of the differences is 0 exactly when all are finite.
bool allFinite(const Real* v, Eigen::Index count) {
  if (count == 0) {
    return true;
  }
  const Eigen::Map<const VecX> x(v, count);
  return (x - x).sum() == 0.0;
}

}  // namespace

namespace detail {

void validateExceptW(const LocalProblem& p, Real normQ) {
  const Eigen::Index n = p.mu.size();
  GRAIN_REQUIRE(p.spaceDim == 2 || p.spaceDim == 3, "LocalProblem: spaceDim must be 2 or 3");
  GRAIN_REQUIRE(p.W.rows() == 3 * n && p.W.cols() == 3 * n,
                "LocalProblem: W must be 3n x 3n for n = " + std::to_string(n) + " contacts, got " +
                    std::to_string(p.W.rows()) + " x " + std::to_string(p.W.cols()));
  GRAIN_REQUIRE(p.q.size() == 3 * n, "LocalProblem: q must have 3n = " + std::to_string(3 * n) +
                                         " entries, got " + std::to_string(p.q.size()));
  // A finite |q| means finite entries (an infinite |q| may be an overflow: then scan q).
  GRAIN_REQUIRE(std::isfinite(normQ) || allFinite(p.q.data(), p.q.size()),
                "LocalProblem: q has a NaN or Inf entry");
  bool muValid = true;
  for (Eigen::Index i = 0; i < n; ++i) {
    muValid = muValid & (p.mu[i] - p.mu[i] == 0.0) & (p.mu[i] >= 0.0);
  }
  if (!muValid) {
    for (Eigen::Index i = 0; i < n; ++i) {
      GRAIN_REQUIRE(std::isfinite(p.mu[i]) && p.mu[i] >= 0.0,
                    "LocalProblem: mu[" + std::to_string(i) + "] must be finite and >= 0");
    }
  }
}

void validateW(const LocalProblem& p) {
  bool wFinite = true;
  if (p.W.isCompressed()) {
    wFinite = allFinite(p.W.valuePtr(), p.W.nonZeros());
  } else {
    for (int k = 0; k < p.W.outerSize() && wFinite; ++k) {
      for (SparseMat::InnerIterator it(p.W, k); it; ++it) {
        wFinite = wFinite && std::isfinite(it.value());
      }
    }
  }
  GRAIN_REQUIRE(wFinite, "LocalProblem: W has a NaN or Inf entry");
}

}  // namespace detail

void validate(const LocalProblem& p) {
  detail::validateExceptW(p, std::numeric_limits<Real>::quiet_NaN());
  detail::validateW(p);
}

LocalProblem embedPlanarProblem(const SparseMat& w2, const VecX& q2, const VecX& mu) {
  const Eigen::Index n = mu.size();
  GRAIN_REQUIRE(w2.rows() == 2 * n && w2.cols() == 2 * n && q2.size() == 2 * n,
                "planar problem: W must be 2n x 2n and q have 2n entries for n = " +
                    std::to_string(n) + " contacts");
  auto map = [](Eigen::Index k) { return 3 * (k / 2) + k % 2; };
  std::vector<Eigen::Triplet<Real>> t;
  t.reserve(static_cast<std::size_t>(w2.nonZeros() + n));
  for (int k = 0; k < w2.outerSize(); ++k) {
    for (SparseMat::InnerIterator it(w2, k); it; ++it) {
      t.emplace_back(map(it.row()), map(it.col()), it.value());
    }
  }
  for (Eigen::Index c = 0; c < n; ++c) {
    t.emplace_back(3 * c + 2, 3 * c + 2, 1.0);
  }
  LocalProblem p;
  p.W.resize(3 * n, 3 * n);
  p.W.setFromTriplets(t.begin(), t.end());
  p.q = VecX::Zero(3 * n);
  for (Eigen::Index k = 0; k < 2 * n; ++k) {
    p.q[map(k)] = q2[k];
  }
  p.mu = mu;
  p.spaceDim = 2;
  return p;
}

VecX planarPart(const VecX& v3) {
  const Eigen::Index n = v3.size() / 3;
  VecX v2(2 * n);
  for (Eigen::Index c = 0; c < n; ++c) {
    v2[2 * c] = v3[3 * c];
    v2[2 * c + 1] = v3[3 * c + 1];
  }
  return v2;
}

VecX localVelocity(const LocalProblem& problem, const VecX& r) {
  VecX u = problem.q;
  u.noalias() += problem.W * r;
  return u;
}

std::string_view toString(LocalErrorMeasure m) {
  switch (m) {
    case LocalErrorMeasure::NaturalMap:
      return "natural-map";
    case LocalErrorMeasure::Koziara:
      return "koziara";
    case LocalErrorMeasure::Relaxed:
      return "relaxed";
  }
  return "?";
}

Mat3 blockInverse(const Mat3& w) {
  const Mat3 s = 0.5 * (w + w.transpose());
  Eigen::SelfAdjointEigenSolver<Mat3> eig(s);
  const Vec3 lambda = eig.eigenvalues();
  const Real cut = 1e-12 * std::max(lambda.cwiseAbs().maxCoeff(), Real(0));
  Vec3 inv;
  for (int k = 0; k < 3; ++k) {
    inv[k] = lambda[k] > cut && lambda[k] > 0.0 ? 1.0 / lambda[k] : 0.0;
  }
  return eig.eigenvectors() * inv.asDiagonal() * eig.eigenvectors().transpose();
}

LocalErrorEvaluator::LocalErrorEvaluator(const LocalProblem& problem)
    : problem_(&problem), normQ_(problem.q.norm()) {}

void LocalErrorEvaluator::prepareKoziara() const {
  if (koziaraReady_) {
    return;
  }
  const std::size_t n = problem_->contactCount();
  const BlockSparseMatrix3 w(problem_->W);
  blockInverse_.resize(n);
  koziaraDenominator_ = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    blockInverse_[i] = blockInverse(w.diagonalBlock(i));
    const Vec3 qi = problem_->q.segment<3>(3 * static_cast<Eigen::Index>(i));
    koziaraDenominator_ += qi.dot(blockInverse_[i] * qi);
  }
  koziaraReady_ = true;
}

Real LocalErrorEvaluator::naturalMapAbsolute(const VecX& r, const VecX& u) const {
  const std::size_t n = problem_->contactCount();
  Real s = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Index k = 3 * static_cast<Eigen::Index>(i);
    s += naturalMapResidual(r.segment<3>(k), u.segment<3>(k), problem_->mu[k / 3]).squaredNorm();
  }
  return std::sqrt(s);
}

Real naturalMapError(Real residualNorm, Real normQ, Real normR, Real normU) {
  const Real scale = std::max({normQ, normR, normU});
  if (!std::isfinite(residualNorm) || !std::isfinite(scale)) {
    return std::numeric_limits<Real>::infinity();
  }
  return scale > DBL_EPSILON ? residualNorm / scale : residualNorm;
}

Real koziaraError(Real numerator, Real denominator) {
  return denominator > 0.0 ? numerator / denominator : numerator;
}

Real LocalErrorEvaluator::naturalMap(const VecX& r, const VecX& u) const {
  return naturalMapError(naturalMapAbsolute(r, u), normQ_, r.norm(), u.norm());
}

Real LocalErrorEvaluator::relaxedAbsolute(const VecX& r, const VecX& u) const {
  const std::size_t n = problem_->contactCount();
  Real s = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Index k = 3 * static_cast<Eigen::Index>(i);
    s += relaxedResidual(r.segment<3>(k), u.segment<3>(k), problem_->mu[k / 3]).squaredNorm();
  }
  return std::sqrt(s);
}

Real LocalErrorEvaluator::relaxed(const VecX& r, const VecX& u) const {
  return naturalMapError(relaxedAbsolute(r, u), normQ_, r.norm(), u.norm());
}

Real LocalErrorEvaluator::naturalMapOverQ(const VecX& r, const VecX& u) const {
  const Real e = naturalMapAbsolute(r, u);
  return normQ_ > DBL_EPSILON ? e / normQ_ : e;
}

Real LocalErrorEvaluator::koziara(const VecX& r, const VecX& u) const {
  prepareKoziara();
  const std::size_t n = problem_->contactCount();
  Real s = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Index k = 3 * static_cast<Eigen::Index>(i);
    const Vec3 e = naturalMapResidual(r.segment<3>(k), u.segment<3>(k), problem_->mu[k / 3]);
    s += e.dot(blockInverse_[i] * e);
  }
  return koziaraError(s, koziaraDenominator_);
}

Real LocalErrorEvaluator::evaluate(LocalErrorMeasure m, const VecX& r, const VecX& u) const {
  switch (m) {
    case LocalErrorMeasure::NaturalMap:
      break;
    case LocalErrorMeasure::Koziara:
      return koziara(r, u);
    case LocalErrorMeasure::Relaxed:
      return relaxed(r, u);
  }
  return naturalMap(r, u);
}

}  // namespace grain
