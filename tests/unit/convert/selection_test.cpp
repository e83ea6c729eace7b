// SPDX-License-Identifier: MIT
// Body and state selections, sequences of several .sim files.
#include <gtest/gtest.h>

#include <grain/convert/sequence.hpp>

#include "convert_test_util.hpp"

namespace grain::convert {
namespace {

TEST(BodySelector, ParsesGroupNumberRangesAndRawIds) {
  BodySelector s;
  s.parse("0:3, 0:10-12 2:*");
  s.parse(std::to_string(makeBodyId(5, 1)) + "," + std::to_string(makeBodyId(6, 0)) + "-" +
          std::to_string(makeBodyId(6, 2)));
  EXPECT_FALSE(s.selectsAll());
  EXPECT_TRUE(s.contains(makeBodyId(0, 3)));
  EXPECT_FALSE(s.contains(makeBodyId(0, 4)));
  EXPECT_FALSE(s.contains(makeBodyId(0, 9)));
  EXPECT_TRUE(s.contains(makeBodyId(0, 10)));
  EXPECT_TRUE(s.contains(makeBodyId(0, 12)));
  EXPECT_FALSE(s.contains(makeBodyId(0, 13)));
  EXPECT_TRUE(s.contains(makeBodyId(2, 0)));
  EXPECT_TRUE(s.contains(makeBodyId(2, 0xffffffffu)));
  EXPECT_FALSE(s.contains(makeBodyId(1, 3)));
  EXPECT_TRUE(s.contains(makeBodyId(5, 1)));
  EXPECT_TRUE(s.contains(makeBodyId(6, 2)));
  EXPECT_FALSE(s.contains(makeBodyId(6, 3)));
  const auto ids = s.select({makeBodyId(2, 7), makeBodyId(1, 1), makeBodyId(0, 3)});
  EXPECT_EQ(ids, (std::vector<BodyId>{makeBodyId(0, 3), makeBodyId(2, 7)}));
  EXPECT_THROW(s.select({makeBodyId(1, 1)}), ConvertError);
  BodySelector all;
  EXPECT_TRUE(all.selectsAll());
  EXPECT_TRUE(all.contains(12345));
}

TEST(BodySelector, MalformedItemsAreNamed) {
  for (const std::string bad : {"x", "0:", "0:5-2", "0:1-x", "1:2:3", "99999999999:1", "5-3"}) {
    BodySelector s;
    try {
      s.parse(bad);
      FAIL() << bad;
    } catch (const ConvertError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(StateFilter, RangeTimeAndIncrement) {
  std::vector<StateRef> states;
  for (std::size_t k = 0; k < 10; ++k) {
    states.push_back({0, k, 0.1 * static_cast<double>(k)});
  }
  StateFilter f;
  f.every = 3;
  auto idx = [&](const StateFilter& filter) {
    std::vector<std::size_t> out;
    for (const auto& s : filter.apply(states)) {
      out.push_back(s.index);
    }
    return out;
  };
  EXPECT_EQ(idx(f), (std::vector<std::size_t>{0, 3, 6, 9}));
  f.first = 2;
  f.last = 8;
  EXPECT_EQ(idx(f), (std::vector<std::size_t>{2, 5, 8}));
  StateFilter t;
  t.tMin = 0.25;
  t.tMax = 0.55;
  EXPECT_EQ(idx(t), (std::vector<std::size_t>{3, 4, 5}));
  t.every = 2;
  EXPECT_EQ(idx(t), (std::vector<std::size_t>{3, 5}));
  StateFilter zero;
  zero.every = 0;
  EXPECT_THROW(zero.apply(states), ConvertError);
}

TEST(SimSequence, JoinsFilesAndSkipsTheRepeatedFirstState) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "a.sim", 4, 3, 0.1, 0.0);  // 0, 0.1, 0.2
  test::writeFreeFlight(dir / "b.sim", 4, 3, 0.1, 0.2);  // 0.2, 0.3, 0.4
  SimSequence seq;
  seq.open({dir / "a.sim", dir / "b.sim"});
  ASSERT_EQ(seq.states().size(), 5u);
  EXPECT_EQ(seq.states()[3].file, 1u);
  EXPECT_EQ(seq.states()[3].index, 1u);
  EXPECT_NEAR(seq.states()[4].time, 0.4, 1e-12);
  SimSequence keep;
  keep.open({dir / "a.sim", dir / "b.sim"}, false);
  EXPECT_EQ(keep.states().size(), 6u);
  // Keyed reads return the listed bodies.
  const io::SimState s = seq.read(seq.states()[4], {makeBodyId(1, 3)});
  ASSERT_EQ(s.bodies.size(), 1u);
  EXPECT_EQ(s.bodies[0].position, test::freeFlightBody(makeBodyId(1, 3), 3, s.time).position);

  test::writeFreeFlight(dir / "c.sim", 5, 1);
  SimSequence bad;
  EXPECT_THROW(bad.open({dir / "a.sim", dir / "c.sim"}), ConvertError);
  EXPECT_THROW(bad.open({}), ConvertError);
  EXPECT_THROW(bad.open({dir / "missing.sim"}), io::SimFileError);
}

TEST(SimSequence, WarnsAboutTruncatedFiles) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "a.sim", 4, 3);
  std::filesystem::resize_file(dir / "a.sim", std::filesystem::file_size(dir / "a.sim") - 5);
  SimSequence seq;
  seq.open({dir / "a.sim"});
  EXPECT_EQ(seq.states().size(), 2u);
  ASSERT_EQ(seq.warnings().size(), 1u);
  EXPECT_NE(seq.warnings()[0].find("a.sim"), std::string::npos);
}

TEST(ParseTriple, AcceptsCommasOrBlanks) {
  EXPECT_EQ(parseTriple("1,2.5,-3", "x"), (std::array<double, 3>{1, 2.5, -3}));
  EXPECT_EQ(parseTriple("1 2 3", "x"), (std::array<double, 3>{1, 2, 3}));
  EXPECT_THROW(parseTriple("1,2", "--min"), ConvertError);
  EXPECT_THROW(parseTriple("1,2,3,4", "--min"), ConvertError);
  EXPECT_THROW(parseTriple("a,b,c", "--min"), ConvertError);
}

}  // namespace
}  // namespace grain::convert
