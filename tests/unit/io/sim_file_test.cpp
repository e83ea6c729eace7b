// SPDX-License-Identifier: MIT
// .sim files: byte layout, round trips, truncated files, wrong headers.
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/io/sim_file.hpp>

#include "io_test_util.hpp"

namespace grain::io {
namespace {

using test::TempDir;

std::vector<unsigned char> readBytes(const std::filesystem::path& file) {
  const std::string s = test::readText(file);
  return std::vector<unsigned char>(s.begin(), s.end());
}

void writeBytes(const std::filesystem::path& file, const std::vector<unsigned char>& bytes) {
  test::writeText(file, std::string(bytes.begin(), bytes.end()));
}

BodyDef simulatedBody(BodyId id, ShapeIndex shape) {
  BodyDef d;
  d.id = id;
  d.shape = shape;
  d.mass = 1.0;
  d.inertiaBody = Vec3::Constant(0.1);
  return d;
}

/// Three simulated bodies added out of id order, one static body and one remote body.
DynamicsSystem makeSystem() {
  DynamicsSystem s;
  const ShapeIndex sphere = s.shapes.add(Sphere{0.1});
  const ShapeIndex plane = s.shapes.add(Halfspace{Vec3::UnitZ()});
  const BodyId ids[] = {makeBodyId(2, 0), makeBodyId(0, 7), makeBodyId(0, 3)};
  for (int k = 0; k < 3; ++k) {
    BodyDef d = simulatedBody(ids[k], sphere);
    d.material = 10 + k;
    d.position = Vec3(0.1 * k, -1.0 / 3.0, 1e-300);
    d.orientation = Quat(Eigen::AngleAxis<Real>(0.3 + k, Vec3(1, 2, 3).normalized()));
    d.velocity = Vec3(1.0 / 7.0, k, -2.5);
    d.omegaBody = Vec3(std::sqrt(2.0), -k, 1e10);
    s.addBody(d);
  }
  BodyDef floor;
  floor.id = makeBodyId(1, 0);
  floor.motion = BodyMotion::Static;
  floor.shape = plane;
  s.addBody(floor);
  BodyDef remote = simulatedBody(makeBodyId(0, 1), sphere);
  remote.ownership = BodyOwnership::Remote;
  s.addBody(remote);
  return s;
}

bool sameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

TEST(SimFile, HeaderBytesOfTwoBodyFile) {
  TempDir dir;
  DynamicsSystem s;
  const ShapeIndex sphere = s.shapes.add(Sphere{0.1});
  s.addBody(simulatedBody(makeBodyId(0, 0), sphere));
  s.addBody(simulatedBody(makeBodyId(0, 1), sphere));
  SimFileWriter w;
  w.open(dir / "two.sim");
  w.writeHeader(s.bodies);
  w.writeState(0.0, s.bodies);
  w.close();
  const auto bytes = readBytes(dir / "two.sim");
  const std::vector<unsigned char> expected = {'M', 'B', 'S', 'F',  //
                                               2,   0,   0,   0,    // version
                                               2,   0,   0,   0,    // nSimBodies
                                               7,   0,   0,   0,    // nDOFq
                                               6,   0,   0,   0,    // nDOFu
                                               0,   0,   0,   0,    // additional-bytes type
                                               0,   0,   0,   0};   // additional bytes per body
  ASSERT_EQ(bytes.size(), 28u + 8u + 2u * 112u);
  EXPECT_EQ(std::vector<unsigned char>(bytes.begin(), bytes.begin() + 28), expected);
}

TEST(SimFile, WorkedExampleOfDocsIsExact) {
  // The one-body, one-state example of docs/sim-format.md, byte for byte.
  TempDir dir;
  DynamicsSystem s;
  const ShapeIndex sphere = s.shapes.add(Sphere{0.1});
  BodyDef d = simulatedBody(makeBodyId(1, 2), sphere);
  d.position = Vec3(1.0, 2.0, 3.0);
  d.velocity = Vec3(0.0, 0.0, -1.0);
  d.omegaBody = Vec3(0.0, 0.0, 0.25);
  s.addBody(d);
  SimFileWriter w;
  w.open(dir / "one.sim");
  w.writeHeader(s.bodies);
  w.writeState(0.5, s.bodies);
  w.close();
  const std::vector<unsigned char> expected = {
      0x4d, 0x42, 0x53, 0x46, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00,
      0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      // time 0.5
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f,
      // id (1,2)
      0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
      // r = 1 2 3
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x40,
      // q = x y z w = 0 0 0 1
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0xf0, 0x3f,
      // v = 0 0 -1
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0xbf,
      // omega_K = 0 0 0.25
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0, 0x3f};
  EXPECT_EQ(readBytes(dir / "one.sim"), expected);
}

TEST(SimFile, RoundTripIsBitIdenticalAndSortedById) {
  TempDir dir;
  const DynamicsSystem s = makeSystem();
  SimFileWriter w;
  w.open(dir / "run.sim");
  w.writeHeader(s.bodies);
  EXPECT_EQ(w.header().nSimBodies, 3u);  // static and remote bodies are not written
  w.writeState(0.0, s.bodies);
  w.writeState(0.1 + 0.2, s.bodies);
  EXPECT_EQ(w.statesWritten(), 2u);
  w.close();

  SimFileReader r;
  r.open(dir / "run.sim");
  EXPECT_EQ(r.header().version, 2u);
  EXPECT_EQ(r.header().nSimBodies, 3u);
  EXPECT_EQ(r.header().nDofQ, 7u);
  EXPECT_EQ(r.header().nDofU, 6u);
  EXPECT_EQ(r.header().additionalType, AdditionalBytesType::Nothing);
  EXPECT_EQ(r.header().bytesPerBody(), 112u);
  ASSERT_EQ(r.stateCount(), 2u);
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(r.fileSize(), 28u + 2u * (8u + 3u * 112u));
  EXPECT_EQ(r.readTimes(), (std::vector<double>{0.0, 0.1 + 0.2}));

  const SimState st = r.readState(1);
  EXPECT_TRUE(sameBits(st.time, 0.1 + 0.2));
  ASSERT_EQ(st.bodies.size(), 3u);
  EXPECT_EQ(st.bodies[0].id, makeBodyId(0, 3));
  EXPECT_EQ(st.bodies[1].id, makeBodyId(0, 7));
  EXPECT_EQ(st.bodies[2].id, makeBodyId(2, 0));
  for (const SimBodyState& b : st.bodies) {
    const std::size_t i = *s.bodies.indexOf(b.id);
    const Quat& q = s.bodies.orientations()[i];
    for (int c = 0; c < 3; ++c) {
      EXPECT_TRUE(sameBits(b.position[c], s.bodies.positions()[i][c]));
      EXPECT_TRUE(sameBits(b.velocity[c], s.bodies.velocities()[i][c]));
      EXPECT_TRUE(sameBits(b.omegaBody[c], s.bodies.omegasBody()[i][c]));
    }
    for (int c = 0; c < 4; ++c) {
      EXPECT_TRUE(sameBits(b.orientation.coeffs()[c], q.coeffs()[c]));
    }
  }
  const SimBodyState* found = st.find(makeBodyId(0, 7));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->velocity.y(), 1.0);
  EXPECT_EQ(st.find(makeBodyId(1, 0)), nullptr);  // static body
}

TEST(SimFile, QuaternionStoredScalarLast) {
  TempDir dir;
  DynamicsSystem s;
  const ShapeIndex sphere = s.shapes.add(Sphere{0.1});
  BodyDef d = simulatedBody(makeBodyId(0, 0), sphere);
  d.orientation = Quat(0.5, 0.5, -0.5, 0.5);  // Eigen's constructor takes w, x, y, z
  s.addBody(d);
  SimFileWriter w;
  w.open(dir / "q.sim");
  w.writeHeader(s.bodies);
  w.writeState(0.0, s.bodies);
  w.close();
  const auto bytes = readBytes(dir / "q.sim");
  double q[4];
  std::memcpy(q, bytes.data() + 28 + 8 + 8 + 24, sizeof(q));
  EXPECT_EQ(q[0], 0.5);   // x
  EXPECT_EQ(q[1], -0.5);  // y
  EXPECT_EQ(q[2], 0.5);   // z
  EXPECT_EQ(q[3], 0.5);   // w
}

TEST(SimFile, TruncatedTrailingStateIsIgnored) {
  TempDir dir;
  const DynamicsSystem s = makeSystem();
  SimFileWriter w;
  w.open(dir / "cut.sim");
  w.writeHeader(s.bodies);
  for (int k = 0; k < 3; ++k) {
    w.writeState(0.01 * k, s.bodies);
  }
  w.close();
  const std::uint64_t perState = 8 + 3 * 112;
  std::filesystem::resize_file(dir / "cut.sim", 28 + 3 * perState - 10);
  SimFileReader r;
  r.open(dir / "cut.sim");
  EXPECT_EQ(r.stateCount(), 2u);
  EXPECT_TRUE(r.truncated());
  EXPECT_EQ(r.trailingBytes(), perState - 10);
  EXPECT_EQ(r.readState(1).time, 0.01);
  EXPECT_THROW(r.readState(2), SimFileError);
}

TEST(SimFile, EveryWrittenStateIsReadableBeforeClose) {
  // The writer flushes after each state: a reader sees it while the writer is still open (as
  // after a killed run).
  TempDir dir;
  const DynamicsSystem s = makeSystem();
  SimFileWriter w;
  w.open(dir / "live.sim");
  w.writeHeader(s.bodies);
  w.writeState(0.0, s.bodies);
  w.writeState(0.5, s.bodies);
  SimFileReader r;
  r.open(dir / "live.sim");
  EXPECT_EQ(r.stateCount(), 2u);
  EXPECT_EQ(r.readTime(1), 0.5);
}

TEST(SimFile, WrongSignatureNamesTheFile) {
  TempDir dir;
  std::vector<unsigned char> bytes(28 + 8, 0);
  std::memcpy(bytes.data(), "GRSF", 4);
  bytes[4] = 2;
  writeBytes(dir / "bad.sim", bytes);
  SimFileReader r;
  try {
    r.open(dir / "bad.sim");
    FAIL();
  } catch (const SimFileError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "bad.sim").string() + ": not a .sim file (signature 'GRSF', expected 'MBSF')");
  }
}

