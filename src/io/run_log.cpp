// SPDX-License-Identifier: MIT
#include <charconv>

#include <grain/core/common/error.hpp>
#include <grain/io/run_log.hpp>

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

}  // namespace

RunLogWriter::~RunLogWriter() {
  close();
}

std::string RunLogWriter::headerLine() {
  std::string h = "# WallTime [s]\tSimulationTime [s]\tStep\tStepTime [s]";
  for (std::size_t k = 0; k < static_cast<std::size_t>(Stage::Count); ++k) {
    h += "\t";
    h += toString(static_cast<Stage>(k));
    h += "Time [s]";
  }
  h += "\tnIterations\tConverged\tIsFinite\tnContacts\tMaxOverlap [m]"
       "\tKinEnergy [J]\tRotKinEnergy [J]\tPotEnergy [J]\tTotalEnergy [J]";
  return h;
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
  for (const double t : s.stageSeconds) {
    line += '\t';
    appendNumber(line, t);
  }
  line += '\t';
  appendInteger(line, s.iterations);
  line += s.converged ? "\t1" : "\t0";
  line += s.finite ? "\t1" : "\t0";
  line += '\t';
  appendInteger(line, s.contacts);
  for (const double x : {s.maxPenetration, s.kineticEnergy, s.rotationalEnergy, s.potentialEnergy,
                         s.kineticEnergy + s.potentialEnergy}) {
    line += '\t';
    appendNumber(line, x);
  }
  return line;
}

void RunLogWriter::open(const std::filesystem::path& file) {
  close();
  path_ = file;
  out_.open(file, std::ios::out | std::ios::trunc);
  if (!out_) {
    throw Error(file.string() + ": cannot create the run log");
  }
  out_ << headerLine() << '\n';
  out_.flush();
  start_ = std::chrono::steady_clock::now();
  lastFlush_ = start_;
  linesSinceFlush_ = 0;
}

void RunLogWriter::write(const StepStats& stats) {
  if (!out_.is_open()) {
    throw Error("run log: write before open");
  }
  const auto now = std::chrono::steady_clock::now();
  const double wall = std::chrono::duration<double>(now - start_).count();
  out_ << formatLine(stats, wall) << '\n';
  ++linesSinceFlush_;
  if (linesSinceFlush_ >= flushEveryLines ||
      std::chrono::duration<double>(now - lastFlush_).count() >= flushEverySeconds) {
    flush();
  }
  if (!out_) {
    throw Error(path_.string() + ": write failed");
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
