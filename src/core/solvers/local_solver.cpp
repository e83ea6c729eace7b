// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cctype>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_solver.hpp>

#include "local_apgd.hpp"
#include "local_solver_detail.hpp"

namespace grain {

void validate(const LocalSolverSettings& s) {
  settings::checkBounds(s);
}

std::string_view toString(LocalSolverMethod m) {
  switch (m) {
    case LocalSolverMethod::SorProx:
      return "sor";
    case LocalSolverMethod::JorProx:
      return "jor";
    case LocalSolverMethod::Apgd:
      return "apgd";
    case LocalSolverMethod::Pqn:
      return "pqn";
    case LocalSolverMethod::Ipm:
      return "ipm";
    case LocalSolverMethod::Nsn:
      return "nsn";
    case LocalSolverMethod::NsnProx:
      return "prox";
  }
  return "?";
}

std::optional<LocalSolverMethod> localSolverMethodFromString(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "sor" || s == "nsgs" || s == "sorprox") {
    return LocalSolverMethod::SorProx;
  }
  if (s == "jor" || s == "jorprox") {
    return LocalSolverMethod::JorProx;
  }
  if (s == "apgd") {
    return LocalSolverMethod::Apgd;
  }
  if (s == "pqn") {
    return LocalSolverMethod::Pqn;
  }
  if (s == "ipm") {
    return LocalSolverMethod::Ipm;
  }
  if (s == "nsn") {
    return LocalSolverMethod::Nsn;
  }
  if (s == "prox" || s == "nsn-prox" || s == "nsnprox") {
    return LocalSolverMethod::NsnProx;
  }
  return std::nullopt;
}

namespace detail {

void proxMetricFromDiagonal(const Vec3* diag, std::size_t n, Real alpha, RStrategy strategy,
                            UcfSubMethod sub, Vec3* metric) {
  // Fallback for degenerate blocks: the mean positive diagonal entry.
  Real sum = 0.0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      if (diag[i][k] > 0.0) {
        sum += diag[i][k];
        ++count;
      }
    }
  }
  const Real fallback = count > 0 ? sum / static_cast<Real>(count) : 1.0;
  auto positive = [fallback](Real x) { return x > 0.0 ? x : fallback; };
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3& g = diag[i];
    const Real gN = positive(g[0]);
    const Real gT = positive(std::max(g[1], g[2]));
    if (strategy == RStrategy::Sum) {
      metric[i].setConstant(alpha / positive(g.sum()));
    } else if (sub == UcfSubMethod::DeSaxce) {
      metric[i].setConstant(alpha / std::max(gN, gT));
    } else {
      metric[i] = Vec3(alpha / gN, alpha / gT, alpha / gT);
    }
  }
}

std::vector<Vec3> proxMetric(const BlockSparseMatrix3& w, Real alpha, RStrategy strategy,
                             UcfSubMethod sub) {
  const std::size_t n = w.blockRows();
  std::vector<Vec3> diag(n);
  for (std::size_t i = 0; i < n; ++i) {
    diag[i] = w.diagonalBlock(i).diagonal();
  }
  std::vector<Vec3> metric(n);
  proxMetricFromDiagonal(diag.data(), n, alpha, strategy, sub, metric.data());
  return metric;
}

VecX initialIterate(const LocalContext& ctx, const VecX* guess) {
  const auto m = static_cast<Eigen::Index>(3 * ctx.n);
  VecX r = VecX::Zero(m);
  if (guess != nullptr) {
    GRAIN_REQUIRE(guess->size() == m, "initial guess must have 3n = " + std::to_string(m) +
                                          " entries, got " + std::to_string(guess->size()));
    for (std::size_t i = 0; i < ctx.n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      r.segment<3>(k) = prox::projectCone(guess->segment<3>(k), ctx.problem.mu[k / 3]);
    }
  }
  return r;
}

