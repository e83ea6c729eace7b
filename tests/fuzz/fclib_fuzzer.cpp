// SPDX-License-Identifier: MIT
// libFuzzer harness of the FCLIB reader (grain::fclib::readProblem, readSolution) on
// well-formed HDF5 files whose contents come from the input (format: fclib_fuzz_format.hpp).
// Sizes, indices, values, missing, empty or mistyped datasets must end in grain::Error naming
// the file and the dataset, never in a crash, an uncaught exception or an allocation beyond what
// the file holds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <hdf5.h>

#include <grain/core/common/error.hpp>
#include <grain/fclib/fclib_io.hpp>

#include "fclib_fuzz_format.hpp"
#include "fuzz_common.hpp"

namespace {

using grain::fuzz::FclibFuzzKind;

/// Writes the file described by the input; returns false if HDF5 refused (then nothing is read).
bool writeFile(const std::string& path, const std::uint8_t* data, std::size_t size) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    return false;
  }
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  std::size_t pos = 0;
  while (pos + 6 <= size) {
    const char* name =
        grain::fuzz::kFclibFuzzPaths[data[pos] % grain::fuzz::kFclibFuzzPaths.size()];
    const auto kind = static_cast<FclibFuzzKind>(data[pos + 1] % grain::fuzz::kFclibFuzzKinds);
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

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = grain::fuzz::scratchPath("input.hdf5");
  if (!writeFile(path, data, size)) {
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
