// SPDX-License-Identifier: MIT
// grain-sim-mpi against grain-sim: the same scene on 1-4 processes gives the serial states (bit for
// bit on one process, to solver tolerance on more), every state holds every body exactly once,
// restarts work across process counts (also from a serial run), and faults stop every process:
// bad input (exit 2), an error on one process (exit 1, with its message), SIGTERM to one process
// (exit 3, every complete state readable).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/io/sim_file.hpp>

#include "../e2e/e2e_util.hpp"
#ifdef GRAIN_TEST_WITH_FCLIB
#include <grain/fclib/fclib_io.hpp>
#endif
#include "mpi_test_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;
using namespace testing;

/// A pile scene up to its beads: recorded every `everyXStep` steps, dt = 1 ms, SORContact with the
/// iteration limits and warm start `solverLimits`, mu = 0.3, gravity, `mpiSettings`; then the floor
/// and four walls of a box `width` wide in x and `depth` in y (0: `width`; groups 1-5).
std::string pileHead(double endTime, int everyXStep, const std::string& solverLimits,
                     const std::string& mpiSettings, double width, double depth = 0.0) {
  std::ostringstream s;
  auto wall = [&](int id, const char* normal, const std::string& trans) {
    s << R"(    <RigidBodies name="wall)" << id << R"(" instances="1" groupId=")" << id << R"(">
      <Geometry><Halfspace distribute="uniform" normal=")"
      << normal << R"("/></Geometry>
      <DynamicProperties><DynamicState type="static"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel"><InitialPosition distribute="transforms"><Pos><Trafo trans=")"
      << trans << R"(" axis="1 0 0" deg="0"/></Pos></InitialPosition></InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)";
  };
  s << R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="everyXTimeStep" everyXStep=")"
    << everyXStep << R"("/>
    <TimeStepperSettings deltaT="0.001" endTime=")"
    << endTime << R"(">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" convergenceMethod="InVelocity" )"
    << solverLimits << R"(/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces><ForceField applyTo="all" type="gravity" value="9.81" direction="0 0 -1"/></ExternalForces>
)" << mpiSettings
    << R"(  </SceneSettings>
  <SceneObjects>
)";
  std::ostringstream w;
  w << width;
  std::ostringstream d;
  d << (depth > 0.0 ? depth : width);
  wall(1, "0 0 1", "0 0 0");
  wall(2, "1 0 0", "0 0 0");
  wall(3, "-1 0 0", w.str() + " 0 0");
  wall(4, "0 1 0", "0 0 0");
  wall(5, "0 -1 0", "0 " + d.str() + " 0");
  return s.str();
}

/// MPISettings of a static grid of the given `dimension` ("X Y Z"), fixed whatever the bodies'
/// extent, and the thesis' split settings.
std::string staticGrid(const std::string& dimension) {
  return R"(    <MPISettings>
      <ProcessTopology mode="static">
        <Topology type="grid" buildMode="AABB" dimension=")" +
         dimension + R"(" matchProcessDimToExtent="false"
            minCellSize="0.001"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
)";
}

/// A box (floor and four walls) with `nx` x `ny` x `nz` spheres poured into it; tight solver.
std::string pileScene(
    double endTime, int nz = 4, const std::string& extraBody = "",
    const std::string& mpiSettings = "",
    const std::string& beadGeometry = R"(<Sphere distribute="uniform" radius="0.01"/>)") {
  std::ostringstream s;
  s << pileHead(
      endTime, 10,
      R"(minIter="1" maxIter="20000" absTol="1e-14" relTol="1e-12" usePercussionCache="false")",
      mpiSettings, 0.1);
  for (int layer = 0; layer < nz; ++layer) {
    s << R"(    <RigidBodies name="beads)" << layer << R"(" instances="16" groupId=")" << 10 + layer
      << R"(">
      <Geometry>)"
      << beadGeometry << R"(</Geometry>
      <DynamicProperties><DynamicState type="simulated"/><Mass distribute="uniform" value="0.004"/>
        <InertiaTensor type="homogen"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="4" gridSizeY="4" distance="0.025"
              translation=")"
      << "0.05 0.05 " << 0.011 + 0.022 * layer << R"(" jitter="true" delta="0.002" seed=")"
      << layer + 1 << R"("/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)";
  }
  s << extraBody << R"(  </SceneObjects>
</DynamicsSystem>
)";
  return s.str();
}

struct Difference {
  double position = 0.0;
  double velocity = 0.0;
  bool sameIds = true;
};

/// grain-sim on `scene`, writing to `out`, with `extra` arguments appended.
CommandResult runSerial(const fs::path& scene, const fs::path& out, const std::string& extra = "") {
  return runCommand(std::string(GRAIN_SIM_EXE) + " -s " + scene.string() + " -g " + out.string() +
                    extra);
}

/// grain-sim-mpi on `np` processes (mpirun()) on `scene`, writing to `out`, with `extra` appended.
CommandResult runMpi(int np, const fs::path& scene, const fs::path& out,
                     const std::string& extra = "") {
  return runCommand(mpirun(np) + " -s " + scene.string() + " -g " + out.string() + extra);
}

Difference compare(const io::SimState& a, const io::SimState& b) {
  Difference d;
  d.sameIds = a.bodies.size() == b.bodies.size();
  for (const io::SimBodyState& x : a.bodies) {
    const io::SimBodyState* y = b.find(x.id);
    if (y == nullptr) {
      d.sameIds = false;
      continue;
    }
    d.position = std::max(d.position, (x.position - y->position).norm());
    d.velocity = std::max(d.velocity, (x.velocity - y->velocity).norm());
  }
  return d;
}

/// Bulk figures of a pile state: mean and 90th-percentile height (m) and kinetic energy (J) of
/// the 0.004 kg, 0.01 m beads of pileScene.
struct Bulk {
  double meanHeight = 0.0;
  double height90 = 0.0;
  double kineticEnergy = 0.0;
};

Bulk bulkOf(const io::SimState& state) {
  Bulk b;
  std::vector<double> z;
  const double m = 0.004;
  const double inertia = 0.4 * m * 0.01 * 0.01;
  for (const io::SimBodyState& x : state.bodies) {
    z.push_back(x.position.z());
    b.meanHeight += x.position.z();
    b.kineticEnergy +=
        0.5 * m * x.velocity.squaredNorm() + 0.5 * inertia * x.omegaBody.squaredNorm();
  }
  b.meanHeight /= static_cast<double>(z.size());
  std::sort(z.begin(), z.end());
  b.height90 = z[static_cast<std::size_t>(0.9 * static_cast<double>(z.size() - 1))];
  return b;
}

std::vector<Bulk> bulkPerState(const fs::path& sim) {
  io::SimFileReader reader;
  reader.open(sim);
  std::vector<Bulk> out;
  for (std::size_t k = 0; k < reader.stateCount(); ++k) {
    out.push_back(bulkOf(reader.readState(k)));
  }
  return out;
}

/// The nContacts column of a SimData.dat, one entry per step.
/// The step profile of a run's summary (the line of the maximum or of the mean over processes):
/// seconds per step of the step and its parts.
struct Profile {
  bool found = false;
  double step = 0, compute = 0, exchange = 0, collectives = 0, rebuild = 0;
};

Profile profileOf(const std::string& output, const std::string& over) {
  Profile p;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("profile ", 0) == 0 &&
        line.find("(" + over + " over processes)") != std::string::npos) {
      std::istringstream in(line);
      std::string word;
      std::map<std::string, double> value;
      std::string key;
      while (in >> word) {
        if (!key.empty()) {
          value[key] = std::atof(word.c_str());
          key.clear();
        }
        if (word == "s/step" || word == "compute" || word == "exchange" || word == "collectives" ||
            word == "rebuild") {
          key = word;
        }
      }
      p = {true,
           value["s/step"],
           value["compute"],
           value["exchange"],
           value["collectives"],
           value["rebuild"]};
    }
  }
  return p;
}

/// The profile lines are there and consistent: every part at least 0, the parts add up to the
/// step (to the printed digits), the mean at most the maximum; time in neighbour exchanges with
/// more than one process, in rebuilds when the decomposition was rebuilt.
void checkProfile(const std::string& output, int processes, bool rebuilds) {
  const Profile max = profileOf(output, "max");
  const Profile mean = profileOf(output, "mean");
  ASSERT_TRUE(max.found && mean.found) << output;
  for (const Profile& p : {max, mean}) {
    EXPECT_GT(p.step, 0.0);
    EXPECT_GE(p.compute, 0.0);
    EXPECT_GE(p.exchange, 0.0);
    EXPECT_GE(p.collectives, 0.0);
    EXPECT_GE(p.rebuild, 0.0);
  }
  EXPECT_NEAR(mean.compute + mean.exchange + mean.collectives + mean.rebuild, mean.step, 3e-6);
  EXPECT_LE(mean.step, max.step + 1e-6);
  EXPECT_LE(mean.compute, max.compute + 1e-6);
  if (processes > 1) {
    EXPECT_GT(max.exchange, 0.0) << output;
  }
  if (rebuilds) {
    EXPECT_GT(max.rebuild, 0.0) << output;
  }
  // The processes that computed most and least: valid ranks, with the maximum's and at most the
  // mean's compute (to the printed digits).
  {
    const std::size_t at = output.find("\nprofile    compute most on process ");
    ASSERT_NE(at, std::string::npos) << output;
    int most = -1, least = -1;
    double mostSeconds = -1, leastSeconds = -1;
    ASSERT_EQ(std::sscanf(output.c_str() + at + 1,
                          "profile compute most on process %d (%lf s/step), least on process %d "
                          "(%lf s/step)",
                          &most, &mostSeconds, &least, &leastSeconds),
              4)
        << output;
    EXPECT_GE(most, 0);
    EXPECT_LT(most, processes);
    EXPECT_GE(least, 0);
    EXPECT_LT(least, processes);
    EXPECT_NEAR(mostSeconds, max.compute, 1e-6) << output;
    EXPECT_LE(leastSeconds, mean.compute + 1e-6) << output;
    if (processes == 1) {
      EXPECT_EQ(most, 0);
      EXPECT_EQ(least, 0);
    }
    // With more than one step, the shortest and longest step bracket every process's mean.
    if (output.find("(MPI_Wtime, steps ") != std::string::npos) {
      const std::size_t from = output.find("; steps from ", at);
      ASSERT_NE(from, std::string::npos) << output;
      double shortest = -1, longest = -1;
      ASSERT_EQ(
          std::sscanf(output.c_str() + from, "; steps from %lf to %lf s", &shortest, &longest), 2)
          << output;
      EXPECT_GT(shortest, 0.0) << output;
      EXPECT_LE(shortest, mean.step + 1e-6) << output;
      EXPECT_GE(longest, max.step - 1e-6) << output;
    }
  }
  // With more than one step, the traffic line: per step the neighbour messages and bytes of all
  // processes and the reductions of the busiest one (at least the coupling flag before the solve
  // and the step's statistics).
  if (output.find("(MPI_Wtime, steps ") != std::string::npos) {
    const std::size_t at = output.find("\ntraffic    per step: messages ");
    ASSERT_NE(at, std::string::npos) << output;
    double messages = -1, bytes = -1, reductions = -1;
    ASSERT_EQ(std::sscanf(output.c_str() + at + 1,
                          "traffic per step: messages %lf bytes %lf (sum over processes) "
                          "reductions %lf",
                          &messages, &bytes, &reductions),
              3)
        << output;
    if (processes > 1) {
      EXPECT_GT(messages, 0.0) << output;
      EXPECT_GT(bytes, messages) << output;
      EXPECT_GE(reductions, 2.0) << output;
    } else {
      EXPECT_EQ(messages, 0.0) << output;
      EXPECT_EQ(reductions, 0.0) << output;
    }
  }
}

