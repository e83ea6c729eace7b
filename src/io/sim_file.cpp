// SPDX-License-Identifier: MIT
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <numeric>

#include <grain/io/sim_file.hpp>

namespace grain::io {

static_assert(std::endian::native == std::endian::little,
              ".sim files are little-endian; a big-endian host would need byte swapping");

namespace {

constexpr char kSignature[4] = {'M', 'B', 'S', 'F'};

template <class T>
void put(char*& p, const T& value) {
  std::memcpy(p, &value, sizeof(T));
  p += sizeof(T);
}

template <class T>
T get(const char*& p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  p += sizeof(T);
  return value;
}

void putAdditional(char*& p, AdditionalBytesType type, const AdditionalBodyData& a) {
  switch (type) {
    case AdditionalBytesType::Nothing:
      break;
    case AdditionalBytesType::Process:
      put(p, a.processRank);
      break;
    case AdditionalBytesType::ProcessMaterial:
      put(p, a.processRank);
      put(p, a.material);
      break;
    case AdditionalBytesType::ProcessMaterialOverlap:
      put(p, a.processRank);
      put(p, a.material);
      put(p, a.overlapTotal);
      break;
    case AdditionalBytesType::ProcessOverlap:
      put(p, a.processRank);
      put(p, a.overlapTotal);
      break;
    case AdditionalBytesType::ProcessMaterialOverlapGeomId:
      put(p, a.processRank);
      put(p, a.material);
      put(p, a.overlapTotal);
      put(p, a.globalGeomId);
      break;
  }
}

AdditionalBodyData getAdditional(const char* p, AdditionalBytesType type) {
  AdditionalBodyData a;
  switch (type) {
    case AdditionalBytesType::Nothing:
      break;
    case AdditionalBytesType::Process:
      a.processRank = get<std::uint32_t>(p);
      break;
    case AdditionalBytesType::ProcessMaterial:
      a.processRank = get<std::uint32_t>(p);
      a.material = get<std::uint32_t>(p);
      break;
    case AdditionalBytesType::ProcessMaterialOverlap:
      a.processRank = get<std::uint32_t>(p);
      a.material = get<std::uint32_t>(p);
      a.overlapTotal = get<double>(p);
      break;
    case AdditionalBytesType::ProcessOverlap:
      a.processRank = get<std::uint32_t>(p);
      a.overlapTotal = get<double>(p);
      break;
    case AdditionalBytesType::ProcessMaterialOverlapGeomId:
      a.processRank = get<std::uint32_t>(p);
      a.material = get<std::uint32_t>(p);
      a.overlapTotal = get<double>(p);
      a.globalGeomId = get<std::uint32_t>(p);
      break;
  }
  return a;
}

bool isKnownType(std::uint32_t t) {
  return t <= 5;
}

/// Decodes one body record (id, 13 doubles, additional bytes) starting at p.
void decodeBody(const char* p, AdditionalBytesType type, bool decodeAdditional, SimBodyState& b) {
  b.id = get<std::uint64_t>(p);
  double v[13];
  std::memcpy(v, p, sizeof(v));
  p += sizeof(v);
  b.position = Vec3(v[0], v[1], v[2]);
  b.orientation.coeffs() = Vec4(v[3], v[4], v[5], v[6]);  // x, y, z, w
  b.velocity = Vec3(v[7], v[8], v[9]);
  b.omegaBody = Vec3(v[10], v[11], v[12]);
  b.additional = decodeAdditional ? getAdditional(p, type) : AdditionalBodyData{};
}

/// Encodes one body record at p and advances p.
void encodeBody(char*& p, AdditionalBytesType type, const SimBodyState& b) {
  put(p, static_cast<std::uint64_t>(b.id));
  const Vec3& r = b.position;
  const Quat& q = b.orientation;
  const Vec3& v = b.velocity;
  const Vec3& w = b.omegaBody;
  const double values[13] = {r.x(), r.y(), r.z(), q.x(), q.y(), q.z(), q.w(),
                             v.x(), v.y(), v.z(), w.x(), w.y(), w.z()};
  std::memcpy(p, values, sizeof(values));
  p += sizeof(values);
  putAdditional(p, type, b.additional);
}

bool isWritten(const BodyStorage& b, std::size_t i) {
  return b.isSimulated(i) && b.ownerships()[i] == BodyOwnership::Local;
}

std::string printable(const char* s, std::size_t n) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  return out;
}

}  // namespace