namespace {

/// One SOR sweep. Returns ||r_new - r_old||^2 and accumulates ||r_new||^2 in normR2.
template <UcfSubMethod kSub>
Real sorSweep(const LocalContext& ctx, const std::vector<Vec3>& metric, VecX& r, Real& normR2) {
  const Real* q = ctx.problem.q.data();
  const Real* mu = ctx.problem.mu.data();
  Real* rp = r.data();
  Real diff2 = 0.0;
  Real norm2 = 0.0;
  for (std::size_t i = 0; i < ctx.n; ++i) {
    Real* ri = rp + 3 * i;
    const Vec3 u = ctx.w.rowProduct(i, rp) + Eigen::Map<const Vec3>(q + 3 * i);
    const Vec3 old = Eigen::Map<const Vec3>(ri);
    const Vec3 now = proxContact<kSub>(old, u, metric[i], mu[i]);
    Eigen::Map<Vec3> target(ri);
    target = now;
    diff2 += (now - old).squaredNorm();
    norm2 += now.squaredNorm();
  }
  normR2 = norm2;
  return diff2;
}

template <UcfSubMethod kSub>
void jorUpdate(const LocalContext& ctx, const std::vector<Vec3>& metric, const VecX& u, VecX& r) {
  const Real* mu = ctx.problem.mu.data();
  for (std::size_t i = 0; i < ctx.n; ++i) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    r.segment<3>(k) = proxContact<kSub>(r.segment<3>(k), u.segment<3>(k), metric[i], mu[i]);
  }
}

void finish(const LocalContext& ctx, VecX& r, VecX& u, Real e, LocalSolverResult& result) {
  result.r.swap(r);
  result.u.swap(u);
  result.error = e;
  result.converged = e <= ctx.settings.tolerance;
}

void runJor(const LocalContext& ctx, VecX r, LocalSolverResult& result) {
  const LocalSolverSettings& s = ctx.settings;
  std::vector<Vec3> metric = proxMetric(ctx.w, 1.0, s.rStrategy, s.subMethod);
  Real alpha = s.alphaJor;
  if (s.jorAutoAlpha) {
    VecX s3(static_cast<Eigen::Index>(3 * ctx.n));
    for (std::size_t i = 0; i < ctx.n; ++i) {
      s3.segment<3>(static_cast<Eigen::Index>(3 * i)) = metric[i].cwiseSqrt();
    }
    AssembledOps ops{ctx};
    alpha = std::min(alpha, 1.0 / (1.05 * apgdLargestEigenvalue(ops, s3, s.powerIterations)));
  }
  for (Vec3& m : metric) {
    m *= alpha;
  }
  VecX u;
  ctx.velocity(r, u);
  Real e = ctx.error(r, u);
  for (std::uint32_t it = 0; it < s.maxIter && !(e <= s.tolerance); ++it) {
    if (s.subMethod == UcfSubMethod::DeSaxce) {
      jorUpdate<UcfSubMethod::DeSaxce>(ctx, metric, u, r);
    } else {
      jorUpdate<UcfSubMethod::AlartCurnier>(ctx, metric, u, r);
    }
    result.iterations = it + 1;
    ctx.velocity(r, u);
    e = ctx.error(r, u);
    if (!std::isfinite(e)) {
      result.finite = false;
      break;
    }
  }
  finish(ctx, r, u, e, result);
}

}  // namespace

void runApgd(const LocalContext& ctx, VecX x, LocalSolverResult& result) {
  AssembledOps ops{ctx};
  apgdIterate(ops, ctx.settings, std::move(x), result);
}

