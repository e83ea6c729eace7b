// SPDX-License-Identifier: MIT
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/contact_rows.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/exchange.hpp>

#include "local_apgd.hpp"
#include "local_pqn_iteration.hpp"
#include "matrix_free_ops.hpp"

namespace grain {

void MatrixFreeProblem::build(const BodyStorage& bodies, const ContactProblem& problem,
                              const InclusionSolverSettings& settings) {
  // Split bodies keep their whole mass: the products sum their copies' impulses.
  detail::setupSolverBodies(bodies, problem, bodies_, detail::SplitMass::Whole);
  detail::setupSolverContacts(bodies, problem, settings, bodies_, contacts_, rolling_);
  const std::size_t n = contacts_.size();
  q_.resize(static_cast<Eigen::Index>(3 * n));
  for (std::size_t i = 0; i < n; ++i) {
    // As assembleLocalProblem(): q_i = 0 for a contact without a simulated body.
    q_.segment<3>(static_cast<Eigen::Index>(3 * i)) =
        contacts_.kind[i] == detail::PairKind::Passive
            ? Vec3::Zero()
            : Vec3(detail::contactVelocity(contacts_, bodies_, i) + contacts_.b[i]);
  }
  setUpMeasures();
}

void MatrixFreeProblem::assign(detail::SolverBodies bodies, detail::SolverContacts contacts,
                               const VecX& q) {
  GRAIN_REQUIRE(q.size() == static_cast<Eigen::Index>(3 * contacts.size()),
                "q must have 3n = " + std::to_string(3 * contacts.size()) + " entries, got " +
                    std::to_string(q.size()));
  bodies_ = std::move(bodies);
  contacts_ = std::move(contacts);
  rolling_ = detail::SolverRolling{};
  q_ = q;
  setUpMeasures();
}

void MatrixFreeProblem::setUpMeasures() {
  const std::size_t n = contacts_.size();
  mu_.resize(static_cast<Eigen::Index>(n));
  blockInverse_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    mu_[static_cast<Eigen::Index>(i)] = contacts_.law[i].mu;
    blockInverse_[i] = blockInverse(diagonalBlock(i));
  }
  qSquaredNorm_ = q_.squaredNorm();
  koziaraDenominator_ = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 qi = q_.segment<3>(static_cast<Eigen::Index>(3 * i));
    koziaraDenominator_ += qi.dot(blockInverse_[i] * qi);
  }
}

Mat3 MatrixFreeProblem::diagonalBlock(std::size_t i) const {
  return detail::diagonalBlock(contacts_, bodies_, i);
}

void MatrixFreeProblem::applyPercussions(BodyStorage& bodies, const VecX& r,
                                         SplitBodyExchange* split) {
  DelassusOperator& op = delassus();
  op.scatter(r);
  if (split != nullptr) {
    split->sum(op.impulse(), op.angularImpulse());
  }
  op.applyInverseMass();
  const std::span<const Vec3> dv = op.impulse();
  const std::span<const Vec3> dw = op.angularImpulse();
  auto& v = bodies.velocities();
  auto& w = bodies.omegasBody();
  for (std::size_t k = 0; k < bodies_.size(); ++k) {
    const std::size_t i = bodies_.storageIndex[k];
    v[i] += dv[k];
    w[i] += bodies.orientations()[i].toRotationMatrix().transpose() * dw[k];
  }
}

Real MatrixFreeProblem::error(LocalErrorMeasure m, const VecX& r, const VecX& u, Reducer* reducer,
                              Real* alsoSummed) const {
  // Residual^2, |r|^2, |u|^2, |q|^2 (natural map, relaxed); e.W^-1 e, q.W^-1 q (Koziara); then
  // the caller's alsoSummed.
  std::array<Real, 5> s{};
  const std::size_t n = contactCount();
  const Real* mu = mu_.data();
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    const Vec3 ri = r.segment<3>(k);
    const Vec3 ui = u.segment<3>(k);
    const Vec3 e = m == LocalErrorMeasure::Relaxed ? relaxedResidual(ri, ui, mu[i])
                                                   : naturalMapResidual(ri, ui, mu[i]);
    if (m == LocalErrorMeasure::Koziara) {
      s[0] += e.dot(blockInverse_[i] * e);
    } else {
      s[0] += e.squaredNorm();
      s[1] += ri.squaredNorm();
      s[2] += ui.squaredNorm();
    }
  }
  if (m == LocalErrorMeasure::Koziara) {
    s[1] = koziaraDenominator_;
  } else {
    s[3] = qSquaredNorm_;
  }
  if (alsoSummed != nullptr) {
    s[4] = *alsoSummed;
  }
  if (reducer != nullptr) {
    reducer->sum(std::span<Real>(s.data(), alsoSummed != nullptr ? 5 : 4));
  }
  if (alsoSummed != nullptr) {
    *alsoSummed = s[4];
  }
  if (m == LocalErrorMeasure::Koziara) {
    const Real err = koziaraError(s[0], s[1]);
    return std::isfinite(err) ? err : std::numeric_limits<Real>::infinity();
  }
  return naturalMapError(std::sqrt(s[0]), std::sqrt(s[3]), std::sqrt(s[1]), std::sqrt(s[2]));
}

