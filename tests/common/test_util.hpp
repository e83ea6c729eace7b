// SPDX-License-Identifier: MIT
// Helpers shared by the test executables: source and data folders, temporary folders, whole-file
// text I/O and running a shell command with its output captured.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <system_error>

#include <gtest/gtest.h>

namespace grain::testing {

/// The source tree's root.
inline std::filesystem::path sourceDir() {
  return std::filesystem::path(GRAIN_SOURCE_DIR);
}

/// tests/data of the source tree: the input files the tests read (tests/data/README.md says
/// where each set comes from).
inline std::filesystem::path testDataDir() {
  return sourceDir() / "tests" / "data";
}

/// A fresh directory below the system temp dir, named `prefix` + the running test's suite and
/// name, and removed at destruction.
class TempDir {
 public:
  /// Creates the (emptied) directory.
  explicit TempDir(const std::string& prefix) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = prefix;
    name += info ? std::string(info->test_suite_name()) + "_" + info->name() : "test";
    for (char& c : name) {
      if (c == '/') {
        c = '_';
      }
    }
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The directory.
  const std::filesystem::path& path() const { return path_; }
  /// A path inside the directory.
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// The whole file as a string (empty if it cannot be read).
inline std::string readText(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Writes `text` as the whole file.
inline void writeText(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

/// What a shell command printed and how it ended.
struct CommandResult {
  int exitCode = -1;   ///< exit status, -1 if it did not exit normally or did not start
  std::string output;  ///< stdout (with stderr unless sent to a file)
  std::string errors;  ///< stderr, if it was sent to a file
};

/// Runs the shell command line `cmd` as it is, capturing stdout.
inline CommandResult runShell(const std::string& cmd) {
  CommandResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    return r;
  }
  char buf[4096];
  while (fgets(buf, sizeof buf, pipe) != nullptr) {
    r.output += buf;
  }
  const int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// Runs a shell command line, capturing stdout and stderr together in `output`.
inline CommandResult runCommand(const std::string& cmd) {
  return runShell(cmd + " 2>&1");
}

/// Runs a shell command line with stderr sent to `errFile`; `errors` is that file's text.
inline CommandResult runCommand(const std::string& cmd, const std::filesystem::path& errFile) {
  CommandResult r = runShell(cmd + " 2> '" + errFile.string() + "'");
  r.errors = readText(errFile);
  return r;
}

}  // namespace grain::testing
