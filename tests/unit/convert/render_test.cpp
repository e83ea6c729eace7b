// SPDX-License-Identifier: MIT
// Pictures: PNG round trip through libpng, the ray caster against simple geometry, POV-Ray and
// RIB export.
#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include <grain/convert/render.hpp>

#include "../../common/mesh_support.hpp"
#include "convert_test_util.hpp"

namespace grain::convert {
namespace {

io::SimState oneSphere(const Vec3& position, const Vec3& velocity) {
  io::SimState st;
  io::SimBodyState b;
  b.id = makeBodyId(0, 0);
  b.position = position;
  b.velocity = velocity;
  st.bodies.push_back(b);
  return st;
}

RenderOptions frontCamera(int w, int h) {
  RenderOptions o;
  o.camera.eye = Vec3(0, -5, 0);
  o.camera.target = Vec3::Zero();
  o.camera.up = Vec3::UnitZ();
  o.camera.fovDeg = 30;
  o.camera.width = w;
  o.camera.height = h;
  o.supersample = 1;
  o.colourBar = false;
  o.speedMin = 0;
  o.speedMax = 2;
  o.lightDirection = Vec3(0, -1, 0);  // from the camera
  return o;
}

TEST(Png, RoundTripThroughLibpng) {
  test::TempDir dir;
  Image img;
  img.width = 7;
  img.height = 5;
  img.rgb.resize(3 * 35);
  for (std::size_t i = 0; i < img.rgb.size(); ++i) {
    img.rgb[i] = static_cast<std::uint8_t>(i * 7);
  }
  writePng(img, dir / "a.png");
  const Image back = readPng(dir / "a.png");
  EXPECT_EQ(back.width, 7);
  EXPECT_EQ(back.height, 5);
  EXPECT_EQ(back.rgb, img.rgb);
  test::writeText(dir / "bad.png", "not a png");
  EXPECT_THROW(readPng(dir / "bad.png"), ConvertError);
}

TEST(Render, SphereInFrontOfTheCameraIsShadedAndColouredBySpeed) {
  // Sphere of radius 1 at distance 5 with a 30 degree field of view: it covers the centre of the
  // image; its half angle asin(1/5) = 11.5 degrees < 15, so the image corners are background.
  const RenderOptions o = frontCamera(64, 64);
  const Image img =
      renderState(oneSphere(Vec3::Zero(), Vec3(2, 0, 0)), SceneBodies(1.0), RenderScene{}, o);
  ASSERT_EQ(img.width, 64);
  const auto centre = img.pixel(32, 32);
  const auto corner = img.pixel(0, 0);
  // Speed 2 = top of the range: red dominates; the background is light grey-blue.
  EXPECT_GT(centre[0], 150);
  EXPECT_GT(centre[0], centre[2] + 80);
  EXPECT_GT(corner[2], 200);
  // Lit from the camera: the centre (normal towards the light) is brighter than the rim.
  const auto rim = img.pixel(32, 32 - 13);
  EXPECT_GT(centre[0], rim[0]);
  // Radius in pixels: tan(11.54 deg) / tan(15 deg) * 32 = 24.3 (silhouette of a sphere).
  int covered = 0;
  for (int x = 0; x < 64; ++x) {
    const auto p = img.pixel(x, 32);
    covered += (p[2] < 150) ? 1 : 0;
  }
  EXPECT_NEAR(covered, 2 * 24.3, 2.5);
  // A slow sphere is blue.
  const Image slow =
      renderState(oneSphere(Vec3::Zero(), Vec3::Zero()), SceneBodies(1.0), RenderScene{}, o);
  EXPECT_GT(slow.pixel(32, 32)[2], slow.pixel(32, 32)[0]);
}

TEST(Render, NearerSphereHidesFartherOne) {
  io::SimState st = oneSphere(Vec3(0, 2, 0), Vec3(2, 0, 0));  // far, red
  io::SimBodyState near;
  near.id = makeBodyId(0, 1);
  near.position = Vec3(0, -1, 0);  // near, blue
  st.bodies.push_back(near);
  const Image img = renderState(st, SceneBodies(0.5), RenderScene{}, frontCamera(48, 48));
  const auto c = img.pixel(24, 24);
  EXPECT_GT(c[2], c[0]);
}

TEST(Render, SceneWithStaticBodiesGivesANonTrivialPicture) {
  GRAIN_REQUIRE_MESH_SUPPORT();
  test::TempDir dir;
  const SceneBodies scene = SceneBodies::load(std::filesystem::path(GRAIN_SOURCE_DIR) / "tests" /
                                              "e2e" / "convert_scene.xml");
  io::SimState st;
  for (std::size_t i = 0; i < scene.scene().system.bodies.size(); ++i) {
    const auto& b = scene.scene().system.bodies;
    if (!b.isSimulated(i)) {
      continue;
    }
    io::SimBodyState s;
    s.id = b.ids()[i];
    s.position = b.positions()[i];
    s.orientation = b.orientations()[i];
    s.velocity = b.velocities()[i] * static_cast<double>(i % 3);
    st.bodies.push_back(s);
  }
  TessellationOptions t;
  t.planeHalfSize = 3.0;
  const RenderScene rs = prepareRenderScene(scene, t);
  EXPECT_GT(rs.staticMesh.triangles.size(), 50u);
  RenderOptions o;
  o.camera = fitCamera(stateBounds(st, scene), Vec3(1, -1.6, 0.9), Vec3::UnitZ(), 40, 160, 120);
  o.speedMax = 2.0;
  writePng(renderState(st, scene, rs, o), dir / "scene.png");
  const Image img = readPng(dir / "scene.png");
  std::set<std::uint32_t> colours;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      const auto p = img.pixel(x, y);
      colours.insert((p[0] << 16) | (p[1] << 8) | p[2]);
    }
  }
  EXPECT_GT(colours.size(), 200u);