/// The column `name` of a tab-separated log whose header line starts with `header`, one value per
/// data line.
std::vector<std::string> logColumn(const fs::path& log, const std::string& header,
                                   const std::string& name) {
  std::istringstream in(readText(log));
  std::vector<std::string> out;
  std::size_t column = std::string::npos;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) {
      cells.push_back(cell);
    }
    if (line.rfind(header, 0) == 0) {
      column =
          static_cast<std::size_t>(std::find(cells.begin(), cells.end(), name) - cells.begin());
    } else if (!line.empty() && line[0] != '#' && column < cells.size()) {
      out.push_back(cells[column]);
    }
  }
  EXPECT_FALSE(out.empty()) << log;
  return out;
}

std::vector<std::string> contactsPerStep(const fs::path& log) {
  return logColumn(log, "# WallTime", "nContacts");
}

/// The Neighbours column of every process's log ProcessLog_<rank>.dat in `dir` (-l), per process
/// one value per step.
std::vector<std::vector<int>> neighboursPerProcess(const fs::path& dir, int processes) {
  std::vector<std::vector<int>> out;
  for (int rank = 0; rank < processes; ++rank) {
    std::vector<int> values;
    for (const std::string& cell :
         logColumn(dir / ("ProcessLog_" + std::to_string(rank) + ".dat"), "# Step", "Neighbours")) {
      values.push_back(std::atoi(cell.c_str()));
    }
    out.push_back(std::move(values));
  }
  return out;
}

class GrainSimMpi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { allowMpiRunAsRoot(); }
};

/// MPISettings of a kd-tree (AABB build) rebuilt every `steps` steps, the thesis' ratios.
std::string kdTreeRebuiltEvery(int steps) {
  return R"(    <MPISettings>
      <ProcessTopology mode="dynamic" policy="alwaysRebuild" policyCheckEveryXTimeStep=")" +
         std::to_string(steps) + R"(">
        <Topology type="kdTree" buildMode="AABB" minCellSize="0.001"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
)";
}

/// The mean of coordinate `axis` (0 x, 2 z) of a state's bodies.
double meanCoordinate(const io::SimState& state, int axis) {
  double mean = 0.0;
  for (const io::SimBodyState& b : state.bodies) {
    mean += b.position[axis] / static_cast<double>(state.bodies.size());
  }
  return mean;
}

/// The GlobalInitialCondition element that starts a scene from the last state of `sim`, its
/// time continued.
std::string continuedFrom(const fs::path& sim) {
  return R"(    <GlobalInitialCondition file=")" + sim.string() +
         R"(" whichState="end" useTimeToContinue="true"/>
)";
}

/// Names a process-count parameter "npN".
std::string processCountName(const ::testing::TestParamInfo<int>& p) {
  return "np" + std::to_string(p.param);
}

/// A pile of `nx` x `ny` x `layers` beads (r = 0.01 m, 0.004 kg, 0.025 m apart, jittered with
/// `seed`) poured into a box 0.03 m wide per bead along x and y, with `mpiSettings`; solver to 1e-6
/// relative in at most 300 sweeps, with warm start.
std::string beadBox(double endTime, int nx, int ny, int layers, const std::string& mpiSettings,
                    int seed) {
  const double width = 0.03 * nx;
  const double depth = 0.03 * ny;
  std::ostringstream s;
  s << pileHead(
      endTime, 50,
      R"(minIter="1" maxIter="300" absTol="1e-9" relTol="1e-6" usePercussionCache="true")",
      mpiSettings, width, depth);
  s << R"(    <RigidBodies name="beads" instances=")" << nx * ny * layers << R"(" groupId="10">
      <Geometry><Sphere distribute="uniform" radius="0.01"/></Geometry>
      <DynamicProperties><DynamicState type="simulated"/><Mass distribute="uniform" value="0.004"/>
        <InertiaTensor type="homogen"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX=")"
    << nx << R"(" gridSizeY=")" << ny << R"(" distance="0.025"
              translation=")"
    << 0.5 * width << " " << 0.5 * depth << R"( 0.012" jitter="true" delta="0.002" seed=")" << seed
    << R"("/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
  </SceneObjects>
</DynamicsSystem>
)";
  return s.str();
}

/// beadBox with `side` beads along x and y (seed 3).
std::string widePile(double endTime, int side, int layers, const std::string& mpiSettings) {
  return beadBox(endTime, side, side, layers, mpiSettings, 3);
}

// A converged pile (relTol 1e-12) on 1-4 processes, with the first decomposition (a kd-tree over
// the initial centres), with the scene's kd-tree (Zoltan RCB, built once from the bodies) and with
// a fixed grid of P layers along z: the serial states, bit for bit on 1 process. The neighbours
// per process: in each process's log (-l) one figure for the whole run (static decompositions),
// whose maximum and mean over the processes the run summary gives; on 2 processes 1 each; with
// the grid's layers 1 at the ends and 2 between (on 4 processes max 2, mean 1.5).
TEST_F(GrainSimMpi, EveryProcessCountGivesTheSerialStates) {
  const fs::path dir = makeTempDir("mpi_equivalence");
  const std::string kdTree = R"(    <MPISettings>
      <ProcessTopology mode="static">
        <Topology type="kdTree" buildMode="AABB" minCellSize="0.001"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
)";
  writeText(dir / "pile.xml", pileScene(0.1));
  writeText(dir / "kd.xml", pileScene(0.1, 4, "", kdTree));
  for (int np = 1; np <= 4; ++np) {
    const std::string layers = staticGrid("1 1 " + std::to_string(np));
    writeText(dir / ("grid" + std::to_string(np) + ".xml"), pileScene(0.1, 4, "", layers));
  }
  const CommandResult serial = runSerial(dir / "pile.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 64, 11);
  for (const std::string scene : {"pile", "kd", "grid"}) {
    for (int np = 1; np <= 4; ++np) {
      SCOPED_TRACE(scene + ", " + std::to_string(np) + " processes");
      const fs::path out = dir / (scene + std::to_string(np));
      const std::string file = scene == "grid" ? scene + std::to_string(np) : scene;
      const CommandResult r =
          runMpi(np, dir / (file + ".xml"), out, " -l " + (out / "logs").string());
      ASSERT_EQ(r.exitCode, 0) << r.output;
      if (scene == "kd" && np > 1) {
        EXPECT_NE(r.output.find("kd-tree (Zoltan RCB)"), std::string::npos) << r.output;
      }
      // The neighbours per process (they bound its messages per exchange): each process's log
      // has one figure for the whole run; the summary their maximum and mean.
      const std::vector<std::vector<int>> logged = neighboursPerProcess(out / "logs", np);
      std::vector<int> each;
      for (const std::vector<int>& steps : logged) {
        ASSERT_FALSE(steps.empty());
        EXPECT_EQ(std::count(steps.begin(), steps.end(), steps.front()),
                  static_cast<std::ptrdiff_t>(steps.size()));
        each.push_back(steps.front());
      }
      std::sort(each.begin(), each.end());
      double mean = 0.0;
      for (const int n : each) {
        mean += n / static_cast<double>(np);
      }
      char expected[128];
      std::snprintf(expected, sizeof expected,
                    "domains    neighbours per process: max %d during the run, now max %d and "
                    "mean %.1f\n",
                    each.back(), each.back(), mean);
      EXPECT_NE(r.output.find(expected), std::string::npos) << expected << r.output;
      if (np == 1) {
        EXPECT_EQ(each, std::vector<int>{0});
      } else if (np == 2) {
        EXPECT_EQ(each, (std::vector<int>{1, 1}));
      } else if (scene == "grid") {
        // Layers along z: 1 neighbour at the ends, 2 between.
        std::vector<int> layered(static_cast<std::size_t>(np), 2);
        layered[0] = layered[1] = 1;
        EXPECT_EQ(each, layered);
      } else {
        // The kd-tree's domains of the square pile all touch (on 4 processes, 2 x 2 columns).
        EXPECT_EQ(each, std::vector<int>(static_cast<std::size_t>(np), np - 1));
      }
      checkProfile(r.output, np, false);
      const io::SimState last = checkStates(record(out) / "SimState.sim", 64, 11);
      const Difference d = compare(reference, last);
      EXPECT_TRUE(d.sameIds);
      if (np == 1) {
        EXPECT_EQ(d.position, 0.0);
        EXPECT_EQ(d.velocity, 0.0);
      } else {
        EXPECT_LT(d.position, 1e-9);
        EXPECT_LT(d.velocity, 1e-7);
      }
      // The run log has the statistics of all processes: the serial contact count in every
      // step.
      EXPECT_EQ(contactsPerStep(record(out) / "SimData.dat"),
                contactsPerStep(record(dir / "serial") / "SimData.dat"));
    }
  }
}

// Rolling resistance (muRolling, SORContact's pass after each sweep) on split bodies: the
// converged pile with mu_r = 0.2 gives the serial states on 2 and 3 processes, and the serial
// states with mu_r differ from those without it (so the comparison sees the rolling torques).
TEST_F(GrainSimMpi, RollingResistanceGivesTheSerialStates) {
  const fs::path dir = makeTempDir("mpi_rolling");
  std::string scene = pileScene(0.1);
  writeText(dir / "plain.xml", scene);
  const std::string law = R"(mu="0.3" epsilonN)";
  const std::size_t at = scene.find(law);
  ASSERT_NE(at, std::string::npos);
  scene.replace(at, law.size(), R"(mu="0.3" muRolling="0.2" epsilonN)");
  writeText(dir / "rolling.xml", scene);
  for (const char* name : {"plain", "rolling"}) {
    const CommandResult r =
        runSerial(dir / (std::string(name) + ".xml"), dir / (std::string("serial_") + name));
    ASSERT_EQ(r.exitCode, 0) << r.output;
  }
  const io::SimState plain = checkStates(record(dir / "serial_plain") / "SimState.sim", 64, 11);
  const io::SimState reference =
      checkStates(record(dir / "serial_rolling") / "SimState.sim", 64, 11);
  EXPECT_GT(compare(plain, reference).position, 1e-6);
  for (int np = 2; np <= 3; ++np) {
    SCOPED_TRACE(std::to_string(np) + " processes");
    const fs::path out = dir / ("rolling" + std::to_string(np));
    const CommandResult r = runMpi(np, dir / "rolling.xml", out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const Difference d = compare(reference, checkStates(record(out) / "SimState.sim", 64, 11));
    EXPECT_TRUE(d.sameIds);
    EXPECT_LT(d.position, 1e-9);
    EXPECT_LT(d.velocity, 1e-7);
  }
}

/// `text` with `from` replaced by `to` (once; `from` must occur).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) {
    text.replace(at, from.size(), to);
  }
  return text;
}

/// The pile of pileScene() solved by `method` (its attributes as written in the scene) at the
/// natural-map tolerance 1e-8, warm-started.
std::string pileSolvedBy(double endTime, const std::string& method) {
  std::string text = replaced(pileScene(endTime), R"(method="SORContact")", method);
  text = replaced(text, R"(convergenceMethod="InVelocity")", R"(convergenceMethod="NaturalMap")");
  text = replaced(text, R"(relTol="1e-12")", R"(relTol="1e-8")");
  return replaced(text, R"(usePercussionCache="false")", R"(usePercussionCache="true")");
}

