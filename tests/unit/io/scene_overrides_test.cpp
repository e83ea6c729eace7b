// SPDX-License-Identifier: MIT
// --set overrides: XPath selection, in-place replacement that keeps line numbers, errors.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/scene_overrides.hpp>

#include "io_test_util.hpp"

namespace grain::io {
namespace {

const char* const kScene = R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="noOutput"/>
    <TimeStepperSettings deltaT = "0.001" endTime='1'>
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" maxIter="100" absTol="1e-7" relTol="1e-7"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameter materialId1="0" materialId2="0" type="UCF" mu="0.5" epsilonN="0" epsilonT="0"/>
      <ContactParameter materialId1="0" materialId2="1" type="UCF" mu="0.5" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="beads" instances="4" groupId="0">
      <Geometry><Sphere distribute="uniform" radius="0.01"/></Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="homogen" density="2500"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="linear" position="0 0 1" direction="1 0 0" distance="0.1"
              jitter="false" delta="0"/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
  </SceneObjects>
</DynamicsSystem>
)";

std::string apply(const std::vector<std::string>& args, const std::string& text = kScene) {
  std::vector<SceneOverride> o;
  for (const std::string& a : args) {
    o.push_back(parseSceneOverride(a));
  }
  return applySceneOverrides(text, "scene.xml", o);
}

std::string error(const std::vector<std::string>& args) {
  try {
    apply(args);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SceneOverrides, SplitsAtTheFirstEqualsSignOutsidePredicates) {
  const SceneOverride o =
      parseSceneOverride("SceneObjects/RigidBodies[@name=\"a=b\"]/@instances=5");
  EXPECT_EQ(o.xpath, "SceneObjects/RigidBodies[@name=\"a=b\"]/@instances");
  EXPECT_EQ(o.value, "5");
  EXPECT_EQ(parseSceneOverride("@x=a=b").value, "a=b");
  EXPECT_EQ(parseSceneOverride("@x=").value, "");
  EXPECT_THROW(parseSceneOverride("SceneSettings"), Error);
  EXPECT_THROW(parseSceneOverride("=5"), Error);
}

TEST(SceneOverrides, ExamplesOfTheStudyConfigurations) {
  const std::string out = apply({"SceneSettings/ContactParameterMap/ContactParameter[1]/@mu=0.3",
                                 "SceneObjects/RigidBodies[@name=\"beads\"]/@instances=5000",
                                 "SceneSettings/TimeStepperSettings/@endTime=0.25"});
  const SceneDescription d = loadSceneFromString(out, "scene.xml");
  EXPECT_EQ(d.system.contactParameters.get(0, 0).mu, 0.3);
  EXPECT_EQ(d.system.contactParameters.get(0, 1).mu, 0.5);
  EXPECT_EQ(d.system.bodies.size(), 5000u);
  EXPECT_EQ(d.stepper.endTime, 0.25);
  // Only the values changed: same lines, same layout (also with spaces around '=' and '...').
  EXPECT_NE(out.find("endTime='0.25'"), std::string::npos);
  const std::string original(kScene);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'),
            std::count(original.begin(), original.end(), '\n'));
  EXPECT_EQ(test::lineOf(out, "instances=\"5000\""), test::lineOf(kScene, "instances=\"4\""));
}

TEST(SceneOverrides, EveryMatchIsSet) {
  const SceneDescription d = loadSceneFromString(
      apply({"SceneSettings/ContactParameterMap/ContactParameter/@mu=0.9"}), "scene.xml");
  EXPECT_EQ(d.system.contactParameters.get(0, 0).mu, 0.9);
  EXPECT_EQ(d.system.contactParameters.get(0, 1).mu, 0.9);
  // Absolute and descendant paths work too.
  EXPECT_NE(apply({"//@mu=0.1"}).find("mu=\"0.1\" epsilonN=\"0\" epsilonT=\"0\"/>\n    </Con"),
            std::string::npos);
  EXPECT_NE(apply({"/DynamicsSystem/SceneSettings/TimeStepperSettings/@deltaT=0.002"})
                .find("deltaT = \"0.002\""),
            std::string::npos);
}

TEST(SceneOverrides, MissingAttributeOfSelectedElementsIsAdded) {
  const std::string out =
      apply({"SceneSettings/TimeStepperSettings/InclusionSolverSettings/@minIter=7"});
  EXPECT_EQ(loadSceneFromString(out, "scene.xml").stepper.solver.minIter, 7u);
  EXPECT_EQ(test::lineOf(out, "minIter=\"7\""), 6u);
}

TEST(SceneOverrides, ValuesAreEscaped) {
  const std::string out = apply({"SceneObjects/RigidBodies/@name=a\"<b>&'c"});
  EXPECT_NE(out.find("name=\"a&quot;&lt;b>&amp;'c\""), std::string::npos) << out;
  EXPECT_EQ(loadSceneFromString(out, "scene.xml").groups[0].name, "a\"<b>&'c");
}

TEST(SceneOverrides, ErrorsNameTheFileAndTheArgument) {
  EXPECT_EQ(error({"SceneSettings/Nothing/@x=1"}),
            "scene.xml: --set 'SceneSettings/Nothing/@x=1': the XPath matches nothing");
  EXPECT_EQ(error({"SceneSettings/TimeStepperSettings=1"}),
            "scene.xml: --set 'SceneSettings/TimeStepperSettings=1': the XPath selects element "
            "<TimeStepperSettings> on line 5, not attributes (end it with /@name)");
  EXPECT_EQ(
      error({"SceneSettings/RecorderSettings/@@mode=x"})
          .rfind("scene.xml: --set 'SceneSettings/RecorderSettings/@@mode=x': invalid XPath: ", 0),
      0u);
}

TEST(SceneOverrides, LoadErrorsPointAtTheOriginalLine) {
  const std::string out = apply({"SceneObjects/RigidBodies/Geometry/Sphere/@radius=-2"});
  try {
    loadSceneFromString(out, "scene.xml");
    FAIL();
  } catch (const SceneError& e) {
    EXPECT_EQ(e.file(), "scene.xml");
    EXPECT_EQ(e.line(), test::lineOf(kScene, "radius=\"0.01\""));
    EXPECT_EQ(e.message(), "attribute 'radius' must be > 0 (got -2)");
  }
}

TEST(SceneOverrides, FillAPlaceholder) {
  const std::string text = test::replaceOnce(kScene, "<RecorderSettings mode=\"noOutput\"/>",
                                             "<RecorderSettings mode=\"${Study:mode}\"/>");
  EXPECT_THROW(loadSceneFromString(text, "scene.xml"), SceneError);
  const std::string out = apply({"SceneSettings/RecorderSettings/@mode=noOutput"}, text);
  EXPECT_NO_THROW(loadSceneFromString(out, "scene.xml"));
}

}  // namespace
}  // namespace grain::io
