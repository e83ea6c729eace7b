// SPDX-License-Identifier: MIT
#include "collective_state_reader.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <fcntl.h>
#include <map>
#include <unistd.h>
#include <unordered_map>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/io/scene.hpp>
#include <grain/mpi/communicator.hpp>
#include <grain/mpi/distributed_exchange.hpp>
#include <grain/mpi/messages.hpp>

#include "mpi_text.hpp"

namespace grain::app {

namespace {

/// Tags of the sparse exchanges on the readers' own communicators (mpi::SparseExchange: objects on
/// one communicator need tags 4 apart).
constexpr int kTagIds = 120;
constexpr int kTagEntries = 124;
constexpr int kTagForward = 128;

/// Records decoded per read call: bounds the int counts of MPI and the read buffer (at most
/// kRecordsPerRead records of up to 132 bytes).
constexpr std::uint64_t kRecordsPerRead = std::uint64_t{1} << 20;

/// Reads this process's share of `n` records of `recordBytes` bytes that start at byte `base` of
/// `file` (records [r n / P, (r + 1) n / P), one contiguous block) and calls `visit(record)` for
/// each, in file order. `problem` gets an I/O error (on every process).
void readShare(MPI_Comm comm, SharedReadFile& file, std::uint64_t base, std::uint64_t n,
               std::uint64_t recordBytes, const std::function<void(const char*)>& visit,
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
  std::vector<char> buffer;
  int worst = MPI_SUCCESS;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t from = std::min(mine.end, mine.begin + round * kRecordsPerRead);
    const std::uint64_t count = std::min(mine.end - from, kRecordsPerRead);
    buffer.resize(count * recordBytes);
    // Independent reads: every block is contiguous and large (n / P records), so collective
    // buffering would gain nothing, and its aggregators would read more than their 1/P.
    const int rc = file.readAt(base + from * recordBytes, buffer.data(), buffer.size());
    worst = std::max(worst, rc);
    bytesRead += buffer.size();
    for (std::uint64_t i = 0; i < count && rc == MPI_SUCCESS; ++i) {
      visit(buffer.data() + i * recordBytes);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (worst != MPI_SUCCESS) {
    problem = "cannot read: " + mpiErrorText(worst);
  }
}

/// Sends `outgoing[to]` to each process `to` in one sparse exchange (`tag`); returns what came, in
/// the order of the sources (mpi::SparseExchange).
std::vector<mpi::ReceivedMessage> route(MPI_Comm comm, int tag,
                                        std::map<int, std::vector<char>>& outgoing) {
  std::vector<int> destinations;
  std::vector<std::vector<char>> send;
  for (auto& [to, bytes] : outgoing) {
    destinations.push_back(to);
    send.push_back(std::move(bytes));
  }
  mpi::SparseExchange exchange(comm, tag);
  std::vector<mpi::ReceivedMessage> received;
  mpi::TrafficCounters traffic;
  exchange.exchange(destinations, send, received, traffic);
  return received;
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
  if (const int rc = file_.open(comm_, path_); rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm_);
    fail("cannot open the file: " + mpiErrorText(rc));
  }
  // The first process reads the header; every process gets its bytes and the file size.
  struct {
    char header[io::SimFileHeader::kSize];
    unsigned long long size;
    int rc;
  } head{};
  if (rank_ == 0) {
    std::uint64_t size = 0;
    head.rc = file_.size(size);
    head.size = size;
    if (head.rc == MPI_SUCCESS && head.size >= io::SimFileHeader::kSize) {
      head.rc = file_.readAt(0, head.header, sizeof head.header);
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
    file_.close();
    MPI_Comm_free(&comm_);
    fail(problem);
  }
  fileSize_ = head.size;
  const std::uint64_t payload = fileSize_ - io::SimFileHeader::kSize;
  stateCount_ = static_cast<std::size_t>(payload / header_.bytesPerState());
  trailingBytes_ = payload % header_.bytesPerState();
}

CollectiveStateReader::~CollectiveStateReader() {
  file_.close();
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
    t.rc = file_.readAt(io::SimFileHeader::kSize + k * header_.bytesPerState(), &t.time,
                        sizeof t.time);
    bytesRead_ += sizeof(double);
  }
  MPI_Bcast(&t, sizeof t, MPI_BYTE, 0, comm_);
  if (t.rc != MPI_SUCCESS) {
    fail("cannot read the time of state " + std::to_string(k) + ": " + mpiErrorText(t.rc));
  }
  return t.time;
}

double CollectiveStateReader::readBlock(std::size_t k, const std::function<bool(BodyId)>& keep,
                                        std::vector<io::SimBodyState>& records) {
  const double time = readTime(k);
  const std::uint64_t perBody = header_.bytesPerBody();
  const std::uint64_t base =
      io::SimFileHeader::kSize + k * header_.bytesPerState() + sizeof(double);
  std::string problem;
  records.clear();
  readShare(
      comm_, file_, base, header_.nSimBodies, perBody,
      [&](const char* r) {
        io::SimBodyState body;
        io::decodeSimBody(r, header_.additionalType, body);
        if (keep(body.id)) {
          records.push_back(body);
        }
      },
      bytesRead_, problem);
  if (!problem.empty()) {
    fail(problem);
  }
  return time;
}

// ---- Who read which body
// -------------------------------------------------------------------------

RecordDirectory::RecordDirectory(MPI_Comm parent, std::size_t k,
                                 const std::vector<io::SimBodyState>& read,
                                 const BodyStorage& built,
                                 const std::function<int(BodyId)>& builderOf) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(parent, &comm);
  std::map<int, mpi::ByteWriter> writers;
  for (const io::SimBodyState& b : read) {
    if (const int to = builderOf(b.id); to >= 0) {
      writers[to].put(b.id);
    }
  }
  std::map<int, std::vector<char>> outgoing;
  for (auto& [to, w] : writers) {
    outgoing[to] = std::move(w.bytes());
  }
  const std::vector<mpi::ReceivedMessage> received = route(comm, kTagIds, outgoing);
  MPI_Comm_free(&comm);
  for (std::size_t i = 0; i < built.size(); ++i) {
    if (built.isSimulated(i) && built.ownerships()[i] == BodyOwnership::Local) {
      readers_.emplace_back(built.ids()[i], -1);
    }
  }
  std::sort(readers_.begin(), readers_.end());
  std::string problem;
  for (const mpi::ReceivedMessage& m : received) {
    for (mpi::ByteReader r(m.bytes); !r.done();) {
      const auto id = r.get<BodyId>();
      auto it = std::lower_bound(readers_.begin(), readers_.end(), std::pair{id, INT_MIN});
      if (it == readers_.end() || it->first != id) {
        continue;  // not built here (left out by selective loading)
      }
      if (it->second >= 0 && problem.empty()) {
        problem = "state " + std::to_string(k) + ": body " + formatBodyId(id) + " occurs twice";
      }
      it->second = m.source;
    }
  }
  problem = firstProblem(parent, problem);
  if (!problem.empty()) {
    throw io::SimFileError(problem);
  }
  for (const auto& [id, reader] : readers_) {
    if (reader < 0) {
      missing_.push_back(id);
    }
  }
}

int RecordDirectory::readerOf(BodyId id) const {
  const auto it = std::lower_bound(readers_.begin(), readers_.end(), std::pair{id, INT_MIN});
  return it == readers_.end() || it->first != id ? -1 : it->second;
}

namespace {

/// Builds the bodies of `records` (buildBodies; none: they are built already) and calls `copy(i,
/// record)` for each of them that was built (body i of `bodies`).
void buildAndCopy(const std::vector<io::SimBodyState>& records, BodyStorage& bodies,
                  const BuildBodies& buildBodies,
                  const std::function<void(std::size_t, const io::SimBodyState&)>& copy) {
  std::vector<BodyId> ids;
  ids.reserve(records.size());
  for (const io::SimBodyState& b : records) {
    ids.push_back(b.id);
  }
  std::sort(ids.begin(), ids.end());
  if (buildBodies) {
    buildBodies(ids);
  }
  std::unordered_map<BodyId, std::size_t> indexOfId;
  indexOfId.reserve(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i)) {
      indexOfId.emplace(bodies.ids()[i], i);
    }
  }
  for (const io::SimBodyState& b : records) {
    if (const auto it = indexOfId.find(b.id); it != indexOfId.end()) {
      copy(it->second, b);
    }
  }
}

}  // namespace

