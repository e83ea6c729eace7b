// SPDX-License-Identifier: MIT
// Helpers of the end-to-end tests: run folders in the build tree, plus the shared test helpers
// (running a command, whole-file text I/O, source and data folders).
#pragma once

#include <filesystem>
#include <sstream>
#include <string>

#include "../common/test_util.hpp"

namespace grain::testing {

/// A fresh empty folder <build>/e2e_tmp/`name` (kept after the test for inspection).
inline std::filesystem::path makeTempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(GRAIN_BINARY_DIR) / "e2e_tmp" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Scene XML of a static floor: one RigidBodies element holding the halfspace z >= 0 through the
/// origin, material 0, in body group `groupId`.
inline std::string floorBodiesXml(int groupId) {
  return R"(    <RigidBodies name="floor" instances="1" groupId=")" + std::to_string(groupId) +
         R"(">
      <Geometry><Halfspace distribute="uniform" normal="0 0 1"/></Geometry>
      <DynamicProperties>
        <DynamicState type="static"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms"><Pos><Trafo trans="0 0 0" axis="1 0 0" deg="0"/></Pos></InitialPosition>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)";
}

/// Scene XML of `instances` spinning bricks on a grid of 5 x `rows` (further layers above) dropped
/// onto a floor (they land after about 0.2 s, so later steps have contacts and a non-empty
/// warm-start cache), every `every`-th step recorded, until `endTime` (s).
inline std::string bricksSceneXml(double endTime, int every, int instances, int rows) {
  std::ostringstream s;
  s << R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="everyXTimeStep" everyXStep=")"
    << every << R"("/>
    <TimeStepperSettings deltaT="0.01" endTime=")"
    << endTime << R"(">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" maxIter="100" absTol="1e-7" relTol="1e-7" usePercussionCache="true"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces><ForceField applyTo="all" type="gravity" value="9.81" direction="0 0.2 -1"/></ExternalForces>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="bricks" instances=")"
    << instances << R"(" groupId="2">
      <Geometry><Box distribute="uniform" extent="0.3 0.2 0.1"/></Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="uniform" value="1.5"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="5" gridSizeY=")"
    << rows << R"(" distance="0.5"
              translation="0 0 0.4" jitter="true" delta="0.05" seed="11"/>
          <InitialVelocity distribute="transrot"><Vel transDir="1 0.5 0" absTransVel="0.7" rotDir="1 2 3" absRotVel="4"/></InitialVelocity>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
)" << floorBodiesXml(3)
    << R"(  </SceneObjects>
</DynamicsSystem>
)";
  return s.str();
}

}  // namespace grain::testing
