// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/contact/compatible_forces.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/core/timestepping/load_balance_settings.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/mesh_loader.hpp>
#include <grain/io/scene_error.hpp>
#include <grain/io/simulated_share.hpp>

/// Reading scene files (GRSF's XML scene format; element and attribute tables in
/// grain/io/scene_schema.hpp).
namespace grain::io {

/// When states are written to the .sim file.
enum class RecorderMode : std::uint8_t {
  EveryTimeStep,   ///< "everyTimeStep": the initial state and the end state of every step
  EveryXTimeStep,  ///< "everyXTimeStep": the initial state and every everyXStep-th step
  NoOutput,        ///< "noOutput": no .sim file
};

/// The names of the recorder modes in scene files (attribute mode).
inline constexpr settings::EnumName<RecorderMode> kRecorderModeNames[] = {
    {RecorderMode::EveryTimeStep, "everyTimeStep"},
    {RecorderMode::EveryXTimeStep, "everyXTimeStep"},
    {RecorderMode::NoOutput, "noOutput"},
};
constexpr std::span<const settings::EnumName<RecorderMode>> enumNames(RecorderMode) {
  return kRecorderModeNames;
}

/// RecorderSettings of a scene.
struct RecorderSettings {
  RecorderMode mode = RecorderMode::EveryTimeStep;
  /// Steps between written states (>= 1); 1 for EveryTimeStep. From everyXStep, or from
  /// statesPerSecond as max(1, floor(1/(statesPerSecond deltaT))).
  std::uint64_t everyXStep = 1;
  /// Written states per simulated second (1/s), if the scene gives them; the reader turns them
  /// into everyXStep when everyXStep is not given.
  std::optional<Real> statesPerSecond;

  /// Whether the state after step number `step` (counted from 1) is written. The initial
  /// state (step 0) is written whenever the mode is not NoOutput.
  bool records(std::uint64_t step) const {
    return mode != RecorderMode::NoOutput && step % everyXStep == 0;
  }

  /// The description of the members (grain/core/common/settings.hpp): the attributes of
  /// <RecorderSettings>, whose variant `mode` decides whether everyXStep and statesPerSecond are
  /// read (the scene schema documents mode per variant).
  template <class V>
  static constexpr void describe(V&& v) {
    using S = RecorderSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::mode>("mode").required().withDoc("when states are written to the .sim file"));
    v(field<&S::everyXStep>("everyXStep")
          .derived()
          .withBound(Bound::AtLeastOne)
          .withDoc("steps between written states; takes precedence over statesPerSecond; one "
                   "of the two is required"));
    v(field<&S::statesPerSecond>("statesPerSecond")
          .derived()
          .withBound(Bound::Positive)
          .withUnit("1/s")
          .withDoc("written states per simulated second: everyXStep = max(1, floor(1/"
                   "(statesPerSecond deltaT)))"));
  }
};

/// ContactForceOutput of a scene: which steps grain-sim writes to ContactForces.dat and whether
/// it adds compatible normal forces (docs/contact-output.md).
struct ContactForceOutputSettings {
  std::uint64_t everyXStep = 1;        ///< steps k with k % everyXStep == 0 are written (k >= 1)
  bool compatibleForces = false;       ///< compute compatible normal forces
  CompatibleForceSettings compatible;  ///< exponent, tolerance, maxIterations

  bool writes(std::uint64_t step) const { return step % everyXStep == 0; }

  /// The description of the members (grain/core/common/settings.hpp): the attributes of
  /// <ContactForceOutput>, followed there by those of CompatibleForceSettings::describe.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = ContactForceOutputSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::everyXStep>("everyXStep")
          .required()
          .withBound(Bound::AtLeastOne)
          .withDoc("write the contacts of every step k with k % everyXStep == 0 to "
                   "ContactForces.dat"));
    v(field<&S::compatibleForces>("compatibleForces")
          .withDoc("also compute compatible normal forces (Olsen-Kamrin, docs/contact-output.md)"));
  }
};

