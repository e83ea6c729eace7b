// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <hdf5.h>

#include <grain/convert/sequence.hpp>

/// Small RAII layer over the HDF5 C API for the writers of grain_convert.
namespace grain::convert::h5 {

/// Owns an HDF5 identifier and closes it with `Close`.
template <herr_t (*Close)(hid_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = -1;
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0) {
      Close(id_);
    }
    id_ = -1;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
};

using File = Handle<H5Fclose>;
using Group = Handle<H5Gclose>;
using Dataset = Handle<H5Dclose>;
using Space = Handle<H5Sclose>;
using Plist = Handle<H5Pclose>;
using Attribute = Handle<H5Aclose>;
using Type = Handle<H5Tclose>;

/// Throws ConvertError with `what` if `status` < 0.
inline void check(herr_t status, const std::string& what) {
  if (status < 0) {
    throw ConvertError("HDF5: " + what + " failed");
  }
}
inline hid_t checkId(hid_t id, const std::string& what) {
  if (id < 0) {
    throw ConvertError("HDF5: " + what + " failed");
  }
  return id;
}

template <class T>
hid_t nativeType() {
  if constexpr (std::is_same_v<T, double>) {
    return H5T_NATIVE_DOUBLE;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return H5T_NATIVE_UINT64;
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    return H5T_NATIVE_UINT32;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return H5T_NATIVE_INT32;
  } else {
    static_assert(std::is_same_v<T, std::uint8_t>, "unsupported HDF5 element type");
    return H5T_NATIVE_UINT8;
  }
}

/// Creates (truncates) a file; errors of the HDF5 library are not printed.
File createFile(const std::filesystem::path& path);
Group createGroup(hid_t loc, const std::string& name);

/// Creates a dataset of `dims`, chunked by `chunk` (empty: contiguous), deflate level 0..9.
template <class T>
Dataset createDataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                      const std::vector<hsize_t>& chunk = {}, int deflate = 0) {
  Space space(checkId(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                      "dataspace for " + name));
  Plist props(checkId(H5Pcreate(H5P_DATASET_CREATE), "property list"));
  if (!chunk.empty()) {
    check(H5Pset_chunk(props.get(), static_cast<int>(chunk.size()), chunk.data()),
          "chunking of " + name);
    if (deflate > 0) {
      check(H5Pset_shuffle(props.get()), "shuffle of " + name);
      check(H5Pset_deflate(props.get(), static_cast<unsigned>(deflate)), "deflate of " + name);
    }
  }
  return Dataset(checkId(H5Dcreate2(loc, name.c_str(), nativeType<T>(), space.get(), H5P_DEFAULT,
                                    props.get(), H5P_DEFAULT),
                         "creating dataset " + name));
}

/// Writes a whole dataset of `dims`.
template <class T>
void writeDataset(hid_t loc, const std::string& name, std::span<const T> data,
                  const std::vector<hsize_t>& dims) {
  Dataset ds = createDataset<T>(loc, name, dims);
  if (!data.empty()) {
    check(H5Dwrite(ds.get(), nativeType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
          "writing " + name);
  }
}

/// Writes `data` as the slice [index, ...] of a dataset whose first dimension counts states.
template <class T>
void writeSlice(const Dataset& ds, hsize_t index, std::span<const T> data) {
  Space file(checkId(H5Dget_space(ds.get()), "dataspace"));
  const int rank = H5Sget_simple_extent_ndims(file.get());
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(file.get(), dims.data(), nullptr);
  std::vector<hsize_t> start(dims.size(), 0);
  std::vector<hsize_t> count = dims;
  start[0] = index;
  count[0] = 1;
  check(
      H5Sselect_hyperslab(file.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
      "selecting a slice");
  Space mem(checkId(H5Screate_simple(rank, count.data(), nullptr), "memory space"));
  check(H5Dwrite(ds.get(), nativeType<T>(), mem.get(), file.get(), H5P_DEFAULT, data.data()),
        "writing a slice");
}

/// String attribute (variable-length UTF-8... stored as fixed-length ASCII).
void setAttribute(hid_t loc, const std::string& name, const std::string& value);
/// Scalar or 1-D numeric attribute.
template <class T>
void setAttribute(hid_t loc, const std::string& name, std::span<const T> values) {
  const hsize_t n = values.size();
  Space space(checkId(H5Screate_simple(1, &n, nullptr), "attribute space"));
  Attribute a(
      checkId(H5Acreate2(loc, name.c_str(), nativeType<T>(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              "attribute " + name));
  check(H5Awrite(a.get(), nativeType<T>(), values.data()), "writing attribute " + name);
}
template <class T>
void setScalarAttribute(hid_t loc, const std::string& name, T value) {
  Space space(checkId(H5Screate(H5S_SCALAR), "attribute space"));
  Attribute a(
      checkId(H5Acreate2(loc, name.c_str(), nativeType<T>(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              "attribute " + name));
  check(H5Awrite(a.get(), nativeType<T>(), &value), "writing attribute " + name);
}

}  // namespace grain::convert::h5
