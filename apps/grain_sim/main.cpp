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

#include <boost/program_options.hpp>

#include <grain/app/progress.hpp>
#include <grain/app/run_directory.hpp>
#include <grain/app/signals.hpp>
#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/contact_force_file.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/run_log.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/scene_overrides.hpp>
#include <grain/io/sim_file.hpp>
#include <grain/io/version.hpp>
#ifdef GRAIN_SIM_WITH_FCLIB
#include <grain/fclib/step_dump.hpp>
#endif

namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitStopped = 3;

/// Set once the run folder exists: later errors are runtime failures, not bad input.
bool gOutputCreated = false;

struct Options {
  fs::path scene;
  fs::path outDir = ".";
  fs::path mediaDir;
  fs::path restart;                    ///< record folder of a run to continue
  std::vector<std::string> overrides;  ///< --set XPATH=VALUE, in order
  bool printScene = false;             ///< --print-scene
  std::uint64_t dumpFclibEvery = 0;    ///< --dump-fclib EVERY (0: off)
};

/// Parses the command line; returns false if the program should exit with `exitCode`.
bool parseOptions(int argc, char** argv, Options& opt, int& exitCode) {
  po::options_description desc(
      "grain-sim: simulate a scene file\n\n"
      "usage: grain-sim -s SCENE.xml [-g OUTDIR] [-m MEDIADIR] [--set XPATH=VALUE]... "
      "[--print-scene]\n"
      "                 [--dump-fclib EVERY]\n"
      "       grain-sim --restart RECORD_DIR [--set XPATH=VALUE]... [--dump-fclib EVERY]\n\n"
      "options");
  // clang-format off
  desc.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("scene,s", po::value<std::string>(), "scene file (XML)")
      ("global-path,g", po::value<std::string>()->default_value("."),
       "output folder; the run writes OUTDIR/SimFiles/SimDataRECORD_<n>/")
      ("local-path,l", po::value<std::vector<std::string>>()->multitoken(),
       "per-process folders (accepted for GRSF compatibility; serial runs use -g)")
      ("media-path,m", po::value<std::string>(),
       "base folder of relative mesh paths (default: the scene file's folder)")
      ("restart", po::value<std::string>(),
       "continue the run in RECORD_DIR (OUTDIR/SimFiles/SimDataRECORD_<n>) from the last "
       "complete state of its SimState.sim, with its SceneFile.xml, appending to its files")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "XPATH=VALUE: set the attributes the XPath (1.0, relative to the root element) selects, "
       "before the scene is read, e.g. 'SceneSettings/TimeStepperSettings/@endTime=0.5' or "
       "'SceneObjects/RigidBodies[@name=\"beads\"]/@instances=5000'; repeatable; an XPath "
       "that matches nothing is an error")
      ("print-scene", "write the scene (after --set) to stdout and exit")
      ("dump-fclib", po::value<long long>(),
       "EVERY: write the contact problem of every EVERY-th step (steps with contacts only) as "
       "an FCLIB local problem with grain's solution, to RECORD_DIR/fclib/"
       "<scene>-i<step>-<contacts>.hdf5");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "grain-sim: " << e.what() << "\n" << desc << "\n";
    exitCode = kExitBadInput;
    return false;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    exitCode = kExitOk;
    return false;
  }
  if (vm.count("version")) {
    std::cout << "grain-sim " << grain::versionString() << "\n";
    exitCode = kExitOk;
    return false;
  }
  if (vm.count("set")) {
    opt.overrides = vm["set"].as<std::vector<std::string>>();
  }
  opt.printScene = vm.count("print-scene") > 0;
  if (vm.count("dump-fclib")) {
    const long long every = vm["dump-fclib"].as<long long>();
    if (every < 1) {
      std::cerr << "grain-sim: --dump-fclib: EVERY must be >= 1 (got " << every << ")\n";
      exitCode = kExitBadInput;
      return false;
    }
#ifndef GRAIN_SIM_WITH_FCLIB
    std::cerr << "grain-sim: --dump-fclib is not available: this build has no HDF5 "
                 "(configure with GRAIN_WITH_HDF5=ON)\n";
    exitCode = kExitBadInput;
    return false;
#endif
    opt.dumpFclibEvery = static_cast<std::uint64_t>(every);
  }
  if (vm.count("restart")) {
    opt.restart = vm["restart"].as<std::string>();
    if (vm.count("scene")) {
      std::cerr << "grain-sim: --restart uses RECORD_DIR/SceneFile.xml; do not give -s\n";
      exitCode = kExitBadInput;
      return false;
    }
    opt.scene = opt.restart / "SceneFile.xml";
    opt.mediaDir = vm.count("media-path") ? fs::path(vm["media-path"].as<std::string>())
                                          : grain::io::recordedMediaDirectory(opt.restart);
    return true;
  }
  if (!vm.count("scene")) {
    std::cerr << "grain-sim: missing scene file (-s SCENE.xml)\n" << desc << "\n";
    exitCode = kExitBadInput;
    return false;
  }
  opt.scene = vm["scene"].as<std::string>();
  opt.outDir = vm["global-path"].as<std::string>();
  if (vm.count("media-path")) {
    opt.mediaDir = vm["media-path"].as<std::string>();
  }
  return true;
}

