// SPDX-License-Identifier: MIT
// grain-convert end to end: every subcommand on a small grain-sim run, outputs read back (.sim
// with the reader, VTK/XDMF as XML, HDF5 with the C API, PNG with libpng, CSV against closed
// forms of the free fall).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>
#ifdef GRAIN_WITH_HDF5
#include <hdf5.h>
#endif
#include <pugixml.hpp>

#include <grain/convert/render.hpp>
#include <grain/io/sim_file.hpp>

#include "e2e_util.hpp"

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

/// CSV rows (comment lines skipped, header dropped) as numbers.
std::vector<std::vector<double>> readCsv(const fs::path& f, std::vector<std::string>* header) {
  std::ifstream in(f);
  std::string line;
  std::vector<std::vector<double>> rows;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream ls(line);
    std::string cell;
    std::vector<double> row;
    std::vector<std::string> names;
    while (std::getline(ls, cell, ',')) {
      if (first) {
        names.push_back(cell);
      } else {
        row.push_back(std::stod(cell));
      }
    }
    if (first) {
      if (header != nullptr) {
        *header = names;
      }
      first = false;
    } else {
      rows.push_back(row);
    }
  }
  return rows;
}

#ifdef GRAIN_WITH_HDF5
std::vector<hsize_t> h5Dims(const fs::path& file, const std::string& name) {
  std::vector<hsize_t> dims;
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    return dims;
  }
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  if (d >= 0) {
    const hid_t s = H5Dget_space(d);
    dims.resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(s)));
    H5Sget_simple_extent_dims(s, dims.data(), nullptr);
    H5Sclose(s);
    H5Dclose(d);
  }
  H5Fclose(f);
  return dims;
}

std::vector<double> h5Doubles(const fs::path& file, const std::string& name) {
  std::vector<hsize_t> dims = h5Dims(file, name);
  hsize_t n = 1;
  for (auto x : dims) {
    n *= x;
  }
  std::vector<double> v(n);
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

#endif

/// One run of tests/e2e/convert_scene.xml shared by the tests: 48 spheres (group 0) and 3 boxes
/// (group 1) in free fall for 0.5 s, 11 states.
class Convert : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Per process: ctest may run the tests of this suite in parallel.
    dir_ = makeTempDir("convert_" + std::to_string(getpid()));
    const CommandResult r = runCommand(std::string(GRAIN_SIM_EXE) + " -s " + scene().string() +
                                       " -g " + (dir_ / "run").string());
    ASSERT_EQ(r.exitCode, 0) << r.output;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static fs::path scene() {
    return fs::path(GRAIN_SOURCE_DIR) / "tests" / "e2e" / "convert_scene.xml";
  }
  static fs::path record() { return dir_ / "run" / "SimFiles" / "SimDataRECORD_0"; }
  static fs::path simFile() { return record() / "SimState.sim"; }
  static CommandResult convert(const std::string& args) {
    return runCommand(std::string(GRAIN_CONVERT_EXE) + " " + args);
  }
  static fs::path dir_;
};
fs::path Convert::dir_;

TEST_F(Convert, EverySubcommandHasHelp) {
  std::vector<std::string> commands = {"info", "sim", "vtk", "analyze", "render"};
#ifdef GRAIN_WITH_HDF5
  commands.insert(commands.end(), {"xdmf", "hdf5", "grid"});
#endif
  for (const std::string& cmd : commands) {
    const CommandResult r = convert(cmd + " --help");
    EXPECT_EQ(r.exitCode, 0) << cmd << r.output;
    EXPECT_NE(r.output.find("usage: grain-convert " + cmd), std::string::npos) << r.output;
  }
  const CommandResult top = convert("--help");
  EXPECT_EQ(top.exitCode, 0);
  EXPECT_NE(top.output.find("render"), std::string::npos);
  EXPECT_EQ(convert("frobnicate").exitCode, 2);
  EXPECT_EQ(runCommand(GRAIN_CONVERT_EXE).exitCode, 2);
}

