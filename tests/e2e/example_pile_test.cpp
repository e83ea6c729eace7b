// SPDX-License-Identifier: MIT
// The default example, scenes/pile.xml, run by grain-sim as a user runs it: the poured pile comes
// to rest (docs/physics.md, "Piles that come to rest").
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

/// The rows of a SimData.dat, split at tabs, and the column names of its header line.
struct RunLogTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  std::size_t column(const std::string& name) const {
    for (std::size_t k = 0; k < columns.size(); ++k) {
      if (columns[k] == name) {
        return k;
      }
    }
    ADD_FAILURE() << "SimData.dat has no column " << name;
    return 0;
  }
};

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) {
    fields.push_back(field);
  }
  return fields;
}

RunLogTable readRunLog(const fs::path& file) {
  RunLogTable t;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) {
      if (t.columns.empty()) {
        t.columns = splitTabs(line.substr(2));
      }
    } else if (!line.empty()) {
      t.rows.push_back(splitTabs(line));
    }
  }
  return t;
}

TEST(ExamplePile, ComesToRest) {
  // Not "example_pile": ExampleScenes.RunsShortly runs the example scenes in such folders.
  const fs::path dir = makeTempDir("example_pile_comes_to_rest");
  const fs::path scene = fs::path(GRAIN_SOURCE_DIR) / "scenes" / "pile.xml";
  // The scene as shipped; only the recording of states is switched off (it does not change the
  // run, and SimData.dat is written all the same).
  const CommandResult r =
      runCommand(std::string(GRAIN_SIM_EXE) + " -s " + scene.string() + " -g " +
                 (dir / "out").string() + " --set 'SceneSettings/RecorderSettings/@mode=noOutput'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const RunLogTable log = readRunLog(dir / "out" / "SimFiles" / "SimDataRECORD_0" / "SimData.dat");
  const std::size_t kinetic = log.column("KinEnergy [J]");
  const std::size_t converged = log.column("Converged");
  const std::size_t time = log.column("SimulationTime [s]");
  ASSERT_GE(log.rows.size(), 100u);
  // Rest: the kinetic energy (translation and rotation of the 3000 beads) below 1e-6 J over the
  // last 0.1 s, and the contact problems of the last 10 steps converged. Measured: 1.3e-12 J at
  // the end (at most 2.7e-9 J in the last 0.1 s), the last 17 steps converged in 9-14 sweeps; on
  // a flat floor 1.0e-6 J, none of the last 10 steps converged.
  const std::size_t window = 50;
  const std::size_t n = log.rows.size();
  for (std::size_t k = n - window; k < n; ++k) {
    const std::vector<std::string>& row = log.rows[k];
    ASSERT_GT(row.size(), std::max({kinetic, converged, time})) << "row " << k;
    EXPECT_LT(std::stod(row[kinetic]), 1e-6) << "t = " << row[time] << " s";
    if (k >= n - 10) {
      EXPECT_EQ(row[converged], "1") << "t = " << row[time] << " s";
    }
  }
  EXPECT_NEAR(std::stod(log.rows.back()[time]), 1.0, 1e-9);
}

}  // namespace
}  // namespace grain
