// SPDX-License-Identifier: MIT
// ContactForces.dat: exact round trip, format of the lines, rows from contacts, cut on restart.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/io/contact_force_file.hpp>

#include "io_test_util.hpp"

namespace grain::io {
namespace {

using test::TempDir;

ContactForceBlock makeBlock(std::uint64_t step, std::size_t contacts, bool compatible) {
  ContactForceBlock b;
  b.step = step;
  b.time = 0.1 * static_cast<double>(step) + 1e-17;
  b.compatible = compatible;
  b.compatibleStats.iterations = 3;
  b.compatibleStats.converged = true;
  b.compatibleStats.relativeResidual = 1.25e-15;
  for (std::size_t i = 0; i < contacts; ++i) {
    ContactForceRow r;
    r.bodyA = makeBodyId(2, static_cast<std::uint32_t>(i));
    r.bodyB = makeBodyId(1, 4000000000u);
    r.point = Vec3(0.1 * static_cast<double>(i), -1.0 / 3.0, 2e-300);
    r.normal = Vec3(0.0, 0.6, 0.8);
    r.solverNormal = 10.0 / 3.0 + static_cast<double>(i);
    r.compatibleNormal = compatible ? std::sqrt(2.0) : std::numeric_limits<double>::quiet_NaN();
    r.tangential = Vec3(-1e-7, 0.0, 123456789.125);
    b.rows.push_back(r);
  }
  return b;
}

void expectSame(const ContactForceBlock& a, const ContactForceBlock& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.compatible, b.compatible);
  EXPECT_EQ(a.compatibleStats.iterations, b.compatibleStats.iterations);
  EXPECT_EQ(a.compatibleStats.converged, b.compatibleStats.converged);
  EXPECT_EQ(a.compatibleStats.relativeResidual, b.compatibleStats.relativeResidual);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const auto& x = a.rows[i];
    const auto& y = b.rows[i];
    EXPECT_EQ(x.bodyA, y.bodyA);
    EXPECT_EQ(x.bodyB, y.bodyB);
    EXPECT_EQ(x.point, y.point);
    EXPECT_EQ(x.normal, y.normal);
    EXPECT_EQ(x.solverNormal, y.solverNormal);
    if (std::isnan(x.compatibleNormal)) {
      EXPECT_TRUE(std::isnan(y.compatibleNormal));
    } else {
      EXPECT_EQ(x.compatibleNormal, y.compatibleNormal);
    }
    EXPECT_EQ(x.tangential, y.tangential);
  }
}

TEST(ContactForceFile, RoundTripIsExact) {
  TempDir dir;
  const auto file = dir.path() / "ContactForces.dat";
  const std::vector<ContactForceBlock> blocks = {makeBlock(3, 2, true), makeBlock(6, 0, true),
                                                 makeBlock(9, 3, false)};
  {
    ContactForceFileWriter w;
    w.open(file);
    for (const auto& b : blocks) {
      w.write(b);
    }
  }
  const auto back = readContactForceFile(file);
  ASSERT_EQ(back.size(), blocks.size());
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    expectSame(blocks[k], back[k]);
  }
}

TEST(ContactForceFile, LinesHaveTheDocumentedFormat) {
  TempDir dir;
  const auto file = dir.path() / "ContactForces.dat";
  ContactForceFileWriter w;
  w.open(file);
  ContactForceBlock b = makeBlock(12, 1, true);
  b.time = 0.5;
  b.rows[0].point = Vec3(1, 2, 3);
  b.rows[0].solverNormal = 5;
  b.rows[0].compatibleNormal = 2.5;
  b.rows[0].tangential = Vec3(0, 0, -1);
  w.write(b);  // flushed: readable while the writer is open
  const std::string text = test::readText(file);
  EXPECT_EQ(text, ContactForceFileWriter::headerText() +
                      "step 12 time 0.5 contacts 1 compatible 1 iterations 3 converged 1 residual "
                      "1.25e-15\n"
                      "2\t0\t1\t4000000000\t1\t2\t3\t0\t0.6\t0.8\t5\t2.5\t0\t0\t-1\n");
}

