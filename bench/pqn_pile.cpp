// SPDX-License-Identifier: MIT
// PQN on a settled dense pile: per step the Newton steps, GMRES iterations and SOR fallback sweeps
// of Koziara's projected quasi-Newton method, against the sweeps of the Delassus SOR prox on the
// same problems. The pile is the 96-sphere one of the distributed solver tests
// (tests/mpi/distributed_pile.hpp: 4 x 4 x 6 spheres of r = 1 cm dropped into a 10 cm box,
// mu = 0.3, dt = 1 ms; built by tests/common/settled_pile.hpp), settled by SETTLE steps of SOR
// at relTol 1e-10, then stepped STEPS steps with PQN (warm-started from the previous PQN step, the
// first step from zero, as in distributed_pqn_test). Every step's contact problem is also solved,
// from the same warm start, by the assembled SOR prox to the same tolerance (the "sor" column).
// With --matrix-free PQN runs on the matrix-free operator instead of the assembled matrix.
//
// Usage: grain-pqn_pile [--tol T] [--measure natural-map|koziara] [--settle N] [--steps N]
//                       [--matrix-free] [--max-newton N] [--unscaled]
//        defaults: natural map 1e-6, 150 settling steps, 10 PQN steps, 1000 Newton steps.
// --unscaled runs PQN without pqnScaling (the Newton variable R itself, local_pqn.hpp).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>

#include "../tests/common/settled_pile.hpp"

namespace {

using namespace grain;

/// The warm start of the stepper's local solver: per contact the cached percussion (contact
/// frame), 0 without an entry.
VecX warmStartGuess(const BodyStorage& bodies, const ContactStorage& contacts,
                    const std::vector<detail::PercussionCacheEntry>& cache) {
  std::vector<detail::PercussionCacheKey> keys;
  std::vector<std::uint32_t> ordinal;
  detail::makePercussionCacheKeys(bodies, contacts, keys, ordinal);
  VecX guess = VecX::Zero(static_cast<Eigen::Index>(3 * contacts.size()));
  detail::forEachCachedPercussion(bodies, contacts, keys, ordinal, cache,
                                  [&](std::uint32_t c, const Vec3& p) {
                                    guess.segment<3>(static_cast<Eigen::Index>(3 * c)) = p;
                                  });
  return guess;
}

int usage() {
  std::fputs(
      "usage: grain-pqn_pile [--tol T] [--measure natural-map|koziara] [--settle N] [--steps N]\n"
      "                      [--matrix-free] [--max-newton N] [--unscaled]\n",
      stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Real tol = 1e-6;
  bool koziara = false;
  int settle = 150;
  int steps = 10;
  bool matrixFree = false;
  unsigned maxNewton = 1000;
  bool scaling = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--tol" && hasValue) {
      tol = std::atof(argv[++i]);
    } else if (a == "--measure" && hasValue) {
      const std::string m = argv[++i];
      if (m != "natural-map" && m != "koziara") {
        return usage();
      }
      koziara = m == "koziara";
    } else if (a == "--settle" && hasValue) {
      settle = std::atoi(argv[++i]);
    } else if (a == "--steps" && hasValue) {
      steps = std::atoi(argv[++i]);
    } else if (a == "--matrix-free") {
      matrixFree = true;
    } else if (a == "--unscaled") {
      scaling = false;
    } else if (a == "--max-newton" && hasValue) {
      maxNewton = static_cast<unsigned>(std::atoi(argv[++i]));
    } else {
      return usage();
    }
  }
  if (!(tol > 0.0) || settle < 0 || steps < 1 || maxNewton < 1) {
    return usage();
  }

  constexpr Real kDt = 1e-3;
  DynamicsSystem system = test::pile();
  StepperSettings sorSettings;
  sorSettings.deltaT = kDt;
  sorSettings.solver.relTol = 1e-10;
  sorSettings.solver.absTol = 1e-12;
  sorSettings.solver.maxIter = 5000;
  MoreauStepper settling(sorSettings);
  for (int k = 0; k < settle; ++k) {
    settling.step(system);
  }