// ---- Warm start ---------------------------------------------------------------------------------

std::optional<std::vector<detail::PercussionCacheEntry>> readWarmStartTogether(
    MPI_Comm parent, const std::filesystem::path& record, double time, std::uint64_t step,
    const RecordDirectory& directory, const std::function<int(BodyId)>& builderOf,
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
  SharedReadFile file;
  const std::filesystem::path& path = files[choice.which];
  if (const int rc = file.open(comm, path); rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    throw Error(path.string() + ": cannot open: " + mpiErrorText(rc));
  }
  // The home body of a pair: the smaller id if simulated, else the larger (static and animated
  // bodies are on every process).
  const auto homeOf = [&](const detail::PercussionCacheEntry& e) {
    return builderOf(e.lo) >= 0 ? e.lo : e.hi;
  };
  std::string problem;
  std::map<int, std::vector<char>> outgoing;
  readShare(
      comm, file, io::kWarmStartHeaderBytes, choice.count, io::kWarmStartEntryBytes,
      [&](const char* r) {
        if (const int to = builderOf(homeOf(io::decodeWarmStartEntry(r))); to >= 0) {
          std::vector<char>& out = outgoing[to];
          out.insert(out.end(), r, r + io::kWarmStartEntryBytes);
        }
      },
      bytesRead, problem);
  file.close();
  if (!problem.empty()) {
    MPI_Comm_free(&comm);
    throw Error(path.string() + ": " + problem);
  }
  // To the process that built the home body, and on to the one that read its record.
  std::vector<mpi::ReceivedMessage> received = route(comm, kTagEntries, outgoing);
  outgoing.clear();
  for (const mpi::ReceivedMessage& m : received) {
    for (std::size_t at = 0; at < m.bytes.size(); at += io::kWarmStartEntryBytes) {
      const char* r = m.bytes.data() + at;
      if (const int to = directory.readerOf(homeOf(io::decodeWarmStartEntry(r))); to >= 0) {
        std::vector<char>& out = outgoing[to];
        out.insert(out.end(), r, r + io::kWarmStartEntryBytes);
      }
    }
  }
  received = route(comm, kTagForward, outgoing);
  MPI_Comm_free(&comm);
  std::vector<detail::PercussionCacheEntry> cache;
  for (const mpi::ReceivedMessage& m : received) {
    for (std::size_t at = 0; at < m.bytes.size(); at += io::kWarmStartEntryBytes) {
      cache.push_back(io::decodeWarmStartEntry(m.bytes.data() + at));
    }
  }
  return cache;
}

