// SPDX-License-Identifier: MIT
// End-to-end runs of the grain-sim executable: output layout, .sim contents against closed
// forms, bad input, and interruption by a signal.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <grain/io/restart.hpp>
#include <grain/io/run_log.hpp>
#include <grain/io/sim_file.hpp>
#include <grain/io/version.hpp>

#include "e2e_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

CommandResult runSim(const fs::path& scene, const fs::path& out, const std::string& prefix = "") {
  return runCommand(prefix + std::string(GRAIN_SIM_EXE) + " -s " + scene.string() + " -g " +
                    out.string());
}

/// A scene with one falling sphere (no contacts) and the given settings.
std::string fallingSphereScene(double endTime, const std::string& recorder, int instances = 1) {
  std::ostringstream s;
  s << R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    )"
    << recorder << R"(
    <TimeStepperSettings deltaT="0.01" endTime=")"
    << endTime << R"(">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" maxIter="100" absTol="1e-7" relTol="1e-7"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces><ForceField applyTo="all" type="gravity" value="10" direction="0 0 -1"/></ExternalForces>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="ball" instances=")"
    << instances << R"(" groupId="3">
      <Geometry><Sphere distribute="uniform" radius="0.1"/></Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="uniform" value="2"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          )"
    << (instances == 1
            ? R"(<InitialPosition distribute="transforms"><Pos><Trafo trans="0 0 5" axis="0 0 1" deg="0"/></Pos></InitialPosition>)"
            : R"(<InitialPosition distribute="grid" gridSizeX="20" gridSizeY="20" distance="1" translation="0 0 5" jitter="false" delta="0"/>)")
    << R"(
          <InitialVelocity distribute="transrot"><Vel transDir="1 0 0" absTransVel="2" rotDir="0 0 1" absRotVel="0"/></InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
  </SceneObjects>
</DynamicsSystem>
)";
  return s.str();
}

TEST(GrainSim, WritesRunFolderAndExactFreeFall) {
  const fs::path dir = makeTempDir("free_fall");
  const fs::path scene = dir / "scene.xml";
  writeText(scene, fallingSphereScene(
                       0.5, R"(<RecorderSettings mode="everyXTimeStep" everyXStep="10"/>)"));
  const CommandResult r = runSim(scene, dir / "out");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const fs::path record = dir / "out" / "SimFiles" / "SimDataRECORD_0";
  EXPECT_NE(r.output.find(record.string()), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(record / "SceneFile.xml"));
  EXPECT_TRUE(fs::exists(record / "SimData.dat"));

  io::SimFileReader reader;
  reader.open(record / "SimState.sim");
  EXPECT_FALSE(reader.truncated());
  ASSERT_EQ(reader.header().nSimBodies, 1u);
  ASSERT_EQ(reader.stateCount(), 6u);  // t = 0, 0.1, ..., 0.5
  for (std::size_t k = 0; k < reader.stateCount(); ++k) {
    const io::SimState s = reader.readState(k);
    const double t = 0.1 * static_cast<double>(k);
    EXPECT_NEAR(s.time, t, 1e-12);
    ASSERT_EQ(s.bodies.size(), 1u);
    EXPECT_EQ(s.bodies[0].id, makeBodyId(3, 0));
    EXPECT_NEAR(s.bodies[0].position.x(), 2.0 * t, 1e-12);
    EXPECT_NEAR(s.bodies[0].position.z(), 5.0 - 5.0 * t * t, 1e-12);
    EXPECT_NEAR(s.bodies[0].velocity.z(), -10.0 * t, 1e-12);
  }

  // A second run gets the next free record folder.
  ASSERT_EQ(runSim(scene, dir / "out").exitCode, 0);
  EXPECT_TRUE(fs::exists(dir / "out" / "SimFiles" / "SimDataRECORD_1" / "SimState.sim"));
}

