// SPDX-License-Identifier: MIT
#include <algorithm>

#include <grain/io/scene_schema.hpp>

#include "io/xml_reader.hpp"

namespace grain::io::schema {

namespace {

// clang-format off
using A = AttributeSpec;
using C = ChildSpec;
using T = AttrType;
using U = AttrUse;
using B = Bound;

// Each attribute: {name, type, use, default, bound, values, unsupported values, doc}.

// ---- Root -------------------------------------------------------------------------------------

constexpr C kRootChildren[] = {
    {"SceneSettings", 1, 1, ChildUse::Parse},
    {"SceneObjects", 0, 1, ChildUse::Parse},
};

// ---- SceneSettings ----------------------------------------------------------------------------

constexpr C kSceneSettingsChildren[] = {
    {"Visualization", 0, 1, ChildUse::IgnoredGui},
    {"RecorderSettings", 1, 1, ChildUse::Parse},
    {"TimeStepperSettings", 1, 1, ChildUse::Parse},
    {"ContactParameterMap", 0, 1, ChildUse::Parse},
    {"GlobalGeometries", 0, 1, ChildUse::Unsupported},
    {"ExternalForces", 0, 1, ChildUse::Parse},
    {"GlobalInitialCondition", 0, 1, ChildUse::Unsupported},
    {"GlobalSelectiveIds", 0, 1, ChildUse::Unsupported},
    {"MPISettings", 0, 1, ChildUse::ReadLater},
};

constexpr std::string_view kRecorderModes = "everyTimeStep|everyXTimeStep|noOutput";

constexpr A kRecorderEveryStep[] = {
    {"mode", T::Enumeration, U::Required, {}, B::None, kRecorderModes, {},
     "everyTimeStep: write the initial state and every step's end state"},
    {"everyXStep", T::Integer, U::Ignored, {}, B::AtLeastOne, {}, {}, "only for everyXTimeStep"},
    {"statesPerSecond", T::Real, U::Ignored, {}, B::Positive, {}, {}, "only for everyXTimeStep"},
};
constexpr A kRecorderEveryX[] = {
    {"mode", T::Enumeration, U::Required, {}, B::None, kRecorderModes, {},
     "everyXTimeStep: write the initial state and the state after every step k with "
     "k % everyXStep == 0"},
    {"everyXStep", T::Integer, U::Optional, {}, B::AtLeastOne, {}, {},
     "steps between written states; takes precedence over statesPerSecond; one of the two is "
     "required"},
    {"statesPerSecond", T::Real, U::Optional, {}, B::Positive, {}, {},
     "written states per simulated second (1/s): everyXStep = max(1, floor(1/(statesPerSecond "
     "deltaT)))"},
};
constexpr A kRecorderNoOutput[] = {
    {"mode", T::Enumeration, U::Required, {}, B::None, kRecorderModes, {},
     "noOutput: no .sim file"},
    {"everyXStep", T::Integer, U::Ignored, {}, B::AtLeastOne, {}, {}, "only for everyXTimeStep"},
    {"statesPerSecond", T::Real, U::Ignored, {}, B::Positive, {}, {}, "only for everyXTimeStep"},
};

constexpr A kTimeStepper[] = {
    {"deltaT", T::Real, U::Required, {}, B::Positive, {}, {}, "time step (s)"},
    {"endTime", T::Real, U::Required, {}, B::NonNegative, {}, {}, "end of the simulation (s)"},
};
constexpr C kTimeStepperChildren[] = {
    {"InclusionSolverSettings", 1, 1, ChildUse::Parse},
    {"SimulateFromReference", 0, 1, ChildUse::Parse},
};

constexpr A kSimulateFromReference[] = {
    {"enabled", T::Boolean, U::Required, {}, B::None, {}, {},
     "only enabled=\"false\" is supported yet"},
    {"type", T::Enumeration, U::Optional, {}, B::None, "continue|useStates", {}, {}},
    {"file", T::String, U::Optional, {}, B::None, {}, {}, {}},
};

constexpr A kInclusionSolver[] = {
    {"method", T::Enumeration, U::Required, {}, B::None,
     "SOR|SORContact|SORFull|SORNormalTangential|JOR", {}, "iteration scheme; SOR = SORContact"},
    {"useGPU", T::Boolean, U::Required, {}, B::None, {}, {},
     "grain has no GPU solver: true gives a warning and solves on the CPU"},
    {"useGPUID", T::Integer, U::Optional, "0", B::None, {}, {}, "GPU device (unused)"},
    {"alphaJORProx", T::Real, U::Required, {}, B::OpenZeroTwo, {}, {}, "JOR relaxation"},
    {"alphaSORProx", T::Real, U::Required, {}, B::OpenZeroTwo, {}, {}, "SOR relaxation"},
    {"matrixRStrategy", T::Enumeration, U::Optional, "max", B::None, "max|sum", "sum2",
     "how the prox metric R is taken from the Delassus block"},
    {"subMethodUCF", T::Enumeration, U::Optional, "AC", B::None, "AC|DS", {},
     "AC: Alart-Curnier (R+ and disk); DS: De Saxce cone"},
    {"convergenceMethod", T::Enumeration, U::Optional, "InVelocity", B::None,
     "InLambda|InVelocity|InVelocityLocal|InEnergyVelocity", "InEnergyLocalMix", {}},
    {"minIter", T::Integer, U::Optional, "0", B::None, {}, {}, "minimum number of sweeps"},
    {"maxIter", T::Integer, U::Required, {}, B::AtLeastOne, {}, {}, "maximum number of sweeps"},
    {"absTol", T::Real, U::Required, {}, B::NonNegative, {}, {}, "absolute tolerance"},
    {"relTol", T::Real, U::Required, {}, B::NonNegative, {}, {}, "relative tolerance"},
    {"computeResidual", T::Boolean, U::Optional, "false", B::None, {}, {}, {}},
    {"computeTotalOverlap", T::Boolean, U::Optional, "false", B::None, {}, {},
     "per-body sum of penetrations (m)"},
    {"usePercussionCache", T::Boolean, U::Optional, "false", B::None, {}, {},
     "warm start from the previous step"},
    {"reserveContacts", T::Integer, U::Optional, "1000", B::None, {}, {}, {}},
    {"isFiniteCheck", T::Boolean, U::Optional, "false", B::None, {}, {}, {}},
    {"driftCorrectionGap", T::Boolean, U::Optional, "false", B::None, {}, {}, {}},
    {"driftCorrectionGapAlpha", T::Real, U::Optional, "0.2", B::UnitInterval, {}, {},
     "required when driftCorrectionGap is true"},
};

// ---- ContactParameterMap ----------------------------------------------------------------------

constexpr C kContactMapChildren[] = {
    {"ContactParameterStandard", 0, 1, ChildUse::Parse},
    {"ContactParameter", 0, kUnbounded, ChildUse::Parse},
};

constexpr std::string_view kContactTypes = "UCF|UCFD";
constexpr std::string_view kContactTypesLater = "UCFDD";
constexpr std::string_view kUcfDoc = "UCF: unilateral contact, Coulomb friction, Newton impacts";
constexpr std::string_view kUcfdDoc = "UCFD: UCF with inverse dampings";

constexpr A kStandardUcf[] = {
    {"type", T::Enumeration, U::Required, {}, B::None, kContactTypes, kContactTypesLater, kUcfDoc},
    {"mu", T::Real, U::Required, {}, B::NonNegative, {}, {}, "Coulomb friction coefficient"},
    {"epsilonN", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "normal restitution"},
    {"epsilonT", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "tangential restitution"},
    {"invDampingN", T::Real, U::Ignored, {}, B::NonNegative, {}, {}, "only for UCFD"},
    {"invDampingT", T::Real, U::Ignored, {}, B::NonNegative, {}, {}, "only for UCFD"},
};
constexpr A kStandardUcfd[] = {
    {"type", T::Enumeration, U::Required, {}, B::None, kContactTypes, kContactTypesLater, kUcfdDoc},
    {"mu", T::Real, U::Required, {}, B::NonNegative, {}, {}, "Coulomb friction coefficient"},
    {"epsilonN", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "normal restitution"},
    {"epsilonT", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "tangential restitution"},
    {"invDampingN", T::Real, U::Required, {}, B::NonNegative, {}, {}, "normal (s/kg)"},
    {"invDampingT", T::Real, U::Required, {}, B::NonNegative, {}, {}, "tangential (s/kg)"},
};
constexpr A kPairUcf[] = {
    {"materialId1", T::Integer, U::Required, {}, B::None, {}, {}, {}},
    {"materialId2", T::Integer, U::Required, {}, B::None, {}, {}, {}},
    {"type", T::Enumeration, U::Required, {}, B::None, kContactTypes, kContactTypesLater, kUcfDoc},
    {"mu", T::Real, U::Required, {}, B::NonNegative, {}, {}, "Coulomb friction coefficient"},
    {"epsilonN", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "normal restitution"},
    {"epsilonT", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "tangential restitution"},
    {"invDampingN", T::Real, U::Ignored, {}, B::NonNegative, {}, {}, "only for UCFD"},
    {"invDampingT", T::Real, U::Ignored, {}, B::NonNegative, {}, {}, "only for UCFD"},
};
constexpr A kPairUcfd[] = {
    {"materialId1", T::Integer, U::Required, {}, B::None, {}, {}, {}},
    {"materialId2", T::Integer, U::Required, {}, B::None, {}, {}, {}},
    {"type", T::Enumeration, U::Required, {}, B::None, kContactTypes, kContactTypesLater, kUcfdDoc},
    {"mu", T::Real, U::Required, {}, B::NonNegative, {}, {}, "Coulomb friction coefficient"},
    {"epsilonN", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "normal restitution"},
    {"epsilonT", T::Real, U::Required, {}, B::UnitInterval, {}, {}, "tangential restitution"},
    {"invDampingN", T::Real, U::Required, {}, B::NonNegative, {}, {}, "normal (s/kg)"},
    {"invDampingT", T::Real, U::Required, {}, B::NonNegative, {}, {}, "tangential (s/kg)"},
};

// ---- ExternalForces ---------------------------------------------------------------------------

constexpr C kExternalForcesChildren[] = {
    {"ForceField", 0, kUnbounded, ChildUse::Parse},
};
constexpr A kGravity[] = {
    {"type", T::Enumeration, U::Required, {}, B::None, "gravity", "spatialspherical-timerandom",
     {}},
    {"applyTo", T::Enumeration, U::Optional, "all", B::None, "all|All|ALL", {},
     "bodies the field acts on"},
    {"value", T::Real, U::Required, {}, B::NonNegative, {}, {}, "acceleration (m/s^2)"},
    {"direction", T::Vector3, U::Required, {}, B::NonZeroVector, {}, {},
     "direction in the inertial frame (normalised)"},
};

// ---- SceneObjects -----------------------------------------------------------------------------

constexpr C kSceneObjectsChildren[] = {
    {"RigidBodies", 0, kUnbounded, ChildUse::Parse},
    {"GlobalSelectiveIds", 0, 1, ChildUse::Unsupported},
};

constexpr A kRigidBodies[] = {
    {"name", T::String, U::Optional, "", B::None, {}, {}, "group name"},
    {"instances", T::Integer, U::Required, {}, B::AtLeastOne, {}, {}, "number of bodies"},
    {"groupId", T::Integer, U::Optional, {}, B::None, {}, {},
     "default: 0 for the first group, else the largest groupId so far + 1; body numbers continue "
     "across RigidBodies with the same groupId"},
    {"enableSelectiveIds", T::Boolean, U::Optional, "false", B::None, {}, {},
     "group takes part in selective loading (distributed runs)"},
};
constexpr C kRigidBodiesChildren[] = {
    {"Geometry", 1, 1, ChildUse::Parse},
    {"DynamicProperties", 1, 1, ChildUse::Parse},
    {"Visualization", 0, 1, ChildUse::IgnoredGui},
};

constexpr C kGeometryChildren[] = {
    {"Sphere", 0, 1, ChildUse::Parse},
    {"Box", 0, 1, ChildUse::Parse},
    {"Capsule", 0, 1, ChildUse::Parse},
    {"Halfspace", 0, 1, ChildUse::Parse},
    {"Mesh", 0, 1, ChildUse::Parse},
    {"GlobalGeomId", 0, 1, ChildUse::Unsupported},
};

constexpr A kSphereUniform[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform", "random", {}},
    {"radius", T::Real, U::Required, {}, B::Positive, {}, {}, "radius (m)"},
};
constexpr A kBoxUniform[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform", {}, {}},
    {"extent", T::Vector3, U::Required, {}, B::PositiveVector, {}, {},
     "full edge lengths along the body axes (m)"},
    {"center", T::Vector3, U::Optional, "0 0 0", B::None, {}, {},
     "box centre in the body frame (m)"},
};
constexpr A kCapsuleUniform[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform", {}, {}},
    {"normal", T::Vector3, U::Required, {}, B::NonZeroVector, {}, {}, "axis in the body frame"},
    {"radius", T::Real, U::Required, {}, B::Positive, {}, {}, "radius (m)"},
    {"length", T::Real, U::Required, {}, B::Positive, {}, {}, "distance of the cap centres (m)"},
    {"position", T::Vector3, U::Ignored, {}, B::None, {}, {}, "the capsule is centred at the body"},
};
constexpr A kHalfspaceUniform[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform", {}, {}},
    {"normal", T::Vector3, U::Required, {}, B::NonZeroVector, {}, {},
     "outward normal in the body frame"},
    {"position", T::Vector3, U::Ignored, {}, B::None, {}, {},
     "the plane passes through the body position"},
};
constexpr A kMeshUniform[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform", {}, {}},
    {"file", T::String, U::Required, {}, B::None, {}, {},
     "mesh file; relative paths are resolved against the media directory"},
    {"scale", T::Vector3, U::Optional, "1 1 1", B::NonZeroComponents, {}, {},
     "per-axis scale applied first"},
    {"rotAxis", T::Vector3, U::Optional, "1 0 0", B::NonZeroVector, {}, {},
     "rotation applied after scaling; when given, deg or rad is required"},
    {"deg", T::Real, U::Optional, {}, B::None, {}, {}, "rotation angle (degrees)"},
    {"rad", T::Real, U::Optional, {}, B::None, {}, {}, "rotation angle (radians)"},
    {"trans", T::Vector3, U::Optional, "0 0 0", B::None, {}, {},
     "translation applied last (m, body frame)"},
    {"name", T::String, U::Ignored, {}, B::None, {}, {}, {}},
    {"writeToLog", T::Boolean, U::Ignored, {}, B::None, {}, {}, {}},
    {"useInstance", T::String, U::Ignored, {}, B::None, {}, {}, {}},
    {"rotationAxis", T::String, U::Ignored, {}, B::None, {}, {}, {}},
    {"angleDegree", T::String, U::Ignored, {}, B::None, {}, {}, {}},
    {"translation", T::String, U::Ignored, {}, B::None, {}, {}, {}},
};

constexpr C kDynamicPropertiesChildren[] = {
    {"DynamicState", 1, 1, ChildUse::Parse},
    {"Mass", 0, 1, ChildUse::Parse},
    {"InertiaTensor", 0, 1, ChildUse::Parse},
    {"Material", 1, 1, ChildUse::Parse},
    {"InitialCondition", 1, 1, ChildUse::Parse},
};
constexpr A kDynamicState[] = {
    {"type", T::Enumeration, U::Required, {}, B::None, "simulated|static|not simulated",
     "animated", "static and \"not simulated\" are the same"},
};
constexpr A kMassUniform[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform|homogen", {}, {}},
    {"value", T::Real, U::Required, {}, B::Positive, {}, {}, "mass of each body (kg)"},
};
constexpr A kMassHomogen[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform|homogen", {}, {}},
    {"density", T::Real, U::Required, {}, B::Positive, {}, {}, "density (kg/m^3)"},
};
constexpr A kInertiaHomogen[] = {
    {"type", T::Enumeration, U::Required, {}, B::None, "homogen", {},
     "principal inertia of the homogeneous solid of the body's mass"},
};
constexpr A kMaterialUniform[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "uniform", {}, {}},
    {"id", T::Integer, U::Required, {}, B::None, {}, {}, "material id (contact parameters)"},
};

constexpr A kInitialConditionPosVel[] = {
    {"type", T::Enumeration, U::Required, {}, B::None, "posvel", "file", {}},
};
constexpr C kInitialConditionChildren[] = {
    {"InitialPosition", 1, 1, ChildUse::Parse},
    {"InitialVelocity", 0, 1, ChildUse::Parse},
};

constexpr std::string_view kPositionKinds = "linear|grid|transforms|none";
constexpr A kPositionLinear[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, kPositionKinds, "generalized", {}},
    {"position", T::Vector3, U::Required, {}, B::None, {}, {}, "first body (m)"},
    {"direction", T::Vector3, U::Required, {}, B::NonZeroVector, {}, {}, "line direction"},
    {"distance", T::Real, U::Required, {}, B::NonNegative, {}, {}, "spacing (m)"},
    {"jitter", T::Boolean, U::Required, {}, B::None, {}, {},
     "add delta times a random unit vector perpendicular to direction"},
    {"delta", T::Real, U::Required, {}, B::NonNegative, {}, {}, "jitter length (m)"},
    {"seed", T::Integer, U::Optional, "5", B::None, {}, {}, "jitter seed"},
};
constexpr A kPositionGrid[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, kPositionKinds, "generalized", {}},
    {"translation", T::Vector3, U::Required, {}, B::None, {}, {}, "grid origin (m)"},
    {"gridSizeX", T::Integer, U::Required, {}, B::AtLeastOne, {}, {}, "bodies along x"},
    {"gridSizeY", T::Integer, U::Required, {}, B::AtLeastOne, {}, {}, "bodies along y"},
    {"distance", T::Real, U::Required, {}, B::NonNegative, {}, {}, "spacing (m)"},
    {"jitter", T::Boolean, U::Required, {}, B::None, {}, {},
     "add delta times a random unit vector"},
    {"delta", T::Real, U::Required, {}, B::NonNegative, {}, {}, "jitter length (m)"},
    {"seed", T::Integer, U::Optional, "5", B::None, {}, {}, "jitter seed"},
    {"dirZ", T::Vector3, U::Optional, "0 0 1", B::NonZeroVector, {}, {},
     "stacking direction of the grid"},
    {"dirX", T::Vector3, U::Optional, "1 0 0", B::NonZeroVector, {}, {},
     "fastest-running grid direction (made orthogonal to dirZ)"},
};
constexpr A kPositionTransforms[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, kPositionKinds, "generalized", {}},
};
constexpr C kPositionTransformsChildren[] = {
    {"Pos", 1, kUnbounded, ChildUse::Parse},
};
constexpr A kPositionNone[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, kPositionKinds, "generalized",
     "every body at the origin with identity orientation"},
};
constexpr C kPosChildren[] = {
    {"Trafo", 1, kUnbounded, ChildUse::Parse},
};
constexpr A kTrafo[] = {
    {"trans", T::Vector3, U::Required, {}, B::None, {}, {},
     "translation in the current frame: r += q trans"},
    {"axis", T::Vector3, U::Required, {}, B::NonZeroVector, {}, {},
     "rotation axis in the current frame: q = q q(axis, angle)"},
    {"deg", T::Real, U::Optional, {}, B::None, {}, {}, "angle (degrees); exactly one of deg, rad"},
    {"rad", T::Real, U::Optional, {}, B::None, {}, {}, "angle (radians)"},
};

