// SPDX-License-Identifier: MIT
// grain-sim with the accuracy measures: the SimData.dat columns NaturalMapError and KoziaraError
// for the velocity solver and the local solvers, and restarts on a log of the older format.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

constexpr double kRelTol = 1e-6;

/// 18 spheres dropped onto a floor and onto each other (contacts from about step 5 on).
std::string scene(const std::string& method, double endTime) {
  std::ostringstream s;
  s << R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="everyXTimeStep" everyXStep="5"/>
    <TimeStepperSettings deltaT="0.01" endTime=")"
    << endTime << R"(">
      <InclusionSolverSettings method=")"
    << method << R"(" useGPU="false" alphaJORProx="0.5" alphaSORProx="1.0"
          convergenceMethod="NaturalMap" maxIter="20000" absTol="0" relTol=")"
    << kRelTol
    << R"(" usePercussionCache="true" driftCorrectionGap="true" driftCorrectionGapAlpha="0.2"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.4" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces><ForceField applyTo="all" type="gravity" value="9.81" direction="0 0 -1"/></ExternalForces>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="beads" instances="18" groupId="0">
      <Geometry><Sphere distribute="uniform" radius="0.05"/></Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="homogen" density="1000"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="3" gridSizeY="3" distance="0.104"
              translation="0 0 0.06" jitter="true" delta="0.002" seed="5"/>
          <InitialVelocity distribute="transrot"><Vel transDir="0 0 -1" absTransVel="0.3" rotDir="1 0 0" absRotVel="0"/></InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)" << floorBodiesXml(1)
    << R"(  </SceneObjects>
</DynamicsSystem>
)";
  return s.str();
}

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string item;
  while (std::getline(s, item, '\t')) {
    out.push_back(item);
  }
  return out;
}

/// SimData.dat as column name (without unit) -> values per step, in file order.
struct Log {
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> rows;
  std::size_t column(const std::string& name) const {
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (names[k] == name || names[k].rfind(name + " [", 0) == 0) {
        return k;
      }
    }
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
};

Log readLog(const fs::path& file) {
  Log log;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) {
      if (log.names.empty()) {  // the column header; later comment lines name the version
        log.names = splitTabs(line.substr(2));
      }
    } else if (!line.empty()) {
      log.rows.push_back(splitTabs(line));
    }
  }
  return log;
}

/// Every step has finite errors; converged steps with contacts have NaturalMapError <= relTol.
/// Returns the number of converged steps with contacts.
std::size_t expectAccurateSteps(const Log& log, std::size_t fromRow = 0) {
  const std::size_t nm = log.column("NaturalMapError");
  const std::size_t kz = log.column("KoziaraError");
  const std::size_t conv = log.column("Converged");
  const std::size_t contacts = log.column("nContacts");
  std::size_t accurate = 0;
  for (std::size_t k = fromRow; k < log.rows.size(); ++k) {
    const auto& row = log.rows[k];
    EXPECT_EQ(row.size(), log.names.size());
    const double e = std::stod(row[nm]);
    const double kzError = std::stod(row[kz]);
    EXPECT_TRUE(std::isfinite(e) && std::isfinite(kzError)) << "row " << k;
    EXPECT_GE(e, 0.0);
    EXPECT_GE(kzError, 0.0);
    if (row[conv] == "1" && std::stoul(row[contacts]) > 0) {
      EXPECT_LE(e, kRelTol) << "row " << k;
      ++accurate;
    }
  }
  return accurate;
}

std::string sim(const fs::path& sceneFile, const fs::path& out) {
  return std::string(GRAIN_SIM_EXE) + " -s " + sceneFile.string() + " -g " + out.string();
}

class MeasuredRun : public ::testing::TestWithParam<const char*> {};

TEST_P(MeasuredRun, SimDataHasTheErrorsOfEveryStep) {
  const std::string method = GetParam();
  const fs::path dir = makeTempDir("measured_run_" + method);
  writeText(dir / "scene.xml", scene(method, 0.3));
  const CommandResult r = runCommand(sim(dir / "scene.xml", dir / "out"));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("solver     " + method), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("convergence NaturalMap"), std::string::npos) << r.output;
  const bool local = method != "SORContact";
  EXPECT_EQ(r.output.find("natural-map error <= 1e-06") != std::string::npos, local) << r.output;
  const Log log = readLog(dir / "out" / "SimFiles" / "SimDataRECORD_0" / "SimData.dat");
  ASSERT_EQ(log.rows.size(), 30u);
  EXPECT_GT(expectAccurateSteps(log), 20u);
}

INSTANTIATE_TEST_SUITE_P(VelocityAndLocalSolvers, MeasuredRun,
                         ::testing::Values("SORContact", "DelassusSOR", "APGD"));

// A run log of the format before the error columns: a restart upgrades it (old steps get nan)
// and appends the new steps with their errors. The local solver's warm start is restored, so
// the continued run writes the same states as an uninterrupted one.
TEST(MeasuredRun, RestartUpgradesAnOlderRunLog) {
  const fs::path dir = makeTempDir("measured_run_restart");
  writeText(dir / "part.xml", scene("DelassusSOR", 0.23));
  writeText(dir / "full.xml", scene("DelassusSOR", 0.5));
  ASSERT_EQ(runCommand(sim(dir / "part.xml", dir / "part")).exitCode, 0);
  ASSERT_EQ(runCommand(sim(dir / "full.xml", dir / "full")).exitCode, 0);
  const fs::path record = dir / "part" / "SimFiles" / "SimDataRECORD_0";
  // Drop the two error columns and the later ones (Forces stage time, traffic, fallbacks), as an
  // older grain wrote the file.
  {
    std::ifstream in(record / "SimData.dat");
    std::ostringstream old;
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("# grain ", 0) == 0) {
        continue;  // logs of that time had no version line
      }
      for (int k = 0; k < 6; ++k) {
        line.resize(line.rfind('\t'));
      }
      old << line << '\n';
    }
    in.close();
    writeText(record / "SimData.dat", old.str());
  }
  ASSERT_EQ(readLog(record / "SimData.dat").names.size(), 19u);
  const CommandResult r = runCommand(std::string(GRAIN_SIM_EXE) + " --restart " + record.string() +
                                     " --set 'SceneSettings/TimeStepperSettings/@endTime=0.5'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const Log log = readLog(record / "SimData.dat");
  ASSERT_EQ(log.names.size(), 25u);
  ASSERT_EQ(log.rows.size(), 50u);
  const std::size_t step = log.column("Step");
  const std::size_t nm = log.column("NaturalMapError");
  const std::size_t kz = log.column("KoziaraError");
  // The run restarts from the state of step 20 (every 5th step is recorded).
  for (std::size_t k = 0; k < 50; ++k) {
    EXPECT_EQ(log.rows[k][step], std::to_string(k + 1));
    if (k < 20) {
      EXPECT_EQ(log.rows[k][nm], "nan");
      EXPECT_EQ(log.rows[k][kz], "nan");
    }
  }
  EXPECT_GT(expectAccurateSteps(log, 20), 20u);
  EXPECT_EQ(r.output.find("no warm-start data"), std::string::npos) << r.output;
  const std::string full = readText(dir / "full" / "SimFiles" / "SimDataRECORD_0" / "SimState.sim");
  EXPECT_FALSE(full.empty());
  EXPECT_TRUE(readText(record / "SimState.sim") == full) << "restarted run differs";
}

}  // namespace
}  // namespace grain
