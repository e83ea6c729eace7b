// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <grain/convert/scene_bodies.hpp>
#include <grain/convert/sequence.hpp>

/// Pictures of states without a GUI: a small ray-casting rasterizer writing PNG, and POV-Ray /
/// RenderMan (RIB) scene export for high-quality frames.
namespace grain::convert {

/// An 8-bit RGB image, rows from the top.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;  ///< 3 bytes per pixel
  std::array<std::uint8_t, 3> pixel(int x, int y) const {
    const std::size_t i = 3 * (static_cast<std::size_t>(y) * width + x);
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

/// Writes an RGB PNG (libpng); throws ConvertError.
void writePng(const Image& image, const std::filesystem::path& file);
/// Reads a PNG as 8-bit RGB (libpng); throws ConvertError.
Image readPng(const std::filesystem::path& file);

/// Pinhole camera (I frame, m).
struct Camera {
  Vec3 eye = Vec3(3, -4, 2);
  Vec3 target = Vec3::Zero();
  Vec3 up = Vec3::UnitZ();
  double fovDeg = 40.0;  ///< vertical field of view
  int width = 800;       ///< pixels
  int height = 600;

  /// Orthonormal camera frame: right, true up, forward (right-handed world).
  void frame(Vec3& right, Vec3& trueUp, Vec3& forward) const;
  /// Throws ConvertError for eye == target, up parallel to the view, bad size or angle.
  void validate() const;
};

/// A camera looking at `bounds` from direction `fromDirection` (target -> eye) so that the
/// bounding sphere of the bounds fits the vertical field of view.
Camera fitCamera(const Bounds& bounds, const Vec3& fromDirection, const Vec3& up, double fovDeg,
                 int width, int height);

/// Speed colour map: 0 -> dark blue, 0.25 -> light blue, 0.5 -> green, 0.75 -> yellow,
/// 1 -> red (values clamped to [0, 1]). RGB in [0, 1].
Vec3 speedColour(double t);

/// Options of the renderer.
struct RenderOptions {
  Camera camera;
  double speedMin = 0.0;                       ///< m/s mapped to the first colour
  double speedMax = 1.0;                       ///< m/s mapped to the last colour
  int supersample = 2;                         ///< samples per pixel and axis (box filter)
  bool colourBar = true;                       ///< a speed colour bar at the right edge
  Vec3 lightDirection = Vec3(0.4, -0.3, 1.0);  ///< towards the light (I frame)
};

/// Static scene geometry prepared once for rendering: triangles of static bodies (halfspaces
/// as square patches).
struct RenderScene {
  SurfaceMesh staticMesh;
  /// Per static triangle owner: scene body index (for colours).
  std::vector<std::size_t> staticBodies;
  /// Triangulated shapes of non-sphere simulated bodies, by scene shape index (lazily).
  TessellationOptions tessellation;
};

/// Prepares the static geometry of the scene (nothing without a scene).
RenderScene prepareRenderScene(const SceneBodies& bodies, const TessellationOptions& tessellation);

/// Per static triangle of `scene`: true if it is cut away from pictures taken from `eye`
/// (I frame, m): a triangle of a halfspace or of a mesh seen from behind, i.e. with the eye on
/// the side opposite its normal (a halfspace's free side; a mesh triangle's winding normal, which
/// grain's container meshes point towards the grains). A container wall between the camera and
/// the bodies it holds is seen from behind and cut away; walls behind the bodies stay. Boxes,
/// capsules and spheres are solids and always drawn.
std::vector<bool> cutAwayStaticTriangles(const SceneBodies& bodies, const RenderScene& scene,
                                         const Vec3& eye);

/// Renders one state: spheres exactly (ray-sphere), other shapes and static bodies as
/// triangles (without those cutAwayStaticTriangles() removes); Lambert plus Blinn-Phong shading,
/// bodies coloured by speed. The colour bar is labelled with its lowest, middle and highest
/// speeds and "speed [m/s]".
Image renderState(const io::SimState& state, const SceneBodies& bodies, const RenderScene& scene,
                  const RenderOptions& options);

/// Writes a POV-Ray 3.7 scene of the state (camera, light, spheres coloured by speed,
/// halfspaces as planes, other shapes as meshes; without what cutAwayStaticTriangles()
/// removes). Throws ConvertError.
void writePovRay(const io::SimState& state, const SceneBodies& bodies, const RenderScene& scene,
                 const RenderOptions& options, const std::filesystem::path& file);

/// Writes a RenderMan RIB frame of the state (image name `imageName`): spheres as `Sphere`,
/// other geometry as `PointsPolygons` (without what cutAwayStaticTriangles() removes). Throws
/// ConvertError.
void writeRib(const io::SimState& state, const SceneBodies& bodies, const RenderScene& scene,
              const RenderOptions& options, const std::string& imageName,
              const std::filesystem::path& file);

}  // namespace grain::convert