void printSummary(const grain::io::SceneDescription& scene) {
  const auto& st = scene.stepper;
  const auto& s = st.solver;
  std::printf("scene      %s\n", scene.file.string().c_str());
  std::printf("bodies     %zu simulated, %zu total\n", scene.system.bodies.simulatedCount(),
              scene.system.bodies.size());
  std::printf("time       deltaT %g s, endTime %g s\n", st.deltaT, st.endTime);
  std::printf(
      "solver     %s alphaSOR %g alphaJOR %g R %s UCF %s convergence %s minIter %u maxIter %u "
      "absTol %g relTol %g percussionCache %d driftCorrection %d (alpha %g, slop %g m)\n",
      std::string(grain::methodSceneName(s)).c_str(), s.alphaSorProx, s.alphaJorProx,
      std::string(toString(s.rStrategy)).c_str(), std::string(toString(s.subMethodUcf)).c_str(),
      std::string(toString(s.convergenceMethod)).c_str(), s.minIter, s.maxIter, s.absTol, s.relTol,
      s.usePercussionCache, s.driftCorrectionGap, s.driftCorrectionGapAlpha,
      s.driftCorrectionGapSlop);
  if (s.localMethod) {
    const grain::LocalSolverSettings l = grain::localSolverSettings(s);
    std::printf(
        "local      %s (assembled Delassus problem each step): stops on %s error <= %g, maxIter "
        "%u, alphaSOR %g alphaJOR %g, warm start %s\n",
        std::string(toString(l.method)).c_str(), std::string(toString(l.errorMeasure)).c_str(),
        l.tolerance, l.maxIter, l.alphaSor, l.alphaJor,
        s.usePercussionCache ? "from the previous step" : "off");
  }
  const char* mode =
      scene.recorder.mode == grain::io::RecorderMode::NoOutput ? "noOutput" : "every X steps";
  std::printf("recorder   %s (X = %llu)\n", mode,
              static_cast<unsigned long long>(scene.recorder.everyXStep));
  for (const auto& w : scene.warnings) {
    std::printf("warning    %s\n", w.c_str());
  }
  if (!scene.ignored.empty()) {
    std::printf("ignored    %zu attribute(s)/element(s) without effect in grain:\n",
                scene.ignored.size());
    for (const auto& i : scene.ignored) {
      std::printf("             %s\n", i.c_str());
    }
  }
}

