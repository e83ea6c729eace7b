// SPDX-License-Identifier: MIT
// SimData.dat run log.
#include <sstream>

#include <gtest/gtest.h>

#include <grain/io/run_log.hpp>

#include "io_test_util.hpp"

namespace grain::io {
namespace {

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string item;
  while (std::getline(s, item, '\t')) {
    out.push_back(item);
  }
  return out;
}

TEST(RunLog, HeaderNamesColumnsWithUnits) {
  EXPECT_EQ(RunLogWriter::headerLine(),
            "# WallTime [s]\tSimulationTime [s]\tStep\tStepTime [s]\tFirstHalfStepTime [s]"
            "\tExchangeTime [s]\tCollisionDetectionTime [s]\tContactGraphTime [s]"
            "\tContactSolveTime [s]\tSecondHalfStepTime [s]\tnIterations\tConverged\tIsFinite"
            "\tnContacts\tMaxOverlap [m]\tKinEnergy [J]\tRotKinEnergy [J]\tPotEnergy [J]"
            "\tTotalEnergy [J]");
}

TEST(RunLog, FileHasHeaderAndOneLinePerStep) {
  test::TempDir dir;
  StepStats s;
  s.time = 0.002;
  s.step = 2;
  s.contacts = 17;
  s.iterations = 42;
  s.converged = false;
  s.finite = true;
  s.maxPenetration = 1.5e-5;
  s.kineticEnergy = 0.75;
  s.rotationalEnergy = 0.25;
  s.potentialEnergy = -2.0;
  for (std::size_t k = 0; k < s.stageSeconds.size(); ++k) {
    s.stageSeconds[k] = 0.001 * static_cast<double>(k + 1);
  }
  s.stepSeconds = 0.125;
  {
    RunLogWriter w;
    w.open(dir / "SimData.dat");
    w.write(s);
    s.step = 3;
    w.write(s);
  }
  std::stringstream in(test::readText(dir / "SimData.dat"));
  std::string header, line1, line2, rest;
  std::getline(in, header);
  std::getline(in, line1);
  std::getline(in, line2);
  EXPECT_FALSE(std::getline(in, rest));
  EXPECT_EQ(header, RunLogWriter::headerLine());
  const auto cols = splitTabs(line1);
  ASSERT_EQ(cols.size(), splitTabs(header).size());
  EXPECT_GE(std::stod(cols[0]), 0.0);  // wall time
  EXPECT_EQ(cols[1], "0.002");
  EXPECT_EQ(cols[2], "2");
  EXPECT_EQ(cols[3], "0.125");
  EXPECT_EQ(cols[4], "0.001");
  EXPECT_EQ(cols[9], "0.006");
  EXPECT_EQ(cols[10], "42");
  EXPECT_EQ(cols[11], "0");
  EXPECT_EQ(cols[12], "1");
  EXPECT_EQ(cols[13], "17");
  EXPECT_EQ(cols[14], "1.5e-05");
  EXPECT_EQ(cols[15], "0.75");
  EXPECT_EQ(cols[16], "0.25");
  EXPECT_EQ(cols[17], "-2");
  EXPECT_EQ(cols[18], "-1.25");
  EXPECT_EQ(splitTabs(line2)[2], "3");
}

TEST(RunLog, LinesAreFlushedRegularly) {
  test::TempDir dir;
  RunLogWriter w;
  w.flushEveryLines = 2;
  w.flushEverySeconds = 1e9;
  w.open(dir / "SimData.dat");
  StepStats s;
  w.write(s);
  w.write(s);  // second line triggers a flush
  const std::string text = test::readText(dir / "SimData.dat");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

}  // namespace
}  // namespace grain::io
