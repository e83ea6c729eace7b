// SPDX-License-Identifier: MIT
#include "shared_read_file.hpp"

#include <climits>

#include <grain/core/common/error.hpp>

#ifdef SMPI_H
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace grain::app {

#ifdef SMPI_H

int SharedReadFile::open(MPI_Comm /*comm*/, const std::filesystem::path& path) {
  close();
  fd_ = ::open(path.c_str(), O_RDONLY);
  return fd_ < 0 ? MPI_ERR_FILE : MPI_SUCCESS;
}

int SharedReadFile::size(std::uint64_t& bytes) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    return MPI_ERR_IO;
  }
  bytes = static_cast<std::uint64_t>(st.st_size);
  return MPI_SUCCESS;
}

int SharedReadFile::readAt(std::uint64_t offset, void* buffer, std::uint64_t bytes) {
  GRAIN_REQUIRE(bytes <= INT_MAX, "SharedReadFile::readAt: at most INT_MAX bytes per read");
  auto* out = static_cast<char*>(buffer);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, out, bytes, static_cast<off_t>(offset));
    if (got <= 0) {
      return MPI_ERR_IO;
    }
    out += got;
    offset += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::uint64_t>(got);
  }
  return MPI_SUCCESS;
}

void SharedReadFile::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

#else

int SharedReadFile::open(MPI_Comm comm, const std::filesystem::path& path) {
  close();
  const int rc = MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file_);
  if (rc != MPI_SUCCESS) {
    file_ = MPI_FILE_NULL;
    return rc;
  }
  MPI_File_set_errhandler(file_, MPI_ERRORS_RETURN);
  return MPI_SUCCESS;
}

int SharedReadFile::size(std::uint64_t& bytes) {
  MPI_Offset size = 0;
  const int rc = MPI_File_get_size(file_, &size);
  bytes = static_cast<std::uint64_t>(size);
  return rc;
}

int SharedReadFile::readAt(std::uint64_t offset, void* buffer, std::uint64_t bytes) {
  GRAIN_REQUIRE(bytes <= INT_MAX, "SharedReadFile::readAt: at most INT_MAX bytes per read");
  MPI_Status status;
  const int rc = MPI_File_read_at(file_, static_cast<MPI_Offset>(offset), buffer,
                                  static_cast<int>(bytes), MPI_BYTE, &status);
  if (rc != MPI_SUCCESS) {
    return rc;
  }
  int got = 0;
  MPI_Get_count(&status, MPI_BYTE, &got);
  return static_cast<std::uint64_t>(got) == bytes ? MPI_SUCCESS : MPI_ERR_IO;
}

void SharedReadFile::close() {
  if (file_ != MPI_FILE_NULL) {
    MPI_File_close(&file_);
  }
}

#endif

}  // namespace grain::app
