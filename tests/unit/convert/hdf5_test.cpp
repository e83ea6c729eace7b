// SPDX-License-Identifier: MIT
// HDF5 and XDMF output read back with the HDF5 C API; grid sampling against closed forms.
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#ifdef GRAIN_WITH_HDF5
#include <hdf5.h>
#include <pugixml.hpp>

#include <grain/convert/grid.hpp>
#include <grain/convert/hdf5_export.hpp>

#include "convert_test_util.hpp"

namespace grain::convert {
namespace {

constexpr double kPi = 3.14159265358979323846;

template <class T>
hid_t memType() {
  if constexpr (std::is_same_v<T, double>) {
    return H5T_NATIVE_DOUBLE;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return H5T_NATIVE_UINT64;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return H5T_NATIVE_INT32;
  } else {
    return H5T_NATIVE_UINT32;
  }
}

/// Whole dataset `name` of `file`; `dims` receives its shape; `chunk` its chunk shape.
template <class T>
std::vector<T> readH5(const std::filesystem::path& file, const std::string& name,
                      std::vector<hsize_t>& dims, std::vector<hsize_t>* chunk = nullptr) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(f, 0) << file;
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << name;
  const hid_t s = H5Dget_space(d);
  dims.resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  hsize_t n = 1;
  for (auto x : dims) {
    n *= x;
  }
  std::vector<T> v(n);
  EXPECT_GE(H5Dread(d, memType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  if (chunk != nullptr) {
    const hid_t p = H5Dget_create_plist(d);
    chunk->assign(dims.size(), 0);
    if (H5Pget_layout(p) == H5D_CHUNKED) {
      H5Pget_chunk(p, static_cast<int>(dims.size()), chunk->data());
    } else {
      chunk->clear();
    }
    H5Pclose(p);
  }
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

std::string readStringAttribute(const std::filesystem::path& file, const std::string& name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t a = H5Aopen(f, name.c_str(), H5P_DEFAULT);
  const hid_t t = H5Aget_type(a);
  std::string s(H5Tget_size(t), '\0');
  H5Aread(a, t, s.data());
  H5Tclose(t);
  H5Aclose(a);
  H5Fclose(f);
  return s;
}

TEST(Hdf5, StatesReadBackWithDocumentedLayout) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 9, 5);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  StateFilter f;
  f.every = 2;  // states 0, 2, 4
  BodySelector sel;
  sel.parse("1:*");  // 1, 3, 5, 7
  Hdf5Options opt;
  opt.chunkBodies = 3;
  opt.deflate = 4;
  writeHdf5States(seq, f.apply(seq.states()), sel, SceneBodies(0.1), dir / "out.h5", opt);
  EXPECT_EQ(readStringAttribute(dir / "out.h5", "format"), "grain-states");
  std::vector<hsize_t> dims, chunk;
  const auto time = readH5<double>(dir / "out.h5", "/time", dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{3}));
  EXPECT_EQ(time[2], 0.1 * 4);
  const auto ids = readH5<std::uint64_t>(dir / "out.h5", "/bodies/id", dims);
  ASSERT_EQ(ids, (std::vector<std::uint64_t>{makeBodyId(1, 1), makeBodyId(1, 3), makeBodyId(1, 5),
                                             makeBodyId(1, 7)}));
  const auto radius = readH5<double>(dir / "out.h5", "/bodies/radius", dims);
  EXPECT_EQ(radius, std::vector<double>(4, 0.1));
  const auto pos = readH5<double>(dir / "out.h5", "/states/position", dims, &chunk);
  ASSERT_EQ(dims, (std::vector<hsize_t>{3, 4, 3}));
  EXPECT_EQ(chunk, (std::vector<hsize_t>{1, 3, 3}));
  const auto quat = readH5<double>(dir / "out.h5", "/states/orientation", dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{3, 4, 4}));
  const auto speed = readH5<double>(dir / "out.h5", "/states/speed", dims, &chunk);
  ASSERT_EQ(dims, (std::vector<hsize_t>{3, 4}));
  EXPECT_EQ(chunk, (std::vector<hsize_t>{1, 3}));
  const auto omega = readH5<double>(dir / "out.h5", "/states/angular_velocity", dims);
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t i = 0; i < 4; ++i) {
      const auto b = test::freeFlightBody(ids[i], bodyNumber(ids[i]), time[k]);
      for (std::size_t c = 0; c < 3; ++c) {
        EXPECT_EQ(pos[(k * 4 + i) * 3 + c], b.position[static_cast<int>(c)]);
      }
      EXPECT_EQ(quat[(k * 4 + i) * 4 + 3], b.orientation.w());  // x, y, z, w
      EXPECT_DOUBLE_EQ(speed[k * 4 + i], b.velocity.norm());
      EXPECT_NEAR(omega[(k * 4 + i) * 3 + 2], bodyNumber(ids[i]), 1e-12);
    }
  }
  std::vector<hsize_t> d2;
  EXPECT_EQ(readH5<std::uint32_t>(dir / "out.h5", "/source_file", d2).size(), 3u);
}

