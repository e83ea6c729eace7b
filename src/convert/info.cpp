// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>
#include <set>

#include <grain/convert/info.hpp>

namespace grain::convert {

SimFileSummary summarize(const std::filesystem::path& file, bool withTimes) {
  io::SimFileReader r;
  r.open(file);
  SimFileSummary s;
  s.path = file;
  s.fileSize = r.fileSize();
  s.header = r.header();
  s.states = r.stateCount();
  s.trailingBytes = r.trailingBytes();
  if (s.states > 0) {
    s.firstTime = r.readTime(0);
    s.lastTime = r.readTime(s.states - 1);
    const std::vector<BodyId> ids = r.readIds(0);
    std::set<std::uint32_t> groups;
    for (const BodyId id : ids) {
      groups.insert(bodyGroup(id));
    }
    s.groups = static_cast<std::uint32_t>(groups.size());
    s.sortedById = std::is_sorted(ids.begin(), ids.end());
    if (withTimes) {
      s.times = r.readTimes();
    }
  }
  return s;
}

std::string additionalTypeName(io::AdditionalBytesType type) {
  switch (type) {
    case io::AdditionalBytesType::Nothing:
      return "nothing";
    case io::AdditionalBytesType::Process:
      return "rank";
    case io::AdditionalBytesType::ProcessMaterial:
      return "rank+material";
    case io::AdditionalBytesType::ProcessMaterialOverlap:
      return "rank+material+overlap";
    case io::AdditionalBytesType::ProcessOverlap:
      return "rank+overlap";
    case io::AdditionalBytesType::ProcessMaterialOverlapGeomId:
      return "rank+material+overlap+geomId";
  }
  return "unknown";
}

std::string formatSummary(const SimFileSummary& s) {
  std::string out;
  char line[512];
  auto add = [&](const char* key, const std::string& value) {
    std::snprintf(line, sizeof line, "%-13s %s\n", key, value.c_str());
    out += line;
  };
  add("file", s.path.string());
  add("size", std::to_string(s.fileSize) + " bytes");
  add("bodies", std::to_string(s.header.nSimBodies) + " per state in " + std::to_string(s.groups) +
                    " group(s), " + (s.sortedById ? "sorted by id" : "not sorted by id"));
  add("states", std::to_string(s.states) + " (" + std::to_string(s.header.bytesPerState()) +
                    " bytes each, " + std::to_string(s.header.bytesPerBody()) + " per body)");
  if (s.states > 0) {
    std::snprintf(line, sizeof line, "%.17g .. %.17g s", s.firstTime, s.lastTime);
    std::string range = line;
    if (s.states > 1) {
      std::snprintf(line, sizeof line, " (mean spacing %.6g s)",
                    (s.lastTime - s.firstTime) / static_cast<double>(s.states - 1));
      range += line;
    }
    add("time", range);
  } else {
    add("time", "no complete state");
  }
  const auto type = static_cast<std::uint32_t>(s.header.additionalType);
  add("extra bytes", "type " + std::to_string(type) + " (" +
                         additionalTypeName(s.header.additionalType) + ", " +
                         std::to_string(s.header.additionalBytes) + " bytes per body)");
  add("truncated", s.trailingBytes == 0
                       ? std::string("no")
                       : "yes: a partial last state of " + std::to_string(s.trailingBytes) +
                             " bytes is ignored");
  if (!s.times.empty()) {
    std::string times;
    for (std::size_t k = 0; k < s.times.size(); ++k) {
      std::snprintf(line, sizeof line, "%s%.17g", k == 0 ? "" : " ", s.times[k]);
      times += line;
    }
    add("times", times);
  }
  return out;
}

}  // namespace grain::convert
