// SPDX-License-Identifier: MIT
#include "collective_state_reader.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <unistd.h>
#include <unordered_map>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/io/scene.hpp>
#include <grain/mpi/communicator.hpp>
#include <grain/mpi/distributed_exchange.hpp>

#include "mpi_text.hpp"

namespace grain::app {

namespace {

/// Tags of the sparse exchange (this one and the next) on the reader's own communicator.
constexpr int kTagRecords = 120;

/// Records decoded per read call: bounds the int counts of MPI and the read buffer (at most
/// kRecordsPerRead records of up to 132 bytes).
constexpr std::uint64_t kRecordsPerRead = std::uint64_t{1} << 20;

/// Reads this process's share of `n` records of `recordBytes` bytes that start at byte `base` of
/// `file` (records [r n / P, (r + 1) n / P), one contiguous block), sends each
/// to `destinationOf(record)` (-1: dropped) in one sparse exchange, and returns the records sent
/// to this process, in the order of their sources. `problem` gets an I/O error (on every
/// process).
std::vector<char> readAndRoute(MPI_Comm comm, MPI_File file, MPI_Offset base, std::uint64_t n,
                               std::uint64_t recordBytes,
                               const std::function<int(const char*)>& destinationOf,
                               std::uint64_t& bytesRead, std::string& problem) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const io::OrdinalRange mine = io::shareOf(n, rank, size);
  // Every process makes the same number of read calls (that of the largest share), in case the
  // reads are made collective.
  const std::uint64_t largest =
      (n + static_cast<std::uint64_t>(size) - 1) / static_cast<std::uint64_t>(size);
  const std::uint64_t rounds = (largest + kRecordsPerRead - 1) / kRecordsPerRead;
  MPI_Datatype record = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(recordBytes), MPI_BYTE, &record);
  MPI_Type_commit(&record);
  std::map<int, std::vector<char>> outgoing;
  std::vector<char> buffer;
  int worst = MPI_SUCCESS;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t from = std::min(mine.end, mine.begin + round * kRecordsPerRead);
    const std::uint64_t count = std::min(mine.end - from, kRecordsPerRead);
    buffer.resize(count * recordBytes);
    // Independent reads: every block is contiguous and large (n / P records), so collective
    // buffering would gain nothing, and its aggregators would read more than their 1/P.
    const int rc =
        MPI_File_read_at(file, base + static_cast<MPI_Offset>(from * recordBytes), buffer.data(),
                         static_cast<int>(count), record, MPI_STATUS_IGNORE);
    worst = std::max(worst, rc);
    bytesRead += buffer.size();
    for (std::uint64_t i = 0; i < count && rc == MPI_SUCCESS; ++i) {
      const char* r = buffer.data() + i * recordBytes;
      const int to = destinationOf(r);
      if (to >= 0) {
        std::vector<char>& out = outgoing[to];
        out.insert(out.end(), r, r + recordBytes);
      }
    }
  }
  MPI_Type_free(&record);
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (worst != MPI_SUCCESS) {
    problem = "cannot read: " + mpiErrorText(worst);
    return {};
  }
  std::vector<int> destinations;
  std::vector<std::vector<char>> send;
  for (auto& [to, bytes] : outgoing) {
    destinations.push_back(to);
    send.push_back(std::move(bytes));
  }
  mpi::SparseExchange exchange(comm, kTagRecords);
  std::vector<mpi::ReceivedMessage> received;
  mpi::TrafficCounters traffic;
  exchange.exchange(destinations, send, received, traffic);
  std::size_t total = 0;
  for (const mpi::ReceivedMessage& m : received) {
    total += m.bytes.size();
  }
  std::vector<char> records;
  records.reserve(total);
  for (const mpi::ReceivedMessage& m : received) {
    records.insert(records.end(), m.bytes.begin(), m.bytes.end());
  }
  return records;
}

}  // namespace

// ---- CollectiveStateReader ---------------------------------------------------------------------

void CollectiveStateReader::fail(const std::string& what) const {
  throw io::SimFileError(path_.string() + ": " + what);
}

