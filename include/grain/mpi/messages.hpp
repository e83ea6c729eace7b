// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <grain/core/common/error.hpp>
#include <grain/core/math/types.hpp>

/// Typed messages as plain bytes. Every record is a sequence of fields written with memcpy in
/// native byte order (the processes of one run share one architecture). Plain bytes rather than
/// Boost.Serialization: the records are fixed sequences of numbers, so a memcpy per field is all
/// the work, there is no archive object or allocation per record, and the byte counts reported in
/// SimData.dat are exactly what travels.
///
/// A record type R lists its fields in wire order once, in a function found by argument-dependent
/// lookup (in R's namespace or in grain::mpi):
///
///     template <RecordOf<R> Self, class F>
///     void describe(Self& r, F&& f) { f(r.a, r.b, r.c); }
///
/// ByteWriter and ByteReader both walk that one description (Self is const for the writer), so
/// writing and reading cannot disagree. The field kinds and their
/// bytes:
///   - arithmetic types and enums: their bytes (sizeof);
///   - bool: one byte, 0 or 1;
///   - Vec3: x, y, z; Quat: x, y, z, w (Real each);
///   - std::vector<T>: a std::uint32_t count, then the items;
///   - std::variant<A...>: the alternative's index as a std::uint8_t, then the alternative (only
///     alternatives with a description travel; writing or reading another throws grain::Error);
///   - a described record: its fields, nothing else (no size, no padding).
/// records.hpp holds the records of the distributed runs.
namespace grain::mpi {

/// The constraint of a description: `Self` is R or const R.
template <class Self, class R>
concept RecordOf = std::same_as<std::remove_const_t<Self>, R>;

class ByteWriter;

/// A type with a description (see above).
template <class T>
concept Described = requires(T& value, ByteWriter& writer) {
  describe(value, writer);
};

namespace wire {
template <class T>
inline constexpr bool kIsVector = false;
template <class T, class A>
inline constexpr bool kIsVector<std::vector<T, A>> = true;
template <class T>
inline constexpr bool kIsVariant = false;
template <class... A>
inline constexpr bool kIsVariant<std::variant<A...>> = true;
template <class T>
inline constexpr bool kIsPlain = std::is_arithmetic_v<T> || std::is_enum_v<T>;

inline std::uint32_t checkedCount(std::size_t size) {
  if (size > UINT32_MAX) {
    throw Error("a record's list has " + std::to_string(size) + " items, more than 2^32 - 1");
  }
  return static_cast<std::uint32_t>(size);
}
/// Out of line, so that the reads that call it stay small enough to inline.
[[noreturn, gnu::noinline, gnu::cold]] inline void throwMessageEnds(std::size_t size) {
  throw Error("message ends after " + std::to_string(size) + " bytes in the middle of a field");
}
[[noreturn]] inline void throwUntravelledAlternative(std::size_t index, std::size_t count) {
  throw Error("alternative " + std::to_string(index) + " of a variant with " +
              std::to_string(count) + " alternatives has no wire description and cannot travel");
}
}  // namespace wire

/// Appends fields to a byte buffer.
class ByteWriter {
 public:
  /// Writes each field in turn (the callback of a description).
  template <class... T>
  void operator()(const T&... fields) {
    (put(fields), ...);
  }

  template <class T>
  void put(const T& value) {
    if constexpr (std::is_same_v<T, Vec3>) {
      putRaw(value.data(), 3 * sizeof(Real));
    } else if constexpr (std::is_same_v<T, Quat>) {
      putRaw(value.coeffs().data(), 4 * sizeof(Real));  // x, y, z, w
    } else if constexpr (std::is_same_v<T, bool>) {
      put(static_cast<std::uint8_t>(value ? 1 : 0));
    } else if constexpr (Described<const T>) {
      describe(value, *this);
    } else if constexpr (wire::kIsVector<T>) {
      put(wire::checkedCount(value.size()));
      for (const auto& item : value) {
        put(item);
      }
    } else if constexpr (wire::kIsVariant<T>) {
      put(static_cast<std::uint8_t>(value.index()));
      std::visit(
          [&](const auto& alternative) {
            if constexpr (Described<const std::remove_cvref_t<decltype(alternative)>>) {
              describe(alternative, *this);
            } else {
              wire::throwUntravelledAlternative(value.index(), std::variant_size_v<T>);
            }
          },
          value);
    } else {
      static_assert(wire::kIsPlain<T>,
                    "a field must be a number, enum, Vec3, Quat, vector, "
                    "variant or described record");
      putRaw(&value, sizeof(T));
    }
  }
  /// The bytes written so far. The vector may be changed, swapped or moved from; the next put()
  /// appends to whatever it then holds.
  std::vector<char>& bytes() {
    trim();
    lent_ = true;
    return bytes_;
  }
  const std::vector<char>& bytes() const {
    trim();
    return bytes_;
  }
  /// The bytes written so far, without handing out the storage (valid until the next put or
  /// clear).
  std::span<const char> message() const {
    return lent_ ? std::span<const char>(bytes_) : std::span<const char>(bytes_.data(), used_);
  }
  /// Empties the message and keeps the storage.
  void clear() {
    used_ = 0;
    lent_ = false;
  }

