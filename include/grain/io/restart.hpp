// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <grain/core/solvers/solver_data.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/run_log.hpp>
#include <grain/io/sim_file.hpp>

/// Continuing a recorded run (grain-sim --restart RECORD_DIR).
///
/// A run's state is fully described by the body states in its .sim file (written bit-exactly)
/// and, if the solver warm-starts (usePercussionCache), by the percussion cache of the step
/// that produced the last written state. The cache of each written state is stored in
/// RECORD_DIR/RestartCache.bin just before the state is written, the one of the state before in
/// RestartCache.prev.bin; a restart uses whichever belongs to the state it continues from. A run
/// stopped, or killed at any moment (SIGKILL, a full disk), and restarted then produces the same
/// bytes as an uninterrupted run.
namespace grain::io {

/// Files of a record folder used by restarts.
inline constexpr const char* kRestartCacheFile = "RestartCache.bin";
inline constexpr const char* kRestartCachePreviousFile = "RestartCache.prev.bin";
inline constexpr const char* kRunInfoFile = "RunInfo.txt";

/// The text of RECORD_DIR/RunInfo.txt, lines "key<TAB>value": `version` (grain's version that
/// started the run), `scene` and `media` (the scene file and media directory the run was started
/// with, absolute), so that a restart resolves relative mesh paths as the original run did.
/// Readers ignore keys they do not know. The record writes it whole (app::writeTextFile).
std::string runInfoText(const std::filesystem::path& scene,
                        const std::filesystem::path& mediaDirectory);

/// The media directory of a recorded run: from RunInfo.txt (the one given, else the original
/// scene file's folder); empty if the file is missing.
std::filesystem::path recordedMediaDirectory(const std::filesystem::path& record);

/// Where a restarted run continues.
struct ResumePoint {
  bool resumed = false;        ///< false for a fresh run
  std::uint64_t step = 0;      ///< steps done at the continued state
  double time = 0.0;           ///< its time (s)
  std::size_t stateIndex = 0;  ///< index of that state in SimState.sim
  bool warmStartRestored = false;
  std::vector<std::string> messages;  ///< warnings and notes for the user
  SimFileHeader simHeader;            ///< header of the continued SimState.sim
};

/// The read-only part of resumeRun(): loads the last complete state of record/SimState.sim into
/// `system`, sets the time, the stepper's step count and (if RestartCache.bin belongs to that
/// state) the warm-start cache. Touches no file. The cache is looked for in RestartCache.bin,
/// then in RestartCache.prev.bin. `simulatedInScene` as for applyState. Throws grain::Error.
/// `keepWarmStart`: the cache entries to keep (all without it). Every caller reads the whole
/// state and cache: grain-sim-mpi reads them in slices instead (app::loadResumeStateTogether),
/// with the decoding of this library (decodeSimBody, decodeWarmStartEntry).
ResumePoint loadResumeState(
    const std::filesystem::path& record, DynamicsSystem& system, MoreauStepper& stepper,
    std::optional<std::size_t> simulatedInScene = std::nullopt,
    const std::function<bool(const detail::PercussionCacheEntry&)>& keepWarmStart = {});

/// Continues the run in `record`: loads the last complete state of record/SimState.sim into
/// `system` (simulated bodies looked up by id; the time is set to the state's time), sets the
/// stepper's step count to round((t - t_0) / deltaT), restores the warm-start cache if
/// RestartCache.bin belongs to that state, opens `sim` (if not null) to append after that state
/// (a partial last state is cut off) and `log` to append to record/SimData.dat after dropping the
/// lines of steps after it. Throws grain::Error with a message naming the problem.
ResumePoint resumeRun(const std::filesystem::path& record, DynamicsSystem& system,
                      MoreauStepper& stepper, SimFileWriter* sim, RunLogWriter& log);

/// Copies the body states of `state` into the simulated local bodies of `bodies` by id. Throws
/// SimFileError if one of them is missing from the state, or if the state's body count differs
/// from `simulatedInScene`: the scene's simulated bodies, when `bodies` holds only a share of
/// them (a process of a distributed run); by default the simulated local bodies of `bodies`.
void applyState(const SimState& state, BodyStorage& bodies,
                std::optional<std::size_t> simulatedInScene = std::nullopt);
/// Reads state k of `reader` block by block (memory grows with the bodies held, not with the
/// state) and calls `copy(i, body)` for every body of the state that is the simulated local body
/// i of `bodies` (by id). Throws SimFileError if such a body occurs twice. Returns the state's
/// time (s); `missing` gets the storage indices of the simulated local bodies the state lacks,
/// increasing.
double readIntoHeldBodies(SimFileReader& reader, std::size_t k, const BodyStorage& bodies,
                          const std::function<void(std::size_t, const SimBodyState&)>& copy,
                          std::vector<std::size_t>& missing);
/// applyState for state k of `reader`, read with readIntoHeldBodies. Returns the state's time (s).
double applyState(SimFileReader& reader, std::size_t k, BodyStorage& bodies,
                  std::optional<std::size_t> simulatedInScene = std::nullopt);

/// The warm-start file (RestartCache.bin): a 32-byte header ("GRWS", version 1 as uint32, the
/// state's time as double, its step as uint64, the entry count as uint64), then 44 bytes per entry
/// (smaller id, larger id as uint64, ordinal as uint32, percussion on the larger-id body as three
/// doubles, world frame, N s), native byte order. Entries may come in any order (a distributed
/// run writes each process's part in turn); readers sort them.
inline constexpr std::size_t kWarmStartHeaderBytes = 32;
inline constexpr std::size_t kWarmStartEntryBytes = 44;
std::array<char, kWarmStartHeaderBytes> warmStartHeader(double time, std::uint64_t step,
                                                        std::uint64_t count);
/// Appends the kWarmStartEntryBytes of `e` to `out`.
void appendWarmStartEntry(std::vector<char>& out, const detail::PercussionCacheEntry& e);
/// A warm-start file's header: the state it belongs to and its entry count.
struct WarmStartHeader {
  double time = 0.0;  ///< s
  std::uint64_t step = 0;
  std::uint64_t count = 0;
};
/// The header at `in` (kWarmStartHeaderBytes), nullopt if it is not one (magic, version).
std::optional<WarmStartHeader> decodeWarmStartHeader(const char* in);
/// The entry at `in` (kWarmStartEntryBytes).
detail::PercussionCacheEntry decodeWarmStartEntry(const char* in);
/// True if a warm-start file of `fileBytes` bytes with header `h` belongs to the state at `time`
/// (the same bits) after `step` steps and holds its `count` entries (else it is another state's,
/// or damaged, and is not used).
bool warmStartFileMatches(const WarmStartHeader& h, std::uint64_t fileBytes, double time,
                          std::uint64_t step);

/// Stores the warm-start cache of every written state, so that a run killed at any moment can
/// be continued bit-identically.
class WarmStartCheckpoint {
 public:
  /// Call just before writing the state at `time` (s) after `step` steps to the .sim file: moves
  /// record/RestartCache.bin (the cache of the state before) to RestartCache.prev.bin and writes
  /// the solver's current cache as that of the new state to RestartCache.bin (through a
  /// temporary file and a rename, so the file is always whole). Whenever the process dies, one of
  /// the two files belongs to the last complete state of the .sim file. A RestartCache.bin of
  /// this step or a later one (left by a killed run for a state it did not complete) is replaced,
  /// not moved. Does nothing if warm start is off. Throws grain::Error naming the file.
  void store(const std::filesystem::path& record, MoreauStepper& stepper, double time,
             std::uint64_t step);
  /// store() in two halves, for a file written by other means (a distributed run writes it with
  /// MPI-IO): begin() moves RestartCache.bin aside as store() does and returns the temporary file
  /// to write the new cache to; finish() renames it to RestartCache.bin. Throws grain::Error.
  std::filesystem::path begin(const std::filesystem::path& record, std::uint64_t step);
  void finish(const std::filesystem::path& record, std::uint64_t step);

 private:
  std::optional<std::uint64_t> stored_;  // step of RestartCache.bin, once known
};

}  // namespace grain::io
