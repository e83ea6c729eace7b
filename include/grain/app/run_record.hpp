// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/core/timestepping/step_stats.hpp>
#include <grain/io/contact_force_file.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/run_log.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/sim_file.hpp>

/// The record folder of a run (OUTDIR/SimFiles/SimDataRECORD_<n>), written alike by grain-sim and
/// grain-sim-mpi: RunRecord owns its files, RecordWriters says how the processes of a run share
/// the writing (docs/architecture.md#the-record-folder).
namespace grain::app {

/// The processes that write a record and how they write its state files: SimState.sim and the
/// warm-start data of each state (RestartCache.bin). A serial run is one process with the serial
/// writers (SerialRecordWriters); grain-sim-mpi's CollectiveRecordWriters write the states with
/// MPI-IO from all processes. Every other file of the folder is written by the one process for
/// which writesFolder() is true. Calls marked collective are made on every process.
class RecordWriters {
 public:
  virtual ~RecordWriters() = default;
  /// Processes that write the record together (1: a serial run).
  virtual int processes() const = 0;
  /// True on the process that creates the folder and writes its text files, SimData.dat and
  /// ContactForces.dat (the only process of a serial run, the first of a distributed one).
  virtual bool writesFolder() const = 0;
  /// The `text` of the process that writes the folder, on every process (collective).
  virtual std::string fromFolderWriter(const std::string& text) = 0;
  /// Creates `record`/SimState.sim for the simulated bodies of the run and writes the present
  /// state after 0 steps, its warm-start data first (collective).
  virtual void beginStates(const std::filesystem::path& record, const DynamicsSystem& system,
                           MoreauStepper& stepper) = 0;
  /// Continues `record`/SimState.sim after the state `resume` continues from (a partial state
  /// after it is cut off; collective).
  virtual void continueStates(const std::filesystem::path& record,
                              const io::ResumePoint& resume) = 0;
  /// Writes the warm-start data of the present state, then the state, after `step` steps
  /// (collective).
  virtual void writeState(const DynamicsSystem& system, MoreauStepper& stepper,
                          std::uint64_t step) = 0;
  /// Closes SimState.sim (collective).
  virtual void closeStates() = 0;
};

/// The writers of a serial run: io::SimFileWriter and io::WarmStartCheckpoint.
class SerialRecordWriters final : public RecordWriters {
 public:
  int processes() const override { return 1; }
  bool writesFolder() const override { return true; }
  std::string fromFolderWriter(const std::string& text) override { return text; }
  void beginStates(const std::filesystem::path& record, const DynamicsSystem& system,
                   MoreauStepper& stepper) override;
  void continueStates(const std::filesystem::path& record, const io::ResumePoint& resume) override;
  void writeState(const DynamicsSystem& system, MoreauStepper& stepper,
                  std::uint64_t step) override;
  void closeStates() override { sim_.close(); }

 private:
  std::filesystem::path record_;
  io::SimFileWriter sim_;
  io::WarmStartCheckpoint warmStart_;
};

/// What a run records and where.
struct RecordPlace {
  std::filesystem::path outDir;   ///< -g: a fresh run records to OUTDIR/SimFiles/SimDataRECORD_<n>
  std::filesystem::path restart;  ///< --restart: the record folder to continue (empty: fresh)
  std::filesystem::path sceneFile;  ///< the scene file the run was started with (RunInfo.txt)
  std::filesystem::path mediaDir;   ///< -m (RunInfo.txt; empty: the scene file's folder)
  bool sceneChanged = false;        ///< --set: a restart writes the changed scene files
};

/// The record folder of a run and its files:
/// - SceneFile.xml (the scene as run) and EffectiveScene.xml, each written whole or not at all
///   (writeTextFile); written by a fresh run and by a restart with --set;
/// - RunInfo.txt (io::runInfoText), written whole or not at all (writeTextFile), by a fresh run;
/// - SimData.dat, one line per step (io::RunLogWriter), continued by a restart;
/// - SimState.sim and RestartCache.bin / RestartCache.prev.bin (RecordWriters), the states the
///   scene's RecorderSettings ask for, each after its warm-start data;
/// - ContactForces.dat with a ContactForceOutput in the scene (io::ContactForceRecorder).
/// The same calls on every process of a run: create(), openFiles(), openStates(), recordStep()
/// and close() are collective in a distributed run.
class RunRecord {
 public:
  RunRecord(RecordWriters& writers, const io::SceneDescription& scene, RecordPlace place);
  RunRecord(const RunRecord&) = delete;
  RunRecord& operator=(const RunRecord&) = delete;
  ~RunRecord();

  /// Refuses, before anything is written, what a record written by `processes` processes cannot
  /// hold: ContactForces.dat needs every contact of a step on one process (io::SceneError naming
  /// the scene's ContactForceOutput), so does the FCLIB dump (`fclibDump`, --dump-fclib;
  /// grain::Error).
  static void checkWritable(int processes, const io::SceneDescription& scene, bool fclibDump);

  /// Makes the record folder: a fresh run the next free OUTDIR/SimFiles/SimDataRECORD_<n>
  /// (createRecordDirectory), a restart takes RecordPlace::restart. Throws grain::Error, the same
  /// on every process.
  void create();
  /// Writes the scene files and RunInfo.txt (as the RecordPlace asks) and opens SimData.dat and
  /// ContactForces.dat, a restart's after the step `resume` continues from. Throws grain::Error,
  /// the same on every process.
  void openFiles(const io::ResumePoint& resume);
  /// Begins SimState.sim with the present state (a fresh run) or continues it after `resume`'s
  /// state; nothing if the scene records no states. Throws grain::Error.
  void openStates(const io::ResumePoint& resume, const DynamicsSystem& system,
                  MoreauStepper& stepper);

  /// The records of step `step` just done: its SimData.dat line, its contact forces (if
  /// ContactForceOutput writes the step) and its state (if RecorderSettings record it).
  void recordStep(const StepStats& stats, std::uint64_t step, const DynamicsSystem& system,
                  MoreauStepper& stepper);
  /// Flushes and closes every file.
  void close();

  /// The folder (empty before create()).
  const std::filesystem::path& folder() const { return folder_; }
  /// "contacts   forces of every N-th step ... to FILE\n", or "" without ContactForceOutput.
  std::string contactForcesNote() const;
  /// "contacts   compatible forces: ...\n" after a run that computed them, or "".
  std::string compatibleForcesSummary() const;

 private:
  RecordWriters& writers_;
  const io::SceneDescription& scene_;
  RecordPlace place_;
  std::filesystem::path folder_;
  bool recording_ = false;  ///< the scene records states
  io::RunLogWriter log_;    ///< on the process that writes the folder
  io::ContactForceFileWriter contactForceFile_;
  std::unique_ptr<io::ContactForceRecorder> contactForces_;
};

}  // namespace grain::app
