// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <unordered_map>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/version.hpp>

namespace grain::io {

namespace {

constexpr char kCacheMagic[4] = {'G', 'R', 'W', 'S'};
constexpr std::uint32_t kCacheVersion = 1;
static_assert(kWarmStartHeaderBytes == 4 + 4 + 8 + 8 + 8);
static_assert(kWarmStartEntryBytes == 8 + 8 + 4 + 3 * 8);

bool sameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

/// The header of a cache file, if it has a valid one.
std::optional<WarmStartHeader> readCacheHeader(std::istream& in) {
  char bytes[kWarmStartHeaderBytes];
  if (!in || !in.read(bytes, sizeof bytes)) {
    return std::nullopt;
  }
  return decodeWarmStartHeader(bytes);
}

/// The cache stored in `file` if it belongs to the state at `time` after `step` steps: the entries
/// `keep` accepts (all without it), sorted by key (a distributed run writes each process's part in
/// turn).
std::optional<std::vector<detail::PercussionCacheEntry>> readCache(
    const std::filesystem::path& file, double time, std::uint64_t step,
    const std::function<bool(const detail::PercussionCacheEntry&)>& keep) {
  std::ifstream in(file, std::ios::binary);
  const std::optional<WarmStartHeader> h = readCacheHeader(in);
  if (!h) {
    return std::nullopt;
  }
  in.seekg(0, std::ios::end);
  if (!warmStartFileMatches(*h, static_cast<std::uint64_t>(in.tellg()), time, step)) {
    return std::nullopt;
  }
  in.seekg(static_cast<std::streamoff>(kWarmStartHeaderBytes));
  std::vector<detail::PercussionCacheEntry> cache;
  if (!keep) {
    cache.reserve(h->count);
  }
  char bytes[kWarmStartEntryBytes];
  for (std::uint64_t k = 0; k < h->count; ++k) {
    if (!in.read(bytes, sizeof bytes)) {
      return std::nullopt;
    }
    const detail::PercussionCacheEntry e = decodeWarmStartEntry(bytes);
    if (!keep || keep(e)) {
      cache.push_back(e);
    }
  }
  std::sort(cache.begin(), cache.end(), detail::cacheEntryLess);
  return cache;
}

std::string errnoText() {
  return errno != 0 ? std::string(": ") + std::strerror(errno) : std::string();
}

}  // namespace

std::string runInfoText(const std::filesystem::path& scene,
                        const std::filesystem::path& mediaDirectory) {
  std::ostringstream o;
  o << "version\t" << versionString() << "\n";
  o << "scene\t" << std::filesystem::absolute(scene).string() << "\n";
  o << "media\t"
    << (mediaDirectory.empty() ? std::string() : std::filesystem::absolute(mediaDirectory).string())
    << "\n";
  return o.str();
}

std::filesystem::path recordedMediaDirectory(const std::filesystem::path& record) {
  std::ifstream in(record / kRunInfoFile);
  std::string line;
  std::filesystem::path scene;
  std::filesystem::path media;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) {
      continue;
    }
    const std::string key = line.substr(0, tab);
    const std::string value = line.substr(tab + 1);
    if (key == "scene") {
      scene = value;
    } else if (key == "media") {
      media = value;
    }
  }
  if (!media.empty()) {
    return media;
  }
  return scene.empty() ? std::filesystem::path() : scene.parent_path();
}

void applyState(const SimState& state, BodyStorage& bodies,
                std::optional<std::size_t> simulatedInScene) {
  std::size_t used = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (!bodies.isSimulated(i) || bodies.ownerships()[i] != BodyOwnership::Local) {
      continue;
    }
    const SimBodyState* b = state.find(bodies.ids()[i]);
    if (b == nullptr) {
      throw SimFileError("the state at t = " + std::to_string(state.time) + " s has no body " +
                         formatBodyId(bodies.ids()[i]));
    }
    bodies.positions()[i] = b->position;
    bodies.orientations()[i] = b->orientation;
    bodies.velocities()[i] = b->velocity;
    bodies.omegasBody()[i] = b->omegaBody;
    ++used;
  }
  const std::size_t scene = simulatedInScene.value_or(used);
  if (scene != state.bodies.size()) {
    throw SimFileError("the state at t = " + std::to_string(state.time) + " s has " +
                       std::to_string(state.bodies.size()) + " bodies, the scene simulates " +
                       std::to_string(scene));
  }
}

