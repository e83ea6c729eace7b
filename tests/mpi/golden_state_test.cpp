// SPDX-License-Identifier: MIT
// The golden determinism test (docs/validation.md#golden-state): the final state of a settling
// pile (tests/data/scenes/golden_pile.xml: 320 beads, 150 steps, SORContact to relTol 1e-6 with
// warm start), run serially and on 1-4 processes with a fixed grid, hashes to the values pinned
// here. Each run is made twice and must give the same hash (the run is reproducible); the hash must
// then equal the pin, so that any change of grain's results is noticed and the pin updated on
// purpose. The process counts have a pin each: split bodies change the solver's iterates, so the
// distributed runs agree with the serial one only to solver tolerance.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/io/sim_file.hpp>

#include "../e2e/e2e_util.hpp"
#include "mpi_test_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;
using namespace testing;

/// A run of the golden pile: serially (processes 0) or on `processes` processes with the grid
/// dimension `grid` (the scene's MPISettings fix a predefined grid; its dimension is set here).
struct GoldenRun {
  int processes;
  const char* grid;
  std::uint64_t pin;  ///< the hash of the final state (goldenHash)
};

// The pins, measured with the release preset (GCC 12.2, x86-64 without -march, Eigen 3.4,
// OpenMPI 4.1, Debian 12; a Debug build gives the same). Update one only for a change of results
// you mean to make, and say in the commit which change moved it and why the new results are right
// (docs/validation.md).
constexpr GoldenRun kSerial{0, "", 0xa68c8df09ef73403ULL};
constexpr GoldenRun kOneProcess{1, "1 1 1", 0xa68c8df09ef73403ULL};
constexpr GoldenRun kTwoProcesses{2, "2 1 1", 0xcdeb10be10dbe70fULL};
constexpr GoldenRun kThreeProcesses{3, "3 1 1", 0x10b2202c58406823ULL};
constexpr GoldenRun kFourProcesses{4, "2 2 1", 0xd41349c1f0a6c3bdULL};

/// FNV-1a (64 bit) over `size` bytes, continuing from `hash`.
std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t k = 0; k < size; ++k) {
    hash ^= bytes[k];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::uint64_t fnv1a(std::uint64_t hash, double value) {
  return fnv1a(hash, &value, sizeof value);
}

/// The hash of a state: its time, its body count, then per body in increasing id order the id
/// and the bytes (IEEE 754 doubles in memory order) of r_S (I), the orientation quaternion (x, y,
/// z, w), v_S (I) and the body-frame angular velocity.
std::uint64_t goldenHash(const io::SimState& state) {
  std::vector<const io::SimBodyState*> bodies;
  for (const io::SimBodyState& b : state.bodies) {
    bodies.push_back(&b);
  }
  std::sort(bodies.begin(), bodies.end(),
            [](const io::SimBodyState* a, const io::SimBodyState* b) { return a->id < b->id; });
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  hash = fnv1a(hash, state.time);
  const std::uint64_t count = bodies.size();
  hash = fnv1a(hash, &count, sizeof count);
  for (const io::SimBodyState* b : bodies) {
    const std::uint64_t id = b->id;
    hash = fnv1a(hash, &id, sizeof id);
    for (int i = 0; i < 3; ++i) {
      hash = fnv1a(hash, b->position[i]);
    }
    for (int i = 0; i < 4; ++i) {
      hash = fnv1a(hash, b->orientation.coeffs()[i]);
    }
    for (int i = 0; i < 3; ++i) {
      hash = fnv1a(hash, b->velocity[i]);
    }
    for (int i = 0; i < 3; ++i) {
      hash = fnv1a(hash, b->omegaBody[i]);
    }
  }
  return hash;
}

std::string hex(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string describe(const GoldenRun& run) {
  return run.processes == 0 ? std::string("serial (grain-sim)")
                            : std::to_string(run.processes) + " process(es), grid " + run.grid;
}

/// Runs the golden pile once into `out` and returns the hash of its last state.
std::uint64_t runOnce(const GoldenRun& run, const fs::path& out) {
  const fs::path scene = testDataDir() / "scenes" / "golden_pile.xml";
  std::string command;
  if (run.processes == 0) {
    command = std::string(GRAIN_SIM_EXE) + " -s " + scene.string() + " -g " + out.string();
  } else {
    command = mpirun(run.processes) + " -s " + scene.string() + " -g " + out.string() +
              " --set 'SceneSettings/MPISettings/ProcessTopology/Topology/@dimension=" + run.grid +
              "'";
  }
  const CommandResult r = runCommand(command);
  EXPECT_EQ(r.exitCode, 0) << command << "\n" << r.output;
  if (r.exitCode != 0) {
    return 0;
  }
  // 320 beads, states at t = 0, 0.05, 0.1, 0.15 s
  const io::SimState last = checkStates(record(out) / "SimState.sim", 320, 4);
  EXPECT_NEAR(last.time, 0.15, 1e-9);
  return goldenHash(last);
}

/// Runs `run` twice: both runs hash alike, and the hash is the pin.
void checkPin(const GoldenRun& run, const std::string& name) {
  allowMpiRunAsRoot();
  const fs::path dir = makeTempDir("golden_" + name);
  const std::uint64_t first = runOnce(run, dir / "a");
  const std::uint64_t second = runOnce(run, dir / "b");
  ASSERT_FALSE(::testing::Test::HasFailure());
  ASSERT_EQ(hex(first), hex(second))
      << describe(run) << ": two runs of the same scene end in different states (hashes "
      << hex(first) << " and " << hex(second)
      << "): the run is not reproducible; fix that before touching the pin (" << dir.string()
      << ")";
  EXPECT_EQ(hex(first), hex(run.pin))
      << describe(run) << ": the final state of tests/data/scenes/golden_pile.xml hashes to "
      << hex(first) << ", the pin is " << hex(run.pin)
      << " (both runs agree, so grain's results changed).\n"
      << "If this change of results is intended (a new solver default, contact order, "
         "collision or integration change, a new compiler or platform), update the pin of this "
         "run in tests/mpi/golden_state_test.cpp to "
      << hex(first)
      << " and say in the commit which change moved it and why the new results are right "
         "(docs/validation.md#golden-state). If it is not intended, the change broke "
         "determinism or results: compare the runs in "
      << dir.string() << " with those of the previous commit.";
}

TEST(GoldenState, SerialRunMatchesThePin) {
  checkPin(kSerial, "serial");
}

TEST(GoldenState, OneProcessMatchesThePin) {
  checkPin(kOneProcess, "np1");
}

TEST(GoldenState, TwoProcessesMatchThePin) {
  checkPin(kTwoProcesses, "np2");
}

TEST(GoldenState, ThreeProcessesMatchThePin) {
  checkPin(kThreeProcesses, "np3");
}

TEST(GoldenState, FourProcessesMatchThePin) {
  checkPin(kFourProcesses, "np4");
}

}  // namespace
}  // namespace grain
