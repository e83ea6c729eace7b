// SPDX-License-Identifier: MIT
// grain-sim with scene overrides (--set, --print-scene), the effective configuration, the
// example scenes in scenes/ and GRSF's scene files, each run for a few steps.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/io/scene.hpp>
#include <grain/io/sim_file.hpp>

#include "../common/mesh_support.hpp"
#include "e2e_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

/// Runs grain-sim with the arguments (each quoted for the shell).
CommandResult runSim(const std::vector<std::string>& args, const fs::path& errFile) {
  std::string cmd = GRAIN_SIM_EXE;
  for (const std::string& a : args) {
    std::string quoted = "'";
    for (const char c : a) {
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    cmd += " " + quoted + "'";
  }
  return runCommand(cmd, errFile);
}

/// The single run folder below `out`.
fs::path recordDir(const fs::path& out) {
  const fs::path sim = out / "SimFiles";
  for (const auto& e : fs::directory_iterator(sim)) {
    return e.path();
  }
  return {};
}

const std::string kEndTime = "SceneSettings/TimeStepperSettings/@endTime=";
const std::string kDeltaT = "SceneSettings/TimeStepperSettings/@deltaT=";
const std::string kEveryStep = "SceneSettings/RecorderSettings/@mode=everyTimeStep";

TEST(SceneCli, PrintSceneAppliesOverridesAndWritesNothing) {
  const fs::path dir = makeTempDir("print_scene");
  const fs::path scene = sourceDir() / "scenes" / "pile.xml";
  const CommandResult r =
      runSim({"-s", scene.string(), "-g", (dir / "out").string(), "--set", kEndTime + "0.25",
              "--set", "SceneObjects/RigidBodies[@name=\"beads\"]/@instances=10", "--print-scene"},
             dir / "err.txt");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  std::string expected = readText(scene);
  expected.replace(expected.find("endTime=\"1.0\""), 13, "endTime=\"0.25\"");
  expected.replace(expected.find("instances=\"3000\""), 16, "instances=\"10\"");
  EXPECT_EQ(r.output, expected);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(SceneCli, ThreadsSetTheScenesThreadCount) {
  const fs::path dir = makeTempDir("threads_option");
  const fs::path scene = sourceDir() / "scenes" / "pile.xml";
  // --threads adds the attribute (the scene has none) after the --set overrides.
  const CommandResult r =
      runSim({"-s", scene.string(), "--set", "SceneSettings/TimeStepperSettings/@threadCount=3",
              "--threads", "2", "--print-scene"},
             dir / "err.txt");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_NE(r.output.find("threadCount=\"2\""), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("threadCount=\"3\""), std::string::npos) << r.output;
  for (const char* bad : {"0", "2000"}) {
    const CommandResult b =
        runSim({"-s", scene.string(), "--threads", bad, "--check"}, dir / "err.txt");
    EXPECT_EQ(b.exitCode, 2) << bad;
    EXPECT_NE(b.errors.find("--threads: N must be in [1, 1024]"), std::string::npos) << b.errors;
  }
  // threadCount="0" in the scene is refused by the reader.
  const CommandResult zero = runSim({"-s", scene.string(), "--set",
                                     "SceneSettings/TimeStepperSettings/@threadCount=0", "--check"},
                                    dir / "err.txt");
  EXPECT_EQ(zero.exitCode, 2);
  EXPECT_NE(zero.errors.find("threadCount"), std::string::npos) << zero.errors;
}

TEST(SceneCli, XPathWithoutMatchIsBadInput) {
  const fs::path dir = makeTempDir("no_match");
  const fs::path scene = sourceDir() / "scenes" / "pile.xml";
  const CommandResult r = runSim({"-s", scene.string(), "-g", (dir / "out").string(), "--set",
                                  "SceneSettings/TimeStepper/@endTime=1"},
                                 dir / "err.txt");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.errors, scene.string() +
                          ": --set 'SceneSettings/TimeStepper/@endTime=1': the XPath matches "
                          "nothing\n");
  EXPECT_FALSE(fs::exists(dir / "out"));
  const CommandResult noValue = runSim({"-s", scene.string(), "--set", "endTime"}, dir / "err.txt");
  EXPECT_EQ(noValue.exitCode, 2);
}

TEST(SceneCli, ErrorsAfterOverridesNameTheFileAndItsLine) {
  const fs::path dir = makeTempDir("override_error");
  const fs::path scene = sourceDir() / "scenes" / "pile.xml";
  const CommandResult r = runSim({"-s", scene.string(), "-g", (dir / "out").string(), "--set",
                                  "SceneObjects/RigidBodies/Geometry/Sphere/@radius=0"},
                                 dir / "err.txt");
  EXPECT_EQ(r.exitCode, 2);
  // The line of the radius in the file itself.
  const std::string text = readText(scene);
  const auto line =
      1 + std::count(text.begin(), text.begin() + text.find("radius=\"0.005\""), '\n');
  EXPECT_EQ(r.errors, scene.string() + ":" + std::to_string(line) +
                          ": SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Sphere: "
                          "attribute 'radius' must be > 0 (got 0)\n");
}

TEST(SceneCli, CheckLoadsTheSceneAndWritesNothing) {
  const fs::path dir = makeTempDir("check");
  const fs::path scene = sourceDir() / "scenes" / "pile.xml";
  const CommandResult ok =
      runSim({"-s", scene.string(), "-g", (dir / "out").string(), "--set",
              "SceneObjects/RigidBodies[@name=\"beads\"]/@instances=10", "--check"},
             dir / "err.txt");
  EXPECT_EQ(ok.exitCode, 0) << ok.errors;
  EXPECT_EQ(ok.output, "scene      " + scene.string() + " loads: 10 simulated bodies\n");
  EXPECT_FALSE(fs::exists(dir / "out"));
  // A value the reader refuses: exit code 2 and the message of a run, nothing written.
  const CommandResult bad =
      runSim({"-s", scene.string(), "-g", (dir / "out").string(), "--set",
              "SceneObjects/RigidBodies/Geometry/Sphere/@radius=0", "--check"},
             dir / "err.txt");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.errors.find(scene.string() + ":"), std::string::npos) << bad.errors;
  EXPECT_NE(bad.errors.find("attribute 'radius' must be > 0 (got 0)"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(SceneCli, RunFolderHoldsTheOverriddenSceneAndTheEffectiveConfiguration) {
  const fs::path dir = makeTempDir("run_folder");
  const fs::path scene = sourceDir() / "scenes" / "pile.xml";
  const CommandResult r =
      runSim({"-s", scene.string(), "-g", (dir / "out").string(), "--set", kEndTime + "0.006",
              "--set", "SceneObjects/RigidBodies[@name=\"beads\"]/@instances=20"},
             dir / "err.txt");
  ASSERT_EQ(r.exitCode, 0) << r.errors;
  const fs::path record = recordDir(dir / "out");
  const std::string copied = readText(record / "SceneFile.xml");
  EXPECT_NE(copied.find("endTime=\"0.006\""), std::string::npos);
  EXPECT_NE(copied.find("instances=\"20\""), std::string::npos);
  const std::string effective = readText(record / "EffectiveScene.xml");
  EXPECT_NE(effective.find("minIter=\"0\""), std::string::npos);
  EXPECT_NE(effective.find("everyXStep=\"10\""), std::string::npos);
  EXPECT_NE(r.output.find("effective configuration"), std::string::npos);
  // The effective configuration is itself a scene that loads to the same bodies.
  const io::SceneDescription d = io::loadScene(record / "EffectiveScene.xml");
  // 20 beads, the floor, the 576 glued beads of the rough floor and the 4 walls.
  EXPECT_EQ(d.system.bodies.size(), 601u);
  EXPECT_EQ(d.stepper.endTime, 0.006);
}

// ---- example scenes ---------------------------------------------------------------------------

/// Runs a scene for 3 steps of 1 ms, writing every state, and checks the .sim file.
void runShort(const fs::path& scene, const std::string& name,
              const std::vector<std::string>& extra = {}) {
  const fs::path dir = makeTempDir(name);
  std::vector<std::string> args = {"-s",    scene.string(),    "-g",    (dir / "out").string(),
                                   "--set", kDeltaT + "0.001", "--set", kEndTime + "0.003",
                                   "--set", kEveryStep};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult r = runSim(args, dir / "err.txt");
  ASSERT_EQ(r.exitCode, 0) << scene << "\n" << r.errors;
  EXPECT_EQ(r.errors, "") << scene;
  io::SceneLoadOptions options;
  options.mediaDirectory = scene.parent_path();
  const io::SceneDescription d =
      io::loadScene(recordDir(dir / "out") / "EffectiveScene.xml", options);
  io::SimFileReader sim;
  sim.open(recordDir(dir / "out") / "SimState.sim");
  EXPECT_EQ(sim.header().nSimBodies, d.system.bodies.simulatedCount()) << scene;
  ASSERT_EQ(sim.stateCount(), 4u) << scene;
  EXPECT_FALSE(sim.truncated());
  const io::SimState last = sim.readState(3);
  EXPECT_NEAR(last.time, 0.003, 1e-12);
  EXPECT_EQ(last.bodies.size(), d.system.bodies.simulatedCount());
  for (const io::SimBodyState& b : last.bodies) {
    ASSERT_TRUE(b.position.allFinite() && b.velocity.allFinite()) << scene;
  }
}

class ExampleScene : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleScene, RunsShortly) {
  GRAIN_REQUIRE_MESH_SUPPORT_FOR(sourceDir() / "scenes" / (GetParam() + ".xml"));
  runShort(sourceDir() / "scenes" / (GetParam() + ".xml"), "example_" + GetParam());
}

INSTANTIATE_TEST_SUITE_P(Scenes, ExampleScene,
                         ::testing::Values("pile", "hopper", "drum", "chute", "mixed_pile",
                                           "mesh_funnel"));

TEST(ExampleScenes, EveryExampleIsRun) {
  // Keeps the list above complete.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(sourceDir() / "scenes")) {
    if (e.path().extension() == ".xml") {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"chute", "drum", "hopper", "mesh_funnel", "mixed_pile",
                                             "pile"}));
}