// ---- Restart and initial states -----------------------------------------------------------------

io::ResumePoint loadResumeStateTogether(MPI_Comm comm, const std::filesystem::path& record,
                                        DynamicsSystem& system, MoreauStepper& stepper,
                                        std::size_t simulatedInScene,
                                        const std::function<int(BodyId)>& builderOf,
                                        const BuildBodies& buildBodies,
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
  std::vector<io::SimBodyState> records;
  const double lastTime = reader.readBlock(
      rp.stateIndex, [&](BodyId id) { return builderOf(id) >= 0; }, records);
  const RecordDirectory directory(comm, rp.stateIndex, records, system.bodies, builderOf);
  // Every process stops here if any misses a body (the reads below are collective); each with
  // its own message if it has one, so that checkedOnAll prints every process's message.
  const std::string local = directory.missing().empty()
                                ? std::string()
                                : "the state at t = " + std::to_string(lastTime) +
                                      " s has no body " + formatBodyId(directory.missing().front());
  const std::string problem = firstProblem(comm, local);
  if (!problem.empty()) {
    throw io::SimFileError(local.empty() ? problem : local);
  }
  const double t0 = reader.readTime(0);
  const double steps = std::round((lastTime - t0) / stepper.settings().deltaT);
  rp.step = steps > 0.0 ? static_cast<std::uint64_t>(steps) : 0;
  std::optional<std::vector<detail::PercussionCacheEntry>> cache;
  if (stepper.settings().solver.usePercussionCache) {
    cache =
        readWarmStartTogether(comm, record, lastTime, rp.step, directory, builderOf, bytes.cache);
  }
  bytes.sim += reader.bytesRead();
  BodyStorage& bodies = system.bodies;
  buildAndCopy(records, bodies, buildBodies, [&](std::size_t i, const io::SimBodyState& b) {
    bodies.positions()[i] = b.position;
    bodies.orientations()[i] = b.orientation;
    bodies.velocities()[i] = b.velocity;
    bodies.omegasBody()[i] = b.omegaBody;
  });
  system.time = lastTime;
  rp.time = lastTime;
  rp.resumed = true;
  stepper.setStepCount(rp.step);
  if (cache) {
    std::erase_if(*cache, [&](const detail::PercussionCacheEntry& e) {
      return !mpi::holdsWarmStartHome(bodies, e);
    });
    std::sort(cache->begin(), cache->end(), detail::cacheEntryLess);
    stepper.setWarmStartCache(std::move(*cache));
    rp.warmStartRestored = true;
  } else if (stepper.settings().solver.usePercussionCache) {
    rp.messages.push_back("no warm-start data for the state at t = " + std::to_string(lastTime) +
                          " s (" + io::kRestartCacheFile +
                          " missing or from another state): the first step starts from zero "
                          "percussions, so the continued run may differ slightly from an "
                          "uninterrupted one");
  }
  rp.simHeader = reader.header();
  return rp;
}