TEST(Hdf5, XdmfReferencesExistingDatasetsWithMatchingShapes) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 5, 3);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  const SceneBodies scene = SceneBodies::load(std::filesystem::path(GRAIN_SOURCE_DIR) / "tests" /
                                              "e2e" / "convert_scene.xml");
  // The scene's ids differ from the file's: radius and shape fall back to sphere defaults.
  writeHdf5States(seq, seq.states(), {}, scene, dir / "x.h5", {});
  writeXdmf(dir / "x.xmf", dir / "x.h5");
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_file((dir / "x.xmf").c_str()));
  const auto domain = doc.child("Xdmf").child("Domain");
  const auto temporal = domain.find_child_by_attribute("Grid", "Name", "bodies");
  std::size_t grids = 0;
  std::size_t items = 0;
  for (const auto& g : temporal.children("Grid")) {
    EXPECT_DOUBLE_EQ(g.child("Time").attribute("Value").as_double(), 0.1 * grids);
    EXPECT_EQ(g.child("Topology").attribute("NumberOfElements").as_int(), 5);
    ++grids;
  }
  EXPECT_EQ(grids, 3u);
  // Every HDF item names an existing dataset whose shape is the declared Dimensions.
  for (const auto& x : doc.select_nodes("//DataItem[@Format='HDF']")) {
    const std::string ref = x.node().child_value();
    const auto colon = ref.find(':');
    ASSERT_NE(colon, std::string::npos);
    EXPECT_EQ(ref.substr(0, colon), "x.h5");
    std::vector<hsize_t> dims;
    readH5<double>(dir / "x.h5", ref.substr(colon + 1), dims);
    std::string shape;
    for (const auto d : dims) {
      shape += (shape.empty() ? "" : " ") + std::to_string(d);
    }
    EXPECT_EQ(shape, x.node().attribute("Dimensions").value()) << ref;
    ++items;
  }
  EXPECT_GT(items, 20u);
  // The static grid: floor, post and mesh as triangles.
  const auto st = domain.find_child_by_attribute("Grid", "Name", "static");
  ASSERT_TRUE(st);
  EXPECT_GT(st.child("Topology").attribute("NumberOfElements").as_int(), 50);
}

