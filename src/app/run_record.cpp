// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>
#include <exception>

#include <grain/app/run_directory.hpp>
#include <grain/app/run_record.hpp>
#include <grain/core/common/error.hpp>
#include <grain/io/scene_error.hpp>

namespace grain::app {

namespace {

namespace fs = std::filesystem;

constexpr const char* kContactForceFile = "ContactForces.dat";

/// 1-based line of the first occurrence of `tag` in `text` (0 if absent), for messages.
std::size_t lineOf(const std::string& text, const std::string& tag) {
  const std::size_t at = text.find(tag);
  return at == std::string::npos
             ? 0
             : 1 + static_cast<std::size_t>(std::count(
                       text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

/// Runs `work` on the process that writes the folder; a failure there is thrown on every process:
/// the exception itself where it happened, grain::Error with its message elsewhere.
template <class Work>
void onFolderWriter(RecordWriters& writers, Work&& work) {
  std::exception_ptr failure;
  std::string problem;
  if (writers.writesFolder()) {
    try {
      work();
    } catch (const std::exception& e) {
      failure = std::current_exception();
      problem = *e.what() != '\0' ? e.what() : "cannot write the record folder";
    }
  }
  problem = writers.fromFolderWriter(problem);
  if (failure) {
    std::rethrow_exception(failure);
  }
  if (!problem.empty()) {
    throw Error(problem);
  }
}

}  // namespace

void SerialRecordWriters::beginStates(const fs::path& record, const DynamicsSystem& system,
                                      MoreauStepper& stepper) {
  record_ = record;
  sim_.open(record / "SimState.sim");
  sim_.writeHeader(system.bodies);
  warmStart_.store(record, stepper, system.time, 0);
  sim_.writeState(system.time, system.bodies);
}

void SerialRecordWriters::continueStates(const fs::path& record, const io::ResumePoint& resume) {
  record_ = record;
  io::SimFileHeader expected;
  expected.nSimBodies = resume.simHeader.nSimBodies;
  expected.additionalType = resume.simHeader.additionalType;
  sim_.openAppend(record / "SimState.sim", expected);
}

void SerialRecordWriters::writeState(const DynamicsSystem& system, MoreauStepper& stepper,
                                     std::uint64_t step) {
  warmStart_.store(record_, stepper, system.time, step);
  sim_.writeState(system.time, system.bodies);
}

RunRecord::RunRecord(RecordWriters& writers, const io::SceneDescription& scene, RecordPlace place)
    : writers_(writers),
      scene_(scene),
      place_(std::move(place)),
      recording_(scene.recorder.mode != io::RecorderMode::NoOutput) {}

RunRecord::~RunRecord() = default;

void RunRecord::checkWritable(int processes, const io::SceneDescription& scene, bool fclibDump) {
  if (processes <= 1) {
    return;
  }
  if (scene.contactForceOutput) {
    throw io::SceneError(scene.file.string(), lineOf(scene.text, "<ContactForceOutput"),
                         "SceneSettings/ContactForceOutput",
                         std::string(kContactForceFile) +
                             " is written by one process, which needs every contact of a step: "
                             "run the scene with grain-sim or on one process (or remove "
                             "ContactForceOutput)");
  }
  if (fclibDump) {
    throw Error(
        "--dump-fclib: the contact problem of a step is written whole by one process: run "
        "grain-sim, or grain-sim-mpi on one process");
  }
}

void RunRecord::create() {
  std::string folder;
  onFolderWriter(writers_, [&] {
    folder =
        (place_.restart.empty() ? createRecordDirectory(place_.outDir) : place_.restart).string();
  });
  folder_ = writers_.fromFolderWriter(folder);
}

void RunRecord::openFiles(const io::ResumePoint& resume) {
  const bool fresh = place_.restart.empty();
  onFolderWriter(writers_, [&] {
    if (fresh || place_.sceneChanged) {
      // The scene as read (after --set), and the effective configuration beside it; a restart
      // with --set continues with the changed scene (e.g. a later endTime).
      writeTextFile(folder_ / "SceneFile.xml", scene_.text);
      writeTextFile(folder_ / "EffectiveScene.xml", scene_.effectiveXml);
    }
    if (fresh) {
      writeTextFile(folder_ / io::kRunInfoFile, io::runInfoText(place_.sceneFile, place_.mediaDir));
      log_.open(folder_ / "SimData.dat");
    } else {
      log_.openAppend(folder_ / "SimData.dat", resume.step);
    }
    if (scene_.contactForceOutput) {
      const io::ContactForceOutputSettings& c = *scene_.contactForceOutput;
      if (!fresh) {
        contactForceFile_.openAppend(folder_ / kContactForceFile, resume.step);
      } else {
        contactForceFile_.open(folder_ / kContactForceFile);
      }
      contactForces_ = std::make_unique<io::ContactForceRecorder>(c.compatibleForces, c.compatible);
    }
  });
}

void RunRecord::openStates(const io::ResumePoint& resume, const DynamicsSystem& system,
                           MoreauStepper& stepper) {
  if (!recording_) {
    return;
  }
  if (place_.restart.empty()) {
    writers_.beginStates(folder_, system, stepper);
  } else {
    writers_.continueStates(folder_, resume);
  }
}

void RunRecord::recordStep(const StepStats& stats, std::uint64_t step, const DynamicsSystem& system,
                           MoreauStepper& stepper) {
  if (log_.isOpen()) {
    log_.write(stats);
  }
  if (contactForces_ && scene_.contactForceOutput->writes(step)) {
    contactForces_->record(contactForceFile_, system.bodies, stepper.contacts(),
                           stepper.percussions(), system.contactParameters, scene_.stepper.deltaT,
                           step, system.time);
  }
  if (recording_ && scene_.recorder.records(step)) {
    writers_.writeState(system, stepper, step);
    if (log_.isOpen()) {
      log_.flush();
    }
  }
}

void RunRecord::close() {
  log_.close();
  if (recording_) {
    writers_.closeStates();
  }
  contactForceFile_.close();
}

std::string RunRecord::contactForcesNote() const {
  if (!scene_.contactForceOutput) {
    return {};
  }
  const io::ContactForceOutputSettings& c = *scene_.contactForceOutput;
  char line[64];
  std::snprintf(line, sizeof line, "contacts   forces of every %llu-th step",
                static_cast<unsigned long long>(c.everyXStep));
  return line + std::string(c.compatibleForces ? " with compatible normal forces" : "") + " to " +
         (folder_ / kContactForceFile).string() + "\n";
}

std::string RunRecord::compatibleForcesSummary() const {
  if (!contactForces_ || !scene_.contactForceOutput->compatibleForces ||
      contactForces_->blocks() == 0) {
    return {};
  }
  char line[192];
  std::snprintf(
      line, sizeof line,
      "contacts   compatible forces: %llu output steps, %.6g s, %.6g s per output step%s\n",
      static_cast<unsigned long long>(contactForces_->blocks()),
      contactForces_->compatibleSeconds(),
      contactForces_->compatibleSeconds() / static_cast<double>(contactForces_->blocks()),
      contactForces_->notConverged() > 0 ? " (some did not converge)" : "");
  return line;
}

}  // namespace grain::app
