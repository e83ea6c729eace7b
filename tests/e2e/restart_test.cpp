// SPDX-License-Identifier: MIT
// grain-sim --restart: a run stopped and continued gives the same bytes as an uninterrupted
// run (serial, bodies in free flight so that the closed form is known too).
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <grain/io/restart.hpp>
#include <grain/io/sim_file.hpp>

#include "e2e_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

/// 30 spinning bricks dropped onto a floor, every 5th step recorded.
std::string scene(double endTime) {
  return bricksSceneXml(endTime, 5, 30, 3);
}

std::string sim(const fs::path& sceneFile, const fs::path& out) {
  return std::string(GRAIN_SIM_EXE) + " -s " + sceneFile.string() + " -g " + out.string();
}

std::vector<std::uint64_t> logSteps(const fs::path& log) {
  std::ifstream in(log);
  std::string line;
  std::vector<std::uint64_t> steps;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream ls(line);
    std::string wall, time, step;
    std::getline(ls, wall, '\t');
    std::getline(ls, time, '\t');
    std::getline(ls, step, '\t');
    steps.push_back(std::stoull(step));
  }
  return steps;
}

/// Runs 0.5 s uninterrupted, and 0.23 s (23 steps; the last written state is at step 20) that
/// is then continued to 0.5 s; `damage` changes the stopped run's folder before the restart.
void expectRestartIsBitIdentical(const std::string& name,
                                 const std::function<void(const fs::path&)>& damage,
                                 bool warmStartRestored) {
  const fs::path dir = makeTempDir(name);
  writeText(dir / "full.xml", scene(0.5));
  writeText(dir / "part.xml", scene(0.23));
  ASSERT_EQ(runCommand(sim(dir / "full.xml", dir / "full")).exitCode, 0);
  ASSERT_EQ(runCommand(sim(dir / "part.xml", dir / "part")).exitCode, 0);
  const fs::path full = dir / "full" / "SimFiles" / "SimDataRECORD_0";
  const fs::path part = dir / "part" / "SimFiles" / "SimDataRECORD_0";
  ASSERT_TRUE(fs::exists(part / io::kRestartCacheFile));  // warm start is on
  EXPECT_EQ(logSteps(part / "SimData.dat").size(), 23u);
  damage(part);
  // The stopped run is continued to the longer end time with --set.
  const CommandResult r = runCommand(std::string(GRAIN_SIM_EXE) + " --restart " + part.string() +
                                     " --set 'SceneSettings/TimeStepperSettings/@endTime=0.5'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("restart    from state"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no warm-start data") == std::string::npos, warmStartRestored)
      << r.output;

  // The scene copy now asks for the longer run, so a further restart continues from there.
  EXPECT_NE(readText(part / "SceneFile.xml").find("endTime=\"0.5\""), std::string::npos);

  const std::string a = readText(full / "SimState.sim");
  const std::string b = readText(part / "SimState.sim");
  ASSERT_EQ(a.size(), b.size());
  io::SimFileReader ra, rb;
  ra.open(full / "SimState.sim");
  rb.open(part / "SimState.sim");
  ASSERT_EQ(ra.stateCount(), 11u);
  ASSERT_EQ(rb.stateCount(), 11u);
  const std::size_t perState = ra.header().bytesPerState();
  for (std::size_t k = 0; k < ra.stateCount(); ++k) {
    EXPECT_EQ(a.compare(28 + k * perState, perState, b, 28 + k * perState, perState), 0)
        << "state " << k << " differs";
  }
  EXPECT_EQ(a, b);
  // The run log has every step once, in order.
  const auto steps = logSteps(part / "SimData.dat");
  ASSERT_EQ(steps.size(), 50u);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    EXPECT_EQ(steps[k], k + 1);
  }
  // The bricks have landed: the restart happened with contacts (and warm-start data).
  const io::SimState s10 = rb.readState(10);
  for (const auto& body : s10.bodies) {
    EXPECT_GT(body.position.z(), 0.0);
    EXPECT_LT(body.position.z(), 0.2);
  }
  std::ifstream log(part / "SimData.dat");
  std::string line;
  std::string last;
  while (std::getline(log, line)) {
    if (!line.empty())
      last = line;
  }
  std::istringstream fields(last);
  std::string field;
  std::vector<std::string> cols;
  while (std::getline(fields, field, '\t'))
    cols.push_back(field);
  ASSERT_GT(cols.size(), 13u);
  EXPECT_GT(std::stoul(cols[13]), 0u) << "no contacts in the last step: " << last;
}

