// SPDX-License-Identifier: MIT
// The parts of the scene format beyond the basics: random spheres, global geometries, selective
// loading, initial states from .sim files, radial push fields, animated bodies, the effective
// configuration.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/math/quaternion.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/radius_distribution.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/sim_file.hpp>
#include <grain/io/simulated_share.hpp>

#include "io_test_util.hpp"

namespace grain::io {
namespace {

using test::TempDir;

constexpr Real kPi = std::numbers::pi_v<Real>;

void expectVecNear(const Vec3& a, const Vec3& b, Real tol = 1e-12) {
  EXPECT_NEAR((a - b).norm(), 0.0, tol)
      << "got " << a.transpose() << ", expected " << b.transpose();
}

/// A scene with the given extra SceneSettings content (after ExternalForces) and bodies.
std::string scene(const std::string& settings, const std::string& bodies,
                  const std::string& gravity = "9.81", const std::string& endTime = "1") {
  return R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="noOutput"/>
    <TimeStepperSettings deltaT="0.01" endTime=")" +
         endTime + R"(">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" maxIter="500" absTol="1e-12" relTol="1e-12"/>
    </TimeStepperSettings>
    <ExternalForces>
      <ForceField applyTo="all" type="gravity" value=")" +
         gravity + R"(" direction="0 0 -1"/>
    </ExternalForces>
)" + settings +
         R"(
  </SceneSettings>
  <SceneObjects>
)" + bodies +
         R"(
  </SceneObjects>
</DynamicsSystem>
)";
}

/// One <RigidBodies> group of simulated bodies on a line along x (spacing 1 m).
std::string bodies(const std::string& name, int instances, int groupId, const std::string& geometry,
                   const std::string& extra = "",
                   const std::string& state = "<DynamicState type=\"simulated\"/>",
                   const std::string& velocity = "") {
  std::ostringstream s;
  s << "    <RigidBodies name=\"" << name << "\" instances=\"" << instances << "\" groupId=\""
    << groupId << "\" " << extra << R"(>
      <Geometry>)"
    << geometry << R"(</Geometry>
      <DynamicProperties>
        )"
    << state << R"(
        <Mass distribute="homogen" density="1000"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="linear" position="0 0 1" direction="1 0 0" distance="1"
              jitter="false" delta="0"/>
          )"
    << velocity << R"(
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>)";
  return s.str();
}

SceneDescription load(const std::string& text) {
  return loadSceneFromString(text, "features.xml");
}

/// The error message (without file and line) of loading `text`, and its line.
std::pair<std::string, std::size_t> loadError(const std::string& text) {
  try {
    load(text);
  } catch (const SceneError& e) {
    return {e.path() + ": " + e.message(), e.line()};
  }
  ADD_FAILURE() << "expected a SceneError";
  return {};
}

Real radiusOf(const SceneDescription& d, std::size_t i) {
  const Shape& s = d.system.shapes[d.system.bodies.shapes()[i]];
  EXPECT_TRUE(std::holds_alternative<Sphere>(s));
  return std::holds_alternative<Sphere>(s) ? std::get<Sphere>(s).radius : 0.0;
}

// ---- random spheres ---------------------------------------------------------------------------

TEST(RandomSpheres, RadiusPerBodyIndexWithHomogeneousMass) {
  const SceneDescription d = load(scene(
      "",
      bodies(
          "beads", 50, 0,
          R"(<Sphere distribute="random" generator="uniform" seed="9" minRadius="0.01" maxRadius="0.02"/>)")));
  const RadiusDistribution dist = RadiusDistribution::uniform(0.01, 0.02);
  ASSERT_EQ(d.system.bodies.size(), 50u);
  EXPECT_TRUE(d.groups[0].shapePerBody);
  for (std::size_t k = 0; k < 50; ++k) {
    const Real r = radiusOf(d, k);
    EXPECT_EQ(r, dist.sample(9, k));
    const Real m = 1000.0 * 4.0 / 3.0 * kPi * r * r * r;
    EXPECT_NEAR(d.system.bodies.masses()[k], m, 1e-14 * m);
    expectVecNear(d.system.bodies.inertiasBody()[k], Vec3::Constant(0.4 * m * r * r), 1e-18);
  }
  EXPECT_NE(radiusOf(d, 0), radiusOf(d, 1));
}

TEST(RandomSpheres, TruncatedNormalUsesVarianceAsSigma) {
  const SceneDescription d = load(scene(
      "",
      bodies(
          "beads", 20, 0,
          R"(<Sphere distribute="random" generator="truncated-normal" seed="3" mean="1e-3" variance="2e-4" minRadius="0.8e-3" maxRadius="1.5e-3"/>)")));
  const RadiusDistribution dist = RadiusDistribution::truncatedNormal(1e-3, 2e-4, 0.8e-3, 1.5e-3);
  for (std::size_t k = 0; k < 20; ++k) {
    EXPECT_EQ(radiusOf(d, k), dist.sample(3, k));
  }
}

TEST(RandomSpheres, GeneratorAttributesAreChecked) {
  const auto withSphere = [](const std::string& sphere) {
    return scene("", bodies("beads", 2, 0, sphere));
  };
  const std::string path = "SceneObjects/RigidBodies[name=\"beads\"]/Geometry/Sphere: ";
  EXPECT_EQ(
      loadError(
          withSphere(R"(<Sphere distribute="random" generator="uniform" seed="1" minRadius="1"/>)"))
          .first,
      path + "missing required attribute 'maxRadius' (required with generator=\"uniform\")");
  EXPECT_EQ(
      loadError(
          withSphere(
              R"(<Sphere distribute="random" generator="uniform" seed="1" minRadius="1" maxRadius="2" mean="1"/>)"))
          .first,
      path +
          "attribute 'mean' is not used by generator=\"uniform\" (it needs minRadius, maxRadius)");
  EXPECT_EQ(
      loadError(
          withSphere(
              R"(<Sphere distribute="random" generator="uniform" seed="1" minRadius="2" maxRadius="1"/>)"))
          .first,
      path + "attribute 'maxRadius' must be >= minRadius (got 1 < 2)");
  EXPECT_EQ(
      loadError(
          withSphere(
              R"(<Sphere distribute="random" generator="piecewise-const" seed="1" intervals="1 2 3" densities="1"/>)"))
          .first,
      path + "attribute 'densities' needs one value per interval: 2 for 3 interval bounds (got 1)");
  EXPECT_EQ(
      loadError(
          withSphere(
              R"(<Sphere distribute="random" generator="piecewise-const" seed="1" intervals="1 3 2" densities="1 1"/>)"))
          .first,
      path + "attribute 'intervals' must be increasing (got 1 3 2)");
  EXPECT_EQ(
      loadError(
          withSphere(
              R"(<Sphere distribute="random" generator="piecewise-const" seed="1" intervals="1 2" densities="0"/>)"))
          .first,
      path + "densities must not all be 0");
  EXPECT_EQ(
      loadError(withSphere(R"(<Sphere distribute="random" generator="normal" seed="1"/>)")).first,
      path +
          "attribute 'generator' has unknown value 'normal' (expected one of: uniform, "
          "truncated-normal, piecewise-const)");
  EXPECT_EQ(
      loadError(withSphere(R"(<Sphere distribute="uniform" radius="1" minRadius="1"/>)")).first,
      path +
          "attribute 'minRadius' is not allowed with distribute=\"uniform\" (it belongs to "
          "distribute=\"random\") (allowed: distribute, radius)");
}