void runSor(const LocalContext& ctx, VecX r, std::uint32_t maxIter, LocalSolverResult& result) {
  const LocalSolverSettings& s = ctx.settings;
  const std::vector<Vec3> metric = proxMetric(ctx.w, s.alphaSor, s.rStrategy, s.subMethod);
  VecX u;
  if (r.isZero(0.0)) {
    u = ctx.problem.q;  // W 0 + q, without the product
  } else {
    ctx.velocity(r, u);
  }
  Real e = ctx.error(r, u);
  Real lightThreshold = s.tolerance;
  std::uint32_t nextScheduled = 1;  // Adaptive: also test at sweeps 1, 2, ..., k + max(1, k / 8)
  std::uint32_t done = 0;
  for (std::uint32_t it = 0; it < maxIter && !(e <= s.tolerance); ++it) {
    Real normR2 = 0.0;
    const Real diff2 = s.subMethod == UcfSubMethod::DeSaxce
                           ? sorSweep<UcfSubMethod::DeSaxce>(ctx, metric, r, normR2)
                           : sorSweep<UcfSubMethod::AlartCurnier>(ctx, metric, r, normR2);
    done = it + 1;
    if (!std::isfinite(diff2) || !std::isfinite(normR2)) {
      result.finite = false;
      break;
    }
    bool test = done == maxIter;
    if (s.errorCheck == ErrorCheck::Every) {
      test = test || done % s.errorCheckPeriod == 0;
    } else {
      const Real light = normR2 > 0.0 ? std::sqrt(diff2 / normR2) : std::sqrt(diff2);
      test = test || light <= lightThreshold || done >= nextScheduled;
      if (test) {
        nextScheduled = done + std::max<std::uint32_t>(1, done / 8);
      }
    }
    if (!test) {
      continue;
    }
    ctx.velocity(r, u);
    e = ctx.error(r, u);
    if (s.errorCheck == ErrorCheck::Adaptive && e > s.tolerance && e > 0.0) {
      lightThreshold *= s.tolerance / e;
    }
  }
  result.iterations += done;
  if (!result.finite) {
    e = std::numeric_limits<Real>::quiet_NaN();
  }
  finish(ctx, r, u, e, result);
}

}  // namespace detail

