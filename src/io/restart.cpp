// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <grain/core/common/error.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/version.hpp>

namespace grain::io {

namespace {

constexpr char kCacheMagic[4] = {'G', 'R', 'W', 'S'};
constexpr std::uint32_t kCacheVersion = 1;

template <class T>
void put(std::ostream& o, const T& v) {
  o.write(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <class T>
bool get(std::istream& i, T& v) {
  return static_cast<bool>(i.read(reinterpret_cast<char*>(&v), sizeof(T)));
}

bool sameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

}  // namespace

void writeRunInfo(const std::filesystem::path& record, const std::filesystem::path& scene,
                  const std::filesystem::path& mediaDirectory) {
  std::ofstream o(record / kRunInfoFile, std::ios::trunc);
  o << "version\t" << versionString() << "\n";
  o << "scene\t" << std::filesystem::absolute(scene).string() << "\n";
  o << "media\t"
    << (mediaDirectory.empty() ? std::string() : std::filesystem::absolute(mediaDirectory).string())
    << "\n";
  if (!o) {
    throw Error((record / kRunInfoFile).string() + ": cannot write");
  }
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

ResumePoint loadResumeState(const std::filesystem::path& record, DynamicsSystem& system,
                            MoreauStepper& stepper, std::optional<std::size_t> simulatedInScene) {
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
  const SimState last = reader.readState(rp.stateIndex);
  const double t0 = reader.readTime(0);
  applyState(last, system.bodies, simulatedInScene);
  system.time = last.time;
  const double dt = stepper.settings().deltaT;
  const double steps = std::round((last.time - t0) / dt);
  rp.step = steps > 0.0 ? static_cast<std::uint64_t>(steps) : 0;
  rp.time = last.time;
  rp.resumed = true;
  stepper.setStepCount(rp.step);

  // Warm-start cache of the state continued from.
  const fs::path cacheFile = record / kRestartCacheFile;
  if (stepper.settings().solver.usePercussionCache) {
    std::ifstream in(cacheFile, std::ios::binary);
    char magic[4] = {};
    std::uint32_t version = 0;
    double time = 0.0;
    std::uint64_t step = 0;
    std::uint64_t count = 0;
    bool ok = in && in.read(magic, 4) && std::memcmp(magic, kCacheMagic, 4) == 0 &&
              get(in, version) && version == kCacheVersion && get(in, time) && get(in, step) &&
              get(in, count);
    if (ok && sameBits(time, last.time) && step == rp.step) {
      std::vector<detail::PercussionCacheEntry> cache(count);
      for (auto& e : cache) {
        double p[3];
        ok = ok && get(in, e.lo) && get(in, e.hi) && get(in, e.ordinal) && get(in, p);
        e.percussionOnHi = Vec3(p[0], p[1], p[2]);
      }
      if (ok) {
        stepper.solver().setPercussionCache(std::move(cache));
        rp.warmStartRestored = true;
      }
    }
    if (!rp.warmStartRestored) {
      rp.messages.push_back(
          "no warm-start data for the state at t = " + std::to_string(last.time) + " s (" +
          cacheFile.filename().string() +
          " missing or from another state): the first step starts from zero percussions, so "
          "the continued run may differ slightly from an uninterrupted one");
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

void WarmStartCheckpoint::stateWritten(MoreauStepper& stepper, double time, std::uint64_t step) {
  if (!stepper.settings().solver.usePercussionCache) {
    return;
  }
  valid_ = true;
  time_ = time;
  step_ = step;
  const auto& cache = stepper.solver().percussionCache();
  cache_.assign(cache.begin(), cache.end());
}

void WarmStartCheckpoint::save(const std::filesystem::path& record,
                               const MoreauStepper& stepper) const {
  const std::filesystem::path file = record / kRestartCacheFile;
  if (!stepper.settings().solver.usePercussionCache || !valid_) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    return;
  }
  std::ofstream o(file, std::ios::binary | std::ios::trunc);
  o.write(kCacheMagic, 4);
  put(o, kCacheVersion);
  put(o, time_);
  put(o, step_);
  put(o, static_cast<std::uint64_t>(cache_.size()));
  for (const auto& e : cache_) {
    const double p[3] = {e.percussionOnHi.x(), e.percussionOnHi.y(), e.percussionOnHi.z()};
    put(o, e.lo);
    put(o, e.hi);
    put(o, e.ordinal);
    put(o, p);
  }
  if (!o) {
    throw Error(file.string() + ": cannot write");
  }
}

}  // namespace grain::io
