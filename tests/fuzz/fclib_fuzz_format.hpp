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
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <hdf5.h>

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

/// Writes the HDF5 file described by an input of this format; false if HDF5 refused.
inline bool writeFclibFuzzFile(const std::string& path, const std::uint8_t* data,
                               std::size_t size) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // H5Lexists fails on missing parents
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    return false;
  }
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  std::size_t pos = 0;
  while (pos + 6 <= size) {
    const char* name = kFclibFuzzPaths[data[pos] % kFclibFuzzPaths.size()];
    const auto kind = static_cast<FclibFuzzKind>(data[pos + 1] % kFclibFuzzKinds);
    std::uint32_t count = 0;
    std::memcpy(&count, data + pos + 2, 4);
    pos += 6;
    if (H5Lexists(file, name, H5P_DEFAULT) > 0) {
      continue;  // a path given twice: the first record counts
    }
    if (kind == FclibFuzzKind::Group) {
      const hid_t g = H5Gcreate2(file, name, lcpl, H5P_DEFAULT, H5P_DEFAULT);
      if (g >= 0) {
        H5Gclose(g);
      }
      continue;
    }
    hid_t fileType = H5T_STD_I32LE;
    hid_t memType = H5T_NATIVE_INT32;
    std::size_t elementSize = 4;
    hid_t space = -1;
    bool ownType = false;
    if (kind == FclibFuzzKind::Scalar) {
      count = 1;
      space = H5Screate(H5S_SCALAR);
    } else if (kind == FclibFuzzKind::String || kind == FclibFuzzKind::StringArray) {
      fileType = H5Tcopy(H5T_C_S1);
      ownType = true;
      H5Tset_size(fileType, count == 0 ? 1 : count);
      memType = fileType;
      elementSize = count == 0 ? 1 : count;
      if (kind == FclibFuzzKind::String) {
        count = 1;
        space = H5Screate(H5S_SCALAR);
      } else {
        count = 2;
        const hsize_t dims[1] = {count};
        space = H5Screate_simple(1, dims, nullptr);
      }
    } else {
      if (kind == FclibFuzzKind::Double) {
        fileType = H5T_IEEE_F64LE;
        memType = H5T_NATIVE_DOUBLE;
        elementSize = 8;
      } else if (kind == FclibFuzzKind::Float32) {
        fileType = H5T_IEEE_F32LE;
        memType = H5T_NATIVE_FLOAT;
      }
      const hsize_t dims[1] = {count};
      space = H5Screate_simple(1, dims, nullptr);
    }
    const std::size_t bytes = static_cast<std::size_t>(count) * elementSize;
    const hid_t d = H5Dcreate2(file, name, fileType, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (d >= 0) {
      if (bytes <= size - pos) {
        if (bytes > 0) {
          H5Dwrite(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data + pos);
        }
        pos += bytes;
      } else {
        pos = size;  // declared, not written: read back as fill values
      }
      H5Dclose(d);
    }
    H5Sclose(space);
    if (ownType) {
      H5Tclose(fileType);
    }
  }
  H5Pclose(lcpl);
  H5Fclose(file);
  return true;
}

}  // namespace grain::fuzz
