// SPDX-License-Identifier: MIT
// grain-sim: serial simulation of a scene file.
//
//   grain-sim -s scene.xml -g OUTDIR [-m MEDIADIR] [--set XPATH=VALUE ...] [--print-scene]
//             [--dump-fclib EVERY]
//   grain-sim --restart OUTDIR/SimFiles/SimDataRECORD_<n> [--set XPATH=VALUE ...]
//             (continue a stopped run, e.g. with a later endTime)
//
// Writes OUTDIR/SimFiles/SimDataRECORD_<n>/{SimState.sim, SceneFile.xml, EffectiveScene.xml,
// SimData.dat} (and ContactForces.dat with a <ContactForceOutput> in the scene), and with
// --dump-fclib the contact problems of every EVERY-th step as FCLIB files in
// OUTDIR/SimFiles/SimDataRECORD_<n>/fclib/.
// Exit codes: 0 finished, 1 runtime failure, 2 bad command line or scene, 3 stopped by a signal.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <grain/app/progress.hpp>
#include <grain/app/run_driver.hpp>
#include <grain/app/run_record.hpp>
#include <grain/app/signals.hpp>
#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/core/timestepping/invariants.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/scene_overrides.hpp>
#include <grain/io/version.hpp>

#include "../common/fclib_dump.hpp"
#include "../common/sim_options.hpp"
#include "../common/sim_summary.hpp"

namespace {

namespace fs = std::filesystem;

using grain::app::kExitBadInput;
using grain::app::kExitFailure;
using grain::app::kExitOk;
using grain::app::kExitStopped;
using Options = grain::app::SimOptions;

/// Set once the run folder exists: later errors are runtime failures, not bad input.
bool gOutputCreated = false;

/// The serial run's step and records. A step that fails names the body: its group element in
/// GRAIN_CHECK_INVARIANTS builds, the first non-finite body after a failure on a non-finite state
/// (e.g. in collision detection).
class SerialHooks final : public grain::app::RunHooks {
 public:
  SerialHooks(const grain::io::SceneDescription& scene, grain::DynamicsSystem& system,
              grain::MoreauStepper& stepper, grain::app::RunRecord& record,
              grain::app::FclibDump& dump)
      : scene_(scene), system_(system), stepper_(stepper), record_(record), dump_(dump) {}

  grain::StepStats step() override {
    try {
      return stepper_.step(system_);
    } catch (const grain::InvariantError& e) {
      throw grain::Error(std::string(e.what()) + (e.hasBody()
                                                      ? grain::app::groupElementOf(scene_, e.body())
                                                      : std::string()));
    } catch (const grain::Error& e) {
      const std::size_t bad = grain::findNonFiniteBody(system_.bodies);
      if (bad == system_.bodies.size()) {
        throw;
      }
      throw grain::Error(
          std::string(e.what()) + "; " +
          grain::nonFiniteBodyMessage(system_.bodies, bad, stepper_.stepCount() + 1) +
          grain::app::groupElementOf(scene_, system_.bodies.ids()[bad]));
    }
  }
  void record(const grain::StepStats& stats, std::uint64_t step) override {
    dump_.finish(stepper_);
    record_.recordStep(stats, step, system_, stepper_);
  }
  bool stopRequested() override { return grain::app::stopRequested(); }