CollectiveStateReader::CollectiveStateReader(MPI_Comm comm, std::filesystem::path file)
    : path_(std::move(file)) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int rc = MPI_File_open(comm_, path_.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file_);
  if (rc != MPI_SUCCESS) {
    file_ = MPI_FILE_NULL;
    MPI_Comm_free(&comm_);
    fail("cannot open the file: " + mpiErrorText(rc));
  }
  MPI_File_set_errhandler(file_, MPI_ERRORS_RETURN);
  // The first process reads the header; every process gets its bytes and the file size.
  struct {
    char header[io::SimFileHeader::kSize];
    unsigned long long size;
    int rc;
  } head{};
  if (rank_ == 0) {
    MPI_Offset size = 0;
    head.rc = MPI_File_get_size(file_, &size);
    head.size = static_cast<unsigned long long>(size);
    if (head.rc == MPI_SUCCESS && head.size >= io::SimFileHeader::kSize) {
      head.rc = MPI_File_read_at(file_, 0, head.header, static_cast<int>(sizeof head.header),
                                 MPI_BYTE, MPI_STATUS_IGNORE);
      bytesRead_ += sizeof head.header;
    }
  }
  MPI_Bcast(&head, sizeof head, MPI_BYTE, 0, comm_);
  std::string problem;
  if (head.rc != MPI_SUCCESS) {
    problem = "cannot read the header: " + mpiErrorText(head.rc);
  } else if (head.size < io::SimFileHeader::kSize) {
    problem = "too short for a .sim header (" + std::to_string(head.size) + " bytes, need 28)";
  }
  if (problem.empty()) {
    try {
      header_ = io::decodeSimHeader(head.header, path_.string());
    } catch (const io::SimFileError& e) {
      problem = e.what();
      problem = problem.substr(path_.string().size() + 2);
    }
  }
  if (!problem.empty()) {
    MPI_File_close(&file_);
    MPI_Comm_free(&comm_);
    fail(problem);
  }
  fileSize_ = head.size;
  const std::uint64_t payload = fileSize_ - io::SimFileHeader::kSize;
  stateCount_ = static_cast<std::size_t>(payload / header_.bytesPerState());
  trailingBytes_ = payload % header_.bytesPerState();
}

CollectiveStateReader::~CollectiveStateReader() {
  if (file_ != MPI_FILE_NULL) {
    MPI_File_close(&file_);
  }
  if (comm_ != MPI_COMM_NULL) {
    MPI_Comm_free(&comm_);
  }
}

std::string CollectiveStateReader::truncationWarning() const {
  if (!truncated()) {
    return {};
  }
  return path_.string() + ": ignoring a partial last state (" + std::to_string(trailingBytes_) +
         " bytes after state " + std::to_string(stateCount_) + " of " +
         std::to_string(header_.bytesPerState()) + " bytes per state)";
}

