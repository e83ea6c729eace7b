// SPDX-License-Identifier: MIT
// Scene reading: every value of a full small scene, GRSF's own scene files, and errors.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>

#include <gtest/gtest.h>

#include <grain/core/geometry/mass_properties.hpp>
#include <grain/io/body_random.hpp>
#include <grain/io/radius_distribution.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/sim_file.hpp>

#include "io_test_util.hpp"

namespace grain::io {
namespace {

using test::TempDir;

constexpr Real kPi = std::numbers::pi_v<Real>;

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::size_t indexOf(const SceneDescription& d, BodyId id) {
  const auto i = d.system.bodies.indexOf(id);
  EXPECT_TRUE(i.has_value()) << formatBodyId(id);
  return i.value_or(0);
}

Vec3 positionOf(const SceneDescription& d, BodyId id) {
  return d.system.bodies.positions()[indexOf(d, id)];
}

void expectVecNear(const Vec3& a, const Vec3& b, Real tol = 1e-12) {
  EXPECT_NEAR((a - b).norm(), 0.0, tol)
      << "got " << a.transpose() << ", expected " << b.transpose();
}

class FullScene : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scene_ = new SceneDescription(loadScene(test::testDataDir() / "scenes" / "full_scene.xml"));
  }
  static void TearDownTestSuite() {
    delete scene_;
    scene_ = nullptr;
  }
  static const SceneDescription& scene() { return *scene_; }

 private:
  static SceneDescription* scene_;
};
SceneDescription* FullScene::scene_ = nullptr;

TEST_F(FullScene, StepperAndSolverSettings) {
  const StepperSettings& s = scene().stepper;
  EXPECT_EQ(s.deltaT, 0.002);
  EXPECT_EQ(s.endTime, 0.5);
  const InclusionSolverSettings& i = s.solver;
  EXPECT_EQ(i.method, SolverMethod::SorFull);
  EXPECT_EQ(i.alphaJorProx, 0.3);
  EXPECT_EQ(i.alphaSorProx, 1.4);
  EXPECT_EQ(i.rStrategy, RStrategy::Sum);
  EXPECT_EQ(i.subMethodUcf, UcfSubMethod::DeSaxce);
  EXPECT_EQ(i.convergenceMethod, ConvergenceMethod::InEnergyVelocity);
  EXPECT_EQ(i.minIter, 3u);
  EXPECT_EQ(i.maxIter, 250u);
  EXPECT_EQ(i.absTol, 1e-6);
  EXPECT_EQ(i.relTol, 1e-5);
  EXPECT_TRUE(i.computeTotalOverlap);
  EXPECT_TRUE(i.usePercussionCache);
  EXPECT_EQ(i.reserveContacts, 500u);
  EXPECT_TRUE(i.isFiniteCheck);
  EXPECT_TRUE(i.driftCorrectionGap);
  EXPECT_EQ(i.driftCorrectionGapAlpha, 0.3);
  EXPECT_EQ(i.driftCorrectionGapSlop, 2e-5);
  EXPECT_FALSE(scene().solverExtras.useGpu);
  EXPECT_EQ(scene().solverExtras.gpuDevice, 1u);
  EXPECT_TRUE(scene().solverExtras.computeResidual);
  EXPECT_TRUE(scene().warnings.empty());
  EXPECT_TRUE(scene().mpi.has_value());
}

TEST_F(FullScene, RecorderEveryXFromStatesPerSecond) {
  // floor(1 / (30 * 0.002)) = floor(16.67) = 16
  EXPECT_EQ(scene().recorder.mode, RecorderMode::EveryXTimeStep);
  EXPECT_EQ(scene().recorder.everyXStep, 16u);
  EXPECT_TRUE(scene().recorder.records(32));
  EXPECT_FALSE(scene().recorder.records(33));
}

TEST_F(FullScene, ContactParameterLookup) {
  const ContactParameterMap& m = scene().system.contactParameters;
  EXPECT_EQ(m.size(), 2u);
  const ContactParameter& std = m.get(3, 9);  // not listed -> standard
  EXPECT_EQ(std.model, ContactModel::UCF);
  EXPECT_EQ(std.mu, 0.4);
  EXPECT_EQ(std.epsilonN, 0.2);
  EXPECT_EQ(std.epsilonT, 0.1);
  for (const auto& p : {m.get(1, 2), m.get(2, 1)}) {  // unordered pair
    EXPECT_EQ(p.model, ContactModel::UCFD);
    EXPECT_EQ(p.mu, 0.6);
    EXPECT_EQ(p.epsilonN, 0.0);
    EXPECT_EQ(p.invDampingN, 1e-4);
    EXPECT_EQ(p.invDampingT, 2e-4);
  }
  const ContactParameter& p22 = m.get(2, 2);
  EXPECT_EQ(p22.model, ContactModel::UCF);
  EXPECT_EQ(p22.mu, 0.7);
  EXPECT_EQ(p22.epsilonN, 0.3);
  EXPECT_EQ(p22.invDampingT, 0.0);  // ignored for UCF
}

TEST_F(FullScene, Gravity) {
  const auto& fields = scene().system.externalForces.gravityFields();
  ASSERT_EQ(fields.size(), 1u);
  const Vec3 dir = Vec3(-0.5, 0.0, -0.866025404).normalized();
  expectVecNear(scene().system.externalForces.gravityAcceleration(), 9.81 * dir, 1e-12);
}

TEST_F(FullScene, GroupsAndIdsContinueAcrossEqualGroupId) {
  const auto& g = scene().groups;
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g[0].name, "grid");
  EXPECT_EQ(g[0].groupId, 0u);
  EXPECT_EQ(g[0].firstNumber, 0u);
  EXPECT_EQ(g[1].name, "jittered");
  EXPECT_EQ(g[1].groupId, 0u);
  EXPECT_EQ(g[1].firstNumber, 10u);  // continues after the 10 bodies of "grid"
  EXPECT_EQ(g[2].groupId, 1u);       // no groupId: largest so far (0) + 1
  EXPECT_EQ(g[3].groupId, 5u);
  EXPECT_EQ(g[4].groupId, 7u);
  EXPECT_EQ(g[4].motion, BodyMotion::Static);
  EXPECT_EQ(g[2].geometryElement, "Box");
  EXPECT_EQ(g[0].line, 34u);

  const BodyStorage& b = scene().system.bodies;
  ASSERT_EQ(b.size(), 19u);
  EXPECT_EQ(b.simulatedCount(), 18u);
  std::vector<BodyId> expected;
  for (std::uint32_t k = 0; k < 13; ++k) {
    expected.push_back(makeBodyId(0, k));
  }
  expected.insert(expected.end(), {makeBodyId(1, 0), makeBodyId(1, 1), makeBodyId(5, 0),
                                   makeBodyId(5, 1), makeBodyId(5, 2), makeBodyId(7, 0)});
  EXPECT_EQ(b.ids(), expected);
  ASSERT_EQ(scene().groupOfBody.size(), 19u);
  EXPECT_EQ(scene().groupOfBody[12], 1u);
  EXPECT_EQ(scene().groupOfBody[13], 2u);
  EXPECT_EQ(scene().groupOf(makeBodyId(0, 11))->name, "jittered");
  EXPECT_EQ(scene().groupOf(makeBodyId(5, 3)), nullptr);
  EXPECT_EQ(b.materials()[0], 1u);
  EXPECT_EQ(b.materials()[13], 2u);
  EXPECT_EQ(b.materials()[15], 3u);
}

TEST_F(FullScene, GridPositionsInRotatedFrame) {
  // dirZ = x, dirX = z: grid x -> world z, grid y -> world -y, grid z -> world x.
  // Body k: ix = k % 2, iy = (k / 2) % 3, iz = k / 6; centred: x - 0.05, y - 0.1.
  for (std::uint32_t k = 0; k < 10; ++k) {
    const Real ix = k % 2;
    const Real iy = (k / 2) % 3;
    const Real iz = k / 6;
    const Vec3 expected(1.0 + 0.1 * iz, 2.0 - (0.1 * iy - 0.1), 3.0 + 0.1 * ix - 0.05);
    expectVecNear(positionOf(scene(), makeBodyId(0, k)), expected, 1e-14);
  }
  expectVecNear(positionOf(scene(), makeBodyId(0, 9)), Vec3(1.1, 2.0, 3.05), 1e-14);
}