// ---- global geometries ------------------------------------------------------------------------

const char* const kGlobals = R"(
    <GlobalGeometries>
      <Box distribute="uniform" id="3" extent="0.1 0.2 0.3"/>
      <Sphere distribute="random" id="10" instances="5" generator="uniform" seed="4" minRadius="0.01" maxRadius="0.03"/>
      <Halfspace distribute="uniform" id="1" normal="0 0 1"/>
      <Sphere distribute="uniform" id="20" radius="0.5"/>
    </GlobalGeometries>)";

TEST(GlobalGeometries, UniformLinearAndRandomIds) {
  const SceneDescription d = load(
      scene(kGlobals,
            bodies("boxes", 2, 0, R"(<GlobalGeomId distribute="uniform" id="3"/>)") +
                bodies("line", 5, 1, R"(<GlobalGeomId distribute="linear" startId="10"/>)") +
                bodies("random", 40, 2,
                       R"(<GlobalGeomId distribute="random" startId="10" endId="14" seed="8"/>)") +
                bodies("big", 1, 3, R"(<GlobalGeomId distribute="uniform" id="20"/>)")));
  const BodyStorage& b = d.system.bodies;
  ASSERT_EQ(b.size(), 48u);
  // Boxes share the global box.
  EXPECT_EQ(d.globalGeomIdOfBody[0], 3u);
  EXPECT_EQ(b.shapes()[0], b.shapes()[1]);
  ASSERT_TRUE(std::holds_alternative<Box>(d.system.shapes[b.shapes()[0]]));
  EXPECT_DOUBLE_EQ(b.masses()[0], 1000.0 * 0.1 * 0.2 * 0.3);
  // Global random spheres: sphere j (id 10 + j) has the radius of index j for seed 4.
  const RadiusDistribution dist = RadiusDistribution::uniform(0.01, 0.03);
  for (std::uint32_t k = 0; k < 5; ++k) {
    EXPECT_EQ(d.globalGeomIdOfBody[2 + k], 10 + k);
    EXPECT_EQ(radiusOf(d, 2 + k), dist.sample(4, k));
  }
  // Random ids: the first output of the stream (8, k) modulo 5, plus 10.
  std::set<std::uint32_t> seen;
  for (std::uint32_t k = 0; k < 40; ++k) {
    BodyRandom rng(8, k);
    const std::uint32_t id = 10 + static_cast<std::uint32_t>(rng.next() % 5);
    EXPECT_EQ(d.globalGeomIdOfBody[7 + k], id);
    EXPECT_EQ(b.shapes()[7 + k], b.shapes()[2 + (id - 10)]);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(radiusOf(d, 47), 0.5);
}

TEST(GlobalGeometries, RandomSpheresAreMadeOnlyForTheBodiesThatUseThem) {
  // 10^6 random spheres defined, 3 bodies: the shape store holds the shapes of those 3 (and any
  // body reading a sphere gets the radius of its index), so memory follows the bodies built.
  const SceneDescription d =
      load(scene(R"(
    <GlobalGeometries>
      <Sphere distribute="random" id="100" instances="1000000" generator="uniform" seed="4" minRadius="0.01" maxRadius="0.03"/>
    </GlobalGeometries>)",
                 bodies("line", 3, 0, R"(<GlobalGeomId distribute="linear" startId="500000"/>)")));
  EXPECT_LE(d.system.shapes.size(), 3u);
  const RadiusDistribution dist = RadiusDistribution::uniform(0.01, 0.03);
  for (std::uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(d.globalGeomIdOfBody[k], 500000 + k);
    EXPECT_EQ(radiusOf(d, k), dist.sample(4, 500000 + k - 100));
  }
}

TEST(GlobalGeometries, Errors) {
  EXPECT_EQ(
      loadError(scene(kGlobals,
                      bodies("line", 6, 0, R"(<GlobalGeomId distribute="linear" startId="10"/>)")))
          .first,
      "SceneObjects/RigidBodies[name=\"line\"]/Geometry/GlobalGeomId: global geometry ids startId "
      ".. startId + instances - 1 = 10 .. 15 must be defined in GlobalGeometries; 15 is not");
  EXPECT_EQ(
      loadError(
          scene(kGlobals,
                bodies("r", 1, 0,
                       R"(<GlobalGeomId distribute="random" startId="12" endId="16" seed="1"/>)")))
          .first,
      "SceneObjects/RigidBodies[name=\"r\"]/Geometry/GlobalGeomId: global geometry ids startId .. "
      "endId = 12 .. 16 must be defined in GlobalGeometries; 15 is not");
  EXPECT_EQ(loadError(scene(kGlobals,
                            bodies("u", 1, 0, R"(<GlobalGeomId distribute="uniform" id="2"/>)")))
                .first,
            "SceneObjects/RigidBodies[name=\"u\"]/Geometry/GlobalGeomId: global geometry id 2 is "
            "not defined in GlobalGeometries");
  EXPECT_EQ(loadError(scene(kGlobals, bodies("floor", 1, 0,
                                             R"(<GlobalGeomId distribute="uniform" id="1"/>)")))
                .first,
            "SceneObjects/RigidBodies[name=\"floor\"]/Geometry/GlobalGeomId: a Halfspace (global "
            "geometry 1) body must be static or animated (simulated bodies need a Sphere, Box or "
            "Capsule)");
  EXPECT_EQ(
      loadError(
          scene(kGlobals,
                bodies("r", 1, 0,
                       R"(<GlobalGeomId distribute="random" startId="12" endId="11" seed="1"/>)")))
          .first,
      "SceneObjects/RigidBodies[name=\"r\"]/Geometry/GlobalGeomId: attribute 'endId' must be >= "
      "startId (got 11 < 12)");
  const std::string duplicate = scene(R"(
    <GlobalGeometries>
      <Box distribute="uniform" id="3" extent="1 1 1"/>
      <Sphere distribute="random" id="1" instances="3" generator="uniform" seed="4" minRadius="1" maxRadius="2"/>
    </GlobalGeometries>)",
                                      "");
  const auto [msg, line] = loadError(duplicate);
  EXPECT_EQ(
      msg,
      "SceneSettings/GlobalGeometries/Sphere[1]: global geometry id 3 is already used on line " +
          std::to_string(test::lineOf(duplicate, "<Box")));
  EXPECT_EQ(line, test::lineOf(duplicate, "instances=\"3\""));
  EXPECT_EQ(
      loadError(
          scene(
              R"(<GlobalGeometries><Box distribute="uniform" id="0" extent="1 1 1"/></GlobalGeometries>)",
              ""))
          .first,
      "SceneSettings/GlobalGeometries/Box[1]: attribute 'id' must be >= 1 (got 0)");
}

