// SPDX-License-Identifier: MIT
// Matrix-free APGD on the domain decomposition against the serial solver, on any number of
// processes (registered per rank count under the ctest label "mpi"), with a grid and a kd-tree:
//   - the Delassus product y = W x over a settled pile's contacts, each process its share of the
//     contacts with the split bodies' impulses summed over their copies: the serial product to
//     round-off (and without the sum it is not, on more than one process);
//   - the pile stepped with matrix-free APGD (warm-started): every step converges, its natural-map
//     error is the serial step's, and positions and velocities follow the serial run within a
//     bound derived from the solver's tolerance; also with the grid rebuilt (turned) every 10
//     steps, bodies and warm-start entries moving to new owners.
// Every process runs the serial reference itself; process 0 compares. Prints "N passed, N failed".
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include <grain/core/collision/collision_detector.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/mpi/distributed_exchange.hpp>
#include <grain/mpi/kd_tree_topology.hpp>
#include <grain/mpi/topology.hpp>

#include "distributed_pile.hpp"
#include "distributed_stepping.hpp"

namespace {

using namespace grain;
using namespace grain::mpi_test;

constexpr Real kTolerance = 1e-8;  ///< natural-map tolerance of the APGD runs

StepperSettings apgdSettings() {
  return matrixFreeSettings(LocalSolverMethod::Apgd, kTolerance);
}

/// One contact's row of a product, keyed by its bodies.
struct Row {
  BodyId a;
  BodyId b;
  Vec3 y;
  Vec3 unsummed;
};

/// A fixed percussion (contact frame, N s) for the contact of bodies (a, b): normal and
/// tangential parts, different for every pair.
Vec3 fixedPercussion(BodyId a, BodyId b) {
  const auto s = static_cast<Real>(a & 0xffffffffu);
  const auto t = static_cast<Real>(b & 0xffffffffu);
  return Vec3(1e-4 * (1.5 + std::sin(s + 2.0 * t)), 3e-5 * std::cos(s - t),
              2e-5 * std::sin(3.0 * s + t));
}

/// W x for the contacts of `system` at its current positions: serially (exchange null) or this
/// process's share with the split bodies' impulses summed; with each row, the same product
/// without the sum.
std::vector<Row> product(DynamicsSystem& system, mpi::DistributedExchange* exchange) {
  BodyStorage& bodies = system.bodies;
  std::vector<detail::PercussionCacheEntry> none;
  if (exchange != nullptr) {
    exchange->exchangeBodies(system, none);
    bodies.sortById();
  }
  CollisionDetector detector;
  ContactStorage contacts;
  detector.detect(bodies, system.shapes, contacts);
  std::vector<std::uint32_t> multiplicity;
  if (exchange != nullptr) {
    exchange->selectContacts(bodies, contacts);
    exchange->planSplits(bodies, contacts, multiplicity, none);
  }
  const ContactProblem problem{contacts,
                               system.contactParameters,
                               bodies.velocitiesStart(),
                               bodies.omegasBodyStart(),
                               kDt,
                               multiplicity};
  MatrixFreeProblem mf;
  mf.build(bodies, problem, apgdSettings().solver);
  const bool coupled = exchange != nullptr && exchange->beginSolve(bodies, mf.bodyStorageIndex());
  VecX x(static_cast<Eigen::Index>(3 * contacts.size()));
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    x.segment<3>(static_cast<Eigen::Index>(3 * c)) =
        fixedPercussion(bodies.ids()[contacts.bodyA()[c]], bodies.ids()[contacts.bodyB()[c]]);
  }
  VecX y, unsummed;
  mf.delassus().multiply(x, y, [&](std::span<Vec3> linear, std::span<Vec3> angular) {
    if (coupled) {
      exchange->sum(linear, angular);
    }
  });
  mf.delassus().multiply(x, unsummed);
  std::vector<Row> rows;
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const auto k = static_cast<Eigen::Index>(3 * c);
    rows.push_back({bodies.ids()[contacts.bodyA()[c]], bodies.ids()[contacts.bodyB()[c]],
                    y.segment<3>(k), unsummed.segment<3>(k)});
  }
  return rows;
}

/// The rows of every process, on process 0.
std::vector<Row> gatherRows(const std::vector<Row>& mine) {
  const int bytes = static_cast<int>(mine.size() * sizeof(Row));
  std::vector<int> counts(static_cast<std::size_t>(gSize)),
      offsets(static_cast<std::size_t>(gSize));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < gSize; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<Row> all(gRank == 0 ? static_cast<std::size_t>(total) / sizeof(Row) : 0);
  MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  return all;
}