constexpr A kVelocityTransRot[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "transrot|none", "generalized", {}},
};
constexpr C kVelocityTransRotChildren[] = {
    {"Vel", 1, kUnbounded, ChildUse::Parse},
};
constexpr A kVelocityNone[] = {
    {"distribute", T::Enumeration, U::Required, {}, B::None, "transrot|none", "generalized",
     "all bodies at rest"},
};
constexpr A kVel[] = {
    {"transDir", T::Vector3, U::Required, {}, B::NonZeroVector, {}, {},
     "direction of v_S (inertial frame)"},
    {"absTransVel", T::Real, U::Required, {}, B::None, {}, {}, "|v_S| (m/s)"},
    {"rotDir", T::Vector3, U::Required, {}, B::NonZeroVector, {}, {},
     "direction of the angular velocity (body frame)"},
    {"absRotVel", T::Real, U::Required, {}, B::None, {}, {}, "|omega| (rad/s)"},
};

// ---- The table --------------------------------------------------------------------------------
// Specifications of the same element name must be adjacent (elementsNamed returns a span).
// Each element: {name, discriminating attribute, its value, implemented, attributes, children,
// doc}.

constexpr ElementSpec kElements[] = {
    {"DynamicsSystem", {}, {}, true, {}, kRootChildren,
     "root; xmlns, xmlns:* and xsi:* attributes are accepted"},
    {"SceneSettings", {}, {}, true, {}, kSceneSettingsChildren, {}},
    {"RecorderSettings", "mode", "everyTimeStep", true, kRecorderEveryStep, {}, {}},
    {"RecorderSettings", "mode", "everyXTimeStep", true, kRecorderEveryX, {}, {}},
    {"RecorderSettings", "mode", "noOutput", true, kRecorderNoOutput, {}, {}},
    {"TimeStepperSettings", {}, {}, true, kTimeStepper, kTimeStepperChildren, {}},
    {"SimulateFromReference", {}, {}, true, kSimulateFromReference, {}, {}},
    {"InclusionSolverSettings", {}, {}, true, kInclusionSolver, {}, {}},
    {"ContactParameterMap", {}, {}, true, {}, kContactMapChildren,
     "without it, or without ContactParameterStandard, the standard law is UCF mu=0.3 "
     "epsilonN=0.5 epsilonT=0.5"},
    {"ContactParameterStandard", "type", "UCF", true, kStandardUcf, {}, {}},
    {"ContactParameterStandard", "type", "UCFD", true, kStandardUcfd, {}, {}},
    {"ContactParameterStandard", "type", "UCFDD", false, {}, {}, {}},
    {"ContactParameter", "type", "UCF", true, kPairUcf, {}, "materials form an unordered pair"},
    {"ContactParameter", "type", "UCFD", true, kPairUcfd, {}, "materials form an unordered pair"},
    {"ContactParameter", "type", "UCFDD", false, {}, {}, {}},
    {"ExternalForces", {}, {}, true, {}, kExternalForcesChildren, {}},
    {"ForceField", "type", "gravity", true, kGravity, {}, {}},
    {"ForceField", "type", "spatialspherical-timerandom", false, {}, {}, {}},
    {"SceneObjects", {}, {}, true, {}, kSceneObjectsChildren, {}},
    {"RigidBodies", {}, {}, true, kRigidBodies, kRigidBodiesChildren, {}},
    {"Geometry", {}, {}, true, {}, kGeometryChildren, "exactly one child"},
    {"Sphere", "distribute", "uniform", true, kSphereUniform, {}, {}},
    {"Sphere", "distribute", "random", false, {}, {}, {}},
    {"Box", "distribute", "uniform", true, kBoxUniform, {}, {}},
    {"Capsule", "distribute", "uniform", true, kCapsuleUniform, {}, {}},
    {"Halfspace", "distribute", "uniform", true, kHalfspaceUniform, {}, {}},
    {"Mesh", "distribute", "uniform", true, kMeshUniform, {},
     "static bodies only; vertices v -> R(rotAxis, angle) (scale * v) + trans"},
    {"DynamicProperties", {}, {}, true, {}, kDynamicPropertiesChildren,
     "Mass and InertiaTensor are required for simulated bodies and ignored for static ones"},
    {"DynamicState", {}, {}, true, kDynamicState, {}, {}},
    {"Mass", "distribute", "uniform", true, kMassUniform, {}, {}},
    {"Mass", "distribute", "homogen", true, kMassHomogen, {}, {}},
    {"InertiaTensor", "type", "homogen", true, kInertiaHomogen, {}, {}},
    {"Material", "distribute", "uniform", true, kMaterialUniform, {}, {}},
    {"InitialCondition", "type", "posvel", true, kInitialConditionPosVel,
     kInitialConditionChildren, "InitialVelocity is ignored for static bodies"},
    {"InitialCondition", "type", "file", false, {}, {}, {}},
    {"InitialPosition", "distribute", "linear", true, kPositionLinear, {}, {}},
    {"InitialPosition", "distribute", "grid", true, kPositionGrid, {}, {}},
    {"InitialPosition", "distribute", "transforms", true, kPositionTransforms,
     kPositionTransformsChildren, "body k takes Pos k; the last Pos repeats"},
    {"InitialPosition", "distribute", "none", true, kPositionNone, {}, {}},
    {"InitialPosition", "distribute", "generalized", false, {}, {}, {}},
    {"Pos", {}, {}, true, {}, kPosChildren, "Trafo elements composed left to right"},
    {"Trafo", {}, {}, true, kTrafo, {}, {}},
    {"InitialVelocity", "distribute", "transrot", true, kVelocityTransRot,
     kVelocityTransRotChildren, "body k takes Vel k; the last Vel repeats"},
    {"InitialVelocity", "distribute", "none", true, kVelocityNone, {}, {}},
    {"InitialVelocity", "distribute", "generalized", false, {}, {}, {}},
    {"Vel", {}, {}, true, kVel, {}, {}},
};
// clang-format on

}  // namespace

