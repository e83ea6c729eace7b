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

/// Reading a state (and the warm-start cache) of a .sim record on all processes together, so that
/// no process reads more than about 1/P of it: process k reads one contiguous block of the records
/// (MPI_File_read_at), and every record goes to the process that built its body
/// (io::SimulatedOrdinals) in one sparse exchange (mpi::SparseExchange). The io library stays
/// free of MPI: it decodes the records (io::decodeSimBody, io::decodeWarmStartEntry).
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

  /// Reads state k: process r of P reads the records [r N / P, (r + 1) N / P) in one block and
  /// sends each to the process `builderOf(id)` (a record with builderOf -1 is dropped: a body the
  /// scene does not simulate). Then `copy(i, record)` for every record received for a simulated
  /// local body i of `bodies`; `missing` gets the indices of the simulated local bodies no record
  /// came for, increasing. A body that occurs twice is an error (io::SimFileError, on every
  /// process). Returns the state's time (s).
  double readIntoHeldBodies(std::size_t k, const BodyStorage& bodies,
                            const std::function<int(BodyId)>& builderOf,
                            const std::function<void(std::size_t, const io::SimBodyState&)>& copy,
                            std::vector<std::size_t>& missing);

  /// Bytes this process read from the file so far.
  std::uint64_t bytesRead() const { return bytesRead_; }

 private:
  [[noreturn]] void fail(const std::string& what) const;

  MPI_Comm comm_ = MPI_COMM_NULL;  ///< a duplicate of the caller's (its own tags)
  int rank_ = 0;
  int size_ = 1;
  std::filesystem::path path_;
  MPI_File file_ = MPI_FILE_NULL;
  io::SimFileHeader header_;
  std::uint64_t fileSize_ = 0;
  std::size_t stateCount_ = 0;
  std::uint64_t trailingBytes_ = 0;
  std::uint64_t bytesRead_ = 0;
};

/// The warm-start cache of the state at `time` (s) after `step` steps, read together from
/// RECORD/RestartCache.bin, else RestartCache.prev.bin (the first whose header names that state):
/// each process reads a contiguous 1/P of the entries and sends each to the process that built
/// its home body (the pair's smaller id if simulated, else the larger: `builderOf`; an entry
/// without a simulated body is dropped); each process keeps the entries whose home body it holds
/// (mpi::holdsWarmStartHome), sorted. nullopt on every process if neither file belongs to the
/// state. Collective.
std::optional<std::vector<detail::PercussionCacheEntry>> readWarmStartTogether(
    MPI_Comm comm, const std::filesystem::path& record, double time, std::uint64_t step,
    const BodyStorage& bodies, const std::function<int(BodyId)>& builderOf,
    std::uint64_t& bytesRead);

/// io::loadResumeState for a distributed run: the last complete state of RECORD/SimState.sim
/// read together into the bodies each process built (the state's body count checked against
/// `simulatedInScene`), the time and the stepper's step count, and the warm-start cache
/// (readWarmStartTogether). `builderOf` names the process that built a simulated body (-1: not a
/// simulated body of the scene). Throws grain::Error on every process.
io::ResumePoint loadResumeStateTogether(MPI_Comm comm, const std::filesystem::path& record,
                                        DynamicsSystem& system, MoreauStepper& stepper,
                                        std::size_t simulatedInScene,
                                        const std::function<int(BodyId)>& builderOf,
                                        CollectiveReadBytes& bytes);

/// The bodies' states of a GlobalInitialCondition (`source`, whose states the scene loader left
/// unread: SceneLoadOptions::readInitialState = false) read together into the bodies each process
/// built, as the serial loader reads them (positions, normalised orientations, velocities if
/// readVelocities). A simulated body missing from the state is an io::SceneError at the element
/// (`sceneFile`), on every process. Collective.
void readInitialStateTogether(MPI_Comm comm, const std::filesystem::path& sceneFile,
                              io::InitialConditionSource& source, BodyStorage& bodies,
                              const std::function<int(BodyId)>& builderOf,
                              CollectiveReadBytes& bytes);

}  // namespace grain::app