/// InclusionSolverSettings attributes that have no counterpart in the core solver settings.
struct SolverExtras {
  bool useGpu = false;           ///< requested GPU solve (grain solves on the CPU, with a warning)
  std::uint32_t gpuDevice = 0;   ///< useGPUID
  bool computeResidual = false;  ///< computeResidual

  /// The description of the members (grain/core/common/settings.hpp).
  template <class V>
  static constexpr void describe(V&& v) {
    using S = SolverExtras;
    using settings::field;
    v(field<&S::useGpu>("useGPU").required().withDoc(
        "grain has no GPU solver: true gives a warning and solves on the CPU"));
    v(field<&S::gpuDevice>("useGPUID").withDoc("GPU device (unused)"));
    v(field<&S::computeResidual>("computeResidual")
          .withDoc("keep checking every body after convergence"));
  }
};

/// One <RigidBodies> element: `count` bodies with ids makeBodyId(groupId, firstNumber + k)
/// (k = 0 .. count-1, the body index within the group; with selective loading only some of them
/// are built).
struct BodyGroup {
  std::string name;  ///< name attribute ("" if absent)
  std::uint32_t groupId = 0;
  std::uint32_t firstNumber = 0;  ///< body number of the first body (numbers continue across
                                  ///< RigidBodies with the same groupId)
  std::uint32_t count = 0;        ///< instances
  std::uint32_t loaded = 0;  ///< bodies selected (count unless selective loading applies), also
                             ///< those SceneLoadOptions::keepSimulatedBody or simulatedShare
                             ///< leaves to others
  BodyMotion motion = BodyMotion::Simulated;
  /// Prescribed velocity (m/s) and angular velocity (rad/s) of animated bodies, inertial frame.
  Vec3 animatedVelocity = Vec3::Zero();
  Vec3 animatedAngularVelocity = Vec3::Zero();
  ShapeIndex shape = 0;  ///< shape of the group's bodies (of the first loaded body if per body)
  /// true: the bodies have their own shapes (random spheres, GlobalGeomId linear or random).
  bool shapePerBody = false;
  /// "Sphere", "Box", "Capsule", "Halfspace", "Mesh" or "GlobalGeomId".
  std::string geometryElement;
  std::filesystem::path meshFile;  ///< resolved mesh file (Mesh only)
  MaterialId material = 0;
  bool enableSelectiveIds = false;
  std::size_t line = 0;  ///< line of the <RigidBodies> element
  /// Id of the k-th body of the group.
  BodyId id(std::uint32_t k) const { return makeBodyId(groupId, firstNumber + k); }

  /// The description of the members a scene gives (grain/core/common/settings.hpp): the
  /// attributes of <RigidBodies>, of <DynamicState type="animated"> and of <Material>.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = BodyGroup;
    using settings::field;
    v(field<&S::name>("name").withDoc("group name"));
    v(field<&S::count>("instances")
          .required()
          .withBound(settings::Bound::AtLeastOne)
          .withDoc("number of bodies"));
    v(field<&S::groupId>("groupId").derived().withDoc(
        "default: 0 for the first group, else the largest groupId so far + 1; body numbers "
        "continue across RigidBodies with the same groupId"));
    v(field<&S::enableSelectiveIds>("enableSelectiveIds")
          .withDoc("with GlobalSelectiveIds: load only the selected bodies of this group"));
    v(field<&S::animatedVelocity>("velocity")
          .in("DynamicState")
          .withUnit("m/s")
          .withDoc("velocity of the body's reference point (inertial frame): r(t) = r(0) + "
                   "velocity t"));
    v(field<&S::animatedAngularVelocity>("angularVelocity")
          .in("DynamicState")
          .withUnit("rad/s")
          .withDoc("angular velocity about the reference point (inertial frame): the body turns "
                   "about the fixed axis angularVelocity by |angularVelocity| t"));
    v(field<&S::material>("id")
          .required()
          .in("Material")
          .withDoc("material id (contact parameters)"));
  }
};

