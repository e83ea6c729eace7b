// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/solvers/solver_data.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/sim_file.hpp>
#include <grain/io/simulated_share.hpp>

#include "shared_read_file.hpp"

/// Reading a state (and the warm-start cache) of a .sim record on all processes together, so that
/// no process reads more than about 1/P of it: process k reads one contiguous block of the records
/// (SharedReadFile: MPI_File_read_at, or pread under SMPI) and builds those bodies itself; only
/// their ids (to check the state) and the warm-start entries travel before the first
/// decomposition, which moves each body once, to its owner. The io library stays free of MPI: it
/// decodes the records (io::decodeSimBody, io::decodeWarmStartEntry).
namespace grain::app {

/// Bytes this process read from the record's files.
struct CollectiveReadBytes {
  std::uint64_t sim = 0;    ///< from SimState.sim (or the GlobalInitialCondition file)
  std::uint64_t cache = 0;  ///< from RestartCache.bin / RestartCache.prev.bin
};

/// A .sim file opened by all processes of a communicator. Collective: every call on every
/// process; errors are thrown on every process with the same message.
class CollectiveStateReader {
 public:
  /// Opens `file`; the first process reads and checks the header (io::decodeSimHeader) and
  /// sends it to the others. Throws io::SimFileError naming the file.
  CollectiveStateReader(MPI_Comm comm, std::filesystem::path file);
  ~CollectiveStateReader();
  CollectiveStateReader(const CollectiveStateReader&) = delete;
  CollectiveStateReader& operator=(const CollectiveStateReader&) = delete;

  const io::SimFileHeader& header() const { return header_; }
  std::size_t stateCount() const { return stateCount_; }
  bool truncated() const { return trailingBytes_ != 0; }
  /// As io::SimFileReader::truncationWarning.
  std::string truncationWarning() const;
  /// Time (s) of state k: read by the first process.
  double readTime(std::size_t k);

  /// Reads this process's block of state k: process r of P reads the records [r N / P, (r + 1) N
  /// / P) (one contiguous read per 2^20 records) and keeps those `keep(id)` accepts, in file
  /// order. Returns the state's time (s). Throws io::SimFileError on every process.
  double readBlock(std::size_t k, const std::function<bool(BodyId)>& keep,
                   std::vector<io::SimBodyState>& records);

  /// Bytes this process read from the file so far.
  std::uint64_t bytesRead() const { return bytesRead_; }

 private:
  [[noreturn]] void fail(const std::string& what) const;

  MPI_Comm comm_ = MPI_COMM_NULL;  ///< a duplicate of the caller's (its own tags)
  int rank_ = 0;
  int size_ = 1;
  std::filesystem::path path_;
  SharedReadFile file_;
  io::SimFileHeader header_;
  std::uint64_t fileSize_ = 0;
  std::size_t stateCount_ = 0;
  std::uint64_t trailingBytes_ = 0;
  std::uint64_t bytesRead_ = 0;
};

/// Who read which body's record of a state. Every process sends the ids of the records it read
/// (CollectiveStateReader::readBlock) to the process that built each body (`builderOf`: the
/// scene's ordinal shares, io::SimulatedOrdinals) in one sparse exchange of 8 bytes per body; that
/// process checks its bodies against them and remembers the reader of each, so that what follows
/// a body (its warm-start entries) can be sent to the process that holds it. Collective.
class RecordDirectory {
 public:
  /// `built`: the bodies this process built (its share). A body read twice is an
  /// io::SimFileError ("state k: body (g,n) occurs twice") on every process.
  RecordDirectory(MPI_Comm comm, std::size_t k, const std::vector<io::SimBodyState>& read,
                  const BodyStorage& built, const std::function<int(BodyId)>& builderOf);
  /// The process that read the record of `id`, a body this process built; -1 if none did.
  int readerOf(BodyId id) const;
  /// The simulated bodies this process built that no process read, by increasing id.
  const std::vector<BodyId>& missing() const { return missing_; }

 private:
  std::vector<std::pair<BodyId, int>> readers_;  ///< of the bodies built here, by id
  std::vector<BodyId> missing_;
};

/// The warm-start cache of the state at `time` (s) after `step` steps, read together from
/// RECORD/RestartCache.bin, else RestartCache.prev.bin (the first whose header names that state):
/// each process reads a contiguous 1/P of the entries and sends each to the process that built
/// its home body (the pair's smaller id if simulated, else the larger: `builderOf`; an entry
/// without a simulated body is dropped), which hands it on to the process that read the home
/// body's record (`directory`). Returns the entries sent to this process, unsorted; nullopt on
/// every process if neither file belongs to the state. Collective.
std::optional<std::vector<detail::PercussionCacheEntry>> readWarmStartTogether(
    MPI_Comm comm, const std::filesystem::path& record, double time, std::uint64_t step,
    const RecordDirectory& directory, const std::function<int(BodyId)>& builderOf,
    std::uint64_t& bytesRead);

/// Builds, in place of the bodies this process built first, those of the given ids (increasing),
/// with the scene's bits (io::SceneLoadOptions::simulatedOrdinals). Empty on one process, which
/// built every body already.
using BuildBodies = std::function<void(const std::vector<BodyId>&)>;

/// io::loadResumeState for a distributed run. The last complete state of RECORD/SimState.sim is
/// read together (the state's body count checked against `simulatedInScene`), each process one
/// block of it (CollectiveStateReader::readBlock); the processes that built the bodies check that
/// every body was read once (RecordDirectory; `builderOf` names the process that built a simulated
/// body, -1: not a simulated body of the scene); then each process builds the bodies whose records
/// it read (`buildBodies`) and gives them their states, so that each body travels once, from its
/// reader to its owner, when the first decomposition is set. The time, the stepper's step count
/// and the warm-start cache (readWarmStartTogether, the entries of the bodies this process read)
/// are set. Throws grain::Error on every process.
io::ResumePoint loadResumeStateTogether(MPI_Comm comm, const std::filesystem::path& record,
                                        DynamicsSystem& system, MoreauStepper& stepper,
                                        std::size_t simulatedInScene,
                                        const std::function<int(BodyId)>& builderOf,
                                        const BuildBodies& buildBodies, CollectiveReadBytes& bytes);

/// The bodies' states of a GlobalInitialCondition (`source`, whose states the scene loader left
/// unread: SceneLoadOptions::readInitialState = false) read together as loadResumeStateTogether
/// reads a state: each process builds the bodies whose records it read (`buildBodies`) and gives
/// them their states as the serial loader does (positions, normalised orientations, velocities if
/// readVelocities). A simulated body missing from the state is an io::SceneError at the element
/// (`sceneFile`), on every process. Collective.
void readInitialStateTogether(MPI_Comm comm, const std::filesystem::path& sceneFile,
                              const io::InitialConditionSource& source, BodyStorage& bodies,
                              const std::function<int(BodyId)>& builderOf,
                              const BuildBodies& buildBodies, CollectiveReadBytes& bytes);

}  // namespace grain::app
