// SPDX-License-Identifier: MIT
#include "hdf5_file.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include <grain/core/common/error.hpp>

namespace grain::fclib::h5 {

namespace {

/// Switches HDF5's automatic error printing off for the lifetime of the guard (grain reports
/// errors itself), restoring the previous handler afterwards.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

/// Parent of an absolute object path ("/a/b" -> "/a", "/a" -> "/").
std::string parentOf(const std::string& object) {
  const auto pos = object.find_last_of('/');
  return pos == 0 || pos == std::string::npos ? std::string("/") : object.substr(0, pos);
}

/// deflate, HDF5's usual filter, compresses at most about 1032:1.
constexpr double kMaxCompression = 1032.0;

/// Refuses a dataset whose dataspace needs more bytes than the file can hold, before anything
/// is allocated for it: an HDF5 dataset may declare any size and leave it unwritten (read back
/// as fill values). FCLIB files do leave datasets unwritten (the zero /solution of several
/// problems of tests/data/fclib), so a dataset may need up to its stored bytes (times the
/// largest compression ratio) plus the size of the whole file.
/// A whole number held in a double, in digits (also beyond the range of integer types).
std::string wholeNumber(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.0f", v);
  return buffer;
}

void checkStoredSize(const File& f, hid_t dset, const std::string& object, hssize_t elements,
                     std::uintmax_t fileSize) {
  Handle type(H5Dget_type(dset), H5Tclose);
  const std::size_t elementSize = type.valid() ? H5Tget_size(type.get()) : 0;
  // In double: elements x element size may pass 2^64.
  const double needed = static_cast<double>(elements) * static_cast<double>(elementSize);
  const hsize_t stored = H5Dget_storage_size(dset);
  if (needed > kMaxCompression * static_cast<double>(stored) + static_cast<double>(fileSize)) {
    f.fail(object, "declares " + std::to_string(elements) + " elements of " +
                       std::to_string(elementSize) + " bytes (" + wholeNumber(needed) +
                       " bytes), more than the file of " + std::to_string(fileSize) +
                       " bytes can hold (" + std::to_string(stored) + " bytes of them stored)");
  }
}

}  // namespace

File File::openRead(const std::string& path) {
  QuietErrors quiet;
  File f;
  f.path_ = path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(path + ": no such file");
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw Error(path + ": not an HDF5 file");
  }
  f.file_ = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.file_.valid()) {
    throw Error(path + ": cannot open the HDF5 file");
  }
  f.fileSize_ = std::filesystem::file_size(path, ec);
  return f;
}

File File::create(const std::string& path) {
  QuietErrors quiet;
  File f;
  f.path_ = path;
  f.file_ = Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.file_.valid()) {
    throw Error(path + ": cannot create the HDF5 file");
  }
  return f;
}

void File::fail(const std::string& object, const std::string& what) const {
  throw Error(path_ + ": " + object + ": " + what);
}

bool File::exists(const std::string& object) const {
  QuietErrors quiet;
  if (object.empty() || object[0] != '/') {
    return false;
  }
  std::size_t pos = 1;
  while (pos <= object.size()) {
    std::size_t next = object.find('/', pos);
    if (next == std::string::npos) {
      next = object.size();
    }
    const std::string prefix = object.substr(0, next);
    if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) {
      return false;
    }
    pos = next + 1;
  }
  return true;
}

Handle File::dataset(const std::string& object) const {
  if (!exists(object)) {
    fail(object, "missing");
  }
  Handle d(H5Dopen2(file_.get(), object.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) {
    fail(object, "not a dataset");
  }
  return d;
}

std::size_t File::elementCount(const Handle& dset, const std::string& object) const {
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
  if (n < 0) {
    fail(object, "cannot read the dataspace");
  }
  checkStoredSize(*this, dset.get(), object, n, fileSize_);
  return static_cast<std::size_t>(n);
}

std::vector<double> File::readDoubles(const std::string& object) const {
  QuietErrors quiet;
  const Handle d = dataset(object);
  std::vector<double> v(elementCount(d, object));
  if (!v.empty() &&
      H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    fail(object, "cannot be read as floating-point numbers");
  }
  return v;
}

std::vector<int> File::readInts(const std::string& object) const {
  QuietErrors quiet;
  const Handle d = dataset(object);
  Handle type(H5Dget_type(d.get()), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_INTEGER) {
    fail(object, "is not an integer dataset");
  }
  std::vector<int> v(elementCount(d, object));
  if (!v.empty() && H5Dread(d.get(), H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    fail(object, "cannot be read as integers");
  }
  return v;
}

int File::readInt(const std::string& object) const {
  const std::vector<int> v = readInts(object);
  if (v.empty()) {
    fail(object, "is empty");
  }
  return v[0];
}

std::string File::readStringOr(const std::string& object, const std::string& fallback) const {
  QuietErrors quiet;
  if (!exists(object)) {
    return fallback;
  }
  const Handle d = dataset(object);
  Handle type(H5Dget_type(d.get()), H5Tclose);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) {
    return fallback;
  }
  // Read into one string: a dataset of several strings would overrun it.
  if (const std::size_t n = elementCount(d, object); n != 1) {
    fail(object, "must hold one string, holds " + std::to_string(n));
  }
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    char* s = nullptr;
    if (H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) < 0 || s == nullptr) {
      return fallback;
    }
    std::string out(s);
    H5free_memory(s);
    return out;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string buffer(size + 1, '\0');
  Handle mem(H5Tcopy(type.get()), H5Tclose);
  if (H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0) {
    return fallback;
  }
  buffer.resize(buffer.find('\0') == std::string::npos ? size : buffer.find('\0'));
  return buffer;
}

void File::makeGroup(const std::string& object) {
  QuietErrors quiet;
  if (object == "/" || exists(object)) {
    return;
  }
  makeGroup(parentOf(object));
  Handle g(H5Gcreate2(file_.get(), object.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Gclose);
  if (!g.valid()) {
    fail(object, "cannot create the group");
  }
}

namespace {

void writeArray(File& f, hid_t fileId, const std::string& object, hid_t fileType, hid_t memType,
                const void* data, std::size_t count) {
  f.makeGroup(parentOf(object));
  const hsize_t dims[1] = {static_cast<hsize_t>(count)};
  Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  Handle d(H5Dcreate2(fileId, object.c_str(), fileType, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                      H5P_DEFAULT),
           H5Dclose);
  if (!d.valid() ||
      (count > 0 && H5Dwrite(d.get(), memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)) {
    f.fail(object, "cannot write the dataset");
  }
}

}  // namespace

void File::writeDoubles(const std::string& object, const double* data, std::size_t count) {
  QuietErrors quiet;
  writeArray(*this, file_.get(), object, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data, count);
}

void File::writeInts(const std::string& object, const int* data, std::size_t count) {
  QuietErrors quiet;
  writeArray(*this, file_.get(), object, H5T_STD_I32LE, H5T_NATIVE_INT, data, count);
}

void File::writeString(const std::string& object, const std::string& value) {
  QuietErrors quiet;
  makeGroup(parentOf(object));
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), value.size() + 1);
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle d(H5Dcreate2(file_.get(), object.c_str(), type.get(), space.get(), H5P_DEFAULT,
                      H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose);
  if (!d.valid() ||
      H5Dwrite(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.c_str()) < 0) {
    fail(object, "cannot write the string");
  }
}

}  // namespace grain::fclib::h5