TEST(Restart, ContinuedRunIsBitIdentical) {
  expectRestartIsBitIdentical(
      "restart_plain", [](const fs::path&) {}, true);
}

TEST(Restart, PartialLastStateIsCutAndRedone) {
  // A run killed while writing: the last state (step 20) is incomplete, the restart continues
  // from step 15 with the warm-start data of step 15 (RestartCache.prev.bin).
  expectRestartIsBitIdentical(
      "restart_truncated",
      [](const fs::path& record) {
        const fs::path f = record / "SimState.sim";
        fs::resize_file(f, fs::file_size(f) - 100);
      },
      true);
}

TEST(Restart, WithoutWarmStartDataTheRestartSaysSo) {
  // Both warm-start files gone: the restart warns and continues (the first step then starts
  // from zero percussions and may differ in the last bits, so only the warning is checked).
  const fs::path dir = makeTempDir("restart_no_cache");
  writeText(dir / "part.xml", scene(0.23));
  ASSERT_EQ(runCommand(sim(dir / "part.xml", dir / "part")).exitCode, 0);
  const fs::path part = dir / "part" / "SimFiles" / "SimDataRECORD_0";
  ASSERT_TRUE(fs::exists(part / io::kRestartCachePreviousFile));
  fs::remove(part / io::kRestartCacheFile);
  fs::remove(part / io::kRestartCachePreviousFile);
  const CommandResult r = runCommand(std::string(GRAIN_SIM_EXE) + " --restart " + part.string() +
                                     " --set 'SceneSettings/TimeStepperSettings/@endTime=0.3'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("no warm-start data"), std::string::npos) << r.output;
}

TEST(Restart, StopMessageSaysHowToRestartAndRestartContinues) {
  const fs::path dir = makeTempDir("restart_signal");
  writeText(dir / "long.xml", scene(1e6));
  const CommandResult r =
      runCommand("timeout --preserve-status -s INT 0.5 " + sim(dir / "long.xml", dir / "out"));
  EXPECT_EQ(r.exitCode, 3) << r.output;
  const fs::path record = dir / "out" / "SimFiles" / "SimDataRECORD_0";
  EXPECT_NE(r.output.find("grain-sim --restart " + record.string()), std::string::npos) << r.output;
  io::SimFileReader before;
  before.open(record / "SimState.sim");
  const std::size_t n = before.stateCount();
  const double tLast = before.readTime(n - 1);
  // Continue for 10 more steps.
  std::ostringstream end;
  end.precision(17);
  end << tLast + 0.1;
  std::string text = scene(1e6);
  text.replace(text.find("endTime=\"1e+06\""), 15, "endTime=\"" + end.str() + "\"");
  writeText(record / "SceneFile.xml", text);
  const CommandResult c = runCommand(std::string(GRAIN_SIM_EXE) + " --restart " + record.string());
  ASSERT_EQ(c.exitCode, 0) << c.output;
  io::SimFileReader after;
  after.open(record / "SimState.sim");
  EXPECT_EQ(after.stateCount(), n + 2);
  EXPECT_NEAR(after.readTime(n + 1), tLast + 0.1, 1e-9);
}

TEST(Restart, BadRestartFolderIsBadInput) {
  const fs::path dir = makeTempDir("restart_bad");
  const CommandResult r =
      runCommand(std::string(GRAIN_SIM_EXE) + " --restart " + (dir / "nope").string());
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("SceneFile.xml"), std::string::npos) << r.output;
  const CommandResult both =
      runCommand(std::string(GRAIN_SIM_EXE) + " --restart " + dir.string() + " -s x.xml");
  EXPECT_EQ(both.exitCode, 2) << both.output;
}

}  // namespace
}  // namespace grain
