// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <grain/core/timestepping/step_stats.hpp>

namespace grain::io {

/// Writes the per-step run log SimData.dat: tab-separated text, one header line starting with
/// "# " that names the columns with their units, a comment line "# grain X.Y.Z" naming the
/// version that created the log (versionLine(); logs of older versions have none), then one
/// line per step:
///
///   WallTime [s]  SimulationTime [s]  Step  StepTime [s]  <Stage>Time [s] (one per Stage, in
///   execution order)  nIterations  Converged  IsFinite  nContacts  MaxOverlap [m]
///   KinEnergy [J]  RotKinEnergy [J]  PotEnergy [J]  TotalEnergy [J]  NaturalMapError
///   KoziaraError
///
/// The two errors are the accuracy measures of the contact solver's final iterate
/// (StepStats::naturalMapError, koziaraError; dimensionless).
/// WallTime is the wall-clock time since open(). Numbers are written in the shortest form that
/// reads back to the same double; flags as 0/1. The stream is flushed every `flushEveryLines`
/// lines (by default every line, so that a run killed with SIGKILL leaves the lines of every
/// step it finished, which a restart keeps up to its state) and at least every
/// `flushEverySeconds` of wall time, and on close.
class RunLogWriter {
 public:
  RunLogWriter() = default;
  RunLogWriter(const RunLogWriter&) = delete;
  RunLogWriter& operator=(const RunLogWriter&) = delete;
  ~RunLogWriter();

  /// Creates or truncates `file` and writes the header and version lines. Throws grain::Error.
  void open(const std::filesystem::path& file);
  /// Continues an existing run log (restarts): keeps the header and the lines of steps up to
  /// `lastStep`, drops the rest (including a partial last line) and appends after them. A
  /// missing file is created with the header. WallTime starts again at 0. A log of an older
  /// format (its header a prefix of headerLine(): columns added since are missing) is first
  /// rewritten with the current header, the missing columns of its lines filled with "nan"
  /// (comment lines after the header are kept).
  /// Throws grain::Error, also for a header of no known format.
  void openAppend(const std::filesystem::path& file, std::uint64_t lastStep);
  /// Appends the line of one step.
  void write(const StepStats& stats);
  void flush();
  void close();
  bool isOpen() const { return out_.is_open(); }

  /// The header line (without newline).
  static std::string headerLine();
  /// The comment line after the header: "# grain " and versionString() (without newline).
  static std::string versionLine();
  /// The line of one step (without newline) for the given wall time since the start (s).
  static std::string formatLine(const StepStats& stats, double wallSeconds);

  std::uint32_t flushEveryLines = 1;
  double flushEverySeconds = 2.0;

 private:
  /// Rewrites the first `keep` bytes of `file` (header `oldHeader`) in the current format.
  static void upgradeLog(const std::filesystem::path& file, const std::string& oldHeader,
                         std::uint64_t keep);

  std::filesystem::path path_;
  std::ofstream out_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastFlush_;
  std::uint32_t linesSinceFlush_ = 0;
};

}  // namespace grain::io
