// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

#include <grain/core/common/error.hpp>
#include <grain/core/math/quaternion.hpp>
#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/core/timestepping/invariants.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/core/timestepping/stage_kernels.hpp>

namespace grain {

namespace {
using Clock = std::chrono::steady_clock;

/// Adds the wall time since `start` to the stage's slot and restarts the clock.
class StageTimer {
 public:
  explicit StageTimer(StepStats& stats) : stats_(stats), start_(Clock::now()) {}
  void lap(Stage s) {
    const auto now = Clock::now();
    stats_.stageSeconds[static_cast<std::size_t>(s)] +=
        std::chrono::duration<double>(now - start_).count();
    start_ = now;
  }

 private:
  StepStats& stats_;
  Clock::time_point start_;
};

/// Bodies per thread below which a per-body stage stays on one thread (a body costs tens of
/// nanoseconds, starting the threads microseconds).
constexpr std::size_t kMinBodiesPerThread = 2048;

/// Runs `kernel` on [0, n): as one range on one thread, else on `threads` contiguous ranges in
/// parallel. The per-body stages give the same bits on any range (stage_kernels.hpp).
template <class Kernel>
void overBodies(std::size_t n, std::uint32_t threads, const Kernel& kernel) {
  if (threads <= 1 || n < kMinBodiesPerThread * threads) {
    kernel(stage::BodyRange{0, n});
    return;
  }
  const auto t = static_cast<std::ptrdiff_t>(threads);
  const auto count = static_cast<std::ptrdiff_t>(n);
  const int teamSize = static_cast<int>(threads);
#pragma omp parallel for num_threads(teamSize) schedule(static, 1)
  for (std::ptrdiff_t k = 0; k < t; ++k) {
    kernel(stage::BodyRange{static_cast<std::size_t>(count * k / t),
                            static_cast<std::size_t>(count * (k + 1) / t)});
  }
}
}  // namespace

bool stepInvariantsChecked() {
#ifdef GRAIN_CHECK_INVARIANTS
  return true;
#else
  return false;
#endif
}

void validate(const StepperSettings& s) {
  settings::checkBounds(s);
  validate(s.solver);
}

namespace {

/// The velocity SOR prox that matrix-free PQN falls back to (MoreauStepper): SorContact with the
/// scene's prox settings, started from the step's own warm start (zero without), stopping on the
/// PQN's measure. On the natural map its
/// tolerance is relTol / sqrt(3): distributed, each group of coupled processes stops on the error
/// of its own contacts, and residuals below relTol / sqrt(3) of max(|q_g|, |r_g|, |u_g|) in every
/// group g add up to at most relTol max(|q|, |r|, |u|) over the whole problem.
InclusionSolverSettings pqnFallbackSettings(const InclusionSolverSettings& s) {
  InclusionSolverSettings f = s;
  f.method = SolverMethod::SorContact;
  f.localMethod.reset();
  f.matrixFree = false;
  f.usePercussionCache = true;  // its start is handed over as a percussion cache
  if (localErrorMeasure(s.convergenceMethod) == LocalErrorMeasure::Koziara) {
    f.convergenceMethod = ConvergenceMethod::Koziara;
  } else {
    f.convergenceMethod = ConvergenceMethod::NaturalMap;
    f.relTol = s.relTol / std::sqrt(3.0);
  }
  return f;
}

}  // namespace

MoreauStepper::MoreauStepper(const StepperSettings& settings)
    : settings_(settings), solver_(settings.solver) {
  validate(settings_);
  contacts_.reserve(settings_.solver.reserveContacts);
  if (settings_.solver.matrixFree && settings_.solver.localMethod == LocalSolverMethod::Pqn) {
    pqnFallback_.emplace(pqnFallbackSettings(settings_.solver));
  }
}

bool MoreauStepper::fallBackToSor(BodyStorage& bodies, const ContactProblem& problem,
                                  const StepExchanges& exchanges, const LocalSolverSettings& local,
                                  const VecX* guess, SplitBodyExchange* split) {
  LocalSolverResult& result = localResult_;
  const ContactStorage& contacts = problem.contacts;
  const std::size_t nc = contacts.size();
  const bool distributed = exchanges.split != nullptr;
  Reducer* reducer = distributed ? exchanges.reducer : nullptr;
  localFallbacks_ = 1;
  // Start: the step's own warm start (zero without), the Gauss-Seidel solve that PQN stands in
  // for (Koziara's Algorithm 1, step 3), not PQN's best iterate: from that, the sweeps can stall
  // however small its error. On the 6000-sphere lattice pile, cold, the SOR sweeps from PQN's
  // best iterates (natural-map errors 0.14 and 5.8e-6 after 1000 Newton steps) stopped at 5000
  // with 3.8e-5 and 1.4e-6; from zero they reach 4.1e-7 in 826 (docs/solvers.md, "Fallback").
  // So a step that falls back costs pqnMaxIter Newton steps plus what the SOR alone would.
  fallbackStart_.resize(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    fallbackStart_[c] =
        guess != nullptr ? Vec3(guess->segment<3>(static_cast<Eigen::Index>(3 * c))) : Vec3::Zero();
  }
  if (!settings_.solver.usePercussionCache) {
    detail::makePercussionCacheKeys(bodies, contacts, localCacheKeys_, localCacheOrdinal_);
  }
  std::vector<detail::PercussionCacheEntry> cache;
  detail::makePercussionCache(bodies, contacts, localCacheKeys_, localCacheOrdinal_, fallbackStart_,
                              cache);
  pqnFallback_->setPercussionCache(std::move(cache));
  savedVelocity_ = bodies.velocities();
  savedOmega_ = bodies.omegasBody();
  // Every process falls back together (PQN's convergence is global); the velocity SOR with mass
  // splitting leaves u^E in the bodies, every copy of a split body with the same velocity.
  const SolverStats sor = pqnFallback_->solve(bodies, problem, exchanges.split);
  VecX& r = fallbackR_;
  r.resize(static_cast<Eigen::Index>(3 * nc));
  const std::vector<Vec3>& p = pqnFallback_->percussions();
  for (std::size_t c = 0; c < nc; ++c) {
    r.segment<3>(static_cast<Eigen::Index>(3 * c)) = p[c];
  }
  // Its accuracy on the whole problem, as PQN measures it: u = W r + q on the matrix-free
  // operator (the split bodies' slots told again: the fallback numbered its own bodies).
  if (distributed) {
    exchanges.split->beginSolve(bodies, matrixFree_.bodyStorageIndex());
  }
  VecX& u = fallbackU_;
  if (split == nullptr) {
    matrixFree_.delassus().multiply(r, u);
  } else {
    matrixFree_.delassus().multiply(r, u, [split](std::span<Vec3> linear, std::span<Vec3> angular) {
      split->sum(linear, angular);
    });
  }
  u += matrixFree_.q();
  const Real e = matrixFree_.error(local.errorMeasure, r, u, reducer);
  result.fallbackIterations = sor.iterations;
  result.iterations += sor.iterations;
  bool applied = true;
  if (e < result.error || !std::isfinite(result.error)) {
    result.r.swap(r);
    result.u.swap(u);
    result.error = e;
    result.finite = std::isfinite(e);
  } else {
    // PQN's best iterate is the better one (the same decision on every process): back to the
    // free velocities; the caller applies PQN's percussions.
    bodies.velocities() = savedVelocity_;
    bodies.omegasBody() = savedOmega_;
    applied = false;
  }
  result.converged = result.error <= local.tolerance;
  return applied;
}

SolverStats MoreauStepper::solveLocal(BodyStorage& bodies, const ContactProblem& problem,
                                      const StepExchanges& exchanges) {
  checkRollingResistanceSupported(settings_.solver, problem.parameters);
  const InclusionSolverSettings& s = settings_.solver;
  // The matrix-free local solvers (APGD, PQN, IPM) run distributed: every process takes part in
  // every solve, contacts or not.
  const bool distributed = s.matrixFree && exchanges.split != nullptr;
  if (!distributed) {
    for (const std::uint32_t m : problem.multiplicity) {
      GRAIN_REQUIRE(
          m <= 1,
          "the assembled local contact solvers are serial: they cannot solve split bodies "
          "(only matrix-free " +
              matrixFreeMethodNames() + " run distributed)");
    }
  }
  localFallbacks_ = 0;
  GRAIN_REQUIRE(!distributed || exchanges.reducer != nullptr,
                "a distributed matrix-free solve needs the reducer over all processes");
  const ContactStorage& contacts = problem.contacts;
  const std::size_t nc = contacts.size();
  SolverStats stats;
  if (nc == 0 && !distributed) {
    localPercussions_.clear();
    solver_.setPercussionCache({});
    stats.converged = true;
    return stats;
  }
  if (s.usePercussionCache) {
    detail::makePercussionCacheKeys(bodies, contacts, localCacheKeys_, localCacheOrdinal_);
    localGuess_.setZero(static_cast<Eigen::Index>(3 * nc));
    detail::forEachCachedPercussion(bodies, contacts, localCacheKeys_, localCacheOrdinal_,
                                    solver_.percussionCache(), [&](std::uint32_t c, const Vec3& p) {
                                      localGuess_.segment<3>(static_cast<Eigen::Index>(3 * c)) = p;
                                    });
  }
  const VecX* guess = s.usePercussionCache ? &localGuess_ : nullptr;
  LocalProblem local;
  // Distributed: sums over all processes; `split` adds the split bodies' impulses of the processes
  // sharing them (null when this process shares none).
  Reducer* reducer = distributed ? exchanges.reducer : nullptr;
  SplitBodyExchange* split = nullptr;
  // True once the bodies hold u^E (the PQN fallback leaves them so).
  bool applied = false;
  if (s.matrixFree) {
    // APGD, PQN or IPM on the matrix-free Delassus operator: nothing is assembled.
    matrixFree_.build(bodies, problem, s);
    // Told on every step, so that all processes stay in step.
    if (distributed && exchanges.split->beginSolve(bodies, matrixFree_.bodyStorageIndex())) {
      split = exchanges.split;
    }
    const LocalSolverSettings settings = localSolverSettings(s);
    if (s.localMethod == LocalSolverMethod::Pqn) {
      solvePqn(matrixFree_, settings, guess, localResult_, reducer, split);
      if (!localResult_.converged) {
        applied = fallBackToSor(bodies, problem, exchanges, settings, guess, split);
      }
    } else if (s.localMethod == LocalSolverMethod::Ipm) {
      solveIpm(matrixFree_, settings, guess, localResult_, reducer, split);
    } else {
      solveApgd(matrixFree_, settings, guess, localResult_, reducer, split);
    }
  } else {
    local = assembleLocalProblem(bodies, problem, s);
    solve(local, localSolverSettings(s), guess, localResult_);
    if (s.localMethod == LocalSolverMethod::Pqn && localResult_.fallbackIterations > 0) {
      localFallbacks_ = 1;
    }
  }
  const LocalSolverResult& result = localResult_;
  if (applied) {
    // The fallback's velocity SOR has updated every body (and every copy of a split body).
  } else if (split != nullptr) {
    // Every copy of a split body gets the impulses of all its contacts, wherever solved.
    matrixFree_.applyPercussions(bodies, result.r, split);
  } else {
    applyContactPercussions(bodies, contacts, result.r);
  }
  localPercussions_.resize(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    localPercussions_[c] = result.r.segment<3>(static_cast<Eigen::Index>(3 * c));
  }
  if (s.usePercussionCache) {
    std::vector<detail::PercussionCacheEntry> cache;
    detail::makePercussionCache(bodies, contacts, localCacheKeys_, localCacheOrdinal_,
                                localPercussions_, cache);
    solver_.setPercussionCache(std::move(cache));
  }
  stats.iterations = result.iterations;
  stats.converged = result.converged;
  stats.finite = result.finite && result.r.allFinite();
  if (s.matrixFree) {
    // Distributed: the measures of the whole problem, the same on every process.
    stats.naturalMapError =
        matrixFree_.error(LocalErrorMeasure::NaturalMap, result.r, result.u, reducer);
    stats.koziaraError = matrixFree_.error(LocalErrorMeasure::Koziara, result.r, result.u, reducer);
  } else {
    const LocalErrorEvaluator evaluator(local);
    stats.naturalMapError = evaluator.naturalMap(result.r, result.u);
    stats.koziaraError = evaluator.koziara(result.r, result.u);
  }
  return stats;
}

StepStats MoreauStepper::step(DynamicsSystem& system, const StepExchanges& exchanges) {
  const auto stepStart = Clock::now();
  StepStats stats;
  StageTimer timer(stats);
  const Real dt = settings_.deltaT;
  BodyStorage& bodies = system.bodies;
#ifdef GRAIN_CHECK_INVARIANTS
  // A state made non-finite between steps is named here, before collision detection refuses it.
  if (const std::size_t bad = findNonFiniteBody(bodies); bad < bodies.size()) {
    throw InvariantError(
        nonFiniteBodyMessage(bodies, bad, stepCount_ + 1) + " at the start of the step",
        stepCount_ + 1, true, bodies.ids()[bad]);
  }
#endif

  // 1. First half step: q^M = q^S + dt/2 F(q^S) u^S (eq. 8.6); p^S is kept with the bodies.
  const std::uint32_t threads = settings_.solver.threadCount;
  overBodies(bodies.size(), threads,
             [&](stage::BodyRange range) { stage::firstHalfStep(bodies, range, dt); });
  timer.lap(Stage::FirstHalfStep);

  // Bodies migrate and remote copies are refreshed here in a distributed run; contacts, solver
  // order and warm start then follow body ids, whatever the storage history.
  if (exchanges.bodies != nullptr) {
    // The warm-start entries of the contacts solved here last step travel with the bodies.
    warmStart_ = solver_.takePercussionCache();
    exchanges.bodies->exchangeBodies(system, warmStart_);
    bodies.sortById();
  }
  timer.lap(Stage::Exchange);

  // 2. Collision detection at q^M: contacts with g_N <= 0, each solved by one process.
  collision_.detect(bodies, system.shapes, contacts_, threads);
  if (exchanges.bodies != nullptr) {
    exchanges.bodies->selectContacts(bodies, contacts_);
  }
  stats.contacts = contacts_.size();
  for (Real g : contacts_.gaps()) {
    stats.maxPenetration = std::max(stats.maxPenetration, -g);
  }
  timer.lap(Stage::CollisionDetection);

  const std::size_t n = bodies.size();
  if (settings_.solver.computeTotalOverlap) {
    totalOverlap_.assign(n, 0.0);
    for (std::size_t c = 0; c < contacts_.size(); ++c) {
      const Real pen = std::max(0.0, -contacts_.gaps()[c]);
      totalOverlap_[contacts_.bodyA()[c]] += pen;
      totalOverlap_[contacts_.bodyB()[c]] += pen;
    }
  }
  multiplicity_.clear();
  std::size_t splitContacts = 0;
  if (exchanges.split != nullptr) {
    exchanges.split->planSplits(bodies, contacts_, multiplicity_, warmStart_);
    solver_.setPercussionCache(std::move(warmStart_));
    // The contacts that touch a split body first (ContactProblem::splitContacts).
    if (!multiplicity_.empty()) {
      splitFirst_.resize(contacts_.size());
      for (std::size_t c = 0; c < contacts_.size(); ++c) {
        splitFirst_[c] =
            multiplicity_[contacts_.bodyA()[c]] > 1 || multiplicity_[contacts_.bodyB()[c]] > 1;
      }
      splitContacts = contacts_.moveToFront(splitFirst_);
    }
  }
  // Only the threaded sweeps read the colouring; a serial step does not build it.
  const bool coloured = settings_.solver.threadCount > 1 && !settings_.solver.localMethod;
  if (coloured) {
    simulatedMask_.assign(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      simulatedMask_[i] = bodies.isSimulated(i);
    }
    // Its passes over the contacts on the threads from minContactsPerThread contacts per thread.
    const std::uint32_t colourThreads =
        contacts_.size() >= std::uint64_t{settings_.solver.minContactsPerThread} * threads ? threads
                                                                                           : 1;
    colouring_.build(contacts_, simulatedMask_, threads, colourThreads);
  }
  timer.lap(Stage::ContactGraph);

  // h at (q^M, u^S, t^M): gravity and the per-body external forces (eq. 8.7); the gyroscopic
  // term -Omega x (Theta Omega) as an implicit step (gyroscopic.hpp). The free velocity u^S + M^-1
  // h dt is the solver's starting point. Per-body forces are gathered first (one pass per field),
  // so the kernel stays free of indirect calls.
  std::span<const Vec3> bodyForce;
  if (system.externalForces.hasBodyForces()) {
    bodyForce_.assign(n, Vec3::Zero());
    system.externalForces.addBodyForces(system.time + 0.5 * dt, bodies, bodyForce_);
    bodyForce = bodyForce_;
  }
  const Vec3 gravity = system.externalForces.gravityAcceleration();
  overBodies(n, threads, [&](stage::BodyRange range) {
    stage::freeVelocity(bodies, range, dt, gravity, bodyForce);
  });
  timer.lap(Stage::Forces);

  // 3. Contact problem (eq. 8.8) for u^E.
  const ContactProblem problem{contacts_,
                               system.contactParameters,
                               bodies.velocitiesStart(),
                               bodies.omegasBodyStart(),
                               dt,
                               multiplicity_,
                               splitContacts,
                               coloured ? &colouring_ : nullptr};
  if (problemObserver_ && !contacts_.empty()) {
    problemObserver_(bodies, problem, stepCount_ + 1);
  }
  const SolverStats solverStats = settings_.solver.localMethod
                                      ? solveLocal(bodies, problem, exchanges)
                                      : solver_.solve(bodies, problem, exchanges.split);
  stats.iterations = solverStats.iterations;
  stats.fallbacks = settings_.solver.localMethod ? localFallbacks_ : 0;
  stats.converged = solverStats.converged;
  stats.finite = solverStats.finite;
  stats.naturalMapError = solverStats.naturalMapError;
  stats.koziaraError = solverStats.koziaraError;
  timer.lap(Stage::ContactSolve);

  // 4. Second half step, symmetric form (eq. 8.9).
  overBodies(bodies.size(), threads,
             [&](stage::BodyRange range) { stage::secondHalfStep(bodies, range, dt); });
  timer.lap(Stage::SecondHalfStep);

  system.time += dt;
  ++stepCount_;
  stats.step = stepCount_;
#ifdef GRAIN_CHECK_INVARIANTS
  // Finite state, unit quaternions, no body twice, contacts in order (GRAIN_CHECK_INVARIANTS).
  checkStepInvariants(bodies, contacts_, stepCount_, invariantScratch_, splitContacts);
#endif
  stats.time = system.time;
  const SystemEnergy e = computeEnergy(system);
  stats.kineticEnergy = e.kinetic();
  stats.rotationalEnergy = e.kineticRotational;
  stats.potentialEnergy = e.potential;
  if (exchanges.reducer != nullptr && exchanges.reducer->distributed()) {
    reduceStats(*exchanges.reducer, stats,
                settings_.solver.localMethod ? nullptr : &solverStats.localMeasureSums);
  }
  stats.stepSeconds = std::chrono::duration<double>(Clock::now() - stepStart).count();
  return stats;
}

void reduceStats(Reducer& reducer, StepStats& stats, const detail::MeasureSums* measureSums) {
  using detail::MeasureSums;
  constexpr std::size_t kFirstMeasure = 5;
  std::array<Real, kFirstMeasure + MeasureSums::Count> sums{
      static_cast<Real>(stats.contacts), stats.kineticEnergy, stats.rotationalEnergy,
      stats.potentialEnergy, stats.converged ? 0.0 : 1.0};
  if (measureSums != nullptr) {
    std::copy(measureSums->value.begin(), measureSums->value.end(), sums.begin() + kFirstMeasure);
  }
  std::array<Real, 5> maxima{stats.maxPenetration, stats.naturalMapError, stats.koziaraError,
                             static_cast<Real>(stats.iterations), stats.finite ? 0.0 : 1.0};
  reducer.sumAndMax(sums, maxima);
  stats.contacts = static_cast<std::size_t>(std::llround(sums[0]));
  stats.kineticEnergy = sums[1];
  stats.rotationalEnergy = sums[2];
  stats.potentialEnergy = sums[3];
  stats.maxPenetration = maxima[0];
  if (measureSums != nullptr) {
    MeasureSums total;
    std::copy(sums.begin() + kFirstMeasure, sums.end(), total.value.begin());
    const detail::ContactMeasures measures = detail::measuresFromSums(total);
    stats.naturalMapError = stats.contacts > 0 ? measures.naturalMap : 0.0;
    stats.koziaraError = stats.contacts > 0 ? measures.koziara : 0.0;
  } else {
    stats.naturalMapError = maxima[1];
    stats.koziaraError = maxima[2];
  }
  stats.iterations = static_cast<std::uint32_t>(std::llround(maxima[3]));
  stats.finite = maxima[4] == 0.0;
  stats.converged = sums[4] == 0.0;
}

}  // namespace grain