/// `method` (the scene's attributes) on 1-3 processes against grain-sim on the falling pile of
/// pileSolvedBy() until `endTime` (s; a state every 10 steps, `states` in all, at least
/// `minContacts` contacts in the last step): bit for bit on 1 process and on more within the bound
/// of the tolerance (1e-8: tests/mpi/distributed_apgd_test.cpp derives about 1e-6 m/s per step
/// from it). `tag` names the folders and the printed line. `closing`: a text that the closing
/// line of every run must hold ("" for none).
void checkGivesTheSerialStates(const std::string& tag, const std::string& method, double endTime,
                               std::size_t states, int minContacts,
                               const std::string& closing = "") {
  const fs::path dir = makeTempDir("mpi_" + tag);
  writeText(dir / "scene.xml", pileSolvedBy(endTime, method));
  const CommandResult serial = runSerial(dir / "scene.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  EXPECT_NE(serial.output.find(closing), std::string::npos) << serial.output;
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 64, states);
  // The pile lands within the run: the solver has contacts to solve.
  const std::vector<std::string> contacts = contactsPerStep(record(dir / "serial") / "SimData.dat");
  ASSERT_FALSE(contacts.empty());
  EXPECT_GT(std::stoi(contacts.back()), minContacts);
  for (int np = 1; np <= 3; ++np) {
    SCOPED_TRACE(std::to_string(np) + " processes");
    const fs::path out = dir / (tag + std::to_string(np));
    const CommandResult r = runMpi(np, dir / "scene.xml", out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find(closing), std::string::npos) << r.output;
    const Difference d = compare(reference, checkStates(record(out) / "SimState.sim", 64, states));
    EXPECT_TRUE(d.sameIds);
    if (np == 1) {
      EXPECT_EQ(d.position, 0.0);
      EXPECT_EQ(d.velocity, 0.0);
    } else {
      std::printf("matrix-free %s, %d processes: max |dr| %.3g m, max |dv| %.3g m/s\n", tag.c_str(),
                  np, d.position, d.velocity);
      EXPECT_LT(d.position, 1e-6);
      EXPECT_LT(d.velocity, 5e-5);
    }
    EXPECT_EQ(contactsPerStep(record(out) / "SimData.dat"),
              contactsPerStep(record(dir / "serial") / "SimData.dat"));
  }
}

// Matrix-free APGD, a local solver that runs distributed (every process solves its contacts'
// share of the serial iteration, docs/solvers.md).
TEST_F(GrainSimMpi, MatrixFreeApgdGivesTheSerialStates) {
  checkGivesTheSerialStates("APGD", R"(method="APGD" matrixFree="true")", 0.05, 6, 50);
}

// Matrix-free PQN likewise (its Newton steps are the serial ones; a step whose Newton steps fail
// would fall back to the velocity SOR with mass splitting on every process): 30 steps, every one
// converged without fallback on every process count (the closing line names no fallback; before
// PQN's Newton variable was scaled, 7 of them fell back after 1000 Newton steps). The fallback
// itself: mpi.distributed_pqn (forced), the closing line's count: RunSummary.CountsThePqnFallbacks.
TEST_F(GrainSimMpi, MatrixFreePqnGivesTheSerialStates) {
  checkGivesTheSerialStates("PQN", R"(method="PQN" matrixFree="true")", 0.03, 4, 25,
                            "finished 30 steps (wall time");
}

// Matrix-free IPM likewise (the convex relaxation, its Newton systems by PCG with every sum
// global): grain-sim-mpi accepts it on several processes and gives grain-sim's states.
TEST_F(GrainSimMpi, MatrixFreeIpmGivesTheSerialStates) {
  checkGivesTheSerialStates("IPM", R"(method="IPM" matrixFree="true")", 0.03, 4, 25);
}

// With the additive Schwarz preconditioner: a body's subdomain holds each process's contacts on
// it only, so the PCG iterations depend on the decomposition, the states within the tolerance's
// bound do not; on 1 process the serial bits.
TEST_F(GrainSimMpi, MatrixFreeIpmAdditiveSchwarzGivesTheSerialStates) {
  checkGivesTheSerialStates("IPMSchwarz",
                            R"(method="IPM" matrixFree="true" ipmPreconditioner="additiveSchwarz")",
                            0.03, 4, 25);
}

// The local solvers that do not run distributed (NSN, the Delassus prox methods, APGD, PQN and
// IPM on the assembled matrix) are refused on more than one process before anything is written,
// naming the method and what runs instead; on one process they run.
TEST_F(GrainSimMpi, SerialLocalSolversAreRefusedBeforeWriting) {
  const fs::path dir = makeTempDir("mpi_serial_solvers");
  for (const char* method : {R"(method="PQN")", R"(method="APGD")", R"(method="IPM")",
                             R"(method="DelassusSOR")", R"(method="NSN")"}) {
    SCOPED_TRACE(method);
    writeText(dir / "scene.xml", pileSolvedBy(0.002, method));
    const fs::path out = dir / "out";
    const CommandResult r = runMpi(2, dir / "scene.xml", out);
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("scene.xml:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(std::string(method) + " "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(R"(is serial: with more than one process use one of APGD, PQN and )"
                            R"(IPM with matrixFree="true")"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(out / "SimFiles"));
  }
  const CommandResult one = runMpi(1, dir / "scene.xml", dir / "one");
  EXPECT_EQ(one.exitCode, 0) << one.output;
}

// A pile settling for 0.3 s with a solver stopped at relTol 1e-6 (as production runs are): the
// trajectories part ways between process counts, as they would between two serial solvers, but
// the bulk figures must not depend on the count or the decomposition: mean and 90th-percentile
// height and the kinetic energy as the pile comes to rest, on 2-4 processes (grid) and 2 and 4
// (kd-tree); 1 process gives the serial bits (EveryProcessCountGivesTheSerialStates). The kd-tree
// uses GRSF's default prediction (5 points 0.1 s apart), whose points collect on the floor as
// the pile settles: a cut among them would make a cell thinner than a bead, and the build falls
// back rather than refusing to go on.
TEST_F(GrainSimMpi, SettlingPileGivesTheSerialBulkFiguresOnEveryCount) {
  const fs::path dir = makeTempDir("mpi_bulk");
  const std::string kdTree = R"(    <MPISettings>
      <ProcessTopology mode="dynamic" policy="alwaysRebuild" policyCheckEveryXTimeStep="50">
        <Topology type="kdTree" buildMode="AABB" minCellSize="0.001"/>
        <MassPointPrediction nPoints="5" deltaT="0.1"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
)";
  writeText(dir / "grid.xml", pileScene(0.3));
  writeText(dir / "kd.xml", pileScene(0.3, 4, "", kdTree));
  const std::string loose =
      " --set SceneSettings/TimeStepperSettings/InclusionSolverSettings/@relTol=1e-6"
      " --set SceneSettings/TimeStepperSettings/InclusionSolverSettings/@absTol=1e-9"
      " --set SceneSettings/TimeStepperSettings/InclusionSolverSettings/@maxIter=2000";
  const CommandResult serial = runSerial(dir / "grid.xml", dir / "serial", loose);
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const std::vector<Bulk> reference = bulkPerState(record(dir / "serial") / "SimState.sim");
  ASSERT_EQ(reference.size(), 31u);
  // The pile falls, then rests: the energy at 0.3 s is a small part of its peak.
  double peak = 0.0;
  for (const Bulk& b : reference) {
    peak = std::max(peak, b.kineticEnergy);
  }
  ASSERT_LT(reference.back().kineticEnergy, 0.1 * peak);
  for (const char* scene : {"grid", "kd"}) {
    for (int np = 2; np <= 4; ++np) {
      if (std::string(scene) == "kd" && np == 3) {
        continue;  // 2 and 4 domains are enough for the kd-tree; keeps the test short
      }
      SCOPED_TRACE(std::string(scene) + ", " + std::to_string(np) + " processes");
      const fs::path out = dir / (std::string(scene) + std::to_string(np));
      const CommandResult r = runMpi(np, dir / (std::string(scene) + ".xml"), out, loose);
      ASSERT_EQ(r.exitCode, 0) << r.output;
      checkStates(record(out) / "SimState.sim", 64, 31);
      const std::vector<Bulk> bulk = bulkPerState(record(out) / "SimState.sim");
      ASSERT_EQ(bulk.size(), reference.size());
      for (std::size_t k = 0; k < bulk.size(); ++k) {
        EXPECT_NEAR(bulk[k].meanHeight, reference[k].meanHeight, 1e-3) << "state " << k;
        EXPECT_NEAR(bulk[k].height90, reference[k].height90, 2e-3) << "state " << k;
        EXPECT_NEAR(bulk[k].kineticEnergy, reference[k].kineticEnergy, 0.05 * peak)
            << "state " << k;
      }
      EXPECT_LT(bulk.back().kineticEnergy, 0.1 * peak);
    }
  }
}

// Hybrid runs: 2 processes x 2 threads (4 threads on this machine's 2 cores, oversubscribed; idle
// threads sleep: OMP_WAIT_POLICY=passive). Each process sweeps its contacts colour by colour on
// its threads (docs/architecture.md, "Threads inside a process"), which changes the order of the
// updates, so the trajectories part ways with the serial run's as between process counts; the
// bulk figures agree to the tolerances of SettlingPileGivesTheSerialBulkFiguresOnEveryCount, and
// two hybrid runs give the same states bit for bit.
TEST_F(GrainSimMpi, HybridProcessesAndThreadsGiveTheSerialBulkFigures) {
  const fs::path dir = makeTempDir("mpi_hybrid");
  writeText(dir / "grid.xml", pileScene(0.3));
  const std::string loose =
      " --set SceneSettings/TimeStepperSettings/InclusionSolverSettings/@relTol=1e-6"
      " --set SceneSettings/TimeStepperSettings/InclusionSolverSettings/@absTol=1e-9"
      " --set SceneSettings/TimeStepperSettings/InclusionSolverSettings/@maxIter=2000";
  const CommandResult serial = runSerial(dir / "grid.xml", dir / "serial", loose);
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const std::vector<Bulk> reference = bulkPerState(record(dir / "serial") / "SimState.sim");
  ASSERT_EQ(reference.size(), 31u);
  double peak = 0.0;
  for (const Bulk& b : reference) {
    peak = std::max(peak, b.kineticEnergy);
  }
  std::vector<io::SimState> last;
  for (const char* name : {"hybrid_a", "hybrid_b"}) {
    const fs::path out = dir / name;
    const CommandResult r =
        runCommand("OMP_WAIT_POLICY=passive " + mpirun(2) + " -s " + (dir / "grid.xml").string() +
                   " -g " + out.string() + loose + " --threads 2");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    last.push_back(checkStates(record(out) / "SimState.sim", 64, 31));
    const std::vector<Bulk> bulk = bulkPerState(record(out) / "SimState.sim");
    ASSERT_EQ(bulk.size(), reference.size());
    for (std::size_t k = 0; k < bulk.size(); ++k) {
      EXPECT_NEAR(bulk[k].meanHeight, reference[k].meanHeight, 1e-3) << "state " << k;
      EXPECT_NEAR(bulk[k].height90, reference[k].height90, 2e-3) << "state " << k;
      EXPECT_NEAR(bulk[k].kineticEnergy, reference[k].kineticEnergy, 0.05 * peak) << "state " << k;
    }
    EXPECT_LT(bulk.back().kineticEnergy, 0.1 * peak);
  }
  // The same states bit for bit (bodies in id order in both files).
  ASSERT_EQ(last[0].bodies.size(), last[1].bodies.size());
  auto byId = [](std::vector<io::SimBodyState> b) {
    std::sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.id < y.id; });
    return b;
  };
  const std::vector<io::SimBodyState> a = byId(last[0].bodies);
  const std::vector<io::SimBodyState> b = byId(last[1].bodies);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_TRUE(a[i].position == b[i].position) << "body " << a[i].id;
    EXPECT_TRUE(a[i].velocity == b[i].velocity) << "body " << a[i].id;
    EXPECT_TRUE(a[i].omegaBody == b[i].omegaBody) << "body " << a[i].id;
  }
}

