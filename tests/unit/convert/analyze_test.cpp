// SPDX-License-Identifier: MIT
// Analyses against closed forms: plane crossings of free-falling bodies, flow-duration
// quantiles, energies, velocity profiles, sphere-box volumes, run-log statistics.
#include <cmath>

#include <gtest/gtest.h>

#include <grain/convert/analyze.hpp>

#include "../../common/mesh_support.hpp"
#include "convert_test_util.hpp"

namespace grain::convert {
namespace {

constexpr double kPi = 3.14159265358979323846;

TEST(Crossing, QuantilesInterpolateBetweenStates) {
  CrossingResult r;
  r.bodies = 20;
  r.time = {0.0, 1.0, 2.0, 3.0};
  r.crossed = {0, 2, 10, 20};
  r.inside = r.crossed;
  EXPECT_DOUBLE_EQ(r.quantile(0.05), 0.5);  // 1 body: halfway to t = 1
  EXPECT_DOUBLE_EQ(r.quantile(0.95), 2.9);  // 19 bodies: 9/10 of the way from 2 to 3
  EXPECT_DOUBLE_EQ(r.flowDuration(), 2.4);
  EXPECT_DOUBLE_EQ(r.quantile(0.0), 0.0);
  r.crossed = {0, 1, 1, 1};
  EXPECT_TRUE(std::isnan(r.quantile(0.95)));
  const CsvTable t = r.table();
  EXPECT_EQ(t.columns.back(), "fraction_crossed");
  EXPECT_EQ(t.rows.size(), 4u);
}

TEST(Crossing, FreeFallThroughAPlaneMatchesTheClosedForm) {
  // Body i starts at z = 2 + 0.05 i with vertical speed 0.1 i; g = -10. It is below z = 1.5 once
  // z0 + vz t - 5 t^2 <= 1.5.
  test::TempDir dir;
  const std::uint32_t n = 12;
  test::writeFreeFlight(dir / "in.sim", n, 61, 0.01);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  std::vector<BodyId> ids;
  for (std::uint32_t i = 0; i < n; ++i) {
    ids.push_back(makeBodyId(i % 2, i));
  }
  const CrossingResult r = countCrossings(seq, seq.states(), ids, Vec3(0, 0, 1.5), Vec3(0, 0, -1));
  ASSERT_EQ(r.time.size(), 61u);
  for (std::size_t k = 0; k < r.time.size(); ++k) {
    std::size_t expected = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const double z0 = 2.0 + 0.05 * i;
      const double vz = 0.1 * i;
      // Crossing time: 5 t^2 - vz t - (z0 - 1.5) = 0.
      const double tc = (vz + std::sqrt(vz * vz + 20.0 * (z0 - 1.5))) / 10.0;
      expected += r.time[k] >= tc - 1e-12 ? 1 : 0;
    }
    EXPECT_EQ(r.crossed[k], expected) << "t = " << r.time[k];
    EXPECT_EQ(r.inside[k], expected);
  }
  EXPECT_GT(r.flowDuration(), 0.0);
  EXPECT_THROW(countCrossings(seq, seq.states(), ids, Vec3::Zero(), Vec3::Zero()), ConvertError);
}

TEST(SphereBoxVolume, ClosedForms) {
  const double r = 0.5;
  const double v = 4.0 / 3.0 * kPi * r * r * r;
  const Vec3 c(1, 2, 3);
  const Vec3 big(10, 10, 10);
  EXPECT_DOUBLE_EQ(sphereBoxVolume(c, r, -big, big), v);
  EXPECT_EQ(sphereBoxVolume(c, r, Vec3(2, 2, 2), Vec3(3, 3, 3)), 0.0);
  // Half space cut through the centre.
  EXPECT_NEAR(sphereBoxVolume(c, r, Vec3(-10, -10, 3), big), 0.5 * v, 1e-9 * v);
  // Octant.
  EXPECT_NEAR(sphereBoxVolume(c, r, Vec3(1, 2, 3), big), v / 8.0, 1e-7 * v);
  // Cap of height h: pi h^2 (3r - h) / 3.
  for (const double h : {0.05, 0.2, 0.7, 0.95}) {
    const double cap = kPi * h * h * (3 * r - h) / 3.0;
    EXPECT_NEAR(sphereBoxVolume(c, r, Vec3(-10, -10, 3 + r - h), big), cap, 1e-6 * v) << h;
    EXPECT_NEAR(sphereBoxVolume(c, r, Vec3(1 + r - h, -10, -10), big), cap, 1e-6 * v) << h;
  }
  // A slab through the sphere: |z - c| <= a gives pi a (2 r^2 - 2 a^2 / 3).
  const double a = 0.2;
  EXPECT_NEAR(sphereBoxVolume(c, r, Vec3(-10, -10, 3 - a), Vec3(10, 10, 3 + a)),
              kPi * a * (2 * r * r - 2.0 / 3.0 * a * a), 1e-6 * v);
}

TEST(Energy, FreeFlightEnergiesFromTheScene) {
  GRAIN_REQUIRE_MESH_SUPPORT();
  // Scene bodies (0, k) are spheres of mass 2 and radius 0.1 (inertia 0.008), g = 10 down.
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 2, 3, 0.1);  // ids (0,0) and (1,1)
  SimSequence seq;
  seq.open({dir / "in.sim"});
  const SceneBodies scene = SceneBodies::load(std::filesystem::path(GRAIN_SOURCE_DIR) / "tests" /
                                              "e2e" / "convert_scene.xml");
  const std::vector<BodyId> ids = {makeBodyId(0, 0)};
  const CsvTable t = energyOverTime(seq, seq.states(), ids, scene);
  ASSERT_EQ(t.rows.size(), 3u);
  for (const auto& row : t.rows) {
    const double time = row[0];
    const auto b = test::freeFlightBody(makeBodyId(0, 0), 0, time);
    EXPECT_NEAR(row[t.column("kinetic_translational")], 0.5 * 2 * b.velocity.squaredNorm(), 1e-12);
    EXPECT_NEAR(row[t.column("kinetic_rotational")], 0.0, 1e-15);
    EXPECT_NEAR(row[t.column("potential")], 2 * 10 * b.position.z(), 1e-12);
    // Free flight conserves the total.
    EXPECT_NEAR(row[t.column("total")], t.rows[0][t.column("total")], 1e-9);
  }
  EXPECT_THROW(energyOverTime(seq, seq.states(), ids, SceneBodies(0.1)), ConvertError);
  // Body (1,1) is a brick of the scene with mass 1; its spin counts as rotational energy.
  const CsvTable t2 = energyOverTime(seq, seq.states(), {makeBodyId(1, 1)}, scene);
  const auto inertia = scene.massProperties(makeBodyId(1, 1))->second;
  EXPECT_NEAR(t2.rows[0][t2.column("kinetic_rotational")], 0.5 * inertia.z(), 1e-12);
}