TEST(GrainSim, RunLogHasOneLinePerStep) {
  const fs::path dir = makeTempDir("run_log");
  const fs::path scene = dir / "scene.xml";
  writeText(scene, fallingSphereScene(0.2, R"(<RecorderSettings mode="noOutput"/>)"));
  ASSERT_EQ(runSim(scene, dir / "out").exitCode, 0);
  const fs::path record = dir / "out" / "SimFiles" / "SimDataRECORD_0";
  EXPECT_FALSE(fs::exists(record / "SimState.sim"));
  std::ifstream log(record / "SimData.dat");
  std::string line;
  std::vector<std::string> comments;
  int lines = 0;
  while (std::getline(log, line)) {
    if (line.rfind("# ", 0) == 0) {
      comments.push_back(line);
    } else if (!line.empty()) {
      ++lines;
    }
  }
  // The column header, then the version that wrote the log.
  ASSERT_EQ(comments.size(), 2u);
  EXPECT_EQ(comments[0], io::RunLogWriter::headerLine());
  EXPECT_EQ(comments[1], "# grain " + std::string(versionString()));
  EXPECT_EQ(lines, 20);
  // The run folder names the version too.
  EXPECT_NE(
      readText(record / io::kRunInfoFile).find("version\t" + std::string(versionString()) + "\n"),
      std::string::npos);
}

TEST(GrainTools, EveryToolPrintsTheVersionOfTheBuild) {
  // The version comes from project(... VERSION) of CMakeLists.txt, the one place it is set.
  const std::string cmake = readText(sourceDir() / "CMakeLists.txt");
  const std::string key = "project(grain VERSION ";
  const auto at = cmake.find(key);
  ASSERT_NE(at, std::string::npos);
  const std::string version =
      cmake.substr(at + key.size(), cmake.find_first_of(" )", at + key.size()) - at - key.size());
  EXPECT_EQ(std::string(versionString()), version);
  std::vector<std::pair<std::string, std::string>> tools = {
      {"grain-sim", GRAIN_SIM_EXE},
      {"grain-convert", GRAIN_CONVERT_EXE},
      {"grain-scene-schema", GRAIN_SCENE_SCHEMA_EXE}};
#ifdef GRAIN_FCLIB_EXE
  tools.emplace_back("grain-fclib", GRAIN_FCLIB_EXE);
#endif
  for (const auto& [name, exe] : tools) {
    const CommandResult r = runCommand(exe + " --version");
    EXPECT_EQ(r.exitCode, 0) << name;
    EXPECT_EQ(r.output, name + " " + version + "\n");
  }
}

TEST(GrainSim, BadSceneExitsWithTwoAndWritesNothing) {
  const fs::path dir = makeTempDir("bad_scene");
  const fs::path scene = dir / "scene.xml";
  std::string text = fallingSphereScene(0.2, R"(<RecorderSettings mode="everyTimeStep"/>)");
  text.replace(text.find("radius=\"0.1\""), 12, "radius=\"-0.1\"");
  writeText(scene, text);
  const CommandResult r = runSim(scene, dir / "out");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("scene.xml:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("radius"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(GrainSim, MissingSceneFileIsBadInput) {
  const fs::path dir = makeTempDir("missing_scene");
  const CommandResult r = runSim(dir / "nope.xml", dir / "out");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("nope.xml"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(GrainSim, InterruptKeepsEveryCompleteState) {
  const fs::path dir = makeTempDir("interrupt");
  const fs::path scene = dir / "scene.xml";
  // Far too long to finish: the signal arrives first.
  // 400 bodies 1 m apart (never in contact, no floor) make a step cost enough
  // that the run log stays small.
  writeText(scene, fallingSphereScene(
                       1e6, R"(<RecorderSettings mode="everyXTimeStep" everyXStep="100"/>)", 400));
  const CommandResult r = runSim(scene, dir / "out", "timeout --preserve-status -s INT 1 ");
  EXPECT_EQ(r.exitCode, 3) << r.output;
  EXPECT_NE(r.output.find("stopped by signal"), std::string::npos) << r.output;
  io::SimFileReader reader;
  reader.open(dir / "out" / "SimFiles" / "SimDataRECORD_0" / "SimState.sim");
  EXPECT_FALSE(reader.truncated());
  ASSERT_GE(reader.stateCount(), 1u);
  const io::SimState last = reader.readState(reader.stateCount() - 1);
  ASSERT_EQ(last.bodies.size(), 400u);
  EXPECT_NEAR(last.bodies[0].velocity.z(), -10.0 * last.time, 1e-9 * (1.0 + last.time));
}

}  // namespace
}  // namespace grain