// Beads with radii of their own (one shape per body): every process builds a share of them and
// the shapes travel with the bodies by value, through the first migration and every kd-tree
// rebuild. The serial states to solver tolerance on 2 and 3 processes.
TEST_F(GrainSimMpi, BodiesWithTheirOwnShapesMigrateWithThem) {
  const fs::path dir = makeTempDir("mpi_own_shapes");
  const std::string kdTree = kdTreeRebuiltEvery(10);
  const std::string beads =
      R"(<Sphere distribute="random" generator="uniform" seed="5" minRadius="0.008" maxRadius="0.0105"/>)";
  writeText(dir / "pile.xml", pileScene(0.06, 4, "", kdTree, beads));
  const CommandResult serial = runSerial(dir / "pile.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 64, 7);
  for (int np = 2; np <= 3; ++np) {
    SCOPED_TRACE(std::to_string(np) + " processes");
    const fs::path out = dir / ("np" + std::to_string(np));
    const CommandResult r = runMpi(np, dir / "pile.xml", out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("bodies     64 simulated, 69 total"), std::string::npos) << r.output;
    const Difference d = compare(reference, checkStates(record(out) / "SimState.sim", 64, 7));
    EXPECT_TRUE(d.sameIds);
    EXPECT_LT(d.position, 1e-9);
    EXPECT_LT(d.velocity, 1e-7);
    EXPECT_EQ(contactsPerStep(record(out) / "SimData.dat"),
              contactsPerStep(record(dir / "serial") / "SimData.dat"));
  }
}

// The global geometry ids of the .sim extra bytes travel with their bodies: every body of every
// state of a 3-process run whose kd-tree is rebuilt every 10 steps carries the id its scene gave
// it (GlobalGeomId linear: body k of a layer gets 100 + k).
TEST_F(GrainSimMpi, GlobalGeometryIdsTravelWithTheirBodies) {
  const fs::path dir = makeTempDir("mpi_geometry_ids");
  const std::string settings = R"(    <GlobalGeometries>
      <Sphere distribute="random" id="100" instances="16" generator="uniform" seed="3"
          minRadius="0.009" maxRadius="0.0105"/>
    </GlobalGeometries>
    <MPISettings>
      <ProcessTopology mode="dynamic" policy="alwaysRebuild" policyCheckEveryXTimeStep="10">
        <Topology type="kdTree" buildMode="AABB" minCellSize="0.001"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
)";
  writeText(dir / "pile.xml", pileScene(0.06, 4, "", settings,
                                        R"(<GlobalGeomId distribute="linear" startId="100"/>)"));
  const CommandResult r = runMpi(3, dir / "pile.xml", dir / "out");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  io::SimFileReader reader;
  reader.open(record(dir / "out") / "SimState.sim");
  ASSERT_EQ(reader.stateCount(), 7u);
  std::size_t wrong = 0;
  std::vector<int> ranks(3, 0);
  for (std::size_t k = 0; k < reader.stateCount(); ++k) {
    for (const io::SimBodyState& b : reader.readState(k).bodies) {
      wrong += b.additional.globalGeomId != 100 + bodyNumber(b.id);
      ranks.at(b.additional.processRank) += 1;
    }
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(*std::min_element(ranks.begin(), ranks.end()), 0);  // written by every process
}

// The scene's kd-tree decomposition (Zoltan RCB), rebuilt every 20 steps with mass-point
// prediction (bodies weighing 1, or their process's measured compute time), and a grid rebuilt
// every 15 steps with splitNodeUpdateRatio 2 and convergenceCheckRatio 2: the serial states to
// solver tolerance, every state complete.
TEST_F(GrainSimMpi, RebuiltDecompositionsGiveTheSerialStates) {
  const fs::path dir = makeTempDir("mpi_rebuild");
  const std::string kdTree = R"(    <MPISettings>
      <ProcessTopology mode="dynamic" policy="alwaysRebuild" policyCheckEveryXTimeStep="20">
        <Topology type="kdTree" buildMode="AABB" minCellSize="0.001"/>
        <MassPointPrediction nPoints="3" deltaT="0.005"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
)";
  // The same kd-tree with bodies weighted by their process's measured compute time.
  std::string kdTime = kdTree;
  kdTime.replace(kdTime.find("policyCheckEveryXTimeStep"), 0, "bodyWeight=\"time\" ");
  const std::string grid = R"(    <MPISettings>
      <ProcessTopology mode="dynamic" policy="alwaysRebuild" policyCheckEveryXTimeStep="15">
        <Topology type="grid" dimension="1 1 1" matchProcessDimToExtent="true" minCellSize="0.001"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="2" convergenceCheckRatio="2"/>
    </MPISettings>
)";
  writeText(dir / "serial.xml", pileScene(0.1));
  ASSERT_EQ(runSerial(dir / "serial.xml", dir / "serial").exitCode, 0);
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 64, 11);
  for (const auto& [name, settings] :
       {std::pair{"kdtree", kdTree}, std::pair{"kdtime", kdTime}, std::pair{"grid", grid}}) {
    SCOPED_TRACE(name);
    writeText(dir / (std::string(name) + ".xml"), pileScene(0.1, 4, "", settings));
    const fs::path out = dir / name;
    const CommandResult r = runMpi(3, dir / (std::string(name) + ".xml"), out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const bool kd = std::string(name) != "grid";
    EXPECT_NE(r.output.find(kd ? "kd-tree (Zoltan RCB), rebuilt every 20"
                               : "grid over the bodies, rebuilt every 15"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("weighted by their process's compute time") != std::string::npos,
              std::string(name) == "kdtime")
        << r.output;
    // 100 steps: rebuilt before steps 20, 40, 60, 80 (kd-tree) or 15, 30, ..., 90 (grid).
    EXPECT_NE(r.output.find(kd ? "rebuilt 4 times" : "rebuilt 6 times"), std::string::npos)
        << r.output;
    checkProfile(r.output, 3, true);
    const io::SimState last = checkStates(record(out) / "SimState.sim", 64, 11);
    const Difference d = compare(reference, last);
    EXPECT_TRUE(d.sameIds);
    EXPECT_LT(d.position, 1e-9);
    EXPECT_LT(d.velocity, 1e-7);
  }
}

/// The figure after `tag` in `output` (-1 when the tag is missing).
double figureAfter(const std::string& output, const std::string& tag) {
  const std::size_t at = output.find(tag);
  return at == std::string::npos ? -1.0 : std::atof(output.c_str() + at + tag.size());
}

/// The start of the command running grain-sim-mpi on `np` processes with the MPI call counter
/// (tests/mpi/mpi_call_count.cpp) preloaded into every process, writing to `prefix`.RANK.
std::string mpirunCounted(int np, const fs::path& prefix) {
  return std::string(GRAIN_MPIEXEC) + " --oversubscribe -np " + std::to_string(np) +
         " -x LD_PRELOAD=" GRAIN_MPI_CALL_COUNT_LIB " -x GRAIN_MPI_CALL_COUNT=" + prefix.string() +
         " " GRAIN_SIM_MPI_EXE;
}

/// Per process, what the preloaded counter wrote at MPI_Finalize (files `prefix`.RANK).
struct MpiCalls {
  /// Collectives that grow with the processes (all-to-all, all-gather, gather, scatter,
  /// reduce-scatter) called by the program outside Zoltan, and by Zoltan.
  unsigned long long program = 0, zoltan = 0;
  unsigned long long sizeQueries = 0;  ///< MPI_Comm_size calls outside Zoltan
  unsigned long long sentBytes = 0;    ///< bytes sent point to point outside Zoltan
};

std::vector<MpiCalls> mpiCalls(const fs::path& prefix, int processes) {
  std::vector<MpiCalls> out;
  for (int rank = 0; rank < processes; ++rank) {
    const fs::path file = prefix.string() + "." + std::to_string(rank);
    EXPECT_TRUE(fs::exists(file)) << file;
    MpiCalls c;
    EXPECT_EQ(std::sscanf(readText(file).c_str(), "program %llu zoltan %llu size %llu sent %llu",
                          &c.program, &c.zoltan, &c.sizeQueries, &c.sentBytes),
              4)
        << file;
    out.push_back(c);
  }
  return out;
}

// Rebuilds move bodies in a sparse exchange whose messages grow with a process's neighbours, not
// with the processes: a trough 40 beads long and 2 wide under gravity tilted along it (the beads
// slide, the kd-tree's cuts follow them), rebuilt every 10 steps on 4 and 8 processes. The
// kd-tree cuts the trough along it (at most 3 neighbours per process); no process sends more
// messages in a rebuild's migration than it has neighbours (an exchange with every process would
// send P - 1 = 7 on 8), the migrations move bodies, and grain calls no collective that grows with
// the processes (counted by a library preloaded into every process; Zoltan's own calls are
// counted apart). The pile keeps every body and ends as the serial one does in bulk.
class GrainSimMpiRebuildTraffic : public GrainSimMpi, public ::testing::WithParamInterface<int> {};

TEST_P(GrainSimMpiRebuildTraffic, RebuildMessagesAreBoundedByTheNeighbours) {
  const int np = GetParam();
  const fs::path dir = makeTempDir("mpi_rebuild_traffic_" + std::to_string(np));
  const std::string kdTree = kdTreeRebuiltEvery(10);
  std::string scene = beadBox(0.1, 40, 2, 3, kdTree, 5);  // a trough 40 beads long
  const std::string down = R"(direction="0 0 -1")";
  scene.replace(scene.find(down), down.size(), R"(direction="0.5 0 -1")");
  writeText(dir / "trough.xml", scene);
  const CommandResult serial = runSerial(dir / "trough.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const fs::path calls = dir / "calls";
  const CommandResult r =
      runCommand(mpirunCounted(np, calls) + " -s " + (dir / "trough.xml").string() + " -g " +
                 (dir / "mpi").string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("rebuilt 9 times"), std::string::npos) << r.output;
  const double neighbours = figureAfter(r.output, "neighbours per process: max ");
  const double messages = figureAfter(r.output, "rebuilds   per rebuild: messages ");
  const double moved = figureAfter(r.output, " bodies moved ");
  const double most = figureAfter(r.output, "(sum over processes), at most ");
  const double rebuilds = figureAfter(r.output, " from one process (");
  std::printf(
      "%d processes: neighbours at most %.0f; per rebuild %.1f messages, %.1f bodies moved, at "
      "most %.0f messages from one process (%.0f rebuilds)\n",
      np, neighbours, messages, moved, most, rebuilds);
  ASSERT_GE(most, 0.0) << r.output;
  EXPECT_EQ(rebuilds, 9.0) << r.output;
  EXPECT_GE(neighbours, 1.0) << r.output;
  EXPECT_GT(messages, 0.0) << "the migrations move bodies\n" << r.output;
  EXPECT_GT(moved, 0.0) << r.output;
  EXPECT_GE(most, 1.0) << r.output;
  EXPECT_LE(most, neighbours) << r.output;
  if (np >= 8) {
    // Not every process borders every other (seen: at most 3 neighbours), so a migration that
    // sent to every process would send more than the neighbours.
    EXPECT_LE(neighbours, 3.0) << "the kd-tree cuts the trough along it\n" << r.output;
    EXPECT_LT(most, np - 1.0) << r.output;
  }
  // None: a build from a previous tree numbers its domains after the processes that hold most of
  // their bodies (KdTreeTopology::build), and when every process's previous domain still holds
  // most of its bodies, as here at each of the 10 builds from a previous tree (the scene's first
  // kd-tree and 9 rebuilds), one logical reduction confirms it and nothing is gathered. (Else
  // every process gathers the (part, bodies) counts: two calls per build, 20 here before; they
  // replaced Zoltan's remapping, which made as many.)
  const std::vector<MpiCalls> counted = mpiCalls(calls, np);
  for (const MpiCalls& c : counted) {
    EXPECT_EQ(c.program, 0u) << "an all-to-all, all-gather, gather, scatter or reduce-scatter in "
                                "grain (Zoltan's: "
                             << c.zoltan << ")";
  }
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 240, 3);
  const io::SimState last = checkStates(record(dir / "mpi") / "SimState.sim", 240, 3);
  EXPECT_TRUE(compare(reference, last).sameIds);
  const double mean[2] = {meanCoordinate(reference, 0), meanCoordinate(last, 0)};
  std::printf("mean x %.6f m (serial %.6f)\n", mean[1], mean[0]);
  EXPECT_NEAR(mean[1], mean[0], 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Processes, GrainSimMpiRebuildTraffic, ::testing::Values(4, 8),
                         processCountName);

TEST_F(GrainSimMpi, RestartOnAnotherProcessCountAndFromASerialRun) {
  const fs::path dir = makeTempDir("mpi_restart");
  writeText(dir / "pile.xml", pileScene(0.1));
  ASSERT_EQ(runSerial(dir / "pile.xml", dir / "serial").exitCode, 0);
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 64, 11);
  const std::string half = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.05'";
  const std::string full = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.1'";
  // A 2-process run continued on 3 processes.
  {
    const CommandResult a = runMpi(2, dir / "pile.xml", dir / "mpi", half);
    ASSERT_EQ(a.exitCode, 0) << a.output;
    checkStates(record(dir / "mpi") / "SimState.sim", 64, 6);
    const CommandResult b =
        runCommand(mpirun(3) + " --restart " + record(dir / "mpi").string() + full);
    ASSERT_EQ(b.exitCode, 0) << b.output;
    const std::size_t restartLine = b.output.find("restart    from state 5");
    ASSERT_NE(restartLine, std::string::npos) << b.output;
    // The profile names the steps by the run's numbers, which continue those of the state.
    const std::size_t stepAt = b.output.find("(step ", restartLine);
    ASSERT_NE(stepAt, std::string::npos) << b.output;
    unsigned long long step = 0;
    ASSERT_EQ(std::sscanf(b.output.c_str() + stepAt, "(step %llu)", &step), 1) << b.output;
    EXPECT_NE(b.output.find("(MPI_Wtime, steps " + std::to_string(step + 2) + "-"),
              std::string::npos)
        << b.output;
    EXPECT_NE(b.output.find("; step " + std::to_string(step + 1) + ": "), std::string::npos)
        << b.output;
    const io::SimState last = checkStates(record(dir / "mpi") / "SimState.sim", 64, 11);
    const Difference d = compare(reference, last);
    EXPECT_TRUE(d.sameIds);
    EXPECT_LT(d.position, 1e-9);
  }
  // A serial run continued on 2 processes.
  {
    ASSERT_EQ(runSerial(dir / "pile.xml", dir / "s2", half).exitCode, 0);
    const CommandResult b =
        runCommand(mpirun(2) + " --restart " + record(dir / "s2").string() + full);
    ASSERT_EQ(b.exitCode, 0) << b.output;
    const io::SimState last = checkStates(record(dir / "s2") / "SimState.sim", 64, 11);
    EXPECT_LT(compare(reference, last).position, 1e-9);
  }
}

// With warm start (usePercussionCache) and a fixed number of sweeps, where the starting
// percussions change the result: a 2-process run stopped half way and continued with --restart
// writes the same bits as an uninterrupted one (the warm-start cache of the last state is written
// by all processes together and read back by each for its own bodies); continued on 3 processes
// it finds the cache too.
TEST_F(GrainSimMpi, RestartWithWarmStartContinuesBitForBit) {
  const fs::path dir = makeTempDir("mpi_restart_warm");
  const std::string grid = R"(    <MPISettings>
      <ProcessTopology mode="static">
        <Topology type="grid" buildMode="predefined" aligned="true" minPoint="0 0 -0.02"
            maxPoint="0.1 0.1 0.12" dimension="2 1 1" matchProcessDimToExtent="false"
            minCellSize="0.02"/>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
)";
  writeText(dir / "pile.xml", pileScene(0.1, 4, "", grid));
  const std::string solver = " --set 'SceneSettings/TimeStepperSettings/InclusionSolverSettings/";
  const std::string warm =
      solver + "@usePercussionCache=true'" + solver + "@minIter=15'" + solver + "@maxIter=15'";
  const std::string half = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.05'";
  const std::string full = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.1'";
  const std::string scene = " -s " + (dir / "pile.xml").string();
  const CommandResult whole =
      runCommand(mpirun(2) + scene + " -g " + (dir / "whole").string() + warm + full);
  ASSERT_EQ(whole.exitCode, 0) << whole.output;
  // A solve of fixed sweeps tests no convergence: a step's reductions are the coupling flag
  // before the solve and the statistics at its end, both over all processes.
  EXPECT_NE(whole.output.find(") reductions 2.0 (max over processes)"), std::string::npos)
      << whole.output;
  const CommandResult first =
      runCommand(mpirun(2) + scene + " -g " + (dir / "parts").string() + warm + half);
  ASSERT_EQ(first.exitCode, 0) << first.output;
  EXPECT_TRUE(fs::exists(record(dir / "parts") / "RestartCache.bin"));
  fs::copy(record(dir / "parts"), dir / "parts3", fs::copy_options::recursive);
  const CommandResult second =
      runCommand(mpirun(2) + " --restart " + record(dir / "parts").string() + full);
  ASSERT_EQ(second.exitCode, 0) << second.output;
  EXPECT_EQ(second.output.find("no warm-start data"), std::string::npos) << second.output;

  io::SimFileReader a, b;
  a.open(record(dir / "whole") / "SimState.sim");
  b.open(record(dir / "parts") / "SimState.sim");
  ASSERT_EQ(a.stateCount(), 11u);
  ASSERT_EQ(b.stateCount(), 11u);
  for (std::size_t k = 6; k < 11; ++k) {
    const io::SimState x = a.readState(k);
    const io::SimState y = b.readState(k);
    ASSERT_EQ(x.bodies.size(), y.bodies.size());
    std::size_t differ = 0;
    for (const io::SimBodyState& p : x.bodies) {
      const io::SimBodyState* q = y.find(p.id);
      ASSERT_NE(q, nullptr);
      differ += p.position != q->position || p.velocity != q->velocity ||
                p.omegaBody != q->omegaBody || p.orientation.coeffs() != q->orientation.coeffs();
    }
    EXPECT_EQ(differ, 0u) << "state " << k << ": bodies whose state differs in any bit";
  }
  // On 3 processes the cache is found as well (each process keeps its bodies' entries).
  const CommandResult three =
      runCommand(mpirun(3) + " --restart " + (dir / "parts3").string() + full +
                 " --set 'SceneSettings/MPISettings/ProcessTopology/Topology/@dimension=3 1 1'");
  ASSERT_EQ(three.exitCode, 0) << three.output;
  EXPECT_EQ(three.output.find("no warm-start data"), std::string::npos) << three.output;
  checkStates(dir / "parts3" / "SimState.sim", 64, 11);
}