double readIntoHeldBodies(SimFileReader& reader, std::size_t k, const BodyStorage& bodies,
                          const std::function<void(std::size_t, const SimBodyState&)>& copy,
                          std::vector<std::size_t>& missing) {
  std::unordered_map<BodyId, std::size_t> indexOfId;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i) && bodies.ownerships()[i] == BodyOwnership::Local) {
      indexOfId.emplace(bodies.ids()[i], i);
    }
  }
  std::vector<char> found(bodies.size(), 0);
  const double time = reader.forEachBody(k, [&](const SimBodyState& b) {
    const auto it = indexOfId.find(b.id);
    if (it == indexOfId.end()) {
      return;
    }
    if (found[it->second] != 0) {
      throw SimFileError("state " + std::to_string(k) + ": body " + formatBodyId(b.id) +
                         " occurs twice");
    }
    found[it->second] = 1;
    copy(it->second, b);
  });
  missing.clear();
  for (const auto& [id, i] : indexOfId) {
    if (found[i] == 0) {
      missing.push_back(i);
    }
  }
  std::sort(missing.begin(), missing.end());
  return time;
}

double applyState(SimFileReader& reader, std::size_t k, BodyStorage& bodies,
                  std::optional<std::size_t> simulatedInScene) {
  std::vector<std::size_t> missing;
  std::size_t held = 0;
  const double time = readIntoHeldBodies(
      reader, k, bodies,
      [&](std::size_t i, const SimBodyState& b) {
        bodies.positions()[i] = b.position;
        bodies.orientations()[i] = b.orientation;
        bodies.velocities()[i] = b.velocity;
        bodies.omegasBody()[i] = b.omegaBody;
        ++held;
      },
      missing);
  if (!missing.empty()) {
    throw SimFileError("the state at t = " + std::to_string(time) + " s has no body " +
                       formatBodyId(bodies.ids()[missing.front()]));
  }
  const std::size_t scene = simulatedInScene.value_or(held);
  if (scene != reader.header().nSimBodies) {
    throw SimFileError("the state at t = " + std::to_string(time) + " s has " +
                       std::to_string(reader.header().nSimBodies) +
                       " bodies, the scene simulates " + std::to_string(scene));
  }
  return time;
}

ResumePoint loadResumeState(
    const std::filesystem::path& record, DynamicsSystem& system, MoreauStepper& stepper,
    std::optional<std::size_t> simulatedInScene,
    const std::function<bool(const detail::PercussionCacheEntry&)>& keepWarmStart) {
  namespace fs = std::filesystem;
  ResumePoint rp;
  const fs::path simFile = record / "SimState.sim";
  if (!fs::exists(simFile)) {
    throw Error(simFile.string() +
                ": missing; only runs that record states (RecorderSettings mode other than "
                "noOutput) can be restarted");
  }
  SimFileReader reader;
  reader.open(simFile);
  if (reader.stateCount() == 0) {
    throw Error(simFile.string() + ": has no complete state to continue from");
  }
  if (reader.truncated()) {
    rp.messages.push_back(reader.truncationWarning() + "; it is cut off");
  }
  rp.stateIndex = reader.stateCount() - 1;
  const double lastTime = applyState(reader, rp.stateIndex, system.bodies, simulatedInScene);
  const double t0 = reader.readTime(0);
  system.time = lastTime;
  const double dt = stepper.settings().deltaT;
  const double steps = std::round((lastTime - t0) / dt);
  rp.step = steps > 0.0 ? static_cast<std::uint64_t>(steps) : 0;
  rp.time = lastTime;
  rp.resumed = true;
  stepper.setStepCount(rp.step);

  // Warm-start cache of the state continued from: RestartCache.bin, or after a run killed while
  // writing a state, RestartCache.prev.bin.
  if (stepper.settings().solver.usePercussionCache) {
    for (const char* name : {kRestartCacheFile, kRestartCachePreviousFile}) {
      if (auto cache = readCache(record / name, lastTime, rp.step, keepWarmStart)) {
        stepper.setWarmStartCache(std::move(*cache));
        rp.warmStartRestored = true;
        break;
      }
    }
    if (!rp.warmStartRestored) {
      rp.messages.push_back("no warm-start data for the state at t = " + std::to_string(lastTime) +
                            " s (" + kRestartCacheFile +
                            " missing or from another state): the first step starts from zero "
                            "percussions, so the continued run may differ slightly from an "
                            "uninterrupted one");
    }
  }

  rp.simHeader = reader.header();
  return rp;
}

ResumePoint resumeRun(const std::filesystem::path& record, DynamicsSystem& system,
                      MoreauStepper& stepper, SimFileWriter* sim, RunLogWriter& log) {
  ResumePoint rp = loadResumeState(record, system, stepper);
  if (sim != nullptr) {
    SimFileHeader expected;
    expected.nSimBodies = rp.simHeader.nSimBodies;
    expected.additionalType = rp.simHeader.additionalType;
    sim->openAppend(record / "SimState.sim", expected);
  }
  log.openAppend(record / "SimData.dat", rp.step);
  return rp;
}

