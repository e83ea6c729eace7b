// SPDX-License-Identifier: MIT
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace grain::io::test {

/// tests/data of the source tree.
inline std::filesystem::path testDataDir() {
  return std::filesystem::path(GRAIN_SOURCE_DIR) / "tests" / "data";
}

/// The shared data directory (GRAIN_SHARED_DIR in the environment overrides the build's).
inline std::filesystem::path sharedDataDir() {
  if (const char* env = std::getenv("GRAIN_SHARED_DIR")) {
    return std::filesystem::path(env) / "data";
  }
  return std::filesystem::path(GRAIN_SHARED_DIR) / "data";
}

/// A fresh directory below the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "grain_io_";
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
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void writeText(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

inline std::string readText(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Replaces the first occurrence of `from` in `text`; fails the test if it is absent.
inline std::string replaceOnce(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "'" << from << "' not found";
  if (pos != std::string::npos) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

/// 1-based line of the first occurrence of `needle` (0 if absent).
inline std::size_t lineOf(const std::string& text, const std::string& needle) {
  const auto pos = text.find(needle);
  if (pos == std::string::npos) {
    return 0;
  }
  std::size_t line = 1;
  for (std::size_t i = 0; i < pos; ++i) {
    line += text[i] == '\n' ? 1 : 0;
  }
  return line;
}

}  // namespace grain::io::test
