// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/error.hpp>
#include <grain/core/math/types.hpp>

/// .sim files: the binary state files of GRSF ("MBSF" version 2), read and written byte for
/// byte compatibly. Layout and conventions: docs/sim-format.md.
namespace grain::io {

/// Error reading or writing a .sim file; the message starts with the file name.
class SimFileError : public grain::Error {
 public:
  explicit SimFileError(const std::string& what) : grain::Error(what) {}
};

/// What follows the 13 state values of each body.
enum class AdditionalBytesType : std::uint32_t {
  Nothing = 0,                       ///< 0 bytes (serial runs)
  Process = 1,                       ///< uint32 rank (4 bytes)
  ProcessMaterial = 2,               ///< uint32 rank, uint32 material (8)
  ProcessMaterialOverlap = 3,        ///< uint32 rank, uint32 material, double overlap (16)
  ProcessOverlap = 4,                ///< uint32 rank, double overlap (12)
  ProcessMaterialOverlapGeomId = 5,  ///< rank, material, overlap, uint32 globalGeomId (20; MPI)
};

/// Bytes per body of an additional-bytes type; throws SimFileError for unknown types.
std::uint32_t additionalBytesPerBody(AdditionalBytesType type);

/// The 28-byte header at `out` (signature, version, counts, additional-bytes type and size), as
/// SimFileWriter writes it; for writers of their own (collective MPI-IO output).
struct SimFileHeader;
void encodeSimHeader(char* out, const SimFileHeader& header);

/// Additional per-body data; fields not present in a file's type are 0.
struct AdditionalBodyData {
  std::uint32_t processRank = 0;
  MaterialId material = 0;
  double overlapTotal = 0.0;  ///< sum of the body's penetration depths in the step (m)
  std::uint32_t globalGeomId = 0;
};

/// The 28-byte file header (all uint32, native byte order).
struct SimFileHeader {
  static constexpr std::size_t kSize = 28;
  static constexpr std::uint32_t kVersion = 2;
  std::uint32_t version = kVersion;
  std::uint32_t nSimBodies = 0;
  std::uint32_t nDofQ = 7;  ///< r_S (3) + quaternion (4)
  std::uint32_t nDofU = 6;  ///< v_S (3) + omega_K (3)
  AdditionalBytesType additionalType = AdditionalBytesType::Nothing;
  std::uint32_t additionalBytes = 0;  ///< per body

  /// 8 (id) + 8 (nDofQ + nDofU) + additionalBytes.
  std::uint64_t bytesPerBody() const { return 8 + 8ull * (nDofQ + nDofU) + additionalBytes; }
  /// 8 (time) + nSimBodies bytesPerBody().
  std::uint64_t bytesPerState() const { return 8 + nSimBodies * bytesPerBody(); }
};

/// One body in one state.
struct SimBodyState {
  BodyId id = 0;
  Vec3 position = Vec3::Zero();         ///< r_S in I (m)
  Quat orientation = Quat::Identity();  ///< K -> I; stored x, y, z, w
  Vec3 velocity = Vec3::Zero();         ///< v_S in I (m/s)
  Vec3 omegaBody = Vec3::Zero();        ///< angular velocity in K (rad/s)
  AdditionalBodyData additional;
};

/// Encodes one body record (id, the 13 state values, the additional bytes of `type`) at `out`,
/// which must have SimFileHeader::bytesPerBody() bytes; returns the position after it.
char* encodeSimBody(char* out, AdditionalBytesType type, const SimBodyState& body);
/// Decodes one body record at `in` (SimFileHeader::bytesPerBody() bytes) into `body`; the
/// additional bytes only if `type` is a known type (else `body.additional` is zero). For readers of
/// their own (collective MPI-IO input).
void decodeSimBody(const char* in, AdditionalBytesType type, SimBodyState& body);
/// The header at `in` (SimFileHeader::kSize bytes), checked as SimFileReader::open checks it;
/// throws SimFileError "NAME: message" (`name`: the file, for the message).
SimFileHeader decodeSimHeader(const char* in, const std::string& name);

/// One state of a .sim file.
struct SimState {
  double time = 0.0;                 ///< s
  std::vector<SimBodyState> bodies;  ///< in file order
  /// Index of each id in `bodies` (filled by SimFileReader).
  std::unordered_map<BodyId, std::size_t> indexOfId;

  /// The body with this id, or nullptr.
  const SimBodyState* find(BodyId id) const;
  /// Sorts `bodies` by id (the serial writer's order) and rebuilds `indexOfId`.
  void sortById();
  /// Rebuilds `indexOfId` from `bodies`; throws SimFileError naming a duplicate id.
  void rebuildIndex();
};

/// Which state SimFileReader::readSpecific picks (GRSF's whichState="beg|end|time").
enum class StateSelector : std::uint8_t {
  First,  ///< the first state
  Last,   ///< the last complete state
  Time,   ///< the first state with time >= the requested time
};

/// Per-state data for additional-bytes types other than Nothing. Spans are indexed like the
/// BodyStorage passed to writeState; empty spans write 0. The material comes from the storage.
struct SimStateExtras {
  std::uint32_t processRank = 0;
  std::span<const Real> totalOverlap;
  std::span<const std::uint32_t> globalGeomId;
};

/// Writes a .sim file: header, then one state per writeState call. Each state holds the
/// simulated local bodies sorted by id, and the stream is flushed after every state, so a run
/// that is killed leaves every complete state readable.
class SimFileWriter {
 public:
  SimFileWriter() = default;
  SimFileWriter(const SimFileWriter&) = delete;
  SimFileWriter& operator=(const SimFileWriter&) = delete;
  ~SimFileWriter();