void encodeSimHeader(char* out, const SimFileHeader& header) {
  char* p = out;
  std::memcpy(p, kSignature, 4);
  p += 4;
  put(p, header.version);
  put(p, header.nSimBodies);
  put(p, header.nDofQ);
  put(p, header.nDofU);
  put(p, static_cast<std::uint32_t>(header.additionalType));
  put(p, header.additionalBytes);
}

char* encodeSimBody(char* out, AdditionalBytesType type, const SimBodyState& body) {
  encodeBody(out, type, body);
  return out;
}

void decodeSimBody(const char* in, AdditionalBytesType type, SimBodyState& body) {
  decodeBody(in, type, isKnownType(static_cast<std::uint32_t>(type)), body);
}

SimFileHeader decodeSimHeader(const char* bytes, const std::string& name) {
  const auto fail = [&](const std::string& message) { throw SimFileError(name + ": " + message); };
  if (std::memcmp(bytes, kSignature, 4) != 0) {
    fail("not a .sim file (signature '" + printable(bytes, 4) + "', expected 'MBSF')");
  }
  const char* p = bytes + 4;
  SimFileHeader h;
  h.version = get<std::uint32_t>(p);
  h.nSimBodies = get<std::uint32_t>(p);
  h.nDofQ = get<std::uint32_t>(p);
  h.nDofU = get<std::uint32_t>(p);
  const auto type = get<std::uint32_t>(p);
  h.additionalType = static_cast<AdditionalBytesType>(type);
  h.additionalBytes = get<std::uint32_t>(p);
  if (h.version != SimFileHeader::kVersion) {
    fail("unsupported .sim version " + std::to_string(h.version) + " (grain reads version 2)");
  }
  if (h.nDofQ != 7 || h.nDofU != 6) {
    fail("unsupported layout nDOFq=" + std::to_string(h.nDofQ) +
         ", nDOFu=" + std::to_string(h.nDofU) + " (grain reads 7 and 6)");
  }
  if (isKnownType(type) && h.additionalBytes != additionalBytesPerBody(h.additionalType)) {
    fail("additional-bytes type " + std::to_string(type) + " has " +
         std::to_string(additionalBytesPerBody(h.additionalType)) +
         " bytes per body, header says " + std::to_string(h.additionalBytes));
  }
  return h;
}

std::uint32_t additionalBytesPerBody(AdditionalBytesType type) {
  switch (type) {
    case AdditionalBytesType::Nothing:
      return 0;
    case AdditionalBytesType::Process:
      return 4;
    case AdditionalBytesType::ProcessMaterial:
      return 8;
    case AdditionalBytesType::ProcessMaterialOverlap:
      return 16;
    case AdditionalBytesType::ProcessOverlap:
      return 12;
    case AdditionalBytesType::ProcessMaterialOverlapGeomId:
      return 20;
  }
  throw SimFileError("unknown additional-bytes type " +
                     std::to_string(static_cast<std::uint32_t>(type)));
}

const SimBodyState* SimState::find(BodyId id) const {
  if (!indexOfId.empty()) {
    const auto it = indexOfId.find(id);
    return it == indexOfId.end() ? nullptr : &bodies[it->second];
  }
  const auto it = std::find_if(bodies.begin(), bodies.end(),
                               [id](const SimBodyState& b) { return b.id == id; });
  return it == bodies.end() ? nullptr : &*it;
}