void checkProduct(bool kdTree) {
  const std::string name =
      std::string(kdTree ? "kd-tree" : "grid") + ", " + std::to_string(gSize) + " processes";
  DynamicsSystem serial = settledPile();
  DynamicsSystem dist = serial;
  const std::vector<Row> reference = product(serial, nullptr);
  std::map<std::pair<BodyId, BodyId>, Vec3> expected;
  Real scale = 0.0;
  for (const Row& r : reference) {
    expected[{r.a, r.b}] = r.y;
    scale = std::max(scale, r.y.lpNorm<Eigen::Infinity>());
  }
  Real split = 0.0;
  std::vector<Row> rows;
  {
    mpi::DistributedExchange exchange(MPI_COMM_WORLD, decomposition(dist.bodies, kdTree), 1, 1);
    exchange.keepOwnedBodies(dist.bodies);
    rows = gatherRows(product(dist, &exchange));
    split = static_cast<Real>(exchange.splitBodies());
    exchange.reducer().max(std::span<Real>(&split, 1));
  }
  if (gRank != 0) {
    return;
  }
  std::map<std::pair<BodyId, BodyId>, int> seen;
  Real error = 0.0, unsummedError = 0.0;
  bool allKnown = true;
  for (const Row& r : rows) {
    const auto it = expected.find({r.a, r.b});
    if (it == expected.end()) {
      allKnown = false;
      continue;
    }
    ++seen[{r.a, r.b}];
    error = std::max(error, (r.y - it->second).lpNorm<Eigen::Infinity>());
    unsummedError = std::max(unsummedError, (r.unsummed - it->second).lpNorm<Eigen::Infinity>());
  }
  bool once = seen.size() == expected.size();
  for (const auto& [key, count] : seen) {
    once = once && count == 1;
  }
  std::printf(
      "product (%s): %zu contacts, %g split bodies on the busiest process, max |y - y_serial|"
      " %.3g of max |y| %.3g (without the sum: %.3g)\n",
      name.c_str(), reference.size(), split, error, scale, unsummedError);
  check(reference.size() > 150, "product: the settled pile has contacts (" + name + ")");
  check(allKnown && once,
        "product: every serial contact solved by exactly one process (" + name + ")");
  check(error <= 1e-13 * scale,
        "product: W x equals the serial product to round-off (" + name + ")");
  check(gSize == 1 || (split > 0 && unsummedError > 1e-3 * scale),
        "product: without the body sum the split bodies' rows differ (" + name + ")");
}

/// `rebuildEvery` > 0: the decomposition is rebuilt (a turned grid) every that many steps, the
/// warm-start cache moving with the bodies.
void checkStepping(bool kdTree, int rebuildEvery = 0) {
  const std::string name = std::string(kdTree ? "kd-tree" : "grid") +
                           (rebuildEvery > 0 ? " rebuilt" : "") + ", " + std::to_string(gSize) +
                           " processes";
  constexpr int kSteps = 40;
  const SteppingRun run = runStepping(
      settledPile(), apgdSettings(), kdTree, kSteps, kTolerance,
      [rebuildEvery](int k, mpi::DistributedExchange& exchange, MoreauStepper& stepper,
                     DynamicsSystem& dist) {
        if (rebuildEvery > 0 && k > 0 && k % rebuildEvery == 0) {
          std::vector<detail::PercussionCacheEntry> cache = stepper.takeWarmStartCache();
          exchange.setTopology(turnedGrid(dist.bodies, k / rebuildEvery), dist, cache);
        }
      });
  if (gRank != 0) {
    return;
  }
  Real errorGap = 0.0;  // max over steps of |e_dist - e_serial| / tolerance
  for (const StepPair& p : run.steps) {
    errorGap = std::max(
        errorGap, std::abs(p.distributed.naturalMapError - p.serial.naturalMapError) / kTolerance);
  }
  char details[200];
  std::snprintf(details, sizeof details,
                "max |e - e_serial| %.3g tol, serial iteration count in %d steps, split bodies %g",
                errorGap, run.sameIterations(), run.split);
  printStepping(run, name, details);
  checkSteppingRun(run, name, false);
  // The same iteration on the same problem: the global error of each step is the serial one,
  // unless round-off moves the stop by an iteration (both below the tolerance then).
  check(errorGap <= 1.0, "stepping: the natural-map error is the serial step's (" + name + ")");
  check(run.sameIterations() >= kSteps / 2,
        "stepping: most steps take the serial iteration count (" + name + ")");
}

}  // namespace

int main(int argc, char** argv) {
  return runChecks(argc, argv, [] {
    for (const bool kdTree : {false, true}) {
      checkProduct(kdTree);
      checkStepping(kdTree);
    }
    checkStepping(false, 10);
  });
}
