// SPDX-License-Identifier: MIT
// What the distributed solver tests on the settled pile (distributed_apgd_test.cpp,
// distributed_ipm_test.cpp, distributed_pqn_test.cpp; the pile in tests/common/settled_pile.hpp)
// share: the pass/fail count of process 0, the grid and kd-tree decompositions, the gathering of
// every process's bodies on process 0 (their stepping comparison: distributed_stepping.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/mpi/kd_tree_topology.hpp>
#include <grain/mpi/topology.hpp>

#include "../common/settled_pile.hpp"

namespace grain::mpi_test {

/// Checks passed and failed on process 0; this process's rank and the number of processes.
inline int gPassed = 0;
inline int gFailed = 0;
inline int gRank = 0;
inline int gSize = 1;

/// Counts a check on process 0 (prints the failed ones).
inline void check(bool ok, const std::string& what) {
  if (gRank != 0) {
    return;
  }
  if (ok) {
    ++gPassed;
  } else {
    ++gFailed;
    std::printf("FAILED: %s\n", what.c_str());
  }
}

/// The main() of a test program: initialises MPI and gRank, gSize, runs `checks`, prints
/// "N passed, N failed" on process 0; returns the exit status (0 if no check failed).
template <class Checks>
int runChecks(int argc, char** argv, const Checks& checks) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  checks();
  if (gRank == 0) {
    std::printf("%d passed, %d failed\n", gPassed, gFailed);
  }
  MPI_Finalize();
  return gFailed == 0 ? 0 : 1;
}

// The pile itself (no MPI): tests/common/settled_pile.hpp.
using test::settledPile;
inline constexpr Real kDt = test::kPileDt;  ///< time step of the pile (s)

/// A grid over the simulated bodies, or a kd-tree (Zoltan RCB) over their centres, each process
/// contributing the bodies of every size-th ordinal.
inline std::shared_ptr<const mpi::Topology> decomposition(const BodyStorage& bodies, bool kdTree) {
  Vec3 lo = Vec3::Constant(1e300), hi = Vec3::Constant(-1e300);
  mpi::WeightedPoints points;
  std::size_t ordinal = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i)) {
      lo = lo.cwiseMin(bodies.positions()[i]);
      hi = hi.cwiseMax(bodies.positions()[i]);
      if (static_cast<int>(ordinal++ % static_cast<std::size_t>(gSize)) == gRank) {
        points.add(bodies.positions()[i], 1.0, bodies.ids()[i], 0);
      }
    }
  }
  if (kdTree) {
    return mpi::KdTreeTopology::build(MPI_COMM_WORLD, points, mpi::KdTreeSettings{});
  }
  lo -= Vec3::Constant(0.01);
  hi += Vec3::Constant(0.01);
  return std::make_shared<mpi::GridTopology>(
      lo, hi, mpi::GridTopology::dimensionsForExtent(gSize, hi - lo));
}

/// A grid over the current box of all processes' bodies with its dimensions turned by `turn`
/// (a rebuild then moves most bodies to another process).
inline std::shared_ptr<const mpi::Topology> turnedGrid(const BodyStorage& bodies, int turn) {
  Vec3 lo = Vec3::Constant(1e300), hi = Vec3::Constant(-1e300);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i)) {
      lo = lo.cwiseMin(bodies.positions()[i]);
      hi = hi.cwiseMax(bodies.positions()[i]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  lo -= Vec3::Constant(0.01);
  hi += Vec3::Constant(0.01);
  std::array<int, 3> dims = mpi::GridTopology::dimensionsForExtent(gSize, hi - lo);
  std::rotate(dims.begin(), dims.begin() + turn % 3, dims.end());
  return std::make_shared<mpi::GridTopology>(lo, hi, dims);
}

/// A body's id, position (m) and velocity (m/s).
struct BodyRecord {
  BodyId id;
  Vec3 position;
  Vec3 velocity;
};

/// The local simulated bodies of every process, on process 0 (keyed by id; `duplicates` counts
/// ids seen more than once).
inline std::map<BodyId, BodyRecord> gatherBodies(const BodyStorage& bodies, int& duplicates) {
  std::vector<BodyRecord> mine;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i) && bodies.ownerships()[i] == BodyOwnership::Local) {
      mine.push_back({bodies.ids()[i], bodies.positions()[i], bodies.velocities()[i]});
    }
  }
  const int bytes = static_cast<int>(mine.size() * sizeof(BodyRecord));
  std::vector<int> counts(static_cast<std::size_t>(gSize)),
      offsets(static_cast<std::size_t>(gSize));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < gSize; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<BodyRecord> all(gRank == 0 ? static_cast<std::size_t>(total) / sizeof(BodyRecord)
                                         : 0);
  MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  std::map<BodyId, BodyRecord> out;
  duplicates = 0;
  for (const BodyRecord& b : all) {
    duplicates += out.contains(b.id) ? 1 : 0;
    out[b.id] = b;
  }
  return out;
}

/// Largest distance of position (m) and of velocity (m/s) between every simulated body of the
/// serial run and its gathered distributed state; 1e300 for both if a body is missing.
inline std::pair<Real, Real> maxStateDifference(const BodyStorage& serial,
                                                const std::map<BodyId, BodyRecord>& distributed) {
  Real dr = 0.0, dv = 0.0;
  for (std::size_t i = 0; i < serial.size(); ++i) {
    if (!serial.isSimulated(i)) {
      continue;
    }
    const auto it = distributed.find(serial.ids()[i]);
    if (it == distributed.end()) {
      return {1e300, 1e300};
    }
    dr = std::max(dr, (it->second.position - serial.positions()[i]).norm());
    dv = std::max(dv, (it->second.velocity - serial.velocities()[i]).norm());
  }
  return {dr, dv};
}

}  // namespace grain::mpi_test