/// GlobalSelectiveIds: the bodies that groups with enableSelectiveIds="true" load.
struct SelectiveIds {
  std::vector<BodyId> set;                        ///< <Set value="g,n ...">
  std::vector<std::pair<BodyId, BodyId>> ranges;  ///< <Range>: [first, second)
  /// Whether the id is selected (in the set or in a range).
  bool contains(BodyId id) const;
};

/// Where the initial states came from when the scene has a GlobalInitialCondition.
struct InitialConditionSource {
  std::filesystem::path file;  ///< the .sim file as opened
  std::size_t stateIndex = 0;  ///< 0-based state in the file
  double stateTime = 0.0;      ///< its time (s)
  bool continueTime = false;   ///< useTimeToContinue: the run starts at stateTime
  bool readVelocities = true;
  /// false: the bodies' states were not read (SceneLoadOptions::readInitialState), the caller
  /// reads them.
  bool statesRead = true;
  std::size_t line = 0;  ///< line of the GlobalInitialCondition element, for messages
};

/// Everything a scene file describes.
struct SceneDescription {
  std::filesystem::path file;  ///< the scene file as given to loadScene
  /// Shapes, bodies (in document order, ids as in GRSF), contact parameters, gravity; time 0.
  DynamicsSystem system;
  StepperSettings stepper;  ///< deltaT, endTime, inclusion solver settings
  SolverExtras solverExtras;
  RecorderSettings recorder;
  /// ContactForceOutput, if the scene has one.
  std::optional<ContactForceOutputSettings> contactForceOutput;
  std::vector<BodyGroup> groups;  ///< in document order
  /// Per body (same order as system.bodies at load time): index into `groups`.
  std::vector<std::uint32_t> groupOfBody;
  /// Attributes and elements accepted for compatibility but without effect: "path@attribute"
  /// or "path" (an element), e.g.
  /// "SceneSettings/ContactParameterMap/ContactParameter[1]@invDampingN".
  std::vector<std::string> ignored;
  /// Non-fatal problems, each "file:line: path: message" (e.g. useGPU="true").
  std::vector<std::string> warnings;
  /// The MPISettings, if the scene has an <MPISettings> element (grain_mpi's settings type,
  /// declared in the core).
  std::optional<LoadBalanceSettings> mpi;
  /// GlobalSelectiveIds, if given.
  std::optional<SelectiveIds> selectiveIds;
  /// Set if the initial states were read from a .sim file (GlobalInitialCondition).
  std::optional<InitialConditionSource> initialCondition;
  /// Per body (same order as system.bodies at load time): its global geometry id, 0 if the
  /// body has its own geometry.
  std::vector<std::uint32_t> globalGeomIdOfBody;
  /// The scene text that was read (after command-line overrides).
  std::string text;
  /// The effective configuration: the scene as XML with every attribute grain uses, defaults
  /// and derived values (groupId, everyXStep) filled in, and a leading comment listing what was
  /// ignored. grain-sim prints it and writes it beside the output.
  std::string effectiveXml;

  /// Simulated body indices the loader visited (looked at, whether built or not): every index of
  /// every simulated group, or with SceneLoadOptions::simulatedShare (simulatedOrdinals) only
  /// those of the share (the ranges).
  std::uint64_t simulatedIndicesVisited = 0;

  /// The group of a body id, or nullptr.
  const BodyGroup* groupOf(BodyId id) const;
};

