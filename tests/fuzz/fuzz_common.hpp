// SPDX-License-Identifier: MIT
// Shared by the libFuzzer harnesses of tests/fuzz: the readers take file names, so each input
// is written to a per-process scratch file (in /dev/shm when there is one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace grain::fuzz {

/// A scratch file of this process with the given suffix, e.g. "input.sim".
inline std::string scratchPath(const std::string& suffix) {
  static const std::string dir = [] {
    std::string base = "/tmp";
    if (const char* env = std::getenv("GRAIN_FUZZ_TMP")) {
      base = env;
    } else if (std::filesystem::is_directory("/dev/shm")) {
      base = "/dev/shm";
    }
    const std::string d = base + "/grain-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    static const std::string removeAtExit = d;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(removeAtExit, ec);
    });
    return d;
  }();
  return dir + "/" + suffix;
}

/// Writes `size` bytes to the scratch file `suffix` and returns its path.
inline std::string writeScratch(const std::uint8_t* data, std::size_t size,
                                const std::string& suffix) {
  const std::string path = scratchPath(suffix);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::perror(path.c_str());
    std::abort();
  }
  if (size > 0 && std::fwrite(data, 1, size, f) != size) {
    std::perror(path.c_str());
    std::abort();
  }
  std::fclose(f);
  return path;
}

}  // namespace grain::fuzz
