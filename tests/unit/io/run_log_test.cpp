// SPDX-License-Identifier: MIT
// SimData.dat run log.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/io/run_log.hpp>
#include <grain/io/version.hpp>

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
            "\tTotalEnergy [J]\tNaturalMapError\tKoziaraError\tForcesTime [s]\tBytesSent"
            "\tMessagesSent\tFallbacks");
}

TEST(RunLog, VersionLineNamesGrainsVersion) {
  EXPECT_EQ(RunLogWriter::versionLine(), "# grain " + std::string(versionString()));
}

TEST(RunLog, FileHasHeaderVersionAndOneLinePerStep) {
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
  s.naturalMapError = 2.5e-7;
  s.koziaraError = 0.125;
  for (std::size_t k = 0; k < s.stageSeconds.size(); ++k) {
    s.stageSeconds[k] = 0.001 * static_cast<double>(k + 1);
  }
  s.stepSeconds = 0.125;
  s.bytesSent = 4096;
  s.messagesSent = 12;
  s.fallbacks = 1;
  {
    RunLogWriter w;
    w.open(dir / "SimData.dat");
    w.write(s);
    s.step = 3;
    w.write(s);
  }
  std::stringstream in(test::readText(dir / "SimData.dat"));
  std::string header, version, line1, line2, rest;
  std::getline(in, header);
  std::getline(in, version);
  std::getline(in, line1);
  std::getline(in, line2);
  EXPECT_FALSE(std::getline(in, rest));
  EXPECT_EQ(header, RunLogWriter::headerLine());
  EXPECT_EQ(version, RunLogWriter::versionLine());
  const auto cols = splitTabs(line1);
  ASSERT_EQ(cols.size(), splitTabs(header).size());
  EXPECT_GE(std::stod(cols[0]), 0.0);  // wall time
  EXPECT_EQ(cols[1], "0.002");
  EXPECT_EQ(cols[2], "2");
  EXPECT_EQ(cols[3], "0.125");
  // Stage columns: FirstHalfStep (0.001) ... ContactSolve (0.006), SecondHalfStep (0.007); the
  // Forces stage (0.005), added later, is the last column.
  EXPECT_EQ(cols[4], "0.001");
  EXPECT_EQ(cols[8], "0.006");
  EXPECT_EQ(cols[9], "0.007");
  EXPECT_EQ(cols[21], "0.005");
  EXPECT_EQ(cols[22], "4096");
  EXPECT_EQ(cols[23], "12");
  EXPECT_EQ(cols[24], "1");  // Fallbacks
  EXPECT_EQ(cols[10], "42");
  EXPECT_EQ(cols[11], "0");
  EXPECT_EQ(cols[12], "1");
  EXPECT_EQ(cols[13], "17");
  EXPECT_EQ(cols[14], "1.5e-05");
  EXPECT_EQ(cols[15], "0.75");
  EXPECT_EQ(cols[16], "0.25");
  EXPECT_EQ(cols[17], "-2");
  EXPECT_EQ(cols[18], "-1.25");
  EXPECT_EQ(cols[19], "2.5e-07");
  EXPECT_EQ(cols[20], "0.125");
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
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);  // header, version, two steps
}

/// The header and lines of a log written before the error columns existed (19 columns).
std::string oldFormatLog(int steps, bool partialLast) {
  std::string header = RunLogWriter::headerLine();
  header.resize(header.find("\tNaturalMapError"));
  std::string text = header + "\n";
  for (int k = 1; k <= steps; ++k) {
    text += "0.1\t" + std::to_string(0.01 * k) + "\t" + std::to_string(k);
    for (int c = 3; c < 19; ++c) {
      text += "\t1";
    }
    text += "\n";
  }
  if (partialLast) {
    text += "0.1\t0.5\t";
  }
  return text;
}

TEST(RunLog, AppendingToAnOlderFormatUpgradesIt) {
  test::TempDir dir;
  const auto file = dir / "SimData.dat";
  { std::ofstream(file, std::ios::binary) << oldFormatLog(5, true); }
  StepStats s;
  s.step = 4;
  s.naturalMapError = 1e-9;
  s.koziaraError = 2e-9;
  s.fallbacks = 1;
  {
    RunLogWriter w;
    w.openAppend(file, 3);  // keeps steps 1..3
    w.write(s);
  }
  std::stringstream in(test::readText(file));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, RunLogWriter::headerLine());
  for (int k = 1; k <= 3; ++k) {
    ASSERT_TRUE(std::getline(in, line));
    const auto cols = splitTabs(line);
    ASSERT_EQ(cols.size(), 25u) << line;
    EXPECT_EQ(cols[2], std::to_string(k));
    EXPECT_EQ(cols[18], "1");
    EXPECT_EQ(cols[19], "nan");
    EXPECT_EQ(cols[20], "nan");
    EXPECT_EQ(cols[21], "nan");
    EXPECT_EQ(cols[23], "nan");
    EXPECT_EQ(cols[24], "nan");
  }
  ASSERT_TRUE(std::getline(in, line));
  const auto cols = splitTabs(line);
  ASSERT_EQ(cols.size(), 25u);
  EXPECT_EQ(cols[2], "4");
  EXPECT_EQ(cols[19], "1e-09");
  EXPECT_EQ(cols[20], "2e-09");
  EXPECT_EQ(cols[24], "1");
  EXPECT_FALSE(std::getline(in, line));
  EXPECT_FALSE(std::filesystem::exists(dir / "SimData.dat.part"));

  // Appending again (now in the current format) keeps everything as it is.
  const std::string before = test::readText(file);
  {
    RunLogWriter w;
    w.openAppend(file, 4);
  }
  EXPECT_EQ(test::readText(file), before);
}

TEST(RunLog, AppendingKeepsTheVersionLine) {
  test::TempDir dir;
  const auto file = dir / "SimData.dat";
  StepStats s;
  {
    RunLogWriter w;
    w.open(file);
    for (s.step = 1; s.step <= 3; ++s.step) {
      w.write(s);
    }
  }
  {
    RunLogWriter w;
    w.openAppend(file, 2);
    s.step = 3;
    w.write(s);
  }
  std::stringstream in(test::readText(file));
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], RunLogWriter::headerLine());
  EXPECT_EQ(lines[1], RunLogWriter::versionLine());
  for (std::size_t k = 2; k < 5; ++k) {
    EXPECT_EQ(splitTabs(lines[k])[2], std::to_string(k - 1));
  }
}

TEST(RunLog, UpgradingAnOlderFormatKeepsLaterCommentLines) {
  test::TempDir dir;
  const auto file = dir / "SimData.dat";
  std::string text = oldFormatLog(2, false);
  text.insert(text.find('\n') + 1, "# grain 0.0.9\n");
  { std::ofstream(file, std::ios::binary) << text; }
  {
    RunLogWriter w;
    w.openAppend(file, 2);
  }
  std::stringstream in(test::readText(file));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, RunLogWriter::headerLine());
  std::getline(in, line);
  EXPECT_EQ(line, "# grain 0.0.9");
  std::getline(in, line);
  EXPECT_EQ(splitTabs(line).size(), 25u);
}

TEST(RunLog, AppendingToAnUnknownFormatFails) {
  test::TempDir dir;
  const auto file = dir / "SimData.dat";
  { std::ofstream(file, std::ios::binary) << "# Time [s]\tSomething else\n0\t1\n"; }
  RunLogWriter w;
  EXPECT_THROW(w.openAppend(file, 10), Error);
  EXPECT_EQ(test::readText(file), "# Time [s]\tSomething else\n0\t1\n");
}

}  // namespace
}  // namespace grain::io