// ---- GRSF's scene files -----------------------------------------------------------------------

fs::path grsfScenes() {
  return testDataDir() / "grsf-scenes";
}

#define GRAIN_REQUIRE_SHARED_DATA() \
  ASSERT_TRUE(fs::exists(grsfScenes() / "funnel.xml")) << grsfScenes()

TEST(GrsfScenesRun, Funnel) {
  GRAIN_REQUIRE_SHARED_DATA();
  GRAIN_REQUIRE_MESH_SUPPORT_FOR(grsfScenes() / "funnel.xml");
  runShort(grsfScenes() / "funnel.xml", "grsf_funnel", {"-m", grsfScenes().string()});
}

TEST(GrsfScenesRun, AvalancheWithPlaceholderFilledAndFewerBeads) {
  GRAIN_REQUIRE_SHARED_DATA();
  GRAIN_REQUIRE_MESH_SUPPORT();
  const fs::path dir = makeTempDir("grsf_avalanche_ic");
  // The initial condition the study scene reads: 2000 beads in a block above the chute.
  constexpr std::uint32_t kBeads = 2000;
  {
    BodyStorage b;
    for (std::uint32_t k = 0; k < kBeads; ++k) {
      BodyDef d;
      d.id = makeBodyId(0, k);
      d.mass = 1.0;
      d.inertiaBody = Vec3::Ones();
      d.position =
          Vec3(0.01 + 2.4e-3 * (k / 400), 2.4e-3 * (k % 20), 0.002 + 2.4e-3 * (k / 20 % 20));
      b.add(d, 1.0);
    }
    io::SimFileWriter w;
    w.open(dir / "initial.sim");
    w.writeHeader(b);
    w.writeState(0.0, b);
  }
  const fs::path scene = grsfScenes() / "avalanche1M-study.xml";
  const std::vector<std::string> common = {
      "-s",    scene.string(),
      "-m",    grsfScenes().string(),
      "--set", "SceneObjects/RigidBodies[@name=\"beads\"]/@instances=" + std::to_string(kBeads)};
  // The placeholder left alone is named.
  {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"-g", (dir / "out0").string()});
    const CommandResult r = runSim(args, dir / "err.txt");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.errors.find(":71: SceneSettings/GlobalInitialCondition: attribute 'file' "
                            "contains the unfilled placeholder "
                            "'${RigidBodySim:firstInitialCondSimFile}'"),
              std::string::npos)
        << r.errors;
  }
  const fs::path out = dir / "out";
  std::vector<std::string> args = common;
  args.insert(args.end(),
              {"-g", out.string(), "--set",
               "SceneSettings/GlobalInitialCondition/@file=" + (dir / "initial.sim").string(),
               "--set", kEndTime + "0.0004"});
  const CommandResult r = runSim(args, dir / "err.txt");
  ASSERT_EQ(r.exitCode, 0) << r.errors;
  io::SimFileReader sim;
  sim.open(recordDir(out) / "SimState.sim");
  EXPECT_EQ(sim.header().nSimBodies, kBeads);
  ASSERT_GE(sim.stateCount(), 1u);
  const io::SimState first = sim.readState(0);
  const io::SimBodyState* b = first.find(makeBodyId(0, 421));
  ASSERT_NE(b, nullptr);
  EXPECT_NEAR((b->position - Vec3(0.01 + 2.4e-3, 2.4e-3, 0.002 + 2.4e-3)).norm(), 0.0, 1e-15);
}

}  // namespace
}  // namespace grain
