// SPDX-License-Identifier: MIT
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include <grain/core/common/error.hpp>
#include <grain/io/contact_force_file.hpp>

namespace grain::io {

namespace {

void appendNumber(std::string& s, double x) {
  if (std::isnan(x)) {
    s += "nan";
    return;
  }
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  s.append(buf, ec == std::errc() ? end : buf);
}

void appendInteger(std::string& s, std::uint64_t x) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  s.append(buf, ec == std::errc() ? end : buf);
}

/// Whitespace-separated tokens of a line.
std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

template <class T>
bool parse(std::string_view s, T& value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (s == "nan") {
      value = std::numeric_limits<T>::quiet_NaN();
      return true;
    }
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

/// The complete blocks of a file's text and where each ends (byte offset after its last row).
struct Scan {
  std::vector<ContactForceBlock> blocks;
  std::vector<std::size_t> blockEnd;
  std::size_t headerEnd = 0;
  bool header = false;
};

Scan scanText(const std::string& text, const std::filesystem::path& file) {
  Scan scan;
  std::size_t pos = 0;
  std::size_t lineNo = 0;
  ContactForceBlock current;
  std::size_t expected = 0;
  bool inBlock = false;
  auto fail = [&](const std::string& what) {
    throw Error(file.string() + ":" + std::to_string(lineNo) + ": " + what);
  };
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      break;  // partial last line
    }
    const std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++lineNo;
    if (line.rfind("#", 0) == 0) {
      if (!scan.blocks.empty() || inBlock) {
        fail("header line after the first block");
      }
      scan.header = true;
      scan.headerEnd = pos;
      continue;
    }
    const auto t = tokens(line);
    if (t.empty()) {
      continue;
    }
    if (!inBlock) {
      int converged = 0;
      int compatible = 0;
      if (t.size() != 14 || t[0] != "step" || t[2] != "time" || t[4] != "contacts" ||
          t[6] != "compatible" || t[8] != "iterations" || t[10] != "converged" ||
          t[12] != "residual" || !parse(t[1], current.step) || !parse(t[3], current.time) ||
          !parse(t[5], expected) || !parse(t[7], compatible) ||
          !parse(t[9], current.compatibleStats.iterations) || !parse(t[11], converged) ||
          !parse(t[13], current.compatibleStats.relativeResidual)) {
        fail(
            "expected a block line 'step S time T contacts N compatible C iterations K "
            "converged V residual R'");
      }
      current.compatible = compatible != 0;
      current.compatibleStats.converged = converged != 0;
      current.rows.clear();
      current.rows.reserve(expected);
      inBlock = true;
    } else {
      ContactForceRow r;
      std::uint32_t ids[4] = {};
      double v[11] = {};
      bool ok = t.size() == 15;
      for (int k = 0; ok && k < 4; ++k) {
        ok = parse(t[static_cast<std::size_t>(k)], ids[k]);
      }
      for (int k = 0; ok && k < 11; ++k) {
        ok = parse(t[static_cast<std::size_t>(4 + k)], v[k]);
      }
      if (!ok) {
        fail("expected a contact row of 15 columns");
      }
      r.bodyA = makeBodyId(ids[0], ids[1]);
      r.bodyB = makeBodyId(ids[2], ids[3]);
      r.point = Vec3(v[0], v[1], v[2]);
      r.normal = Vec3(v[3], v[4], v[5]);
      r.solverNormal = v[6];
      r.compatibleNormal = v[7];
      r.tangential = Vec3(v[8], v[9], v[10]);
      current.rows.push_back(r);
    }
    if (inBlock && current.rows.size() == expected) {
      std::uint32_t active = 0;
      for (const auto& r : current.rows) {
        active += r.compatibleNormal > 0.0 ? 1 : 0;
      }
      current.compatibleStats.activeContacts = active;
      scan.blocks.push_back(current);
      scan.blockEnd.push_back(pos);
      inBlock = false;
    }
  }
  return scan;
}

std::string readAll(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw Error(file.string() + ": cannot open the contact force file");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

void fillContactForceRows(const BodyStorage& bodies, const ContactStorage& contacts,
                          std::span<const Vec3> percussions,
                          std::span<const Real> compatiblePercussions, Real dt,
                          ContactForceBlock& block) {
  GRAIN_REQUIRE(percussions.size() == contacts.size(), "one percussion per contact needed");
  GRAIN_REQUIRE(compatiblePercussions.empty() || compatiblePercussions.size() == contacts.size(),
                "one compatible percussion per contact needed");
  const Real invDt = 1.0 / dt;
  block.compatible = !compatiblePercussions.empty();
  block.rows.resize(contacts.size());
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const std::uint32_t a = contacts.bodyA()[i];
    const std::uint32_t b = contacts.bodyB()[i];
    ContactForceRow& r = block.rows[i];
    r.bodyA = bodies.ids()[a];
    r.bodyB = bodies.ids()[b];
    const bool moves = bodies.motions()[b] != BodyMotion::Static;
    const Vec3 centreMid = moves ? Vec3(bodies.positions()[b] - 0.5 * dt * bodies.velocities()[b])
                                 : bodies.positions()[b];
    r.point = centreMid + contacts.rB()[i];
    r.normal = contacts.normals()[i];
    const Vec3& p = percussions[i];
    r.solverNormal = p.x() * invDt;
    r.compatibleNormal = block.compatible ? compatiblePercussions[i] * invDt
                                          : std::numeric_limits<Real>::quiet_NaN();
    const Mat3 frame = contacts.frame(i);
    r.tangential = (p.y() * frame.col(1) + p.z() * frame.col(2)) * invDt;
  }
}

