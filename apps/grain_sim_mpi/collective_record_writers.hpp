// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <mpi.h>

#include <grain/app/run_record.hpp>
#include <grain/mpi/distributed_exchange.hpp>

#include "collective_sim_writer.hpp"
#include "collective_warm_start.hpp"

namespace grain::app {

/// The record writers of a distributed run: SimState.sim and the warm-start data written by all
/// processes of `comm` together with MPI-IO (CollectiveSimWriter, CollectiveWarmStart); the first
/// process writes the folder's other files. Every process's bodies and warm-start entries go to
/// the files; the .sim file has grain-sim-mpi's extra bytes (rank, material, overlap, global
/// geometry id, the latter from the exchange's owned-body tags).
class CollectiveRecordWriters final : public RecordWriters {
 public:
  /// `simulatedInScene`: the simulated bodies of the scene (all processes together);
  /// `warmStart`: the solver warm-starts (usePercussionCache), so each state stores its cache.
  CollectiveRecordWriters(MPI_Comm comm, const mpi::DistributedExchange& exchange,
                          std::uint32_t simulatedInScene, bool warmStart);

  int processes() const override;
  bool writesFolder() const override;
  std::string fromFolderWriter(const std::string& text) override;
  void beginStates(const std::filesystem::path& record, const DynamicsSystem& system,
                   MoreauStepper& stepper) override;
  void continueStates(const std::filesystem::path& record, const io::ResumePoint& resume) override;
  void writeState(const DynamicsSystem& system, MoreauStepper& stepper,
                  std::uint64_t step) override;
  void closeStates() override;

 private:
  MPI_Comm comm_;
  const mpi::DistributedExchange& exchange_;
  std::uint32_t simulatedInScene_;
  bool useWarmStart_;
  std::unique_ptr<CollectiveSimWriter> sim_;
  std::unique_ptr<CollectiveWarmStart> warmStart_;  ///< null without usePercussionCache
};

}  // namespace grain::app