// ---- selective loading ------------------------------------------------------------------------

const char* const kRandomBead =
    R"(<Sphere distribute="random" generator="uniform" seed="2" minRadius="0.1" maxRadius="0.2"/>)";

TEST(SelectiveIds, SetLoadsOnlySelectedBodiesWithTheirFullSceneValues) {
  const std::string all = bodies("beads", 6, 0, kRandomBead, "enableSelectiveIds=\"true\"") +
                          bodies("others", 2, 1, kRandomBead);
  const SceneDescription full = load(scene("", all));
  const SceneDescription part = load(
      scene(R"(<GlobalSelectiveIds><Set value="0,1 0,4  1,0 0,9"/></GlobalSelectiveIds>)", all));
  // Group 0 is filtered; group 1 has no enableSelectiveIds and is loaded whole.
  const std::vector<BodyId> expected = {makeBodyId(0, 1), makeBodyId(0, 4), makeBodyId(1, 0),
                                        makeBodyId(1, 1)};
  EXPECT_EQ(part.system.bodies.ids(), expected);
  EXPECT_EQ(part.groups[0].loaded, 2u);
  EXPECT_EQ(part.groups[0].count, 6u);
  for (const BodyId id : expected) {
    const std::size_t i = *part.system.bodies.indexOf(id);
    const std::size_t j = *full.system.bodies.indexOf(id);
    EXPECT_EQ(radiusOf(part, i), radiusOf(full, j));
    EXPECT_EQ(part.system.bodies.positions()[i], full.system.bodies.positions()[j]);
    EXPECT_EQ(part.system.bodies.masses()[i], full.system.bodies.masses()[j]);
  }
}

TEST(SelectiveIds, RangeIsHalfOpen) {
  const SceneDescription d =
      load(scene(R"(<GlobalSelectiveIds><Range value="0,2 0,5"/></GlobalSelectiveIds>)",
                 bodies("beads", 8, 0, kRandomBead, "enableSelectiveIds=\"true\"")));
  EXPECT_EQ(d.system.bodies.ids(),
            (std::vector<BodyId>{makeBodyId(0, 2), makeBodyId(0, 3), makeBodyId(0, 4)}));
  ASSERT_TRUE(d.selectiveIds.has_value());
  EXPECT_TRUE(d.selectiveIds->contains(makeBodyId(0, 2)));
  EXPECT_FALSE(d.selectiveIds->contains(makeBodyId(0, 5)));
  EXPECT_EQ(
      loadError(scene(R"(<GlobalSelectiveIds><Range value="0,5 0,2"/></GlobalSelectiveIds>)", ""))
          .first,
      "SceneSettings/GlobalSelectiveIds/Range: attribute 'value' must give the first id before the "
      "second (got 0,5 0,2)");
  EXPECT_EQ(
      loadError(
          scene(
              R"(<GlobalSelectiveIds><Range value="0,1 0,2"/><Set value="0,1"/></GlobalSelectiveIds>)",
              ""))
          .first,
      "SceneSettings/GlobalSelectiveIds: <GlobalSelectiveIds> needs exactly one of Set, Range (got "
      "2)");
}

// ---- shares of a distributed run (SceneLoadOptions::simulatedShare) --------------------------

/// The bodies of the share tests: 1000 random beads with jitter (group 0), 3 static spheres
/// (group 5), 200 random beads that selective loading may select (group 1), 301 bodies of random
/// global geometries (group 2).
std::string shareBodies() {
  std::string all =
      bodies("beads", 1000, 0, kRandomBead) +
      bodies("fixed", 3, 5, R"(<Sphere distribute="uniform" radius="0.1"/>)", "",
             "<DynamicState type=\"static\"/>") +
      bodies("chosen", 200, 1, kRandomBead, "enableSelectiveIds=\"true\"") +
      bodies("globals", 301, 2,
             R"(<GlobalGeomId distribute="random" startId="10" endId="14" seed="8"/>)");
  const std::string still = R"(jitter="false" delta="0")";
  all.replace(all.find(still), still.size(), R"(jitter="true" delta="0.2" seed="3")");
  return all;
}

// Each of P processes builds the simulated bodies of one contiguous block of ordinals and visits
// only those indices (N/P, not N); together the shares are the serial scene bit for bit (random
// radii, random global geometries and jitter depend on the body's index alone); static bodies are
// on every process; `loaded` still counts the whole group (also with selective loading).
TEST(SimulatedShare, EachPartVisitsOnlyItsBlockAndTheSharesAreTheSerialScene) {
  const std::string all = shareBodies();
  // Selected bodies of group 1: a set (4 of them) or a range (110).
  for (const auto& [selection, selected] :
       {std::pair{R"(<Set value="1,3 1,150 0,7 1,15 1,199"/>)", 4u},
        std::pair{R"(<Range value="1,10 1,120"/>)", 110u}}) {
    const std::string text = scene(
        std::string(kGlobals) + "<GlobalSelectiveIds>" + selection + "</GlobalSelectiveIds>", all);
    const SceneDescription full = load(text);
    const std::uint64_t total = 1000 + 200 + 301;
    EXPECT_EQ(full.simulatedIndicesVisited, total);
    ASSERT_EQ(full.groups.size(), 4u);
    EXPECT_EQ(full.groups[2].loaded, selected);
    const SimulatedOrdinals ordinals(full.groups);
    EXPECT_EQ(ordinals.total(), total);
    EXPECT_EQ(ordinals.ordinalOf(makeBodyId(1, 0)), 1000u);
    EXPECT_EQ(ordinals.ordinalOf(makeBodyId(2, 300)), 1500u);
    EXPECT_FALSE(ordinals.ordinalOf(makeBodyId(5, 0)).has_value());  // static
    EXPECT_FALSE(ordinals.ordinalOf(makeBodyId(2, 301)).has_value());
    const BodyStorage& f = full.system.bodies;
    for (const int parts : {1, 2, 3, 7}) {
      std::set<BodyId> seen;
      for (int part = 0; part < parts; ++part) {
        SCOPED_TRACE("part " + std::to_string(part) + " of " + std::to_string(parts));
        SceneLoadOptions options;
        options.simulatedShare = std::pair{part, parts};
        const SceneDescription d = loadSceneFromString(text, "features.xml", options);
        const OrdinalRange range = shareOf(total, part, parts);
        EXPECT_EQ(d.simulatedIndicesVisited, range.size());
        EXPECT_LE(range.size(), (total + parts - 1) / parts);
        for (std::size_t g = 0; g < full.groups.size(); ++g) {
          EXPECT_EQ(d.groups[g].loaded, full.groups[g].loaded);
        }
        const BodyStorage& b = d.system.bodies;
        std::size_t statics = 0;
        for (std::size_t i = 0; i < b.size(); ++i) {
          const BodyId id = b.ids()[i];
          const std::size_t j = *f.indexOf(id);
          if (!b.isSimulated(i)) {
            ++statics;
            continue;
          }
          EXPECT_EQ(ordinals.shareOfBody(id, parts), part) << formatBodyId(id);
          EXPECT_TRUE(seen.insert(id).second) << formatBodyId(id);
          EXPECT_EQ(b.positions()[i], f.positions()[j]) << formatBodyId(id);
          EXPECT_EQ(b.orientations()[i].coeffs(), f.orientations()[j].coeffs());
          EXPECT_EQ(b.velocities()[i], f.velocities()[j]);
          EXPECT_EQ(b.masses()[i], f.masses()[j]);
          EXPECT_EQ(b.inertiasBody()[i], f.inertiasBody()[j]);
          EXPECT_EQ(b.boundingRadii()[i], f.boundingRadii()[j]) << formatBodyId(id);
          EXPECT_EQ(d.globalGeomIdOfBody[i], full.globalGeomIdOfBody[j]) << formatBodyId(id);
        }
        EXPECT_EQ(statics, 3u);
      }
      EXPECT_EQ(seen.size(), f.simulatedCount()) << parts << " parts";
    }
  }
  // The share of an ordinal is the block that holds it, for uneven splits too.
  for (const std::uint64_t n : {1u, 5u, 1501u}) {
    for (const int parts : {1, 2, 3, 7, 16}) {
      for (std::uint64_t o = 0; o < n; ++o) {
        const OrdinalRange r = shareOf(n, shareHolding(o, n, parts), parts);
        EXPECT_TRUE(o >= r.begin && o < r.end) << o << " of " << n << " in " << parts;
      }
    }
  }
}

