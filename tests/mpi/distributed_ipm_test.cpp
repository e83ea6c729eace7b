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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/mpi/distributed_exchange.hpp>

#include "distributed_pile.hpp"

namespace {

using namespace grain;
using namespace grain::mpi_test;

constexpr Real kTolerance = 1e-8;  ///< relaxed-measure tolerance of the IPM runs

StepperSettings ipmSettings() {
  StepperSettings st;
  st.deltaT = kDt;
  st.solver.localMethod = LocalSolverMethod::Ipm;
  st.solver.matrixFree = true;
  st.solver.convergenceMethod = ConvergenceMethod::NaturalMap;
  st.solver.relTol = kTolerance;
  st.solver.maxIter = 100000;
  st.solver.usePercussionCache = true;  // (the interior point method does not use the guess)
  return st;
}

void checkStepping(bool kdTree, bool settled, int steps) {
  const std::string name = std::string(kdTree ? "kd-tree" : "grid") +
                           (settled ? ", settled" : ", landing") + ", " + std::to_string(gSize) +
                           " processes";
  DynamicsSystem serial = settledPile(settled ? 150 : 20);
  DynamicsSystem dist = serial;
  MoreauStepper serialStepper(ipmSettings());
  MoreauStepper distStepper(ipmSettings());
  // The serial problem's |q| (m/s) per step: the scale of the relaxed error.
  Real qNorm = 0.0;
  serialStepper.setContactProblemObserver(
      [&](const BodyStorage& b, const ContactProblem& p, std::uint64_t) {
        MatrixFreeProblem mf;
        mf.build(b, p, ipmSettings().solver);
        qNorm = mf.q().norm();
      });
  const std::size_t total = serial.bodies.simulatedCount();
  bool converged = true, conserved = true, contactsMatch = true;
  int sameIterations = 0, solvedSteps = 0;
  std::uint64_t serialIterations = 0, distIterations = 0;
  Real velocityBound = 0.0;  // m/s, accumulated over the steps (see below)
  Real positionBound = 0.0;  // m
  Real split = 0.0;
  std::map<BodyId, BodyRecord> distributed;
  {
    mpi::DistributedExchange exchange(MPI_COMM_WORLD, decomposition(dist.bodies, kdTree), 1, 1);
    exchange.keepOwnedBodies(dist.bodies);
    const StepExchanges ex{&exchange, &exchange, &exchange.reducer()};
    for (int k = 0; k < steps; ++k) {
      qNorm = 0.0;
      const StepStats s = serialStepper.step(serial);
      const StepStats d = distStepper.step(dist, ex);
      converged = converged && s.converged && d.converged;
      contactsMatch = contactsMatch && s.contacts == d.contacts;
      sameIterations += s.iterations == d.iterations ? 1 : 0;
      serialIterations += s.iterations;
      distIterations += d.iterations;
      solvedSteps += s.contacts > 0 ? 1 : 0;
      // Both solves stop with a relaxed residual below tol * S, S = max(|q|, |r|, |u|): each
      // step's percussions solve a problem perturbed by at most that much, so the contact
      // velocities of the two runs may part by up to 2 tol S per step, and a body's velocity by as
      // much (S taken as 10 |q| of the serial step, as in distributed_apgd_test.cpp: an estimate
      // with a margin, not a proof). The differences add up over the steps, the positions' by dt
      // times the velocities'.
      velocityBound += 2.0 * kTolerance * 10.0 * qNorm;
      positionBound += kDt * velocityBound;
      Real splitNow = static_cast<Real>(exchange.splitBodies());
      exchange.reducer().max(std::span<Real>(&splitNow, 1));
      split = std::max(split, splitNow);
      int duplicates = 0;
      const auto all = gatherBodies(dist.bodies, duplicates);
      conserved = conserved && (gRank != 0 || (duplicates == 0 && all.size() == total));
    }
    int duplicates = 0;
    distributed = gatherBodies(dist.bodies, duplicates);
  }
  if (gRank != 0) {
    return;
  }
  const auto [dr, dv] = maxStateDifference(serial.bodies, distributed);
  std::printf(
      "stepping (%s): %d steps, max |dr| %.3g m (bound %.3g), max |dv| %.3g m/s (bound %.3g), "
      "serial iteration count in %d steps (iterations %llu serial, %llu distributed), split "
      "bodies %g\n",
      name.c_str(), steps, dr, positionBound, dv, velocityBound, sameIterations,
      static_cast<unsigned long long>(serialIterations),
      static_cast<unsigned long long>(distIterations), split);
  check(converged, "stepping: every step converges, serially and distributed (" + name + ")");
  check(conserved, "stepping: every id exactly once in every state (" + name + ")");
  check(contactsMatch,
        "stepping: contacts summed over processes equal the serial count (" + name + ")");
  check(solvedSteps >= steps - 2, "stepping: (almost) every step has contacts (" + name + ")");
  // (The kd-tree's 3 cells of the landing column happen to meet no contact: no split body there.)
  check(gSize == 1 || split > 0 || (kdTree && !settled),
        "stepping: bodies were split over processes (" + name + ")");
  if (!settled) {
    // The same interior point and PCG iterations on the same problem: the serial counts. (On the
    // settled pile the interior point iterations stall near a complementarity of 1e-13 and the
    // polishing and APGD stages finish: where that stall ends depends on round-off, and only the
    // result, not the count, is the serial one's.)
    check(sameIterations == steps,
          "stepping: every step takes the serial iteration count (" + name + ")");
  }
  check(dv <= velocityBound, "stepping: velocities within the tolerance's bound (" + name + ")");
  check(dr <= positionBound, "stepping: positions within the tolerance's bound (" + name + ")");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  for (const bool kdTree : {false, true}) {
    checkStepping(kdTree, false, 22);
    checkStepping(kdTree, true, 10);
  }
  if (gRank == 0) {
    std::printf("%d passed, %d failed\n", gPassed, gFailed);
  }
  MPI_Finalize();
  return gFailed == 0 ? 0 : 1;
}
