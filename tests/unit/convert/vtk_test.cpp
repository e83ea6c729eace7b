// SPDX-License-Identifier: MIT
// VTK XML output read back as XML: counts, data values (ASCII and base64), series file, static
// geometry of a scene.
#include <cstring>
#include <sstream>

#include <gtest/gtest.h>
#include <pugixml.hpp>

#include <grain/convert/vtk.hpp>

#include "../../common/mesh_support.hpp"
#include "convert_test_util.hpp"

namespace grain::convert {
namespace {

std::filesystem::path testScene() {
  return std::filesystem::path(GRAIN_SOURCE_DIR) / "tests" / "e2e" / "convert_scene.xml";
}

pugi::xml_node dataArray(const pugi::xml_node& parent, const std::string& name) {
  return parent.find_child_by_attribute("DataArray", "Name", name.c_str());
}

/// Values of a DataArray as doubles (ASCII or base64 with a UInt64 header).
std::vector<double> values(const pugi::xml_node& a) {
  const std::string type = a.attribute("type").value();
  const std::string text = a.child_value();
  std::vector<double> out;
  if (std::string(a.attribute("format").value()) == "ascii") {
    std::istringstream in(text);
    double v;
    while (in >> v) {
      out.push_back(v);
    }
    return out;
  }
  const auto bytes = test::base64Decode(text);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n + 8, bytes.size());
  const unsigned char* p = bytes.data() + 8;
  if (type == "Float64") {
    for (std::size_t i = 0; i < n / 8; ++i) {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      out.push_back(v);
    }
  } else if (type == "UInt64" || type == "Int64") {
    for (std::size_t i = 0; i < n / 8; ++i) {
      std::uint64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      out.push_back(static_cast<double>(v));
    }
  } else if (type == "UInt32" || type == "Int32") {
    for (std::size_t i = 0; i < n / 4; ++i) {
      std::int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      out.push_back(type == "UInt32" ? static_cast<double>(static_cast<std::uint32_t>(v)) : v);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(p[i]);
    }
  }
  return out;
}

TEST(Base64, KnownVectors) {
  auto enc = [](const std::string& s) {
    return base64Encode(
        std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(s.data()), s.size()));
  };
  EXPECT_EQ(enc(""), "");
  EXPECT_EQ(enc("f"), "Zg==");
  EXPECT_EQ(enc("fo"), "Zm8=");
  EXPECT_EQ(enc("foo"), "Zm9v");
  EXPECT_EQ(enc("foobar"), "Zm9vYmFy");
}

void checkSeries(bool binary) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 7, 4);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  VtkOptions opt;
  opt.binary = binary;
  BodySelector sel;
  sel.parse("0:*");  // bodies 0, 2, 4, 6
  const SceneBodies noScene(0.05);
  const auto pvd = writeVtkSeries(seq, seq.states(), sel, noScene, dir / "vtk", "run", opt);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_file(pvd.c_str()));
  const auto coll = doc.child("VTKFile").child("Collection");
  std::vector<std::string> files;
  for (const auto& ds : coll.children("DataSet")) {
    files.push_back(ds.attribute("file").value());
    EXPECT_STREQ(ds.attribute("part").value(), "0");  // no scene: no static part
  }
  ASSERT_EQ(files.size(), 4u);
  io::SimFileReader r;
  r.open(dir / "in.sim");
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_NEAR(coll.child("DataSet").attribute("timestep").as_double(), 0.0, 0.0);
    pugi::xml_document vtu;
    ASSERT_TRUE(vtu.load_file((dir / "vtk" / files[k]).c_str())) << files[k];
    const auto piece = vtu.child("VTKFile").child("UnstructuredGrid").child("Piece");
    ASSERT_EQ(piece.attribute("NumberOfPoints").as_int(), 4);
    ASSERT_EQ(piece.attribute("NumberOfCells").as_int(), 4);
    const auto pts = values(dataArray(piece.child("Points"), "Points"));
    const auto pd = piece.child("PointData");
    const auto id = values(dataArray(pd, "id"));
    const auto vel = values(dataArray(pd, "velocity"));
    const auto speed = values(dataArray(pd, "speed"));
    const auto radius = values(dataArray(pd, "radius"));
    const auto omega = values(dataArray(pd, "angular_velocity"));
    const auto group = values(dataArray(pd, "group"));
    ASSERT_EQ(pts.size(), 12u);
    ASSERT_EQ(id.size(), 4u);
    ASSERT_EQ(vel.size(), 12u);
    const io::SimState st = r.readState(k);
    for (std::size_t i = 0; i < 4; ++i) {
      const io::SimBodyState* b = st.find(static_cast<BodyId>(id[i]));
      ASSERT_NE(b, nullptr);
      EXPECT_EQ(bodyNumber(b->id), 2 * i);  // sorted by id
      EXPECT_EQ(group[i], 0.0);
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(pts[3 * i + c], b->position[c]);
        EXPECT_EQ(vel[3 * i + c], b->velocity[c]);
      }
      EXPECT_DOUBLE_EQ(speed[i], b->velocity.norm());
      EXPECT_EQ(radius[i], 0.05);
      // omega_I = A_IK omega_K; here about z, so the same vector.
      EXPECT_NEAR(omega[3 * i + 2], b->omegaBody.z(), 1e-12);
    }
    const auto types = values(dataArray(piece.child("Cells"), "types"));
    EXPECT_EQ(types, std::vector<double>(4, 1.0));  // VTK_VERTEX
  }
}