// A list of ordinal ranges (SceneLoadOptions::simulatedOrdinals, as a distributed run builds the
// bodies of the records a process read) builds exactly the selected simulated bodies of those
// ordinals, bit for bit as the serial scene, and visits only those indices; an empty list builds no
// simulated body and still counts every group.
TEST(SimulatedShare, OrdinalRangesBuildExactlyTheirBodies) {
  const std::string all = shareBodies();
  const std::string text =
      scene(std::string(kGlobals) + R"(<GlobalSelectiveIds><Range value="1,10 1,120"/>)"
                                    "</GlobalSelectiveIds>",
            all);
  const SceneDescription full = load(text);
  const SimulatedOrdinals ordinals(full.groups);
  const BodyStorage& f = full.system.bodies;
  // Ranges inside a group, across group boundaries (999-1001, 1199-1201) and at the end.
  const std::vector<OrdinalRange> ranges{{0, 1},       {5, 17},      {999, 1001}, {1001, 1012},
                                         {1100, 1130}, {1199, 1201}, {1490, 1501}};
  SceneLoadOptions options;
  options.simulatedOrdinals = ranges;
  const SceneDescription d = loadSceneFromString(text, "features.xml", options);
  std::uint64_t visited = 0;
  std::set<std::uint64_t> expected;
  for (const OrdinalRange& r : ranges) {
    visited += r.size();
    for (std::uint64_t o = r.begin; o < r.end; ++o) {
      // Group 1 (ordinals 1000-1199) keeps only the selected numbers 10-119.
      if (o < 1000 || o >= 1200 || (o - 1000 >= 10 && o - 1000 < 120)) {
        expected.insert(o);
      }
    }
  }
  EXPECT_EQ(d.simulatedIndicesVisited, visited);
  for (std::size_t g = 0; g < full.groups.size(); ++g) {
    EXPECT_EQ(d.groups[g].loaded, full.groups[g].loaded);
  }
  const BodyStorage& b = d.system.bodies;
  std::set<std::uint64_t> built;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!b.isSimulated(i)) {
      continue;
    }
    const BodyId id = b.ids()[i];
    const std::size_t j = *f.indexOf(id);
    built.insert(*ordinals.ordinalOf(id));
    EXPECT_EQ(b.positions()[i], f.positions()[j]) << formatBodyId(id);
    EXPECT_EQ(b.orientations()[i].coeffs(), f.orientations()[j].coeffs());
    EXPECT_EQ(b.boundingRadii()[i], f.boundingRadii()[j]) << formatBodyId(id);
    EXPECT_EQ(b.masses()[i], f.masses()[j]);
    EXPECT_EQ(d.globalGeomIdOfBody[i], full.globalGeomIdOfBody[j]) << formatBodyId(id);
  }
  EXPECT_EQ(built, expected);
  options.simulatedOrdinals = std::vector<OrdinalRange>{};
  const SceneDescription none = loadSceneFromString(text, "features.xml", options);
  EXPECT_EQ(none.system.bodies.simulatedCount(), 0u);
  EXPECT_EQ(none.system.bodies.size(), 3u);  // the static ones
  EXPECT_EQ(none.simulatedIndicesVisited, 0u);
  for (std::size_t g = 0; g < full.groups.size(); ++g) {
    EXPECT_EQ(none.groups[g].loaded, full.groups[g].loaded);
  }
}

// ---- initial states from a .sim file ----------------------------------------------------------

/// Writes 3 states (t = 0, 0.1, 0.2) of bodies (0,0..n-1): state s puts body k at
/// (k, s, 0) with velocity (s, 0, 0) and omega (0, 0, s).
void writeStates(const std::filesystem::path& file, std::uint32_t n) {
  BodyStorage b;
  for (std::uint32_t k = 0; k < n; ++k) {
    BodyDef d;
    d.id = makeBodyId(0, k);
    d.mass = 1.0;
    d.inertiaBody = Vec3::Ones();
    b.add(d, 1.0);
  }
  SimFileWriter w;
  w.open(file);
  w.writeHeader(b);
  for (int s = 0; s < 3; ++s) {
    for (std::uint32_t k = 0; k < n; ++k) {
      b.positions()[k] = Vec3(k, s, 0.0);
      b.velocities()[k] = Vec3(s, 0.0, 0.0);
      b.omegasBody()[k] = Vec3(0.0, 0.0, s);
    }
    w.writeState(0.1 * s, b);
  }
}

std::string withInitialCondition(const std::filesystem::path& sim, const std::string& attrs,
                                 const std::string& endTime = "1") {
  return scene(
      "<GlobalInitialCondition file=\"" + sim.string() + "\" " + attrs + "/>",
      bodies(
          "beads", 3, 0, R"(<Sphere distribute="uniform" radius="0.1"/>)", "",
          "<DynamicState type=\"simulated\"/>",
          R"(<InitialVelocity distribute="transrot"><Vel transDir="0 1 0" absTransVel="7" rotDir="1 0 0" absRotVel="0"/></InitialVelocity>)"),
      "9.81", endTime);
}