// The first decomposition is a count-weighted RCB of the initial centres: on a pile of very
// uneven density (192 beads packed in one corner of the box, 8 spread over 1 m) every process of
// 4 starts with about N/P bodies. (The uniform grid over the box of all centres used before gave
// one process the whole packed corner: 193 bodies, 3.86 times the mean.)
TEST_F(GrainSimMpi, FirstDecompositionGivesEveryProcessItsShareOfAnUnevenPile) {
  const fs::path dir = makeTempDir("mpi_uneven");
  const std::string spread = R"(    <RigidBodies name="spread" instances="8" groupId="30">
      <Geometry><Sphere distribute="uniform" radius="0.01"/></Geometry>
      <DynamicProperties><DynamicState type="simulated"/><Mass distribute="uniform" value="0.004"/>
        <InertiaTensor type="homogen"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="linear" position="0.05 0.05 0.3" direction="0 0 1"
              distance="0.125" jitter="false" delta="0"/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)";
  writeText(dir / "uneven.xml", pileScene(0.002, 12, spread));
  const CommandResult r = runMpi(4, dir / "uneven.xml", dir / "out");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string tag = "kd-tree (Zoltan RCB) over the initial centres (largest share ";
  const std::size_t at = r.output.find(tag);
  ASSERT_NE(at, std::string::npos) << r.output;
  std::istringstream figures(r.output.substr(at + tag.size()));
  std::size_t largest = 0;
  std::string bodiesWord;
  double overMean = 0.0;
  figures >> largest >> bodiesWord >> overMean;
  EXPECT_LE(largest, 52u) << r.output;  // 200 bodies on 4 processes
  EXPECT_LE(overMean, 1.05) << r.output;
  checkStates(record(dir / "out") / "SimState.sim", 200, 1);
}

/// Bytes each process read from files whose name ends in `name`, from the per-process traces
/// `prefix`.PID of strace -ff -y (processes that read none of it are left out).
std::vector<std::uint64_t> bytesReadPerProcess(const fs::path& prefix, const std::string& name) {
  std::vector<std::uint64_t> out;
  for (const fs::directory_entry& e : fs::directory_iterator(prefix.parent_path())) {
    const std::string file = e.path().filename().string();
    if (file.rfind(prefix.filename().string() + ".", 0) != 0) {
      continue;
    }
    std::istringstream in(readText(e.path()));
    std::uint64_t total = 0;
    for (std::string line; std::getline(in, line);) {
      // pread64(12</dir/SimState.sim>, "..."..., 2112, 36) = 2112
      const std::size_t fd = line.find(name + ">");
      const std::size_t eq = line.rfind(") = ");
      if (fd == std::string::npos || eq == std::string::npos || eq < fd) {
        continue;
      }
      const long long n = std::atoll(line.c_str() + eq + 4);
      total += n > 0 ? static_cast<std::uint64_t>(n) : 0;
    }
    if (total > 0) {
      out.push_back(total);
    }
  }
  return out;
}