  // POV-Ray and RIB: one sphere primitive per sphere body, meshes for the boxes.
  writePovRay(st, scene, rs, o, dir / "scene.pov");
  writeRib(st, scene, rs, o, "scene.tif", dir / "scene.rib");
  const std::string pov = test::readText(dir / "scene.pov");
  const std::string rib = test::readText(dir / "scene.rib");
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count(pov, "\nsphere {"), 48u);
  EXPECT_EQ(count(pov, "\nplane {"), 1u);
  EXPECT_EQ(count(pov, "\nmesh {"), 1u + 3u);  // static mesh + 3 bricks
  EXPECT_NE(pov.find("camera { perspective location"), std::string::npos);
  EXPECT_EQ(count(rib, "\nSphere "), 48u);
  EXPECT_EQ(count(rib, "PointsPolygons"), 1u + 3u);
  EXPECT_NE(rib.find("Display \"scene.tif\" \"file\" \"rgb\""), std::string::npos);
  EXPECT_NE(rib.find("WorldEnd"), std::string::npos);
}

/// The simulated bodies of `scene` at their initial positions, all moving at 1 m/s.
io::SimState initialStateAtUnitSpeed(const SceneBodies& scene) {
  io::SimState st;
  const auto& b = scene.scene().system.bodies;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b.isSimulated(i)) {
      io::SimBodyState s;
      s.id = b.ids()[i];
      s.position = b.positions()[i];
      s.orientation = b.orientations()[i];
      s.velocity = Vec3(1, 0, 0);
      st.bodies.push_back(s);
    }
  }
  return st;
}

/// The options grain-convert render uses by default for `st` (fitted camera from the default
/// view direction, up against gravity) at w x h pixels, speeds 0..1 m/s.
RenderOptions defaultOptions(const io::SimState& st, const SceneBodies& scene, int w, int h) {
  RenderOptions o;
  o.camera = fitCamera(stateBounds(st, scene), Vec3(1, -1.6, 0.9), -scene.gravity().normalized(),
                       40, w, h);
  o.speedMin = 0.0;
  o.speedMax = 1.0;
  return o;
}

TEST(Render, DefaultPictureOfTheBoxedPileShowsTheBodiesNotTheWalls) {
  // scenes/pile.xml: beads in a box of a floor and four halfspace walls. The walls between the
  // default camera and the beads are cut away, so the pixel at every bead's centre shows a bead
  // (all red: every bead at the top speed), not a grey wall.
  const SceneBodies scene =
      SceneBodies::load(std::filesystem::path(GRAIN_SOURCE_DIR) / "scenes" / "pile.xml");
  const io::SimState st = initialStateAtUnitSpeed(scene);
  ASSERT_EQ(st.bodies.size(), 3000u);
  TessellationOptions t;
  t.planeCentre = stateBounds(st, scene).centre();
  t.planeHalfSize = stateBounds(st, scene).diagonal();
  const RenderScene rs = prepareRenderScene(scene, t);
  RenderOptions o = defaultOptions(st, scene, 160, 120);
  o.colourBar = false;
  const Image img = renderState(st, scene, rs, o);

  // Two of the four walls (two triangles each) have the eye on their solid side.
  const std::vector<bool> cut = cutAwayStaticTriangles(scene, rs, o.camera.eye);
  EXPECT_EQ(std::count(cut.begin(), cut.end(), true), 4);

  Vec3 right, up, fwd;
  o.camera.frame(right, up, fwd);
  const double tanY = std::tan(0.5 * o.camera.fovDeg * 3.14159265358979 / 180.0);
  const double tanX = tanY * o.camera.width / o.camera.height;
  int inside = 0;
  int red = 0;
  for (const auto& b : st.bodies) {
    const Vec3 d = b.position - o.camera.eye;
    const double z = d.dot(fwd);
    const int x = static_cast<int>((d.dot(right) / (z * tanX) + 1.0) * 0.5 * o.camera.width);
    const int y = static_cast<int>((1.0 - d.dot(up) / (z * tanY)) * 0.5 * o.camera.height);
    if (x < 0 || y < 0 || x >= img.width || y >= img.height) {
      continue;
    }
    ++inside;
    const auto p = img.pixel(x, y);
    red += (p[0] > 120 && p[0] > p[1] + 50 && p[0] > p[2] + 50) ? 1 : 0;
  }
  EXPECT_EQ(inside, 3000);
  EXPECT_GE(red, 2900) << "of " << inside << " bead centres, " << red << " show a bead";
}

