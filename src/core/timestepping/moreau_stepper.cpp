// SPDX-License-Identifier: MIT
#include <chrono>
#include <cmath>

#include <grain/core/common/error.hpp>
#include <grain/core/math/quaternion.hpp>
#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/core/timestepping/gyroscopic.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>

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
}  // namespace

void validate(const StepperSettings& s) {
  GRAIN_REQUIRE(std::isfinite(s.deltaT) && s.deltaT > 0.0, "deltaT must be > 0");
  GRAIN_REQUIRE(std::isfinite(s.endTime) && s.endTime >= 0.0, "endTime must be >= 0");
  validate(s.solver);
}

MoreauStepper::MoreauStepper(const StepperSettings& settings)
    : settings_(settings), solver_(settings.solver) {
  validate(settings_);
  contacts_.reserve(settings_.solver.reserveContacts);
}

SolverStats MoreauStepper::solveLocal(BodyStorage& bodies, const ContactProblem& problem,
                                      VelocityExchange& exchange) {
  GRAIN_REQUIRE(exchange.splitExchangePeriod() == 0,
                "the local contact solvers are serial: they cannot exchange split velocities");
  const InclusionSolverSettings& s = settings_.solver;
  const ContactStorage& contacts = problem.contacts;
  const std::size_t nc = contacts.size();
  SolverStats stats;
  if (nc == 0) {
    localPercussions_.clear();
    solver_.setPercussionCache({});
    stats.converged = true;
    return stats;
  }
  const LocalProblem local = assembleLocalProblem(bodies, problem, s);
  if (s.usePercussionCache) {
    detail::makePercussionCacheKeys(bodies, contacts, localCacheKeys_, localCacheOrdinal_);
    localGuess_.setZero(static_cast<Eigen::Index>(3 * nc));
    detail::forEachCachedPercussion(bodies, contacts, localCacheKeys_, localCacheOrdinal_,
                                    solver_.percussionCache(), [&](std::uint32_t c, const Vec3& p) {
                                      localGuess_.segment<3>(static_cast<Eigen::Index>(3 * c)) = p;
                                    });
  }
  solve(local, localSolverSettings(s), s.usePercussionCache ? &localGuess_ : nullptr, localResult_);
  const LocalSolverResult& result = localResult_;
  applyContactPercussions(bodies, contacts, result.r);
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
  const LocalErrorEvaluator evaluator(local);
  stats.naturalMapError = evaluator.naturalMap(result.r, result.u);
  stats.koziaraError = evaluator.koziara(result.r, result.u);
  return stats;
}

