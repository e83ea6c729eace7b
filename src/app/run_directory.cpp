// SPDX-License-Identifier: MIT
#include <fstream>

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

void writeTextFile(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::path part = file;
  part += ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      throw Error("cannot write " + part.string() + " (disk full or file-size limit?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(part, file, ec);
  if (ec) {
    throw Error("cannot rename " + part.string() + " to " + file.filename().string() + ": " +
                ec.message());
  }
}

}  // namespace grain::app