void SimState::rebuildIndex() {
  indexOfId.clear();
  indexOfId.reserve(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (!indexOfId.emplace(bodies[i].id, i).second) {
      throw SimFileError("body id " + formatBodyId(bodies[i].id) +
                         " occurs twice in the state at t = " + std::to_string(time) + " s");
    }
  }
}

void SimState::sortById() {
  std::sort(bodies.begin(), bodies.end(),
            [](const SimBodyState& a, const SimBodyState& b) { return a.id < b.id; });
  rebuildIndex();
}

// ---- SimFileWriter ----------------------------------------------------------------------------

SimFileWriter::~SimFileWriter() {
  if (out_.is_open()) {
    out_.close();
  }
}

std::string SimFileWriter::writeFailure(double time) const {
  std::string m = "cannot write the state at t = " + std::to_string(time) + " s";
  if (errno != 0) {
    m += std::string(": ") + std::strerror(errno);
  }
  m += " (disk full or file-size limit?); the " + std::to_string(states_) +
       " states before it are complete";
  return m;
}

void SimFileWriter::fail(const std::string& message) const {
  throw SimFileError(path_.string() + ": " + message);
}

void SimFileWriter::open(const std::filesystem::path& file, AdditionalBytesType type) {
  close();
  path_ = file;
  header_ = SimFileHeader{};
  header_.additionalType = type;
  header_.additionalBytes = additionalBytesPerBody(type);
  headerWritten_ = false;
  states_ = 0;
  order_.clear();
  orderIds_.clear();
  out_.open(file, std::ios::binary | std::ios::out | std::ios::trunc);
  if (!out_) {
    fail("cannot create the file");
  }
}

void SimFileWriter::writeHeader(const BodyStorage& bodies) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    n += isWritten(bodies, i) ? 1 : 0;
  }
  if (n > 0xffffffffu) {
    fail("too many bodies for a .sim file");
  }
  writeHeader(static_cast<std::uint32_t>(n));
}

void SimFileWriter::writeHeader(std::uint32_t nSimBodies) {
  if (!out_.is_open()) {
    fail("writeHeader before open");
  }
  if (headerWritten_) {
    fail("header written twice");
  }
  header_.nSimBodies = nSimBodies;
  char bytes[SimFileHeader::kSize];
  encodeSimHeader(bytes, header_);
  out_.write(bytes, sizeof(bytes));
  out_.flush();
  if (!out_) {
    fail("write failed");
  }
  headerWritten_ = true;
}