TEST_F(FullScene, GridJitterIsPerBodyIndex) {
  for (std::uint32_t k = 0; k < 3; ++k) {
    const Vec3 base(0.1 * k - 0.1, 0.0, 0.0);
    const Vec3 p = positionOf(scene(), makeBodyId(0, 10 + k));
    EXPECT_NEAR((p - base).norm(), 0.01, 1e-14);
    BodyRandom rng(7, k);  // index within the RigidBodies element
    expectVecNear(p, base + 0.01 * rng.unitVector(), 1e-15);
  }
}

TEST_F(FullScene, HomogeneousMassAndInertia) {
  const BodyStorage& b = scene().system.bodies;
  const Real m = 1000.0 * 4.0 / 3.0 * kPi * 0.05 * 0.05 * 0.05;  // 0.5236 kg
  EXPECT_NEAR(b.masses()[0], m, 1e-15);
  expectVecNear(b.inertiasBody()[0], Vec3::Constant(0.4 * m * 0.05 * 0.05), 1e-18);
  EXPECT_EQ(b.masses()[10], 0.25);
  expectVecNear(b.inertiasBody()[10], Vec3::Constant(0.4 * 0.25 * 0.02 * 0.02), 1e-18);
  // Box 0.2 x 0.4 x 0.6, 3 kg: m/12 (b^2 + c^2, a^2 + c^2, a^2 + b^2)
  const std::size_t box = indexOf(scene(), makeBodyId(1, 0));
  EXPECT_EQ(b.masses()[box], 3.0);
  expectVecNear(b.inertiasBody()[box], Vec3(0.13, 0.10, 0.05), 1e-15);
  const Shape& shape = scene().system.shapes[b.shapes()[box]];
  ASSERT_TRUE(std::holds_alternative<Box>(shape));
  expectVecNear(std::get<Box>(shape).halfExtent, Vec3(0.1, 0.2, 0.3));
  const std::size_t cap = indexOf(scene(), makeBodyId(5, 0));
  expectVecNear(b.inertiasBody()[cap],
                homogeneousInertia(scene().system.shapes[b.shapes()[cap]], 0.5));
  const std::size_t floor = indexOf(scene(), makeBodyId(7, 0));
  EXPECT_EQ(b.invMasses()[floor], 0.0);
}

TEST_F(FullScene, TransformsComposeLeftToRightAndRepeatLast) {
  // r = (1,0,0) + Rz(90)(1,0,0) = (1,1,0); q = qz(90) qx(90).
  const BodyStorage& b = scene().system.bodies;
  for (std::uint32_t k = 0; k < 2; ++k) {
    const std::size_t i = indexOf(scene(), makeBodyId(1, k));
    expectVecNear(b.positions()[i], Vec3(1.0, 1.0, 0.0), 1e-15);
    const Mat3 a = b.orientations()[i].toRotationMatrix();
    expectVecNear(a * Vec3::UnitX(), Vec3::UnitY(), 1e-15);
    expectVecNear(a * Vec3::UnitY(), Vec3::UnitZ(), 1e-15);
    expectVecNear(b.velocities()[i], Vec3::Zero());
  }
}

TEST_F(FullScene, LinearPositions) {
  for (std::uint32_t k = 0; k < 3; ++k) {
    expectVecNear(positionOf(scene(), makeBodyId(5, k)), Vec3(0.0, 0.2 * k, 1.0), 1e-15);
  }
}

TEST_F(FullScene, VelocitiesRepeatLast) {
  const BodyStorage& b = scene().system.bodies;
  expectVecNear(b.velocities()[0], Vec3(0.0, 0.0, 1.5));
  expectVecNear(b.omegasBody()[0], Vec3(3.0, 0.0, 0.0));
  for (std::size_t i = 1; i < 10; ++i) {
    expectVecNear(b.velocities()[i], Vec3(0.0, -0.5, 0.0));
    expectVecNear(b.omegasBody()[i], Vec3(0.0, 0.0, -2.0));
  }
  // The group without InitialVelocity and the static floor (velocity ignored) are at rest.
  expectVecNear(b.velocities()[10], Vec3::Zero());
  expectVecNear(b.velocities()[18], Vec3::Zero());
}

TEST_F(FullScene, IgnoredAttributesAreReported) {
  const auto& ig = scene().ignored;
  EXPECT_TRUE(contains(ig, "SceneSettings/ContactParameterMap/ContactParameter[2]@invDampingN"));
  EXPECT_TRUE(contains(ig, "SceneSettings/ContactParameterMap/ContactParameter[2]@invDampingT"));
  EXPECT_TRUE(contains(ig, "SceneObjects/RigidBodies[name=\"floor\"]/Geometry/Halfspace@position"));
  EXPECT_TRUE(contains(ig, "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties/Mass"));
  EXPECT_TRUE(
      contains(ig,
               "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties/InitialCondition/"
               "InitialVelocity"));
  EXPECT_TRUE(contains(ig, "SceneSettings/Visualization"));
  EXPECT_TRUE(contains(ig, "SceneObjects/RigidBodies[name=\"grid\"]/Visualization"));
  EXPECT_TRUE(contains(ig, "SceneSettings/MPISettings/ProcessTopology/Topology@minGridSize"));
  std::string all;
  for (const auto& i : ig) {
    all += i + "\n";
  }
  EXPECT_EQ(ig.size(), 8u) << all;
}

TEST_F(FullScene, MpiSettingsWithDefaults) {
  ASSERT_TRUE(scene().mpi.has_value());
  const LoadBalanceSettings& m = *scene().mpi;
  EXPECT_EQ(m.mode, LoadBalanceSettings::Mode::Static);
  EXPECT_TRUE(m.doLocalComputations);
  EXPECT_EQ(m.type, LoadBalanceSettings::TopologyType::Grid);
  EXPECT_EQ(m.buildMode, LoadBalanceSettings::BuildMode::Mvbb);
  EXPECT_EQ(m.gridDimension, (std::array<std::uint32_t, 3>{2, 1, 1}));
  EXPECT_TRUE(m.matchProcessDimToExtent);
  EXPECT_EQ(m.minCellSize, 0.1);
  EXPECT_EQ(m.massPointCount, 5u);
  EXPECT_EQ(m.massPointDeltaT, 0.1);
  EXPECT_FALSE(m.outlierFilter);
  EXPECT_EQ(m.splitNodeUpdateRatio, 2u);
  EXPECT_EQ(m.convergenceCheckRatio, 3u);
  EXPECT_EQ(m.reserveSplitNodes, 2000u);
}

TEST_F(FullScene, HalfspaceNormalIsNormalised) {
  const BodyStorage& b = scene().system.bodies;
  const Shape& s = scene().system.shapes[b.shapes()[18]];
  ASSERT_TRUE(std::holds_alternative<Halfspace>(s));
  expectVecNear(std::get<Halfspace>(s).normal, Vec3::UnitZ());
}

// ---- meshes -----------------------------------------------------------------------------------

