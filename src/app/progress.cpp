// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <unistd.h>

#include <grain/app/progress.hpp>

namespace grain::app {

ProgressReporter::ProgressReporter(double start, double total, std::FILE* out,
                                   double plainIntervalSeconds)
    : start_(start),
      total_(total),
      out_(out),
      interval_(plainIntervalSeconds),
      terminal_(isatty(fileno(out)) != 0),
      begin_(Clock::now()),
      lastPrint_(begin_) {}

std::string ProgressReporter::formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) {
    return "?";
  }
  char buf[64];
  if (seconds < 60.0) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else if (seconds < 3600.0) {
    const int s = static_cast<int>(seconds);
    std::snprintf(buf, sizeof buf, "%dm %02ds", s / 60, s % 60);
  } else {
    const long s = static_cast<long>(seconds);
    std::snprintf(buf, sizeof buf, "%ldh %02ldm %02lds", s / 3600, (s / 60) % 60, s % 60);
  }
  return buf;
}

void ProgressReporter::update(double done, const std::string& extra) {
  const auto now = Clock::now();
  const double sinceLast = std::chrono::duration<double>(now - lastPrint_).count();
  const double minInterval = terminal_ ? 0.25 : interval_;
  if (printedAny_ && sinceLast < minInterval) {
    return;
  }
  lastPrint_ = now;
  printedAny_ = true;
  const double elapsed = std::chrono::duration<double>(now - begin_).count();
  const double span = total_ - start_;
  const double fraction = span > 0.0 ? std::clamp((done - start_) / span, 0.0, 1.0) : 1.0;
  const double eta = fraction > 0.0 ? elapsed * (1.0 - fraction) / fraction : NAN;
  char line[256];
  std::snprintf(line, sizeof line, "%5.1f%%  t = %.6g / %.6g s  elapsed %s  ETA %s",
                100.0 * fraction, done, total_, formatDuration(elapsed).c_str(),
                formatDuration(eta).c_str());
  if (terminal_) {
    std::fprintf(out_, "\r\033[K%s  %s", line, extra.c_str());
  } else {
    std::fprintf(out_, "progress: %s  %s\n", line, extra.c_str());
  }
  std::fflush(out_);
}

void ProgressReporter::finish(const std::string& message) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin_).count();
  if (terminal_ && printedAny_) {
    std::fprintf(out_, "\n");
  }
  std::fprintf(out_, "%s (wall time %s)\n", message.c_str(), formatDuration(elapsed).c_str());
  std::fflush(out_);
}

}  // namespace grain::app