namespace {

using detail::MatrixFreeOps;

/// The start of solveApgd() and solvePqn(): fills `x` with the initial iterate (0, or the guess
/// projected onto the cones) and returns true if the problem is solved without iterating (then
/// `result` holds r = x = 0, u = q, error 0, converged), as solve() does: no guess and every
/// q_N >= 0 on every process, or no contact in a serial solve.
bool startMatrixFree(const MatrixFreeProblem& problem, const LocalSolverSettings& settings,
                     const VecX* initialGuess, LocalSolverResult& result, Reducer* reducer,
                     VecX& x) {
  const std::size_t n = problem.contactCount();
  const auto m = static_cast<Eigen::Index>(3 * n);
  x = VecX::Zero(m);
  if (initialGuess != nullptr) {
    GRAIN_REQUIRE(initialGuess->size() == m, "initial guess must have 3n = " + std::to_string(m) +
                                                 " entries, got " +
                                                 std::to_string(initialGuess->size()));
    for (std::size_t i = 0; i < n; ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      x.segment<3>(k) = prox::projectCone(initialGuess->segment<3>(k),
                                          problem.mu()[static_cast<Eigen::Index>(i)]);
    }
  }
  // As solve(): without a guess and with every q_N >= 0, r = 0 and u = q solve the problem
  // exactly (not for the relaxed measure, whose problem needs q_i in the dual cone).
  bool separating = initialGuess == nullptr && settings.errorMeasure != LocalErrorMeasure::Relaxed;
  for (std::size_t i = 0; i < n && separating; ++i) {
    separating = problem.q()[static_cast<Eigen::Index>(3 * i)] >= 0.0;
  }
  if (reducer != nullptr && initialGuess == nullptr &&
      settings.errorMeasure != LocalErrorMeasure::Relaxed) {
    separating = reducer->allTrue(separating);
    ++result.reductions;
  }
  if (separating || (n == 0 && (reducer == nullptr || !reducer->distributed()))) {
    result.r = x;
    result.u = problem.q();
    result.error = 0.0;
    result.converged = true;
    return true;
  }
  return false;
}

}  // namespace

void solveApgd(MatrixFreeProblem& problem, const LocalSolverSettings& settings,
               const VecX* initialGuess, LocalSolverResult& result, Reducer* reducer,
               SplitBodyExchange* split) {
  const auto start = std::chrono::steady_clock::now();
  validate(settings);
  result.resetKeepingStorage();
  VecX x;
  if (!startMatrixFree(problem, settings, initialGuess, result, reducer, x)) {
    MatrixFreeOps ops{problem, settings.errorMeasure,    reducer,
                      split,   &result.delassusProducts, &result.reductions};
    detail::apgdIterate(ops, settings, std::move(x), result);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void checkMatrixFreePqn(const LocalSolverSettings& settings) {
  GRAIN_REQUIRE(!settings.pqnDirectSolve,
                "pqnDirectSolve needs the assembled Delassus matrix: matrix-free PQN solves the "
                "Newton systems by GMRES only");
  GRAIN_REQUIRE(!(settings.pqnWarmStartTolerance > settings.tolerance),
                "pqnWarmStartTolerance (SOR on the assembled matrix before the first Newton "
                "step) is not available with matrix-free PQN");
}

void solvePqn(MatrixFreeProblem& problem, const LocalSolverSettings& settings,
              const VecX* initialGuess, LocalSolverResult& result, Reducer* reducer,
              SplitBodyExchange* split) {
  const auto start = std::chrono::steady_clock::now();
  validate(settings);
  checkMatrixFreePqn(settings);
  result.resetKeepingStorage();
  VecX x;
  if (!startMatrixFree(problem, settings, initialGuess, result, reducer, x)) {
    MatrixFreeOps ops{problem, settings.errorMeasure,    reducer,
                      split,   &result.delassusProducts, &result.reductions};
    detail::pqnIterate(ops, settings, std::move(x), result,
                       [](detail::PqnNewtonOperator<MatrixFreeOps>&, const VecX& c) -> VecX {
                         // Refused by checkMatrixFreePqn().
                         return VecX::Zero(c.size());
                       });
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace grain