 private:
  // Fields are copied into storage grown geometrically ahead of them (bytes_.size() is the
  // capacity in use, used_ the message): a field costs a compare and a fixed-size copy, not a
  // vector insertion.
  [[gnu::always_inline]] void putRaw(const void* data, std::size_t size) {
    if (lent_) {  // the vector may have changed while it was out
      used_ = bytes_.size();
      lent_ = false;
    }
    if (bytes_.size() - used_ < size) [[unlikely]] {
      grow(size);
    }
    std::memcpy(bytes_.data() + used_, data, size);
    used_ += size;
  }
  void trim() const {
    if (!lent_) {
      bytes_.resize(used_);
    }
  }
  [[gnu::noinline]] void grow(std::size_t size) {
    bytes_.resize(std::max({2 * bytes_.size(), used_ + size, std::size_t{256}}));
  }

  mutable std::vector<char> bytes_;
  std::size_t used_ = 0;
  bool lent_ = false;  ///< bytes() handed out the vector: its size is the message again
};

/// Reads fields back in the order they were written; throws grain::Error past the end.
class ByteReader {
 public:
  ByteReader(const char* data, std::size_t size) : data_(data), size_(size) {}
  explicit ByteReader(const std::vector<char>& bytes) : ByteReader(bytes.data(), bytes.size()) {}

  /// Reads each field in turn (the callback of a description).
  template <class... T>
  void operator()(T&... fields) {
    (read(fields), ...);
  }

  template <class T>
  T get() {
    T value{};
    read(value);
    return value;
  }

  template <class T>
  void read(T& value) {
    if constexpr (std::is_same_v<T, Vec3>) {
      getRaw(value.data(), 3 * sizeof(Real));
    } else if constexpr (std::is_same_v<T, Quat>) {
      getRaw(value.coeffs().data(), 4 * sizeof(Real));
    } else if constexpr (std::is_same_v<T, bool>) {
      value = get<std::uint8_t>() != 0;
    } else if constexpr (Described<T>) {
      describe(value, *this);
    } else if constexpr (wire::kIsVector<T>) {
      const auto count = get<std::uint32_t>();
      // Every item has at least one byte: a count beyond the rest of the message is corrupt.
      if (count > size_ - offset_) {
        throw Error("message announces " + std::to_string(count) + " items with " +
                    std::to_string(size_ - offset_) + " bytes left");
      }
      value.resize(count);
      for (auto& item : value) {
        read(item);
      }
    } else if constexpr (wire::kIsVariant<T>) {
      readAlternative<0>(value, get<std::uint8_t>());
    } else {
      static_assert(wire::kIsPlain<T>,
                    "a field must be a number, enum, Vec3, Quat, vector, "
                    "variant or described record");
      getRaw(&value, sizeof(T));
    }
  }
  bool done() const { return offset_ == size_; }
  /// Bytes not read yet.
  std::size_t remaining() const { return size_ - offset_; }

 private:
  template <std::size_t I, class V>
  void readAlternative(V& value, std::size_t index) {
    if constexpr (I < std::variant_size_v<V>) {
      if (index != I) {
        readAlternative<I + 1>(value, index);
      } else if constexpr (Described<std::variant_alternative_t<I, V>>) {
        describe(value.template emplace<I>(), *this);
      } else {
        wire::throwUntravelledAlternative(index, std::variant_size_v<V>);
      }
    } else {
      wire::throwUntravelledAlternative(index, std::variant_size_v<V>);
    }
  }

  void getRaw(void* data, std::size_t size) {
    if (size > size_ - offset_) [[unlikely]] {
      wire::throwMessageEnds(size_);
    }
    std::memcpy(data, data_ + offset_, size);
    offset_ += size;
  }

  const char* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

/// Bytes of `value` on the wire, from its description.
template <class T>
std::size_t wireSize(const T& value) {
  ByteWriter writer;
  writer.put(value);
  return writer.bytes().size();
}

}  // namespace grain::mpi
