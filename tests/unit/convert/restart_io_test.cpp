// SPDX-License-Identifier: MIT
// Pieces of grain-sim --restart: applying a .sim state by id, cutting and continuing the run
// log, the recorded media folder, and the warm-start cache file.
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/sim_file.hpp>
#include <grain/io/version.hpp>

#include "convert_test_util.hpp"

namespace grain::io {
namespace {

using convert::test::TempDir;

DynamicsSystem threeBodies() {
  DynamicsSystem s;
  const ShapeIndex sphere = s.shapes.add(Sphere{0.1});
  for (std::uint32_t k = 0; k < 3; ++k) {
    BodyDef d;
    d.id = makeBodyId(0, k);
    d.shape = sphere;
    d.mass = 1.0;
    d.inertiaBody = Vec3::Constant(0.004);
    s.addBody(d);
  }
  BodyDef floor;
  floor.id = makeBodyId(9, 0);
  floor.motion = BodyMotion::Static;
  floor.shape = s.shapes.add(Halfspace{});
  s.addBody(floor);
  return s;
}

/// Stepper settings with warm start and dt = 0.01 s.
StepperSettings warmStartSettings() {
  StepperSettings settings;
  settings.deltaT = 0.01;
  settings.solver.usePercussionCache = true;
  return settings;
}

/// record/SimState.sim with threeBodies() at t = 0 and t = 0.05 s (step 5).
void writeTwoStates(const std::filesystem::path& record) {
  const DynamicsSystem s = threeBodies();
  SimFileWriter w;
  w.open(record / "SimState.sim");
  w.writeHeader(s.bodies);
  w.writeState(0.0, s.bodies);
  w.writeState(0.05, s.bodies);
}

TEST(RestartIo, ApplyStateByIdAndMismatches) {
  DynamicsSystem s = threeBodies();
  SimState st;
  st.time = 1.5;
  for (std::uint32_t k : {2u, 0u, 1u}) {
    st.bodies.push_back(convert::test::freeFlightBody(makeBodyId(0, k), k, 0.3));
  }
  st.rebuildIndex();
  applyState(st, s.bodies);
  for (std::uint32_t k = 0; k < 3; ++k) {
    const auto i = *s.bodies.indexOf(makeBodyId(0, k));
    const SimBodyState& b = *st.find(makeBodyId(0, k));
    EXPECT_EQ(s.bodies.positions()[i], b.position);
    EXPECT_EQ(s.bodies.orientations()[i].coeffs(), b.orientation.coeffs());
    EXPECT_EQ(s.bodies.velocities()[i], b.velocity);
    EXPECT_EQ(s.bodies.omegasBody()[i], b.omegaBody);
  }
  SimState missing = st;
  missing.bodies.pop_back();
  missing.rebuildIndex();
  EXPECT_THROW(applyState(missing, s.bodies), SimFileError);
  SimState extra = st;
  extra.bodies.push_back(convert::test::freeFlightBody(makeBodyId(0, 7), 7, 0.3));
  extra.rebuildIndex();
  EXPECT_THROW(applyState(extra, s.bodies), SimFileError);
}

TEST(RestartIo, ApplyStateToAShareOfTheScene) {
  // A process of a distributed run holds bodies 0 and 2 of a three-body scene.
  DynamicsSystem s = threeBodies();
  s.bodies.remove(makeBodyId(0, 1));
  SimState st;
  st.time = 0.5;
  for (std::uint32_t k : {0u, 1u, 2u}) {
    st.bodies.push_back(convert::test::freeFlightBody(makeBodyId(0, k), k, 0.3));
  }
  st.rebuildIndex();
  EXPECT_THROW(applyState(st, s.bodies), SimFileError);  // by default the whole scene is here
  applyState(st, s.bodies, 3);
  for (std::uint32_t k : {0u, 2u}) {
    const auto i = *s.bodies.indexOf(makeBodyId(0, k));
    EXPECT_EQ(s.bodies.positions()[i], st.find(makeBodyId(0, k))->position);
  }
  EXPECT_THROW(applyState(st, s.bodies, 4), SimFileError);  // the state lacks a scene body
  SimState without0 = st;
  without0.bodies.erase(without0.bodies.begin());
  without0.rebuildIndex();
  EXPECT_THROW(applyState(without0, s.bodies, 2), SimFileError);  // a held body is missing
}

TEST(RestartIo, ApplyStateFromTheFileBlockByBlock) {
  // Five bodies in the file; this process holds bodies 1 and 3 (a share of a distributed run).
  TempDir dir;
  DynamicsSystem whole;
  const ShapeIndex sphere = whole.shapes.add(Sphere{0.1});
  for (std::uint32_t k = 0; k < 5; ++k) {
    BodyDef d;
    d.id = makeBodyId(0, k);
    d.shape = sphere;
    d.mass = 1.0;
    d.inertiaBody = Vec3::Constant(0.004);
    d.position = Vec3(k, 1.0 / 3.0, -2.0 * k);
    d.velocity = Vec3(0.1 * k, 0, 1);
    d.orientation = Quat(Eigen::AngleAxis<Real>(0.2 * k, Vec3::UnitY()));
    whole.addBody(d);
  }
  SimFileWriter w;
  w.open(dir / "run.sim");
  w.writeHeader(whole.bodies);
  w.writeState(0.25, whole.bodies);
  w.close();

  SimFileReader r;
  r.open(dir / "run.sim");
  std::vector<BodyId> visited;
  EXPECT_EQ(r.forEachBody(
                0, [&](const SimBodyState& b) { visited.push_back(b.id); }, 2),
            0.25);
  EXPECT_EQ(visited, r.readIds(0));  // all five, in file order, across blocks of two

  DynamicsSystem share = threeBodies();
  share.bodies.remove(makeBodyId(0, 0));
  share.bodies.remove(makeBodyId(0, 2));
  BodyDef third;
  third.id = makeBodyId(0, 3);
  third.shape = 0;
  third.mass = 1.0;
  third.inertiaBody = Vec3::Constant(0.004);
  share.addBody(third);
  EXPECT_THROW(applyState(r, 0, share.bodies), SimFileError);  // 5 bodies, not the 2 held here
  EXPECT_EQ(applyState(r, 0, share.bodies, 5), 0.25);
  for (std::uint32_t k : {1u, 3u}) {
    const auto i = *share.bodies.indexOf(makeBodyId(0, k));
    const auto j = *whole.bodies.indexOf(makeBodyId(0, k));
    EXPECT_EQ(share.bodies.positions()[i], whole.bodies.positions()[j]);
    EXPECT_EQ(share.bodies.velocities()[i], whole.bodies.velocities()[j]);
    EXPECT_EQ(share.bodies.orientations()[i].coeffs(), whole.bodies.orientations()[j].coeffs());
  }

  // A held body twice in the state (the second record's id overwritten with body 1's).
  std::string bytes = convert::test::readText(dir / "run.sim");
  const std::size_t perBody = r.header().bytesPerBody();
  const BodyId one = makeBodyId(0, 1);
  std::memcpy(bytes.data() + SimFileHeader::kSize + 8 + 2 * perBody, &one, sizeof(one));
  convert::test::writeText(dir / "twice.sim", bytes);
  SimFileReader twice;
  twice.open(dir / "twice.sim");
  try {
    applyState(twice, 0, share.bodies, 5);
    ADD_FAILURE() << "a body twice in the state was accepted";
  } catch (const SimFileError& e) {
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
  }
}

TEST(RestartIo, RunLogAppendDropsLaterStepsAndPartialLine) {
  TempDir dir;
  const auto file = dir / "SimData.dat";
  // (Lines shortened: the writer only reads the step column of kept lines.)
  const std::string header = RunLogWriter::headerLine() + "\n";
  convert::test::writeText(file, header +
                                     "0.1\t0.01\t1\t5\n"
                                     "0.2\t0.02\t2\t5\n"
                                     "0.3\t0.03\t3\t5\n"
                                     "0.4\t0.04\t4\t5\n"
                                     "0.5\t0.0");
  RunLogWriter log;
  log.openAppend(file, 2);
  StepStats st;
  st.step = 3;
  st.time = 0.03;
  log.write(st);
  log.close();
  const std::string text = convert::test::readText(file);
  EXPECT_EQ(text.rfind(header + "0.1\t0.01\t1\t5\n0.2\t0.02\t2\t5\n", 0), 0u) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;
  EXPECT_NE(text.find("\t0.03\t3\t"), std::string::npos) << text;
  // A missing log is created with the header.
  RunLogWriter fresh;
  fresh.openAppend(dir / "new.dat", 10);
  fresh.close();
  EXPECT_EQ(convert::test::readText(dir / "new.dat"),
            RunLogWriter::headerLine() + "\n" + RunLogWriter::versionLine() + "\n");
}

TEST(RestartIo, RecordedMediaDirectory) {
  TempDir dir;
  EXPECT_EQ(recordedMediaDirectory(dir.path()), std::filesystem::path());
  // A run folder of a version before RunInfo.txt had the version line.
  convert::test::writeText(dir / kRunInfoFile,
                           "scene\t" + (dir / "old" / "a.xml").string() + "\nmedia\t\n");
  EXPECT_EQ(recordedMediaDirectory(dir.path()), dir / "old");
  convert::test::writeText(dir / kRunInfoFile, runInfoText(dir / "scenes" / "a.xml", {}));
  EXPECT_EQ(convert::test::readText(dir / kRunInfoFile)
                .rfind("version\t" + std::string(versionString()) + "\n", 0),
            0u);
  EXPECT_EQ(recordedMediaDirectory(dir.path()), std::filesystem::absolute(dir / "scenes"));
  convert::test::writeText(dir / kRunInfoFile,
                           runInfoText(dir / "scenes" / "a.xml", dir / "media"));
  EXPECT_EQ(recordedMediaDirectory(dir.path()), std::filesystem::absolute(dir / "media"));
}

TEST(RestartIo, WarmStartCacheRoundTripAndStaleCache) {
  TempDir dir;
  const std::filesystem::path record = dir.path();
  StepperSettings settings;
  settings.deltaT = 0.01;
  settings.solver.usePercussionCache = true;
  // A record folder: two states of the three bodies (t = 0 and t = 0.05, step 5).
  DynamicsSystem s = threeBodies();
  {
    SimFileWriter w;
    w.open(record / "SimState.sim");
    w.writeHeader(s.bodies);
    w.writeState(0.0, s.bodies);
    s.bodies.positions()[1] = Vec3(1, 2, 3);
    w.writeState(0.05, s.bodies);
    RunLogWriter log;
    log.open(record / "SimData.dat");
  }
  const std::vector<detail::PercussionCacheEntry> cache = {
      {makeBodyId(0, 0), makeBodyId(0, 1), 0, Vec3(1.5, -2, 1e-3)},
      {makeBodyId(0, 0), makeBodyId(9, 0), 1, Vec3(0, 0, 7)}};
  MoreauStepper before(settings);
  before.setWarmStartCache(cache);
  WarmStartCheckpoint checkpoint;
  checkpoint.store(record, before, 0.05, 5);
  before.setWarmStartCache({});  // later steps change the solver's cache
  ASSERT_TRUE(std::filesystem::exists(record / kRestartCacheFile));
  EXPECT_FALSE(std::filesystem::exists(record / kRestartCachePreviousFile));

  DynamicsSystem again = threeBodies();
  MoreauStepper after(settings);
  SimFileWriter sim;
  RunLogWriter log;
  const ResumePoint rp = resumeRun(record, again, after, &sim, log);
  EXPECT_TRUE(rp.warmStartRestored);
  EXPECT_EQ(rp.step, 5u);
  EXPECT_EQ(rp.stateIndex, 1u);
  EXPECT_EQ(again.time, 0.05);
  EXPECT_EQ(after.stepCount(), 5u);
  EXPECT_EQ(again.bodies.positions()[1], Vec3(1, 2, 3));
  const auto& restored = after.warmStartCache();
  ASSERT_EQ(restored.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(restored[k].lo, cache[k].lo);
    EXPECT_EQ(restored[k].hi, cache[k].hi);
    EXPECT_EQ(restored[k].ordinal, cache[k].ordinal);
    EXPECT_EQ(restored[k].percussionOnHi, cache[k].percussionOnHi);
  }
  EXPECT_EQ(sim.statesWritten(), 2u);
  sim.close();
  log.close();

  // A cache of another state is not used.
  WarmStartCheckpoint other;
  other.store(record, before, 0.04, 4);  // replaces the file (a later step's): nothing kept
  DynamicsSystem third = threeBodies();
  MoreauStepper stale(settings);
  const ResumePoint rp2 = resumeRun(record, third, stale, nullptr, log);
  log.close();
  EXPECT_FALSE(rp2.warmStartRestored);
  ASSERT_EQ(rp2.messages.size(), 1u);
  EXPECT_NE(rp2.messages[0].find("no warm-start data"), std::string::npos);
  EXPECT_TRUE(stale.warmStartCache().empty());

  EXPECT_FALSE(std::filesystem::exists(record / kRestartCachePreviousFile));

  // Without a recorded .sim there is nothing to continue.
  TempDir empty;
  EXPECT_THROW(resumeRun(empty.path(), third, stale, nullptr, log), grain::Error);
}

TEST(RestartIo, WarmStartCacheOfTheStateBeforeIsKept) {
  // A run killed after storing the cache of its next state (step 10) but before that state was
  // complete: the restart continues from step 5 with the cache of step 5, RestartCache.prev.bin.
  TempDir dir;
  const std::filesystem::path record = dir.path();
  const StepperSettings settings = warmStartSettings();
  writeTwoStates(record);
  const std::vector<detail::PercussionCacheEntry> at5 = {
      {makeBodyId(0, 0), makeBodyId(0, 1), 0, Vec3(1, 2, 3)}};
  const std::vector<detail::PercussionCacheEntry> at10 = {
      {makeBodyId(0, 0), makeBodyId(0, 1), 0, Vec3(4, 5, 6)},
      {makeBodyId(0, 1), makeBodyId(9, 0), 0, Vec3(7, 8, 9)}};
  MoreauStepper run(settings);
  WarmStartCheckpoint checkpoint;
  run.setWarmStartCache(at5);
  checkpoint.store(record, run, 0.05, 5);
  run.setWarmStartCache(at10);
  checkpoint.store(record, run, 0.1, 10);
  ASSERT_TRUE(std::filesystem::exists(record / kRestartCachePreviousFile));

  DynamicsSystem again = threeBodies();
  MoreauStepper resumed(settings);
  SimFileWriter sim;
  RunLogWriter log;
  const ResumePoint rp = resumeRun(record, again, resumed, &sim, log);
  EXPECT_EQ(rp.step, 5u);
  EXPECT_TRUE(rp.warmStartRestored);
  ASSERT_EQ(resumed.warmStartCache().size(), 1u);
  EXPECT_EQ(resumed.warmStartCache()[0].percussionOnHi, Vec3(1, 2, 3));

  // The continued run stores the cache of step 10 again: RestartCache.bin (the killed run's, of
  // step 10) is replaced, and the previous file still holds step 5 until then.
  WarmStartCheckpoint next;
  resumed.setWarmStartCache(at10);
  next.store(record, resumed, 0.1, 10);
  DynamicsSystem third = threeBodies();
  MoreauStepper again5(settings);
  const ResumePoint rp2 = loadResumeState(record, third, again5);
  EXPECT_TRUE(rp2.warmStartRestored);
  ASSERT_EQ(again5.warmStartCache().size(), 1u);
  EXPECT_EQ(again5.warmStartCache()[0].percussionOnHi, Vec3(1, 2, 3));
  // A damaged cache file (an entry count beyond its size) is not used, and not allocated for.
  {
    std::ofstream bad(record / kRestartCachePreviousFile, std::ios::binary | std::ios::in);
    bad.seekp(24);
    const std::uint64_t huge = 1ull << 40;
    bad.write(reinterpret_cast<const char*>(&huge), sizeof huge);
  }
  DynamicsSystem fourth = threeBodies();
  MoreauStepper stepper4(settings);
  EXPECT_FALSE(loadResumeState(record, fourth, stepper4).warmStartRestored);
  EXPECT_TRUE(stepper4.warmStartCache().empty());
  sim.close();
  log.close();
}

TEST(RestartIo, WarmStartEntriesInAnyOrderAreReadSortedAndFiltered) {
  // A distributed run writes each process's entries in turn (RestartCache.bin in the format of
  // warmStartHeader/appendWarmStartEntry): readers sort them, and a process keeps only those it
  // asks for.
  TempDir dir;
  const std::filesystem::path record = dir.path();
  const StepperSettings settings = warmStartSettings();
  writeTwoStates(record);
  const std::vector<detail::PercussionCacheEntry> unsorted = {
      {makeBodyId(0, 1), makeBodyId(9, 0), 0, Vec3(7, 8, 9)},
      {makeBodyId(0, 0), makeBodyId(0, 1), 1, Vec3(4, 5, 6)},
      {makeBodyId(0, 0), makeBodyId(0, 1), 0, Vec3(1, 2, 3)}};
  std::vector<char> bytes;
  for (const auto& e : unsorted) {
    appendWarmStartEntry(bytes, e);
  }
  ASSERT_EQ(bytes.size(), 3 * kWarmStartEntryBytes);
  {
    const auto header = warmStartHeader(0.05, 5, unsorted.size());
    std::ofstream o(record / kRestartCacheFile, std::ios::binary);
    o.write(header.data(), static_cast<std::streamsize>(header.size()));
    o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  DynamicsSystem all = threeBodies();
  MoreauStepper stepper(settings);
  ASSERT_TRUE(loadResumeState(record, all, stepper).warmStartRestored);
  const auto& cache = stepper.warmStartCache();
  ASSERT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache[0].percussionOnHi, Vec3(1, 2, 3));
  EXPECT_EQ(cache[1].percussionOnHi, Vec3(4, 5, 6));
  EXPECT_EQ(cache[2].percussionOnHi, Vec3(7, 8, 9));

  DynamicsSystem some = threeBodies();
  MoreauStepper filtered(settings);
  ASSERT_TRUE(loadResumeState(
                  record, some, filtered, std::nullopt,
                  [](const detail::PercussionCacheEntry& e) { return e.hi == makeBodyId(9, 0); })
                  .warmStartRestored);
  ASSERT_EQ(filtered.warmStartCache().size(), 1u);
  EXPECT_EQ(filtered.warmStartCache()[0].percussionOnHi, Vec3(7, 8, 9));
}

}  // namespace

}  // namespace grain::io
