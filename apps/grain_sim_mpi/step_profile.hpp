// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <mpi.h>

#include <grain/mpi/communicator.hpp>

namespace grain::app {

/// Where a process's steps spend their time, measured with MPI_Wtime: on a cluster the wall
/// time, under SimGrid's SMPI the simulated time (the core's stage timers use the host's clock,
/// which under SMPI adds up the work of every simulated process). Per process, accumulated over
/// the steps after the first (the first step sends every remote copy in full and is reported on
/// its own):
///  - step: from the start of the step's load-balancing check to the end of its statistics
///    reduction (the stop check and the records between steps are not in it);
///  - exchange: neighbour messages (body exchange, split planning, split-body averaging),
///    waiting for the partners included;
///  - collectives: reductions (convergence checks of the coupled processes, step statistics,
///    traffic) and the communicator split of the coupled processes, waiting included;
///  - rebuild: the load balancer's check and rebuilds (decomposition and body migration);
///  - compute: the rest of the step.
/// With them, per step and outside the rebuilds: the neighbour messages and their bytes (summed
/// over the processes) and the reductions (MpiReducer calls, the maximum over the processes).
/// And over the rebuilds between steps that switched the decomposition: the
/// messages of the body migration (a sparse exchange: one per process that gets bodies or
/// warm-start entries), their bytes and the bodies that moved.
class StepProfile {
 public:
  void beginStep();
  /// Around the load balancer's check and rebuild; `traffic`: the exchange's counters, whose
  /// time in the rebuild's body migration counts as rebuild, not as exchange.
  void beginRebuild(const mpi::TrafficCounters& traffic);
  /// `rebuilt`: the decomposition was switched (its migration's messages are counted), and
  /// `migrated` bodies left this process.
  void endRebuild(const mpi::TrafficCounters& traffic, bool rebuilt, std::size_t migrated);
  /// `traffic`: the exchange's counters of this step (reset at its start), read at its end.
  void endStep(const mpi::TrafficCounters& traffic);

  /// The lines for the run summary, on the first process of `comm` (empty on the others): the
  /// seconds per step of each part, the maximum and the mean over the processes, the processes
  /// that computed most and least and the shortest and longest step, then the messages, bytes and
  /// reductions per step, then (after rebuilds) the migration's messages per rebuild. Collective
  /// (three reductions). `stepsBefore`: the steps made before this run's first (a restart
  /// continues from that step), so that the lines name the steps by the run's step numbers.
  std::string summary(MPI_Comm comm, std::uint64_t stepsBefore = 0) const;

 private:
  enum Part { kStep, kCompute, kExchange, kCollectives, kRebuild, kPartCount };
  /// Counts per step (doubles, reduced with the parts).
  enum Count { kMessages, kBytes, kReductions, kCounts };
  double total_[kPartCount] = {};  ///< s, steps after the first
  double first_[kPartCount] = {};  ///< s, the first step
  double counts_[kCounts] = {};    ///< steps after the first
  double shortest_ = 0.0;          ///< s, the shortest of the steps after the first
  double longest_ = 0.0;           ///< s, the longest of the steps after the first
  std::uint64_t steps_ = 0;
  double stepStart_ = 0.0;
  double rebuildStart_ = 0.0;
  double rebuild_ = 0.0;                ///< s, this step
  double rebuildTraffic_ = 0.0;         ///< s of `seconds` in this step's rebuild
  double rebuildCollective_ = 0.0;      ///< s of `collectiveSeconds` in this step's rebuild
  double rebuildCounts_[kCounts] = {};  ///< of this step's rebuild
  /// Over the rebuilds that switched the decomposition: their number, the messages and bytes
  /// this process sent in their migrations, and the most messages it sent in one.
  double migrations_ = 0.0;
  double migrationMessages_ = 0.0;
  double migrationBytes_ = 0.0;
  double mostMigrationMessages_ = 0.0;
  double migratedBodies_ = 0.0;
  mpi::TrafficCounters atRebuild_;
};

}  // namespace grain::app