std::array<char, kWarmStartHeaderBytes> warmStartHeader(double time, std::uint64_t step,
                                                        std::uint64_t count) {
  std::array<char, kWarmStartHeaderBytes> h{};
  std::memcpy(h.data(), kCacheMagic, 4);
  std::memcpy(h.data() + 4, &kCacheVersion, 4);
  std::memcpy(h.data() + 8, &time, 8);
  std::memcpy(h.data() + 16, &step, 8);
  std::memcpy(h.data() + 24, &count, 8);
  return h;
}

std::optional<WarmStartHeader> decodeWarmStartHeader(const char* in) {
  std::uint32_t version = 0;
  std::memcpy(&version, in + 4, 4);
  if (std::memcmp(in, kCacheMagic, 4) != 0 || version != kCacheVersion) {
    return std::nullopt;
  }
  WarmStartHeader h;
  std::memcpy(&h.time, in + 8, 8);
  std::memcpy(&h.step, in + 16, 8);
  std::memcpy(&h.count, in + 24, 8);
  return h;
}

bool warmStartFileMatches(const WarmStartHeader& h, std::uint64_t fileBytes, double time,
                          std::uint64_t step) {
  // A 32-byte header, then 44 bytes per entry: a count beyond the file's size is a damaged file.
  return sameBits(h.time, time) && h.step == step && fileBytes >= kWarmStartHeaderBytes &&
         h.count <= (fileBytes - kWarmStartHeaderBytes) / kWarmStartEntryBytes;
}

detail::PercussionCacheEntry decodeWarmStartEntry(const char* in) {
  detail::PercussionCacheEntry e;
  double v[3];
  std::memcpy(&e.lo, in, 8);
  std::memcpy(&e.hi, in + 8, 8);
  std::memcpy(&e.ordinal, in + 16, 4);
  std::memcpy(v, in + 20, 24);
  e.percussionOnHi = Vec3(v[0], v[1], v[2]);
  return e;
}

void appendWarmStartEntry(std::vector<char>& out, const detail::PercussionCacheEntry& e) {
  const std::size_t at = out.size();
  out.resize(at + kWarmStartEntryBytes);
  char* p = out.data() + at;
  const double v[3] = {e.percussionOnHi.x(), e.percussionOnHi.y(), e.percussionOnHi.z()};
  std::memcpy(p, &e.lo, 8);
  std::memcpy(p + 8, &e.hi, 8);
  std::memcpy(p + 16, &e.ordinal, 4);
  std::memcpy(p + 20, v, 24);
}

std::filesystem::path WarmStartCheckpoint::begin(const std::filesystem::path& record,
                                                 std::uint64_t step) {
  namespace fs = std::filesystem;
  const fs::path current = record / kRestartCacheFile;
  if (!stored_) {
    // The first state of this run: RestartCache.bin may be that of the state continued from
    // (keep it as the previous one) or of a later state a killed run did not complete (replace).
    std::ifstream in(current, std::ios::binary);
    if (const auto h = readCacheHeader(in)) {
      stored_ = h->step;
    }
  }
  if (stored_ && *stored_ < step) {
    std::error_code ec;
    fs::rename(current, record / kRestartCachePreviousFile, ec);
    if (ec) {
      throw Error(current.string() + ": cannot rename to " + kRestartCachePreviousFile + ": " +
                  ec.message());
    }
  }
  fs::path part = current;
  part += ".part";
  return part;
}

void WarmStartCheckpoint::finish(const std::filesystem::path& record, std::uint64_t step) {
  namespace fs = std::filesystem;
  const fs::path current = record / kRestartCacheFile;
  fs::path part = current;
  part += ".part";
  std::error_code ec;
  fs::rename(part, current, ec);
  if (ec) {
    throw Error(part.string() + ": cannot rename to " + kRestartCacheFile + ": " + ec.message());
  }
  stored_ = step;
}

void WarmStartCheckpoint::store(const std::filesystem::path& record, MoreauStepper& stepper,
                                double time, std::uint64_t step) {
  if (!stepper.settings().solver.usePercussionCache) {
    return;
  }
  const std::filesystem::path part = begin(record, step);
  {
    const auto& cache = stepper.warmStartCache();
    std::vector<char> bytes;
    bytes.reserve(cache.size() * kWarmStartEntryBytes);
    for (const auto& e : cache) {
      appendWarmStartEntry(bytes, e);
    }
    const auto header = warmStartHeader(time, step, cache.size());
    std::ofstream o(part, std::ios::binary | std::ios::trunc);
    o.write(header.data(), static_cast<std::streamsize>(header.size()));
    o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    errno = 0;
    o.flush();
    if (!o) {
      throw Error(part.string() + ": cannot write the warm-start data" + errnoText());
    }
  }
  finish(record, step);
}

}  // namespace grain::io