TEST(ContactForceFile, AppendKeepsBlocksUpToTheStepAndDropsAPartialBlock) {
  TempDir dir;
  const auto file = dir.path() / "ContactForces.dat";
  {
    ContactForceFileWriter w;
    w.open(file);
    for (std::uint64_t s = 2; s <= 10; s += 2) {
      w.write(makeBlock(s, 2, true));
    }
  }
  // A run killed in the middle of a block: the block line and one of its two rows.
  std::string text = test::readText(file);
  const std::string partial =
      "step 12 time 1.2 contacts 2 compatible 1 iterations 1 converged 1 "
      "residual 0\n2\t0\t1\t0\t0\t0\t0\t0\t0\t1\t1\t1\t0\t0\t0\n2\t1\t1";
  test::writeText(file, text + partial);
  EXPECT_EQ(readContactForceFile(file).size(), 5u);  // the partial block is not read
  {
    ContactForceFileWriter w;
    w.openAppend(file, 7);  // restart from step 7: blocks 2, 4, 6 stay
    w.write(makeBlock(9, 1, false));
  }
  const auto back = readContactForceFile(file);
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0].step, 2u);
  EXPECT_EQ(back[2].step, 6u);
  expectSame(back[3], makeBlock(9, 1, false));
  // A missing file is created.
  ContactForceFileWriter w;
  w.openAppend(dir.path() / "new.dat", 5);
  w.close();
  EXPECT_TRUE(readContactForceFile(dir.path() / "new.dat").empty());
}

TEST(ContactForceFile, MalformedFilesAreErrors) {
  TempDir dir;
  const auto file = dir.path() / "bad.dat";
  test::writeText(file, "no header\n");
  EXPECT_THROW(readContactForceFile(file), Error);
  test::writeText(file, ContactForceFileWriter::headerText() + "step x\n");
  EXPECT_THROW(readContactForceFile(file), Error);
  test::writeText(file, ContactForceFileWriter::headerText() +
                            "step 1 time 0 contacts 1 compatible 0 iterations 0 converged 0 "
                            "residual 0\n1\t2\t3\n");
  EXPECT_THROW(readContactForceFile(file), Error);
  EXPECT_THROW(readContactForceFile(dir.path() / "missing.dat"), Error);
}

TEST(ContactForceFile, RowsFromContactsUseTheMidpointAndForces) {
  BodyStorage bodies;
  BodyDef floor;
  floor.id = makeBodyId(0, 0);
  floor.motion = BodyMotion::Static;
  bodies.add(floor, 1e30);
  BodyDef ball;
  ball.id = makeBodyId(1, 7);
  ball.mass = 2.0;
  ball.inertiaBody = Vec3::Constant(0.1);
  ball.position = Vec3(1.0, 2.0, 0.5);
  ball.velocity = Vec3(0.4, 0.0, -2.0);
  bodies.add(ball, 0.5);
  ContactStorage contacts;
  contacts.add(0, 1, Vec3::UnitZ(), -1e-3, Vec3(1.0, 2.0, 0.0), Vec3(0.0, 0.0, -0.5));
  const Real dt = 0.01;
  const std::vector<Vec3> percussions = {Vec3(0.2, 0.03, -0.04)};
  const std::vector<Real> compatible = {0.1};
  ContactForceBlock block;
  fillContactForceRows(bodies, contacts, percussions, compatible, dt, block);
  ASSERT_EQ(block.rows.size(), 1u);
  const ContactForceRow& r = block.rows[0];
  EXPECT_EQ(r.bodyA, makeBodyId(0, 0));
  EXPECT_EQ(r.bodyB, makeBodyId(1, 7));
  // r_B^M = r_B^E - dt/2 v_B^E.
  EXPECT_NEAR((r.point - Vec3(1.0 - 0.002, 2.0, 0.01)).norm(), 0.0, 1e-15);
  EXPECT_NEAR(r.solverNormal, 20.0, 1e-12);
  EXPECT_NEAR(r.compatibleNormal, 10.0, 1e-12);
  const Vec3 t = (0.03 * contacts.tangent1(0) - 0.04 * contacts.tangent2(0)) / dt;
  EXPECT_NEAR((r.tangential - t).norm(), 0.0, 1e-12);
  EXPECT_NEAR(r.tangential.norm(), 5.0, 1e-12);
  EXPECT_NEAR(r.tangential.z(), 0.0, 1e-12);
  fillContactForceRows(bodies, contacts, percussions, {}, dt, block);
  EXPECT_FALSE(block.compatible);
  EXPECT_TRUE(std::isnan(block.rows[0].compatibleNormal));
}

}  // namespace
}  // namespace grain::io