  StepperSettings st;
  st.deltaT = kDt;
  st.solver.localMethod = LocalSolverMethod::Pqn;
  st.solver.matrixFree = matrixFree;
  st.solver.convergenceMethod =
      koziara ? ConvergenceMethod::Koziara : ConvergenceMethod::NaturalMap;
  st.solver.relTol = tol;
  st.solver.maxIter = 100000;
  st.solver.alphaSorProx = 1.0;
  st.solver.usePercussionCache = true;
  st.solver.pqnMaxIter = maxNewton;
  st.solver.pqnScaling = scaling;
  MoreauStepper stepper(st);

  // The SOR reference: the step's assembled problem from the step's own warm start (the
  // percussions PQN's stepper starts from, read from its cache before the step).
  LocalSolverSettings sor = localSolverSettings(st.solver);
  sor.method = LocalSolverMethod::SorProx;
  unsigned sorSweeps = 0;
  bool sorConverged = true;
  std::vector<detail::PercussionCacheEntry> cacheBefore;
  stepper.setContactProblemObserver(
      [&](const BodyStorage& bodies, const ContactProblem& problem, std::uint64_t) {
        const LocalProblem local = assembleLocalProblem(bodies, problem, st.solver);
        const VecX guess = warmStartGuess(bodies, problem.contacts, cacheBefore);
        const LocalSolverResult r = solve(local, sor, &guess);
        sorSweeps = r.iterations;
        sorConverged = r.converged;
      });

  std::printf("# settled pile: %d SOR steps; PQN (%s%s) on %s, tol %g; %u Newton steps at most\n",
              settle, matrixFree ? "matrix-free" : "assembled", scaling ? "" : ", unscaled",
              koziara ? "Koziara's measure" : "the natural map", tol, maxNewton);
  std::printf("%4s %8s %7s %7s %9s %7s %12s %12s %5s\n", "step", "contacts", "newton", "gmres",
              "fallback", "sor", "natural-map", "koziara", "conv");
  unsigned long newtonSum = 0, gmresSum = 0, fallbackSum = 0, sorSum = 0;
  int fallbackSteps = 0, sorUnconverged = 0;
  for (int k = 0; k < steps; ++k) {
    cacheBefore = stepper.warmStartCache();
    sorSweeps = 0;
    sorConverged = true;
    const StepStats s = stepper.step(system);
    const LocalSolverResult& r = stepper.localResult();
    const unsigned newton = s.contacts > 0 ? r.iterations - r.fallbackIterations : 0;
    const unsigned gmres = s.contacts > 0 ? r.gmresIterations : 0;
    const unsigned fallback = s.contacts > 0 ? r.fallbackIterations : 0;
    std::printf("%4d %8zu %7u %7u %9u %7u %12.3e %12.3e %5s\n", k + 1, s.contacts, newton, gmres,
                fallback, sorSweeps, s.naturalMapError, s.koziaraError, s.converged ? "yes" : "no");
    newtonSum += newton;
    gmresSum += gmres;
    fallbackSum += fallback;
    sorSum += sorSweeps;
    fallbackSteps += static_cast<int>(s.fallbacks);
    sorUnconverged += sorConverged ? 0 : 1;
  }
  const double n = steps;
  std::printf(
      "# mean per step: %.1f Newton steps, %.1f GMRES iterations, %.1f fallback sweeps (%d of %d "
      "steps fell back); SOR alone %.1f sweeps (%d steps unconverged)\n",
      static_cast<double>(newtonSum) / n, static_cast<double>(gmresSum) / n,
      static_cast<double>(fallbackSum) / n, fallbackSteps, steps, static_cast<double>(sorSum) / n,
      sorUnconverged);
  return 0;
}
