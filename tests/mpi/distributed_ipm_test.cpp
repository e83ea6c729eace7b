// SPDX-License-Identifier: MIT
// Matrix-free IPM (the interior point method for the convex relaxation, Newton systems by PCG) on
// the domain decomposition against the serial matrix-free IPM, on any number of processes
// (registered per rank count under the ctest label "mpi"), with a grid and a kd-tree, on the pile
// of distributed_pile.hpp:
//   - landing (after 20 SOR steps: 1-45 contacts per step, spheres touching across process
//     boundaries) and settled (after 150 SOR steps, about 165 contacts), stepped with matrix-free
//     IPM: every step converges (relaxed measure, relTol) serially and distributed, and positions
//     and velocities follow the serial run within a bound derived from the solver's tolerance;
//     landing, every step takes the serial iteration count (every dot product of PCG and every
//     norm is a global sum, every product sums the split bodies' impulses).
// Every process runs the serial reference itself; process 0 compares. Prints "N passed, N failed".
#include <cstdint>
#include <cstdio>
#include <string>

#include <grain/core/timestepping/moreau_stepper.hpp>

#include "distributed_pile.hpp"
#include "distributed_stepping.hpp"

namespace {

using namespace grain;
using namespace grain::mpi_test;

constexpr Real kTolerance = 1e-8;  ///< relaxed-measure tolerance of the IPM runs

StepperSettings ipmSettings() {
  return matrixFreeSettings(LocalSolverMethod::Ipm, kTolerance);
}

void checkStepping(bool kdTree, bool settled, int steps) {
  const std::string name = std::string(kdTree ? "kd-tree" : "grid") +
                           (settled ? ", settled" : ", landing") + ", " + std::to_string(gSize) +
                           " processes";
  const SteppingRun run =
      runStepping(settledPile(settled ? 150 : 20), ipmSettings(), kdTree, steps, kTolerance);
  if (gRank != 0) {
    return;
  }
  std::uint64_t serialIterations = 0, distIterations = 0;
  for (const StepPair& p : run.steps) {
    serialIterations += p.serial.iterations;
    distIterations += p.distributed.iterations;
  }
  const int sameIterations = run.sameIterations();
  char details[200];
  std::snprintf(details, sizeof details,
                "serial iteration count in %d steps (iterations %llu serial, %llu distributed), "
                "split bodies %g",
                sameIterations, static_cast<unsigned long long>(serialIterations),
                static_cast<unsigned long long>(distIterations), run.split);
  printStepping(run, name, details);
  // (The kd-tree's 3 cells of the landing column happen to meet no contact: no split body there.)
  checkSteppingRun(run, name, kdTree && !settled);
  check(run.solvedSteps() >= steps - 2,
        "stepping: (almost) every step has contacts (" + name + ")");
  if (!settled) {
    // The same interior point and PCG iterations on the same problem: the serial counts. (On the
    // settled pile the interior point iterations stall near a complementarity of 1e-13 and the
    // polishing and APGD stages finish: where that stall ends depends on round-off, and only the
    // result, not the count, is the serial one's.)
    check(sameIterations == steps,
          "stepping: every step takes the serial iteration count (" + name + ")");
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
