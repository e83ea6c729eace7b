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
#include <algorithm>
#include <cmath>
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

constexpr Real kTolerance = 1e-8;  ///< natural-map tolerance of the PQN runs

/// `forced`: one Newton step per solve, so that every solve with contacts falls back.
StepperSettings pqnSettings(bool forced) {
  StepperSettings st;
  st.deltaT = kDt;
  st.solver.localMethod = LocalSolverMethod::Pqn;
  st.solver.matrixFree = true;
  st.solver.convergenceMethod = ConvergenceMethod::NaturalMap;
  st.solver.relTol = kTolerance;
  st.solver.maxIter = 100000;
  st.solver.alphaSorProx = 1.0;
  st.solver.usePercussionCache = true;
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
  DynamicsSystem serial = settledPile(forced ? 150 : 20);
  DynamicsSystem dist = serial;
  MoreauStepper serialStepper(pqnSettings(forced));
  MoreauStepper distStepper(pqnSettings(forced));
  // The serial problem's |q| (m/s) per step: the scale of the natural-map error.
  Real qNorm = 0.0;
  serialStepper.setContactProblemObserver(
      [&](const BodyStorage& b, const ContactProblem& p, std::uint64_t) {
        MatrixFreeProblem mf;
        mf.build(b, p, pqnSettings(forced).solver);
        qNorm = mf.q().norm();
      });
  const std::size_t total = serial.bodies.simulatedCount();
  bool converged = true, conserved = true, contactsMatch = true, belowTolerance = true;
  int sameIterations = 0;  // steps with the serial iteration count
  int serialFallbacks = 0, distFallbacks = 0, fallbackMismatch = 0, solvedSteps = 0;
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
      belowTolerance = belowTolerance && d.naturalMapError <= kTolerance;
      contactsMatch = contactsMatch && s.contacts == d.contacts;
      sameIterations += s.iterations == d.iterations ? 1 : 0;
      solvedSteps += s.contacts > 0 ? 1 : 0;
      serialFallbacks += static_cast<int>(s.fallbacks);
      distFallbacks += static_cast<int>(d.fallbacks);
      fallbackMismatch += s.fallbacks != d.fallbacks ? 1 : 0;
      // Both solves stop with a natural-map residual below tol * S, S = max(|q|, |r|, |u|) (the
      // fallback's velocity SOR too, on the whole problem: see MoreauStepper): each step's
      // percussions solve a problem perturbed by at most that much, so the contact velocities of
      // the two runs may part by up to 2 tol S per step, and a body's velocity by as much. S is
      // taken as 10 |q| of the serial step, as in distributed_apgd_test.cpp (an estimate with a
      // margin, not a proof). The differences add up over the steps, the positions' by dt times
      // the velocities'.
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
      "serial iteration count in %d steps, fallbacks %d serial / %d distributed, split bodies "
      "%g\n",
      name.c_str(), steps, dr, positionBound, dv, velocityBound, sameIterations, serialFallbacks,
      distFallbacks, split);
  check(converged, "stepping: every step converges, serially and distributed (" + name + ")");
  check(belowTolerance,
        "stepping: every step's natural-map error over all processes <= relTol (" + name + ")");
  check(conserved, "stepping: every id exactly once in every state (" + name + ")");
  check(contactsMatch,
        "stepping: contacts summed over processes equal the serial count (" + name + ")");
  check(solvedSteps >= steps - 2, "stepping: (almost) every step has contacts (" + name + ")");
  // (The kd-tree's 3 cells of the landing column happen to meet no contact: no split body there.)
  check(gSize == 1 || split > 0 || (kdTree && !forced),
        "stepping: bodies were split over processes (" + name + ")");
  if (forced) {
    check(serialFallbacks == solvedSteps && distFallbacks == solvedSteps && fallbackMismatch == 0,
          "stepping: every step falls back, serially and distributed (" + name + ")");
  } else {
    check(serialFallbacks == 0 && distFallbacks == 0,
          "stepping: no step falls back (" + name + ")");
    // The same Newton iteration on the same problem: the serial step counts, unless round-off
    // moves the stop by a step.
    check(sameIterations >= steps / 2,
          "stepping: most steps take the serial Newton step count (" + name + ")");
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