TEST(Vtk, AsciiSeriesReadsBack) {
  checkSeries(false);
}
TEST(Vtk, BinarySeriesReadsBack) {
  checkSeries(true);
}

TEST(Vtk, StaticGeometryOfTheScene) {
  GRAIN_REQUIRE_MESH_SUPPORT();
  test::TempDir dir;
  const SceneBodies scene = SceneBodies::load(testScene());
  TessellationOptions t;
  t.planeHalfSize = 2.0;
  t.planeCentre = Vec3(0.5, 0.5, 7.0);
  ASSERT_TRUE(writeStaticVtu(scene.scene(), t, false, dir / "static.vtu"));
  pugi::xml_document vtu;
  ASSERT_TRUE(vtu.load_file((dir / "static.vtu").c_str()));
  const auto piece = vtu.child("VTKFile").child("UnstructuredGrid").child("Piece");
  const int nt = piece.attribute("NumberOfCells").as_int();
  const auto material = values(dataArray(piece.child("CellData"), "material"));
  const auto shape = values(dataArray(piece.child("CellData"), "shape"));
  ASSERT_EQ(material.size(), static_cast<std::size_t>(nt));
  // Floor (material 2, 2 triangles), capsule post (3), tetrahedron mesh (4, 4 triangles).
  EXPECT_EQ(std::count(material.begin(), material.end(), 2.0), 2);
  EXPECT_EQ(std::count(material.begin(), material.end(), 4.0), 4);
  EXPECT_GT(std::count(material.begin(), material.end(), 3.0), 50);
  EXPECT_EQ(std::count(shape.begin(), shape.end(), static_cast<double>(ShapeType::Halfspace)), 2);
  // The floor patch is the square of half size 2 around (0.5, 0.5) in the plane z = 0.
  const auto pts = values(dataArray(piece.child("Points"), "Points"));
  double minX = 1e9, maxX = -1e9, minZ = 1e9;
  for (std::size_t i = 0; i + 2 < pts.size(); i += 3) {
    minX = std::min(minX, pts[i]);
    maxX = std::max(maxX, pts[i]);
    minZ = std::min(minZ, pts[i + 2]);
  }
  EXPECT_NEAR(minX, -1.5, 1e-12);
  EXPECT_NEAR(maxX, 2.5, 1e-12);
  EXPECT_NEAR(minZ, 0.0, 1e-12);
}

TEST(Vtk, TessellatedBodiesCarryCellData) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 3, 1);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  VtkOptions opt;
  opt.tessellate = true;
  opt.binary = false;
  opt.tessellation.sphereSubdivisions = 1;  // 80 triangles
  writeVtkSeries(seq, seq.states(), {}, SceneBodies(0.2), dir.path(), "t", opt);
  pugi::xml_document vtu;
  ASSERT_TRUE(vtu.load_file((dir / "t" / "t_00000.vtu").c_str()));
  const auto piece = vtu.child("VTKFile").child("UnstructuredGrid").child("Piece");
  EXPECT_EQ(piece.attribute("NumberOfCells").as_int(), 240);
  const auto id = values(dataArray(piece.child("CellData"), "id"));
  ASSERT_EQ(id.size(), 240u);
  EXPECT_EQ(std::count(id.begin(), id.end(), static_cast<double>(makeBodyId(1, 1))), 80);
  // Every vertex lies on its sphere of radius 0.2.
  const auto pts = values(dataArray(piece.child("Points"), "Points"));
  const io::SimState st = seq.read(seq.states()[0]);
  std::size_t onSphere = 0;
  for (std::size_t i = 0; i + 2 < pts.size(); i += 3) {
    const Vec3 p(pts[i], pts[i + 1], pts[i + 2]);
    for (const auto& b : st.bodies) {
      onSphere += std::abs((p - b.position).norm() - 0.2) < 1e-9 ? 1 : 0;
    }
  }
  EXPECT_EQ(onSphere, pts.size() / 3);
}

}  // namespace
}  // namespace grain::convert