void SimFileWriter::updateOrder(const BodyStorage& bodies) {
  const auto& ids = bodies.ids();
  // Reuse the order of the previous state if the same bodies sit at the same indices.
  bool valid = !order_.empty() || header_.nSimBodies == 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < bodies.size() && valid; ++i) {
    count += isWritten(bodies, i) ? 1 : 0;
  }
  valid = valid && count == order_.size();
  for (std::size_t k = 0; k < order_.size() && valid; ++k) {
    const std::size_t i = order_[k];
    valid = i < bodies.size() && ids[i] == orderIds_[k] && isWritten(bodies, i);
  }
  if (valid) {
    return;
  }
  order_.clear();
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (isWritten(bodies, i)) {
      order_.push_back(i);
    }
  }
  std::sort(order_.begin(), order_.end(),
            [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
  orderIds_.resize(order_.size());
  for (std::size_t k = 0; k < order_.size(); ++k) {
    orderIds_[k] = ids[order_[k]];
  }
}

void SimFileWriter::writeState(double time, const BodyStorage& bodies,
                               const SimStateExtras& extras) {
  if (!headerWritten_) {
    fail("writeState before writeHeader");
  }
  updateOrder(bodies);
  if (order_.size() != header_.nSimBodies) {
    fail("state has " + std::to_string(order_.size()) + " simulated bodies, the header says " +
         std::to_string(header_.nSimBodies));
  }
  buffer_.resize(header_.bytesPerState());
  char* p = buffer_.data();
  put(p, time);
  for (const std::size_t i : order_) {
    put(p, static_cast<std::uint64_t>(bodies.ids()[i]));
    const Vec3& r = bodies.positions()[i];
    const Quat& q = bodies.orientations()[i];
    const Vec3& v = bodies.velocities()[i];
    const Vec3& w = bodies.omegasBody()[i];
    const double values[13] = {r.x(), r.y(), r.z(), q.x(), q.y(), q.z(), q.w(),
                               v.x(), v.y(), v.z(), w.x(), w.y(), w.z()};
    std::memcpy(p, values, sizeof(values));
    p += sizeof(values);
    if (header_.additionalType != AdditionalBytesType::Nothing) {
      AdditionalBodyData a;
      a.processRank = extras.processRank;
      a.material = bodies.materials()[i];
      a.overlapTotal = i < extras.totalOverlap.size() ? extras.totalOverlap[i] : 0.0;
      a.globalGeomId = i < extras.globalGeomId.size() ? extras.globalGeomId[i] : 0;
      putAdditional(p, header_.additionalType, a);
    }
  }
  errno = 0;
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_.flush();
  if (!out_) {
    fail(writeFailure(time));
  }
  ++states_;
}

void SimFileWriter::writeState(double time, std::span<const SimBodyState> bodies) {
  if (!headerWritten_) {
    fail("writeState before writeHeader");
  }
  if (bodies.size() != header_.nSimBodies) {
    fail("state has " + std::to_string(bodies.size()) + " bodies, the header says " +
         std::to_string(header_.nSimBodies));
  }
  buffer_.resize(header_.bytesPerState());
  char* p = buffer_.data();
  put(p, time);
  for (const SimBodyState& b : bodies) {
    encodeBody(p, header_.additionalType, b);
  }
  errno = 0;
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_.flush();
  if (!out_) {
    fail(writeFailure(time));
  }
  ++states_;
}

std::uint64_t SimFileWriter::openAppend(const std::filesystem::path& file,
                                        const std::optional<SimFileHeader>& expected) {
  close();
  SimFileReader reader;
  reader.open(file);
  const SimFileHeader h = reader.header();
  path_ = file;
  if (!isKnownType(static_cast<std::uint32_t>(h.additionalType))) {
    fail("cannot append to a file with unknown additional-bytes type " +
         std::to_string(static_cast<std::uint32_t>(h.additionalType)));
  }
  if (expected &&
      (expected->nSimBodies != h.nSimBodies || expected->additionalType != h.additionalType)) {
    fail("cannot append: the file has " + std::to_string(h.nSimBodies) +
         " bodies and additional-bytes type " +
         std::to_string(static_cast<std::uint32_t>(h.additionalType)) + ", expected " +
         std::to_string(expected->nSimBodies) + " and " +
         std::to_string(static_cast<std::uint32_t>(expected->additionalType)));
  }
  const std::uint64_t states = reader.stateCount();
  const std::uint64_t end = SimFileHeader::kSize + states * h.bytesPerState();
  if (reader.truncated()) {
    std::error_code ec;
    std::filesystem::resize_file(file, end, ec);
    if (ec) {
      fail("cannot cut the partial last state: " + ec.message());
    }
  }
  header_ = h;
  headerWritten_ = true;
  states_ = states;
  order_.clear();
  orderIds_.clear();
  out_.open(file, std::ios::binary | std::ios::in | std::ios::out);
  if (!out_) {
    fail("cannot open the file for appending");
  }
  out_.seekp(static_cast<std::streamoff>(end));
  if (!out_) {
    fail("seek failed");
  }
  return states;
}

void SimFileWriter::close() {
  if (out_.is_open()) {
    out_.flush();
    out_.close();
  }
}

// ---- SimFileReader ----------------------------------------------------------------------------

void SimFileReader::fail(const std::string& message) const {
  throw SimFileError(path_.string() + ": " + message);
}

void SimFileReader::open(const std::filesystem::path& file) {
  path_ = file;
  in_.close();
  in_.clear();
  stateCount_ = 0;
  trailingBytes_ = 0;
  std::error_code ec;
  fileSize_ = std::filesystem::file_size(file, ec);
  if (ec) {
    fail("cannot open the file: " + ec.message());
  }
  // Unbuffered: every read is a block the reader asked for (a header, a time, a state or a
  // block of bodies), so opening the file and reading one time reads 36 bytes, not a buffer of
  // several kilobytes (every process of grain-sim-mpi does so for a GlobalInitialCondition).
  in_.rdbuf()->pubsetbuf(nullptr, 0);
  in_.open(file, std::ios::binary);
  if (!in_) {
    fail("cannot open the file");
  }
  if (fileSize_ < SimFileHeader::kSize) {
    fail("too short for a .sim header (" + std::to_string(fileSize_) + " bytes, need 28)");
  }
  char bytes[SimFileHeader::kSize];
  in_.read(bytes, sizeof(bytes));
  if (!in_) {
    fail("cannot read the header");
  }
  header_ = decodeSimHeader(bytes, path_.string());
  const std::uint64_t payload = fileSize_ - SimFileHeader::kSize;
  const std::uint64_t perState = header_.bytesPerState();
  stateCount_ = static_cast<std::size_t>(payload / perState);
  trailingBytes_ = payload % perState;
}

void SimFileReader::seekState(std::size_t k) {
  if (!in_.is_open()) {
    fail("not open");
  }
  if (k >= stateCount_) {
    fail("state " + std::to_string(k) + " does not exist (the file has " +
         std::to_string(stateCount_) + " complete states)");
  }
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(SimFileHeader::kSize + k * header_.bytesPerState()));
  if (!in_) {
    fail("seek failed");
  }
}