namespace {

/// Largest problem (contacts) of the small SOR path.
constexpr std::size_t kSmallContacts = 64;
using SmallVec = Eigen::Matrix<Real, Eigen::Dynamic, 1, 0, 3 * kSmallContacts, 1>;

/// u = W r + q from the columns of W.
template <class VecR, class VecU>
void smallVelocity(const LocalProblem& p, const VecR& r, VecU& u) {
  u = p.q;
  for (Eigen::Index c = 0; c < p.W.outerSize(); ++c) {
    const Real rc = r[c];
    if (rc != 0.0) {
      for (SparseMat::InnerIterator it(p.W, c); it; ++it) {
        u[it.row()] += it.value() * rc;
      }
    }
  }
}

/// Normalised natural-map error (LocalErrorMeasure::NaturalMap) of (r, u). `planar`: every
/// contact has r_T2 = u_T2 = 0 (an embedded planar problem), so the residual has no T2 part and
/// the norms of the tangential parts are absolute values.
[[gnu::always_inline]] inline Real smallError(const LocalProblem& p, Real normQ, Real normR,
                                              Real normU, const VecX& r, const VecX& u,
                                              bool planar) {
  const auto n = static_cast<Eigen::Index>(p.contactCount());
  Real e2 = 0.0;
  if (planar) {
    const Real* rp = r.data();
    const Real* up = u.data();
    const Real* mup = p.mu.data();
    for (Eigen::Index i = 0; i < n; ++i, rp += 3, up += 3) {
      const Real mu = mup[i];
      const Real rN = rp[0];
      const Real rT = rp[1];
      const Real uT = up[1];
      // x = r - (u_N + mu |u_T|, u_T), projected onto the 2-D cone |x_T| <= mu x_N.
      const Real xN = rN - (up[0] + mu * std::abs(uT));
      const Real xT = rT - uT;
      Real pN = xN;
      Real pT = xT;
      if (!(std::abs(xT) <= mu * xN)) {
        if (mu * std::abs(xT) + xN <= 0.0) {
          pN = 0.0;
          pT = 0.0;
        } else {
          pN = (xN + mu * std::abs(xT)) / (1.0 + mu * mu);
          pT = std::copysign(mu * pN, xT);
        }
      }
      e2 += (rN - pN) * (rN - pN) + (rT - pT) * (rT - pT);
    }
  } else {
    for (Eigen::Index i = 0; i < n; ++i) {
      e2 += naturalMapResidual(r.segment<3>(3 * i), u.segment<3>(3 * i), p.mu[i]).squaredNorm();
    }
  }
  const Real e = std::sqrt(e2);
  const Real scale = std::max(std::max(normQ, normR), normU);  // = std::max({normQ, normR, normU})
  if (!std::isfinite(e) || !std::isfinite(scale)) {
    return std::numeric_limits<Real>::infinity();
  }
  return scale > DBL_EPSILON ? e / scale : e;
}

Real smallError(const LocalProblem& p, Real normQ, const VecX& r, const VecX& u, bool planar) {
  return smallError(p, normQ, r.norm(), u.norm(), r, u, planar);
}

/// Prox update of one contact of an embedded planar problem (r_T2 = u_T2 = 0): the same result
/// as detail::proxContact with the T2 components zero, without square roots.
template <UcfSubMethod kSub>
inline void planarProx(Real& rN, Real& rT, Real uN, Real uT, const Vec3& rInv, Real mu) {
  if constexpr (kSub == UcfSubMethod::DeSaxce) {
    const Real xN = rN - rInv.x() * (uN + mu * std::abs(uT));
    const Real xT = rT - rInv.y() * uT;
    if (std::abs(xT) <= mu * xN) {
      rN = xN;
      rT = xT;
    } else if (mu * std::abs(xT) + xN <= 0.0) {
      rN = 0.0;
      rT = 0.0;
    } else {
      rN = (xN + mu * std::abs(xT)) / (1.0 + mu * mu);
      rT = std::copysign(mu * rN, xT);
    }
  } else {
    rN = std::max(rN - rInv.x() * uN, Real(0));
    const Real radius = mu * rN;
    rT = std::clamp(rT - rInv.y() * uT, -radius, radius);
  }
}

/// SOR prox for problems of at most kSmallContacts contacts without setup allocation (r and u
/// are result.r and result.u, allocated only if their size differs): the
/// same sweeps as runSor (contacts in order, newest percussions), with u = W r + q kept current
/// by column updates (W_:j (r_j^new - r_j^old) after each contact), so that the error test
/// after every sweep costs no product. u is recomputed from r every 64 sweeps and before the
/// iteration stops (unless it is bitwise exact already: one sweep from r = 0), so the returned
/// error is that of (r, W r + q).
template <UcfSubMethod kSub>
void runSorSmall(const LocalProblem& p, const LocalSolverSettings& s, const VecX* guess, Real normQ,
                 LocalSolverResult& result) {
  const std::size_t n = p.contactCount();
  const auto m = static_cast<Eigen::Index>(3 * n);
  std::array<Vec3, kSmallContacts> diag;  // diagonal entries of the blocks W_ii
  // One scan of W: the diagonal entries, the planar structure and the finiteness of W (the last
  // check of validate(LocalProblem), which solve() leaves to this scan).
  // Embedded planar problem (see LocalProblem): the T2 rows and columns of W hold only the
  // diagonal entry, q_T2 = 0 and the start has r_T2 = 0; then r_T2 and u_T2 stay 0.
  bool planar = p.spaceDim == 2 && guess == nullptr;
  Real sumW = 0.0;  // sum of the entries of W: finite if they all are (else see below)
  // Columns from the compressed (or uncompressed) storage of W directly.
  const auto* outer = p.W.outerIndexPtr();
  const auto* innerNonZeros = p.W.innerNonZeroPtr();  // null if compressed
  const auto* rows = p.W.innerIndexPtr();
  const Real* values = p.W.valuePtr();
  for (std::size_t i = 0; i < n; ++i) {
    std::array<Real, 3> d = {0.0, 0.0, 0.0};
    // Column 3i + a (a = 0, 1, 2 as a compile-time constant).
    auto column = [&](auto aConst) {
      constexpr int a = decltype(aConst)::value;
      const auto c = static_cast<Eigen::Index>(3 * i) + a;
      const Eigen::Index begin = outer[c];
      const Eigen::Index end = innerNonZeros == nullptr ? outer[c + 1] : begin + innerNonZeros[c];
      for (Eigen::Index k = begin; k < end; ++k) {
        const Real v = values[k];
        const Eigen::Index row = rows[k];
        sumW += v;
        if (row == c) {
          d[a] += v;
        } else if (planar && (a == 2 || static_cast<std::uint32_t>(row) % 3u == 2u)) {
          planar = false;
        }
      }
    };
    column(std::integral_constant<int, 0>());
    column(std::integral_constant<int, 1>());
    column(std::integral_constant<int, 2>());
    diag[i] = Vec3(d[0], d[1], d[2]);
    if (planar && p.q[static_cast<Eigen::Index>(3 * i + 2)] != 0.0) {
      planar = false;
    }
  }
  // A NaN or Inf entry makes the sum NaN or Inf; an infinite sum of finite entries (overflow)
  // is told apart by the scan of validateW.
  if (!std::isfinite(sumW)) {
    detail::validateW(p);
  }
  validate(s);
  std::array<Vec3, kSmallContacts> metric;
  // diag[0, n) is set above; GCC cannot see it once the call is inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
  // detail::proxMetricFromDiagonal without its fallback for non-positive entries, which the R
  // strategy max uses only if some g_N or max(g_T1, g_T2) is <= 0: then the full version.
  bool positive = s.rStrategy == RStrategy::Max;
  if (positive) {
    const Real alpha = s.alphaSor;
    for (std::size_t i = 0; i < n; ++i) {
      const Real gN = diag[i][0];
      const Real gT = std::max(diag[i][1], diag[i][2]);
      positive = positive & (gN > 0.0) & (gT > 0.0);
      if constexpr (kSub == UcfSubMethod::DeSaxce) {
        metric[i].setConstant(alpha / std::max(gN, gT));
      } else {
        metric[i] = Vec3(alpha / gN, alpha / gT, alpha / gT);
      }
    }
  }
  if (!positive) {
    detail::proxMetricFromDiagonal(diag.data(), n, s.alphaSor, s.rStrategy, kSub, metric.data());
  }
#pragma GCC diagnostic pop
  // r and u live in the result (their storage is reused if the size matches).
  VecX& r = result.r;
  VecX& u = result.u;
  r.setZero(m);
  if (guess != nullptr) {
    GRAIN_REQUIRE(guess->size() == m, "initial guess must have 3n = " + std::to_string(m) +
                                          " entries, got " + std::to_string(guess->size()));
    for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(n); ++i) {
      r.segment<3>(3 * i) = prox::projectCone(guess->segment<3>(3 * i), p.mu[i]);
    }
  }
  u.resize(m);
  Real e = 0.0;
  if (guess != nullptr) {
    smallVelocity(p, r, u);
    e = smallError(p, normQ, r, u, planar);
  } else {
    // r = 0: u = W r + q is q itself (smallVelocity adds no column), |r| = 0 and |u| = |q|.
    u = p.q;
    e = smallError(p, normQ, 0.0, normQ, r, u, planar);
  }
  std::uint32_t done = 0;
  while (done < s.maxIter && !(e <= s.tolerance)) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      // u += W_:c delta for column c = k + a.
      auto addColumn = [&](Eigen::Index c, Real delta) {
        const Eigen::Index end =
            innerNonZeros == nullptr ? outer[c + 1] : outer[c] + innerNonZeros[c];
        for (Eigen::Index j = outer[c]; j < end; ++j) {
          u[rows[j]] += values[j] * delta;
        }
      };
      if (planar) {
        // Scalars only (r_T2 stays 0, its delta is 0).
        const Real oldN = r[k];
        const Real oldT = r[k + 1];
        Real rN = oldN;
        Real rT = oldT;
        planarProx<kSub>(rN, rT, u[k], u[k + 1], metric[i], p.mu[i]);
        r[k] = rN;
        r[k + 1] = rT;
        const Real dN = rN - oldN;
        const Real dT = rT - oldT;
        if (dN != 0.0) {
          addColumn(k, dN);
        }
        if (dT != 0.0) {
          addColumn(k + 1, dT);
        }
      } else {
        const Vec3 old = r.segment<3>(k);
        const Vec3 now = detail::proxContact<kSub>(old, u.segment<3>(k), metric[i], p.mu[i]);
        const Vec3 delta = now - old;
        r.segment<3>(k) = now;
        for (int a = 0; a < 3; ++a) {
          if (delta[a] != 0.0) {
            addColumn(k + a, delta[a]);
          }
        }
      }
    }
    ++done;
    // |r|^2 is finite unless some entry is NaN or infinite (or |r| overflows: then scan r).
    const Real normR2 = r.squaredNorm();
    if (!std::isfinite(normR2) && !r.allFinite()) {
      result.finite = false;
      break;
    }
    if (done % 64 == 0) {
      smallVelocity(p, r, u);
    }
    e = smallError(p, normQ, std::sqrt(normR2), u.norm(), r, u, planar);
    // After the first sweep from r = 0, u holds q plus W_:c r_c added column by column in
    // increasing c (each column once, its delta being r_c - 0 = r_c, zero deltas skipped):
    // the same operations in the same order as smallVelocity, so u is bitwise exact already.
    const bool exactAlready = done == 1 && guess == nullptr;
    if ((e <= s.tolerance || done == s.maxIter) && !exactAlready) {
      // Exact u for the final test (often bitwise the updated one after few sweeps).
      SmallVec exact(m);
      smallVelocity(p, r, exact);
      if (exact != u) {
        u = exact;
        e = smallError(p, normQ, r, u, planar);
      }
    }
  }
  result.iterations = done;
  result.error = result.finite ? e : std::numeric_limits<Real>::quiet_NaN();
  result.converged = e <= s.tolerance;
}

}  // namespace

