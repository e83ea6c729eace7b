// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <grain/convert/scene_bodies.hpp>
#include <grain/convert/sequence.hpp>

namespace grain::convert {

/// Element type of a VTK data array.
enum class VtkType : std::uint8_t { UInt8, Int32, UInt32, Int64, UInt64, Float64 };

/// A VTK XML UnstructuredGrid (.vtu) file: points, cells, point and cell data. Data is written
/// inline, either as ASCII or as base64 ("binary": a UInt64 byte count, then the little-endian
/// values, encoded together).
class VtuWriter {
 public:
  explicit VtuWriter(bool binary) : binary_(binary) {}
  /// Points (m, I frame).
  void setPoints(std::span<const Vec3> points);
  /// One VTK_VERTEX cell per point.
  void setVertexCells();
  /// VTK_TRIANGLE cells.
  void setTriangles(std::span<const std::array<std::uint32_t, 3>> triangles);
  /// Adds a point (or cell) data array of `values.size() / components` tuples.
  template <class T>
  void addPointData(const std::string& name, std::span<const T> values, int components = 1) {
    add(pointData_, name, typeOf<T>(), values.data(), values.size(), sizeof(T), components);
  }
  template <class T>
  void addCellData(const std::string& name, std::span<const T> values, int components = 1) {
    add(cellData_, name, typeOf<T>(), values.data(), values.size(), sizeof(T), components);
  }
  /// Writes the file; throws ConvertError.
  void write(const std::filesystem::path& file) const;

 private:
  struct Array {
    std::string name;
    VtkType type;
    int components = 1;
    std::size_t count = 0;  // values
    std::vector<unsigned char> bytes;
  };
  template <class T>
  static constexpr VtkType typeOf() {
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      return VtkType::UInt8;
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
      return VtkType::Int32;
    } else if constexpr (std::is_same_v<T, std::uint32_t>) {
      return VtkType::UInt32;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      return VtkType::Int64;
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      return VtkType::UInt64;
    } else {
      static_assert(std::is_same_v<T, double>, "unsupported VTK array type");
      return VtkType::Float64;
    }
  }
  static void add(std::vector<Array>& to, const std::string& name, VtkType type, const void* data,
                  std::size_t count, std::size_t size, int components);
  void writeArray(std::string& out, const Array& a) const;

  bool binary_;
  std::size_t nPoints_ = 0;
  std::size_t nCells_ = 0;
  Array points_;
  Array connectivity_;
  Array offsets_;
  Array types_;
  std::vector<Array> pointData_;
  std::vector<Array> cellData_;
};

/// Base64 of `bytes` (RFC 4648, with padding).
std::string base64Encode(std::span<const unsigned char> bytes);

/// Options of grain-convert vtk.
struct VtkOptions {
  bool binary = true;
  /// Bodies as triangulated surfaces (cell data per triangle) instead of points with radius
  /// and orientation (for glyphs).
  bool tessellate = false;
  TessellationOptions tessellation;
  /// Half size of halfspace patches (m); <= 0: the diagonal of the first state's bounds.
  Real planeHalfSize = 0.0;
};

/// Writes `dir/<name>.pvd`, one `dir/<name>/<name>_<k>.vtu` per state and, with a scene, the
/// static bodies once as `dir/<name>_static.vtu` (part 1 of every time step). Returns the
/// .pvd file. Throws ConvertError / io::SimFileError.
std::filesystem::path writeVtkSeries(SimSequence& seq, const std::vector<StateRef>& states,
                                     const BodySelector& selector, const SceneBodies& bodies,
                                     const std::filesystem::path& dir, const std::string& name,
                                     const VtkOptions& options, const ProgressFn& progress = {});

/// Writes the static bodies of the scene (triangulated) as one .vtu with cell data id,
/// material and shape. Returns false (and writes nothing) if the scene has none.
bool writeStaticVtu(const io::SceneDescription& scene, const TessellationOptions& tessellation,
                    bool binary, const std::filesystem::path& file);

}  // namespace grain::convert