TEST(SceneMesh, LoadsStaticMeshWithTransform) {
  const auto file = test::testDataDir() / "scenes" / "mesh_scene.xml";
  SceneLoadOptions opt;
  opt.mediaDirectory = test::testDataDir();
  if (!meshSupportAvailable()) {
    try {
      loadScene(file, opt);
      FAIL() << "expected an error";
    } catch (const SceneError& e) {
      EXPECT_EQ(e.line(), 14u);
      EXPECT_NE(std::string(e.what()).find("has no Assimp"), std::string::npos) << e.what();
    }
    return;
  }
  const SceneDescription d = loadScene(file, opt);
  ASSERT_EQ(d.system.bodies.size(), 3u);
  EXPECT_EQ(d.system.bodies.ids()[2], makeBodyId(3, 2));
  EXPECT_EQ(d.groups[0].meshFile, test::testDataDir() / "meshes" / "tetra.obj");
  EXPECT_TRUE(contains(d.ignored, "SceneObjects/RigidBodies[name=\"walls\"]/Geometry/Mesh@name"));
  expectVecNear(d.system.bodies.positions()[1], Vec3(0, 0, 5));
  // Both bodies of a group share one shape.
  EXPECT_EQ(d.system.bodies.shapes()[0], d.system.bodies.shapes()[1]);
  // Meshes are two-sided unless oneSided="true".
  EXPECT_FALSE(std::get<Mesh>(d.system.shapes[d.system.bodies.shapes()[0]]).oneSided);
  EXPECT_TRUE(std::get<Mesh>(d.system.shapes[d.system.bodies.shapes()[2]]).oneSided);

  for (const std::size_t body : {std::size_t{0}, std::size_t{2}}) {
    const Shape& s = d.system.shapes[d.system.bodies.shapes()[body]];
    ASSERT_TRUE(std::holds_alternative<Mesh>(s));
    const TriangleMesh& m = *std::get<Mesh>(s).data;
    ASSERT_EQ(m.vertices.size(), 4u);
    ASSERT_EQ(m.triangles.size(), 4u);
    Vec3 centre = Vec3::Zero();
    for (const Vec3& v : m.vertices) {
      centre += v / 4.0;
    }
    for (std::size_t t = 0; t < 4; ++t) {  // normals point outwards, also when mirrored
      Vec3 fc = Vec3::Zero();
      for (auto v : m.triangles[t]) {
        fc += m.vertices[v] / 3.0;
      }
      EXPECT_GT(m.faceNormals[t].dot(fc - centre), 0.0) << "body " << body << " face " << t;
    }
  }
  // v -> Rz(90) (2 v) + (0, 0, 1): (1,0,0) -> (0,2,1), (0,1,0) -> (-2,0,1), (0,0,1) -> (0,0,3).
  const TriangleMesh& m = *std::get<Mesh>(d.system.shapes[d.system.bodies.shapes()[0]]).data;
  for (const Vec3& expected : {Vec3(0, 0, 1), Vec3(0, 2, 1), Vec3(-2, 0, 1), Vec3(0, 0, 3)}) {
    const bool found = std::any_of(m.vertices.begin(), m.vertices.end(),
                                   [&](const Vec3& v) { return (v - expected).norm() < 1e-12; });
    EXPECT_TRUE(found) << expected.transpose();
  }
}

// ---- GRSF's scene files -----------------------------------------------------------------------

std::filesystem::path grsfScenes() {
  return test::testDataDir() / "grsf-scenes";
}

#define GRAIN_REQUIRE_SHARED_DATA() \
  ASSERT_TRUE(std::filesystem::exists(grsfScenes() / "funnel.xml")) << grsfScenes()

TEST(GrsfScenes, FunnelLoadsUnchanged) {
  GRAIN_REQUIRE_SHARED_DATA();
  if (!meshSupportAvailable()) {
    GTEST_SKIP() << "no mesh support in this build";
  }
  const auto file = grsfScenes() / "funnel.xml";
  SceneLoadOptions opt;
  opt.mediaDirectory = grsfScenes();
  const SceneDescription d = loadScene(file, opt);
  EXPECT_EQ(d.system.bodies.size(), 708u);
  EXPECT_EQ(d.system.bodies.simulatedCount(), 700u);
  EXPECT_EQ(d.stepper.deltaT, 0.002);
  EXPECT_EQ(d.stepper.solver.maxIter, 104u);
  EXPECT_EQ(d.recorder.mode, RecorderMode::EveryTimeStep);
  // Grid 10 x 10, distance 0.03, centred, jitter 0.005.
  EXPECT_NEAR((positionOf(d, makeBodyId(0, 0)) - Vec3(-0.135, -0.135, 0.8)).norm(), 0.005, 1e-12);
  EXPECT_NEAR((positionOf(d, makeBodyId(0, 699)) - Vec3(0.135, 0.135, 0.98)).norm(), 0.005, 1e-12);
  expectVecNear(d.system.bodies.velocities()[5], Vec3(0, 0, -1));
  expectVecNear(positionOf(d, makeBodyId(6, 1)), Vec3(0, 0, 0.1));
  EXPECT_EQ(d.groups.back().name, "capsule");

  // GlobalGeometries: 10 random spheres (ids 1..10, uniform radii in [0.005, 0.01], seed 5);
  // the balls take a random one of them (seed 1).
  const RadiusDistribution radii = RadiusDistribution::uniform(0.005, 0.01);
  std::set<std::uint32_t> used;
  for (std::uint32_t k = 0; k < 700; ++k) {
    const std::size_t i = indexOf(d, makeBodyId(0, k));
    const std::uint32_t gid = d.globalGeomIdOfBody[i];
    ASSERT_GE(gid, 1u);
    ASSERT_LE(gid, 10u);
    used.insert(gid);
    BodyRandom rng(1, k);
    EXPECT_EQ(gid, 1 + rng.next() % 10);
    const Shape& s = d.system.shapes[d.system.bodies.shapes()[i]];
    ASSERT_TRUE(std::holds_alternative<Sphere>(s));
    EXPECT_EQ(std::get<Sphere>(s).radius, radii.sample(5, gid - 1));
    EXPECT_EQ(d.system.bodies.masses()[i], 1.0);
    const Real r = std::get<Sphere>(s).radius;
    expectVecNear(d.system.bodies.inertiasBody()[i], Vec3::Constant(0.4 * r * r), 1e-18);
  }
  EXPECT_EQ(used.size(), 10u);
  EXPECT_EQ(d.groups[0].geometryElement, "GlobalGeomId");
  EXPECT_TRUE(d.groups[0].shapePerBody);

  ASSERT_TRUE(d.mpi.has_value());
  const LoadBalanceSettings& m = *d.mpi;
  EXPECT_EQ(m.mode, LoadBalanceSettings::Mode::Dynamic);
  EXPECT_EQ(m.policy, LoadBalanceSettings::Policy::AlwaysRebuild);
  EXPECT_EQ(m.policyCheckEveryXTimeStep, 200u);
  EXPECT_EQ(m.bodyLimit, 5000u);
  EXPECT_EQ(m.bodyWeight,
            LoadBalanceSettings::BodyWeight::Count);  // grain's own attribute, absent here
  EXPECT_EQ(m.type, LoadBalanceSettings::TopologyType::Grid);
  EXPECT_EQ(m.buildMode, LoadBalanceSettings::BuildMode::Aabb);
  EXPECT_EQ(m.gridDimension, (std::array<std::uint32_t, 3>{2, 2, 1}));
  EXPECT_EQ(m.minCellSize, 0.1);
  EXPECT_EQ(m.massPointCount, 2u);
  EXPECT_EQ(m.massPointDeltaT, 0.002);
  EXPECT_EQ(m.reserveSplitNodes, 0u);

  EXPECT_TRUE(contains(d.ignored, "SceneSettings/RecorderSettings@statesPerSecond"));
  EXPECT_TRUE(
      contains(d.ignored, "SceneObjects/RigidBodies[name=\"funnel\"]/Geometry/Mesh@useInstance"));
  EXPECT_TRUE(
      contains(d.ignored, "SceneSettings/ContactParameterMap/ContactParameter[1]@invDampingT"));
  EXPECT_TRUE(contains(d.ignored, "SceneSettings/Visualization"));
  EXPECT_TRUE(contains(d.ignored, "SceneObjects/RigidBodies[name=\"balls\"]/Visualization"));
  EXPECT_TRUE(contains(d.ignored, "SceneSettings/MPISettings/ProcessTopology/Visualization"));
  EXPECT_TRUE(
      contains(d.ignored, "SceneSettings/MPISettings/ProcessTopology/Topology@minGridSize"));
  EXPECT_TRUE(contains(d.ignored, "SceneSettings/MPISettings/ProcessTopology/Topology@minPoint"));
  EXPECT_TRUE(
      contains(d.ignored, "SceneObjects/RigidBodies[name=\"balls\"]/Geometry/GlobalGeomId@id"));
  EXPECT_TRUE(d.warnings.empty());
}

TEST(GrsfScenes, AvalanchePlaceholderIsNamed) {
  GRAIN_REQUIRE_SHARED_DATA();
  const auto file = grsfScenes() / "avalanche1M-study.xml";
  try {
    loadScene(file);
    FAIL() << "expected an error";
  } catch (const SceneError& e) {
    EXPECT_EQ(std::string(e.what()),
              file.string() +
                  ":71: SceneSettings/GlobalInitialCondition: attribute 'file' contains the "
                  "unfilled placeholder '${RigidBodySim:firstInitialCondSimFile}' (replace it in "
                  "the file or with grain-sim --set)");
  }
}

/// The avalanche study scene with `beads` beads and the placeholder replaced by `simFile`.
std::string reducedAvalanche(std::uint32_t beads, const std::filesystem::path& simFile) {
  std::string text = test::readText(grsfScenes() / "avalanche1M-study.xml");
  text = test::replaceOnce(text, "${RigidBodySim:firstInitialCondSimFile}", simFile.string());
  text = test::replaceOnce(text, "instances=\"1000000\"",
                           "instances=\"" + std::to_string(beads) + "\"");
  return text;
}

