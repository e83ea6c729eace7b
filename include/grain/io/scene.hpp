// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/mesh_loader.hpp>
#include <grain/io/scene_error.hpp>

/// Reading scene files (GRSF's XML scene format; element and attribute tables in
/// grain/io/scene_schema.hpp).
namespace grain::io {

/// When states are written to the .sim file.
enum class RecorderMode : std::uint8_t {
  EveryTimeStep,   ///< "everyTimeStep": the initial state and the end state of every step
  EveryXTimeStep,  ///< "everyXTimeStep": the initial state and every everyXStep-th step
  NoOutput,        ///< "noOutput": no .sim file
};

/// RecorderSettings of a scene.
struct RecorderSettings {
  RecorderMode mode = RecorderMode::EveryTimeStep;
  /// Steps between written states (>= 1); 1 for EveryTimeStep. From everyXStep, or from
  /// statesPerSecond as max(1, floor(1/(statesPerSecond deltaT))).
  std::uint64_t everyXStep = 1;

  /// Whether the state after step number `step` (counted from 1) is written. The initial
  /// state (step 0) is written whenever the mode is not NoOutput.
  bool records(std::uint64_t step) const {
    return mode != RecorderMode::NoOutput && step % everyXStep == 0;
  }
};

/// InclusionSolverSettings attributes that have no counterpart in the core solver settings.
struct SolverExtras {
  bool useGpu = false;           ///< requested GPU solve (grain solves on the CPU, with a warning)
  std::uint32_t gpuDevice = 0;   ///< useGPUID
  bool computeResidual = false;  ///< computeResidual
};

/// One <RigidBodies> element: `count` bodies with ids makeBodyId(groupId, firstNumber + k).
struct BodyGroup {
  std::string name;  ///< name attribute ("" if absent)
  std::uint32_t groupId = 0;
  std::uint32_t firstNumber = 0;  ///< body number of the first body (numbers continue across
                                  ///< RigidBodies with the same groupId)
  std::uint32_t count = 0;
  BodyMotion motion = BodyMotion::Simulated;
  ShapeIndex shape = 0;            ///< shape shared by the group's bodies
  std::string geometryElement;     ///< "Sphere", "Box", "Capsule", "Halfspace" or "Mesh"
  std::filesystem::path meshFile;  ///< resolved mesh file (Mesh only)
  MaterialId material = 0;
  bool enableSelectiveIds = false;
  std::size_t line = 0;  ///< line of the <RigidBodies> element
  /// Id of the k-th body of the group.
  BodyId id(std::uint32_t k) const { return makeBodyId(groupId, firstNumber + k); }
};

/// Everything a scene file describes.
struct SceneDescription {
  std::filesystem::path file;  ///< the scene file as given to loadScene
  /// Shapes, bodies (in document order, ids as in GRSF), contact parameters, gravity; time 0.
  DynamicsSystem system;
  StepperSettings stepper;  ///< deltaT, endTime, inclusion solver settings
  SolverExtras solverExtras;
  RecorderSettings recorder;
  std::vector<BodyGroup> groups;  ///< in document order
  /// Per body (same order as system.bodies at load time): index into `groups`.
  std::vector<std::uint32_t> groupOfBody;
  /// Attributes and elements accepted for compatibility but without effect: "path@attribute"
  /// or "path" (an element), e.g.
  /// "SceneSettings/ContactParameterMap/ContactParameter[1]@invDampingN".
  std::vector<std::string> ignored;
  /// Non-fatal problems, each "file:line: path: message" (e.g. useGPU="true").
  std::vector<std::string> warnings;
  /// The scene has an <MPISettings> element (read by the distributed front end).
  bool hasMpiSettings = false;

  /// The group of a body id, or nullptr.
  const BodyGroup* groupOf(BodyId id) const;
};

/// Options of loadScene.
struct SceneLoadOptions {
  /// Base directory of relative mesh paths; empty: the scene file's directory.
  std::filesystem::path mediaDirectory;
};

/// Reads a scene file and builds the system. Throws SceneError ("file:line: path: message")
/// for malformed XML, unknown elements or attributes, missing required ones, impossible values
/// and elements that grain does not support yet.
SceneDescription loadScene(const std::filesystem::path& file, const SceneLoadOptions& options = {});

}  // namespace grain::io
