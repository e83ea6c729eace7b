// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

/// Minimal RAII layer over the HDF5 C API for the FCLIB reader and writer (private to
/// grain_fclib). Every failure throws grain::Error with the file name and the object path.
namespace grain::fclib::h5 {

/// Owns an HDF5 identifier and closes it with the matching H5*close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      closer_ = o.closer_;
      o.id_ = -1;
    }
    return *this;
  }
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  void reset() {
    if (id_ >= 0 && closer_ != nullptr) {
      closer_(id_);
    }
    id_ = -1;
  }
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

/// An open HDF5 file.
class File {
 public:
  /// Opens an existing file read-only (throws if it is missing or not HDF5).
  static File openRead(const std::string& path);
  /// Creates (truncates) a file for writing.
  static File create(const std::string& path);

  const std::string& path() const { return path_; }

  /// True if every component of the absolute path ("/a/b/c") exists.
  bool exists(const std::string& object) const;

  /// 1-D (or scalar) dataset read as doubles / ints (HDF5 converts the stored type).
  std::vector<double> readDoubles(const std::string& object) const;
  std::vector<int> readInts(const std::string& object) const;
  /// First element of an integer dataset.
  int readInt(const std::string& object) const;
  /// A string dataset (fixed or variable length), or "" if it does not exist.
  std::string readStringOr(const std::string& object, const std::string& fallback) const;

  /// Creates the group (and missing parents).
  void makeGroup(const std::string& object);
  /// Writes a 1-D dataset (creating its parent groups).
  void writeDoubles(const std::string& object, const double* data, std::size_t count);
  void writeInts(const std::string& object, const int* data, std::size_t count);
  /// Writes a scalar fixed-length string dataset.
  void writeString(const std::string& object, const std::string& value);

  /// Throws grain::Error "path: object: what".
  [[noreturn]] void fail(const std::string& object, const std::string& what) const;

 private:
  Handle dataset(const std::string& object) const;
  std::size_t elementCount(const Handle& dset, const std::string& object) const;
  std::string path_;
  Handle file_;
  std::uintmax_t fileSize_ = 0;  ///< bytes, of a file opened for reading
};

}  // namespace grain::fclib::h5
