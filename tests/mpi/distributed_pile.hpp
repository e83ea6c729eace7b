// SPDX-License-Identifier: MIT
// The settled pile of the distributed solver tests (distributed_apgd_test.cpp,
// distributed_pqn_test.cpp) and what they share: the pass/fail count of process 0, the grid and
// kd-tree decompositions, the gathering of every process's bodies on process 0.
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

inline void addSphere(DynamicsSystem& s, BodyId id, Real r, const Vec3& position) {
  BodyDef d;
  d.id = id;
  d.shape = s.shapes.add(Sphere{r});
  d.mass = 1000.0 * 4.0 / 3.0 * M_PI * r * r * r;
  d.inertiaBody = Vec3::Constant(0.4 * d.mass * r * r);
  d.position = position;
  s.addBody(d);
}

inline void addWall(DynamicsSystem& s, BodyId id, const Vec3& normal, const Vec3& position) {
  BodyDef d;
  d.id = id;
  d.motion = BodyMotion::Static;
  d.shape = s.shapes.add(Halfspace{normal});
  d.position = position;
  s.addBody(d);
}

/// A box (floor and four walls) with a loose column of 4 x 4 x 6 spheres (r = 1 cm) dropped into
/// it, mu = 0.3.
inline DynamicsSystem pile() {
  DynamicsSystem s;
  s.externalForces.addGravity(GravityField{});
  const Real r = 0.01, w = 0.1;
  addWall(s, makeBodyId(0, 0), Vec3(0, 0, 1), Vec3(0, 0, 0));
  addWall(s, makeBodyId(0, 1), Vec3(1, 0, 0), Vec3(0, 0, 0));
  addWall(s, makeBodyId(0, 2), Vec3(-1, 0, 0), Vec3(w, 0, 0));
  addWall(s, makeBodyId(0, 3), Vec3(0, 1, 0), Vec3(0, 0, 0));
  addWall(s, makeBodyId(0, 4), Vec3(0, -1, 0), Vec3(0, w, 0));
  std::uint32_t n = 0;
  for (int z = 0; z < 6; ++z) {
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) {
        const Real jitter = 0.002 * std::sin(1.7 * n + 0.3 * z);
        addSphere(s, makeBodyId(1, n), r,
                  Vec3(0.0125 + 0.025 * x + jitter, 0.0125 + 0.025 * y - jitter,
                       0.011 + 0.022 * z + 0.3 * jitter));
        ++n;
      }
    }
  }
  ContactParameter p;
  p.mu = 0.3;
  s.contactParameters.setStandard(p);
  return s;
}

constexpr Real kDt = 1e-3;  ///< time step of the pile (s)

/// The pile after `steps` serial SOR steps: after 150 (default) settled into a dense contact
/// network (about 165 contacts), after 20 landing (its first contacts).
inline DynamicsSystem settledPile(int steps = 150) {
  DynamicsSystem s = pile();
  StepperSettings st;
  st.deltaT = kDt;
  st.solver.relTol = 1e-10;
  st.solver.absTol = 1e-12;
  st.solver.maxIter = 5000;
  MoreauStepper stepper(st);
  for (int k = 0; k < steps; ++k) {
    stepper.step(s);
  }
  return s;
}

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