double SimFileReader::readTime(std::size_t k) {
  seekState(k);
  double t = 0.0;
  in_.read(reinterpret_cast<char*>(&t), sizeof(t));
  if (!in_) {
    fail("read failed");
  }
  return t;
}

std::vector<double> SimFileReader::readTimes() {
  std::vector<double> times(stateCount_);
  for (std::size_t k = 0; k < stateCount_; ++k) {
    times[k] = readTime(k);
  }
  return times;
}

std::string SimFileReader::truncationWarning() const {
  if (!truncated()) {
    return {};
  }
  return path_.string() + ": ignoring a partial last state (" + std::to_string(trailingBytes_) +
         " bytes after state " + std::to_string(stateCount_) + " of " +
         std::to_string(header_.bytesPerState()) + " bytes per state)";
}

void SimFileReader::readStateBytes(std::size_t k) {
  seekState(k);
  buffer_.resize(header_.bytesPerState());
  in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  if (!in_) {
    fail("read failed");
  }
}

SimState SimFileReader::readState(std::size_t k) {
  SimState s;
  readState(k, s, true);
  return s;
}

void SimFileReader::readState(std::size_t k, SimState& s, bool buildIndex) {
  readStateBytes(k);
  const char* p = buffer_.data();
  s.time = get<double>(p);
  s.bodies.resize(header_.nSimBodies);
  s.indexOfId.clear();
  const bool decode = isKnownType(static_cast<std::uint32_t>(header_.additionalType));
  const std::uint64_t perBody = header_.bytesPerBody();
  for (std::size_t i = 0; i < header_.nSimBodies; ++i) {
    decodeBody(p + i * perBody, header_.additionalType, decode, s.bodies[i]);
  }
  if (buildIndex) {
    try {
      s.rebuildIndex();
    } catch (const SimFileError& e) {
      fail("state " + std::to_string(k) + ": " + e.what());
    }
  }
}