StepStats MoreauStepper::step(DynamicsSystem& system, VelocityExchange& exchange) {
  const auto stepStart = Clock::now();
  StepStats stats;
  StageTimer timer(stats);
  const Real dt = settings_.deltaT;
  const Real halfDt = 0.5 * dt;
  BodyStorage& bodies = system.bodies;

  // 1. First half step: q^M = q^S + dt/2 F(q^S) u^S (eq. 8.6). Quaternions are normalised.
  //    Orientation and velocity at t^S are kept for the symmetric update (eq. 8.9).
  {
    const std::size_t n = bodies.size();
    auto& r = bodies.positions();
    auto& p = bodies.orientations();
    const auto& v = bodies.velocities();
    const auto& w = bodies.omegasBody();
    const auto& motion = bodies.motions();
    orientationStart_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      orientationStart_[i] = p[i];
      if (motion[i] == BodyMotion::Static) {
        continue;
      }
      r[i] += halfDt * v[i];
      p[i] = quat::integrateNormalized(p[i], p[i], w[i], halfDt);
    }
  }
  timer.lap(Stage::FirstHalfStep);

  // Bodies may be added, removed or migrate here in a distributed run.
  exchange.afterFirstHalfStep(bodies);
  if (orientationStart_.size() != bodies.size()) {
    throw Error("VelocityExchange::afterFirstHalfStep must not change the number of bodies");
  }
  timer.lap(Stage::Exchange);

  // 2. Collision detection at q^M: contacts with g_N <= 0.
  collision_.detect(bodies, system.shapes, contacts_);
  stats.contacts = contacts_.size();
  for (Real g : contacts_.gaps()) {
    stats.maxPenetration = std::max(stats.maxPenetration, -g);
  }
  timer.lap(Stage::CollisionDetection);

  const std::size_t n = bodies.size();
  simulatedMask_.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    simulatedMask_[i] = bodies.isSimulated(i);
  }
  graph_.build(contacts_, n, simulatedMask_);
  if (settings_.solver.computeTotalOverlap) {
    totalOverlap_.assign(n, 0.0);
    for (std::size_t c = 0; c < contacts_.size(); ++c) {
      const Real pen = std::max(0.0, -contacts_.gaps()[c]);
      totalOverlap_[contacts_.bodyA()[c]] += pen;
      totalOverlap_[contacts_.bodyB()[c]] += pen;
    }
  }
  timer.lap(Stage::ContactGraph);

  // h at (q^M, u^S, t^M): gravity, the per-body external forces and the gyroscopic term
  // -Omega x (Theta Omega) (eq. 8.7). The free velocity u^S + M^-1 h dt is the solver's
  // starting point. Per-body forces are gathered into bodyForce_ first (one pass per field),
  // so this loop stays free of indirect calls.
  {
    velocityStart_.assign(bodies.velocities().begin(), bodies.velocities().end());
    omegaBodyStart_.assign(bodies.omegasBody().begin(), bodies.omegasBody().end());
    const Vec3 g = system.externalForces.gravityAcceleration();
    const bool withBodyForces = system.externalForces.hasBodyForces();
    if (withBodyForces) {
      bodyForce_.assign(n, Vec3::Zero());
      system.externalForces.addBodyForces(system.time + halfDt, bodies, bodyForce_);
    }
    auto& v = bodies.velocities();
    auto& w = bodies.omegasBody();
    const auto& invMass = bodies.invMasses();
    const auto& inertia = bodies.inertiasBody();
    for (std::size_t i = 0; i < n; ++i) {
      if (!simulatedMask_[i]) {
        continue;
      }
      v[i] += dt * g;
      if (withBodyForces) {
        v[i] += (dt * invMass[i]) * bodyForce_[i];
      }
      w[i] = gyroscopicOmegaUpdate(w[i], inertia[i], dt);
    }
  }

  // 3. Contact problem (eq. 8.8) for u^E.
  const ContactProblem problem{contacts_,      graph_,          system.contactParameters,
                               velocityStart_, omegaBodyStart_, dt};
  if (problemObserver_ && !contacts_.empty()) {
    problemObserver_(bodies, problem, stepCount_ + 1);
  }
  const SolverStats solverStats = settings_.solver.localMethod
                                      ? solveLocal(bodies, problem, exchange)
                                      : solver_.solve(bodies, problem, &exchange);
  stats.iterations = solverStats.iterations;
  stats.converged = solverStats.converged;
  stats.finite = solverStats.finite;
  stats.naturalMapError = solverStats.naturalMapError;
  stats.koziaraError = solverStats.koziaraError;
  timer.lap(Stage::ContactSolve);

  // 4. Second half step, symmetric form (eq. 8.9):
  //    r^E = r^M + dt/2 v^E,  p^E = p^S + dt/2 F(p^M) (Omega^S + Omega^E).
  {
    auto& r = bodies.positions();
    auto& p = bodies.orientations();
    auto& v = bodies.velocities();
    auto& w = bodies.omegasBody();
    const auto& motion = bodies.motions();
    for (std::size_t i = 0; i < n; ++i) {
      if (motion[i] == BodyMotion::Static) {
        continue;
      }
      const bool simulated = motion[i] == BodyMotion::Simulated;
      // Animated bodies keep their prescribed velocity (the solver never changes it).
      const Vec3& vEnd = v[i];
      const Vec3 wSum = simulated ? Vec3(omegaBodyStart_[i] + w[i]) : Vec3(2.0 * w[i]);
      r[i] += halfDt * vEnd;
      p[i] = quat::integrateNormalized(orientationStart_[i], p[i], wSum, halfDt);
    }
  }
  timer.lap(Stage::SecondHalfStep);

  system.time += dt;
  ++stepCount_;
  stats.step = stepCount_;
  stats.time = system.time;
  const SystemEnergy e = computeEnergy(system);
  stats.kineticEnergy = e.kinetic();
  stats.rotationalEnergy = e.kineticRotational;
  stats.potentialEnergy = e.potential;
  stats.stepSeconds = std::chrono::duration<double>(Clock::now() - stepStart).count();
  return stats;
}

}  // namespace grain
