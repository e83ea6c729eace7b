// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string>

namespace grain::app {

/// Creates OUTDIR/SimFiles/SimDataRECORD_<n> with <n> the next free number (GRSF's layout)
/// and returns it. `prefix` is "SimDataRECORD" for serial runs.
std::filesystem::path createRecordDirectory(const std::filesystem::path& outDir,
                                            const std::string& prefix = "SimDataRECORD");

/// Writes `text` to `file` whole or not at all: into `file`.part, then renamed over `file`, so a
/// run killed while writing never leaves a half-written file (a previous version stays).
/// Throws grain::Error naming the file if it cannot be written or renamed.
void writeTextFile(const std::filesystem::path& file, const std::string& text);

}  // namespace grain::app
