// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include <grain/convert/sequence.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/io/scene.hpp>

namespace grain::convert {

/// What the scene file says about the bodies of a .sim file: shapes, materials, masses and the
/// static geometry. Without a scene, bodies are spheres of a default radius and materials come
/// from the .sim file's additional bytes (if any).
class SceneBodies {
 public:
  /// No scene: every body is a sphere of `defaultRadius` (m).
  explicit SceneBodies(Real defaultRadius = 0.0) : defaultRadius_(defaultRadius) {}
  /// Loads the scene file (throws io::SceneError).
  static SceneBodies load(const std::filesystem::path& scene,
                          const std::filesystem::path& mediaDirectory = {});

  bool hasScene() const { return scene_.has_value(); }
  const io::SceneDescription& scene() const { return *scene_; }

  /// Index of the body in the scene's body storage, if the scene has it.
  std::optional<std::size_t> indexOf(BodyId id) const;
  /// The body's shape, or nullptr without a scene (or for unknown ids).
  const Shape* shape(BodyId id) const;
  /// Shape type code written to files: ShapeType as integer; Sphere without a scene.
  std::uint8_t shapeCode(BodyId id) const;
  /// Sphere radius, or the bounding radius of other shapes (m); defaultRadius without a scene.
  Real radius(BodyId id) const;
  /// Solid volume of the body's shape (m^3; spheres, boxes and capsules; 0 otherwise).
  Real volume(BodyId id) const;
  /// Material from the scene, else `fromFile`.
  MaterialId material(BodyId id, MaterialId fromFile) const;
  /// Mass (kg) and principal inertia in K (kg m^2); nullopt without a scene.
  std::optional<std::pair<Real, Vec3>> massProperties(BodyId id) const;
  /// Index of the body's <RigidBodies> element in the scene (-1 if unknown).
  std::int64_t groupIndex(BodyId id) const;
  /// Sum of the scene's gravity fields (m/s^2), zero without a scene.
  Vec3 gravity() const;
  Real defaultRadius() const { return defaultRadius_; }

 private:
  std::optional<io::SceneDescription> scene_;
  Real defaultRadius_ = 0.0;
};

/// A triangulated surface with one owner per triangle.
struct SurfaceMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
  /// Per triangle: index of the body (or shape) it belongs to, as the caller numbers them.
  std::vector<std::uint32_t> owner;

  /// Appends `part` transformed by (R, t) (x -> R x + t), with every triangle owned by `owner`.
  void append(const SurfaceMesh& part, const Mat3& rotation, const Vec3& translation,
              std::uint32_t ownerIndex);
};

/// How shapes are turned into triangles.
struct TessellationOptions {
  int sphereSubdivisions = 2;  ///< icosphere refinement (0: 20 triangles, 2: 320)
  int segments = 24;           ///< around capsules
  Real planeHalfSize = 1.0;    ///< half edge of the square drawn for a halfspace (m)
  /// Centre of the square patches in I: each patch is centred at the projection of this point
  /// onto its plane.
  Vec3 planeCentre = Vec3::Zero();
};

/// The shape's surface in its body frame K (halfspaces as a square patch around
/// `planeCentreInK`).
SurfaceMesh triangulate(const Shape& shape, const TessellationOptions& options,
                        const Vec3& planeCentreInK = Vec3::Zero());

/// The static and animated bodies of the scene at their initial position, triangulated into one
/// surface; owner = index into `bodyIndices`, which receives the scene body indices.
SurfaceMesh triangulateStaticBodies(const io::SceneDescription& scene,
                                    const TessellationOptions& options,
                                    std::vector<std::size_t>& bodyIndices);

/// Axis-aligned bounds of body centres +- radius over one state (m).
struct Bounds {
  Vec3 min = Vec3::Constant(std::numeric_limits<Real>::infinity());
  Vec3 max = Vec3::Constant(-std::numeric_limits<Real>::infinity());
  void add(const Vec3& p, Real r) {
    min = min.cwiseMin(p - Vec3::Constant(r));
    max = max.cwiseMax(p + Vec3::Constant(r));
  }
  bool valid() const { return (min.array() <= max.array()).all(); }
  Vec3 centre() const { return 0.5 * (min + max); }
  Real diagonal() const { return valid() ? (max - min).norm() : 0.0; }
};

/// Bounds of the bodies of a state with their radii.
Bounds stateBounds(const io::SimState& state, const SceneBodies& bodies);

}  // namespace grain::convert
