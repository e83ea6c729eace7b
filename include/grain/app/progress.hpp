// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace grain::app {

/// Progress of a long run: on a terminal a single line redrawn at most 4 times a second with
/// percentage, simulated time, step rate and ETA; otherwise (log files, batch jobs) a plain
/// line every `plainIntervalSeconds`.
class ProgressReporter {
 public:
  /// `total` is the amount of work (e.g. the end time in s); `unit` names it.
  ProgressReporter(double start, double total, std::FILE* out, double plainIntervalSeconds = 10.0);
  /// Reports that work has reached `done`; `extra` is appended (e.g. contacts, iterations).
  void update(double done, const std::string& extra = {});
  /// Ends the progress display (newline on a terminal) and prints the total wall time.
  void finish(const std::string& message);
  bool isTerminal() const { return terminal_; }

  /// "1h 02m 03s" / "2m 03s" / "3.4s".
  static std::string formatDuration(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  double start_;
  double total_;
  std::FILE* out_;
  double interval_;
  bool terminal_;
  Clock::time_point begin_;
  Clock::time_point lastPrint_;
  bool printedAny_ = false;
};

}  // namespace grain::app
