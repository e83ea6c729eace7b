// SPDX-License-Identifier: MIT
#include <grain/app/run_directory.hpp>
#include <grain/core/common/error.hpp>

namespace grain::app {

std::filesystem::path createRecordDirectory(const std::filesystem::path& outDir,
                                            const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path simFiles = outDir / "SimFiles";
  fs::create_directories(simFiles);
  for (unsigned n = 0; n < 1000000; ++n) {
    const fs::path candidate = simFiles / (prefix + "_" + std::to_string(n));
    // create_directory returns false if it exists: the first creation wins, even if two runs
    // start at the same time.
    if (fs::create_directory(candidate)) {
      return candidate;
    }
  }
  throw Error("no free record folder under " + simFiles.string());
}

}  // namespace grain::app