namespace {

/// SorProx from the best iterate of a Newton-type method that did not reach the tolerance (or
/// from r0 if it produced nothing finite); keeps the better of the two.
void fallbackToSor(const detail::LocalContext& ctx, const VecX& r0, LocalSolverResult& result) {
  LocalSolverResult sor;
  const VecX from = result.finite && result.r.allFinite() ? result.r : r0;
  detail::runSor(ctx, from, ctx.settings.maxIter, sor);
  result.fallbackIterations += sor.iterations;
  result.iterations += sor.iterations;
  if (sor.error < result.error || !std::isfinite(result.error)) {
    result.r = std::move(sor.r);
    result.u = std::move(sor.u);
    result.error = sor.error;
  }
  result.converged = sor.converged || result.error <= ctx.settings.tolerance;
  result.finite = sor.finite;
}

/// True if every normal component of q is >= 0: then r = 0 solves the problem exactly.
bool separating(const LocalProblem& problem) {
  const Eigen::Index n = problem.mu.size();
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!(problem.q[3 * i] >= 0.0)) {
      return false;
    }
  }
  return true;
}

}  // namespace

LocalSolverResult solve(const LocalProblem& problem, const LocalSolverSettings& settings,
                        const VecX* initialGuess) {
  LocalSolverResult result;
  solve(problem, settings, initialGuess, result);
  return result;
}

