// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

/// The command line of grain-sim and grain-sim-mpi (one table of options for both).
namespace grain::app {

/// Exit codes of the simulators.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitStopped = 3;

struct SimOptions {
  std::filesystem::path scene;
  std::filesystem::path outDir = ".";
  std::vector<std::filesystem::path> localDirs;  ///< -l: per-process folders (distributed runs)
  std::filesystem::path mediaDir;
  std::filesystem::path restart;       ///< record folder of a run to continue
  std::vector<std::string> overrides;  ///< --set XPATH=VALUE, in order
  bool printScene = false;             ///< --print-scene
  bool check = false;                  ///< --check: load the scene, write nothing, exit
  std::uint64_t dumpFclibEvery = 0;    ///< --dump-fclib EVERY (0: off; one process only)
};

/// Which simulator parses: the distributed one uses -l (and refuses --dump-fclib on more than
/// one process, RunRecord::checkWritable).
struct SimProgram {
  const char* name = "grain-sim";
  bool distributed = false;
  bool withFclib = false;  ///< the build can write FCLIB files (HDF5)
};

/// Parses the command line; returns false if the program should exit with `exitCode` (help,
/// version, or a usage error, which is printed to `err`; help and version go to `out`).
bool parseSimOptions(const SimProgram& program, int argc, char** argv, SimOptions& opt,
                     int& exitCode, bool print = true);

}  // namespace grain::app
