// SPDX-License-Identifier: MIT
#include "collective_warm_start.hpp"

#include <string>

#include <grain/core/common/error.hpp>

#include "mpi_text.hpp"

namespace grain::app {

CollectiveWarmStart::CollectiveWarmStart(MPI_Comm comm, std::filesystem::path record)
    : comm_(comm), record_(std::move(record)) {
  MPI_Comm_rank(comm_, &rank_);
}

void CollectiveWarmStart::store(const std::vector<detail::PercussionCacheEntry>& cache, double time,
                                std::uint64_t step) {
  std::string problem;
  std::filesystem::path part = record_ / io::kRestartCacheFile;
  part += ".part";
  if (rank_ == 0) {
    try {
      part = checkpoint_.begin(record_, step);
    } catch (const Error& e) {
      problem = e.what();
    }
  }
  // The first process's error message (empty: none) on every process.
  if (problem = broadcastText(comm_, problem); !problem.empty()) {
    throw Error(problem);
  }

  bytes_.clear();
  bytes_.reserve(cache.size() * io::kWarmStartEntryBytes);
  for (const detail::PercussionCacheEntry& e : cache) {
    io::appendWarmStartEntry(bytes_, e);
  }
  const unsigned long long mine = cache.size();
  unsigned long long before = 0;
  unsigned long long total = 0;
  MPI_Exscan(&mine, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm_);
  MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm_);
  if (rank_ == 0) {
    before = 0;  // MPI_Exscan leaves the first process's result undefined
  }

  MPI_File file = MPI_FILE_NULL;
  int rc =
      MPI_File_open(comm_, part.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
  if (rc == MPI_SUCCESS) {
    MPI_File_set_errhandler(file, MPI_ERRORS_RETURN);
    rc = MPI_File_set_size(file, 0);
    if (rc == MPI_SUCCESS && rank_ == 0) {
      const auto header = io::warmStartHeader(time, step, total);
      rc = MPI_File_write_at(file, 0, header.data(), static_cast<int>(header.size()), MPI_BYTE,
                             MPI_STATUS_IGNORE);
    }
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm_);
    if (worst == MPI_SUCCESS) {
      const auto offset =
          static_cast<MPI_Offset>(io::kWarmStartHeaderBytes + before * io::kWarmStartEntryBytes);
      rc = MPI_File_write_at_all(file, offset, bytes_.data(), static_cast<int>(bytes_.size()),
                                 MPI_BYTE, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) {
        rc = MPI_File_sync(file);
      }
    } else {
      rc = worst;
    }
    MPI_File_close(&file);
  }
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm_);
  if (worst != MPI_SUCCESS) {
    throw Error(part.string() + ": cannot write the warm-start data: " + mpiErrorText(worst));
  }
  if (rank_ == 0) {
    try {
      checkpoint_.finish(record_, step);
    } catch (const Error& e) {
      problem = e.what();
    }
  }
  if (problem = broadcastText(comm_, problem); !problem.empty()) {
    throw Error(problem);
  }
}

}  // namespace grain::app