void writeText(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out) {
    throw grain::Error("cannot write " + file.string());
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
  printSummary(scene);

  grain::DynamicsSystem& system = scene.system;
  grain::io::SimFileWriter sim;
  const bool recording = scene.recorder.mode != grain::io::RecorderMode::NoOutput;
  grain::io::RunLogWriter log;
  grain::io::ResumePoint resume;
  fs::path record = opt.restart;
  if (opt.restart.empty()) {
    record = grain::app::createRecordDirectory(opt.outDir);
    gOutputCreated = true;
    // The scene as read (after --set), and the effective configuration beside it.
    writeText(record / "SceneFile.xml", scene.text);
    writeText(record / "EffectiveScene.xml", scene.effectiveXml);
    grain::io::writeRunInfo(record, opt.scene, opt.mediaDir);
    if (recording) {
      sim.open(record / "SimState.sim");
      sim.writeHeader(system.bodies);
      sim.writeState(system.time, system.bodies);
    }
    log.open(record / "SimData.dat");
  } else {
    gOutputCreated = true;
    resume = grain::io::resumeRun(record, system, stepper, recording ? &sim : nullptr, log);
    if (!opt.overrides.empty()) {
      // Later restarts continue with the changed scene (e.g. a later endTime).
      writeText(record / "SceneFile.xml", scene.text);
      writeText(record / "EffectiveScene.xml", scene.effectiveXml);
    }
    std::printf("restart    from state %zu at t = %.17g s (step %llu)\n", resume.stateIndex,
                resume.time, static_cast<unsigned long long>(resume.step));
    for (const auto& m : resume.messages) {
      std::printf("warning    %s\n", m.c_str());
    }
  }
  // Per-contact forces of some steps (scene element ContactForceOutput).
  grain::io::ContactForceFileWriter contactForceFile;
  std::unique_ptr<grain::io::ContactForceRecorder> contactForces;
  if (scene.contactForceOutput) {
    const grain::io::ContactForceOutputSettings& c = *scene.contactForceOutput;
    const fs::path file = record / "ContactForces.dat";
    if (resume.resumed) {
      contactForceFile.openAppend(file, resume.step);
    } else {
      contactForceFile.open(file);
    }
    contactForces =
        std::make_unique<grain::io::ContactForceRecorder>(c.compatibleForces, c.compatible);
    std::printf("contacts   forces of every %llu-th step%s to %s\n",
                static_cast<unsigned long long>(c.everyXStep),
                c.compatibleForces ? " with compatible normal forces" : "", file.c_str());
  }
  grain::io::WarmStartCheckpoint warmStart;
#ifdef GRAIN_SIM_WITH_FCLIB
  std::unique_ptr<grain::fclib::StepProblemDump> dump;
  if (opt.dumpFclibEvery > 0) {
    dump = std::make_unique<grain::fclib::StepProblemDump>(record / "fclib", opt.dumpFclibEvery,
                                                           opt.scene.stem().string());
    const grain::InclusionSolverSettings& solverSettings = scene.stepper.solver;
    stepper.setContactProblemObserver([&](const grain::BodyStorage& bodies,
                                          const grain::ContactProblem& problem,
                                          std::uint64_t stepNumber) {
      dump->capture(bodies, problem, solverSettings, stepNumber, system.time);
    });
    std::printf("fclib      contact problems of every %llu-th step to %s\n",
                static_cast<unsigned long long>(opt.dumpFclibEvery), (record / "fclib").c_str());
  }
#endif
  // Printed without the file's header comment, which repeats the ignored list above.
  const std::size_t body = scene.effectiveXml.find("<DynamicsSystem");
  std::printf("effective configuration (also in %s):\n%s\n",
              (record / "EffectiveScene.xml").c_str(),
              scene.effectiveXml.substr(body == std::string::npos ? 0 : body).c_str());

  grain::app::installStopHandlers();
  const double endTime = scene.stepper.endTime;
  const double dt = scene.stepper.deltaT;
  grain::app::ProgressReporter progress(system.time, endTime, stdout);
  // Steps are counted, not times added, so the number of steps is exact: round(endTime / dt).
  // A restarted run continues the step count of the state it starts from.
  std::uint64_t step = resume.step;
  const auto totalSteps =
      step + static_cast<std::uint64_t>(std::max(0ll, std::llround((endTime - system.time) / dt)));
  bool stopped = false;
  bool allConverged = true;
  while (step < totalSteps) {
    const grain::StepStats stats = stepper.step(system);
    ++step;
#ifdef GRAIN_SIM_WITH_FCLIB
    if (dump) {
      dump->finish(stepper.percussions());
    }
#endif
    allConverged = allConverged && stats.converged;
    log.write(stats);
    if (contactForces && scene.contactForceOutput->writes(step)) {
      contactForces->record(contactForceFile, system.bodies, stepper.contacts(),
                            stepper.percussions(), system.contactParameters, dt, step, system.time);
    }
    if (recording && scene.recorder.records(step)) {
      sim.writeState(system.time, system.bodies);
      warmStart.stateWritten(stepper, system.time, step);
    }
    if (!stats.finite) {
      log.close();
      sim.close();
      std::fprintf(stderr, "\ngrain-sim: non-finite velocities at t = %g s (step %llu); stopped\n",
                   system.time, static_cast<unsigned long long>(step));
      return kExitFailure;
    }
    char extra[96];
    std::snprintf(extra, sizeof extra, "contacts %zu  iterations %u", stats.contacts,
                  stats.iterations);
    progress.update(system.time, extra);
    if (grain::app::stopRequested()) {
      stopped = true;
      break;
    }
  }
  log.close();
  sim.close();
  contactForceFile.close();
  if (recording) {
    warmStart.save(record, stepper);
  }
  if (contactForces && scene.contactForceOutput->compatibleForces && contactForces->blocks() > 0) {
    std::printf(
        "contacts   compatible forces: %llu output steps, %.6g s, %.6g s per output step%s\n",
        static_cast<unsigned long long>(contactForces->blocks()),
        contactForces->compatibleSeconds(),
        contactForces->compatibleSeconds() / static_cast<double>(contactForces->blocks()),
        contactForces->notConverged() > 0 ? " (some did not converge)" : "");
  }
  if (stopped) {
    progress.finish("stopped by signal " + std::to_string(grain::app::stopSignal()) + " at t = " +
                    std::to_string(system.time) + " s after step " + std::to_string(step));
    std::printf("output     %s (complete up to the last written state)\n", record.c_str());
    std::printf("continue   grain-sim --restart %s\n", record.c_str());
    return kExitStopped;
  }
  progress.finish("finished " + std::to_string(step) + " steps" +
                  (allConverged ? "" : " (some steps reached maxIter without converging)"));
  std::printf("output     %s\n", record.c_str());
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  int exitCode = kExitOk;
  if (!parseOptions(argc, argv, opt, exitCode)) {
    return exitCode;
  }
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