std::span<const ElementSpec> elements() {
  return kElements;
}

std::span<const ElementSpec> elementsNamed(std::string_view name) {
  const auto first = std::find_if(std::begin(kElements), std::end(kElements),
                                  [&](const ElementSpec& e) { return e.name == name; });
  auto last = first;
  while (last != std::end(kElements) && last->name == name) {
    ++last;
  }
  return {first, last};
}

const AttributeSpec* findAttribute(const ElementSpec& spec, std::string_view name) {
  for (const AttributeSpec& a : spec.attributes) {
    if (a.name == name) {
      return &a;
    }
  }
  return nullptr;
}

bool acceptsValue(const AttributeSpec& spec, std::string_view text) {
  const auto inRange = [&](double v) {
    switch (spec.bound) {
      case Bound::Positive:
        return v > 0.0;
      case Bound::NonNegative:
        return v >= 0.0;
      case Bound::UnitInterval:
        return v >= 0.0 && v <= 1.0;
      case Bound::OpenZeroTwo:
        return v > 0.0 && v < 2.0;
      case Bound::AtLeastOne:
        return v >= 1.0;
      default:
        return true;
    }
  };
  switch (spec.type) {
    case AttrType::Real: {
      const auto v = detail::parseReal(text);
      return v && inRange(*v);
    }
    case AttrType::Integer: {
      const auto v = detail::parseUnsigned(text);
      return v && inRange(static_cast<double>(*v));
    }
    case AttrType::Boolean:
      return detail::parseBoolean(text).has_value();
    case AttrType::Vector3: {
      const auto v = detail::parseVector3(text);
      if (!v) {
        return false;
      }
      switch (spec.bound) {
        case Bound::NonZeroVector:
          return v->norm() > 0.0;
        case Bound::PositiveVector:
          return (v->array() > 0.0).all();
        case Bound::NonZeroComponents:
          return (v->array() != 0.0).all();
        default:
          return true;
      }
    }
    case AttrType::Enumeration: {
      std::string_view values = spec.values;
      while (!values.empty()) {
        const auto bar = values.find('|');
        if (values.substr(0, bar) == text) {
          return true;
        }
        if (bar == std::string_view::npos) {
          break;
        }
        values.remove_prefix(bar + 1);
      }
      return false;
    }
    case AttrType::String:
      return true;
  }
  return false;
}

std::string_view toString(AttrType t) {
  switch (t) {
    case AttrType::Real:
      return "real";
    case AttrType::Integer:
      return "integer";
    case AttrType::Boolean:
      return "boolean";
    case AttrType::Vector3:
      return "vector3";
    case AttrType::Enumeration:
      return "enumeration";
    case AttrType::String:
      return "string";
  }
  return "?";
}

std::string_view toString(Bound b) {
  switch (b) {
    case Bound::None:
      return "";
    case Bound::Positive:
      return "> 0";
    case Bound::NonNegative:
      return ">= 0";
    case Bound::UnitInterval:
      return "in [0, 1]";
    case Bound::OpenZeroTwo:
      return "in (0, 2)";
    case Bound::AtLeastOne:
      return ">= 1";
    case Bound::NonZeroVector:
      return "a non-zero vector";
    case Bound::PositiveVector:
      return "positive in every component";
    case Bound::NonZeroComponents:
      return "non-zero in every component";
  }
  return "?";
}

}  // namespace grain::io::schema
