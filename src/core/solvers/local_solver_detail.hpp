// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include <grain/core/solvers/block_sparse_matrix.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/prox.hpp>

/// Pieces shared by the local solvers (private to grain_core).
namespace grain::detail {

/// validate(LocalProblem) in two parts, with the same checks and messages: everything but the
/// finiteness of W (spaceDim, sizes, q, mu), then the scan of W for NaN or Inf entries.
/// `normQ` is |q| if known (a finite value saves the scan of q), else NaN.
void validateExceptW(const LocalProblem& p, Real normQ);
void validateW(const LocalProblem& p);
/// The checks of validateExceptW without the messages (inline, for small problems): true if it
/// would not throw (false may also mean an infinite |q| of finite entries: then call it).
inline bool passesExceptW(const LocalProblem& p, Real normQ) {
  const Eigen::Index n = p.mu.size();
  if (!((p.spaceDim == 2 || p.spaceDim == 3) && p.W.rows() == 3 * n && p.W.cols() == 3 * n &&
        p.q.size() == 3 * n && std::isfinite(normQ))) {
    return false;
  }
  bool muValid = true;  // isfinite(mu) && mu >= 0 for every contact
  for (Eigen::Index i = 0; i < n; ++i) {
    muValid = muValid & (p.mu[i] >= 0.0) & (p.mu[i] <= std::numeric_limits<Real>::max());
  }
  return muValid;
}

/// What every local solver works on: the problem, its block-row form and the error measures.
struct LocalContext {
  LocalContext(const LocalProblem& p, const LocalSolverSettings& s)
      : problem(p), settings(s), w(p.W), evaluator(p), n(p.contactCount()) {}

  const LocalProblem& problem;
  const LocalSolverSettings& settings;
  BlockSparseMatrix3 w;
  LocalErrorEvaluator evaluator;
  std::size_t n;

  Real error(const VecX& r, const VecX& u) const {
    return evaluator.evaluate(settings.errorMeasure, r, u);
  }
  /// u = W r + q with the block-row matrix.
  void velocity(const VecX& r, VecX& u) const {
    w.multiply(r, u);
    u += problem.q;
  }
};

/// The iterate with the smallest error seen so far, with its u.
struct BestIterate {
  VecX r;
  VecX u;
  Real error = std::numeric_limits<Real>::infinity();

  /// Keeps (r, u) if e is smaller than the best error (NaN is never kept).
  void offer(const VecX& rNew, const VecX& uNew, Real e) {
    if (e < error) {
      error = e;
      r = rNew;
      u = uNew;
    }
  }
};

/// Per-contact prox metric (r_N^-1, r_T^-1, r_T^-1) from the diagonal entries of the n diagonal
/// blocks of W (see local_solver.hpp), written to metric[0..n).
void proxMetricFromDiagonal(const Vec3* diag, std::size_t n, Real alpha, RStrategy strategy,
                            UcfSubMethod sub, Vec3* metric);

/// Per-contact prox metric (r_N^-1, r_T^-1, r_T^-1) from the diagonal blocks of W (see
/// local_solver.hpp).
std::vector<Vec3> proxMetric(const BlockSparseMatrix3& w, Real alpha, RStrategy strategy,
                             UcfSubMethod sub);

/// Prox update of one contact from its velocity u (see local_solver.hpp).
template <UcfSubMethod kSub>
inline Vec3 proxContact(const Vec3& r, const Vec3& u, const Vec3& rInv, Real mu) {
  if constexpr (kSub == UcfSubMethod::DeSaxce) {
    const Vec3 v = prox::deSaxceShift(u, mu);
    return prox::projectCone(
        Vec3(r.x() - rInv.x() * v.x(), r.y() - rInv.y() * v.y(), r.z() - rInv.z() * v.z()), mu);
  } else {
    return prox::alartCurnier(
        Vec3(r.x() - rInv.x() * u.x(), r.y() - rInv.y() * u.y(), r.z() - rInv.z() * u.z()), mu);
  }
}

/// Starting point: zero, or the guess projected onto the cones.
VecX initialIterate(const LocalContext& ctx, const VecX* guess);

/// SOR prox from r (see local_solver.hpp) for at most maxIter sweeps. Fills r, u, error,
/// iterations, converged, finite of `result` (not the time).
void runSor(const LocalContext& ctx, VecX r, std::uint32_t maxIter, LocalSolverResult& result);

/// APGD from x (see local_solver.hpp) for at most settings.maxIter steps; fills `result` like
/// runSor with the best iterate.
void runApgd(const LocalContext& ctx, VecX x, LocalSolverResult& result);

/// Koziara's projected quasi-Newton iteration from r; fills `result` like runSor (without the
/// fallback, which the caller runs).
void runPqn(const LocalContext& ctx, VecX r, LocalSolverResult& result);

/// Alart-Curnier semismooth Newton iteration from r with SOR rescues (local_nsn.hpp); fills
/// `result` like runPqn (iterations = Newton steps, fallbackIterations = rescue sweeps), without
/// the final SOR fallback.
void runNsn(const LocalContext& ctx, VecX r, LocalSolverResult& result);

/// Proximal-point iteration with Newton inner solves (local_nsn.hpp); fills `result` like runNsn.
void runNsnProx(const LocalContext& ctx, VecX r, LocalSolverResult& result);

/// Interior point method for the convex relaxation, then polishing (local_ipm.hpp); fills
/// `result` like runSor with the relaxed error.
void runIpm(const LocalContext& ctx, LocalSolverResult& result);

}  // namespace grain::detail
