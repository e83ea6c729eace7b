// SPDX-License-Identifier: MIT
// app::RunRecord: the record folder of a serial run (its files, written whole), a process of a
// distributed run that does not write the folder (no file, the folder writer's path and errors),
// and what a record of several processes refuses.
#include <algorithm>
#include <deque>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/app/run_record.hpp>
#include <grain/core/common/error.hpp>
#include <grain/io/contact_force_file.hpp>
#include <grain/io/scene_error.hpp>
#include <grain/io/sim_file.hpp>

#include "../../common/test_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> filesOf(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// A scene without bodies, recorded every 2nd step, contact forces every step.
io::SceneDescription tinyScene() {
  io::SceneDescription scene;
  scene.file = "tiny.xml";
  scene.text = "<DynamicsSystem>\n  <SceneSettings>\n    <ContactForceOutput/>\n";
  scene.effectiveXml = "<DynamicsSystem effective=\"yes\"/>\n";
  scene.recorder.mode = io::RecorderMode::EveryXTimeStep;
  scene.recorder.everyXStep = 2;
  scene.contactForceOutput = io::ContactForceOutputSettings{};
  return scene;
}

/// Steps 1-4 of 0.1 s, each recorded.
void recordFourSteps(app::RunRecord& record, io::SceneDescription& scene, MoreauStepper& stepper) {
  for (std::uint64_t step = 1; step <= 4; ++step) {
    scene.system.time = 0.1 * static_cast<double>(step);
    StepStats stats;
    stats.time = scene.system.time;
    record.recordStep(stats, step, scene.system, stepper);
  }
}

