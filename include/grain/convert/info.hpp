// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <grain/io/sim_file.hpp>

namespace grain::convert {

/// Summary of one .sim file (grain-convert info).
struct SimFileSummary {
  std::filesystem::path path;
  std::uint64_t fileSize = 0;  ///< bytes
  io::SimFileHeader header;
  std::size_t states = 0;
  double firstTime = 0.0;           ///< s (0 without states)
  double lastTime = 0.0;            ///< s
  std::uint64_t trailingBytes = 0;  ///< partial last state (ignored)
  std::vector<double> times;        ///< filled if requested
  std::uint32_t groups = 0;         ///< distinct body groups in the first state
  bool sortedById = true;           ///< the first state's bodies are in id order
};

/// Reads the header, the times and the first state's ids. Throws io::SimFileError.
SimFileSummary summarize(const std::filesystem::path& file, bool withTimes);

/// Name of an additional-bytes type ("nothing", "rank", ..., "rank+material+overlap+geomId").
std::string additionalTypeName(io::AdditionalBytesType type);

/// Human-readable report, one "key  value" line per item.
std::string formatSummary(const SimFileSummary& s);

}  // namespace grain::convert
