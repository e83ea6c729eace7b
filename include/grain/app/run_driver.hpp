// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

#include <grain/app/progress.hpp>
#include <grain/core/timestepping/step_stats.hpp>

/// The step loop that grain-sim and grain-sim-mpi share: steps, per-step records, the progress
/// line, stopping on a signal or on a non-finite state, and the closing summary.
namespace grain::app {

/// What a run does around its steps; serial and distributed runs differ only here. In a
/// distributed run every process calls runSteps() and every hook is collective where it says so.
class RunHooks {
 public:
  virtual ~RunHooks() = default;
  /// Advances the system by one step (collective in a distributed run); the statistics are those
  /// of all processes.
  virtual StepStats step() = 0;
  /// Logs and outputs of the step just done (run log, states, contact forces).
  virtual void record(const StepStats& stats, std::uint64_t step) = 0;
  /// Whether a stop signal arrived (on any process: collective in a distributed run).
  virtual bool stopRequested() = 0;
};

/// How a run of runSteps() ended.
struct LoopResult {
  std::uint64_t step = 0;    ///< steps done in total (including those before a restart)
  double time = 0.0;         ///< simulated time reached (s)
  bool stopped = false;      ///< by a signal
  bool nonFinite = false;    ///< a step produced NaN/Inf velocities
  bool allConverged = true;  ///< every step's contact solve converged
  /// Steps whose PQN fell back to SOR prox (StepStats::fallbacks), of this run (not before a
  /// restart).
  std::uint64_t fallbackSteps = 0;
};

/// Number of steps from `time` to `endTime` (s) with time step dt: round((endTime - time) / dt),
/// at least 0. Steps are counted, not times added, so the number of steps is exact.
std::uint64_t stepsUntil(double time, double endTime, double dt);

/// Runs steps firstStep+1 ... lastStep: after each, hooks.record(), the progress line (if
/// `progress` is not null: the root process of a distributed run) with the contact count and
/// iterations, then stops early on a non-finite state or a stop request. `startTime` is the
/// simulated time before the first step (s).
LoopResult runSteps(RunHooks& hooks, std::uint64_t firstStep, std::uint64_t lastStep,
                    double startTime, ProgressReporter* progress);

/// The closing line of a run ("finished N steps", "stopped by signal ..."), for
/// ProgressReporter::finish(); a finished run with PQN fallbacks says how many steps fell back.
std::string summaryLine(const LoopResult& result, int stopSignal);

}  // namespace grain::app
