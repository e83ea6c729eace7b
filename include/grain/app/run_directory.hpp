// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>

namespace grain::app {

/// Creates OUTDIR/SimFiles/SimDataRECORD_<n> with <n> the next free number (GRSF's layout)
/// and returns it. `prefix` is "SimDataRECORD" for serial runs.
std::filesystem::path createRecordDirectory(const std::filesystem::path& outDir,
                                            const std::string& prefix = "SimDataRECORD");

}  // namespace grain::app
