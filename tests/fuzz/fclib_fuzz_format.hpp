// SPDX-License-Identifier: MIT
// The input format of fuzz_fclib: a list of datasets from which the harness writes a
// well-formed HDF5 file, so the fuzzer varies the contents of FCLIB files (sizes, indices,
// values, missing or mistyped datasets) rather than HDF5's own structures. fclib_fuzz_seed turns
// FCLIB files into this format.
//
// Records, until the input ends:
//   u8  path   index into kFclibFuzzPaths (modulo its size)
//   u8  kind   (modulo 7) see FclibFuzzKind
//   u32 count  elements (little endian)
//   then, for kinds with data, count elements (4-byte ints, 8-byte doubles, or count bytes of
//   text); a record whose data runs past the end of the input declares `count` elements but
//   writes none (HDF5 reads them as the fill value 0), which is how huge sizes get in.
#pragma once

#include <array>
#include <cstdint>

namespace grain::fuzz {

enum class FclibFuzzKind : std::uint8_t {
  Int32 = 0,        ///< 1-D int32 dataset
  Double = 1,       ///< 1-D float64 dataset
  String = 2,       ///< scalar fixed-length string of count bytes
  Group = 3,        ///< a group where a dataset is expected
  Scalar = 4,       ///< scalar int32 dataset (count ignored, 4 bytes of data)
  Float32 = 5,      ///< 1-D float32 dataset (4-byte elements)
  StringArray = 6,  ///< 1-D dataset of two fixed-length strings of count bytes each
};
inline constexpr int kFclibFuzzKinds = 7;

inline constexpr std::array<const char*, 48> kFclibFuzzPaths = {
    "/fclib_local/spacedim",
    "/fclib_local/W/m",
    "/fclib_local/W/n",
    "/fclib_local/W/nz",
    "/fclib_local/W/nzmax",
    "/fclib_local/W/p",
    "/fclib_local/W/i",
    "/fclib_local/W/x",
    "/fclib_local/vectors/q",
    "/fclib_local/vectors/mu",
    "/fclib_local/info/title",
    "/fclib_local/info/description",
    "/fclib_local/info/math_info",
    "/fclib_local/V/m",
    "/fclib_local/R/m",
    "/fclib_global/spacedim",
    "/fclib_global/M/m",
    "/fclib_global/M/n",
    "/fclib_global/M/nz",
    "/fclib_global/M/nzmax",
    "/fclib_global/M/p",
    "/fclib_global/M/i",
    "/fclib_global/M/x",
    "/fclib_global/H/m",
    "/fclib_global/H/n",
    "/fclib_global/H/nz",
    "/fclib_global/H/nzmax",
    "/fclib_global/H/p",
    "/fclib_global/H/i",
    "/fclib_global/H/x",
    "/fclib_global/G/m",
    "/fclib_global/vectors/f",
    "/fclib_global/vectors/w",
    "/fclib_global/vectors/mu",
    "/fclib_global/vectors/b",
    "/fclib_global/info/title",
    "/fclib_global/info/description",
    "/fclib_global/info/math_info",
    "/solution/r",
    "/solution/u",
    "/solution/v",
    "/solution/l",
    "/guesses/1/r",
    "/guesses/1/u",
    "/guesses/1/v",
    "/guesses/1/l",
    "/guesses/number_of_guesses",
    "/fclib_local",
};

}  // namespace grain::fuzz
