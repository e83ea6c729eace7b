// SPDX-License-Identifier: MIT
// The committed schema and format reference equal the generator's output, and the schema
// (checked with xmllint from libxml2) accepts the example scenes and rejects what the reader
// rejects.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/scene_schema.hpp>

#include "io_test_util.hpp"

namespace grain::io {
namespace {

namespace fs = std::filesystem;
using grain::testing::sourceDir;
using test::TempDir;

fs::path schemaFile() {
  return sourceDir() / "schemas" / "scene.xsd";
}

constexpr const char* kRegenerate =
    "regenerate with: cmake --build <build dir> --target scene-schema";

TEST(SceneSchemaFiles, CommittedSchemaIsGenerated) {
  EXPECT_TRUE(test::readText(schemaFile()) == schema::sceneSchemaXsd())
      << "schemas/scene.xsd differs from the tables; " << kRegenerate;
}

TEST(SceneSchemaFiles, CommittedReferenceIsGenerated) {
  EXPECT_TRUE(test::readText(sourceDir() / "docs" / "scene-format.md") ==
              schema::sceneFormatMarkdown())
      << "docs/scene-format.md differs from the tables; " << kRegenerate;
}

TEST(SceneSchemaFiles, ReferenceNamesEveryElementAndAttribute) {
  const std::string md = schema::sceneFormatMarkdown();
  for (const schema::ElementSpec& e : schema::elements()) {
    const bool heading = md.find("/" + std::string(e.name) + "\n") != std::string::npos ||
                         md.find("### " + std::string(e.name) + "\n") != std::string::npos;
    EXPECT_TRUE(heading) << e.name;
    for (const schema::AttributeSpec& a : e.attributes) {
      EXPECT_NE(md.find("| `" + std::string(a.name) + "` |"), std::string::npos)
          << e.name << "@" << a.name;
    }
  }
}

// ---- xmllint ----------------------------------------------------------------------------------

using Lint = grain::testing::CommandResult;

bool haveXmllint() {
  return std::system("xmllint --version > /dev/null 2>&1") == 0;
}

/// xmllint --noout --schema schemas/scene.xsd FILE (parser warnings off: the namespace URI
/// "SceneFile" is relative, which libxml2 warns about).
Lint xmllint(const fs::path& file) {
  return grain::testing::runCommand("xmllint --nowarning --noout --schema '" +
                                    schemaFile().string() + "' '" + file.string() + "'");
}

#define GRAIN_REQUIRE_XMLLINT()                                                     \
  if (!haveXmllint()) {                                                             \
    GTEST_SKIP() << "xmllint not found (Debian/Ubuntu: apt install libxml2-utils)"; \
  }

std::vector<fs::path> exampleScenes() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(sourceDir() / "scenes")) {
    if (entry.path().extension() == ".xml") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SceneSchemaXmllint, ExampleAndTestScenesValidate) {
  GRAIN_REQUIRE_XMLLINT();
  std::vector<fs::path> files = exampleScenes();
  ASSERT_FALSE(files.empty());
  files.push_back(test::testDataDir() / "scenes" / "full_scene.xml");
  files.push_back(test::testDataDir() / "scenes" / "mesh_scene.xml");
  files.push_back(test::testDataDir() / "scenes" / "golden_pile.xml");
  for (const fs::path& f : files) {
    const Lint r = xmllint(f);
    EXPECT_EQ(r.exitCode, 0) << f << ":\n" << r.output;
  }
}

fs::path grsfScenes() {
  return test::testDataDir() / "grsf-scenes";
}

TEST(SceneSchemaXmllint, GrsfScenesValidate) {
  GRAIN_REQUIRE_XMLLINT();
  ASSERT_TRUE(fs::exists(grsfScenes() / "funnel.xml")) << grsfScenes();
  const Lint funnel = xmllint(grsfScenes() / "funnel.xml");
  EXPECT_EQ(funnel.exitCode, 0) << funnel.output;
  // The study scene as its job generator leaves it is rejected by both for its placeholder;
  // with the placeholder filled it validates.
  const fs::path avalanche = grsfScenes() / "avalanche1M-study.xml";
  const Lint raw = xmllint(avalanche);
  EXPECT_NE(raw.exitCode, 0);
  EXPECT_NE(raw.output.find("${RigidBodySim:firstInitialCondSimFile}"), std::string::npos)
      << raw.output;
  TempDir dir;
  test::writeText(dir / "avalanche.xml",
                  test::replaceOnce(test::readText(avalanche),
                                    "${RigidBodySim:firstInitialCondSimFile}", "initial.sim"));
  const Lint filled = xmllint(dir / "avalanche.xml");
  EXPECT_EQ(filled.exitCode, 0) << filled.output;
}

// A valid scene; each case below breaks one thing.
const char* const kValid = R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <Visualization><Scene scale="1"/><Anything at="all">text</Anything></Visualization>
    <RecorderSettings mode="everyXTimeStep" everyXStep="5"/>
    <TimeStepperSettings deltaT="0.001" endTime="1">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" maxIter="100" absTol="1e-7" relTol="1e-7"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameter materialId1="1" materialId2="2" type="UCF" mu="0.5" epsilonN="0" epsilonT="0"/>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0.5" epsilonT="0"/>
      <ContactParameter materialId1="1" materialId2="1" type="UCFD" mu="0.5" epsilonN="0" epsilonT="0" invDampingN="0" invDampingT="1e-3"/>
    </ContactParameterMap>
    <GlobalGeometries>
      <Sphere distribute="random" id="1" instances="4" generator="uniform" seed="2" minRadius="0.01" maxRadius="0.02"/>
      <Box distribute="uniform" id="9" extent="0.1 0.1 0.1"/>
    </GlobalGeometries>
    <ExternalForces>
      <ForceField applyTo="all" type="gravity" value="9.81" direction="0 0 -1"/>
    </ExternalForces>
    <GlobalSelectiveIds><Range value="0,0 0,3"/></GlobalSelectiveIds>
    <MPISettings>
      <ProcessTopology mode="dynamic" policy="bodyLimit" bodyLimit="100">
        <Topology type="grid" dimension="2 2 1" minCellSize="0.1"/>
        <Visualization><Material name="x"/></Visualization>
      </ProcessTopology>
      <InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>
    </MPISettings>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="beads" instances="4" groupId="0" enableSelectiveIds="true">
      <Geometry>
        <GlobalGeomId distribute="random" startId="1" endId="4" seed="3"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="homogen" density="2500"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="1"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="2" gridSizeY="2" distance="0.05"
              translation="0 0 0.1" jitter="false" delta="0"/>
          <InitialVelocity distribute="transrot">
            <Vel transDir="1 0 0" absTransVel="1" rotDir="0 0 1" absRotVel="2"/>
          </InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
      <Visualization><Mesh file="x.mesh"/></Visualization>
    </RigidBodies>
    <RigidBodies name="floor" instances="1" groupId="1">
      <Geometry>
        <Halfspace distribute="uniform" normal="0 0 1" position="0 0 0"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="animated" velocity="0.1 0 0" angularVelocity="0 0 0"/>
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

TEST(SceneSchemaXmllint, BaseSceneIsValidForBoth) {
  GRAIN_REQUIRE_XMLLINT();
  TempDir dir;
  test::writeText(dir / "scene.xml", kValid);
  const Lint r = xmllint(dir / "scene.xml");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NO_THROW(loadScene(dir / "scene.xml"));
}

// Every local solver name of the one table and both accuracy measures: the reader and the schema
// accept them.
TEST(SceneSchemaXmllint, LocalMethodsAndMeasuresAreValidForBoth) {
  GRAIN_REQUIRE_XMLLINT();
  TempDir dir;
  for (const LocalMethodName& m : kLocalMethodNames) {
    for (const std::string conv : {"NaturalMap", "Koziara"}) {
      const fs::path file = dir / (std::string(m.sceneName) + conv + ".xml");
      test::writeText(file, test::replaceOnce(kValid, "method=\"SORContact\"",
                                              "method=\"" + std::string(m.sceneName) +
                                                  "\" convergenceMethod=\"" + conv + "\""));
      const Lint r = xmllint(file);
      EXPECT_EQ(r.exitCode, 0) << file << "\n" << r.output;
      const SceneDescription d = loadScene(file);
      ASSERT_TRUE(d.stepper.solver.localMethod.has_value()) << m.sceneName;
      EXPECT_EQ(*d.stepper.solver.localMethod, m.method);
      EXPECT_EQ(toString(d.stepper.solver.convergenceMethod), conv);
    }
  }
  // The velocity solver with the measures as stopping test.
  const fs::path file = dir / "sor-natural-map.xml";
  test::writeText(file,
                  test::replaceOnce(kValid, "method=\"SORContact\"",
                                    "method=\"SORContact\" convergenceMethod=\"NaturalMap\""));
  const Lint r = xmllint(file);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  const SceneDescription d = loadScene(file);
  EXPECT_FALSE(d.stepper.solver.localMethod.has_value());
  EXPECT_EQ(d.stepper.solver.convergenceMethod, ConvergenceMethod::NaturalMap);
}

struct Mutation {
  const char* name;
  const char* from;
  const char* to;
};

// clang-format off
const Mutation kRejectedByBoth[] = {
  {"UnknownElement", "<ExternalForces>", "<ExternalForce/><ExternalForces>"},
  {"UnknownAttribute", "minRadius=", "minRadus="},
  {"UnknownAttributeOnRoot", "<DynamicsSystem xmlns=\"SceneFile\">", "<DynamicsSystem xmlns=\"SceneFile\" version=\"2\">"},
  {"MissingRequiredAttribute", " maxIter=\"100\"", ""},
  {"MissingRequiredElement", "<Material distribute=\"uniform\" id=\"2\"/>", ""},
  {"MissingSceneSettingsChild", "<RecorderSettings mode=\"everyXTimeStep\" everyXStep=\"5\"/>", ""},
  {"NotANumber", "deltaT=\"0.001\"", "deltaT=\"fast\""},
  {"Infinity", "deltaT=\"0.001\"", "deltaT=\"INF\""},
  {"ZeroDeltaT", "deltaT=\"0.001\"", "deltaT=\"0\""},
  {"NegativeRadius", "minRadius=\"0.01\"", "minRadius=\"-0.01\""},
  {"NegativeDensity", "density=\"2500\"", "density=\"-1\""},
  {"EpsilonAboveOne", "epsilonN=\"0.5\"", "epsilonN=\"1.5\""},
  {"AlphaOutOfRange", "alphaSORProx=\"1.2\"", "alphaSORProx=\"2\""},
  {"ZeroInstances", "instances=\"4\" groupId", "instances=\"0\" groupId"},
  {"NegativeInteger", "maxIter=\"100\"", "maxIter=\"-100\""},
  {"FractionalInteger", "maxIter=\"100\"", "maxIter=\"10.5\""},
  {"ZeroNormal", "normal=\"0 0 1\"", "normal=\"0 0.0 -0\""},
  {"ShortVector", "translation=\"0 0 0.1\"", "translation=\"0 0.1\""},
  {"ZeroExtent", "extent=\"0.1 0.1 0.1\"", "extent=\"0.1 0 0.1\""},
  {"BadBoolean", "jitter=\"false\"", "jitter=\"no\""},
  {"UnknownEnumValue", "method=\"SORContact\"", "method=\"GaussSeidel\""},
  {"UnsupportedEnumValue", "method=\"SORContact\"", "method=\"SORContact\" matrixRStrategy=\"sum2\""},
  {"UnimplementedVariant", "<InitialCondition type=\"posvel\">\n          <InitialPosition distribute=\"grid\"", "<InitialCondition type=\"file\">\n          <InitialPosition distribute=\"grid\""},
  {"Placeholder", "name=\"beads\"", "name=\"${Job:name}\""},
  {"TextContent", "<Geometry>", "<Geometry>sphere"},
  {"TwoGeometries", "<Halfspace distribute", "<Box distribute=\"uniform\" extent=\"1 1 1\"/><Halfspace distribute"},
  {"EmptyGeometry", "<Halfspace distribute=\"uniform\" normal=\"0 0 1\" position=\"0 0 0\"/>", ""},
  {"ElementInWrongParent", "<Halfspace distribute", "<Material distribute=\"uniform\" id=\"3\"/><Halfspace distribute"},
  {"TwoStandardLawsInARow", "<ContactParameterStandard type=\"UCF\" mu=\"0.3\" epsilonN=\"0.5\" epsilonT=\"0\"/>", "<ContactParameterStandard type=\"UCF\" mu=\"0.3\" epsilonN=\"0.5\" epsilonT=\"0\"/><ContactParameterStandard type=\"UCF\" mu=\"0.3\" epsilonN=\"0.5\" epsilonT=\"0\"/>"},
  {"SecondTimeStepper", "</TimeStepperSettings>", "</TimeStepperSettings><TimeStepperSettings deltaT=\"1\" endTime=\"1\"/>"},
  {"SetAndRange", "<Range value=\"0,0 0,3\"/>", "<Range value=\"0,0 0,3\"/><Set value=\"0,1\"/>"},
  {"BadBodyId", "<Range value=\"0,0 0,3\"/>", "<Set value=\"0:1\"/>"},
  {"RangeWithThreeIds", "<Range value=\"0,0 0,3\"/>", "<Range value=\"0,0 0,3 0,4\"/>"},
  {"GridDimensionZero", "dimension=\"2 2 1\"", "dimension=\"2 0 1\""},
  {"ZeroMeshScale", "<Box distribute=\"uniform\" id=\"9\" extent=\"0.1 0.1 0.1\"/>", "<Mesh distribute=\"uniform\" id=\"9\" file=\"m.obj\" scale=\"1 0 1\"/>"},
  {"GlobalIdZero", "id=\"9\"", "id=\"0\""},
  {"MissingMpiSolver", "<InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/>", ""},
  {"WrongNamespace", "<DynamicsSystem xmlns=\"SceneFile\">", "<DynamicsSystem xmlns=\"OtherFile\">"},
  {"WrongRoot", "<DynamicsSystem xmlns=\"SceneFile\">", "<DynamicsSystem xmlns=\"SceneFile\"><DynamicsSystem/>"},
};

// Rules that XSD 1.0 cannot express (docs/scene-format.md, "What the schema cannot check"):
// the reader rejects these scenes, the schema accepts them.
const Mutation kRejectedByReaderOnly[] = {
  {"AttributeOfOtherVariant", "<DynamicState type=\"simulated\"/>", "<DynamicState type=\"simulated\" velocity=\"1 0 0\"/>"},
  {"SimulatedWithoutInertia", "<InertiaTensor type=\"homogen\"/>", ""},
  {"NoPosInTransforms", "<Pos><Trafo trans=\"0 0 0\" axis=\"1 0 0\" deg=\"0\"/></Pos>", ""},
  {"MinAboveMax", "maxRadius=\"0.02\"", "maxRadius=\"0.005\""},
  {"UndefinedGlobalId", "endId=\"4\"", "endId=\"5\""},
  {"VariantAttributeMissing", " generator=\"uniform\"", ""},
};
// clang-format on

class SchemaAgreement : public ::testing::TestWithParam<Mutation> {};

TEST_P(SchemaAgreement, BothReject) {
  GRAIN_REQUIRE_XMLLINT();
  const Mutation& m = GetParam();
  TempDir dir;
  const fs::path file = dir / "scene.xml";
  test::writeText(file, test::replaceOnce(kValid, m.from, m.to));
  EXPECT_THROW(loadScene(file), SceneError) << m.name;
  const Lint r = xmllint(file);
  EXPECT_NE(r.exitCode, 0) << m.name << ": xmllint accepted it";
}

INSTANTIATE_TEST_SUITE_P(Invalid, SchemaAgreement, ::testing::ValuesIn(kRejectedByBoth),
                         [](const ::testing::TestParamInfo<Mutation>& p) {
                           return std::string(p.param.name);
                         });

class SchemaLimits : public ::testing::TestWithParam<Mutation> {};

TEST_P(SchemaLimits, OnlyTheReaderRejects) {
  GRAIN_REQUIRE_XMLLINT();
  const Mutation& m = GetParam();
  TempDir dir;
  const fs::path file = dir / "scene.xml";
  test::writeText(file, test::replaceOnce(kValid, m.from, m.to));
  EXPECT_THROW(loadScene(file), SceneError) << m.name;
  const Lint r = xmllint(file);
  EXPECT_EQ(r.exitCode, 0) << m.name << ":\n" << r.output;
}

INSTANTIATE_TEST_SUITE_P(Invalid, SchemaLimits, ::testing::ValuesIn(kRejectedByReaderOnly),
                         [](const ::testing::TestParamInfo<Mutation>& p) {
                           return std::string(p.param.name);
                         });

TEST(SceneSchemaXmllint, FilesWithoutNamespaceLoadButDoNotValidate) {
  GRAIN_REQUIRE_XMLLINT();
  TempDir dir;
  test::writeText(dir / "scene.xml", test::replaceOnce(kValid, " xmlns=\"SceneFile\"", ""));
  EXPECT_NO_THROW(loadScene(dir / "scene.xml"));
  EXPECT_NE(xmllint(dir / "scene.xml").exitCode, 0);
}

}  // namespace
}  // namespace grain::io