/// A .sim file with one state at time t: bead k at (k, 2k, 3k) mm, velocity (0, 0, -k).
void writeBeadStates(const std::filesystem::path& file, std::uint32_t beads, double t,
                     std::uint32_t skip = 0xffffffffu) {
  BodyStorage b;
  for (std::uint32_t k = 0; k < beads; ++k) {
    if (k == skip) {
      continue;
    }
    BodyDef d;
    d.id = makeBodyId(0, k);
    d.mass = 1.0;
    d.inertiaBody = Vec3::Ones();
    d.position = 1e-3 * Vec3(k, 2.0 * k, 3.0 * k);
    d.velocity = Vec3(0.0, 0.0, -static_cast<Real>(k));
    b.add(d, 1.0);
  }
  SimFileWriter w;
  w.open(file);
  w.writeHeader(b);
  w.writeState(t, b);
}

TEST(GrsfScenes, AvalancheLoadsWithInitialConditionFromSimFile) {
  GRAIN_REQUIRE_SHARED_DATA();
  if (!meshSupportAvailable()) {
    GTEST_SKIP() << "no mesh support in this build";
  }
  TempDir dir;
  constexpr std::uint32_t kBeads = 2000;
  writeBeadStates(dir / "initial.sim", kBeads, 0.25);
  test::writeText(dir / "avalanche.xml", reducedAvalanche(kBeads, dir / "initial.sim"));
  SceneLoadOptions opt;
  opt.mediaDirectory = grsfScenes();
  const SceneDescription d = loadScene(dir / "avalanche.xml", opt);
  EXPECT_EQ(d.recorder.everyXStep, 10u);
  EXPECT_EQ(d.stepper.solver.minIter, 1000u);
  EXPECT_EQ(d.system.bodies.simulatedCount(), kBeads);
  // Two floors and three trees share groupId 2: numbers 0..4; side walls in group 3.
  const BodyGroup* middle = d.groupOf(makeBodyId(2, 2));
  ASSERT_NE(middle, nullptr);
  EXPECT_EQ(middle->name, "treeMiddle");
  EXPECT_EQ(d.groupOf(makeBodyId(2, 4))->name, "treeRight");
  EXPECT_EQ(d.groupOf(makeBodyId(3, 1))->name, "sideY2");
  // Tree: (-0.296, 0, 0) + Ry(10 deg) (-0.1254, 0.004, 0.04).
  const Real c = std::cos(10 * kPi / 180), s = std::sin(10 * kPi / 180);
  const Vec3 local(-0.1254, 0.004, 0.04);
  expectVecNear(positionOf(d, makeBodyId(2, 2)),
                Vec3(-0.296 + local.x() * c + local.z() * s, 0.004, -local.x() * s + local.z() * c),
                1e-15);
  // Positions from the .sim file (whichState="end"), velocities not read (readVelocities false),
  // time not continued (useTimeToContinue false).
  ASSERT_TRUE(d.initialCondition.has_value());
  EXPECT_EQ(d.initialCondition->stateTime, 0.25);
  EXPECT_FALSE(d.initialCondition->readVelocities);
  EXPECT_EQ(d.system.time, 0.0);
  for (const std::uint32_t k : {0u, 1u, 1234u, kBeads - 1}) {
    const std::size_t i = indexOf(d, makeBodyId(0, k));
    expectVecNear(d.system.bodies.positions()[i], 1e-3 * Vec3(k, 2.0 * k, 3.0 * k), 1e-15);
    expectVecNear(d.system.bodies.velocities()[i], Vec3::Zero());
  }
  // Random radii: piecewise constant density, drawn per bead index with seed 5; homogeneous mass.
  const RadiusDistribution radii = RadiusDistribution::piecewiseConstant(
      {0.59e-3, 0.7e-3, 0.85e-3, 1e-3, 1.18e-3}, {1.3681, 1.9913, 0.29116, 0.03956});
  Real mean = 0.0;
  for (std::uint32_t k = 0; k < kBeads; ++k) {
    const std::size_t i = indexOf(d, makeBodyId(0, k));
    const Real r = std::get<Sphere>(d.system.shapes[d.system.bodies.shapes()[i]]).radius;
    ASSERT_EQ(r, radii.sample(5, k));
    ASSERT_GE(r, 0.59e-3);
    ASSERT_LT(r, 1.18e-3);
    const Real mass = 565959097.49 * 4.0 / 3.0 * kPi * r * r * r;
    ASSERT_NEAR(d.system.bodies.masses()[i], mass, 1e-12 * mass);
    mean += r / kBeads;
  }
  EXPECT_NEAR(mean, radii.mean(), 4e-6);  // sample mean of 2000 radii (sd ~ 1e-4 / sqrt(2000))
  const Vec3 g = Vec3(-0.5, 0, -0.866025404).normalized() * 9.81;
  expectVecNear(d.system.externalForces.gravityAcceleration(), g, 1e-12);
  ASSERT_TRUE(d.mpi.has_value());
  EXPECT_EQ(d.mpi->type, LoadBalanceSettings::TopologyType::KdTree);
  EXPECT_TRUE(d.mpi->outlierFilter);
  EXPECT_EQ(d.mpi->outlierKnnMean, 20u);
  EXPECT_EQ(d.mpi->outlierStdDeviationMult, 3.0);
  EXPECT_EQ(d.mpi->outlierAllowSplitAbove, 10u);
  EXPECT_TRUE(contains(d.ignored, "SceneSettings/MPISettings/ProcessTopology/Topology@dimension"));
}

TEST(GrsfScenes, AvalancheBeadMissingFromSimFileIsAnError) {
  GRAIN_REQUIRE_SHARED_DATA();
  if (!meshSupportAvailable()) {
    GTEST_SKIP() << "no mesh support in this build";
  }
  TempDir dir;
  writeBeadStates(dir / "initial.sim", 50, 0.25, 17);
  const std::string text = reducedAvalanche(50, dir / "initial.sim");
  test::writeText(dir / "avalanche.xml", text);
  SceneLoadOptions opt;
  opt.mediaDirectory = grsfScenes();
  try {
    loadScene(dir / "avalanche.xml", opt);
    FAIL() << "expected an error";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.line(), 71u);
    EXPECT_EQ(e.message(), "1 simulated body is missing from state 0 (t = 0.25 s) of '" +
                               (dir / "initial.sim").string() + "': (0,17)");
  }
}

// ---- errors -----------------------------------------------------------------------------------

// Lines of the base scene are numbered in the comments; each case changes one piece of text and
// expects the error at a given line with a given "path: message".
const char* const kBase = R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="everyXTimeStep" statesPerSecond="100"/>
    <TimeStepperSettings deltaT="0.001" endTime="1">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" maxIter="100" absTol="1e-7" relTol="1e-7"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0.5" epsilonT="0"/>
      <ContactParameter materialId1="1" materialId2="2" type="UCF" mu="0.5" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces>
      <ForceField applyTo="all" type="gravity" value="9.81" direction="0 0 -1"/>
    </ExternalForces>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="beads" instances="4" groupId="0">
      <Geometry>
        <Sphere distribute="uniform" radius="0.01"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="homogen" density="2500"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="1"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="2" gridSizeY="2" distance="0.03"
              translation="0 0 0.1" jitter="false" delta="0"/>
          <InitialVelocity distribute="transrot">
            <Vel transDir="1 0 0" absTransVel="1" rotDir="0 0 1" absRotVel="2"/>
          </InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
    <RigidBodies name="floor" instances="1" groupId="1">
      <Geometry>
        <Halfspace distribute="uniform" normal="0 0 1"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="static"/>
        <Material distribute="uniform" id="2"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms">
            <Pos><Trafo trans="0 0 0" axis="1 0 0" deg="0"/></Pos>
          </InitialPosition>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
  </SceneObjects>
</DynamicsSystem>
)";

