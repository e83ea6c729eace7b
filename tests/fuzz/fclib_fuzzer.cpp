// SPDX-License-Identifier: MIT
// libFuzzer harness of the FCLIB reader (grain::fclib::readProblem, readSolution) on
// well-formed HDF5 files whose contents come from the input (format: fclib_fuzz_format.hpp).
// Sizes, indices, values, missing, empty or mistyped datasets must end in grain::Error naming
// the file and the dataset, never in a crash, an uncaught exception or an allocation beyond what
// the file holds.
#include <cstddef>
#include <cstdint>
#include <string>

#include <grain/core/common/error.hpp>
#include <grain/fclib/fclib_io.hpp>

#include "fclib_fuzz_format.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = grain::fuzz::scratchPath("input.hdf5");
  if (!grain::fuzz::writeFclibFuzzFile(path, data, size)) {
    return 0;
  }
  try {
    const grain::LocalProblem p = grain::fclib::readProblem(path);
    for (const bool guess : {false, true}) {
      try {
        (void)grain::fclib::readSolution(path, p, guess);
      } catch (const grain::Error&) {
      }
    }
  } catch (const grain::Error&) {
  }
  return 0;
}
