// SPDX-License-Identifier: MIT
#include "collective_sim_writer.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <grain/core/common/error.hpp>

#include "mpi_text.hpp"

namespace grain::app {

void CollectiveSimWriter::fail(const std::string& what, int code) const {
  throw Error(path_.string() + ": " + what + ": " + mpiErrorText(code));
}

void CollectiveSimWriter::open(int amode) {
  MPI_Comm_rank(comm_, &rank_);
  const int rc = MPI_File_open(comm_, path_.c_str(), amode, MPI_INFO_NULL, &file_);
  if (rc != MPI_SUCCESS) {
    fail("cannot open for writing", rc);
  }
  MPI_File_set_errhandler(file_, MPI_ERRORS_RETURN);
}

CollectiveSimWriter::CollectiveSimWriter(MPI_Comm comm, const std::filesystem::path& file,
                                         io::AdditionalBytesType type, std::uint32_t nSimBodies)
    : comm_(comm), path_(file) {
  open(MPI_MODE_CREATE | MPI_MODE_WRONLY);
  header_.nSimBodies = nSimBodies;
  header_.additionalType = type;
  header_.additionalBytes = io::additionalBytesPerBody(type);
  int rc = MPI_File_set_size(file_, 0);
  if (rc != MPI_SUCCESS) {
    fail("cannot truncate", rc);
  }
  if (rank_ == 0) {
    char bytes[io::SimFileHeader::kSize];
    io::encodeSimHeader(bytes, header_);
    rc = MPI_File_write_at(file_, 0, bytes, static_cast<int>(sizeof bytes), MPI_BYTE,
                           MPI_STATUS_IGNORE);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm_);
  if (rc != MPI_SUCCESS) {
    fail("cannot write the header", rc);
  }
}

CollectiveSimWriter::CollectiveSimWriter(MPI_Comm comm, const std::filesystem::path& file,
                                         const io::SimFileHeader& header,
                                         std::uint64_t completeStates)
    : comm_(comm), path_(file), header_(header), states_(completeStates) {
  open(MPI_MODE_WRONLY);
  // Cut a partial trailing state off (a run killed while writing).
  const auto size =
      static_cast<MPI_Offset>(io::SimFileHeader::kSize + completeStates * header_.bytesPerState());
  const int rc = MPI_File_set_size(file_, size);
  if (rc != MPI_SUCCESS) {
    fail("cannot cut the file after its last complete state", rc);
  }
}

CollectiveSimWriter::~CollectiveSimWriter() {
  if (file_ != MPI_FILE_NULL) {
    MPI_File_close(&file_);
  }
}

void CollectiveSimWriter::close() {
  if (file_ != MPI_FILE_NULL) {
    MPI_File_close(&file_);
  }
}

void CollectiveSimWriter::writeState(
    double time, const BodyStorage& bodies, std::span<const Real> totalOverlap,
    const std::unordered_map<BodyId, std::uint32_t>& globalGeomId) {
  order_.clear();
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i) && bodies.ownerships()[i] == BodyOwnership::Local) {
      order_.push_back(i);
    }
  }
  std::sort(order_.begin(), order_.end(),
            [&](std::size_t a, std::size_t b) { return bodies.ids()[a] < bodies.ids()[b]; });
  unsigned long long count = order_.size();
  unsigned long long total = 0;
  MPI_Allreduce(&count, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm_);
  if (total != header_.nSimBodies) {
    throw Error(path_.string() + ": the processes hold " + std::to_string(total) +
                " simulated bodies, the file has " + std::to_string(header_.nSimBodies) +
                " per state: a body was lost or duplicated");
  }
  const std::uint64_t perBody = header_.bytesPerBody();
  const std::size_t lead = rank_ == 0 ? sizeof(double) : 0;
  buffer_.resize(lead + order_.size() * perBody);
  char* p = buffer_.data();
  if (rank_ == 0) {
    std::memcpy(p, &time, sizeof(double));
    p += sizeof(double);
  }
  for (const std::size_t i : order_) {
    io::SimBodyState b;
    b.id = bodies.ids()[i];
    b.position = bodies.positions()[i];
    b.orientation = bodies.orientations()[i];
    b.velocity = bodies.velocities()[i];
    b.omegaBody = bodies.omegasBody()[i];
    b.additional.processRank = static_cast<std::uint32_t>(rank_);
    b.additional.material = bodies.materials()[i];
    b.additional.overlapTotal = i < totalOverlap.size() ? totalOverlap[i] : 0.0;
    const auto g = globalGeomId.find(b.id);
    b.additional.globalGeomId = g == globalGeomId.end() ? 0 : g->second;
    p = io::encodeSimBody(p, header_.additionalType, b);
  }
  unsigned long long bytes = buffer_.size();
  unsigned long long before = 0;
  MPI_Exscan(&bytes, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm_);
  if (rank_ == 0) {
    before = 0;
  }
  const auto offset = static_cast<MPI_Offset>(io::SimFileHeader::kSize +
                                              states_ * header_.bytesPerState() + before);
  int rc = MPI_File_write_at_all(file_, offset, buffer_.data(), static_cast<int>(buffer_.size()),
                                 MPI_BYTE, MPI_STATUS_IGNORE);
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm_);
  if (worst != MPI_SUCCESS) {
    fail("cannot write state " + std::to_string(states_), worst);
  }
  rc = MPI_File_sync(file_);
  if (rc != MPI_SUCCESS) {
    fail("cannot sync state " + std::to_string(states_), rc);
  }
  ++states_;
}

}  // namespace grain::app