double CollectiveStateReader::readTime(std::size_t k) {
  if (k >= stateCount_) {
    fail("state " + std::to_string(k) + " does not exist (the file has " +
         std::to_string(stateCount_) + " complete states)");
  }
  struct {
    double time;
    int rc;
  } t{0.0, MPI_SUCCESS};
  if (rank_ == 0) {
    t.rc = MPI_File_read_at(
        file_, static_cast<MPI_Offset>(io::SimFileHeader::kSize + k * header_.bytesPerState()),
        &t.time, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
    bytesRead_ += sizeof(double);
  }
  MPI_Bcast(&t, sizeof t, MPI_BYTE, 0, comm_);
  if (t.rc != MPI_SUCCESS) {
    fail("cannot read the time of state " + std::to_string(k) + ": " + mpiErrorText(t.rc));
  }
  return t.time;
}

double CollectiveStateReader::readIntoHeldBodies(
    std::size_t k, const BodyStorage& bodies, const std::function<int(BodyId)>& builderOf,
    const std::function<void(std::size_t, const io::SimBodyState&)>& copy,
    std::vector<std::size_t>& missing) {
  const double time = readTime(k);
  const std::uint64_t perBody = header_.bytesPerBody();
  const auto base = static_cast<MPI_Offset>(io::SimFileHeader::kSize + k * header_.bytesPerState() +
                                            sizeof(double));
  std::string problem;
  const std::vector<char> records = readAndRoute(
      comm_, file_, base, header_.nSimBodies, perBody,
      [&](const char* r) {
        BodyId id = 0;
        std::memcpy(&id, r, sizeof id);
        return builderOf(id);
      },
      bytesRead_, problem);
  if (!problem.empty()) {
    fail(problem);
  }
  try {
    missing = io::copyIntoHeldBodies(
        k, bodies,
        [&](const std::function<void(const io::SimBodyState&)>& visit) {
          io::SimBodyState body;
          for (std::size_t at = 0; at < records.size(); at += perBody) {
            io::decodeSimBody(records.data() + at, header_.additionalType, body);
            visit(body);
          }
        },
        copy);
  } catch (const io::SimFileError& e) {
    problem = e.what();
  }
  problem = firstProblem(comm_, problem);
  if (!problem.empty()) {
    fail(problem);
  }
  return time;
}

// ---- Warm start ---------------------------------------------------------------------------------

std::optional<std::vector<detail::PercussionCacheEntry>> readWarmStartTogether(
    MPI_Comm parent, const std::filesystem::path& record, double time, std::uint64_t step,
    const BodyStorage& bodies, const std::function<int(BodyId)>& builderOf,
    std::uint64_t& bytesRead) {
  int rank = 0;
  MPI_Comm_rank(parent, &rank);
  // The first process finds the file that belongs to the state (its header) and tells the others
  // which, and its entry count.
  struct {
    int which;  // 0: RestartCache.bin, 1: RestartCache.prev.bin, -1: none
    unsigned long long count;
  } choice{-1, 0};
  const std::filesystem::path files[2] = {record / io::kRestartCacheFile,
                                          record / io::kRestartCachePreviousFile};
  if (rank == 0) {
    for (int f = 0; f < 2 && choice.which < 0; ++f) {
      // The header alone (a buffered stream would read more of the file).
      char bytes[io::kWarmStartHeaderBytes];
      const int fd = ::open(files[f].c_str(), O_RDONLY);
      if (fd < 0) {
        continue;
      }
      const ssize_t got = ::pread(fd, bytes, sizeof bytes, 0);
      ::close(fd);
      if (got != static_cast<ssize_t>(sizeof bytes)) {
        continue;
      }
      bytesRead += sizeof bytes;
      const std::optional<io::WarmStartHeader> h = io::decodeWarmStartHeader(bytes);
      std::error_code ec;
      const std::uint64_t size = std::filesystem::file_size(files[f], ec);
      if (!h || ec || !io::warmStartFileMatches(*h, size, time, step)) {
        continue;  // another state's, or damaged
      }
      choice = {f, h->count};
    }
  }
  MPI_Bcast(&choice, sizeof choice, MPI_BYTE, 0, parent);
  if (choice.which < 0) {
    return std::nullopt;
  }
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(parent, &comm);
  MPI_File file = MPI_FILE_NULL;
  const std::filesystem::path& path = files[choice.which];
  const int rc = MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    throw Error(path.string() + ": cannot open: " + mpiErrorText(rc));
  }
  MPI_File_set_errhandler(file, MPI_ERRORS_RETURN);
  std::string problem;
  const std::vector<char> entries = readAndRoute(
      comm, file, io::kWarmStartHeaderBytes, choice.count, io::kWarmStartEntryBytes,
      [&](const char* r) {
        const detail::PercussionCacheEntry e = io::decodeWarmStartEntry(r);
        // The home body: the smaller id if simulated, else the larger (static and animated bodies
        // are on every process).
        const int lo = builderOf(e.lo);
        return lo >= 0 ? lo : builderOf(e.hi);
      },
      bytesRead, problem);
  MPI_File_close(&file);
  MPI_Comm_free(&comm);
  if (!problem.empty()) {
    throw Error(path.string() + ": " + problem);
  }
  std::vector<detail::PercussionCacheEntry> cache;
  for (std::size_t at = 0; at < entries.size(); at += io::kWarmStartEntryBytes) {
    const detail::PercussionCacheEntry e = io::decodeWarmStartEntry(entries.data() + at);
    if (mpi::holdsWarmStartHome(bodies, e)) {
      cache.push_back(e);
    }
  }
  std::sort(cache.begin(), cache.end(), detail::cacheEntryLess);
  return cache;
}

// ---- Restart and initial states -----------------------------------------------------------------