  /// Creates or truncates `file`. Throws SimFileError.
  void open(const std::filesystem::path& file,
            AdditionalBytesType type = AdditionalBytesType::Nothing);
  /// Writes the header for the simulated local bodies of `bodies`.
  void writeHeader(const BodyStorage& bodies);
  /// Writes the header for nSimBodies bodies.
  void writeHeader(std::uint32_t nSimBodies);
  /// Appends the state at `time` (s): the simulated local bodies sorted by id. Throws
  /// SimFileError if their number differs from the header's.
  void writeState(double time, const BodyStorage& bodies, const SimStateExtras& extras = {});
  /// Appends a state with exactly these bodies in this order (as distributed runs do; the
  /// order may differ between states). Additional data comes from each body's `additional`.
  /// Throws SimFileError if their number differs from the header's.
  void writeState(double time, std::span<const SimBodyState> bodies);
  /// Opens an existing file for appending: checks its header against `expected` (if given),
  /// cuts a partial trailing state and continues after the last complete state. Returns the
  /// number of complete states. Throws SimFileError.
  std::uint64_t openAppend(const std::filesystem::path& file,
                           const std::optional<SimFileHeader>& expected = std::nullopt);
  /// Flushes and closes (also done by the destructor).
  void close();

  bool isOpen() const { return out_.is_open(); }
  const SimFileHeader& header() const { return header_; }
  std::uint64_t statesWritten() const { return states_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void updateOrder(const BodyStorage& bodies);
  /// The message of a failed state write (errno, the states that are complete).
  std::string writeFailure(double time) const;
  [[noreturn]] void fail(const std::string& message) const;

  std::filesystem::path path_;
  std::ofstream out_;
  SimFileHeader header_;
  bool headerWritten_ = false;
  std::uint64_t states_ = 0;
  std::vector<std::size_t> order_;  // body indices sorted by id (cached between states)
  std::vector<BodyId> orderIds_;
  std::vector<char> buffer_;
};

/// Reads a .sim file. The number of states follows from the file size; a partial trailing
/// state (a run killed while writing) is ignored and reported by truncated().
class SimFileReader {
 public:
  /// Opens and checks the header (signature "MBSF", version 2, nDOFq 7, nDOFu 6, additional
  /// bytes consistent with the type). Throws SimFileError naming the file.
  void open(const std::filesystem::path& file);

  const SimFileHeader& header() const { return header_; }
  /// Number of complete states.
  std::size_t stateCount() const { return stateCount_; }
  /// Whether the file ends with a partial state (ignored).
  bool truncated() const { return trailingBytes_ != 0; }
  /// Bytes after the last complete state.
  std::uint64_t trailingBytes() const { return trailingBytes_; }
  /// "FILE: ignoring a partial last state (N bytes after state K)" if truncated(), else "".
  std::string truncationWarning() const;
  std::uint64_t fileSize() const { return fileSize_; }
  const std::filesystem::path& path() const { return path_; }

  /// Time (s) of state k (0-based).
  double readTime(std::size_t k);
  /// Times of all states.
  std::vector<double> readTimes();
  /// State k with every body; throws SimFileError if k >= stateCount() or if an id occurs
  /// twice in the state.
  SimState readState(std::size_t k);
  /// Reads state k into `out`, reusing its memory. `buildIndex` = false skips indexOfId (and
  /// the duplicate check) when the caller only iterates over the bodies.
  void readState(std::size_t k, SimState& out, bool buildIndex = true);
  /// Only the bodies with the given ids from state k, in the order of `ids` (keyed by id, so
  /// the body order within the file's state does not matter). Ids not in the state throw
  /// SimFileError unless `skipMissing`, in which case they are left out.
  SimState readBodies(std::size_t k, std::span<const BodyId> ids, bool skipMissing = false);
  /// Index of the first state with time >= t (s), or nullopt if every state is earlier
  /// (binary search; the times of a file are non-decreasing).
  std::optional<std::size_t> findStateAtTime(double t);
  /// The state chosen by `which` (`t` in s is used by StateSelector::Time only). Throws
  /// SimFileError if the file has no states or no state at or after t.
  SimState readSpecific(StateSelector which, double t = 0.0);
  /// Ids of the bodies of state k in file order.
  std::vector<BodyId> readIds(std::size_t k);
  /// Calls `visit` for every body of state k in file order, decoding `blockBodies` bodies at a
  /// time: the memory used does not grow with the state (a process of a distributed run that
  /// keeps only its share of a large state). Returns the state's time (s). No duplicate check.
  double forEachBody(std::size_t k, const std::function<void(const SimBodyState&)>& visit,
                     std::size_t blockBodies = 65536);

 private:
  void seekState(std::size_t k);
  void readStateBytes(std::size_t k);
  [[noreturn]] void fail(const std::string& message) const;

  std::filesystem::path path_;
  std::ifstream in_;
  SimFileHeader header_;
  std::uint64_t fileSize_ = 0;
  std::size_t stateCount_ = 0;
  std::uint64_t trailingBytes_ = 0;
  std::vector<char> buffer_;
};

}  // namespace grain::io