TEST(GlobalInitialCondition, ChoosesTheStateAndContinuesTime) {
  TempDir dir;
  writeStates(dir / "s.sim", 3);
  {
    const SceneDescription d =
        load(withInitialCondition(dir / "s.sim", "whichState=\"beg\" useTimeToContinue=\"false\""));
    expectVecNear(d.system.bodies.positions()[2], Vec3(2, 0, 0));
    EXPECT_EQ(d.system.time, 0.0);
  }
  {
    const SceneDescription d =
        load(withInitialCondition(dir / "s.sim", "whichState=\"end\" useTimeToContinue=\"true\""));
    expectVecNear(d.system.bodies.positions()[1], Vec3(1, 2, 0));
    expectVecNear(d.system.bodies.velocities()[1], Vec3(2, 0, 0));  // readVelocities default true
    expectVecNear(d.system.bodies.omegasBody()[1], Vec3(0, 0, 2));
    EXPECT_EQ(d.system.time, 0.2);
    EXPECT_EQ(d.initialCondition->stateIndex, 2u);
  }
  {
    // First state with t >= 0.05 is state 1; velocities stay those of InitialVelocity.
    const SceneDescription d = load(withInitialCondition(
        dir / "s.sim",
        "whichState=\"time\" time=\"0.05\" useTimeToContinue=\"true\" readVelocities=\"false\""));
    expectVecNear(d.system.bodies.positions()[0], Vec3(0, 1, 0));
    expectVecNear(d.system.bodies.velocities()[0], Vec3(0, 7, 0));
    EXPECT_NEAR(d.system.time, 0.1, 1e-15);
  }
}

TEST(GlobalInitialCondition, Errors) {
  TempDir dir;
  writeStates(dir / "s.sim", 3);
  const std::string path = "SceneSettings/GlobalInitialCondition: ";
  EXPECT_EQ(loadError(withInitialCondition(dir / "s.sim",
                                           "whichState=\"time\" useTimeToContinue=\"false\""))
                .first,
            path + "missing required attribute 'time' (required with whichState=\"time\")");
  EXPECT_EQ(
      loadError(withInitialCondition(
                    dir / "s.sim", "whichState=\"time\" time=\"0.5\" useTimeToContinue=\"false\""))
          .first,
      path + "no state of '" + (dir / "s.sim").string() +
          "' has a time >= 0.5 s (the last is at 0.2 s)");
  EXPECT_EQ(loadError(withInitialCondition(dir / "none.sim",
                                           "whichState=\"end\" useTimeToContinue=\"false\""))
                .first,
            path + ".sim file '" + (dir / "none.sim").string() + "' not found (looked for '" +
                (dir / "none.sim").string() + "')");
  EXPECT_EQ(loadError(withInitialCondition(dir / "s.sim",
                                           "whichState=\"end\" useTimeToContinue=\"true\"", "0.1"))
                .first,
            "SceneSettings/TimeStepperSettings: attribute 'endTime' (0.1 s) is before the start "
            "time 0.2 s taken from GlobalInitialCondition");
  writeStates(dir / "two.sim", 2);
  EXPECT_EQ(loadError(withInitialCondition(dir / "two.sim",
                                           "whichState=\"beg\" useTimeToContinue=\"false\""))
                .first,
            path + "1 simulated body is missing from state 0 (t = 0 s) of '" +
                (dir / "two.sim").string() + "': (0,2)");
}

// ---- radial push field ------------------------------------------------------------------------

TEST(SphericalPulse, ReadAndAppliedAtTheStepMidpoint) {
  // Centre fixed at the origin (minPoint = maxPoint), push 2 N for 0.05 s every 0.1 s.
  std::string text =
      scene("", bodies("ball", 1, 0, R"(<Sphere distribute="uniform" radius="0.1"/>)"), "0");
  text = test::replaceOnce(
      text, "</ExternalForces>",
      R"(<ForceField applyTo="all" type="spatialspherical-timerandom" seed="3" boostTime="0.05" pauseTime="0.05" amplitude="2" randomOn="true" minPoint="0 0 1" maxPoint="0 0 1" startTime="0" endTime="1"/></ExternalForces>)");
  SceneDescription d = load(text);
  const auto& fields = d.system.externalForces.sphericalPulseFields();
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].seed, 3u);
  EXPECT_EQ(fields[0].amplitude, 2.0);
  EXPECT_TRUE(fields[0].randomOn);
  const Real m = d.system.bodies.masses()[0];
  // Ball at (0, 0, 1) = the centre: no direction, no force. Move it to x = 1.
  d.system.bodies.positions()[0] = Vec3(1, 0, 1);
  MoreauStepper stepper(d.stepper);
  for (int s = 0; s < 10; ++s) {
    stepper.step(d.system);
  }
  // Midpoints 0.005 .. 0.045 lie in the boost phase, 0.055 .. 0.095 in the pause: 5 pushes of
  // 2 N for 0.01 s along +x.
  expectVecNear(d.system.bodies.velocities()[0], Vec3(5 * 0.01 * 2.0 / m, 0, 0), 1e-12);

  EXPECT_EQ(loadError(test::replaceOnce(text, "maxPoint=\"0 0 1\"", "maxPoint=\"0 0 0\"")).first,
            "SceneSettings/ExternalForces/ForceField[2]: attribute 'maxPoint' must be >= minPoint "
            "in every component (got 0 0 0 < 0 0 1)");
}

TEST(SphericalPulse, CentresPerCycle) {
  SphericalPulseField f;
  f.seed = 11;
  f.boostTime = 0.2;
  f.pauseTime = 0.3;
  f.startTime = 1.0;
  f.endTime = 3.0;
  f.minPoint = Vec3(-1, -2, 0);
  f.maxPoint = Vec3(1, 2, 5);
  f.randomOn = true;
  EXPECT_FALSE(f.active(0.99));
  EXPECT_TRUE(f.active(1.0));
  EXPECT_TRUE(f.active(1.2));
  EXPECT_FALSE(f.active(1.3));
  EXPECT_TRUE(f.active(1.6));
  EXPECT_FALSE(f.active(3.1));
  expectVecNear(f.centre(1.1), f.minPoint);  // first cycle
  const Vec3 c1 = f.centre(1.6);
  const Vec3 c2 = f.centre(2.1);
  EXPECT_EQ(c1, f.centre(1.9));  // constant within a cycle
  EXPECT_NE(c1, c2);
  for (const Vec3& c : {c1, c2}) {
    EXPECT_TRUE((c.array() >= f.minPoint.array()).all() && (c.array() <= f.maxPoint.array()).all());
  }
  f.randomOn = false;
  expectVecNear(f.centre(2.1), f.minPoint);
}

// ---- animated bodies --------------------------------------------------------------------------

/// A 2 m x 2 m x 0.2 m floor plate (top face at z = 0) moving with `velocity` and a sphere of
/// radius 0.1 resting on it, friction 1, no restitution.
std::string beltScene(const std::string& velocity, const std::string& angular = "0 0 0") {
  const std::string settings = R"(
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="1" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>)";
  const std::string floor = R"(
    <RigidBodies name="belt" instances="1" groupId="1">
      <Geometry><Box distribute="uniform" extent="2 2 0.2"/></Geometry>
      <DynamicProperties>
        <DynamicState type="animated" velocity=")" +
                            velocity + R"(" angularVelocity=")" + angular + R"("/>
        <Mass distribute="uniform" value="5"/>
        <Material distribute="uniform" id="1"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms"><Pos><Trafo trans="0 0 -0.1" axis="0 0 1" deg="90"/></Pos></InitialPosition>
          <InitialVelocity distribute="transrot"><Vel transDir="0 1 0" absTransVel="3" rotDir="1 0 0" absRotVel="0"/></InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>)";
  std::string ball = bodies("ball", 1, 0, R"(<Sphere distribute="uniform" radius="0.1"/>)");
  ball = test::replaceOnce(ball, "position=\"0 0 1\"", "position=\"0 0 0.1\"");
  return scene(settings, floor + ball);
}

