// SPDX-License-Identifier: MIT
// Helpers of the tests that start grain-sim-mpi through mpiexec (grain_sim_mpi_test.cpp,
// golden_state_test.cpp): the command line, the record folder of a run and the check of its
// .sim file. GRAIN_MPIEXEC and GRAIN_SIM_MPI_EXE are defined by tests/CMakeLists.txt.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <grain/io/sim_file.hpp>

namespace grain::testing {

/// Lets mpiexec (OpenMPI) start processes as root, as the tests do in the build container.
inline void allowMpiRunAsRoot() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
}

/// The start of the command running grain-sim-mpi on `np` processes (its options follow).
inline std::string mpirun(int np) {
  return std::string(GRAIN_MPIEXEC) + " --oversubscribe -np " + std::to_string(np) + " " +
         GRAIN_SIM_MPI_EXE;
}

/// The record folder of a run written to `out` (its SimState.sim and the processes' logs).
inline std::filesystem::path record(const std::filesystem::path& out) {
  return out / "SimFiles" / "SimDataRECORD_0";
}

/// Every state of the file holds `bodies` distinct ids; returns the last state.
inline io::SimState checkStates(const std::filesystem::path& sim, std::size_t bodies,
                                std::size_t states) {
  io::SimFileReader reader;
  reader.open(sim);
  EXPECT_FALSE(reader.truncated());
  EXPECT_EQ(reader.stateCount(), states);
  EXPECT_EQ(reader.header().nSimBodies, bodies);
  io::SimState last;
  for (std::size_t k = 0; k < reader.stateCount(); ++k) {
    last = reader.readState(k);  // throws on a duplicate id
    EXPECT_EQ(last.bodies.size(), bodies);
  }
  return last;
}

}  // namespace grain::testing
