// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "../../common/test_util.hpp"

namespace grain::io::test {

using grain::testing::readText;
using grain::testing::testDataDir;
using grain::testing::writeText;

/// A fresh directory below the system temp dir (grain_io_<suite>_<test>), removed at
/// destruction.
class TempDir : public grain::testing::TempDir {
 public:
  TempDir() : grain::testing::TempDir("grain_io_") {}
};

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