TEST(AnimatedBodies, PrescribedVelocityInTheInertialFrame) {
  const SceneDescription d = load(beltScene("0.2 0 0", "0 0 1.5"));
  const BodyStorage& b = d.system.bodies;
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b.motions()[0], BodyMotion::Animated);
  EXPECT_EQ(b.invMasses()[0], 0.0);
  expectVecNear(b.invInertiasBody()[0], Vec3::Zero());
  expectVecNear(b.velocities()[0], Vec3(0.2, 0, 0));  // InitialVelocity is ignored
  // The plate is turned by 90 degrees about z; omega_I = (0, 0, 1.5) is (0, 0, 1.5) in K too.
  expectVecNear(b.orientations()[0] * b.omegasBody()[0], Vec3(0, 0, 1.5));
  EXPECT_EQ(d.groups[0].motion, BodyMotion::Animated);
  expectVecNear(d.groups[0].animatedVelocity, Vec3(0.2, 0, 0));
  EXPECT_NE(std::find(d.ignored.begin(), d.ignored.end(),
                      "SceneObjects/RigidBodies[name=\"belt\"]/DynamicProperties/Mass"),
            d.ignored.end());
  EXPECT_NE(std::find(d.ignored.begin(), d.ignored.end(),
                      "SceneObjects/RigidBodies[name=\"belt\"]/DynamicProperties/"
                      "InitialCondition/InitialVelocity"),
            d.ignored.end());
}

TEST(AnimatedBodies, AxisInTheBodyFrameFollowsTheInitialOrientation) {
  // Plate turned by 90 deg about z; omega_I along x is along -y of the plate's frame.
  const SceneDescription d = load(beltScene("0 0 0", "2 0 0"));
  expectVecNear(d.system.bodies.omegasBody()[0], Vec3(0, -2, 0), 1e-15);
}

TEST(AnimatedBodies, MoveWithConstantVelocityAndTurnAboutAFixedAxis) {
  SceneDescription d = load(beltScene("0.2 -0.1 0.05", "0 0 1"));
  const Quat q0 = d.system.bodies.orientations()[0];
  const Vec3 r0 = d.system.bodies.positions()[0];
  MoreauStepper stepper(d.stepper);
  for (int s = 0; s < 100; ++s) {
    stepper.step(d.system);
  }
  const Real t = 1.0;
  expectVecNear(d.system.bodies.positions()[0], r0 + t * Vec3(0.2, -0.1, 0.05), 1e-13);
  const Quat expected = quat::fromAxisAngle(Vec3::UnitZ(), t) * q0;
  EXPECT_NEAR(d.system.bodies.orientations()[0].angularDistance(expected), 0.0, 1e-5);
  expectVecNear(d.system.bodies.velocities()[0], Vec3(0.2, -0.1, 0.05));
}

TEST(AnimatedBodies, ContinuedRunsStartAtThePoseOfTheStartTime) {
  TempDir dir;
  writeStates(dir / "s.sim", 1);
  std::string text = beltScene("0.2 0 0", "0 0 0.5");
  text = test::replaceOnce(text, "</ContactParameterMap>",
                           "</ContactParameterMap><GlobalInitialCondition file=\"" +
                               (dir / "s.sim").string() +
                               "\" whichState=\"end\" useTimeToContinue=\"true\"/>");
  const SceneDescription d = load(text);
  EXPECT_EQ(d.system.time, 0.2);
  expectVecNear(d.system.bodies.positions()[0], Vec3(0.04, 0, -0.1), 1e-15);
  const Quat expected = quat::fromAxisAngle(Vec3::UnitZ(), 0.1 + kPi / 2);
  EXPECT_NEAR(d.system.bodies.orientations()[0].angularDistance(expected), 0.0, 1e-14);
}

// A sphere at rest on the moving plate: sticking friction gives it v = 2/7 v_belt in one step
// (contact point velocity v + omega x r = v_belt with Theta = 2/5 m r^2) and it rolls on.
TEST(AnimatedBodies, SphereOnMovingFloorIsCarriedAlong) {
  SceneDescription d = load(beltScene("0.2 0 0"));
  const std::size_t ball = *d.system.bodies.indexOf(makeBodyId(0, 0));
  const std::size_t belt = *d.system.bodies.indexOf(makeBodyId(1, 0));

  // The contact problem of one step with the contact the collision detection finds: plate (A)
  // below, sphere (B) above, normal +z, touching.
  {
    BodyStorage& b = d.system.bodies;
    const std::vector<Vec3> v0 = b.velocities();
    const std::vector<Vec3> w0 = b.omegasBody();
    b.velocities()[ball] += d.stepper.deltaT * d.system.externalForces.gravityAcceleration();
    ContactStorage contacts;
    contacts.add(static_cast<std::uint32_t>(belt), static_cast<std::uint32_t>(ball), Vec3::UnitZ(),
                 0.0, b.positions()[ball] - Vec3(0, 0, 0.1) - b.positions()[belt],
                 Vec3(0, 0, -0.1));
    ContactSolver solver(d.stepper.solver);
    const ContactProblem problem{contacts, d.system.contactParameters, v0, w0, d.stepper.deltaT};
    const SolverStats stats = solver.solve(b, problem, nullptr);
    EXPECT_TRUE(stats.converged);
    expectVecNear(b.velocities()[ball], Vec3(2.0 / 7.0 * 0.2, 0, 0), 1e-9);
    expectVecNear(b.velocities()[belt], Vec3(0.2, 0, 0));  // the belt is not pushed back
  }
}

TEST(AnimatedBodies, SphereOnMovingFloorIsCarriedAlongByTheStepper) {
  SceneDescription run = load(beltScene("0.2 0 0"));
  const std::size_t ball = *run.system.bodies.indexOf(makeBodyId(0, 0));
  MoreauStepper stepper(run.stepper);
  bool anyContact = false;
  for (int s = 0; s < 50; ++s) {
    stepper.step(run.system);
    anyContact = anyContact || !stepper.contacts().empty();
  }
  if (!anyContact) {
    GTEST_SKIP() << "collision detection finds no contacts in this build";
  }
  const BodyStorage& b = run.system.bodies;
  EXPECT_NEAR(b.velocities()[ball].x(), 2.0 / 7.0 * 0.2, 1e-6);
  // Rolling at 2/7 of the belt speed from the first step or so on (the first step moves the
  // ball for half a step only: r^M = r^S + dt/2 v^S with v^S = 0).
  EXPECT_NEAR(b.positions()[ball].x(), 2.0 / 7.0 * 0.2 * 49.5 * 0.01, 2.0 / 7.0 * 0.2 * 0.01);
  EXPECT_GT(b.positions()[ball].z(), 0.09);
}

