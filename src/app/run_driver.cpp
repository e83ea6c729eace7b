// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstdio>

#include <grain/app/run_driver.hpp>

namespace grain::app {

std::uint64_t stepsUntil(double time, double endTime, double dt) {
  return static_cast<std::uint64_t>(std::max(0ll, std::llround((endTime - time) / dt)));
}

LoopResult runSteps(RunHooks& hooks, std::uint64_t firstStep, std::uint64_t lastStep,
                    double startTime, ProgressReporter* progress) {
  LoopResult result;
  result.step = firstStep;
  result.time = startTime;
  while (result.step < lastStep) {
    const StepStats stats = hooks.step();
    ++result.step;
    result.time = stats.time;
    result.allConverged = result.allConverged && stats.converged;
    result.fallbackSteps += stats.fallbacks > 0 ? 1 : 0;
    hooks.record(stats, result.step);
    if (!stats.finite) {
      result.nonFinite = true;
      break;
    }
    if (progress != nullptr) {
      char extra[96];
      std::snprintf(extra, sizeof extra, "contacts %zu  iterations %u", stats.contacts,
                    stats.iterations);
      progress->update(stats.time, extra);
    }
    if (hooks.stopRequested()) {
      result.stopped = true;
      break;
    }
  }
  return result;
}

std::string summaryLine(const LoopResult& result, int stopSignal) {
  if (result.stopped) {
    return "stopped by signal " + std::to_string(stopSignal) +
           " at t = " + std::to_string(result.time) + " s after step " +
           std::to_string(result.step);
  }
  return "finished " + std::to_string(result.step) + " steps" +
         (result.fallbackSteps > 0 ? ", " + std::to_string(result.fallbackSteps) +
                                         " of them with PQN fallen back to SOR prox"
                                   : "") +
         (result.allConverged ? "" : " (some steps reached maxIter without converging)");
}

}  // namespace grain::app