 private:
  const grain::io::SceneDescription& scene_;
  grain::DynamicsSystem& system_;
  grain::MoreauStepper& stepper_;
  grain::app::RunRecord& record_;
  grain::app::FclibDump& dump_;
};

/// The run stopped on non-finite velocities after `step` steps: says so and names the first
/// such body.
void sayNonFinite(const grain::io::SceneDescription& scene, const grain::DynamicsSystem& system,
                  std::uint64_t step) {
  std::fprintf(stderr, "\ngrain-sim: non-finite velocities at t = %g s (step %llu); stopped\n",
               system.time, static_cast<unsigned long long>(step));
  const std::size_t bad = grain::findNonFiniteBody(system.bodies);
  if (bad < system.bodies.size()) {
    std::fprintf(stderr, "grain-sim: %s%s\n",
                 grain::nonFiniteBodyMessage(system.bodies, bad, step).c_str(),
                 grain::app::groupElementOf(scene, system.bodies.ids()[bad]).c_str());
  }
}

int run(const Options& opt) {
  // Everything that can fail on bad input happens before the output folder is created.
  grain::io::SceneLoadOptions loadOptions;
  loadOptions.mediaDirectory = opt.mediaDir;
  std::vector<grain::io::SceneOverride> overrides;
  for (const std::string& arg : opt.overrides) {
    overrides.push_back(grain::io::parseSceneOverride(arg));
  }
  const std::string text = grain::io::applySceneOverrides(grain::io::readSceneText(opt.scene),
                                                          opt.scene.string(), overrides);
  if (opt.printScene) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  // Messages name the scene file; the lines are those of the file (overrides keep them).
  grain::io::SceneDescription scene = grain::io::loadSceneFromString(text, opt.scene, loadOptions);
  grain::MoreauStepper stepper(scene.stepper);
  if (opt.check) {
    std::printf("scene      %s loads: %zu simulated bodies\n", opt.scene.string().c_str(),
                scene.system.bodies.simulatedCount());
    return kExitOk;
  }
  grain::app::printSummary(scene);

  grain::DynamicsSystem& system = scene.system;
  grain::app::SerialRecordWriters writers;
  grain::app::RunRecord record(
      writers, scene, {opt.outDir, opt.restart, opt.scene, opt.mediaDir, !opt.overrides.empty()});
  grain::io::ResumePoint resume;
  // From here on a stop signal ends the run after its first step, with the record complete.
  grain::app::installStopHandlers();
  record.create();
  gOutputCreated = true;
  if (!opt.restart.empty()) {
    resume = grain::io::loadResumeState(record.folder(), system, stepper);
  }
  record.openFiles(resume);
  record.openStates(resume, system, stepper);
  if (resume.resumed) {
    std::printf("restart    from state %zu at t = %.17g s (step %llu)\n", resume.stateIndex,
                resume.time, static_cast<unsigned long long>(resume.step));
    for (const auto& m : resume.messages) {
      std::printf("warning    %s\n", m.c_str());
    }
  }
  std::fputs(record.contactForcesNote().c_str(), stdout);
  grain::app::FclibDump dump(opt, record.folder(), scene, stepper);
  std::fputs(dump.note().c_str(), stdout);
  // Printed without the file's header comment, which repeats the ignored list above.
  const std::size_t body = scene.effectiveXml.find("<DynamicsSystem");
  std::printf("effective configuration (also in %s):\n%s\n",
              (record.folder() / "EffectiveScene.xml").c_str(),
              scene.effectiveXml.substr(body == std::string::npos ? 0 : body).c_str());

  const double endTime = scene.stepper.endTime;
  const double dt = scene.stepper.deltaT;
  grain::app::ProgressReporter progress(system.time, endTime, stdout);
  // A restarted run continues the step count of the state it starts from.
  const std::uint64_t firstStep = resume.step;
  const std::uint64_t lastStep = firstStep + grain::app::stepsUntil(system.time, endTime, dt);

  SerialHooks hooks(scene, system, stepper, record, dump);
  const grain::app::LoopResult result =
      grain::app::runSteps(hooks, firstStep, lastStep, system.time, &progress);
  const std::uint64_t step = result.step;
  record.close();
  if (result.nonFinite) {
    sayNonFinite(scene, system, step);
    return kExitFailure;
  }
  const bool stopped = result.stopped;
  std::fputs(record.compatibleForcesSummary().c_str(), stdout);
  if (stopped) {
    progress.finish(grain::app::summaryLine(result, grain::app::stopSignal()));
    std::printf("output     %s (complete up to the last written state)\n", record.folder().c_str());
    std::printf("continue   grain-sim --restart %s\n", record.folder().c_str());
    return kExitStopped;
  }
  progress.finish(grain::app::summaryLine(result, 0));
  std::printf("output     %s\n", record.folder().c_str());
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  int exitCode = kExitOk;
  grain::app::SimProgram program;
#ifdef GRAIN_SIM_WITH_FCLIB
  program.withFclib = true;
#endif
  if (!grain::app::parseSimOptions(program, argc, argv, opt, exitCode)) {
    return exitCode;
  }
  // A full disk or file-size limit is an error naming the file, not a silent kill.
  grain::app::ignoreFileSizeLimitSignal();
  try {
    return run(opt);
  } catch (const grain::io::SceneError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const grain::Error& e) {
    std::cerr << "grain-sim: " << e.what() << "\n";
    return gOutputCreated ? kExitFailure : kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "grain-sim: " << e.what() << "\n";
    return kExitFailure;
  }
}