// ---- effective configuration ------------------------------------------------------------------

TEST(EffectiveConfiguration, DefaultsAndDerivedValuesFilledInAndReloadable) {
  const std::string text = test::readText(test::testDataDir() / "scenes" / "full_scene.xml");
  const SceneDescription d =
      loadSceneFromString(text, test::testDataDir() / "scenes" / "full_scene.xml");
  const std::string& x = d.effectiveXml;
  EXPECT_NE(x.find("Effective configuration of"), std::string::npos);
  EXPECT_NE(x.find("Accepted without effect:"), std::string::npos);
  EXPECT_NE(x.find("SceneSettings/Visualization"), std::string::npos);
  // RecorderSettings statesPerSecond="30" with deltaT 0.002 -> everyXStep 16.
  EXPECT_NE(x.find("statesPerSecond=\"30\" everyXStep=\"16\""), std::string::npos) << x;
  // Group without groupId: derived 1. Defaults of MPISettings.
  EXPECT_NE(x.find("name=\"boxes\" instances=\"2\" enableSelectiveIds=\"false\" groupId=\"1\""),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("reserveSplitNodes=\"2000\""), std::string::npos);
  EXPECT_NE(x.find("doLocalComputations=\"true\""), std::string::npos);
  EXPECT_NE(x.find("seed=\"5\""), std::string::npos);

  // Loading the effective configuration gives the same scene.
  const SceneDescription again =
      loadSceneFromString(x, test::testDataDir() / "scenes" / "again.xml");
  EXPECT_EQ(again.system.bodies.ids(), d.system.bodies.ids());
  EXPECT_EQ(again.system.bodies.positions(), d.system.bodies.positions());
  EXPECT_EQ(again.system.bodies.masses(), d.system.bodies.masses());
  EXPECT_EQ(again.recorder.everyXStep, d.recorder.everyXStep);
  EXPECT_EQ(again.stepper.solver.maxIter, d.stepper.solver.maxIter);
  EXPECT_EQ(again.effectiveXml.substr(again.effectiveXml.find("<DynamicsSystem")),
            x.substr(x.find("<DynamicsSystem")));
}

// ---- contact force output and relative stiffness ----------------------------------------------

TEST(ContactForceOutput, ReadWithDefaultsAndValues) {
  const std::string sphere = bodies("s", 1, 1, R"(<Sphere distribute="uniform" radius="0.1"/>)");
  EXPECT_FALSE(load(scene("", sphere)).contactForceOutput.has_value());
  const SceneDescription d = load(scene(R"(<ContactForceOutput everyXStep="4"/>)", sphere));
  ASSERT_TRUE(d.contactForceOutput.has_value());
  EXPECT_EQ(d.contactForceOutput->everyXStep, 4u);
  EXPECT_FALSE(d.contactForceOutput->compatibleForces);
  EXPECT_EQ(d.contactForceOutput->compatible.exponent, 1.0);
  EXPECT_EQ(d.contactForceOutput->compatible.tolerance, 1e-8);
  EXPECT_EQ(d.contactForceOutput->compatible.maxIterations, 200u);
  EXPECT_TRUE(d.contactForceOutput->writes(8));
  EXPECT_FALSE(d.contactForceOutput->writes(9));
  EXPECT_NE(d.effectiveXml.find("compatibleForces=\"false\""), std::string::npos);
  const SceneDescription h = load(scene(
      R"(<ContactForceOutput everyXStep="1" compatibleForces="true" exponent="1.5" tolerance="1e-9" maxIterations="7"/>)",
      sphere));
  EXPECT_TRUE(h.contactForceOutput->compatibleForces);
  EXPECT_EQ(h.contactForceOutput->compatible.exponent, 1.5);
  EXPECT_EQ(h.contactForceOutput->compatible.tolerance, 1e-9);
  EXPECT_EQ(h.contactForceOutput->compatible.maxIterations, 7u);
}

TEST(ContactForceOutput, BadValuesAreSceneErrors) {
  const std::string sphere = bodies("s", 1, 1, R"(<Sphere distribute="uniform" radius="0.1"/>)");
  EXPECT_NE(loadError(scene(R"(<ContactForceOutput everyXStep="2" exponent="0.5"/>)", sphere))
                .first.find("'exponent' must be >= 1"),
            std::string::npos);
  EXPECT_NE(
      loadError(scene(R"(<ContactForceOutput everyXStep="0"/>)", sphere)).first.find("everyXStep"),
      std::string::npos);
  EXPECT_NE(loadError(scene(R"(<ContactForceOutput/>)", sphere)).first.find("everyXStep"),
            std::string::npos);
}

TEST(ContactForceOutput, RelativeStiffnessPerMaterialPair) {
  const std::string sphere = bodies("s", 1, 1, R"(<Sphere distribute="uniform" radius="0.1"/>)");
  const SceneDescription d = load(scene(R"(<ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0" relativeStiffness="2"/>
      <ContactParameter materialId1="0" materialId2="1" type="UCFD" mu="0.3" epsilonN="0" epsilonT="0"
          invDampingN="0" invDampingT="0" relativeStiffness="3"/>
      <ContactParameter materialId1="1" materialId2="1" type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>)",
                                        sphere));
  EXPECT_EQ(d.system.contactParameters.standard().relativeStiffness, 2.0);
  EXPECT_EQ(d.system.contactParameters.get(1, 0).relativeStiffness, 3.0);
  EXPECT_EQ(d.system.contactParameters.get(1, 1).relativeStiffness, 1.0);
  EXPECT_NE(loadError(scene(R"(<ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0" relativeStiffness="0"/>
    </ContactParameterMap>)",
                            sphere))
                .first.find("relativeStiffness"),
            std::string::npos);
}

// ---- rolling resistance (grain's own attribute muRolling) ------------------------------------

