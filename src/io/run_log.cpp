// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include <grain/core/common/error.hpp>
#include <grain/io/run_log.hpp>
#include <grain/io/version.hpp>

namespace grain::io {

namespace {

void appendNumber(std::string& s, double x) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  s.append(buf, ec == std::errc() ? end : buf);
}

template <class Int>
void appendInteger(std::string& s, Int x) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  s.append(buf, ec == std::errc() ? end : buf);
}

/// Stage columns in the order of the first log format; columns added later (such as the Forces
/// stage) come at the end of a line, so older logs can be extended (upgradeLog).
constexpr std::array kLeadingStages{Stage::FirstHalfStep,      Stage::Exchange,
                                    Stage::CollisionDetection, Stage::ContactGraph,
                                    Stage::ContactSolve,       Stage::SecondHalfStep};
constexpr std::array kTrailingStages{Stage::Forces};
static_assert(kLeadingStages.size() + kTrailingStages.size() ==
              static_cast<std::size_t>(Stage::Count));

double stageTime(const StepStats& s, Stage stage) {
  return s.stageSeconds[static_cast<std::size_t>(stage)];
}

}  // namespace

RunLogWriter::~RunLogWriter() {
  close();
}

std::string RunLogWriter::headerLine() {
  std::string h = "# WallTime [s]\tSimulationTime [s]\tStep\tStepTime [s]";
  auto stageColumn = [&h](Stage stage) {
    h += "\t";
    h += toString(stage);
    h += "Time [s]";
  };
  for (const Stage stage : kLeadingStages) {
    stageColumn(stage);
  }
  h += "\tnIterations\tConverged\tIsFinite\tnContacts\tMaxOverlap [m]"
       "\tKinEnergy [J]\tRotKinEnergy [J]\tPotEnergy [J]\tTotalEnergy [J]"
       "\tNaturalMapError\tKoziaraError";
  for (const Stage stage : kTrailingStages) {
    stageColumn(stage);
  }
  h += "\tBytesSent\tMessagesSent\tFallbacks";
  return h;
}

std::string RunLogWriter::versionLine() {
  return "# grain " + std::string(versionString());
}

std::string RunLogWriter::formatLine(const StepStats& s, double wallSeconds) {
  std::string line;
  line.reserve(256);
  appendNumber(line, wallSeconds);
  line += '\t';
  appendNumber(line, s.time);
  line += '\t';
  appendInteger(line, s.step);
  line += '\t';
  appendNumber(line, s.stepSeconds);
  for (const Stage stage : kLeadingStages) {
    line += '\t';
    appendNumber(line, stageTime(s, stage));
  }
  line += '\t';
  appendInteger(line, s.iterations);
  line += s.converged ? "\t1" : "\t0";
  line += s.finite ? "\t1" : "\t0";
  line += '\t';
  appendInteger(line, s.contacts);
  for (const double x : {s.maxPenetration, s.kineticEnergy, s.rotationalEnergy, s.potentialEnergy,
                         s.kineticEnergy + s.potentialEnergy, s.naturalMapError, s.koziaraError}) {
    line += '\t';
    appendNumber(line, x);
  }
  for (const Stage stage : kTrailingStages) {
    line += '\t';
    appendNumber(line, stageTime(s, stage));
  }
  line += '\t';
  appendInteger(line, s.bytesSent);
  line += '\t';
  appendInteger(line, s.messagesSent);
  line += '\t';
  appendInteger(line, s.fallbacks);
  return line;
}

void RunLogWriter::open(const std::filesystem::path& file) {
  close();
  path_ = file;
  out_.open(file, std::ios::out | std::ios::trunc);
  if (!out_) {
    throw Error(file.string() + ": cannot create the run log");
  }
  out_ << headerLine() << '\n' << versionLine() << '\n';
  out_.flush();
  start_ = std::chrono::steady_clock::now();
  lastFlush_ = start_;
  linesSinceFlush_ = 0;
}

