// SPDX-License-Identifier: MIT
// grain-sim --dump-fclib: the contact problems of a run as FCLIB files, checked against the
// closed-form problem of a sphere sliding on a plane.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "e2e_util.hpp"

#ifdef GRAIN_TEST_WITH_FCLIB
#include <grain/fclib/fclib_io.hpp>
#endif

namespace grain {
namespace {

namespace fs = std::filesystem;

using namespace testing;  // grain::testing helpers of e2e_util.hpp

/// A sphere (m = 2 kg, radius 0.1 m) touching a static plane z = 0 with 0.1 mm overlap,
/// sliding along x at 1 m/s under g = 10 m/s^2 with mu = 0.3; dt = 0.01 s, 5 steps.
std::string slidingSphereScene() {
  return R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="noOutput"/>
    <TimeStepperSettings deltaT="0.01" endTime="0.05">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5" alphaSORProx="1.2" maxIter="100" absTol="1e-12" relTol="1e-12"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces><ForceField applyTo="all" type="gravity" value="10" direction="0 0 -1"/></ExternalForces>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="ball" instances="1" groupId="0">
      <Geometry><Sphere distribute="uniform" radius="0.1"/></Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="uniform" value="2"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms"><Pos><Trafo trans="0 0 0.0999" axis="0 0 1" deg="0"/></Pos></InitialPosition>
          <InitialVelocity distribute="transrot"><Vel transDir="1 0 0" absTransVel="1" rotDir="0 0 1" absRotVel="0"/></InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)" + floorBodiesXml(1) +
         R"(  </SceneObjects>
</DynamicsSystem>
)";
}

CommandResult runDump(const fs::path& scene, const fs::path& out, const std::string& every) {
  return runCommand(std::string(GRAIN_SIM_EXE) + " -s " + scene.string() + " -g " + out.string() +
                    " --dump-fclib " + every);
}

TEST(DumpFclib, RejectsBadEvery) {
  const fs::path dir = makeTempDir("dump_fclib_bad");
  const fs::path scene = dir / "slide.xml";
  writeText(scene, slidingSphereScene());
  const CommandResult r = runDump(scene, dir / "out", "0");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("--dump-fclib"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out" / "SimFiles"));
}

#ifdef GRAIN_TEST_WITH_FCLIB
TEST(DumpFclib, WritesEveryNthStepProblemWithSolution) {
  const fs::path dir = makeTempDir("dump_fclib");
  const fs::path scene = dir / "slide.xml";
  writeText(scene, slidingSphereScene());
  const CommandResult r = runDump(scene, dir / "out", "2");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const fs::path folder = dir / "out" / "SimFiles" / "SimDataRECORD_0" / "fclib";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names, (std::vector<std::string>{"slide-i0000002-1.hdf5", "slide-i0000004-1.hdf5"}));

  for (const std::string& name : names) {
    const std::string file = (folder / name).string();
    const LocalProblem p = fclib::readLocal(file);
    ASSERT_EQ(p.contactCount(), 1u);
    EXPECT_EQ(p.spaceDim, 3);
    EXPECT_NE(p.title.find("slide step"), std::string::npos) << p.title;
    EXPECT_DOUBLE_EQ(p.mu[0], 0.3);
    // W = diag(1/m, 1/m + r^2/I, 1/m + r^2/I) with I = 2/5 m r^2: (0.5, 1.75, 1.75).
    const Eigen::Matrix<Real, 3, 3> w = Eigen::Matrix<Real, 3, 3>(p.W.toDense());
    EXPECT_NEAR(w(0, 0), 0.5, 1e-12);
    EXPECT_NEAR(w(1, 1), 1.75, 1e-12);
    EXPECT_NEAR(w(2, 2), 1.75, 1e-12);
    EXPECT_NEAR(w(0, 1), 0.0, 1e-12);
    EXPECT_NEAR(w(0, 2), 0.0, 1e-12);
    EXPECT_NEAR(w(1, 2), 0.0, 1e-12);
    // Free normal velocity -g dt; the sphere still slides, so |q_T| > 0.
    EXPECT_NEAR(p.q[0], -0.1, 1e-12);
    const Real qT = p.q.segment<2>(1).norm();
    EXPECT_GT(qT, 0.5);

    // grain's solution: r_N = m g dt, sliding friction |r_T| = mu r_N opposite to u_T, u_N = 0.
    const fclib::Solution s = fclib::readSolution(file, p);
    EXPECT_NEAR(s.r[0], 0.2, 1e-9);
    EXPECT_NEAR(s.r.segment<2>(1).norm(), 0.06, 1e-9);
    const VecX u = localVelocity(p, s.r);
    EXPECT_NEAR((u - s.u).norm(), 0.0, 1e-14);
    EXPECT_NEAR(u[0], 0.0, 1e-9);
    EXPECT_NEAR(s.r.segment<2>(1).dot(u.segment<2>(1)) /
                    (s.r.segment<2>(1).norm() * u.segment<2>(1).norm()),
                -1.0, 1e-9);
    EXPECT_LT(LocalErrorEvaluator(p).naturalMap(s.r, s.u), 1e-9);
  }
}
#endif

}  // namespace
}  // namespace grain