TEST(SceneErrors, BaseSceneLoads) {
  TempDir dir;
  test::writeText(dir / "scene.xml", kBase);
  const SceneDescription d = loadScene(dir / "scene.xml");
  EXPECT_EQ(d.system.bodies.size(), 5u);
  EXPECT_EQ(d.recorder.everyXStep, 10u);  // floor(1 / (100 * 0.001))
  EXPECT_TRUE(d.ignored.empty());
  EXPECT_EQ(test::lineOf(kBase, "radius=\"0.01\""), 20u);  // the numbering the cases rely on
  EXPECT_EQ(test::lineOf(kBase, "alphaSORProx"), 7u);
  EXPECT_EQ(test::lineOf(kBase, "<Trafo"), 45u);
}

// DynamicState@type takes BodyMotion's names (kBodyMotionNames): "not simulated" is the format's
// other spelling of static.
TEST(SceneBodies, NotSimulatedIsStatic) {
  std::string text = kBase;
  const std::string from = "<DynamicState type=\"static\"/>";
  text.replace(text.find(from), from.size(), "<DynamicState type=\"not simulated\"/>");
  TempDir dir;
  test::writeText(dir / "scene.xml", text);
  const SceneDescription d = loadScene(dir / "scene.xml");
  ASSERT_EQ(d.groups.size(), 2u);
  EXPECT_EQ(d.groups[0].motion, BodyMotion::Simulated);
  EXPECT_EQ(d.groups[1].motion, BodyMotion::Static);
  EXPECT_EQ(d.system.bodies.simulatedCount(), 4u);
  EXPECT_TRUE(d.ignored.empty());
}

struct BadCase {
  const char* name;
  const char* from;
  const char* to;
  std::size_t line;
  const char* expected;  // "path: message" after "file:line: "
};

class BadScene : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadScene, ReportsFileLineAndAttribute) {
  const BadCase& c = GetParam();
  TempDir dir;
  const auto file = dir / "scene.xml";
  test::writeText(file, test::replaceOnce(kBase, c.from, c.to));
  try {
    loadScene(file);
    FAIL() << "expected SceneError for " << c.name;
  } catch (const SceneError& e) {
    EXPECT_EQ(std::string(e.what()),
              file.string() + ":" + std::to_string(c.line) + ": " + std::string(c.expected));
    EXPECT_EQ(e.line(), c.line);
    EXPECT_EQ(e.file(), file.string());
  }
}

