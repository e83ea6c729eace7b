// SPDX-License-Identifier: MIT
// Faults (docs/reliability.md): a full disk while writing, SIGKILL at random moments, and an
// instance count beyond memory. After each, every complete state is readable and --restart
// continues to the same bytes as an uninterrupted run.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include <grain/io/restart.hpp>
#include <grain/io/sim_file.hpp>

#include "e2e_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

/// Bytes of one state of scene(): time and 40 bodies.
constexpr std::size_t kStateBytes = 8 + 40 * 112;

/// 40 spinning bricks dropped onto a floor (contacts and warm start from about step 20 on),
/// every `every`-th step recorded.
std::string scene(double endTime, int every) {
  return bricksSceneXml(endTime, every, 40, 4);
}

fs::path recordOf(const fs::path& out) {
  return out / "SimFiles" / "SimDataRECORD_0";
}

std::string sim(const fs::path& sceneFile, const fs::path& out) {
  return std::string(GRAIN_SIM_EXE) + " -s " + sceneFile.string() + " -g " + out.string();
}

std::string restart(const fs::path& record) {
  return std::string(GRAIN_SIM_EXE) + " --restart " + record.string();
}

/// The step numbers of the lines of a run log, in order.
std::vector<std::uint64_t> logSteps(const fs::path& log) {
  std::istringstream in(readText(log));
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

/// Checks that `file` reads (its complete states) and that each of them is, byte for byte, the
/// state of the uninterrupted run `reference` (the .sim file's bytes). Returns the state count.
std::size_t expectCompleteStatesMatch(const fs::path& file, const std::string& reference) {
  io::SimFileReader reader;
  reader.open(file);
  const std::string bytes = readText(file);
  const std::size_t perState = reader.header().bytesPerState();
  EXPECT_EQ(bytes.size(),
            io::SimFileHeader::kSize + reader.stateCount() * perState + reader.trailingBytes());
  for (std::size_t k = 0; k < reader.stateCount(); ++k) {
    const std::size_t at = io::SimFileHeader::kSize + k * perState;
    EXPECT_EQ(bytes.compare(at, perState, reference, at, perState), 0)
        << file << ": state " << k << " differs from the uninterrupted run";
    (void)reader.readState(k);  // every complete state decodes
  }
  return reader.stateCount();
}

/// The run log has the line of every step from 1 to `steps` exactly once, in order.
void expectLogHasEveryStepOnce(const fs::path& log, std::uint64_t steps) {
  const std::vector<std::uint64_t> s = logSteps(log);
  ASSERT_EQ(s.size(), steps) << log;
  for (std::size_t k = 0; k < s.size(); ++k) {
    ASSERT_EQ(s[k], k + 1) << log << ": line " << k;
  }
}

TEST(Faults, DiskFullIsAnErrorNamingTheFileAndRestartContinues) {
  // A file-size limit (ulimit -f, in KiB) stands for a full disk: write() fails with EFBIG
  // (grain-sim ignores SIGXFSZ, which would otherwise kill it without a message).
  const fs::path dir = makeTempDir("faults_disk_full");
  writeText(dir / "scene.xml", scene(1.0, 2));  // 100 steps, 51 states of 4.5 kB
  ASSERT_EQ(runCommand(sim(dir / "scene.xml", dir / "full")).exitCode, 0);
  const std::string reference = readText(recordOf(dir / "full") / "SimState.sim");

  const fs::path out = dir / "limited";
  const CommandResult r = runCommand(
      "bash -c 'ulimit -f 64 && exec " + sim(dir / "scene.xml", out) + "'", dir / "stderr.txt");
  const fs::path record = recordOf(out);
  EXPECT_EQ(r.exitCode, 1) << r.output << r.errors;
  // The message names the file that could not be written and why.
  EXPECT_NE(r.errors.find("grain-sim: " + (record / "SimState.sim").string() +
                          ": cannot write the state at t = "),
            std::string::npos)
      << r.errors;
  EXPECT_NE(r.errors.find("File too large"), std::string::npos) << r.errors;
  EXPECT_EQ(fs::file_size(record / "SimState.sim"), 64u * 1024u);
  // Every complete state before it reads, equal to the uninterrupted run's; grain-convert too.
  const std::size_t states = expectCompleteStatesMatch(record / "SimState.sim", reference);
  EXPECT_EQ(states, (64u * 1024u - io::SimFileHeader::kSize) / kStateBytes);
  const CommandResult info =
      runCommand(std::string(GRAIN_CONVERT_EXE) + " info " + (record / "SimState.sim").string());
  EXPECT_EQ(info.exitCode, 0) << info.output;
  EXPECT_NE(info.output.find(" " + std::to_string(states) + " (4488 bytes"), std::string::npos)
      << info.output;

  // With space again, --restart continues to the same bytes as the uninterrupted run.
  const CommandResult c = runCommand(restart(record));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_EQ(c.output.find("no warm-start data"), std::string::npos) << c.output;
  EXPECT_EQ(readText(record / "SimState.sim"), reference);
  expectLogHasEveryStepOnce(record / "SimData.dat", 100);
}

/// Starts `command` (run by /bin/sh, output to `log`) and returns its process id.
pid_t spawnShell(const std::string& command, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // exec: the shell becomes grain-sim, so the signal reaches grain-sim itself.
  const std::string line = "exec " + command;
  const char* argv[] = {"sh", "-c", line.c_str(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

TEST(Faults, KillNineAtRandomMomentsThenRestartIsBitIdentical) {
  // A run killed with SIGKILL 20 times at random moments, each time continued with --restart
  // (a first run killed before its first complete state is started again; a run that finishes
  // between two kills is checked and started again). After every kill the .sim file reads up to
  // its last complete state, each equal to the uninterrupted run's; a finished run has the same
  // bytes as the uninterrupted one and every step once in its run log.
  const fs::path dir = makeTempDir("faults_kill9");
  constexpr std::uint64_t kSteps = 1000;  // a state every step
  writeText(dir / "scene.xml", scene(0.01 * kSteps, 1));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(runCommand(sim(dir / "scene.xml", dir / "full")).exitCode, 0);
  const double runSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string reference = readText(recordOf(dir / "full") / "SimState.sim");
  ASSERT_EQ(reference.size(), io::SimFileHeader::kSize + (kSteps + 1) * kStateBytes);

  // Kill moments: uniform up to `window` after the start of a process, at first 1/10 of the
  // uninterrupted run's duration; the window doubles (up to the whole run) after a kill that came
  // before the first complete state and halves after a run that finished first, so that a machine
  // slower than during the uninterrupted run (a process's start-up alone can take longer than the
  // first window) still has kills between states. The seed is fixed, the moments are not (the
  // machine's speed varies), and nothing asserted depends on them.
  std::mt19937 random(20261125);
  double window = runSeconds / 10.0;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const fs::path out = dir / "killed";
  const fs::path record = recordOf(out);
  const auto expectFinishedRunMatches = [&] {
    EXPECT_TRUE(readText(record / "SimState.sim") == reference)
        << "the restarted run differs from the uninterrupted one";
    expectLogHasEveryStepOnce(record / "SimData.dat", kSteps);
  };
  std::size_t kills = 0;
  std::size_t finished = 0;
  std::size_t lastCount = 0;
  std::size_t maxCount = 0;
  while (kills < 20) {
    const bool started = fs::exists(record / "SimState.sim");
    const pid_t pid =
        spawnShell(started ? restart(record) : sim(dir / "scene.xml", out), dir / "runs.log");
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(window * unit(random)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status)) {
      // Finished before the signal: check it and start a new run.
      ASSERT_EQ(WEXITSTATUS(status), 0) << readText(dir / "runs.log");
      expectFinishedRunMatches();
      ++finished;
      fs::remove_all(out);
      lastCount = 0;
      window /= 2.0;
      continue;
    }
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ++kills;
    if (!fs::exists(record / "SimState.sim")) {
      // Killed before the .sim file was created: nothing to continue, start again.
      fs::remove_all(out);
      window = std::min(2.0 * window, runSeconds);
      continue;
    }
    if (fs::file_size(record / "SimState.sim") < io::SimFileHeader::kSize + kStateBytes) {
      // Killed before the first state was complete: a restart refuses; start again.
      const CommandResult r = runCommand(restart(record));
      EXPECT_NE(r.exitCode, 0) << r.output;
      EXPECT_NE(r.exitCode, -1) << r.output;
      fs::remove_all(out);
      lastCount = 0;
      window = std::min(2.0 * window, runSeconds);
      continue;
    }
    const std::size_t count = expectCompleteStatesMatch(record / "SimState.sim", reference);
    EXPECT_GE(count, lastCount) << "a complete state was lost at kill " << kills;
    lastCount = count;
    maxCount = std::max(maxCount, count);
  }
  // The last restart runs to the end (a new run if the last kill left nothing to continue).
  const CommandResult c = runCommand(
      fs::exists(record / "SimState.sim") ? restart(record) : sim(dir / "scene.xml", out));
  ASSERT_EQ(c.exitCode, 0) << c.output;
  EXPECT_EQ(c.output.find("no warm-start data"), std::string::npos) << c.output;
  expectFinishedRunMatches();
  EXPECT_GT(maxCount, 1u) << "no kill came after the first state";
  std::printf(
      "uninterrupted run %.2f s; 20 kills, %zu runs finished between kills; at most %zu "
      "of %llu states before a kill\n",
      runSeconds, finished, maxCount, static_cast<unsigned long long>(kSteps + 1));
}

TEST(Faults, NonFiniteStateNamesTheBodyItsGroupAndTheStep) {
  // Velocities beyond the largest double: the positions become infinite and the run stops on
  // the next step with a message naming the first such body, its group and the step.
  const fs::path dir = makeTempDir("faults_non_finite");
  std::string text = scene(2.0, 1);
  const auto replace = [&text](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("absTransVel=\"0.7\"", "absTransVel=\"1e308\"");
  replace("value=\"9.81\" direction=\"0 0.2 -1\"", "value=\"1e308\" direction=\"0 0 1\"");
  writeText(dir / "scene.xml", text);
  const CommandResult r = runCommand(sim(dir / "scene.xml", dir / "out"), dir / "stderr.txt");
  EXPECT_EQ(r.exitCode, 1) << r.output << r.errors;
  EXPECT_NE(r.errors.find(": body (2,0) of group 2 has a non-finite "), std::string::npos)
      << r.errors;
  EXPECT_NE(r.errors.find("(RigidBodies \"bricks\")"), std::string::npos) << r.errors;
  EXPECT_NE(r.errors.find("step "), std::string::npos) << r.errors;
}

TEST(Faults, InstanceCountBeyondMemoryIsRefusedUpFront) {
  const fs::path dir = makeTempDir("faults_instances");
  std::string text = scene(1.0, 1);
  text.replace(text.find("instances=\"40\""), 14, "instances=\"1e9\"");
  writeText(dir / "huge.xml", text);
  const CommandResult r = runCommand(sim(dir / "huge.xml", dir / "out"), dir / "stderr.txt");
  EXPECT_EQ(r.exitCode, 2) << r.output << r.errors;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.find("instances=\"1e9\""); ++i) {
    line += text[i] == '\n' ? 1 : 0;
  }
  EXPECT_NE(r.errors.find((dir / "huge.xml").string() + ":" + std::to_string(line) +
                          ": SceneObjects/RigidBodies[name=\"bricks\"]: attribute 'instances' "
                          "(\"1e9\"): the scene's 1e+09 bodies need an estimated 768 GB of "
                          "memory"),
            std::string::npos)
      << r.errors;
  EXPECT_EQ(r.errors.find("bad_alloc"), std::string::npos) << r.errors;
  EXPECT_FALSE(fs::exists(dir / "out"));  // nothing written
}

}  // namespace
}  // namespace grain