std::size_t linesOf(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(RunRecord, SerialRecordHoldsEveryFileOfTheFolder) {
  testing::TempDir dir("grain_app_");
  io::SceneDescription scene = tinyScene();
  MoreauStepper stepper(scene.stepper);
  app::SerialRecordWriters writers;
  app::RunRecord record(writers, scene, {dir / "out", {}, dir / "tiny.xml", {}, false});
  record.create();
  EXPECT_EQ(record.folder(), dir / "out" / "SimFiles" / "SimDataRECORD_0");
  record.openFiles({});
  record.openStates({}, scene.system, stepper);
  recordFourSteps(record, scene, stepper);
  record.close();
  const fs::path f = record.folder();
  // No temporary file is left.
  EXPECT_EQ(filesOf(f),
            (std::vector<std::string>{"ContactForces.dat", "EffectiveScene.xml", "RunInfo.txt",
                                      "SceneFile.xml", "SimData.dat", "SimState.sim"}));
  EXPECT_EQ(testing::readText(f / "SceneFile.xml"), scene.text);
  EXPECT_EQ(testing::readText(f / "EffectiveScene.xml"), scene.effectiveXml);
  EXPECT_NE(testing::readText(f / "RunInfo.txt").find((dir / "tiny.xml").string()),
            std::string::npos);
  // Header and version lines, then one line per step.
  EXPECT_EQ(linesOf(testing::readText(f / "SimData.dat")), 2u + 4u);
  // The state after 0 steps, then after steps 2 and 4.
  io::SimFileReader sim;
  sim.open(f / "SimState.sim");
  ASSERT_EQ(sim.stateCount(), 3u);
  EXPECT_DOUBLE_EQ(sim.readTime(2), 0.4);
  EXPECT_EQ(io::readContactForceFile(f / "ContactForces.dat").size(), 4u);
  EXPECT_EQ(record.contactForcesNote(),
            "contacts   forces of every 1-th step to " + (f / "ContactForces.dat").string() + "\n");
}

// RunInfo.txt is written whole, like the scene files: when its temporary file cannot be written
// (here a folder of that name), opening the files fails with the file named and no RunInfo.txt
// exists, rather than a part of one.
TEST(RunRecord, RunInfoIsWrittenWholeOrNotAtAll) {
  testing::TempDir dir("grain_app_");
  io::SceneDescription scene = tinyScene();
  app::SerialRecordWriters writers;
  app::RunRecord record(writers, scene, {dir / "out", {}, dir / "tiny.xml", {}, false});
  record.create();
  const fs::path f = record.folder();
  fs::create_directory(f / "RunInfo.txt.part");
  try {
    record.openFiles({});
    ADD_FAILURE() << "openFiles succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((f / "RunInfo.txt.part").string()), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(f / "RunInfo.txt"));
}

/// A process of a distributed run other than the folder writer: `shared` are the texts the
/// folder writer sends (its error or "", its folder), `states` the steps of the states written.
class OtherProcess final : public app::RecordWriters {
 public:
  explicit OtherProcess(std::deque<std::string> shared) : shared_(std::move(shared)) {}
  int processes() const override { return 2; }
  bool writesFolder() const override { return false; }
  std::string fromFolderWriter(const std::string& text) override {
    EXPECT_TRUE(text.empty()) << text;  // this process has nothing to share
    EXPECT_FALSE(shared_.empty());
    std::string t = shared_.empty() ? std::string() : shared_.front();
    if (!shared_.empty()) {
      shared_.pop_front();
    }
    return t;
  }
  void beginStates(const fs::path& /*record*/, const DynamicsSystem& /*system*/,
                   MoreauStepper& /*stepper*/) override {
    states.push_back(0);
  }
  void continueStates(const fs::path& /*record*/, const io::ResumePoint& /*resume*/) override {}
  void writeState(const DynamicsSystem& /*system*/, MoreauStepper& /*stepper*/,
                  std::uint64_t step) override {
    states.push_back(step);
  }
  void closeStates() override {}

  std::vector<std::uint64_t> states;

 private:
  std::deque<std::string> shared_;
};

TEST(RunRecord, AProcessThatDoesNotWriteTheFolderTakesItsPathAndWritesOnlyStates) {
  testing::TempDir dir("grain_app_");
  io::SceneDescription scene = tinyScene();
  scene.contactForceOutput.reset();
  MoreauStepper stepper(scene.stepper);
  const fs::path folder = dir / "out" / "SimFiles" / "SimDataRECORD_7";
  OtherProcess writers({"", folder.string(), ""});
  app::RunRecord record(writers, scene, {dir / "out", {}, dir / "tiny.xml", {}, false});
  record.create();
  EXPECT_EQ(record.folder(), folder);
  record.openFiles({});
  record.openStates({}, scene.system, stepper);
  recordFourSteps(record, scene, stepper);
  record.close();
  EXPECT_TRUE(filesOf(dir.path()).empty());
  // The state files are written by every process together.
  EXPECT_EQ(writers.states, (std::vector<std::uint64_t>{0, 2, 4}));
}

TEST(RunRecord, AFailureOfTheFolderWriterStopsTheOtherProcessesWithItsMessage) {
  testing::TempDir dir("grain_app_");
  io::SceneDescription scene = tinyScene();
  OtherProcess writers({"cannot write /x/SceneFile.xml.part (disk full or file-size limit?)"});
  app::RunRecord record(writers, scene, {dir / "out", {}, dir / "tiny.xml", {}, false});
  try {
    record.create();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot write /x/SceneFile.xml.part (disk full or file-size limit?)");
  }
  EXPECT_TRUE(filesOf(dir.path()).empty());
}

TEST(RunRecord, WhatOneProcessWritesIsRefusedOnMore) {
  const io::SceneDescription scene = tinyScene();
  EXPECT_NO_THROW(app::RunRecord::checkWritable(1, scene, true));
  try {
    app::RunRecord::checkWritable(2, scene, false);
    FAIL() << "ContactForceOutput accepted";
  } catch (const io::SceneError& e) {
    EXPECT_EQ(e.file(), "tiny.xml");
    EXPECT_EQ(e.line(), 3u);
    EXPECT_EQ(e.path(), "SceneSettings/ContactForceOutput");
  }
  io::SceneDescription plain = tinyScene();
  plain.contactForceOutput.reset();
  EXPECT_NO_THROW(app::RunRecord::checkWritable(3, plain, false));
  try {
    app::RunRecord::checkWritable(3, plain, true);
    FAIL() << "--dump-fclib accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--dump-fclib: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace grain
