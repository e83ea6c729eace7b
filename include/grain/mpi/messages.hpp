// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <grain/core/common/error.hpp>
#include <grain/core/math/types.hpp>

/// Typed messages as plain bytes. Every record is a sequence of trivially copyable fields written
/// with memcpy in native byte order (the processes of one run share one architecture). Plain
/// bytes rather than Boost.Serialization: the records are fixed sequences of numbers, so a
/// memcpy per field is all the work, there is no archive object or allocation per record, and
/// the byte counts reported in SimData.dat are exactly what travels.
namespace grain::mpi {

/// Appends fields to a byte buffer.
class ByteWriter {
 public:
  template <class T>
  void put(const T& value) {
    if constexpr (std::is_same_v<T, Vec3>) {
      putRaw(value.data(), 3 * sizeof(Real));
    } else if constexpr (std::is_same_v<T, Quat>) {
      putRaw(value.coeffs().data(), 4 * sizeof(Real));  // x, y, z, w
    } else {
      static_assert(std::is_trivially_copyable_v<T>);
      putRaw(&value, sizeof(T));
    }
  }
  std::vector<char>& bytes() { return bytes_; }
  const std::vector<char>& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }

 private:
  void putRaw(const void* data, std::size_t size) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + size);
    std::memcpy(bytes_.data() + at, data, size);
  }

  std::vector<char> bytes_;
};

/// Reads fields back in the order they were written; throws grain::Error past the end.
class ByteReader {
 public:
  ByteReader(const char* data, std::size_t size) : data_(data), size_(size) {}
  explicit ByteReader(const std::vector<char>& bytes) : ByteReader(bytes.data(), bytes.size()) {}

  template <class T>
  T get() {
    T value;
    if constexpr (std::is_same_v<T, Vec3>) {
      getRaw(value.data(), 3 * sizeof(Real));
    } else if constexpr (std::is_same_v<T, Quat>) {
      getRaw(value.coeffs().data(), 4 * sizeof(Real));
    } else {
      static_assert(std::is_trivially_copyable_v<T>);
      getRaw(&value, sizeof(T));
    }
    return value;
  }
  bool done() const { return offset_ == size_; }

 private:
  void getRaw(void* data, std::size_t size) {
    if (offset_ + size > size_) {
      throw Error("message ends after " + std::to_string(size_) +
                  " bytes in the middle of a field");
    }
    std::memcpy(data, data_ + offset_, size);
    offset_ += size;
  }

  const char* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

}  // namespace grain::mpi