void RunLogWriter::openAppend(const std::filesystem::path& file, std::uint64_t lastStep) {
  close();
  if (!std::filesystem::exists(file)) {
    open(file);
    return;
  }
  std::ifstream in(file, std::ios::binary);
  std::string line;
  std::uint64_t keep = 0;  // bytes to keep
  std::uint64_t offset = 0;
  bool header = false;
  std::string headerText;
  while (std::getline(in, line)) {
    const std::uint64_t next = offset + line.size() + 1;
    if (in.eof()) {
      break;  // no newline: a partial last line
    }
    if (line.rfind("#", 0) == 0) {
      if (!header) {
        headerText = line;
      }
      header = true;
      keep = next;
    } else if (!line.empty()) {
      // The third column is the step number.
      std::size_t pos = 0;
      for (int tabs = 0; tabs < 2 && pos != std::string::npos; ++tabs) {
        pos = line.find('\t', pos);
        pos = pos == std::string::npos ? pos : pos + 1;
      }
      std::uint64_t step = 0;
      const char* first = pos == std::string::npos ? nullptr : line.c_str() + pos;
      const auto [end, ec] = first != nullptr
                                 ? std::from_chars(first, line.c_str() + line.size(), step)
                                 : std::from_chars_result{nullptr, std::errc::invalid_argument};
      if (ec != std::errc() || step > lastStep) {
        break;
      }
      keep = next;
    }
    offset = next;
  }
  in.close();
  if (!header) {
    open(file);
    return;
  }
  if (headerText != headerLine()) {
    upgradeLog(file, headerText, keep);
  } else {
    std::error_code ec;
    std::filesystem::resize_file(file, keep, ec);
    if (ec) {
      throw Error(file.string() + ": cannot cut the run log: " + ec.message());
    }
  }
  path_ = file;
  out_.open(file, std::ios::out | std::ios::app);
  if (!out_) {
    throw Error(file.string() + ": cannot open the run log for appending");
  }
  start_ = std::chrono::steady_clock::now();
  lastFlush_ = start_;
  linesSinceFlush_ = 0;
}

void RunLogWriter::upgradeLog(const std::filesystem::path& file, const std::string& oldHeader,
                              std::uint64_t keep) {
  const std::string current = headerLine();
  // Columns are only ever added at the end: an older header is a prefix of the current one.
  if (current.compare(0, oldHeader.size(), oldHeader) != 0 || current.size() == oldHeader.size() ||
      current[oldHeader.size()] != '\t') {
    throw Error(file.string() + ": not a grain run log of a known format (header '" + oldHeader +
                "'); cannot append to it");
  }
  const auto missing = std::count(current.begin() + static_cast<std::ptrdiff_t>(oldHeader.size()),
                                  current.end(), '\t');
  std::string padding;
  for (std::ptrdiff_t k = 0; k < missing; ++k) {
    padding += "\tnan";
  }
  std::ifstream in(file, std::ios::binary);
  std::filesystem::path part = file;
  part += ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << current << '\n';
    std::string line;
    std::uint64_t offset = 0;
    bool header = true;  // the old header comes first; later comment lines are kept
    while (offset < keep && std::getline(in, line)) {
      offset += line.size() + 1;
      if (line.rfind("#", 0) == 0) {
        if (!header) {
          out << line << '\n';
        }
        header = false;
        continue;
      }
      out << line << (line.empty() ? "" : padding) << '\n';
    }
    if (!out) {
      throw Error(part.string() + ": cannot write the upgraded run log");
    }
  }
  in.close();
  std::error_code ec;
  std::filesystem::rename(part, file, ec);
  if (ec) {
    throw Error(file.string() + ": cannot replace the run log: " + ec.message());
  }
}

void RunLogWriter::write(const StepStats& stats) {
  if (!out_.is_open()) {
    throw Error("run log: write before open");
  }
  const auto now = std::chrono::steady_clock::now();
  const double wall = std::chrono::duration<double>(now - start_).count();
  errno = 0;
  out_ << formatLine(stats, wall) << '\n';
  ++linesSinceFlush_;
  if (linesSinceFlush_ >= flushEveryLines ||
      std::chrono::duration<double>(now - lastFlush_).count() >= flushEverySeconds) {
    flush();
  }
  if (!out_) {
    throw Error(path_.string() + ": cannot write the line of step " + std::to_string(stats.step) +
                (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) +
                " (disk full or file-size limit?)");
  }
}

void RunLogWriter::flush() {
  if (out_.is_open()) {
    out_.flush();
    lastFlush_ = std::chrono::steady_clock::now();
    linesSinceFlush_ = 0;
  }
}

void RunLogWriter::close() {
  if (out_.is_open()) {
    out_.flush();
    out_.close();
  }
}

}  // namespace grain::io