TEST(Profile, MeanVelocityPerBin) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 10, 1);
  SimSequence seq;
  seq.open({dir / "in.sim"});
  std::vector<BodyId> ids;
  for (std::uint32_t i = 0; i < 10; ++i) {
    ids.push_back(makeBodyId(i % 2, i));
  }
  // Along x the bodies sit at x = i: bins of width 2.5 over [0, 10).
  const CsvTable t = velocityProfile(seq, seq.states(), ids, Vec3(2, 0, 0), 0.0, 10.0, 4);
  ASSERT_EQ(t.rows.size(), 4u);
  const std::size_t cnt = t.column("count");
  const std::size_t vz = t.column("vz");
  EXPECT_EQ(t.rows[0][cnt], 3);            // 0, 1, 2
  EXPECT_EQ(t.rows[1][cnt], 2);            // 3, 4
  EXPECT_EQ(t.rows[2][cnt], 3);            // 5, 6, 7
  EXPECT_EQ(t.rows[3][cnt], 2);            // 8, 9
  EXPECT_NEAR(t.rows[0][vz], 0.1, 1e-12);  // mean of 0, 0.1, 0.2
  EXPECT_NEAR(t.rows[3][vz], 0.85, 1e-12);
  EXPECT_DOUBLE_EQ(t.rows[1][t.column("s")], 3.75);
  EXPECT_THROW(velocityProfile(seq, seq.states(), ids, Vec3(1, 0, 0), 1.0, 1.0, 4), ConvertError);
}

