// SPDX-License-Identifier: MIT
// libFuzzer harness of the Siconos FrictionContactProblem text reader
// (grain::fclib::readSiconosDat, through readProblem as grain-fclib reads a problem): the input
// is a whole .dat file. A malformed file must end in grain::Error naming the file, never in a
// crash, an uncaught exception or an allocation beyond what the file can describe.
#include <cstddef>
#include <cstdint>

#include <grain/core/common/error.hpp>
#include <grain/fclib/fclib_io.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Files starting with the HDF5 signature go to the FCLIB harnesses.
  const std::string path = grain::fuzz::writeScratch(data, size, "input.dat");
  try {
    const grain::LocalProblem p = grain::fclib::readProblem(path);
    (void)p;
  } catch (const grain::Error&) {
  }
  return 0;
}
