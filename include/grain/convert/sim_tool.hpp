// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <vector>

#include <grain/convert/sequence.hpp>

namespace grain::convert {

/// What `grain-convert sim` writes.
struct SimExportOptions {
  /// One output file per state: <output stem>_<k><ext> with k the 0-based output state
  /// number (5 digits) instead of one file.
  bool split = false;
  /// Keep the body order of each input state (else: sorted by id, the serial order).
  bool keepOrder = false;
  /// Overwrite existing output files.
  bool overwrite = false;
};

/// Writes the selected states and bodies of `seq` to a new .sim file (or one per state). The
/// output has the additional-bytes type of the first input. Returns the files written.
/// Throws ConvertError (e.g. the output exists) or io::SimFileError.
std::vector<std::filesystem::path> exportSim(SimSequence& seq, const std::vector<StateRef>& states,
                                             const BodySelector& bodies,
                                             const std::filesystem::path& output,
                                             const SimExportOptions& options,
                                             const ProgressFn& progress = {});

}  // namespace grain::convert
