// SPDX-License-Identifier: MIT
// grain-convert sim and info: selections written back to valid .sim files, bit for bit.
#include <cstring>

#include <gtest/gtest.h>

#include <grain/convert/info.hpp>
#include <grain/convert/sim_tool.hpp>

#include "convert_test_util.hpp"

namespace grain::convert {
namespace {

bool sameBody(const io::SimBodyState& a, const io::SimBodyState& b) {
  return a.id == b.id && a.position == b.position &&
         a.orientation.coeffs() == b.orientation.coeffs() && a.velocity == b.velocity &&
         a.omegaBody == b.omegaBody;
}

TEST(SimExport, ResampleAndSelectGiveSortedValidFile) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 10, 9);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  StateFilter f;
  f.every = 4;  // states 0, 4, 8
  BodySelector sel;
  sel.parse("1:*, 0:2-4");  // odd numbers and 2, 4
  const auto files = exportSim(seq, f.apply(seq.states()), sel, dir / "out.sim", {});
  ASSERT_EQ(files.size(), 1u);
  io::SimFileReader r;
  r.open(dir / "out.sim");
  EXPECT_FALSE(r.truncated());
  ASSERT_EQ(r.stateCount(), 3u);
  ASSERT_EQ(r.header().nSimBodies, 7u);  // 1,3,5,7,9 and 2,4
  io::SimFileReader in;
  in.open(dir / "in.sim");
  for (std::size_t k = 0; k < 3; ++k) {
    const io::SimState out = r.readState(k);
    const io::SimState orig = in.readState(4 * k);
    EXPECT_EQ(out.time, orig.time);
    for (std::size_t i = 1; i < out.bodies.size(); ++i) {
      EXPECT_LT(out.bodies[i - 1].id, out.bodies[i].id);  // sorted by id
    }
    for (const auto& b : out.bodies) {
      EXPECT_TRUE(sameBody(b, *orig.find(b.id)));
    }
  }
  // The output exists now: no silent overwrite.
  EXPECT_THROW(exportSim(seq, seq.states(), {}, dir / "out.sim", {}), ConvertError);
  SimExportOptions overwrite;
  overwrite.overwrite = true;
  EXPECT_NO_THROW(exportSim(seq, seq.states(), {}, dir / "out.sim", overwrite));
}

TEST(SimExport, SplitWritesOneFilePerStateAndJoinRestoresTheFile) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 6, 5);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  SimExportOptions split;
  split.split = true;
  split.keepOrder = true;
  const auto files = exportSim(seq, seq.states(), {}, dir / "part.sim", split);
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(files[2].filename(), "part_00002.sim");
  SimSequence parts;
  parts.open(files);
  ASSERT_EQ(parts.states().size(), 5u);
  SimExportOptions keep;
  keep.keepOrder = true;
  exportSim(parts, parts.states(), {}, dir / "joined.sim", keep);
  EXPECT_EQ(test::readText(dir / "joined.sim"), test::readText(dir / "in.sim"));
}

TEST(SimInfo, ReportsEverything) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 6, 5, 0.25);
  std::filesystem::resize_file(dir / "in.sim", std::filesystem::file_size(dir / "in.sim") - 7);
  const SimFileSummary s = summarize(dir / "in.sim", true);
  EXPECT_EQ(s.header.nSimBodies, 6u);
  EXPECT_EQ(s.states, 4u);
  EXPECT_EQ(s.lastTime, 0.75);
  EXPECT_EQ(s.groups, 2u);
  EXPECT_FALSE(s.sortedById);
  EXPECT_EQ(s.trailingBytes, 8 + 6 * 112 - 7u);
  ASSERT_EQ(s.times.size(), 4u);
  const std::string text = formatSummary(s);
  EXPECT_NE(text.find("6 per state in 2 group(s), not sorted by id"), std::string::npos) << text;
  EXPECT_NE(text.find("0 .. 0.75 s"), std::string::npos) << text;
  EXPECT_NE(text.find("type 0 (nothing, 0 bytes per body)"), std::string::npos) << text;
  EXPECT_NE(text.find("yes: a partial last state of 673 bytes is ignored"), std::string::npos)
      << text;
  EXPECT_NE(text.find("times         0 0.25 0.5 0.75"), std::string::npos) << text;
  EXPECT_EQ(additionalTypeName(io::AdditionalBytesType::ProcessMaterialOverlapGeomId),
            "rank+material+overlap+geomId");
}

TEST(SimInfo, CorruptedHeaderIsAnError) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 2, 2);
  std::string bytes = test::readText(dir / "in.sim");
  bytes[12] = 9;  // nDOFq
  test::writeText(dir / "bad.sim", bytes);
  EXPECT_THROW(summarize(dir / "bad.sim", false), io::SimFileError);
  bytes = test::readText(dir / "in.sim");
  bytes[20] = 3;  // additional type 3 with 0 additional bytes
  test::writeText(dir / "bad2.sim", bytes);
  EXPECT_THROW(summarize(dir / "bad2.sim", false), io::SimFileError);
}

}  // namespace
}  // namespace grain::convert
