// SPDX-License-Identifier: MIT
// A program built against an installed grain: a sphere dropped onto a floor (a two-body scene
// read through grain::io, stepped through grain::core) comes to rest on it, its centre at its
// radius above the floor. Exit code 0 if so, 1 otherwise.
#include <cmath>
#include <iostream>
#include <string>

#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/version.hpp>

namespace {

// Sphere of radius 0.05 m and mass 0.2 kg released 0.25 m above the floor z = 0; fully
// inelastic contact (epsilonN = 0), gravity 9.81 m/s^2 along -z, time step 1e-4 s.
const char* const kScene = R"(<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="noOutput"/>
    <TimeStepperSettings deltaT="1e-4" endTime="0.6">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.0" maxIter="1000" absTol="1e-12" relTol="1e-12"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.3" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces>
      <ForceField applyTo="all" type="gravity" value="9.81" direction="0 0 -1"/>
    </ExternalForces>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="ball" instances="1" groupId="0">
      <Geometry><Sphere distribute="uniform" radius="0.05"/></Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="uniform" value="0.2"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms">
            <Pos><Trafo trans="0 0 0.3" axis="0 0 1" deg="0"/></Pos>
          </InitialPosition>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
    <RigidBodies name="floor" instances="1" groupId="1">
      <Geometry><Halfspace distribute="uniform" normal="0 0 1"/></Geometry>
      <DynamicProperties>
        <DynamicState type="static"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms">
            <Pos><Trafo trans="0 0 0" axis="0 0 1" deg="0"/></Pos>
          </InitialPosition>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
  </SceneObjects>
</DynamicsSystem>
)";

}  // namespace

int main() {
  if (grain::versionString() != GRAIN_PACKAGE_VERSION) {
    std::cerr << "library version " << grain::versionString() << ", package version "
              << GRAIN_PACKAGE_VERSION << "\n";
    return 1;
  }
  grain::io::SceneDescription scene = grain::io::loadSceneFromString(kScene, "falling_sphere.xml");
  grain::DynamicsSystem& system = scene.system;
  if (system.bodies.size() != 2) {
    std::cerr << "expected 2 bodies, read " << system.bodies.size() << "\n";
    return 1;
  }
  grain::MoreauStepper stepper(scene.stepper);
  const auto steps = static_cast<int>(std::lround(scene.stepper.endTime / scene.stepper.deltaT));
  grain::StepStats last;
  for (int k = 0; k < steps; ++k) {
    last = stepper.step(system);
  }
  const double radius = 0.05;                                 // m
  const double height = system.bodies.positions()[0].z();     // m, of the sphere's centre
  const double speed = system.bodies.velocities()[0].norm();  // m/s
  std::cout << "grain " << grain::versionString() << ": after " << steps << " steps the sphere's "
            << "centre is at z = " << height << " m (radius " << radius << " m), speed " << speed
            << " m/s, contacts " << last.contacts << "\n";
  // Falling 0.25 m, it hits the floor at about 2.2 m/s: at most one step of that speed
  // (0.22 mm) of penetration, then at rest on the floor.
  const bool resting = last.contacts == 1 && std::abs(height - radius) < 3e-4 && speed < 1e-6;
  return resting ? 0 : 1;
}
