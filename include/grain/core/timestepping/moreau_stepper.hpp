// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include <grain/core/collision/collision_detector.hpp>
#include <grain/core/contact/contact_colouring.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/core/timestepping/exchange.hpp>
#include <grain/core/timestepping/step_stats.hpp>

namespace grain {

struct StepperSettings {
  Real deltaT = 0.001;  ///< time step (s), > 0
  Real endTime = 10.0;  ///< end of the simulation (s)
  InclusionSolverSettings solver;

  /// The description of deltaT and endTime (grain/core/common/settings.hpp), attributes of
  /// <TimeStepperSettings>; the solver settings have their own (threadCount, also an attribute
  /// of <TimeStepperSettings>, is among them).
  template <class V>
  static constexpr void describe(V&& v) {
    using S = StepperSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::deltaT>("deltaT")
          .required()
          .withBound(Bound::Positive)
          .withUnit("s")
          .withDoc("time step"));
    v(field<&S::endTime>("endTime")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("s")
          .withDoc("end of the simulation (absolute time)"));
  }
};

/// Throws grain::Error naming the field if a value is out of range: the bounds of
/// StepperSettings::describe, then validate(s.solver).
void validate(const StepperSettings& s);

/// Moreau midpoint time stepping (thesis Algorithm 8.1, eqs. 8.6-8.9):
///   1. q^M = q^S + dt/2 F(q^S) u^S, quaternion normalised;
///   2. h = [m g + f_ext; gyroscopic] at (q^M, t^M), f_ext the per-body external forces
///      (ExternalForces::addBodyForces); the gyroscopic part is the implicit midpoint step of
///      Euler's equation, gyroscopicOmegaUpdate (gyroscopic.hpp), not the explicit
///      -Omega^S x (Theta Omega^S); contacts with g_N(q^M) <= 0;
///   3. contact problem for u^E and the percussions P;
///   4. q^E = q^S + dt F(q^M) (u^S + u^E)/2, quaternion normalised.
/// Animated bodies move with their prescribed velocity; static bodies never move.
///
/// Contact solver of step 3: the velocity prox solver ContactSolver, or, if
/// settings.solver.localMethod is set, a local solver (local_solver.hpp): the step's problem is
/// assembled (assembleLocalProblem), solved with localSolverSettings(settings.solver), started
/// from the previous step's percussions if usePercussionCache (the same cache as ContactSolver's,
/// projected onto the new contact frames; contacts without an entry start at 0), and the
/// percussions are applied to the bodies (applyContactPercussions). With settings.solver.matrixFree
/// (APGD, PQN or IPM) the problem is not assembled: MatrixFreeProblem holds the step's contact rows
/// and solveApgd(), solvePqn() or solveIpm() iterates on the DelassusOperator. The interior point
/// method (assembled or matrix-free) solves the convex relaxation of the step's Coulomb problem:
/// its sliding contacts separate with u_N = mu |u_T| (LocalProblemKind). Only these local solvers
/// run distributed (with StepExchanges): every process solves its share of the contacts together
/// with all the others (products with split bodies' impulses summed by exchanges.split, every sum
/// over exchanges.reducer, on every step whether it has contacts or not), so the result is the
/// serial one's; the percussions are then applied with the split bodies' impulses summed the same
/// way. The assembled local solvers are serial: they throw grain::Error if a body is split over
/// processes.
///
/// Matrix-free PQN fallback (Koziara's Algorithm 1, step 3): when PQN does not reach relTol in
/// pqnMaxIter Newton steps (a global decision, so every process falls back together), the step
/// is solved by the velocity SOR prox ContactSolver (SorContact with the scene's alphaSORProx,
/// rStrategy, subMethodUCF and maxIter sweeps; distributed with mass splitting), started from the
/// step's own warm start (zero without; not from PQN's iterate, which a failed Newton run can
/// leave far off) and stopping on PQN's measure (natural map: relTol / sqrt(3), see
/// moreau_stepper.cpp). Its percussions are then measured on the whole problem as PQN measures
/// its iterates (u = W r + q on the matrix-free operator, global sums), and the better of the two
/// (PQN's best iterate or the fallback's) is the step's result, as in the assembled solve(). The
/// step's `converged` means, as for every local solver, that this result's measure is <= relTol
/// over the whole problem, whichever solver produced it; `iterations` adds the fallback's sweeps
/// to the Newton steps, and StepStats::fallbacks is 1 for a step that fell back (also for the
/// assembled PQN, whose solve() falls back to the Delassus SOR).
///
/// Distributed runs pass StepExchanges: after the first half step exchanges.bodies moves bodies
/// between processes (the storage is then put back in id order), after collision detection it
/// keeps the contacts this process solves, exchanges.split plans and averages split bodies, and
/// the step's statistics (contacts, energies, penetration, errors) are reduced over all
/// processes with exchanges.reducer. Every call is made on every step, so that all processes
/// stay in step. The per-body stages are the kernels of stage_kernels.hpp.
///
/// Built with GRAIN_CHECK_INVARIANTS (stepInvariantsChecked()), every step ends with
/// checkStepInvariants() (invariants.hpp), which throws InvariantError on a non-finite state,
/// a non-unit quaternion, a body stored twice or contacts out of order.
class MoreauStepper {
 public:
  explicit MoreauStepper(const StepperSettings& settings);

  /// Advances `system` by one step of settings().deltaT.
  StepStats step(DynamicsSystem& system, const StepExchanges& exchanges);
  StepStats step(DynamicsSystem& system) { return step(system, StepExchanges{}); }