ContactForceFileWriter::~ContactForceFileWriter() {
  try {
    close();
  } catch (...) {
  }
}

std::string ContactForceFileWriter::headerText() {
  return "# grain contact forces (docs/contact-output.md); forces in N (percussion / deltaT), "
         "vectors in the inertial frame\n"
         "# block line: step STEP time T[s] contacts N compatible 0|1 iterations K converged 0|1 "
         "residual R\n"
         "# row: groupA numberA groupB numberB px py pz [m] nx ny nz solverN [N] compatibleN [N] "
         "tx ty tz [N]\n";
}

void ContactForceFileWriter::open(const std::filesystem::path& file) {
  close();
  path_ = file;
  out_.open(file, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!out_) {
    throw Error(file.string() + ": cannot create the contact force file");
  }
  out_ << headerText();
  out_.flush();
}

void ContactForceFileWriter::openAppend(const std::filesystem::path& file, std::uint64_t lastStep) {
  close();
  if (!std::filesystem::exists(file)) {
    open(file);
    return;
  }
  const Scan scan = scanText(readAll(file), file);
  if (!scan.header) {
    open(file);
    return;
  }
  std::size_t keep = scan.headerEnd;
  for (std::size_t k = 0; k < scan.blocks.size() && scan.blocks[k].step <= lastStep; ++k) {
    keep = scan.blockEnd[k];
  }
  std::error_code ec;
  std::filesystem::resize_file(file, keep, ec);
  if (ec) {
    throw Error(file.string() + ": cannot cut the contact force file: " + ec.message());
  }
  path_ = file;
  out_.open(file, std::ios::out | std::ios::app | std::ios::binary);
  if (!out_) {
    throw Error(file.string() + ": cannot open the contact force file for appending");
  }
}

void ContactForceFileWriter::write(const ContactForceBlock& block) {
  if (!out_.is_open()) {
    throw Error("contact force file: write before open");
  }
  std::string& s = buffer_;
  s.clear();
  s += "step ";
  appendInteger(s, block.step);
  s += " time ";
  appendNumber(s, block.time);
  s += " contacts ";
  appendInteger(s, block.rows.size());
  s += block.compatible ? " compatible 1" : " compatible 0";
  s += " iterations ";
  appendInteger(s, block.compatibleStats.iterations);
  s += block.compatibleStats.converged ? " converged 1" : " converged 0";
  s += " residual ";
  appendNumber(s, block.compatibleStats.relativeResidual);
  s += '\n';
  for (const ContactForceRow& r : block.rows) {
    appendInteger(s, bodyGroup(r.bodyA));
    s += '\t';
    appendInteger(s, bodyNumber(r.bodyA));
    s += '\t';
    appendInteger(s, bodyGroup(r.bodyB));
    s += '\t';
    appendInteger(s, bodyNumber(r.bodyB));
    for (const Real x : {r.point.x(), r.point.y(), r.point.z(), r.normal.x(), r.normal.y(),
                         r.normal.z(), r.solverNormal, r.compatibleNormal, r.tangential.x(),
                         r.tangential.y(), r.tangential.z()}) {
      s += '\t';
      appendNumber(s, x);
    }
    s += '\n';
  }
  out_.write(s.data(), static_cast<std::streamsize>(s.size()));
  out_.flush();
  if (!out_) {
    throw Error(path_.string() + ": write failed");
  }
}

void ContactForceFileWriter::close() {
  if (out_.is_open()) {
    out_.flush();
    out_.close();
  }
}

void ContactForceRecorder::record(ContactForceFileWriter& file, const BodyStorage& bodies,
                                  const ContactStorage& contacts, std::span<const Vec3> percussions,
                                  const ContactParameterMap& parameters, Real dt,
                                  std::uint64_t step, double time) {
  block_.step = step;
  block_.time = time;
  block_.compatibleStats = CompatibleForceStats{};
  if (compatibleForces_) {
    const auto start = std::chrono::steady_clock::now();
    contactRelativeStiffness(bodies, contacts, parameters, stiffness_);
    solverNormal_.resize(percussions.size());
    for (std::size_t i = 0; i < percussions.size(); ++i) {
      solverNormal_[i] = percussions[i].x();
    }
    block_.compatibleStats =
        solver_.solve(bodies, contacts, solverNormal_, stiffness_, settings_, compatibleNormal_);
    compatibleSeconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    notConverged_ += block_.compatibleStats.converged ? 0 : 1;
    fillContactForceRows(bodies, contacts, percussions, compatibleNormal_, dt, block_);
    block_.compatible = true;  // also without contacts
  } else {
    fillContactForceRows(bodies, contacts, percussions, {}, dt, block_);
  }
  file.write(block_);
  ++blocks_;
}

std::vector<ContactForceBlock> readContactForceFile(const std::filesystem::path& file) {
  Scan scan = scanText(readAll(file), file);
  if (!scan.header) {
    throw Error(file.string() + ": not a contact force file (no header)");
  }
  return std::move(scan.blocks);
}

}  // namespace grain::io