void readInitialStateTogether(MPI_Comm comm, const std::filesystem::path& sceneFile,
                              const io::InitialConditionSource& source, BodyStorage& bodies,
                              const std::function<int(BodyId)>& builderOf,
                              const BuildBodies& buildBodies, CollectiveReadBytes& bytes) {
  const std::string path = "SceneSettings/GlobalInitialCondition";
  std::vector<io::SimBodyState> records;
  std::vector<BodyId> missing;
  try {
    CollectiveStateReader reader(comm, source.file);
    reader.readBlock(
        source.stateIndex, [&](BodyId id) { return builderOf(id) >= 0; }, records);
    const RecordDirectory directory(comm, source.stateIndex, records, bodies, builderOf);
    missing = directory.missing();
    bytes.sim += reader.bytesRead();
  } catch (const io::SimFileError& e) {
    throw io::SceneError(sceneFile.string(), source.line, path, e.what());
  }
  // The missing bodies of all processes: their count, and the first few of the lowest process
  // that lacks any.
  unsigned long long count = missing.size();
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  const std::string named = firstProblem(comm, io::nameBodies(missing));
  if (count > 0) {
    throw io::SceneError(sceneFile.string(), source.line, path,
                         io::missingInitialBodiesMessage(source, count, named));
  }
  buildAndCopy(records, bodies, buildBodies, [&](std::size_t i, const io::SimBodyState& b) {
    io::applyInitialState(source, bodies, i, b);
  });
}

}  // namespace grain::app