TEST(Packing, SpheresCutByTheBox) {
  test::TempDir dir;
  test::writeFreeFlight(dir / "in.sim", 3, 1);  // centres (0,0,2), (1,0.1,2.05), (2,0.2,2.1)
  SimSequence seq;
  seq.open({dir / "in.sim"});
  const std::vector<BodyId> ids = {makeBodyId(0, 0), makeBodyId(1, 1), makeBodyId(0, 2)};
  // Box x in [0, 1.5]: body 0 half inside, body 1 whole, body 2 outside.
  const Vec3 lo(0, -1, 0), hi(1.5, 1, 4);
  const CsvTable t = packingFraction(seq, seq.states(), ids, SceneBodies(0.25), lo, hi);
  const double v = 4.0 / 3.0 * kPi * 0.25 * 0.25 * 0.25;
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_NEAR(t.rows[0][t.column("solid_volume")], 1.5 * v, 1e-6 * v);
  EXPECT_NEAR(t.rows[0][t.column("packing_fraction")], 1.5 * v / (1.5 * 2 * 4), 1e-6);
  EXPECT_EQ(t.rows[0][t.column("bodies")], 2);
  EXPECT_THROW(packingFraction(seq, seq.states(), ids, SceneBodies(0.0), lo, hi), ConvertError);
}

TEST(RunLog, StatisticsOfGrainAndGrsfLogs) {
  test::TempDir dir;
  std::string grain =
      "# WallTime [s]\tSimulationTime [s]\tStep\tnIterations\tConverged\tnContacts\t"
      "MaxOverlap [m]\n";
  for (int k = 1; k <= 10; ++k) {
    grain += "0.1\t" + std::to_string(0.01 * k) + "\t" + std::to_string(k) + "\t" +
             std::to_string(10 * k) + "\t" + (k == 7 ? "0" : "1") + "\t" + std::to_string(k) +
             "\t" + std::to_string(1e-4 * k) + "\n";
  }
  grain += "0.1\t0.11\t11\t5";  // partial last line of a killed run
  test::writeText(dir / "SimData.dat", grain);
  const RunLogTable log = RunLogTable::read(dir / "SimData.dat");
  EXPECT_EQ(log.rows.size(), 10u);
  EXPECT_EQ(log.find({"MaxOverlap"}), 6);
  std::vector<std::string> summary;
  const CsvTable t = contactStatistics(log, 5, summary);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(t.rows[0][t.column("contacts_mean")], 3.0);  // 1..5
  EXPECT_DOUBLE_EQ(t.rows[1][t.column("iterations_max")], 100.0);
  EXPECT_DOUBLE_EQ(t.rows[1][t.column("not_converged")], 1.0);
  EXPECT_NEAR(t.rows[1][t.column("max_overlap")], 1e-3, 1e-12);
  EXPECT_NEAR(t.rows[1][t.column("time")], 0.1, 1e-12);
  EXPECT_NE(std::find(summary.begin(), summary.end(), "contacts_mean = 5.5"), summary.end());

  // GRSF names its iteration column nGlobalIterations.
  test::writeText(dir / "grsf.dat",
                  "# GlobalTime [s]\tSimulationTime [s]\tnContacts\tnGlobalIterations\n"
                  "1\t0.5\t4\t17\n");
  const CsvTable g = contactStatistics(RunLogTable::read(dir / "grsf.dat"), 0, summary);
  EXPECT_DOUBLE_EQ(g.rows[0][g.column("iterations_mean")], 17.0);

  test::writeText(dir / "bad.dat", "1\t2\n");
  EXPECT_THROW(RunLogTable::read(dir / "bad.dat"), ConvertError);
  test::writeText(dir / "bad2.dat", "# a\tb\n1\t2\t3\n4\t5\n");
  EXPECT_THROW(RunLogTable::read(dir / "bad2.dat"), ConvertError);
}

TEST(Csv, WritesCommentsHeaderAndNumbers) {
  test::TempDir dir;
  CsvTable t;
  t.comments = {"a = 1"};
  t.columns = {"x", "y"};
  t.rows = {{1.0, 0.5}, {2.0, 1e-20}};
  t.write(dir / "t.csv");
  EXPECT_EQ(test::readText(dir / "t.csv"), "# a = 1\nx,y\n1,0.5\n2,1e-20\n");
}

}  // namespace
}  // namespace grain::convert