// clang-format off
const BadCase kBadCases[] = {
  {"NegativeRadius", "radius=\"0.01\"", "radius=\"-1\"", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Sphere: attribute 'radius' must be > 0 (got -1)"},
  {"MissingRequiredAttribute", " maxIter=\"100\"", "", 6,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: missing required attribute 'maxIter'"},
  {"UnknownAttribute", "radius=\"0.01\"", "radius=\"0.01\" color=\"red\"", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Sphere: attribute 'color' is not part of the format (allowed: distribute, radius)"},
  {"UnknownElement", "radius=\"0.01\"/>", "radius=\"0.01\"/><Foo/>", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Foo: element 'Foo' is not part of the format here (allowed: Sphere, Box, Capsule, Halfspace, Mesh, GlobalGeomId)"},
  {"ZeroDeltaT", "deltaT=\"0.001\"", "deltaT=\"0\"", 5,
   "SceneSettings/TimeStepperSettings: attribute 'deltaT' must be > 0 (got 0)"},
  {"ZeroNormal", "normal=\"0 0 1\"", "normal=\"0 0 0\"", 38,
   "SceneObjects/RigidBodies[name=\"floor\"]/Geometry/Halfspace: attribute 'normal' must be a non-zero vector (got 0 0 0)"},
  {"ZeroGravityDirection", "direction=\"0 0 -1\"", "direction=\"0 0 0\"", 14,
   "SceneSettings/ExternalForces/ForceField[1]: attribute 'direction' must be a non-zero vector (got 0 0 0)"},
  {"NegativeMu", "type=\"UCF\" mu=\"0.5\"", "type=\"UCF\" mu=\"-0.1\"", 11,
   "SceneSettings/ContactParameterMap/ContactParameter[1]: attribute 'mu' must be >= 0 (got -0.1)"},
  {"EpsilonAboveOne", "epsilonN=\"0.5\"", "epsilonN=\"1.5\"", 10,
   "SceneSettings/ContactParameterMap/ContactParameterStandard: attribute 'epsilonN' must be in [0, 1] (got 1.5)"},
  {"ZeroInstances", "instances=\"4\"", "instances=\"0\"", 18,
   "SceneObjects/RigidBodies[name=\"beads\"]: attribute 'instances' must be >= 1 (got 0)"},
  {"NegativeInstances", "instances=\"4\"", "instances=\"-4\"", 18,
   "SceneObjects/RigidBodies[name=\"beads\"]: attribute 'instances' must be a non-negative integer (got '-4')"},
  {"UnknownEnumValue", "method=\"SORContact\"", "method=\"Gauss\"", 6,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: attribute 'method' has unknown value 'Gauss' (expected one of: SOR, SORContact, SORFull, SORNormalTangential, JOR, DelassusSOR, DelassusJOR, APGD, PQN, IPM, NSN, NSNProx)"},
  {"NonNumericOnContinuationLine", "alphaSORProx=\"1.2\"", "alphaSORProx=\"fast\"", 7,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: attribute 'alphaSORProx' must be a number (got 'fast')"},
  {"AlphaOutOfRange", "alphaSORProx=\"1.2\"", "alphaSORProx=\"2.5\"", 7,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: attribute 'alphaSORProx' must be in (0, 2) (got 2.5)"},
  {"NegativeMass", "<Mass distribute=\"homogen\" density=\"2500\"/>", "<Mass distribute=\"uniform\" value=\"-2\"/>", 24,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/Mass: attribute 'value' must be > 0 (got -2)"},
  {"NegativeDensity", "density=\"2500\"", "density=\"-2500\"", 24,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/Mass: attribute 'density' must be > 0 (got -2500)"},
  {"UnknownMassDistribution", "<Mass distribute=\"homogen\"", "<Mass distribute=\"random\"", 24,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/Mass: attribute 'distribute' has unknown value 'random' (expected one of: uniform, homogen)"},
  {"MalformedXml", "</Geometry>", "</Geometri>", 21,
   "malformed XML: Start-end tags mismatch"},
  {"UnsupportedElement", "<InclusionSolverSettings", "<SimulateFromReference enabled=\"true\"/><InclusionSolverSettings", 6,
   "SceneSettings/TimeStepperSettings/SimulateFromReference: <SimulateFromReference enabled=\"true\"> is not supported yet"},
  {"UnsupportedVariant", "<InitialCondition type=\"posvel\">\n          <InitialPosition distribute=\"grid\"", "<InitialCondition type=\"file\">\n          <InitialPosition distribute=\"grid\"", 27,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/InitialCondition: <InitialCondition type=\"file\"> is not supported yet"},
  {"UnsupportedEnumValue", "method=\"SORContact\"", "method=\"SORContact\" matrixRStrategy=\"sum2\"", 6,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: value 'sum2' of attribute 'matrixRStrategy' is not supported yet"},
  {"BadBoolean", "jitter=\"false\"", "jitter=\"maybe\"", 29,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/InitialCondition/InitialPosition: attribute 'jitter' must be true, false, 1 or 0 (got 'maybe')"},
  {"ShortVector", "translation=\"0 0 0.1\"", "translation=\"0 0\"", 29,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/InitialCondition/InitialPosition: attribute 'translation' must be three numbers (got '0 0')"},
  {"MissingMaterial", "<Material distribute=\"uniform\" id=\"2\"/>", "", 40,
   "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties: missing required element 'Material'"},
  {"SimulatedWithoutMass", "<Mass distribute=\"homogen\" density=\"2500\"/>", "", 22,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties: missing required element 'Mass' (simulated bodies need a mass)"},
  {"UnknownIpmPreconditioner", "method=\"SORContact\"", "method=\"IPM\" matrixFree=\"true\" ipmPreconditioner=\"schwarz\"", 6,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: attribute 'ipmPreconditioner' has unknown value 'schwarz' (expected one of: blockJacobi, additiveSchwarz)"},
  {"MatrixFreeWithoutApgdOrPqn", "method=\"SORContact\"", "method=\"NSN\" matrixFree=\"true\"", 6,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: matrixFree=\"true\" is supported by methods APGD, PQN and IPM only (got method \"NSN\")"},
  // Attributes described by their settings structs: the messages the hand-written rows and
  // checks gave.
  {"ZeroStatesPerSecond", " statesPerSecond=\"100\"", " statesPerSecond=\"0\"", 4,
   "SceneSettings/RecorderSettings: attribute 'statesPerSecond' must be > 0 (got 0)"},
  {"ExponentBelowOne", "<TimeStepperSettings", "<ContactForceOutput everyXStep=\"1\" exponent=\"0.5\"/><TimeStepperSettings", 5,
   "SceneSettings/ContactForceOutput: attribute 'exponent' must be >= 1 (got 0.5)"},
  {"NegativeGravity", "value=\"9.81\"", "value=\"-9.81\"", 14,
   "SceneSettings/ExternalForces/ForceField[1]: attribute 'value' must be >= 0 (got -9.81)"},
  {"PulseWithoutBoost", "direction=\"0 0 -1\"/>", "direction=\"0 0 -1\"/><ForceField type=\"spatialspherical-timerandom\" seed=\"1\" boostTime=\"0\" pauseTime=\"1\" amplitude=\"1\" randomOn=\"false\" minPoint=\"0 0 0\" maxPoint=\"1 1 1\" startTime=\"0\" endTime=\"1\"/>", 14,
   "SceneSettings/ExternalForces/ForceField[2]: attribute 'boostTime' must be > 0 (got 0)"},
  {"PulseEndsBeforeStart", "direction=\"0 0 -1\"/>", "direction=\"0 0 -1\"/><ForceField type=\"spatialspherical-timerandom\" seed=\"1\" boostTime=\"1\" pauseTime=\"1\" amplitude=\"1\" randomOn=\"false\" minPoint=\"0 0 0\" maxPoint=\"1 1 1\" startTime=\"2\" endTime=\"1\"/>", 14,
   "SceneSettings/ExternalForces/ForceField[2]: attribute 'endTime' must be >= startTime (got 1 < 2)"},
  {"PulseBoxInverted", "direction=\"0 0 -1\"/>", "direction=\"0 0 -1\"/><ForceField type=\"spatialspherical-timerandom\" seed=\"1\" boostTime=\"1\" pauseTime=\"1\" amplitude=\"1\" randomOn=\"false\" minPoint=\"0 0 1\" maxPoint=\"1 1 0\" startTime=\"0\" endTime=\"1\"/>", 14,
   "SceneSettings/ExternalForces/ForceField[2]: attribute 'maxPoint' must be >= minPoint in every component (got 1 1 0 < 0 0 1)"},
  {"PredefinedBoxEmpty", "</ExternalForces>", "</ExternalForces><MPISettings><ProcessTopology mode=\"static\"><Topology type=\"kdTree\" buildMode=\"predefined\" aligned=\"true\" minPoint=\"0 0 0\" maxPoint=\"1 0 1\" minCellSize=\"1\"/></ProcessTopology><InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/></MPISettings>", 15,
   "SceneSettings/MPISettings/ProcessTopology/Topology: attribute 'maxPoint' must be > minPoint in every component (got 1 0 1 <= 0 0 0)"},
  {"ZeroMassPoints", "</ExternalForces>", "</ExternalForces><MPISettings><ProcessTopology mode=\"static\"><Topology type=\"kdTree\" minCellSize=\"1\"/><MassPointPrediction nPoints=\"0\"/></ProcessTopology><InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/></MPISettings>", 15,
   "SceneSettings/MPISettings/ProcessTopology/MassPointPrediction: attribute 'nPoints' must be >= 1 (got 0)"},
  {"MinIterAboveMaxIter", "maxIter=\"100\"", "maxIter=\"100\" minIter=\"200\"", 7,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: attribute 'minIter' must be <= maxIter (got 200 > 100)"},
  {"SimulatedHalfspace", "<DynamicState type=\"static\"/>", "<DynamicState type=\"simulated\"/>", 38,
   "SceneObjects/RigidBodies[name=\"floor\"]/Geometry/Halfspace: a Halfspace body must be static or animated (simulated bodies need a Sphere, Box or Capsule)"},
  {"UnknownRecorderMode", "mode=\"everyXTimeStep\"", "mode=\"sometimes\"", 4,
   "SceneSettings/RecorderSettings: attribute 'mode' has unknown value 'sometimes' (expected one of: everyTimeStep, everyXTimeStep, noOutput)"},
  {"EveryXWithoutRate", " statesPerSecond=\"100\"", "", 4,
   "SceneSettings/RecorderSettings: mode=\"everyXTimeStep\" needs attribute 'everyXStep' or 'statesPerSecond'"},
  {"DuplicateContactPair", "epsilonN=\"0\" epsilonT=\"0\"/>", "epsilonN=\"0\" epsilonT=\"0\"/><ContactParameter materialId1=\"2\" materialId2=\"1\" type=\"UCF\" mu=\"1\" epsilonN=\"0\" epsilonT=\"0\"/>", 11,
   "SceneSettings/ContactParameterMap/ContactParameter[2]: contact parameters of materials (2, 1) are already given on line 11"},
  {"DegAndRad", "deg=\"0\"", "deg=\"0\" rad=\"0\"", 45,
   "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties/InitialCondition/InitialPosition/Pos[1]/Trafo[1]: give either attribute 'deg' or attribute 'rad', not both"},
  {"TrafoWithoutAngle", " deg=\"0\"", "", 45,
   "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties/InitialCondition/InitialPosition/Pos[1]/Trafo[1]: missing required attribute 'deg' or 'rad'"},
  {"ZeroVelocityDirection", "transDir=\"1 0 0\"", "transDir=\"0 0 0\"", 31,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/InitialCondition/InitialVelocity/Vel[1]: attribute 'transDir' must be a non-zero vector (got 0 0 0)"},
  {"TextContent", "<Geometry>", "<Geometry>junk", 19,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry: unexpected text 'junk' inside <Geometry>"},
  {"UcfdWithoutDampings", "materialId2=\"2\" type=\"UCF\"", "materialId2=\"2\" type=\"UCFD\"", 11,
   "SceneSettings/ContactParameterMap/ContactParameter[1]: missing required attribute 'invDampingN'"},
  {"DriftCorrectionWithoutAlpha", "useGPU=\"false\"", "useGPU=\"false\" driftCorrectionGap=\"true\"", 6,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: missing required attribute 'driftCorrectionGapAlpha' (required when driftCorrectionGap is true)"},
  {"TwoGeometries", "radius=\"0.01\"/>", "radius=\"0.01\"/><Box distribute=\"uniform\" extent=\"1 1 1\"/>", 19,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry: <Geometry> needs exactly one of Sphere, Box, Capsule, Halfspace, Mesh, GlobalGeomId (got 2)"},
  {"BoxExtentZero", "<Sphere distribute=\"uniform\" radius=\"0.01\"/>", "<Box distribute=\"uniform\" extent=\"1 0 1\"/>", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Box: attribute 'extent' must be positive in every component (got 1 0 1)"},
  {"OffCentreBoxWithHomogeneousMass", "<Sphere distribute=\"uniform\" radius=\"0.01\"/>", "<Box distribute=\"uniform\" extent=\"1 1 1\" center=\"0 0 1\"/>", 24,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/Mass: a simulated box must be centred at its body origin (center = 0 0 0)"},
  {"UnknownRootChild", "<DynamicsSystem xmlns=\"SceneFile\">", "<DynamicsSystem xmlns=\"SceneFile\"><Scene/>", 2,
   "Scene: element 'Scene' is not part of the format here (allowed: SceneSettings, SceneObjects)"},
  {"AnimatedWithoutVectors", "<DynamicState type=\"static\"/>", "<DynamicState type=\"animated\" velocity=\"1 0\"/>", 41,
   "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties/DynamicState: attribute 'velocity' must be three numbers (got '1 0')"},
  {"VelocityOnStaticState", "<DynamicState type=\"static\"/>", "<DynamicState type=\"static\" velocity=\"1 0 0\"/>", 41,
   "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties/DynamicState: attribute 'velocity' is not allowed with type=\"static\" (it belongs to type=\"animated\") (allowed: type)"},
  {"SecondSceneSettings", "<SceneObjects>", "<SceneSettings/><SceneObjects>", 17,
   "SceneSettings[2]: element 'SceneSettings' may appear at most 1 time(s) in <DynamicsSystem>"},
  {"MeshOnSimulatedBody", "<Sphere distribute=\"uniform\" radius=\"0.01\"/>", "<Mesh distribute=\"uniform\" file=\"x.obj\"/>", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Mesh: a Mesh body must be static or animated (simulated bodies need a Sphere, Box or Capsule)"},
  {"AttributeSuggestion", "radius=\"0.01\"", "radus=\"0.01\"", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Sphere: attribute 'radus' is not part of the format; did you mean 'radius'? (allowed: distribute, radius)"},
  {"ElementSuggestion", "<Sphere distribute", "<Sphre distribute", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Sphre: element 'Sphre' is not part of the format here; did you mean 'Sphere'? (allowed: Sphere, Box, Capsule, Halfspace, Mesh, GlobalGeomId)"},
  {"ElementInWrongParent", "radius=\"0.01\"/>", "radius=\"0.01\"/><Mass distribute=\"uniform\" value=\"1\"/>", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Mass: element 'Mass' is not allowed in <Geometry> (it belongs in <DynamicProperties>) (allowed: Sphere, Box, Capsule, Halfspace, Mesh, GlobalGeomId)"},
  {"ValueSuggestion", "method=\"SORContact\"", "method=\"SORContakt\"", 6,
   "SceneSettings/TimeStepperSettings/InclusionSolverSettings: attribute 'method' has unknown value 'SORContakt'; did you mean 'SORContact'? (expected one of: SOR, SORContact, SORFull, SORNormalTangential, JOR, DelassusSOR, DelassusJOR, APGD, PQN, IPM, NSN, NSNProx)"},
  {"VariantSuggestion", "<Mass distribute=\"homogen\"", "<Mass distribute=\"homogeneous\"", 24,
   "SceneObjects/RigidBodies[name=\"beads\"]/DynamicProperties/Mass: attribute 'distribute' has unknown value 'homogeneous'; did you mean 'homogen'? (expected one of: uniform, homogen)"},
  {"Placeholder", "radius=\"0.01\"", "radius=\"${Study:radius}\"", 20,
   "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Sphere: attribute 'radius' contains the unfilled placeholder '${Study:radius}' (replace it in the file or with grain-sim --set)"},
  {"IgnoredAttributeIsStillChecked", "type=\"UCF\" mu=\"0.5\"", "type=\"UCF\" invDampingN=\"fast\" mu=\"0.5\"", 11,
   "SceneSettings/ContactParameterMap/ContactParameter[1]: attribute 'invDampingN' must be a number (got 'fast')"},
  {"CheckedBeforeBodiesAreBuilt", "<Pos><Trafo", "<Pos><Trafo zoom=\"2\"", 45,
   "SceneObjects/RigidBodies[name=\"floor\"]/DynamicProperties/InitialCondition/InitialPosition/Pos[1]/Trafo[1]: attribute 'zoom' is not part of the format (allowed: trans, axis, deg, rad)"},
  {"MpiSolverRequired", "</ExternalForces>", "</ExternalForces><MPISettings><ProcessTopology mode=\"static\"><Topology type=\"kdTree\" minCellSize=\"1\"/></ProcessTopology></MPISettings>", 15,
   "SceneSettings/MPISettings: missing required element 'InclusionSolverSettings'"},
  {"PredefinedTopologyNeedsBox", "</ExternalForces>", "</ExternalForces><MPISettings><ProcessTopology mode=\"dynamic\" policy=\"bodyLimit\"><Topology type=\"grid\" dimension=\"2 2 1\" buildMode=\"predefined\" aligned=\"true\" minPoint=\"0 0 0\" minCellSize=\"1\"/></ProcessTopology><InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/></MPISettings>", 15,
   "SceneSettings/MPISettings/ProcessTopology/Topology: missing required attribute 'maxPoint' (required with buildMode=\"predefined\")"},
  {"BodyWeightUnknown", "</ExternalForces>", "</ExternalForces><MPISettings><ProcessTopology mode=\"dynamic\" policy=\"alwaysRebuild\" bodyWeight=\"fast\"><Topology type=\"kdTree\" minCellSize=\"1\"/></ProcessTopology><InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/></MPISettings>", 15,
   "SceneSettings/MPISettings/ProcessTopology: attribute 'bodyWeight' has unknown value 'fast' (expected one of: count, time)"},
  {"GridDimensionZero", "</ExternalForces>", "</ExternalForces><MPISettings><ProcessTopology mode=\"static\"><Topology type=\"grid\" dimension=\"2 0 1\" minCellSize=\"1\"/></ProcessTopology><InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/></MPISettings>", 15,
   "SceneSettings/MPISettings/ProcessTopology/Topology: attribute 'dimension' must be >= 1 in every component (got 2 0 1)"},
  {"DynamicTopologyNeedsPolicy", "</ExternalForces>", "</ExternalForces><MPISettings><ProcessTopology mode=\"dynamic\"><Topology type=\"kdTree\" minCellSize=\"1\"/></ProcessTopology><InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/></MPISettings>", 15,
   "SceneSettings/MPISettings/ProcessTopology: missing required attribute 'policy'"},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Table, BadScene, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& param) {
                           return std::string(param.param.name);
                         });

TEST(SceneErrors, MissingFileNamesTheFile) {
  try {
    loadScene("/nonexistent/dir/scene.xml");
    FAIL();
  } catch (const SceneError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/dir/scene.xml: cannot open the scene file");
  }
}

TEST(SceneErrors, MissingMeshFileNamesTheResolvedPath) {
  TempDir dir;
  const std::string text =
      test::replaceOnce(kBase, "<Halfspace distribute=\"uniform\" normal=\"0 0 1\"/>",
                        "<Mesh distribute=\"uniform\" file=\"missing.obj\"/>");
  test::writeText(dir / "scene.xml", text);
  try {
    loadScene(dir / "scene.xml");
    FAIL();
  } catch (const SceneError& e) {
    EXPECT_EQ(e.line(), 38u);
    const std::string what = e.what();
    if (meshSupportAvailable()) {
      EXPECT_NE(what.find("mesh file 'missing.obj' not found (looked for '" +
                          (dir.path() / "missing.obj").string() + "')"),
                std::string::npos)
          << what;
    } else {
      EXPECT_NE(what.find("this build of grain has no Assimp"), std::string::npos) << what;
    }
  }
}

TEST(SceneWarnings, UseGpuWarnsAndSolvesOnCpu) {
  TempDir dir;
  test::writeText(dir / "scene.xml",
                  test::replaceOnce(kBase, "useGPU=\"false\"", "useGPU=\"true\" useGPUID=\"2\""));
  const SceneDescription d = loadScene(dir / "scene.xml");
  EXPECT_TRUE(d.solverExtras.useGpu);
  EXPECT_EQ(d.solverExtras.gpuDevice, 2u);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(
      d.warnings[0].rfind((dir / "scene.xml").string() + ":6: SceneSettings/TimeStepperSettings/"
                                                         "InclusionSolverSettings: useGPU=\"true\"",
                          0),
      0u)
      << d.warnings[0];
}

TEST(SceneWarnings, VelocityConvergenceMethodWithLocalSolverWarns) {
  TempDir dir;
  test::writeText(dir / "scene.xml",
                  test::replaceOnce(kBase, "method=\"SORContact\"",
                                    "method=\"PQN\" convergenceMethod=\"InLambda\""));
  const SceneDescription d = loadScene(dir / "scene.xml");
  ASSERT_TRUE(d.stepper.solver.localMethod.has_value());
  EXPECT_EQ(*d.stepper.solver.localMethod, LocalSolverMethod::Pqn);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("convergenceMethod=\"InLambda\" does not apply to the local solver "
                               "PQN: it stops on the NaturalMap error <= relTol"),
            std::string::npos)
      << d.warnings[0];
  // Without an explicit convergenceMethod there is nothing to warn about.
  test::writeText(dir / "plain.xml",
                  test::replaceOnce(kBase, "method=\"SORContact\"", "method=\"DelassusJOR\""));
  const SceneDescription plain = loadScene(dir / "plain.xml");
  EXPECT_TRUE(plain.warnings.empty());
  EXPECT_EQ(*plain.stepper.solver.localMethod, LocalSolverMethod::JorProx);
}

TEST(SceneSolver, MatrixFreeApgd) {
  TempDir dir;
  test::writeText(dir / "scene.xml", test::replaceOnce(kBase, "method=\"SORContact\"",
                                                       "method=\"APGD\" matrixFree=\"true\""));
  const SceneDescription d = loadScene(dir / "scene.xml");
  EXPECT_EQ(d.stepper.solver.localMethod, LocalSolverMethod::Apgd);
  EXPECT_TRUE(d.stepper.solver.matrixFree);
}

TEST(SceneSolver, MatrixFreePqn) {
  TempDir dir;
  test::writeText(dir / "scene.xml", test::replaceOnce(kBase, "method=\"SORContact\"",
                                                       "method=\"PQN\" matrixFree=\"true\""));
  const SceneDescription d = loadScene(dir / "scene.xml");
  EXPECT_EQ(d.stepper.solver.localMethod, LocalSolverMethod::Pqn);
  EXPECT_TRUE(d.stepper.solver.matrixFree);
}

// ipmPreconditioner selects the matrix-free IPM's PCG preconditioner; given with another method
// it has no effect and the reader says so.
TEST(SceneSolver, MatrixFreeIpmPreconditioner) {
  TempDir dir;
  test::writeText(dir / "scene.xml", test::replaceOnce(kBase, "method=\"SORContact\"",
                                                       "method=\"IPM\" matrixFree=\"true\" "
                                                       "ipmPreconditioner=\"additiveSchwarz\""));
  const SceneDescription d = loadScene(dir / "scene.xml");
  EXPECT_EQ(d.stepper.solver.localMethod, LocalSolverMethod::Ipm);
  EXPECT_TRUE(d.stepper.solver.matrixFree);
  EXPECT_EQ(d.stepper.solver.ipmPreconditioner, IpmPreconditioner::AdditiveSchwarz);
  EXPECT_TRUE(d.warnings.empty());
  test::writeText(dir / "jacobi.xml", test::replaceOnce(kBase, "method=\"SORContact\"",
                                                        "method=\"IPM\" matrixFree=\"true\" "
                                                        "ipmPreconditioner=\"blockJacobi\""));
  EXPECT_EQ(loadScene(dir / "jacobi.xml").stepper.solver.ipmPreconditioner,
            IpmPreconditioner::BlockJacobi);
  for (const char* method : {"method=\"IPM\"", "method=\"APGD\" matrixFree=\"true\""}) {
    test::writeText(
        dir / "other.xml",
        test::replaceOnce(kBase, "method=\"SORContact\"",
                          std::string(method) + " ipmPreconditioner=\"additiveSchwarz\""));
    const SceneDescription other = loadScene(dir / "other.xml");
    ASSERT_EQ(other.warnings.size(), 1u) << method;
    EXPECT_NE(other.warnings[0].find("ipmPreconditioner=\"additiveSchwarz\" has no effect: it "
                                     "applies to method IPM with matrixFree=\"true\" only"),
              std::string::npos)
        << other.warnings[0];
  }
}

TEST(SceneDefaults, DefaultsMatchGrsf) {
  TempDir dir;
  std::string text = test::replaceOnce(kBase, "<ContactParameterMap>", "<!--");
  text = test::replaceOnce(text, "</ContactParameterMap>", "-->");
  text = test::replaceOnce(text, "groupId=\"0\"", "");
  text = test::replaceOnce(text, "groupId=\"1\"", "");
  test::writeText(dir / "scene.xml", text);
  const SceneDescription d = loadScene(dir / "scene.xml");
  const InclusionSolverSettings& s = d.stepper.solver;
  EXPECT_EQ(s.rStrategy, RStrategy::Max);
  EXPECT_EQ(s.subMethodUcf, UcfSubMethod::AlartCurnier);
  EXPECT_EQ(s.convergenceMethod, ConvergenceMethod::InVelocity);
  EXPECT_FALSE(s.localMethod.has_value());
  EXPECT_FALSE(s.matrixFree);
  EXPECT_EQ(s.ipmPreconditioner, IpmPreconditioner::BlockJacobi);
  EXPECT_EQ(s.minIter, 0u);
  EXPECT_EQ(s.reserveContacts, 1000u);
  EXPECT_FALSE(s.driftCorrectionGap);
  EXPECT_EQ(s.driftCorrectionGapAlpha, 0.2);
  EXPECT_EQ(s.driftCorrectionGapSlop, 0.0);
  const ContactParameter& p = d.system.contactParameters.standard();
  EXPECT_EQ(p.mu, 0.3);
  EXPECT_EQ(p.epsilonN, 0.5);
  EXPECT_EQ(p.epsilonT, 0.5);
  // First group without groupId gets 0, the next one 0 + 1.
  EXPECT_EQ(d.groups[0].groupId, 0u);
  EXPECT_EQ(d.groups[1].groupId, 1u);
}

TEST(SceneDefaults, GroupWithoutNameLoads) {
  // name is optional without default text: the group's name stays empty.
  TempDir dir;
  test::writeText(dir / "scene.xml", test::replaceOnce(kBase, "name=\"floor\" ", ""));
  const SceneDescription d = loadScene(dir / "scene.xml");
  ASSERT_EQ(d.groups.size(), 2u);
  EXPECT_EQ(d.groups[0].name, "beads");
  EXPECT_EQ(d.groups[1].name, "");
  EXPECT_EQ(d.groups[1].count, 1u);
  EXPECT_NE(d.effectiveXml.find("<RigidBodies instances=\"1\" groupId=\"1\""), std::string::npos);
  EXPECT_EQ(d.effectiveXml.find("name=\"\""), std::string::npos);  // no empty name filled in
}

TEST(SceneErrors, WrongRootElement) {
  TempDir dir;
  std::string text = test::replaceOnce(kBase, "<DynamicsSystem xmlns=\"SceneFile\">", "<Scene>");
  text = test::replaceOnce(text, "</DynamicsSystem>", "</Scene>");
  test::writeText(dir / "scene.xml", text);
  try {
    loadScene(dir / "scene.xml");
    FAIL();
  } catch (const SceneError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "scene.xml").string() +
                                         ":2: the root element must be <DynamicsSystem> (got "
                                         "<Scene>)");
  }
}

TEST(SceneNamespaces, RootWithoutDefaultNamespaceLoads) {
  TempDir dir;
  test::writeText(
      dir / "scene.xml",
      test::replaceOnce(kBase, "<DynamicsSystem xmlns=\"SceneFile\">", "<DynamicsSystem>"));
  EXPECT_EQ(loadScene(dir / "scene.xml").system.bodies.size(), 5u);
}

// ---- per-body random numbers ------------------------------------------------------------------

TEST(BodyRandom, IndependentOfOtherBodiesAndUnitLength) {
  // Drawing for body 5 directly gives the same numbers as after drawing bodies 0..4.
  for (std::uint64_t k = 0; k < 5; ++k) {
    BodyRandom r(4, k);
    (void)r.unitVector();
  }
  BodyRandom a(4, 5), b(4, 5);
  EXPECT_EQ(a.unitVector(), b.unitVector());
  BodyRandom c(4, 6), d(5, 5);
  const Vec3 v5 = BodyRandom(4, 5).unitVector();
  EXPECT_NE(c.unitVector(), v5);
  EXPECT_NE(d.unitVector(), v5);
  EXPECT_NEAR(v5.norm(), 1.0, 1e-15);
  // The stream is fixed: splitmix64(0) is the published first output of SplitMix64, and output
  // n of body k is splitmix64(state0 + n * golden) with state0 = splitmix64(splitmix64(seed) + k).
  EXPECT_EQ(BodyRandom::splitmix64(0), 0xE220A8397B1DCDAFull);
  const std::uint64_t state0 = BodyRandom::splitmix64(BodyRandom::splitmix64(4) + 5);
  BodyRandom e(4, 5);
  EXPECT_EQ(e.next(), BodyRandom::splitmix64(state0));
  EXPECT_EQ(e.next(), BodyRandom::splitmix64(state0 + 0x9E3779B97F4A7C15ull));
}

TEST(BodyRandom, UnitVectorsAreIsotropic) {
  // Mean of many unit vectors is ~0 and the second moments are ~1/3 each.
  Vec3 mean = Vec3::Zero();
  Vec3 second = Vec3::Zero();
  const int n = 20000;
  for (int k = 0; k < n; ++k) {
    const Vec3 v = BodyRandom(11, static_cast<std::uint64_t>(k)).unitVector();
    mean += v / n;
    second += v.cwiseProduct(v) / n;
  }
  EXPECT_LT(mean.norm(), 0.03);
  EXPECT_NEAR(second.x(), 1.0 / 3.0, 0.02);
  EXPECT_NEAR(second.y(), 1.0 / 3.0, 0.02);
  EXPECT_NEAR(second.z(), 1.0 / 3.0, 0.02);
}

}  // namespace
}  // namespace grain::io