/// Options of loadScene.
struct SceneLoadOptions {
  /// Base directory of relative mesh paths; empty: the scene file's directory.
  std::filesystem::path mediaDirectory;
  /// The simulated bodies to build (empty: all). A distributed run builds a share of them on
  /// each process, so no process holds the whole scene. Static and animated bodies are always
  /// built; the scene is checked as a whole either way, and BodyGroup::loaded still counts every
  /// selected body of the group.
  std::function<bool(BodyId)> keepSimulatedBody;
  /// {part, parts}: build only the simulated bodies whose ordinal (SimulatedOrdinals, from the
  /// scene text alone) lies in share `part` of `parts` contiguous blocks (shareOf). The loader
  /// visits only those indices, so a process's work follows its share, not the scene. The
  /// bodies' initial states depend on their index alone (jitter, random radii and random global
  /// geometries draw from the stream (seed, index)), so every body is built with the bits of a
  /// serial load. Combines with keepSimulatedBody (both must accept a body).
  std::optional<std::pair<int, int>> simulatedShare;
  /// Build only the simulated bodies whose ordinals lie in these ranges (increasing, disjoint),
  /// visiting only those indices, each body with the bits of a serial load; an empty list builds
  /// no simulated body (the scene is still read and checked whole, and `loaded` counts every
  /// selected body). A distributed run that starts from a state builds in this way the bodies of
  /// the records each process read. With simulatedShare set too, the share is built; combines
  /// with keepSimulatedBody.
  std::optional<std::vector<OrdinalRange>> simulatedOrdinals;
  /// false: GlobalInitialCondition's .sim file is checked and its state chosen (time included),
  /// but the bodies' states are left to the caller (InitialConditionSource::statesRead), who
  /// reads them its own way (a distributed run: each process a slice of the state).
  bool readInitialState = true;
  /// Memory the run may use (bytes). Before anything is built, the bodies of all RigidBodies
  /// elements (their `instances`) times kEstimatedBytesPerBody is compared with it, and a scene
  /// that needs more is refused (SceneError at the `instances` attribute that goes beyond it,
  /// with the estimate). Unset: machineMemoryBytes(); 0: no check. A distributed run passes the
  /// memory of all its processes.
  std::optional<std::uint64_t> memoryBudget;
};

/// A lower bound of the memory a run needs per body (bytes): body storage, collision detection,
/// solver and output buffers without contacts (grain-sim measured 786 bytes per body in free
/// flight and 3.2 kB in a dense packing; docs/reliability.md).
inline constexpr std::uint64_t kEstimatedBytesPerBody = 768;

/// The memory this process can use (bytes): the physical memory, or less if a cgroup limit
/// (/sys/fs/cgroup/memory.max) or RLIMIT_AS / RLIMIT_DATA is lower.
std::uint64_t machineMemoryBytes();

/// A byte count for messages: "512 B", "1.5 kB", "3.2 GB", "1 TB" (decimal units).
std::string formatBytes(double bytes);

/// Reads a scene file and builds the system. Throws SceneError ("file:line: path: message")
/// for malformed XML, unknown elements or attributes (with the closest valid name), missing
/// required ones, impossible values, unfilled `${...}` placeholders, missing mesh or .sim files
/// and elements that grain does not support yet.
SceneDescription loadScene(const std::filesystem::path& file, const SceneLoadOptions& options = {});

/// As loadScene, for scene text held in memory (e.g. after command-line overrides). `file` is
/// the name used in messages and SceneDescription::file, and its folder is the default media
/// directory.
SceneDescription loadSceneFromString(std::string text, const std::filesystem::path& file,
                                     const SceneLoadOptions& options = {});

struct SimBodyState;

/// Copies a body record of a GlobalInitialCondition's state into body i of `bodies`: position,
/// orientation (normalised) and, with source.readVelocities, the velocities.
void applyInitialState(const InitialConditionSource& source, BodyStorage& bodies, std::size_t i,
                       const SimBodyState& body);
/// "(g,n), (g,n), ...": the first `most` of `ids`.
std::string nameBodies(const std::vector<BodyId>& ids, std::size_t most = 5);
/// The message of a GlobalInitialCondition whose state lacks `count` simulated bodies, `named`
/// the first of them (nameBodies; ", ..." follows when count is larger than five).
std::string missingInitialBodiesMessage(const InitialConditionSource& source, std::uint64_t count,
                                        const std::string& named);

/// The content of a scene file; throws SceneError "FILE: cannot open the scene file".
std::string readSceneText(const std::filesystem::path& file);

}  // namespace grain::io