TEST_F(Convert, InfoReportsTheRunAndTruncation) {
  const CommandResult r = convert("info " + simFile().string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("51 per state in 2 group(s), sorted by id"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("11 (5720 bytes each, 112 per body)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("truncated     no"), std::string::npos) << r.output;
  const fs::path cut = dir_ / "cut.sim";
  fs::copy_file(simFile(), cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, fs::file_size(cut) - 1000);
  const CommandResult c = convert("info " + cut.string());
  EXPECT_NE(c.output.find("states        10"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("yes: a partial last state of 4720 bytes is ignored"), std::string::npos)
      << c.output;
  const CommandResult missing = convert("info " + (dir_ / "nope.sim").string());
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.output.find("nope.sim"), std::string::npos) << missing.output;
  const fs::path bad = dir_ / "bad.sim";
  std::ofstream(bad) << "MBSX and some bytes to make it long enough";
  const CommandResult b = convert("info " + bad.string());
  EXPECT_EQ(b.exitCode, 2);
  EXPECT_NE(b.output.find("signature"), std::string::npos) << b.output;
}

TEST_F(Convert, SimSplitsAndJoinsBackToTheSameBytes) {
  const fs::path a = dir_ / "first.sim";
  const fs::path b = dir_ / "second.sim";
  const fs::path j = dir_ / "joined.sim";
  for (const auto& f : {a, b, j}) {
    fs::remove(f);
  }
  ASSERT_EQ(convert("sim -q " + simFile().string() + " --t-max 0.26 -o " + a.string()).exitCode, 0);
  ASSERT_EQ(convert("sim -q " + simFile().string() + " --first 5 -o " + b.string()).exitCode, 0);
  // State 5 (t = 0.25) is in both: the join skips the repeated one.
  const CommandResult r = convert("sim " + a.string() + " " + b.string() + " -o " + j.string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(j), readText(simFile()));
  // Bodies and resampling.
  const fs::path s = dir_ / "sel.sim";
  fs::remove(s);
  ASSERT_EQ(
      convert("sim -q " + simFile().string() + " -b 0:0-9 -g 1 -k 5 -o " + s.string()).exitCode, 0);
  io::SimFileReader rs;
  rs.open(s);
  EXPECT_EQ(rs.header().nSimBodies, 13u);
  EXPECT_EQ(rs.stateCount(), 3u);  // 0, 5, 10
  EXPECT_NEAR(rs.readTime(2), 0.5, 1e-12);
  // The output is not overwritten.
  EXPECT_EQ(convert("sim -q " + simFile().string() + " -o " + s.string()).exitCode, 2);
  // Split.
  const fs::path split = dir_ / "split" / "s.sim";
  fs::remove_all(dir_ / "split");
  ASSERT_EQ(convert("sim -q --split " + simFile().string() + " -k 4 -o " + split.string()).exitCode,
            0);
  io::SimFileReader r2;
  r2.open(dir_ / "split" / "s_00002.sim");
  EXPECT_EQ(r2.stateCount(), 1u);
  EXPECT_NEAR(r2.readTime(0), 0.4, 1e-12);
}

TEST_F(Convert, VtkSeriesWithStaticGeometry) {
  const fs::path out = dir_ / "vtk";
  fs::remove_all(out);
  const CommandResult r = convert("vtk -q --ascii " + simFile().string() + " -s " +
                                  scene().string() + " -o " + out.string() + " -n run");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  pugi::xml_document pvd;
  ASSERT_TRUE(pvd.load_file((out / "run.pvd").c_str()));
  std::size_t parts[2] = {0, 0};
  for (const auto& ds : pvd.child("VTKFile").child("Collection").children("DataSet")) {
    ++parts[ds.attribute("part").as_int()];
    EXPECT_TRUE(fs::exists(out / ds.attribute("file").value()));
  }
  EXPECT_EQ(parts[0], 11u);
  EXPECT_EQ(parts[1], 11u);
  pugi::xml_document vtu;
  ASSERT_TRUE(vtu.load_file((out / "run" / "run_00010.vtu").c_str()));
  const auto piece = vtu.child("VTKFile").child("UnstructuredGrid").child("Piece");
  EXPECT_EQ(piece.attribute("NumberOfPoints").as_int(), 51);
  // Radius and shape from the scene: 48 spheres of 0.1, 3 boxes.
  std::istringstream radius(
      piece.child("PointData").find_child_by_attribute("Name", "radius").child_value());
  std::istringstream shape(
      piece.child("PointData").find_child_by_attribute("Name", "shape").child_value());
  int spheres = 0;
  double rad = 0;
  int sh = 0;
  while (radius >> rad && shape >> sh) {
    spheres += (sh == 0 && rad == 0.1) ? 1 : 0;
  }
  EXPECT_EQ(spheres, 48);
  // Points equal the .sim positions of the last state.
  io::SimFileReader reader;
  reader.open(simFile());
  const io::SimState last = reader.readState(10);
  std::istringstream pts(piece.child("Points").child("DataArray").child_value());
  for (const auto& b : last.bodies) {
    double x, y, z;
    ASSERT_TRUE(pts >> x >> y >> z);
    EXPECT_EQ(x, b.position.x());
    EXPECT_EQ(z, b.position.z());
  }
  pugi::xml_document st;
  ASSERT_TRUE(st.load_file((out / "run_static.vtu").c_str()));
  EXPECT_GT(st.child("VTKFile")
                .child("UnstructuredGrid")
                .child("Piece")
                .attribute("NumberOfCells")
                .as_int(),
            50);
}

#ifdef GRAIN_WITH_HDF5
TEST_F(Convert, XdmfAndHdf5ReadBack) {
  const fs::path x = dir_ / "x" / "run.xmf";
  const CommandResult r = convert("xdmf -q " + simFile().string() + " -s " + scene().string() +
                                  " -o " + x.string() + " -k 2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const fs::path h5 = dir_ / "x" / "run.h5";
  EXPECT_EQ(h5Dims(h5, "/states/position"), (std::vector<hsize_t>{6, 51, 3}));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_file(x.c_str()));
  EXPECT_EQ(doc.select_nodes("//Grid[@Name='bodies']/Grid").size(), 6u);
  EXPECT_EQ(doc.select_nodes("//Grid[@Name='static']").size(), 1u);

  const fs::path out = dir_ / "all.h5";
  const CommandResult h =
      convert("hdf5 -q " + simFile().string() + " -b 0:* --deflate 3 -o " + out.string());
  ASSERT_EQ(h.exitCode, 0) << h.output;
  EXPECT_EQ(h5Dims(out, "/states/velocity"), (std::vector<hsize_t>{11, 48, 3}));
  const auto time = h5Doubles(out, "/time");
  const auto vel = h5Doubles(out, "/states/velocity");
  // Free fall: v_z = -10 t for every sphere (they start with v = (1, 0, 0)).
  for (std::size_t k = 0; k < 11; ++k) {
    for (std::size_t i = 0; i < 48; ++i) {
      EXPECT_NEAR(vel[(k * 48 + i) * 3 + 2], -10.0 * time[k], 1e-9);
      EXPECT_NEAR(vel[(k * 48 + i) * 3 + 0], 1.0, 1e-12);
    }
  }
  // h5dump (Debian hdf5-tools) reads it too, if installed.
  if (runCommand("command -v h5dump").exitCode == 0) {
    const CommandResult d = runCommand("h5dump -H " + out.string());
    EXPECT_EQ(d.exitCode, 0);
    EXPECT_NE(d.output.find("DATASET \"position\""), std::string::npos);
  }
}

TEST_F(Convert, GridConservesTheSolidVolume) {
  const fs::path out = dir_ / "grid.h5";
  const CommandResult r = convert("grid -q " + simFile().string() + " -s " + scene().string() +
                                  " -b 0:* --min -2,-2,1 --max 2,2,4 --dims 8,8,6 --samples 8 " +
                                  "--last 0 -o " + out.string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(h5Dims(out, "/velocity"), (std::vector<hsize_t>{1, 8, 8, 6, 3}));
  const auto frac = h5Doubles(out, "/solid_fraction");
  double v = 0.0;
  for (const double f : frac) {
    v += f * 0.5 * 0.5 * 0.5;
  }
  const double spheres = 48 * 4.0 / 3.0 * 3.14159265358979 * 0.001;
  EXPECT_NEAR(v, spheres, 0.1 * spheres);
  EXPECT_EQ(convert("grid -q " + simFile().string() + " -o " + out.string()).exitCode, 2);
}

#endif

TEST_F(Convert, AnalyzeMeasures) {
  // Crossing of z = 2.2 downwards: sphere i crosses when z0_i - 5 t^2 = 2.2.
  const fs::path c = dir_ / "crossing.csv";
  const CommandResult r = convert("analyze crossing -q " + simFile().string() +
                                  " -b 0:* --point 0,0,2.2 --normal 0,0,-1 -o " + c.string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("flow duration"), std::string::npos) << r.output;
  io::SimFileReader reader;
  reader.open(simFile());
  const io::SimState s0 = reader.readState(0);
  std::vector<std::string> header;
  const auto rows = readCsv(c, &header);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(header[2], "crossed");
  for (const auto& row : rows) {
    std::size_t expected = 0;
    for (const auto& b : s0.bodies) {
      if (bodyGroup(b.id) == 0) {
        expected += (b.position.z() - 5.0 * row[0] * row[0] <= 2.2 + 1e-9) ? 1 : 0;
      }
    }
    EXPECT_EQ(row[2], expected) << "t = " << row[0];
  }
  // Energy: total conserved by the free fall (translation exactly, rotation closely).
  const fs::path e = dir_ / "energy.csv";
  ASSERT_EQ(convert("analyze energy -q " + simFile().string() + " -s " + scene().string() + " -o " +
                    e.string())
                .exitCode,
            0);
  const auto er = readCsv(e, &header);
  ASSERT_EQ(header.back(), "total");
  for (const auto& row : er) {
    EXPECT_NEAR(row.back(), er[0].back(), 1e-6 * std::abs(er[0].back()));
  }
  EXPECT_EQ(convert("analyze energy -q " + simFile().string() + " -o " + e.string()).exitCode, 2);
  // Profile and packing run and have the documented columns.
  const fs::path p = dir_ / "profile.csv";
  ASSERT_EQ(
      convert("analyze profile -q " + simFile().string() + " --range 0,2 --bins 4 -o " + p.string())
          .exitCode,
      0);
  EXPECT_EQ(readCsv(p, &header).size(), 44u);
  EXPECT_EQ(header[3], "count");
  const fs::path k = dir_ / "packing.csv";
  ASSERT_EQ(convert("analyze packing -q " + simFile().string() + " -s " + scene().string() +
                    " --min -5,-5,-5 --max 5,5,5 --last 0 -o " + k.string())
                .exitCode,
            0);
  const auto kr = readCsv(k, &header);
  ASSERT_EQ(kr.size(), 1u);
  const double solid = 48 * 4.0 / 3.0 * 3.14159265358979 * 0.001 + 3 * 0.3 * 0.15 * 0.1;
  EXPECT_NEAR(kr[0][2], solid, 1e-9);
  // Contact statistics of the run log: 50 steps.
  const fs::path s = dir_ / "contacts.csv";
  const CommandResult cs =
      convert("analyze contacts " + (record() / "SimData.dat").string() + " -o " + s.string());
  ASSERT_EQ(cs.exitCode, 0) << cs.output;
  EXPECT_NE(cs.output.find("steps = 50"), std::string::npos) << cs.output;
  EXPECT_EQ(convert("analyze wobble " + simFile().string() + " -o x.csv").exitCode, 2);
}

TEST_F(Convert, RenderPngPovAndRib) {
  const fs::path png = dir_ / "frame.png";
  const CommandResult r = convert("render -q " + simFile().string() + " -s " + scene().string() +
                                  " --first 4 --last 4 --size 200x150 -o " + png.string());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const convert::Image img = convert::readPng(png);
  EXPECT_EQ(img.width, 200);
  EXPECT_EQ(img.height, 150);
  std::set<std::uint32_t> colours;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      const auto p = img.pixel(x, y);
      colours.insert((p[0] << 16) | (p[1] << 8) | p[2]);
    }
  }
  EXPECT_GT(colours.size(), 500u);
  const fs::path frames = dir_ / "frames";
  fs::remove_all(frames);
  ASSERT_EQ(convert("render -q " + simFile().string() + " -k 5 --size 64x48 --radius 0.1 -o " +
                    frames.string())
                .exitCode,
            0);
  EXPECT_TRUE(fs::exists(frames / "frame_00002.png"));
  ASSERT_EQ(convert("render -q -f pov " + simFile().string() + " -s " + scene().string() +
                    " -k 5 -o " + frames.string())
                .exitCode,
            0);
  ASSERT_EQ(convert("render -q -f rib " + simFile().string() + " -s " + scene().string() +
                    " -k 5 -o " + frames.string())
                .exitCode,
            0);
  EXPECT_NE(readText(frames / "frame_00001.pov").find("sphere {"), std::string::npos);
  EXPECT_NE(readText(frames / "frame_00002.rib").find("Sphere 0.1 -0.1 0.1 360"),
            std::string::npos);
  // POV-Ray (Debian povray) renders the exported scene, if installed.
  if (runCommand("command -v povray").exitCode == 0) {
    const fs::path pov = frames / "frame_00001.pov";
    const fs::path out = frames / "pov.png";
    const CommandResult p =
        runCommand("povray +W80 +H60 -D +O" + out.string() + " " + pov.string());
    ASSERT_EQ(p.exitCode, 0) << p.output;
    const convert::Image pi = convert::readPng(out);
    std::set<std::uint32_t> pc;
    for (int y = 0; y < pi.height; ++y) {
      for (int x = 0; x < pi.width; ++x) {
        const auto q = pi.pixel(x, y);
        pc.insert((q[0] << 16) | (q[1] << 8) | q[2]);
      }
    }
    EXPECT_GT(pc.size(), 50u);
  }
  EXPECT_EQ(convert("render -q " + simFile().string() + " --size 10 -o x.png").exitCode, 2);
}

}  // namespace
}  // namespace grain
