// SPDX-License-Identifier: MIT
#include "collective_record_writers.hpp"

#include "mpi_text.hpp"

namespace grain::app {

CollectiveRecordWriters::CollectiveRecordWriters(MPI_Comm comm,
                                                 const mpi::DistributedExchange& exchange,
                                                 std::uint32_t simulatedInScene, bool warmStart)
    : comm_(comm),
      exchange_(exchange),
      simulatedInScene_(simulatedInScene),
      useWarmStart_(warmStart) {}

int CollectiveRecordWriters::processes() const {
  int size = 1;
  MPI_Comm_size(comm_, &size);
  return size;
}

bool CollectiveRecordWriters::writesFolder() const {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  return rank == 0;
}

std::string CollectiveRecordWriters::fromFolderWriter(const std::string& text) {
  return broadcastText(comm_, text);
}

void CollectiveRecordWriters::beginStates(const std::filesystem::path& record,
                                          const DynamicsSystem& system, MoreauStepper& stepper) {
  if (useWarmStart_) {
    warmStart_ = std::make_unique<CollectiveWarmStart>(comm_, record);
  }
  sim_ = std::make_unique<CollectiveSimWriter>(
      comm_, record / "SimState.sim", io::AdditionalBytesType::ProcessMaterialOverlapGeomId,
      simulatedInScene_);
  if (warmStart_) {
    warmStart_->store(stepper.warmStartCache(), system.time, 0);
  }
  sim_->writeState(system.time, system.bodies, {}, exchange_.ownedBodyTags());
}

void CollectiveRecordWriters::continueStates(const std::filesystem::path& record,
                                             const io::ResumePoint& resume) {
  if (useWarmStart_) {
    warmStart_ = std::make_unique<CollectiveWarmStart>(comm_, record);
  }
  sim_ = std::make_unique<CollectiveSimWriter>(comm_, record / "SimState.sim", resume.simHeader,
                                               resume.stateIndex + 1);
}

void CollectiveRecordWriters::writeState(const DynamicsSystem& system, MoreauStepper& stepper,
                                         std::uint64_t step) {
  // The warm-start cache of the state first, so that a restart from it continues exactly.
  if (warmStart_) {
    warmStart_->store(stepper.warmStartCache(), system.time, step);
  }
  sim_->writeState(system.time, system.bodies, stepper.totalOverlap(), exchange_.ownedBodyTags());
}

void CollectiveRecordWriters::closeStates() {
  if (sim_) {
    sim_->close();
  }
}

}  // namespace grain::app