  const StepperSettings& settings() const { return settings_; }
  /// Contacts of the last step (at q^M).
  const ContactStorage& contacts() const { return contacts_; }
  /// Percussions of the last step, per contact (N s), in the contact frame (N, T1, T2).
  const std::vector<Vec3>& percussions() const {
    return settings_.solver.localMethod ? localPercussions_ : solver_.percussions();
  }
  /// The local solver's result of the last step with contacts (settings.solver.localMethod set):
  /// percussions, Newton steps or iterations, PQN's GMRES iterations and fallback sweeps.
  const LocalSolverResult& localResult() const { return localResult_; }
  /// Per-body sum of penetration depths of the last step (m), if computeTotalOverlap.
  const std::vector<Real>& totalOverlap() const { return totalOverlap_; }
  /// The velocity prox solver.
  ContactSolver& solver() { return solver_; }
  /// The warm-start cache (usePercussionCache) left by the last step, whichever method solved it:
  /// the percussions keyed by body ids (percussion_cache.hpp), sorted. Restarts store and restore
  /// it; a distributed run moves it with the bodies.
  const std::vector<detail::PercussionCacheEntry>& warmStartCache() const {
    return solver_.percussionCache();
  }
  /// Replaces the warm-start cache (sorted as warmStartCache()).
  void setWarmStartCache(std::vector<detail::PercussionCacheEntry> cache) {
    solver_.setPercussionCache(std::move(cache));
  }
  /// Moves the warm-start cache out, leaving the stepper's empty.
  std::vector<detail::PercussionCacheEntry> takeWarmStartCache() {
    return solver_.takePercussionCache();
  }
  std::uint64_t stepCount() const { return stepCount_; }
  /// Sets the number of steps done so far (a restarted run continues the count).
  void setStepCount(std::uint64_t steps) { stepCount_ = steps; }

  /// Called once per step with the step's contact problem, just before the contact solve: the
  /// bodies then hold the free velocities u^S + M^-1 h dt and the orientations q^M, which is
  /// the state assembleLocalProblem() needs. `step` is the number the step will have
  /// (stepCount() + 1). Not called for steps without contacts.
  using ContactProblemObserver = std::function<void(
      const BodyStorage& bodies, const ContactProblem& problem, std::uint64_t step)>;
  /// Installs (or, with an empty function, removes) the observer.
  void setContactProblemObserver(ContactProblemObserver observer) {
    problemObserver_ = std::move(observer);
  }

 private:
  SolverStats solveLocal(BodyStorage& bodies, const ContactProblem& problem,
                         const StepExchanges& exchanges);
  /// The fallback of matrix-free PQN (see above) after solvePqn() left localResult_ unconverged;
  /// `guess` is the step's warm start (null without), `split` the exchange of the PQN products
  /// (null if this process shares no split body). Updates localResult_; returns true if the
  /// fallback's result was kept (the bodies then hold u^E), false if PQN's was (the bodies hold
  /// the free velocities again).
  bool fallBackToSor(BodyStorage& bodies, const ContactProblem& problem,
                     const StepExchanges& exchanges, const LocalSolverSettings& local,
                     const VecX* guess, SplitBodyExchange* split);

  StepperSettings settings_;
  CollisionDetector collision_;
  ContactSolver solver_;
  ContactStorage contacts_;
  ContactColouring colouring_;  ///< built only when the solver sweeps on several threads
  std::vector<Real> totalOverlap_;
  std::vector<std::uint32_t> multiplicity_;  // per body: processes sharing it (distributed runs)
  std::vector<detail::PercussionCacheEntry> warmStart_;  // in transit between two exchanges
  std::vector<Vec3> bodyForce_;      // per-body external forces at t^M (N, I frame)
  std::vector<bool> simulatedMask_;  ///< per body: simulated (colouring_ only)
  std::uint64_t stepCount_ = 0;
  ContactProblemObserver problemObserver_;
  std::vector<char> splitFirst_;          ///< per contact: touches a split body (ContactProblem)
  std::vector<BodyId> invariantScratch_;  // checkStepInvariants() (GRAIN_CHECK_INVARIANTS)
  // Local-solver path (settings_.solver.localMethod).
  std::vector<Vec3> localPercussions_;
  std::vector<detail::PercussionCacheKey> localCacheKeys_;
  std::vector<std::uint32_t> localCacheOrdinal_;
  VecX localGuess_;                   ///< warm start, 3 per contact (kept to reuse its storage)
  LocalSolverResult localResult_;     ///< solved into, keeping the storage of r and u
  MatrixFreeProblem matrixFree_;      ///< settings_.solver.matrixFree: the step's rows and operator
  std::uint32_t localFallbacks_ = 0;  ///< the last solve fell back from PQN to SOR (0 or 1)
  // Matrix-free PQN: its fallback solver and the scratch of fallBackToSor().
  std::optional<ContactSolver> pqnFallback_;
  std::vector<Vec3> fallbackStart_;  ///< per contact: the fallback's start (N s)
  std::vector<Vec3> savedVelocity_;  ///< the free velocities, restored if PQN's result is kept
  std::vector<Vec3> savedOmega_;
  VecX fallbackR_;
  VecX fallbackU_;
};

/// Combines the statistics of one step over the processes of `reducer` in one reduction
/// (Reducer::sumAndMax): contacts and energies summed; penetration and iterations the maximum;
/// converged and finite only if so on every process. The accuracy measures: with
/// `measureSums` (this process's sums behind them, ContactSolver) those of all processes'
/// contacts together, as a serial run defines them; without, the maximum over the processes.
/// Collective over the reducer's processes (all pass `measureSums` or none).
void reduceStats(Reducer& reducer, StepStats& stats,
                 const detail::MeasureSums* measureSums = nullptr);

}  // namespace grain
