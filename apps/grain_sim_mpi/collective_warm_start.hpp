// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <mpi.h>

#include <grain/core/solvers/solver_data.hpp>
#include <grain/io/restart.hpp>

namespace grain::app {

/// RestartCache.bin of a distributed run (the format of io::WarmStartCheckpoint): every contact is
/// solved by exactly one process, so the processes' warm-start caches together are the run's;
/// each writes its entries with MPI-IO at an offset from an exclusive prefix sum of the counts.
/// The first process moves the older files aside and renames the new one into place as a serial
/// run does, so a run killed at any moment keeps the cache of its last complete state, and a
/// restart on any process count (or a serial one) finds it. Collective: every call on every
/// process; errors are thrown on every process.
class CollectiveWarmStart {
 public:
  CollectiveWarmStart(MPI_Comm comm, std::filesystem::path record);
  /// Call just before writing the state at `time` (s) after `step` steps, with this process's
  /// warm-start cache (the contacts it solved in the last step).
  void store(const std::vector<detail::PercussionCacheEntry>& cache, double time,
             std::uint64_t step);

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  std::filesystem::path record_;
  io::WarmStartCheckpoint checkpoint_;  ///< used by the first process only
  std::vector<char> bytes_;
};

}  // namespace grain::app