void solve(const LocalProblem& problem, const LocalSolverSettings& settings,
           const VecX* initialGuess, LocalSolverResult& result) {
  const auto start = std::chrono::steady_clock::now();
  // validate(problem) then validate(settings), in that order; the small SOR path checks W for
  // NaN and Inf in its own scan of W (same message).
  // |q| (used by the small SOR path) also tells validateExceptW that q is finite.
  const Real normQ = problem.q.norm();
  if (!detail::passesExceptW(problem, normQ)) {
    detail::validateExceptW(problem, normQ);
  }
  result.resetKeepingStorage();
  // A guess that is the result's own r or u (a warm start from the previous solve) is read
  // after result.r and result.u are overwritten: copy it first.
  VecX guessCopy;
  if (initialGuess != nullptr && (initialGuess == &result.r || initialGuess == &result.u)) {
    guessCopy = *initialGuess;
    initialGuess = &guessCopy;
  }
  if (settings.method == LocalSolverMethod::SorProx && problem.contactCount() <= kSmallContacts &&
      settings.errorMeasure == LocalErrorMeasure::NaturalMap &&
      settings.errorCheck == ErrorCheck::Adaptive && problem.contactCount() > 0 &&
      !(initialGuess == nullptr && separating(problem))) {
    if (settings.subMethod == UcfSubMethod::DeSaxce) {
      runSorSmall<UcfSubMethod::DeSaxce>(problem, settings, initialGuess, normQ, result);
    } else {
      runSorSmall<UcfSubMethod::AlartCurnier>(problem, settings, initialGuess, normQ, result);
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return;
  }
  detail::validateW(problem);
  validate(settings);
  if (initialGuess == nullptr && settings.method != LocalSolverMethod::Ipm &&
      settings.errorMeasure != LocalErrorMeasure::Relaxed && separating(problem)) {
    // r = 0, u = q: u_i is in the dual cone and r_i = 0, so the natural map is exactly 0 (and so
    // is Koziara's measure). No setup needed.
    result.r.setZero(problem.q.size());
    result.u = problem.q;
    result.error = 0.0;
    result.converged = true;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return;
  }
  // The general path builds r and u itself.
  result.r = VecX();
  result.u = VecX();
  const detail::LocalContext ctx(problem, settings);
  VecX r0 = detail::initialIterate(ctx, initialGuess);
  if (ctx.n > 0) {
    switch (settings.method) {
      case LocalSolverMethod::SorProx:
        detail::runSor(ctx, std::move(r0), settings.maxIter, result);
        break;
      case LocalSolverMethod::JorProx:
        detail::runJor(ctx, std::move(r0), result);
        break;
      case LocalSolverMethod::Apgd:
        detail::runApgd(ctx, std::move(r0), result);
        break;
      case LocalSolverMethod::Ipm:
        detail::runIpm(ctx, result);
        break;
      case LocalSolverMethod::Pqn: {
        if (settings.pqnWarmStartTolerance > settings.tolerance) {
          // SOR until the warm-start tolerance, then PQN from there.
          LocalSolverSettings warm = settings;
          warm.tolerance = settings.pqnWarmStartTolerance;
          const detail::LocalContext warmCtx(problem, warm);
          LocalSolverResult pre;
          detail::runSor(warmCtx, r0, settings.maxIter, pre);
          if (pre.finite) {
            r0 = pre.r;
          }
          result.warmStartIterations = pre.iterations;
        }
        detail::runPqn(ctx, r0, result);
        result.iterations += result.warmStartIterations;
        if (!result.converged) {
          // Fallback (Koziara's Algorithm 1, step 3): SOR from the best PQN iterate, or from the
          // start if PQN produced nothing finite.
          fallbackToSor(ctx, r0, result);
        }
        break;
      }
      case LocalSolverMethod::Nsn:
      case LocalSolverMethod::NsnProx:
        if (settings.method == LocalSolverMethod::Nsn) {
          detail::runNsn(ctx, r0, result);
        } else {
          detail::runNsnProx(ctx, r0, result);
        }
        if (!result.converged) {
          fallbackToSor(ctx, r0, result);
        }
        break;
    }
  } else {
    result.r = r0;
    result.u = problem.q;
    result.error = 0.0;
    result.converged = true;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace grain