TEST(Render, ColourBarHasItsNumbersAndUnit) {
  const SceneBodies scene =
      SceneBodies::load(std::filesystem::path(GRAIN_SOURCE_DIR) / "scenes" / "pile.xml");
  const io::SimState st = initialStateAtUnitSpeed(scene);
  RenderOptions o = defaultOptions(st, scene, 400, 300);
  const RenderScene rs;  // bodies only
  const Image withBar = renderState(st, scene, rs, o);
  o.speedMax = 27.5;
  const Image otherRange = renderState(st, scene, rs, o);
  o.colourBar = false;
  const Image without = renderState(st, scene, rs, o);
  // The bar spans rows h/6 .. 5h/6 at the right edge; labels are left of it, the title
  // "speed [m/s]" above it. Dark text pixels appear there only with the bar.
  const int barX0 = 400 - 400 / 40 - 12;
  const int top = 300 / 6;
  const int middle = 300 / 2;
  const int bottom = 300 - 300 / 6;
  auto darkPixels = [](const Image& img, int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const auto p = img.pixel(x, y);
        n += (p[0] < 80 && p[1] < 80 && p[2] < 80) ? 1 : 0;
      }
    }
    return n;
  };
  auto differ = [](const Image& a, const Image& b, int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        n += a.pixel(x, y) != b.pixel(x, y) ? 1 : 0;
      }
    }
    return n;
  };
  // Title above the top label.
  EXPECT_GT(darkPixels(withBar, barX0 - 100, top - 30, 399, top - 9), 20);
  EXPECT_EQ(darkPixels(without, barX0 - 100, top - 30, 399, top - 9), 0);
  // Labels of the highest, middle and lowest speed.
  for (const int y : {top, middle, bottom}) {
    EXPECT_GT(darkPixels(withBar, barX0 - 60, y - 4, barX0 - 4, y + 4), 5) << y;
    EXPECT_EQ(darkPixels(without, barX0 - 60, y - 4, barX0 - 4, y + 4), 0) << y;
  }
  // The numbers follow the range ("1" and "0.5" against "27.5" and "13.8"); the lowest speed
  // is 0 in both.
  EXPECT_GT(differ(withBar, otherRange, barX0 - 60, top - 4, barX0 - 4, top + 4), 10);
  EXPECT_GT(differ(withBar, otherRange, barX0 - 60, middle - 4, barX0 - 4, middle + 4), 10);
  EXPECT_EQ(differ(withBar, otherRange, barX0 - 60, bottom - 4, barX0 - 4, bottom + 4), 0);
}

TEST(Camera, ValidationAndFitting) {
  Camera c;
  c.eye = c.target;
  EXPECT_THROW(c.validate(), ConvertError);
  c.eye = Vec3(0, 0, 5);
  c.up = Vec3::UnitZ();
  EXPECT_THROW(c.validate(), ConvertError);
  c.up = Vec3::UnitY();
  c.width = 0;
  EXPECT_THROW(c.validate(), ConvertError);
  Bounds b;
  b.add(Vec3(1, 2, 3), 0.5);
  b.add(Vec3(3, 2, 3), 0.5);
  const Camera f = fitCamera(b, Vec3(0, -1, 0), Vec3::UnitZ(), 40, 100, 100);
  EXPECT_EQ(f.target, Vec3(2, 2, 3));
  // The bounding sphere (radius = half diagonal) fits the field of view.
  const double radius = 0.5 * b.diagonal();
  const double half = std::asin(radius / (f.eye - f.target).norm()) * 180.0 / 3.14159265358979;
  EXPECT_LT(half, 20.0);
  EXPECT_GT(half, 17.0);
  EXPECT_EQ(speedColour(-1.0), speedColour(0.0));
  EXPECT_EQ(speedColour(7.0), speedColour(1.0));
}

}  // namespace
}  // namespace grain::convert