std::vector<BodyId> SimFileReader::readIds(std::size_t k) {
  readStateBytes(k);
  std::vector<BodyId> ids(header_.nSimBodies);
  const std::uint64_t perBody = header_.bytesPerBody();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::memcpy(&ids[i], buffer_.data() + 8 + i * perBody, sizeof(BodyId));
  }
  return ids;
}

double SimFileReader::forEachBody(std::size_t k,
                                  const std::function<void(const SimBodyState&)>& visit,
                                  std::size_t blockBodies) {
  seekState(k);
  double time = 0.0;
  in_.read(reinterpret_cast<char*>(&time), sizeof(time));
  if (!in_) {
    fail("read failed");
  }
  const bool decode = isKnownType(static_cast<std::uint32_t>(header_.additionalType));
  const std::uint64_t perBody = header_.bytesPerBody();
  const std::uint64_t block = std::max<std::uint64_t>(blockBodies, 1);
  SimBodyState body;
  for (std::uint64_t done = 0; done < header_.nSimBodies;) {
    const std::uint64_t n = std::min<std::uint64_t>(block, header_.nSimBodies - done);
    buffer_.resize(n * perBody);
    in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    if (!in_) {
      fail("read failed");
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      decodeBody(buffer_.data() + i * perBody, header_.additionalType, decode, body);
      visit(body);
    }
    done += n;
  }
  return time;
}

SimState SimFileReader::readBodies(std::size_t k, std::span<const BodyId> ids, bool skipMissing) {
  readStateBytes(k);
  SimState s;
  std::memcpy(&s.time, buffer_.data(), sizeof(double));
  const std::uint64_t perBody = header_.bytesPerBody();
  const char* first = buffer_.data() + 8;
  // Offsets of the state's bodies by id (only the 8-byte ids are touched).
  std::unordered_map<BodyId, std::size_t> offset;
  offset.reserve(header_.nSimBodies);
  for (std::size_t i = 0; i < header_.nSimBodies; ++i) {
    BodyId id = 0;
    std::memcpy(&id, first + i * perBody, sizeof(id));
    if (!offset.emplace(id, i).second) {
      fail("state " + std::to_string(k) + ": body id " + formatBodyId(id) + " occurs twice");
    }
  }
  const bool decode = isKnownType(static_cast<std::uint32_t>(header_.additionalType));
  s.bodies.reserve(ids.size());
  for (const BodyId id : ids) {
    const auto it = offset.find(id);
    if (it == offset.end()) {
      if (skipMissing) {
        continue;
      }
      fail("state " + std::to_string(k) + " has no body " + formatBodyId(id));
    }
    s.bodies.emplace_back();
    decodeBody(first + it->second * perBody, header_.additionalType, decode, s.bodies.back());
  }
  try {
    s.rebuildIndex();
  } catch (const SimFileError& e) {
    fail(std::string("readBodies: ") + e.what());
  }
  return s;
}

std::optional<std::size_t> SimFileReader::findStateAtTime(double t) {
  std::size_t lo = 0;
  std::size_t hi = stateCount_;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (readTime(mid) < t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == stateCount_) {
    return std::nullopt;
  }
  return lo;
}

SimState SimFileReader::readSpecific(StateSelector which, double t) {
  if (stateCount_ == 0) {
    fail("the file has no complete state");
  }
  switch (which) {
    case StateSelector::First:
      return readState(0);
    case StateSelector::Last:
      return readState(stateCount_ - 1);
    case StateSelector::Time: {
      const auto k = findStateAtTime(t);
      if (!k) {
        fail("no state at or after t = " + std::to_string(t) +
             " s (the last is at t = " + std::to_string(readTime(stateCount_ - 1)) + " s)");
      }
      return readState(*k);
    }
  }
  fail("unknown state selector");
}

}  // namespace grain::io