TEST(RollingResistance, MuRollingIsReadDefaultedAndReloaded) {
  const std::string sphere = bodies("s", 1, 1, R"(<Sphere distribute="uniform" radius="0.1"/>)");
  const SceneDescription d = load(scene(R"(<ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0" muRolling="0.05"/>
      <ContactParameter materialId1="0" materialId2="1" type="UCFD" mu="0.3" epsilonN="0" epsilonT="0"
          invDampingN="0" invDampingT="0" muRolling="0.2"/>
      <ContactParameter materialId1="1" materialId2="1" type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>)",
                                        sphere));
  const ContactParameterMap& map = d.system.contactParameters;
  EXPECT_EQ(map.standard().muRolling, 0.05);
  EXPECT_EQ(map.get(1, 0).muRolling, 0.2);
  EXPECT_EQ(map.get(1, 1).muRolling, 0.0);
  EXPECT_TRUE(map.hasRollingResistance());
  // The effective configuration carries the values and the default, and reloads to the same.
  EXPECT_NE(d.effectiveXml.find("muRolling=\"0.05\""), std::string::npos) << d.effectiveXml;
  EXPECT_NE(d.effectiveXml.find("muRolling=\"0.2\""), std::string::npos);
  EXPECT_NE(d.effectiveXml.find("muRolling=\"0\""), std::string::npos);
  const SceneDescription again = loadSceneFromString(d.effectiveXml, "again.xml");
  EXPECT_EQ(again.system.contactParameters.standard().muRolling, 0.05);
  EXPECT_EQ(again.system.contactParameters.get(0, 1).muRolling, 0.2);
  EXPECT_EQ(again.system.contactParameters.get(1, 1).muRolling, 0.0);
  // Without the attribute: 0, the law without rolling resistance.
  EXPECT_FALSE(load(scene("", sphere)).system.contactParameters.hasRollingResistance());
}

TEST(RollingResistance, BadMuRollingAndOtherMethodsAreSceneErrors) {
  const std::string sphere = bodies("s", 1, 1, R"(<Sphere distribute="uniform" radius="0.1"/>)");
  EXPECT_NE(loadError(scene(R"(<ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0" muRolling="-0.1"/>
    </ContactParameterMap>)",
                            sphere))
                .first.find("muRolling"),
            std::string::npos);
  const std::string rolling = scene(R"(<ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
      <ContactParameter materialId1="0" materialId2="1" type="UCF" mu="0.3" epsilonN="0" epsilonT="0"
          muRolling="0.1"/>
    </ContactParameterMap>)",
                                    sphere);
  for (const std::string method : {"SORFull", "SORNormalTangential", "JOR", "DelassusSOR"}) {
    const std::string text =
        test::replaceOnce(rolling, "method=\"SORContact\"", "method=\"" + method + "\"");
    try {
      load(text);
      ADD_FAILURE() << method << " accepted muRolling";
    } catch (const SceneError& e) {
      EXPECT_EQ(e.line(), test::lineOf(text, "muRolling=\"0.1\""));
      EXPECT_EQ(e.path(), "SceneSettings/ContactParameterMap/ContactParameter[1]");
      EXPECT_NE(e.message().find("attribute 'muRolling'"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("muRolling is supported by method SORContact only"),
                std::string::npos)
          << e.message();
      EXPECT_NE(e.message().find(method), std::string::npos) << e.message();
    }
    // muRolling="0" is the law without rolling resistance: accepted by every method.
    EXPECT_NO_THROW(load(test::replaceOnce(text, "muRolling=\"0.1\"", "muRolling=\"0\"")));
  }
}

// An instance count beyond memory is refused before anything is built, at the attribute, with the
// estimated memory; also written as "1e9", which the format check would reject afterwards.
TEST(SceneMemory, InstanceCountBeyondMemoryIsRefusedWithTheEstimate) {
  const std::string sphere = R"(<Sphere distribute="uniform" radius="0.1"/>)";
  const std::string base =
      scene("", bodies("floor", 2, 1, sphere) + "\n" + bodies("beads", 7, 2, sphere));
  for (const std::string count : {"1e9", "1000000000"}) {
    const std::string text =
        test::replaceOnce(base, "instances=\"7\"", "instances=\"" + count + "\"");
    try {
      load(text);
      FAIL() << "instances=" << count << " loaded";
    } catch (const SceneError& e) {
      EXPECT_EQ(e.file(), "features.xml");
      EXPECT_EQ(e.line(), test::lineOf(text, "instances=\"" + count + "\""));
      EXPECT_EQ(e.path(), "SceneObjects/RigidBodies[name=\"beads\"]");
      EXPECT_NE(
          e.message().find("attribute 'instances' (\"" + count +
                           "\"): the scene's 1e+09 bodies need an estimated 768 GB of memory"),
          std::string::npos)
          << e.message();
      EXPECT_NE(e.message().find("more than the"), std::string::npos) << e.message();
    }
  }
  // The budget decides: 3000 bodies need 2.3 MB, refused with 2 MB, loaded with 4 MB.
  const std::string text = test::replaceOnce(base, "instances=\"7\"", "instances=\"2998\"");
  SceneLoadOptions small;
  small.memoryBudget = 2'000'000;
  try {
    loadSceneFromString(text, "features.xml", small);
    FAIL() << "3000 bodies loaded with 2 MB";
  } catch (const SceneError& e) {
    EXPECT_NE(e.message().find("3000 bodies need an estimated 2.3 MB of memory (768 bytes per "
                               "body at least), more than the 2 MB this machine has"),
              std::string::npos)
        << e.message();
  }
  SceneLoadOptions enough;
  enough.memoryBudget = 4'000'000;
  EXPECT_EQ(loadSceneFromString(text, "features.xml", enough).system.bodies.size(), 3000u);
  SceneLoadOptions unchecked;
  unchecked.memoryBudget = 0;
  EXPECT_EQ(loadSceneFromString(text, "features.xml", unchecked).system.bodies.size(), 3000u);
  EXPECT_GT(machineMemoryBytes(), 0u);
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1.5e9), "1.5 GB");
}

// The .sim header counts the bodies of a state in 32 bits: a scene that records more simulated
// bodies is refused up front at the group that crosses the limit, not written with a wrong
// count; without output the count is not limited by the format (the memory check decides).
TEST(SceneSimBodyCount, MoreThan32BitOfRecordedBodiesIsRefusedUpFront) {
  const std::string sphere = R"(<Sphere distribute="uniform" radius="0.1"/>)";
  const std::string base = scene("", bodies("a", 7, 1, sphere) + "\n" + bodies("b", 8, 2, sphere));
  std::string text = test::replaceOnce(base, "instances=\"7\"", "instances=\"3000000000\"");
  text = test::replaceOnce(text, "instances=\"8\"", "instances=\"1294967296\"");
  const std::string recorded = test::replaceOnce(text, "<RecorderSettings mode=\"noOutput\"/>",
                                                 "<RecorderSettings mode=\"everyTimeStep\"/>");
  try {
    load(recorded);
    FAIL() << "4294967296 recorded bodies loaded";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.line(), test::lineOf(recorded, "instances=\"1294967296\""));
    EXPECT_NE(e.message().find("simulates 4294967296 bodies so far, more than the 4294967295 a "
                               ".sim file counts"),
              std::string::npos)
        << e.message();
  }
  // One body fewer fits the format (and is then refused for its memory, not its count).
  const std::string fits =
      test::replaceOnce(recorded, "instances=\"1294967296\"", "instances=\"1294967295\"");
  try {
    load(fits);
    FAIL() << "4294967295 bodies loaded on this machine";
  } catch (const SceneError& e) {
    EXPECT_NE(e.message().find("of memory"), std::string::npos) << e.message();
  }
  try {
    load(text);
    FAIL() << "4294967296 bodies loaded on this machine";
  } catch (const SceneError& e) {
    EXPECT_NE(e.message().find("of memory"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace grain::io
