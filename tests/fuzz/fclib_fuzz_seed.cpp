// SPDX-License-Identifier: MIT
// fclib_fuzz_seed IN.hdf5 OUT: writes the datasets of an FCLIB file that fuzz_fclib knows in
// fuzz_fclib's input format (fclib_fuzz_format.hpp), as a seed of its corpus.
// fclib_fuzz_seed --write IN OUT.hdf5: the other way, the HDF5 file fuzz_fclib reads for an
// input (e.g. a crash input, as a regression file of tests/data/fuzz/fclib).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <hdf5.h>

#include "fclib_fuzz_format.hpp"

namespace {

void put(std::vector<std::uint8_t>& out, std::size_t path, grain::fuzz::FclibFuzzKind kind,
         std::uint32_t count, const void* data, std::size_t bytes) {
  out.push_back(static_cast<std::uint8_t>(path));
  out.push_back(static_cast<std::uint8_t>(kind));
  for (int b = 0; b < 4; ++b) {
    out.push_back(static_cast<std::uint8_t>(count >> (8 * b)));
  }
  const auto* p = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), p, p + bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--write") {
    std::FILE* in = std::fopen(argv[2], "rb");
    if (in == nullptr) {
      std::fprintf(stderr, "%s: cannot open\n", argv[2]);
      return 1;
    }
    std::vector<std::uint8_t> data;
    for (int c = std::fgetc(in); c != EOF; c = std::fgetc(in)) {
      data.push_back(static_cast<std::uint8_t>(c));
    }
    std::fclose(in);
    return grain::fuzz::writeFclibFuzzFile(argv[3], data.data(), data.size()) ? 0 : 1;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: fclib_fuzz_seed IN.hdf5 OUT | --write IN OUT.hdf5\n");
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    std::fprintf(stderr, "%s: cannot open\n", argv[1]);
    return 1;
  }
  const auto fileSize = static_cast<double>(std::filesystem::file_size(argv[1]));
  std::vector<std::uint8_t> out;
  using grain::fuzz::FclibFuzzKind;
  for (std::size_t k = 0; k < grain::fuzz::kFclibFuzzPaths.size(); ++k) {
    const char* name = grain::fuzz::kFclibFuzzPaths[k];
    // Every prefix must exist for H5Oexists_by_name.
    std::string prefix;
    bool present = true;
    for (const char* c = name + 1;; ++c) {
      if (*c == '/' || *c == '\0') {
        prefix.assign(name, static_cast<std::size_t>(c - name));
        if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
          present = false;
          break;
        }
      }
      if (*c == '\0') {
        break;
      }
    }
    if (!present) {
      continue;
    }
    H5O_info_t info;
    if (H5Oget_info_by_name(file, name, &info, H5P_DEFAULT) < 0) {
      continue;
    }
    if (info.type == H5O_TYPE_GROUP) {
      put(out, k, FclibFuzzKind::Group, 0, nullptr, 0);
      continue;
    }
    if (info.type != H5O_TYPE_DATASET) {
      continue;
    }
    const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t type = H5Dget_type(d);
    const hid_t space = H5Dget_space(d);
    const hssize_t points = H5Sget_simple_extent_npoints(space);
    // Datasets declaring more than the file holds (the regression files) are left out: reading
    // them would allocate their declared size.
    const double needed = static_cast<double>(points) * static_cast<double>(H5Tget_size(type));
    if (points < 0 || points > 0xffffff ||
        needed > static_cast<double>(H5Dget_storage_size(d)) + fileSize) {
      H5Sclose(space);
      H5Tclose(type);
      H5Dclose(d);
      continue;
    }
    const auto n = static_cast<std::uint32_t>(points);
    const H5T_class_t cls = H5Tget_class(type);
    if (cls == H5T_INTEGER) {
      std::vector<std::int32_t> v(n);
      if (n > 0) {
        H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      }
      put(out, k, FclibFuzzKind::Int32, n, v.data(), 4 * v.size());
    } else if (cls == H5T_FLOAT) {
      std::vector<double> v(n);
      if (n > 0) {
        H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      }
      put(out, k, FclibFuzzKind::Double, n, v.data(), 8 * v.size());
    } else if (cls == H5T_STRING && H5Tis_variable_str(type) <= 0) {
      const std::size_t size = H5Tget_size(type);
      std::vector<char> s(size);
      H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data());
      put(out, k, FclibFuzzKind::String, static_cast<std::uint32_t>(size), s.data(), size);
    }
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(d);
  }
  H5Fclose(file);
  std::FILE* f = std::fopen(argv[2], "wb");
  if (f == nullptr || std::fwrite(out.data(), 1, out.size(), f) != out.size()) {
    std::fprintf(stderr, "%s: cannot write\n", argv[2]);
    return 1;
  }
  std::fclose(f);
  return 0;
}