io::ResumePoint loadResumeStateTogether(MPI_Comm comm, const std::filesystem::path& record,
                                        DynamicsSystem& system, MoreauStepper& stepper,
                                        std::size_t simulatedInScene,
                                        const std::function<int(BodyId)>& builderOf,
                                        CollectiveReadBytes& bytes) {
  namespace fs = std::filesystem;
  io::ResumePoint rp;
  const fs::path simFile = record / "SimState.sim";
  if (!fs::exists(simFile)) {
    throw Error(simFile.string() +
                ": missing; only runs that record states (RecorderSettings mode other than "
                "noOutput) can be restarted");
  }
  CollectiveStateReader reader(comm, simFile);
  if (reader.stateCount() == 0) {
    throw Error(simFile.string() + ": has no complete state to continue from");
  }
  if (reader.truncated()) {
    rp.messages.push_back(reader.truncationWarning() + "; it is cut off");
  }
  if (reader.header().nSimBodies != simulatedInScene) {
    throw io::SimFileError(
        "the state at t = " + std::to_string(reader.readTime(reader.stateCount() - 1)) + " s has " +
        std::to_string(reader.header().nSimBodies) + " bodies, the scene simulates " +
        std::to_string(simulatedInScene));
  }
  rp.stateIndex = reader.stateCount() - 1;
  BodyStorage& bodies = system.bodies;
  std::vector<std::size_t> missing;
  const double lastTime = reader.readIntoHeldBodies(
      rp.stateIndex, bodies, builderOf,
      [&](std::size_t i, const io::SimBodyState& b) {
        bodies.positions()[i] = b.position;
        bodies.orientations()[i] = b.orientation;
        bodies.velocities()[i] = b.velocity;
        bodies.omegasBody()[i] = b.omegaBody;
      },
      missing);
  // Every process stops here if any misses a body (the reads below are collective); each with
  // its own message if it has one, so that checkedOnAll prints every process's message.
  const std::string local = missing.empty() ? std::string()
                                            : "the state at t = " + std::to_string(lastTime) +
                                                  " s has no body " +
                                                  formatBodyId(bodies.ids()[missing.front()]);
  const std::string problem = firstProblem(comm, local);
  if (!problem.empty()) {
    throw io::SimFileError(local.empty() ? problem : local);
  }
  const double t0 = reader.readTime(0);
  bytes.sim += reader.bytesRead();
  system.time = lastTime;
  const double steps = std::round((lastTime - t0) / stepper.settings().deltaT);
  rp.step = steps > 0.0 ? static_cast<std::uint64_t>(steps) : 0;
  rp.time = lastTime;
  rp.resumed = true;
  stepper.setStepCount(rp.step);
  if (stepper.settings().solver.usePercussionCache) {
    if (auto cache = readWarmStartTogether(comm, record, lastTime, rp.step, bodies, builderOf,
                                           bytes.cache)) {
      stepper.setWarmStartCache(std::move(*cache));
      rp.warmStartRestored = true;
    } else {
      rp.messages.push_back("no warm-start data for the state at t = " + std::to_string(lastTime) +
                            " s (" + io::kRestartCacheFile +
                            " missing or from another state): the first step starts from zero "
                            "percussions, so the continued run may differ slightly from an "
                            "uninterrupted one");
    }
  }
  rp.simHeader = reader.header();
  return rp;
}

void readInitialStateTogether(MPI_Comm comm, const std::filesystem::path& sceneFile,
                              io::InitialConditionSource& source, BodyStorage& bodies,
                              const std::function<int(BodyId)>& builderOf,
                              CollectiveReadBytes& bytes) {
  const std::string path = "SceneSettings/GlobalInitialCondition";
  std::vector<std::size_t> missing;
  try {
    CollectiveStateReader reader(comm, source.file);
    reader.readIntoHeldBodies(
        source.stateIndex, bodies, builderOf,
        [&](std::size_t i, const io::SimBodyState& b) {
          io::applyInitialState(source, bodies, i, b);
        },
        missing);
    bytes.sim += reader.bytesRead();
  } catch (const io::SimFileError& e) {
    throw io::SceneError(sceneFile.string(), source.line, path, e.what());
  }
  // The missing bodies of all processes: their count, and the first few of the lowest process
  // that lacks any.
  unsigned long long count = missing.size();
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  std::vector<BodyId> ids;
  for (const std::size_t i : missing) {
    ids.push_back(bodies.ids()[i]);
  }
  const std::string named = firstProblem(comm, io::nameBodies(ids));
  source.statesRead = true;
  if (count > 0) {
    throw io::SceneError(sceneFile.string(), source.line, path,
                         io::missingInitialBodiesMessage(source, count, named));
  }
}

}  // namespace grain::app
