// SPDX-License-Identifier: MIT
#include <algorithm>
#include <bit>
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

// ---- SimFileWriter ----------------------------------------------------------------------------

SimFileWriter::~SimFileWriter() {
  if (out_.is_open()) {
    out_.close();
  }
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
  char* p = bytes;
  std::memcpy(p, kSignature, 4);
  p += 4;
  put(p, header_.version);
  put(p, header_.nSimBodies);
  put(p, header_.nDofQ);
  put(p, header_.nDofU);
  put(p, static_cast<std::uint32_t>(header_.additionalType));
  put(p, header_.additionalBytes);
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
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_.flush();
  if (!out_) {
    fail("write failed");
  }
  ++states_;
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
  header_ = h;
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

SimState SimFileReader::readState(std::size_t k) {
  seekState(k);
  buffer_.resize(header_.bytesPerState());
  in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  if (!in_) {
    fail("read failed");
  }
  SimState s;
  const char* p = buffer_.data();
  s.time = get<double>(p);
  s.bodies.resize(header_.nSimBodies);
  s.indexOfId.reserve(header_.nSimBodies);
  const bool decode = isKnownType(static_cast<std::uint32_t>(header_.additionalType));
  for (std::size_t i = 0; i < header_.nSimBodies; ++i) {
    SimBodyState& b = s.bodies[i];
    b.id = get<std::uint64_t>(p);
    double v[13];
    std::memcpy(v, p, sizeof(v));
    p += sizeof(v);
    b.position = Vec3(v[0], v[1], v[2]);
    b.orientation.coeffs() = Vec4(v[3], v[4], v[5], v[6]);  // x, y, z, w
    b.velocity = Vec3(v[7], v[8], v[9]);
    b.omegaBody = Vec3(v[10], v[11], v[12]);
    if (decode) {
      b.additional = getAdditional(p, header_.additionalType);
    }
    p += header_.additionalBytes;
    s.indexOfId.emplace(b.id, i);
  }
  return s;
}

}  // namespace grain::io
