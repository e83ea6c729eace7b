// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <unordered_map>
#include <vector>

#include <mpi.h>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/io/sim_file.hpp>

namespace grain::app {

/// One .sim file written by all processes together with MPI-IO: the first process writes the
/// header and each state's time; every process writes its local simulated bodies (sorted by id)
/// at an offset from an exclusive prefix sum of the byte counts, so a state is the bodies of
/// process 0, then 1, ... (readers key on the id). The file is synced after every state, so a run
/// that is killed leaves every complete state readable. Collective: every call on every process.
class CollectiveSimWriter {
 public:
  /// Creates `file` with a header for `nSimBodies` bodies of the given additional-bytes type.
  CollectiveSimWriter(MPI_Comm comm, const std::filesystem::path& file,
                      io::AdditionalBytesType type, std::uint32_t nSimBodies);
  /// Continues `file` after its first `completeStates` states (the header is kept as it is).
  CollectiveSimWriter(MPI_Comm comm, const std::filesystem::path& file,
                      const io::SimFileHeader& header, std::uint64_t completeStates);
  ~CollectiveSimWriter();
  CollectiveSimWriter(const CollectiveSimWriter&) = delete;
  CollectiveSimWriter& operator=(const CollectiveSimWriter&) = delete;

  /// Appends the state at `time` (s). `totalOverlap` is indexed like `bodies` (may be empty);
  /// `globalGeomId` maps body ids to global geometry ids. Throws grain::Error (on every process)
  /// if the bodies of all processes are not exactly the header's count, or on an I/O error.
  void writeState(double time, const BodyStorage& bodies, std::span<const Real> totalOverlap,
                  const std::unordered_map<BodyId, std::uint32_t>& globalGeomId);
  void close();
  std::uint64_t statesWritten() const { return states_; }

 private:
  void open(int amode);
  [[noreturn]] void fail(const std::string& what, int code) const;

  MPI_Comm comm_;
  int rank_ = 0;
  std::filesystem::path path_;
  MPI_File file_ = MPI_FILE_NULL;
  io::SimFileHeader header_;
  std::uint64_t states_ = 0;
  std::vector<char> buffer_;
  std::vector<std::size_t> order_;
};

}  // namespace grain::app
