// SPDX-License-Identifier: MIT
#include <cstdio>

#include <grain/convert/sim_tool.hpp>

namespace grain::convert {

namespace {

std::filesystem::path splitName(const std::filesystem::path& output, std::size_t k) {
  char num[32];
  std::snprintf(num, sizeof num, "_%05zu", k);
  std::filesystem::path p = output;
  const std::string ext = output.has_extension() ? output.extension().string() : ".sim";
  p.replace_filename(output.stem().string() + num + ext);
  return p;
}

void checkNew(const std::filesystem::path& file, bool overwrite) {
  if (!overwrite && std::filesystem::exists(file)) {
    throw ConvertError(file.string() + ": exists (use --overwrite to replace it)");
  }
}

}  // namespace

std::vector<std::filesystem::path> exportSim(SimSequence& seq, const std::vector<StateRef>& states,
                                             const BodySelector& bodies,
                                             const std::filesystem::path& output,
                                             const SimExportOptions& options,
                                             const ProgressFn& progress) {
  if (states.empty()) {
    throw ConvertError("no state selected");
  }
  const io::AdditionalBytesType type = seq.header().additionalType;
  std::vector<std::filesystem::path> written;
  io::SimFileWriter writer;
  std::vector<BodyId> ids;  // selected ids, sorted
  std::vector<io::SimBodyState> out;
  for (std::size_t k = 0; k < states.size(); ++k) {
    const StateRef& ref = states[k];
    if (k == 0) {
      ids = bodies.select(seq.reader(ref.file).readIds(ref.index));
    }
    const io::SimState st = seq.read(ref);
    out.clear();
    if (options.keepOrder) {
      for (const auto& b : st.bodies) {
        if (bodies.contains(b.id)) {
          out.push_back(b);
        }
      }
      if (out.size() != ids.size()) {
        throw ConvertError("state at t = " + std::to_string(st.time) + " s has " +
                           std::to_string(out.size()) + " selected bodies, the first state has " +
                           std::to_string(ids.size()));
      }
    } else {
      for (const BodyId id : ids) {
        const io::SimBodyState* b = st.find(id);
        if (b == nullptr) {
          throw ConvertError("state at t = " + std::to_string(st.time) + " s has no body " +
                             formatBodyId(id));
        }
        out.push_back(*b);
      }
    }
    if (k == 0 || options.split) {
      const std::filesystem::path file = options.split ? splitName(output, k) : output;
      checkNew(file, options.overwrite);
      writer.close();
      writer.open(file, type);
      writer.writeHeader(static_cast<std::uint32_t>(ids.size()));
      written.push_back(file);
    }
    writer.writeState(st.time, out);
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  writer.close();
  return written;
}

}  // namespace grain::convert
