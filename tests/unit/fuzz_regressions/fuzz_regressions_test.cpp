// SPDX-License-Identifier: MIT
// The inputs of tests/data/fuzz/ that the fuzz harnesses (tests/fuzz, docs/reliability.md) found
// crashing, hanging or allocating without bound: each must now end in a clear error naming the
// file and the field.
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#ifdef GRAIN_TEST_WITH_FCLIB
#include <grain/fclib/fclib_io.hpp>
#endif

namespace {

std::string fuzzData(const std::string& name) {
  return std::string(GRAIN_SOURCE_DIR) + "/tests/data/fuzz/" + name;
}

/// Runs `read` and checks that it throws grain::Error whose message contains every part.
template <typename Read>
void expectError(Read read, std::initializer_list<std::string> parts) {
  try {
    read();
  } catch (const grain::Error& e) {
    const std::string what = e.what();
    for (const std::string& part : parts) {
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
    }
    return;
  }
  ADD_FAILURE() << "no grain::Error";
}

}  // namespace

#ifdef GRAIN_TEST_WITH_FCLIB
// An HDF5 dataset may declare any size and store nothing (fill values): /fclib_global/M/m
// declared 130744321 ints, and the reader allocated 520 MB before reading them.
TEST(FuzzRegressions, FclibDatasetDeclaringMoreThanTheFileHolds) {
  const std::string file = fuzzData("fclib/declared-size-unwritten.hdf5");
  expectError([&] { grain::fclib::readProblem(file); },
              {file, "/fclib_global/M/m", "declares 130744321 elements",
               "more than the file of 7632 bytes can hold"});
}

// W/m and W/n are plain numbers: 2000000000 x 2000000000 allocated an 8 GB column index for a
// problem of one contact.
TEST(FuzzRegressions, FclibMatrixLargerThanItsProblem) {
  const std::string file = fuzzData("fclib/matrix-size-beyond-vectors.hdf5");
  expectError([&] { grain::fclib::readProblem(file); },
              {file, "/fclib_local/W", "is 2000000000 x 2000000000, expected 3 x 3"});
}

// Found by fuzz_fclib as its slowest input (17 s, 600 MB under ASan for 49 kB): M/m =
// 33489346 rows for a problem whose f has 450 entries; Eigen's setFromTriplets allocated by the
// row count before the sizes were compared.
TEST(FuzzRegressions, FclibGlobalMatrixLargerThanItsProblem) {
  const std::string file = fuzzData("fclib/global-matrix-rows-beyond-vectors.hdf5");
  expectError([&] { grain::fclib::readProblem(file); },
              {file, "/fclib_global/M", "is 33489346 x 450, expected 450 x 450"});
}

// Found by fuzz_fclib_raw in the check of fix 1 itself: /fclib_local/vectors/q declaring
// 7811316954977559398 doubles, 6.2e19 bytes, which the message converted to a 64-bit integer
// (undefined behaviour).
TEST(FuzzRegressions, FclibDatasetSizeBeyond64Bits) {
  const std::string file = fuzzData("fclib/dataset-size-beyond-2-64-bytes.hdf5");
  expectError([&] { grain::fclib::readProblem(file); },
              {file, "/fclib_local/vectors/q",
               "declares 7811316954977559398 elements of 8 bytes (62490535639820476416 bytes)"});
}

// A title stored as a dataset of two strings was read into a buffer for one.
TEST(FuzzRegressions, FclibTitleOfSeveralStrings) {
  const std::string file = fuzzData("fclib/title-two-strings.hdf5");
  expectError([&] { grain::fclib::readProblem(file); },
              {file, "/fclib_local/info/title", "must hold one string, holds 2"});
}
// 300000000 block rows announced in a 48-byte file: 2.4 GB allocated before reading them.
TEST(FuzzRegressions, SiconosBlockCountBeyondTheFile) {
  const std::string file = fuzzData("siconos/block-count-beyond-file.dat");
  expectError([&] { grain::fclib::readProblem(file); },
              {file, "unexpected end of file: 300000001 values of the cumulative block sizes"});
}

// Cumulative block row sizes 4, 3 for a 3 x 3 matrix: the first block's entries lay outside
// the matrix (an assertion in Eigen, memory corruption without assertions).
TEST(FuzzRegressions, SiconosBlockOutsideTheMatrix) {
  const std::string file = fuzzData("siconos/block-outside-matrix.dat");
  expectError([&] { grain::fclib::readProblem(file); },
              {file, "cumulative block row size 4 after 0: must increase up to 3"});
}
#endif