// A restart reads about 1/P of the state per process: on 4 processes (traced with strace, one
// trace per process) no process reads more of SimState.sim than a quarter of the last state plus
// the header and two times, nor more of RestartCache.bin than a quarter of its entries plus its
// header; together they read the whole state once.
//
// The restart line's own figure ("each process read at most N bytes of SimState.sim ... and M of
// the warm-start data", counted by the collective reader) is held to the same bounds, also where
// strace is missing or may not trace (then the traces are left out); and with a library
// preloaded into every process (tests/mpi/mpi_call_count.cpp), no process asks MPI_Comm_size as
// often as it reads records.
TEST_F(GrainSimMpi, RestartReadsAQuarterOfTheStatePerProcessOnFour) {
  const bool traced = runCommand("strace -f -o /dev/null true").exitCode == 0;
  if (!traced) {
    std::printf(
        "strace is not installed (tools/install-deps.sh installs it) or may not trace: "
        "only the restart line's figures are checked\n");
  }
  const fs::path dir = makeTempDir("mpi_restart_slices");
  writeText(dir / "pile.xml", pileScene(0.1, 16));  // 256 beads
  const std::string solver = " --set 'SceneSettings/TimeStepperSettings/InclusionSolverSettings/";
  const std::string warm = solver + "@usePercussionCache=true'";
  const std::string half = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.05'";
  const CommandResult first = runMpi(4, dir / "pile.xml", dir / "out", warm + half);
  ASSERT_EQ(first.exitCode, 0) << first.output;
  const fs::path rec = record(dir / "out");
  const std::uint64_t cacheBytes = fs::file_size(rec / "RestartCache.bin");
  ASSERT_GT(cacheBytes, 32u + 4 * 44u) << "the pile has contacts at t = 0.05 s";
  // The restart with the same end time continues from the last state and makes no step.
  const fs::path trace = dir / "trace";
  const std::string strace =
      traced
          ? "strace -f -ff -y -e trace=read,pread64,readv,preadv,preadv2 -o " + trace.string() + " "
          : std::string();
  const fs::path calls = dir / "calls";
  const CommandResult again =
      runCommand(strace + mpirunCounted(4, calls) + " --restart " + rec.string() + half);
  ASSERT_EQ(again.exitCode, 0) << again.output;
  EXPECT_NE(again.output.find("restart    from state 5"), std::string::npos) << again.output;
  const std::uint64_t state = 8 + 256 * 132;
  const std::uint64_t entries = (cacheBytes - 32) / 44;
  const double simMost = figureAfter(again.output, "each process read at most ");
  const double cacheMost = figureAfter(again.output, " per state) and ");
  EXPECT_GE(simMost, 64 * 132) << again.output;
  EXPECT_LE(simMost, 28 + 2 * 8 + 64 * 132) << again.output;
  EXPECT_GT(cacheMost, 0.0) << again.output;
  EXPECT_LE(cacheMost, 32 + (entries + 3) / 4 * 44) << again.output;
  // The process count is asked a fixed number of times, not once per record read (each process
  // reads 64 of the state's records; seen: 24 queries per process, 115-134 when asked per record).
  for (const MpiCalls& c : mpiCalls(calls, 4)) {
    EXPECT_LT(c.sizeQueries, 64u);
  }
  if (!traced) {
    return;
  }
  const std::vector<std::uint64_t> sim = bytesReadPerProcess(trace, "SimState.sim");
  ASSERT_EQ(sim.size(), 4u) << "every process reads its slice";
  std::uint64_t sum = 0;
  for (const std::uint64_t bytes : sim) {
    EXPECT_LE(bytes, 28 + 2 * 8 + 64 * 132) << "a process read more than a quarter of the state";
    sum += bytes;
  }
  EXPECT_GE(sum, state - 8);
  EXPECT_LE(sum, state + 28 + 8);
  for (const std::uint64_t bytes : bytesReadPerProcess(trace, "RestartCache.bin")) {
    EXPECT_LE(bytes, 32 + (entries + 3) / 4 * 44) << "of " << cacheBytes << " bytes";
  }
}

// A restart hands each body to its owner in one exchange: every process builds the bodies whose
// records it read, and the first decomposition moves each at most once (a full body record of 193
// bytes for a bead: id, body, tag). Before, the records (132 bytes) went first to the processes
// that built the bodies (by ordinal: here layers of the pile), then on to their owners. Counted
// with the preloaded library (tests/mpi/mpi_call_count.cpp): the bytes all processes send point to
// point in a restart that makes no step, from a record of 4 processes, whose state is laid out
// process by process. They stay within one body record and one id (8 bytes, to the process that
// checks the body) per body, and three times 45 bytes per warm-start entry (to the process that
// built its home body, on to the one that read it, then with the body to its owner). On 4
// processes with the scene's grid of 2 x 2 columns the readers are the owners, so only the ids
// and entries travel (seen: 11 816 bytes; before: 79 335, every record to its layer's process and
// most bodies back to their column); on 3 processes with the first decomposition of the whole
// pile, some bodies move.
TEST_F(GrainSimMpi, RestartMovesEachBodyOnceToItsOwner) {
  const fs::path dir = makeTempDir("mpi_restart_once");
  const std::string columns = staticGrid("2 2 1");
  writeText(dir / "columns.xml", pileScene(0.1, 16, "", columns));  // 256 beads
  writeText(dir / "pile.xml", pileScene(0.1, 16));
  const std::string warm =
      " --set 'SceneSettings/TimeStepperSettings/InclusionSolverSettings/@usePercussionCache=true'";
  const std::string half = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.05'";
  for (const auto& [scene, np] : {std::pair{"columns", 4}, std::pair{"pile", 3}}) {
    SCOPED_TRACE(std::string(scene) + " on " + std::to_string(np) + " processes");
    const fs::path out = dir / scene;
    const CommandResult first = runMpi(4, dir / (std::string(scene) + ".xml"), out, warm + half);
    ASSERT_EQ(first.exitCode, 0) << first.output;
    const fs::path rec = record(out);
    const std::uint64_t entries = (fs::file_size(rec / "RestartCache.bin") - 32) / 44;
    ASSERT_GT(entries, 0u);
    const fs::path calls = dir / (std::string("calls_") + scene);
    const CommandResult again =
        runCommand(mpirunCounted(np, calls) + " --restart " + rec.string() + half);
    ASSERT_EQ(again.exitCode, 0) << again.output;
    EXPECT_NE(again.output.find("restart    from state 5"), std::string::npos) << again.output;
    unsigned long long sent = 0;
    for (const MpiCalls& c : mpiCalls(calls, np)) {
      sent += c.sentBytes;
    }
    std::printf("%s restarted on %d processes: %llu bytes sent point to point (%llu entries)\n",
                scene, np, sent, static_cast<unsigned long long>(entries));
    EXPECT_GE(sent, 256u * 8u);  // the ids
    EXPECT_LE(sent, 256u * (193u + 8u) + 3u * 45u * entries) << again.output;
  }
}

