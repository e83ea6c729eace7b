// SPDX-License-Identifier: MIT
// libFuzzer harness of the FCLIB reader on whole HDF5 files (grain::fclib::readProblem and
// readSolution): the input is the file's bytes. Most mutations are refused by libhdf5 itself;
// fuzz_fclib fuzzes the contents of well-formed FCLIB files, which is where grain's own checks
// are.
#include <cstddef>
#include <cstdint>

#include <grain/core/common/error.hpp>
#include <grain/fclib/fclib_io.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = grain::fuzz::writeScratch(data, size, "input.hdf5");
  try {
    const grain::LocalProblem p = grain::fclib::readProblem(path);
    try {
      (void)grain::fclib::readSolution(path, p);
    } catch (const grain::Error&) {
    }
  } catch (const grain::Error&) {
  }
  return 0;
}
