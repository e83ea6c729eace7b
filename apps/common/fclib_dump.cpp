// SPDX-License-Identifier: MIT
#include "fclib_dump.hpp"

#include <cstdio>

#ifdef GRAIN_SIM_WITH_FCLIB
#include <grain/fclib/step_dump.hpp>
#endif

namespace grain::app {

#ifdef GRAIN_SIM_WITH_FCLIB
struct FclibDump::Dump {
  Dump(const std::filesystem::path& record, std::uint64_t everyStep, const std::string& name)
      : files(record / "fclib", everyStep, name), directory(record / "fclib"), every(everyStep) {}
  fclib::StepProblemDump files;
  std::filesystem::path directory;
  std::uint64_t every;
};

FclibDump::FclibDump(const SimOptions& opt, const std::filesystem::path& record,
                     const io::SceneDescription& scene, MoreauStepper& stepper) {
  if (opt.dumpFclibEvery == 0) {
    return;
  }
  dump_ = std::make_unique<Dump>(record, opt.dumpFclibEvery, opt.scene.stem().string());
  stepper.setContactProblemObserver([this, &scene](const BodyStorage& bodies,
                                                   const ContactProblem& problem,
                                                   std::uint64_t stepNumber) {
    dump_->files.capture(bodies, problem, scene.stepper.solver, stepNumber, scene.system.time);
  });
}

void FclibDump::finish(const MoreauStepper& stepper) {
  if (dump_) {
    dump_->files.finish(stepper.percussions());
  }
}

std::string FclibDump::note() const {
  if (!dump_) {
    return {};
  }
  char every[32];
  std::snprintf(every, sizeof every, "%llu", static_cast<unsigned long long>(dump_->every));
  return "fclib      contact problems of every " + std::string(every) + "-th step to " +
         dump_->directory.string() + "\n";
}
#else
struct FclibDump::Dump {};

FclibDump::FclibDump(const SimOptions& /*opt*/, const std::filesystem::path& /*record*/,
                     const io::SceneDescription& /*scene*/, MoreauStepper& /*stepper*/) {}

void FclibDump::finish(const MoreauStepper& /*stepper*/) {}

std::string FclibDump::note() const {
  return {};
}
#endif

FclibDump::~FclibDump() = default;

}  // namespace grain::app
