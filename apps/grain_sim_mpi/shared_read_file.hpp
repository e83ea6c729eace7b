// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>

#include <mpi.h>

namespace grain::app {

/// A file that all processes of a communicator open to read, each its own parts: MPI-IO
/// (MPI_File_open, independent MPI_File_read_at) in a build against a real MPI library. Built
/// against SimGrid's SMPI it reads with POSIX open and pread instead: SMPI's MPI-IO stops on a
/// platform host without a disk, and with one it charges a read's simulated time without writing
/// the buffer (SimGrid's smpi_file.cpp). Errors are returned as MPI error codes (MPI_ERR_FILE,
/// MPI_ERR_IO for POSIX).
class SharedReadFile {
 public:
  SharedReadFile() = default;
  ~SharedReadFile() { close(); }
  SharedReadFile(const SharedReadFile&) = delete;
  SharedReadFile& operator=(const SharedReadFile&) = delete;

  /// Opens `path` for reading on every process of `comm` (collective).
  int open(MPI_Comm comm, const std::filesystem::path& path);
  /// The file's size in bytes.
  int size(std::uint64_t& bytes);
  /// Reads `bytes` bytes (at most INT_MAX) at byte `offset` into `buffer`; a short read is an
  /// error.
  int readAt(std::uint64_t offset, void* buffer, std::uint64_t bytes);
  /// Closes the file if it is open (collective in the MPI-IO build).
  void close();

 private:
#ifdef SMPI_H
  int fd_ = -1;
#else
  MPI_File file_ = MPI_FILE_NULL;
#endif
};

}  // namespace grain::app