TEST(SimFile, WrongVersionNamesTheFile) {
  TempDir dir;
  const DynamicsSystem s = makeSystem();
  SimFileWriter w;
  w.open(dir / "v3.sim");
  w.writeHeader(s.bodies);
  w.close();
  auto bytes = readBytes(dir / "v3.sim");
  bytes[4] = 3;
  writeBytes(dir / "v3.sim", bytes);
  SimFileReader r;
  try {
    r.open(dir / "v3.sim");
    FAIL();
  } catch (const SimFileError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "v3.sim").string() + ": unsupported .sim version 3 (grain reads version 2)");
  }
}

TEST(SimFile, ShortFileAndMissingFile) {
  TempDir dir;
  writeBytes(dir / "short.sim", {'M', 'B', 'S', 'F', 2});
  SimFileReader r;
  EXPECT_THROW(r.open(dir / "short.sim"), SimFileError);
  try {
    r.open(dir / "nothing.sim");
    FAIL();
  } catch (const SimFileError& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir / "nothing.sim").string() + ": cannot open", 0), 0u);
  }
}

TEST(SimFile, AdditionalBytesType5RoundTrip) {
  TempDir dir;
  const DynamicsSystem s = makeSystem();
  std::vector<Real> overlap(s.bodies.size(), 0.0);
  std::vector<std::uint32_t> geom(s.bodies.size(), 0);
  for (std::size_t i = 0; i < s.bodies.size(); ++i) {
    overlap[i] = 1e-3 * static_cast<Real>(i + 1);
    geom[i] = static_cast<std::uint32_t>(100 + i);
  }
  SimFileWriter w;
  w.open(dir / "mpi.sim", AdditionalBytesType::ProcessMaterialOverlapGeomId);
  w.writeHeader(s.bodies);
  w.writeState(0.25, s.bodies, {3, overlap, geom});
  w.close();
  EXPECT_EQ(std::filesystem::file_size(dir / "mpi.sim"), 28u + 8u + 3u * 132u);
  SimFileReader r;
  r.open(dir / "mpi.sim");
  EXPECT_EQ(r.header().additionalType, AdditionalBytesType::ProcessMaterialOverlapGeomId);
  EXPECT_EQ(r.header().additionalBytes, 20u);
  const SimState st = r.readState(0);
  for (const SimBodyState& b : st.bodies) {
    const std::size_t i = *s.bodies.indexOf(b.id);
    EXPECT_EQ(b.additional.processRank, 3u);
    EXPECT_EQ(b.additional.material, s.bodies.materials()[i]);
    EXPECT_EQ(b.additional.overlapTotal, overlap[i]);
    EXPECT_EQ(b.additional.globalGeomId, geom[i]);
  }
}

