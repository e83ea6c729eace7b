// SPDX-License-Identifier: MIT
// Matrix-free PQN on the domain decomposition against the serial matrix-free PQN, on any number of
// processes (registered per rank count under the ctest label "mpi"), with a grid and a kd-tree, on
// the pile of distributed_pile.hpp:
//   - landing (after 20 SOR steps: 1-45 contacts per step, spheres touching across process
//     boundaries), stepped 22 steps with matrix-free PQN (warm-started): every step converges
//     without fallback, mostly with the serial Newton step count (every norm and GMRES inner
//     product is a global sum), and positions and velocities follow the serial run within a bound
//     derived from the solver's tolerance;
//   - settled (after 150 SOR steps, about 165 contacts; PQN itself converges there in 27-45
//     Newton steps at 1e-8, docs/solvers.md), forced to fall back at once (one Newton step per
//     solve, pqnMaxIter 1, the same tolerance): every step falls back to the velocity SOR prox
//     (with mass splitting on more than one process), serially and distributed alike, still
//     converges to the tolerance over the whole problem and follows the serial run within the same
//     bound.
// Every process runs the serial reference itself; process 0 compares. Prints "N passed, N failed".
#include <cstdio>
#include <string>

#include <grain/core/timestepping/moreau_stepper.hpp>

#include "distributed_pile.hpp"
#include "distributed_stepping.hpp"

namespace {

using namespace grain;
using namespace grain::mpi_test;

constexpr Real kTolerance = 1e-8;  ///< natural-map tolerance of the PQN runs

/// `forced`: one Newton step per solve, so that every solve with contacts falls back.
StepperSettings pqnSettings(bool forced) {
  StepperSettings st = matrixFreeSettings(LocalSolverMethod::Pqn, kTolerance);
  st.solver.alphaSorProx = 1.0;
  if (forced) {
    st.solver.pqnMaxIter = 1;
  }
  return st;
}

/// `forced`: the settled pile with pqnMaxIter 1, else the landing pile.
void checkStepping(bool kdTree, bool forced, int steps) {
  const std::string name = std::string(kdTree ? "kd-tree" : "grid") +
                           (forced ? ", settled, forced fallback" : ", landing") + ", " +
                           std::to_string(gSize) + " processes";
  // The bound of runStepping holds for the fallback too: the velocity SOR prox also stops with a
  // natural-map residual below tol * S, on the whole problem (see MoreauStepper).
  const SteppingRun run =
      runStepping(settledPile(forced ? 150 : 20), pqnSettings(forced), kdTree, steps, kTolerance);
  if (gRank != 0) {
    return;
  }
  bool belowTolerance = true;
  int serialFallbacks = 0, distFallbacks = 0, fallbackMismatch = 0;
  for (const StepPair& p : run.steps) {
    belowTolerance = belowTolerance && p.distributed.naturalMapError <= kTolerance;
    serialFallbacks += static_cast<int>(p.serial.fallbacks);
    distFallbacks += static_cast<int>(p.distributed.fallbacks);
    fallbackMismatch += p.serial.fallbacks != p.distributed.fallbacks ? 1 : 0;
  }
  const int solvedSteps = run.solvedSteps();
  char details[200];
  std::snprintf(details, sizeof details,
                "serial iteration count in %d steps, fallbacks %d serial / %d distributed, split "
                "bodies %g",
                run.sameIterations(), serialFallbacks, distFallbacks, run.split);
  printStepping(run, name, details);
  // (The kd-tree's 3 cells of the landing column happen to meet no contact: no split body there.)
  checkSteppingRun(run, name, kdTree && !forced);
  check(belowTolerance,
        "stepping: every step's natural-map error over all processes <= relTol (" + name + ")");
  check(solvedSteps >= steps - 2, "stepping: (almost) every step has contacts (" + name + ")");
  if (forced) {
    check(serialFallbacks == solvedSteps && distFallbacks == solvedSteps && fallbackMismatch == 0,
          "stepping: every step falls back, serially and distributed (" + name + ")");
  } else {
    check(serialFallbacks == 0 && distFallbacks == 0,
          "stepping: no step falls back (" + name + ")");
    // The same Newton iteration on the same problem: the serial step counts, unless round-off
    // moves the stop by a step.
    check(run.sameIterations() >= steps / 2,
          "stepping: most steps take the serial Newton step count (" + name + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  return runChecks(argc, argv, [] {
    for (const bool kdTree : {false, true}) {
      checkStepping(kdTree, false, 22);
      checkStepping(kdTree, true, 10);
    }
  });
}
