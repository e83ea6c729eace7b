// SPDX-License-Identifier: MIT
// The stepping comparison the distributed solver tests share (distributed_apgd_test.cpp,
// distributed_ipm_test.cpp, distributed_pqn_test.cpp): the pile stepped serially and on the
// domain decomposition side by side, the bound their states may part by, and the checks every
// one of them makes.
#pragma once

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/mpi/distributed_exchange.hpp>

#include "distributed_pile.hpp"

namespace grain::mpi_test {

/// The stepper settings the three tests share: matrix-free `method`, natural-map convergence
/// test (the IPM stops on its relaxed measure) with relTol `tolerance`, maxIter 100000, the
/// percussion cache (the warm start; the interior point method does not use it).
inline StepperSettings matrixFreeSettings(LocalSolverMethod method, Real tolerance) {
  StepperSettings st;
  st.deltaT = kDt;
  st.solver.localMethod = method;
  st.solver.matrixFree = true;
  st.solver.convergenceMethod = ConvergenceMethod::NaturalMap;
  st.solver.relTol = tolerance;
  st.solver.maxIter = 100000;
  st.solver.usePercussionCache = true;
  return st;
}

/// One step of both runs.
struct StepPair {
  StepStats serial;
  StepStats distributed;
};

/// What runStepping() measured. dr, dv and conserved are process 0's (the gathered states).
struct SteppingRun {
  std::vector<StepPair> steps;
  /// Both solves stop with a residual below tol * S, S = max(|q|, |r|, |u|): each step's
  /// percussions solve a problem perturbed by at most that much, so the contact velocities of the
  /// two runs may part by up to 2 tol S per step, and a body's velocity by as much. S is taken as
  /// 10 |q| of the serial step: |u| stays below |q| in a settled pile and |r| (N s, beads of 4 g)
  /// far below; the factor also covers the solution's sensitivity to the perturbation (an
  /// estimate with a margin, not a proof). The differences add up over the steps, the positions'
  /// by dt times the velocities'.
  Real velocityBound = 0.0;  ///< m/s
  Real positionBound = 0.0;  ///< m
  Real split = 0.0;          ///< most split bodies of one process over the steps
  bool conserved = true;     ///< every id exactly once in every gathered state
  Real dr = 0.0;             ///< max distance of a body's final position from the serial one (m)
  Real dv = 0.0;             ///< the same for the velocity (m/s)

  /// Every step converged, serially and distributed.
  bool converged() const {
    return std::all_of(steps.begin(), steps.end(), [](const StepPair& p) {
      return p.serial.converged && p.distributed.converged;
    });
  }
  /// Every step's contacts summed over the processes equal the serial count.
  bool contactsMatch() const {
    return std::all_of(steps.begin(), steps.end(), [](const StepPair& p) {
      return p.serial.contacts == p.distributed.contacts;
    });
  }
  /// Steps with the serial iteration count.
  int sameIterations() const {
    return static_cast<int>(std::count_if(steps.begin(), steps.end(), [](const StepPair& p) {
      return p.serial.iterations == p.distributed.iterations;
    }));
  }
  /// Steps whose serial problem has contacts.
  int solvedSteps() const {
    return static_cast<int>(std::count_if(steps.begin(), steps.end(),
                                          [](const StepPair& p) { return p.serial.contacts > 0; }));
  }
};

/// Called before step k (0-based) of the distributed run with its exchange, stepper and system.
using BeforeStep =
    std::function<void(int k, mpi::DistributedExchange&, MoreauStepper&, DynamicsSystem&)>;

/// Steps `system` `steps` times with `settings` serially and, from the same state, on the grid
/// or kd-tree decomposition of decomposition() (every process runs the serial reference too);
/// `tolerance` is the solver's relative tolerance (relTol), the scale of the bound.
inline SteppingRun runStepping(const DynamicsSystem& system, const StepperSettings& settings,
                               bool kdTree, int steps, Real tolerance,
                               const BeforeStep& beforeStep = {}) {
  DynamicsSystem serial = system;
  DynamicsSystem dist = system;
  MoreauStepper serialStepper(settings);
  MoreauStepper distStepper(settings);
  // The serial problem's |q| (m/s) per step: the scale of the error.
  Real qNorm = 0.0;
  serialStepper.setContactProblemObserver(
      [&](const BodyStorage& b, const ContactProblem& p, std::uint64_t) {
        MatrixFreeProblem mf;
        mf.build(b, p, settings.solver);
        qNorm = mf.q().norm();
      });
  const std::size_t total = serial.bodies.simulatedCount();
  SteppingRun run;
  std::map<BodyId, BodyRecord> distributed;
  {
    mpi::DistributedExchange exchange(MPI_COMM_WORLD, decomposition(dist.bodies, kdTree), 1, 1);
    exchange.keepOwnedBodies(dist.bodies);
    const StepExchanges ex{&exchange, &exchange, &exchange.reducer()};
    for (int k = 0; k < steps; ++k) {
      if (beforeStep) {
        beforeStep(k, exchange, distStepper, dist);
      }
      qNorm = 0.0;
      const StepStats s = serialStepper.step(serial);
      const StepStats d = distStepper.step(dist, ex);
      run.steps.push_back({s, d});
      run.velocityBound += 2.0 * tolerance * 10.0 * qNorm;
      run.positionBound += kDt * run.velocityBound;
      Real splitNow = static_cast<Real>(exchange.splitBodies());
      exchange.reducer().max(std::span<Real>(&splitNow, 1));
      run.split = std::max(run.split, splitNow);
      int duplicates = 0;
      const auto all = gatherBodies(dist.bodies, duplicates);
      run.conserved = run.conserved && (gRank != 0 || (duplicates == 0 && all.size() == total));
    }
    int duplicates = 0;
    distributed = gatherBodies(dist.bodies, duplicates);
  }
  if (gRank == 0) {
    const auto [dr, dv] = maxStateDifference(serial.bodies, distributed);
    run.dr = dr;
    run.dv = dv;
  }
  return run;
}

/// On process 0: "stepping (name): N steps, max |dr| .. m (bound ..), max |dv| .. m/s (bound ..),
/// " followed by `details` and a new line.
inline void printStepping(const SteppingRun& run, const std::string& name,
                          const std::string& details) {
  if (gRank != 0) {
    return;
  }
  std::printf(
      "stepping (%s): %zu steps, max |dr| %.3g m (bound %.3g), max |dv| %.3g m/s (bound %.3g), "
      "%s\n",
      name.c_str(), run.steps.size(), run.dr, run.positionBound, run.dv, run.velocityBound,
      details.c_str());
}

/// The checks of every stepping comparison: every step converges serially and distributed,
/// every id exactly once in every state, the contacts summed over the processes equal the serial
/// count, bodies were split over the processes (on more than one; not required if
/// `splitOptional`), velocities and positions within the bound.
inline void checkSteppingRun(const SteppingRun& run, const std::string& name, bool splitOptional) {
  check(run.converged(), "stepping: every step converges, serially and distributed (" + name + ")");
  check(run.conserved, "stepping: every id exactly once in every state (" + name + ")");
  check(run.contactsMatch(),
        "stepping: contacts summed over processes equal the serial count (" + name + ")");
  check(gSize == 1 || run.split > 0 || splitOptional,
        "stepping: bodies were split over processes (" + name + ")");
  check(run.dv <= run.velocityBound,
        "stepping: velocities within the tolerance's bound (" + name + ")");
  check(run.dr <= run.positionBound,
        "stepping: positions within the tolerance's bound (" + name + ")");
}

}  // namespace grain::mpi_test