TEST(SimFile, BodyCountMustMatchHeader) {
  TempDir dir;
  DynamicsSystem s = makeSystem();
  SimFileWriter w;
  w.open(dir / "n.sim");
  w.writeHeader(s.bodies);
  s.bodies.remove(makeBodyId(0, 7));
  EXPECT_THROW(w.writeState(0.0, s.bodies), SimFileError);
}

TEST(SimFile, OrderFollowsBodiesThatMoved) {
  // Removing a body swaps the last one into its slot; the cached order must notice.
  TempDir dir;
  DynamicsSystem s = makeSystem();
  SimFileWriter w;
  w.open(dir / "m.sim");
  w.writeHeader(3);
  w.writeState(0.0, s.bodies);
  s.bodies.remove(makeBodyId(2, 0));
  BodyDef d = simulatedBody(makeBodyId(0, 5), 0);
  s.addBody(d);
  w.writeState(1.0, s.bodies);
  w.close();
  SimFileReader r;
  r.open(dir / "m.sim");
  const SimState st = r.readState(1);
  ASSERT_EQ(st.bodies.size(), 3u);
  EXPECT_EQ(st.bodies[0].id, makeBodyId(0, 3));
  EXPECT_EQ(st.bodies[1].id, makeBodyId(0, 5));
  EXPECT_EQ(st.bodies[2].id, makeBodyId(0, 7));
}

}  // namespace
}  // namespace grain::io
