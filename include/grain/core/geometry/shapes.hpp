// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include <grain/core/math/types.hpp>

/// Shape definitions. Every shape is given in its body frame K with the origin at the
/// body's centre of mass (for simulated bodies) or reference point (for static bodies).
namespace grain {

enum class ShapeType : std::uint8_t { Sphere = 0, Box, Capsule, Halfspace, Mesh, Count };

constexpr std::size_t kShapeTypeCount = static_cast<std::size_t>(ShapeType::Count);

/// Sphere of radius `radius` (m) centred at the body origin.
struct Sphere {
  Real radius = 0.0;
};

/// Box with half edge lengths `halfExtent` (m) along the body axes, centred at `center` (K frame,
/// m).
struct Box {
  Vec3 halfExtent = Vec3::Zero();
  Vec3 center = Vec3::Zero();
};

/// Capsule: the set of points within `radius` (m) of the segment from -length/2*axis to
/// +length/2*axis (K frame). `length` (m) is the distance between the two cap centres.
struct Capsule {
  Vec3 axis = Vec3::UnitZ();
  Real radius = 0.0;
  Real length = 0.0;
};

/// Halfspace {x : n . (x - origin) <= 0}; its boundary plane passes through the body origin.
/// `normal` (K frame, unit) points out of the solid side.
struct Halfspace {
  Vec3 normal = Vec3::UnitZ();
};

/// Static triangle mesh; vertices in the body frame (m), already scaled.
struct TriangleMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
  /// Outward unit face normals (K frame), one per triangle (computed by finalize()).
  std::vector<Vec3> faceNormals;
  /// Computes face normals; throws grain::Error for degenerate or out-of-range triangles.
  void finalize();
};

/// A mesh is shared by all bodies that use it.
///
/// Two-sided (default): every triangle is a thin shell, a shape is pushed away on whichever side
/// its centre is. One-sided: only the front of a triangle (the side of its face normal, i.e.
/// counter-clockwise winding seen from the front) repels; the mesh is taken to be the surface of
/// a solid behind it. A sphere or capsule end whose centre has crossed the face plane by less
/// than its radius, inside the triangle, is pushed back out to the front, so a fast body that
/// crosses a thin wall within one step is not pushed through it; centres deeper than that are
/// ignored (the far side of a closed mesh). For boxes, contacts whose normal points to the back
/// of the triangle are dropped.
struct Mesh {
  std::shared_ptr<const TriangleMesh> data;
  bool oneSided = false;
};

using Shape = std::variant<Sphere, Box, Capsule, Halfspace, Mesh>;

inline ShapeType shapeType(const Shape& s) {
  return static_cast<ShapeType>(s.index());
}

/// Radius (m) of the smallest origin-centred sphere containing the shape; infinite for halfspaces.
Real boundingRadius(const Shape& s);

/// Checks the shape's values (positive radii and extents, non-zero normals); throws grain::Error.
void validateShape(const Shape& s);

/// Index of a shape in a ShapeStore. Many bodies may share one shape.
using ShapeIndex = std::uint32_t;
inline constexpr ShapeIndex kNoShape = 0xffffffffu;

/// The shape's type and the bytes of its values (a mesh: its data's address and sidedness); equal
/// keys mean equal shapes.
std::string shapeKey(const Shape& s);

/// Owns the shapes of a system; bodies refer to them by ShapeIndex.
class ShapeStore {
 public:
  /// Adds a validated shape (direction vectors normalised) and returns its index.
  ShapeIndex add(Shape shape);
  /// Index of a shape equal to `shape` bit for bit (meshes: the same data and sidedness), adding
  /// it unchanged if there is none. For shapes copied from another store, whose directions are
  /// already normalised: a body that travels between processes keeps its exact shape, and the
  /// store does not grow when the same shape arrives again.
  ShapeIndex intern(const Shape& shape);
  /// Keeps the shapes with `used[i] != 0`, in their order, and returns the new index of every
  /// old one (kNoShape for the dropped ones). Bodies must then be renumbered
  /// (DynamicsSystem::compactShapes does both).
  std::vector<ShapeIndex> compact(const std::vector<char>& used);
  const Shape& operator[](ShapeIndex i) const { return shapes_[i]; }
  ShapeType type(ShapeIndex i) const { return shapeType(shapes_[i]); }
  std::size_t size() const { return shapes_.size(); }

 private:
  std::vector<Shape> shapes_;
  std::unordered_map<std::string, ShapeIndex> byValue_;  ///< shapeKey -> first index of that shape
};

}  // namespace grain