// A GlobalInitialCondition read on 4 processes reads about 1/P of the state per process: the last
// state of a serial run of 256 beads, continued for 2 steps. Traced with strace (one trace per
// process), no process reads more of the file than a quarter of the state plus three headers and
// three times (the scene loader's header and time, twice: the scene is loaded again with the
// bodies a process read; the collective reader's), and together they read the state once; the run's
// "initial" line gives the most any process read, held to the same bound also without strace. The
// continuation gives the serial one's states.
TEST_F(GrainSimMpi, GlobalInitialConditionReadsAQuarterOfTheStatePerProcessOnFour) {
  const bool traced = runCommand("strace -f -o /dev/null true").exitCode == 0;
  const fs::path dir = makeTempDir("mpi_initial_slices");
  writeText(dir / "pile.xml", pileScene(0.05, 16));  // 256 beads
  ASSERT_EQ(runSerial(dir / "pile.xml", dir / "first").exitCode, 0);
  const fs::path sim = record(dir / "first") / "SimState.sim";
  io::SimFileReader reader;
  reader.open(sim);
  const std::uint64_t state = reader.header().bytesPerState();
  const std::uint64_t body = (state - 8) / 256;
  writeText(dir / "continued.xml", pileScene(0.052, 16, "", continuedFrom(sim)));
  const CommandResult serial = runSerial(dir / "continued.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const fs::path trace = dir / "trace";
  const std::string strace =
      traced
          ? "strace -f -ff -y -e trace=read,pread64,readv,preadv,preadv2 -o " + trace.string() + " "
          : std::string();
  const CommandResult r =
      runCommand(strace + mpirun(4) + " -s " + (dir / "continued.xml").string() + " -g " +
                 (dir / "mpi").string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::uint64_t quarter = 28 + 8 + 64 * body;
  const double most = figureAfter(r.output, "each process read at most ");
  EXPECT_GE(most, 64 * body) << r.output;
  EXPECT_LE(most, quarter) << r.output;
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 256, 1);
  const Difference d =
      compare(reference, checkStates(record(dir / "mpi") / "SimState.sim", 256, 1));
  EXPECT_TRUE(d.sameIds);
  EXPECT_LT(d.position, 1e-9);
  if (!traced) {
    GTEST_SKIP() << "strace is not installed (tools/install-deps.sh installs it) or may not trace";
  }
  const std::vector<std::uint64_t> read =
      bytesReadPerProcess(trace, "first/SimFiles/SimDataRECORD_0/SimState.sim");
  ASSERT_EQ(read.size(), 4u) << "every process reads its slice";
  std::uint64_t sum = 0;
  for (const std::uint64_t bytes : read) {
    EXPECT_LE(bytes, 2 * (28 + 8) + quarter) << "a process read more than a quarter of the state";
    sum += bytes;
  }
  EXPECT_GE(sum, state - 8);
  EXPECT_LE(sum, state + 4 * (3 * 28 + 3 * 8));
}

// A GlobalInitialCondition (the last state of a serial run, time continued) read by the
// processes together, each a slice of the state: the serial continuation's states, bit for bit on
// 1 process and to 1e-9 m on 3; a simulated body the state lacks is a scene error at the element
// on every process count.
TEST_F(GrainSimMpi, GlobalInitialConditionGivesTheSerialStates) {
  const fs::path dir = makeTempDir("mpi_initial_state");
  writeText(dir / "pile.xml", pileScene(0.05));
  ASSERT_EQ(runSerial(dir / "pile.xml", dir / "first").exitCode, 0);
  const std::string initial = continuedFrom(record(dir / "first") / "SimState.sim");
  writeText(dir / "continued.xml", pileScene(0.1, 4, "", initial));
  const CommandResult serial = runSerial(dir / "continued.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 64, 6);
  for (const int np : {1, 3}) {
    SCOPED_TRACE(std::to_string(np) + " processes");
    const fs::path out = dir / ("mpi" + std::to_string(np));
    const CommandResult r = runMpi(np, dir / "continued.xml", out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    const Difference d = compare(reference, checkStates(record(out) / "SimState.sim", 64, 6));
    EXPECT_TRUE(d.sameIds);
    if (np == 1) {
      EXPECT_EQ(d.position, 0.0);
      EXPECT_EQ(d.velocity, 0.0);
    } else {
      EXPECT_LT(d.position, 1e-9);
    }
  }
  // Five layers of beads: the 16 of the fifth are not in the state.
  writeText(dir / "more.xml", pileScene(0.1, 5, "", initial));
  const CommandResult more = runMpi(3, dir / "more.xml", dir / "more");
  EXPECT_EQ(more.exitCode, 2) << more.output;
  EXPECT_NE(more.output.find("SceneSettings/GlobalInitialCondition: 16 simulated bodies are "
                             "missing from state 5"),
            std::string::npos)
      << more.output;
  EXPECT_FALSE(fs::exists(dir / "more" / "SimFiles"));
}

TEST_F(GrainSimMpi, BadInputStopsEveryProcessBeforeWriting) {
  const fs::path dir = makeTempDir("mpi_bad_input");
  std::string text = pileScene(0.1);
  text.replace(text.find("radius=\"0.01\""), 13, "radius=\"-1\"");
  writeText(dir / "bad.xml", text);
  const CommandResult r = runMpi(3, dir / "bad.xml", dir / "out");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("bad.xml:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("radius"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "SimFiles"));
}

/// A serial record of the 64-bead pile up to t = 0.05 s (6 states), whose last state's body ids
/// the tests below overwrite.
struct SerialPileRecord {
  fs::path folder;               ///< the record folder (--restart)
  fs::path sim;                  ///< its SimState.sim
  std::vector<BodyId> ids;       ///< of the last state, increasing (the file's order)
  std::uintmax_t lastState = 0;  ///< index of the last state

  /// Serial states: 28-byte header, then per state the time and 64 bodies of 112 bytes, by id.
  std::streamoff recordOffset(std::size_t body) const {
    return static_cast<std::streamoff>(28 + lastState * (8 + 64 * 112) + 8 + body * 112);
  }
  /// Writes `id` over the id of record `body` of the last state.
  void overwriteId(std::size_t body, BodyId id) const {
    std::fstream f(sim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(recordOffset(body));
    f.write(reinterpret_cast<const char*>(&id), sizeof id);
  }
};

SerialPileRecord serialPileRecord(const fs::path& dir) {
  writeText(dir / "pile.xml", pileScene(0.1));
  SerialPileRecord r;
  EXPECT_EQ(runSerial(dir / "pile.xml", dir / "serial",
                      " --set 'SceneSettings/TimeStepperSettings/@endTime=0.05'")
                .exitCode,
            0);
  r.folder = record(dir / "serial");
  r.sim = r.folder / "SimState.sim";
  for (const io::SimBodyState& b : checkStates(r.sim, 64, 6).bodies) {
    r.ids.push_back(b.id);
  }
  std::sort(r.ids.begin(), r.ids.end());
  r.lastState = (fs::file_size(r.sim) - 28) / (8 + 64 * 112) - 1;
  return r;
}

TEST_F(GrainSimMpi, AnInputErrorFoundByOneProcessReachesTheUser) {
  // A serial record whose last state names, instead of two of the pile's bodies, bodies the scene
  // does not have: the body count still matches, and only the processes whose shares hold the
  // replaced bodies find them missing, each a different one. On 3 processes the shares are the
  // ordinals [0, 21), [21, 42), [42, 64): the 31st body (process 1) and the last (process 2), so
  // the first process finds nothing. Both messages must reach the user, with exit 2.
  const SerialPileRecord rec = serialPileRecord(makeTempDir("mpi_restart_error"));
  ASSERT_EQ(rec.ids.size(), 64u);
  const std::vector<BodyId>& ids = rec.ids;
  const std::size_t replacedAt[2] = {30, 63};
  for (int k = 0; k < 2; ++k) {
    std::ifstream f(rec.sim, std::ios::binary);
    BodyId id = 0;
    f.seekg(rec.recordOffset(replacedAt[k]));
    f.read(reinterpret_cast<char*>(&id), sizeof id);
    ASSERT_EQ(id, ids[replacedAt[k]]);
    rec.overwriteId(replacedAt[k], (BodyId{99} << 32) + static_cast<BodyId>(k));
  }
  const CommandResult r = runCommand(mpirun(3) + " --restart " + rec.folder.string() +
                                     " --set 'SceneSettings/TimeStepperSettings/@endTime=0.1'");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  for (const std::size_t k : replacedAt) {
    EXPECT_NE(r.output.find("has no body " + formatBodyId(ids[k])), std::string::npos) << r.output;
  }
  // The second message names its process.
  EXPECT_NE(r.output.find("grain-sim-mpi: process 2: the state at t = 0.050000 s has no body " +
                          formatBodyId(ids[63])),
            std::string::npos)
      << r.output;
}

// A restart state that names one body twice (the last record of a serial state replaced by the
// first body) is refused on 3 processes, where the two copies are read by different processes
// (the first and the last) and only the process that built the body sees both: the message
// names the body and the state, every process stops with exit 2, and nothing is written.
TEST_F(GrainSimMpi, ARestartStateWithABodyTwiceIsRefused) {
  const SerialPileRecord rec = serialPileRecord(makeTempDir("mpi_restart_twice"));
  ASSERT_EQ(rec.ids.size(), 64u);
  rec.overwriteId(63, rec.ids[0]);
  const auto sizeBefore = fs::file_size(rec.sim);
  const CommandResult r = runCommand(mpirun(3) + " --restart " + rec.folder.string() +
                                     " --set 'SceneSettings/TimeStepperSettings/@endTime=0.1'");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("state " + std::to_string(rec.lastState) + ": body " +
                          formatBodyId(rec.ids[0]) + " occurs twice"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(fs::file_size(rec.sim), sizeBefore);
}

TEST_F(GrainSimMpi, AnErrorOnOneProcessStopsAllWithItsMessage) {
  // A sphere far too fast for the domain cells (a grid of 4 along z over the pile's height, fixed
  // by the scene) leaves its owner's neighbourhood in one step.
  const std::string bullet = R"(    <RigidBodies name="bullet" instances="1" groupId="30">
      <Geometry><Sphere distribute="uniform" radius="0.005"/></Geometry>
      <DynamicProperties><DynamicState type="simulated"/><Mass distribute="uniform" value="0.001"/>
        <InertiaTensor type="homogen"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms"><Pos><Trafo trans="0.005 0.05 0.3" axis="1 0 0" deg="0"/></Pos></InitialPosition>
          <InitialVelocity distribute="transrot"><Vel transDir="0 0 -1" absTransVel="500" rotDir="0 0 1" absRotVel="0"/></InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)";
  const fs::path dir = makeTempDir("mpi_error");
  const std::string grid = staticGrid("1 1 4");
  writeText(dir / "pile.xml", pileScene(0.1, 4, bullet, grid));
  const CommandResult r = runMpi(4, dir / "pile.xml", dir / "out");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("not a neighbour"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("process "), std::string::npos) << r.output;
}

TEST_F(GrainSimMpi, ANonFiniteStateOnOneProcessStopsAllNamingTheBody) {
  // A box spinning at 1e200 rad/s about a tilted axis: its gyroscopic term overflows in the
  // first step, and the second one fails on it. It starts 0.3 m high, in the upper domain of the
  // grid the 2 processes split along z.
  const std::string spinner = R"(    <RigidBodies name="spinner" instances="1" groupId="30">
      <Geometry><Box distribute="uniform" extent="0.01 0.02 0.03"/></Geometry>
      <DynamicProperties><DynamicState type="simulated"/><Mass distribute="uniform" value="0.001"/>
        <InertiaTensor type="homogen"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms"><Pos><Trafo trans="0.09 0.05 0.3" axis="1 0 0" deg="0"/></Pos></InitialPosition>
          <InitialVelocity distribute="transrot"><Vel transDir="0 0 -1" absTransVel="0" rotDir="1 2 3" absRotVel="1e200"/></InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)";
  const fs::path dir = makeTempDir("mpi_nonfinite");
  writeText(dir / "pile.xml", pileScene(0.1, 4, spinner));
  const CommandResult r = runMpi(2, dir / "pile.xml", dir / "out");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("process 1: step 2: body (30,0)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("has a non-finite"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(RigidBodies \"spinner\")"), std::string::npos) << r.output;
  // The states written before the step that failed stay readable.
  checkStates(record(dir / "out") / "SimState.sim", 65, 1);
}

TEST_F(GrainSimMpi, SigtermToOneProcessStopsAllAfterTheStep) {
  const fs::path dir = makeTempDir("mpi_sigterm");
  writeText(dir / "pile.xml", pileScene(100.0, 6));
  const std::string cmd = "( " + mpirun(3) + " -s " + (dir / "pile.xml").string() + " -g " +
                          (dir / "out").string() + " > " + (dir / "log.txt").string() +
                          " 2>&1 & pid=$!; sleep 3; pkill -TERM -n -P $pid; wait $pid; "
                          "echo EXIT=$? )";
  const CommandResult r = runCommand(cmd);
  EXPECT_NE(r.output.find("EXIT=3"), std::string::npos) << r.output << readText(dir / "log.txt");
  const std::string log = readText(dir / "log.txt");
  EXPECT_NE(log.find("stopped by signal 15"), std::string::npos) << log;
  EXPECT_NE(log.find("--restart"), std::string::npos) << log;
  io::SimFileReader reader;
  reader.open(record(dir / "out") / "SimState.sim");
  EXPECT_FALSE(reader.truncated());
  EXPECT_GE(reader.stateCount(), 1u);
  for (std::size_t k = 0; k < reader.stateCount(); ++k) {
    EXPECT_EQ(reader.readState(k).bodies.size(), 96u);
  }
}

/// The files of a record folder, by name (a temporary file of an atomic write would show here).
std::vector<std::string> filesOf(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// pileScene with `element` added to its SceneSettings (after RecorderSettings).
std::string pileSceneWith(const std::string& element, double endTime = 0.05) {
  std::string text = pileScene(endTime);
  const std::string recorder = "\n    <TimeStepperSettings";
  text.insert(text.find(recorder), "\n    " + element);
  return text;
}

// The record folder of a distributed run is the serial one's: the same files, the scene files
// written whole (through a temporary file and a rename: none is left) with the serial text; a
// restart with --set rewrites them the same way.
TEST_F(GrainSimMpi, RecordFolderHoldsTheSerialFilesWrittenWhole) {
  const fs::path dir = makeTempDir("mpi_record_folder");
  writeText(dir / "pile.xml", pileScene(0.05));
  const CommandResult serial = runSerial(dir / "pile.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const CommandResult r = runMpi(2, dir / "pile.xml", dir / "mpi");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const fs::path s = record(dir / "serial");
  const fs::path m = record(dir / "mpi");
  EXPECT_EQ(filesOf(m), filesOf(s));
  EXPECT_EQ(filesOf(m), (std::vector<std::string>{"EffectiveScene.xml", "RunInfo.txt",
                                                  "SceneFile.xml", "SimData.dat", "SimState.sim"}));
  EXPECT_EQ(readText(m / "SceneFile.xml"), readText(s / "SceneFile.xml"));
  EXPECT_EQ(readText(m / "EffectiveScene.xml"), readText(s / "EffectiveScene.xml"));
  EXPECT_EQ(readText(m / "RunInfo.txt"), readText(s / "RunInfo.txt"));

  const std::string later = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.07'";
  const CommandResult more = runCommand(mpirun(3) + " --restart " + m.string() + later);
  ASSERT_EQ(more.exitCode, 0) << more.output;
  ASSERT_EQ(runCommand(std::string(GRAIN_SIM_EXE) + " --restart " + s.string() + later).exitCode,
            0);
  EXPECT_EQ(filesOf(m), filesOf(s));
  EXPECT_NE(readText(m / "SceneFile.xml").find("endTime=\"0.07\""), std::string::npos);
  EXPECT_EQ(readText(m / "SceneFile.xml"), readText(s / "SceneFile.xml"));
  // The effective configuration names the scene file it was read from: each record's own.
  const auto named = [](const fs::path& folder) {
    std::string text = readText(folder / "EffectiveScene.xml");
    const std::string path = (folder / "SceneFile.xml").string();
    const std::size_t at = text.find(path);
    EXPECT_NE(at, std::string::npos) << text.substr(0, 300);
    return at == std::string::npos ? text : text.replace(at, path.size(), "SceneFile.xml");
  };
  EXPECT_EQ(named(m), named(s));

  // The scene file goes through SceneFile.xml.part and a rename: when the temporary file cannot be
  // written (here a folder of that name), the run stops on every process with the file named,
  // and SceneFile.xml stays the previous version, whole.
  const std::string scene = readText(m / "SceneFile.xml");
  const std::uintmax_t states = fs::file_size(m / "SimState.sim");
  fs::create_directory(m / "SceneFile.xml.part");
  const CommandResult blocked =
      runCommand(mpirun(2) + " --restart " + m.string() +
                 " --set 'SceneSettings/TimeStepperSettings/@endTime=0.09'");
  EXPECT_EQ(blocked.exitCode, 1) << blocked.output;
  EXPECT_NE(
      blocked.output.find("grain-sim-mpi: cannot write " + (m / "SceneFile.xml.part").string()),
      std::string::npos)
      << blocked.output;
  EXPECT_EQ(readText(m / "SceneFile.xml"), scene);
  EXPECT_EQ(fs::file_size(m / "SimState.sim"), states);
}

// ContactForceOutput on one process: ContactForces.dat is the serial run's, byte for byte (a
// process holds every contact; compatible forces included), and a restart continues it as the
// serial restart does.
TEST_F(GrainSimMpi, ContactForceOutputOnOneProcessGivesTheSerialFile) {
  const fs::path dir = makeTempDir("mpi_contact_forces");
  writeText(dir / "pile.xml",
            pileSceneWith(R"(<ContactForceOutput everyXStep="10" compatibleForces="true"/>)"));
  const CommandResult serial = runSerial(dir / "pile.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const CommandResult r = runMpi(1, dir / "pile.xml", dir / "mpi");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("contacts   forces of every 10-th step with compatible normal forces"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("contacts   compatible forces: 5 output steps"), std::string::npos)
      << r.output;
  const std::string file = readText(record(dir / "serial") / "ContactForces.dat");
  EXPECT_NE(file.find("\nstep 50 "), std::string::npos) << file;
  EXPECT_EQ(readText(record(dir / "mpi") / "ContactForces.dat"), file);

  const std::string later = " --set 'SceneSettings/TimeStepperSettings/@endTime=0.07'";
  ASSERT_EQ(runCommand(mpirun(1) + " --restart " + record(dir / "mpi").string() + later).exitCode,
            0);
  ASSERT_EQ(runCommand(std::string(GRAIN_SIM_EXE) + " --restart " +
                       record(dir / "serial").string() + later)
                .exitCode,
            0);
  const std::string continued = readText(record(dir / "serial") / "ContactForces.dat");
  EXPECT_NE(continued.find("\nstep 70 "), std::string::npos) << continued;
  EXPECT_EQ(readText(record(dir / "mpi") / "ContactForces.dat"), continued);
}

// What one process writes alone, ContactForces.dat and --dump-fclib, is refused on more processes
// by every process before anything is written (exit 2, the scene element or the option named).
TEST_F(GrainSimMpi, ContactForcesAndFclibDumpOnMoreProcessesAreRefusedBeforeWriting) {
  const fs::path dir = makeTempDir("mpi_refused");
  writeText(dir / "forces.xml", pileSceneWith(R"(<ContactForceOutput everyXStep="10"/>)"));
  const CommandResult forces = runMpi(2, dir / "forces.xml", dir / "forces");
  EXPECT_EQ(forces.exitCode, 2) << forces.output;
  EXPECT_NE(forces.output.find("forces.xml:5: SceneSettings/ContactForceOutput: ContactForces.dat "
                               "is written by one process"),
            std::string::npos)
      << forces.output;
  // Every process reached the same verdict: one message.
  EXPECT_EQ(forces.output.find("ContactForceOutput:"), forces.output.rfind("ContactForceOutput:"))
      << forces.output;
  EXPECT_FALSE(fs::exists(dir / "forces")) << forces.output;

  writeText(dir / "pile.xml", pileScene(0.05));
  const CommandResult dump = runMpi(3, dir / "pile.xml", dir / "dump", " --dump-fclib 10");
  EXPECT_EQ(dump.exitCode, 2) << dump.output;
#ifdef GRAIN_TEST_WITH_FCLIB
  EXPECT_NE(dump.output.find("grain-sim-mpi: --dump-fclib: the contact problem of a step is "
                             "written whole by one process"),
            std::string::npos)
      << dump.output;
#else
  EXPECT_NE(dump.output.find("--dump-fclib is not available"), std::string::npos) << dump.output;
#endif
  EXPECT_FALSE(fs::exists(dir / "dump")) << dump.output;
}

#ifdef GRAIN_TEST_WITH_FCLIB
// --dump-fclib on one process writes the serial run's problems and solutions.
TEST_F(GrainSimMpi, FclibDumpOnOneProcessGivesTheSerialProblems) {
  const fs::path dir = makeTempDir("mpi_fclib");
  writeText(dir / "pile.xml", pileScene(0.05));
  const std::string options = " --dump-fclib 20";
  const CommandResult serial = runSerial(dir / "pile.xml", dir / "serial", options);
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const CommandResult r = runMpi(1, dir / "pile.xml", dir / "mpi", options);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("fclib      contact problems of every 20-th step to "), std::string::npos)
      << r.output;
  const std::vector<std::string> names = filesOf(record(dir / "serial") / "fclib");
  ASSERT_FALSE(names.empty());
  ASSERT_EQ(filesOf(record(dir / "mpi") / "fclib"), names);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string a = (record(dir / "serial") / "fclib" / name).string();
    const std::string b = (record(dir / "mpi") / "fclib" / name).string();
    const LocalProblem p = fclib::readLocal(a);
    const LocalProblem q = fclib::readLocal(b);
    ASSERT_EQ(p.contactCount(), q.contactCount());
    EXPECT_EQ(p.q, q.q);
    EXPECT_EQ(p.mu, q.mu);
    EXPECT_EQ(Eigen::MatrixXd(p.W.toDense()), Eigen::MatrixXd(q.W.toDense()));
    EXPECT_EQ(fclib::readSolution(a, p).r, fclib::readSolution(b, q).r);
  }
}
#endif

// More processes than cores (OpenMPI yields when oversubscribed), so that every path that depends
// on the process count runs in CI: a kd-tree pile of 1000 beads, rebuilt every 50 steps, on 8 and
// 16 processes (one ctest each). Every state holds every body exactly once, and the pile ends as
// the serial one does in bulk (the runs differ to solver tolerance, 1e-6, and then diverge).
class GrainSimMpiManyProcesses : public GrainSimMpi, public ::testing::WithParamInterface<int> {};

TEST_P(GrainSimMpiManyProcesses, KdTreePileKeepsEveryBodyAndTheSerialBulk) {
  const int np = GetParam();
  const fs::path dir = makeTempDir("mpi_many_" + std::to_string(np));
  const std::string kdTree = kdTreeRebuiltEvery(50);
  writeText(dir / "pile.xml", widePile(0.3, 10, 10, kdTree));
  const CommandResult serial = runSerial(dir / "pile.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const CommandResult r = runMpi(np, dir / "pile.xml", dir / "mpi");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("processes  " + std::to_string(np) +
                          ", first kd-tree (Zoltan RCB) over the initial centres"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("then kd-tree (Zoltan RCB), rebuilt every 50 steps"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("the decomposition was rebuilt"), std::string::npos) << r.output;
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", 1000, 7);
  const io::SimState last = checkStates(record(dir / "mpi") / "SimState.sim", 1000, 7);
  EXPECT_TRUE(compare(reference, last).sameIds);
  // Bulk: the pile's mean height agrees to 0.05 and its 90th-percentile height to 0.3 bead radii
  // (seen: 0.14 and 1.45 mm on 8 processes, 0.04 and 1.15 mm on 16, the top layer still moving).
  const double mean[2] = {meanCoordinate(reference, 2), meanCoordinate(last, 2)};
  double top[2] = {0, 0};
  int k = 0;
  for (const io::SimState* state : {&reference, &last}) {
    std::vector<double> z;
    for (const io::SimBodyState& b : state->bodies) {
      z.push_back(b.position.z());
    }
    std::sort(z.begin(), z.end());
    top[k] = z[static_cast<std::size_t>(0.9 * static_cast<double>(z.size() - 1))];
    ++k;
  }
  std::printf("%d processes: mean height %.6f m (serial %.6f), 90th percentile %.6f m (%.6f)\n", np,
              mean[1], mean[0], top[1], top[0]);
  EXPECT_NEAR(mean[1], mean[0], 5e-4);
  EXPECT_NEAR(top[1], top[0], 3e-3);
}

INSTANTIATE_TEST_SUITE_P(Oversubscribed, GrainSimMpiManyProcesses, ::testing::Values(8, 16),
                         processCountName);

// A kd-tree rebuilt every 2 steps over a settled lattice (40 x 40 x 15 spheres touching on a
// floor, 16 processes, oversubscribed) finds the same domains every time, and each domain stays
// with the process that holds its bodies: no body moves at a rebuild. Zoltan's own remapping
// relabelled some domains at every rebuild (6000 of the 24000 bodies moved per rebuild). The
// states stay those of the serial run to 1e-9 m (the lattice hardly moves in 8 steps).
TEST_F(GrainSimMpi, KdTreeRebuildsOfASettledLatticeMoveNoBody) {
  const fs::path dir = makeTempDir("mpi_settled_rebuilds");
  const int side = 40;
  const int layers = 15;
  const double spacing = 0.00995;
  const double width = side * spacing + 1e-4;
  std::ostringstream scene;
  scene << pileHead(
      0.008, 8,
      R"(minIter="30" maxIter="30" absTol="1e-9" relTol="1e-6" usePercussionCache="true")",
      kdTreeRebuiltEvery(2), width);
  scene << R"(    <RigidBodies name="lattice" instances=")" << side * side * layers
        << R"(" groupId="10">
      <Geometry><Sphere distribute="uniform" radius="0.005"/></Geometry>
      <DynamicProperties><DynamicState type="simulated"/><Mass distribute="homogen" density="2500"/>
        <InertiaTensor type="homogen"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX=")"
        << side << R"(" gridSizeY=")" << side << R"(" distance=")" << spacing
        << R"(" translation=")" << 0.5 * width << " " << 0.5 * width
        << R"( 0.00499" jitter="false" delta="0" seed="1"/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
  </SceneObjects>
</DynamicsSystem>
)";
  writeText(dir / "lattice.xml", scene.str());
  const CommandResult serial = runSerial(dir / "lattice.xml", dir / "serial");
  ASSERT_EQ(serial.exitCode, 0) << serial.output;
  const CommandResult r = runMpi(16, dir / "lattice.xml", dir / "mpi");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::size_t bodies = static_cast<std::size_t>(side * side * layers);
  const std::regex rebuilds(
      R"(rebuilds +per rebuild: .* bodies moved ([0-9.]+) .*\((\d+) rebuilds\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, rebuilds)) << r.output;
  EXPECT_EQ(std::stoi(m[2].str()), 3) << r.output;
  EXPECT_EQ(std::stod(m[1].str()), 0.0) << r.output;
  const io::SimState reference = checkStates(record(dir / "serial") / "SimState.sim", bodies, 2);
  const io::SimState last = checkStates(record(dir / "mpi") / "SimState.sim", bodies, 2);
  const Difference d = compare(reference, last);
  std::printf("mean height %.9f m (serial %.9f), largest position difference %.3g m\n",
              meanCoordinate(last, 2), meanCoordinate(reference, 2), d.position);
  EXPECT_TRUE(d.sameIds);
  EXPECT_NEAR(meanCoordinate(last, 2), meanCoordinate(reference, 2), 1e-5);
}

}  // namespace
}  // namespace grain
