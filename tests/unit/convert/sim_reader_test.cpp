// SPDX-License-Identifier: MIT
// .sim reader extras: states keyed by id whose body order changes (as in files of distributed
// runs), body-subset reads, state selection by time, truncation warning, duplicate ids,
// appending to an existing file.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include <grain/io/sim_file.hpp>

#include "convert_test_util.hpp"

namespace grain::io {
namespace {

using convert::test::TempDir;

/// Body k of state s, with values that identify both.
SimBodyState makeBody(BodyId id, int s) {
  SimBodyState b;
  b.id = id;
  const double x = static_cast<double>(bodyNumber(id)) + 0.001 * s;
  b.position = Vec3(x, -x, 0.5 * x);
  b.orientation = Quat(Eigen::AngleAxis<Real>(0.1 * s + 0.01 * x, Vec3(0, 1, 1).normalized()));
  b.velocity = Vec3(s, x, -1.0);
  b.omegaBody = Vec3(0.0, 0.25 * s, x);
  b.additional.processRank = static_cast<std::uint32_t>(s % 3);
  b.additional.material = bodyGroup(id);
  b.additional.overlapTotal = 1e-6 * s;
  b.additional.globalGeomId = 7;
  return b;
}

/// Writes `states` states of 20 bodies in groups 0 and 1, each state in a different random
/// body order (as a distributed run writes them), additional type 5, times 0, 0.1, ...
std::vector<BodyId> writeShuffled(const std::filesystem::path& file, int states) {
  std::vector<BodyId> ids;
  for (std::uint32_t k = 0; k < 10; ++k) {
    ids.push_back(makeBodyId(0, k));
    ids.push_back(makeBodyId(1, k));
  }
  SimFileWriter w;
  w.open(file, AdditionalBytesType::ProcessMaterialOverlapGeomId);
  w.writeHeader(static_cast<std::uint32_t>(ids.size()));
  std::mt19937 rng(42);
  for (int s = 0; s < states; ++s) {
    std::vector<BodyId> order = ids;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<SimBodyState> bodies;
    for (const BodyId id : order) {
      bodies.push_back(makeBody(id, s));
    }
    w.writeState(0.1 * s, bodies);
  }
  w.close();
  return ids;
}

void expectSameBody(const SimBodyState& a, const SimBodyState& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.position, b.position);
  EXPECT_EQ(a.orientation.coeffs(), b.orientation.coeffs());
  EXPECT_EQ(a.velocity, b.velocity);
  EXPECT_EQ(a.omegaBody, b.omegaBody);
  EXPECT_EQ(a.additional.processRank, b.additional.processRank);
  EXPECT_EQ(a.additional.material, b.additional.material);
  EXPECT_EQ(a.additional.overlapTotal, b.additional.overlapTotal);
  EXPECT_EQ(a.additional.globalGeomId, b.additional.globalGeomId);
}

TEST(SimReader, StatesWithChangingBodyOrderAreKeyedById) {
  TempDir dir;
  const auto ids = writeShuffled(dir / "mpi.sim", 4);
  SimFileReader r;
  r.open(dir / "mpi.sim");
  ASSERT_EQ(r.stateCount(), 4u);
  const auto order0 = r.readIds(0);
  const auto order1 = r.readIds(1);
  EXPECT_NE(order0, order1);  // the file really has different orders
  for (int s = 0; s < 4; ++s) {
    const SimState st = r.readState(static_cast<std::size_t>(s));
    for (const BodyId id : ids) {
      const SimBodyState* b = st.find(id);
      ASSERT_NE(b, nullptr);
      expectSameBody(*b, makeBody(id, s));
    }
  }
}

TEST(SimReader, SortByIdGivesTheSerialOrder) {
  TempDir dir;
  auto ids = writeShuffled(dir / "mpi.sim", 2);
  std::sort(ids.begin(), ids.end());
  SimFileReader r;
  r.open(dir / "mpi.sim");
  SimState st = r.readState(1);
  st.sortById();
  ASSERT_EQ(st.bodies.size(), ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(st.bodies[i].id, ids[i]);
    EXPECT_EQ(st.find(ids[i]), &st.bodies[i]);
  }
}

TEST(SimReader, ReadBodiesReturnsTheSubsetInRequestedOrder) {
  TempDir dir;
  writeShuffled(dir / "mpi.sim", 3);
  SimFileReader r;
  r.open(dir / "mpi.sim");
  const std::vector<BodyId> want = {makeBodyId(1, 9), makeBodyId(0, 0), makeBodyId(1, 3)};
  const SimState st = r.readBodies(2, want);
  EXPECT_EQ(st.time, 0.1 * 2);
  ASSERT_EQ(st.bodies.size(), 3u);
  for (std::size_t i = 0; i < want.size(); ++i) {
    expectSameBody(st.bodies[i], makeBody(want[i], 2));
  }
  const std::vector<BodyId> withMissing = {makeBodyId(0, 5), makeBodyId(7, 7)};
  EXPECT_THROW(r.readBodies(0, withMissing), SimFileError);
  const SimState partial = r.readBodies(0, withMissing, true);
  ASSERT_EQ(partial.bodies.size(), 1u);
  EXPECT_EQ(partial.bodies[0].id, makeBodyId(0, 5));
}

TEST(SimReader, ReadSpecificByTime) {
  TempDir dir;
  writeShuffled(dir / "mpi.sim", 5);  // t = 0, 0.1, 0.2, 0.3, 0.4
  SimFileReader r;
  r.open(dir / "mpi.sim");
  EXPECT_EQ(r.findStateAtTime(-1.0), 0u);
  EXPECT_EQ(r.findStateAtTime(0.0), 0u);
  EXPECT_EQ(r.findStateAtTime(0.15), 2u);
  EXPECT_EQ(r.findStateAtTime(0.1 * 3), 3u);  // exact time: that state
  EXPECT_EQ(r.findStateAtTime(0.4), 4u);
  EXPECT_FALSE(r.findStateAtTime(0.41).has_value());
  EXPECT_EQ(r.readSpecific(StateSelector::First).time, 0.0);
  EXPECT_EQ(r.readSpecific(StateSelector::Last).time, 0.1 * 4);
  EXPECT_EQ(r.readSpecific(StateSelector::Time, 0.25).time, 0.1 * 3);
  EXPECT_THROW(r.readSpecific(StateSelector::Time, 1.0), SimFileError);
}

TEST(SimReader, TruncatedLastStateGivesWarning) {
  TempDir dir;
  writeShuffled(dir / "cut.sim", 3);
  const auto size = std::filesystem::file_size(dir / "cut.sim");
  std::filesystem::resize_file(dir / "cut.sim", size - 100);
  SimFileReader r;
  r.open(dir / "cut.sim");
  EXPECT_EQ(r.stateCount(), 2u);
  const std::string w = r.truncationWarning();
  EXPECT_NE(w.find("cut.sim"), std::string::npos) << w;
  EXPECT_NE(w.find("partial last state"), std::string::npos) << w;
  EXPECT_NE(w.find(std::to_string(r.trailingBytes()) + " bytes"), std::string::npos) << w;
  EXPECT_EQ(r.readSpecific(StateSelector::Last).time, 0.1);
  SimFileReader whole;
  writeShuffled(dir / "whole.sim", 1);
  whole.open(dir / "whole.sim");
  EXPECT_EQ(whole.truncationWarning(), "");
}

TEST(SimReader, DuplicateIdInStateIsAnError) {
  TempDir dir;
  SimFileWriter w;
  w.open(dir / "dup.sim");
  w.writeHeader(2);
  const std::vector<SimBodyState> bodies = {makeBody(5, 0), makeBody(5, 0)};
  w.writeState(0.0, bodies);
  w.close();
  SimFileReader r;
  r.open(dir / "dup.sim");
  try {
    r.readState(0);
    FAIL() << "no error";
  } catch (const SimFileError& e) {
    EXPECT_NE(std::string(e.what()).find("(0,5)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dup.sim"), std::string::npos) << e.what();
  }
  SimState s;
  EXPECT_NO_THROW(r.readState(0, s, false));  // without index, no check
  EXPECT_EQ(s.bodies.size(), 2u);
}

TEST(SimReader, AppendCutsPartialStateAndContinues) {
  TempDir dir;
  writeShuffled(dir / "a.sim", 3);
  const auto size = std::filesystem::file_size(dir / "a.sim");
  std::filesystem::resize_file(dir / "a.sim", size - 17);
  SimFileWriter w;
  SimFileHeader expected;
  expected.nSimBodies = 20;
  expected.additionalType = AdditionalBytesType::ProcessMaterialOverlapGeomId;
  EXPECT_EQ(w.openAppend(dir / "a.sim", expected), 2u);
  std::vector<SimBodyState> bodies;
  for (std::uint32_t k = 0; k < 10; ++k) {
    bodies.push_back(makeBody(makeBodyId(0, k), 9));
    bodies.push_back(makeBody(makeBodyId(1, k), 9));
  }
  w.writeState(0.9, bodies);
  EXPECT_EQ(w.statesWritten(), 3u);
  w.close();
  SimFileReader r;
  r.open(dir / "a.sim");
  EXPECT_FALSE(r.truncated());
  ASSERT_EQ(r.stateCount(), 3u);
  EXPECT_EQ(r.readTime(1), 0.1);
  const SimState last = r.readState(2);
  EXPECT_EQ(last.time, 0.9);
  expectSameBody(*last.find(makeBodyId(1, 4)), makeBody(makeBodyId(1, 4), 9));

  expected.nSimBodies = 21;
  EXPECT_THROW(w.openAppend(dir / "a.sim", expected), SimFileError);
  EXPECT_THROW(w.openAppend(dir / "missing.sim"), SimFileError);
}

}  // namespace
}  // namespace grain::io