TEST(Grid, SolidFractionAndVelocityOfOneSphere) {
  // A sphere of radius 0.3 at the centre of the box [-1, 1]^3 on 4^3 cells.
  GridSpec g;
  g.min = Vec3::Constant(-1);
  g.max = Vec3::Constant(1);
  g.dims = {4, 4, 4};
  g.samples = 10;
  io::SimState st;
  io::SimBodyState b;
  b.id = 7;
  b.position = Vec3(0, 0, 0);
  b.velocity = Vec3(1, -2, 0.5);
  b.omegaBody = Vec3(0, 0, 3);
  st.bodies.push_back(b);
  const GridFields f = sampleGrid(g, st, SceneBodies(0.3));
  double volume = 0.0;
  const double cellVolume = 0.125;
  for (std::size_t c = 0; c < g.cellCount(); ++c) {
    volume += f.solidFraction[c] * cellVolume;
  }
  EXPECT_NEAR(volume, 4.0 / 3.0 * kPi * 0.027, 0.03 * 4.0 / 3.0 * kPi * 0.027);
  // The sphere touches the 8 central cells, symmetrically: each gets an eighth.
  const std::size_t centre = g.index(1, 1, 1);
  EXPECT_NEAR(f.solidFraction[centre], volume / 8 / cellVolume, 1e-12);
  EXPECT_EQ(f.solidFraction[g.index(0, 0, 0)], 0.0);
  // Mean of v + omega x d over the sphere's points in the cell (-x, -y, -z octant): the
  // rotation adds omega x (mean d) with mean d = -(3/8) r (1, 1, 1)... for an octant of a ball.
  const Vec3 meanD = -3.0 / 8.0 * 0.3 * Vec3(1, 1, 1);
  const Vec3 expected = b.velocity + Vec3(0, 0, 3).cross(meanD);
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(f.velocity[3 * centre + a], expected[a], 0.03);
  }
  // The centre lies on the corner of cell (2,2,2).
  EXPECT_EQ(f.bodyCount[g.index(2, 2, 2)], 1u);
  EXPECT_EQ(std::accumulate(f.bodyCount.begin(), f.bodyCount.end(), 0u), 1u);
}

TEST(Grid, BoxShapeFromSceneAndHdf5Output) {
  test::TempDir dir;
  const SceneBodies scene = SceneBodies::load(std::filesystem::path(GRAIN_SOURCE_DIR) / "tests" /
                                              "e2e" / "convert_scene.xml");
  // Brick (1,0) of the scene: box 0.3 x 0.15 x 0.1, here axis-aligned at the origin.
  io::SimState st;
  io::SimBodyState b;
  b.id = makeBodyId(1, 0);
  st.bodies.push_back(b);
  GridSpec g;
  g.min = Vec3(-0.5, -0.5, -0.5);
  g.max = Vec3(0.5, 0.5, 0.5);
  g.dims = {5, 5, 5};
  g.samples = 8;
  const GridFields f = sampleGrid(g, st, scene);
  double volume = 0.0;
  for (double x : f.solidFraction) {
    volume += x * 0.008;
  }
  EXPECT_NEAR(volume, 0.3 * 0.15 * 0.1, 0.1 * 0.3 * 0.15 * 0.1);
  GridSpec bad;
  bad.dims = {0, 1, 1};
  EXPECT_THROW(bad.validate(), ConvertError);

  test::writeFreeFlight(dir / "in.sim", 3, 2);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  GridSpec big;
  big.min = Vec3(-1, -1, 0);
  big.max = Vec3(3, 1, 3);
  big.dims = {8, 4, 6};
  writeGridHdf5(seq, seq.states(), {}, SceneBodies(0.2), big, dir / "grid.h5");
  std::vector<hsize_t> dims;
  readH5<double>(dir / "grid.h5", "/velocity", dims);
  EXPECT_EQ(dims, (std::vector<hsize_t>{2, 8, 4, 6, 3}));
  const auto frac = readH5<double>(dir / "grid.h5", "/solid_fraction", dims);
  EXPECT_EQ(dims, (std::vector<hsize_t>{2, 8, 4, 6}));
  const auto count = readH5<std::uint32_t>(dir / "grid.h5", "/body_count", dims);
  EXPECT_EQ(std::accumulate(count.begin(), count.begin() + 8 * 4 * 6, 0u), 3u);
  const auto x = readH5<double>(dir / "grid.h5", "/grid/x", dims);
  EXPECT_EQ(x.size(), 8u);
  EXPECT_DOUBLE_EQ(x[0], -0.75);
  double v = 0.0;
  for (std::size_t c = 0; c < 8 * 4 * 6; ++c) {
    v += frac[c] * 0.5 * 0.5 * 0.5;
  }
  EXPECT_NEAR(v, 3 * 4.0 / 3.0 * kPi * 0.008, 0.1 * 3 * 4.0 / 3.0 * kPi * 0.008);
}

}  // namespace
}  // namespace grain::convert

#endif  // GRAIN_WITH_HDF5
