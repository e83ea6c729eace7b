// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/core/timestepping/external_forces.hpp>
#include <grain/io/radius_distribution.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/scene_schema.hpp>

#include "io/scene_elements.hpp"
#include "io/settings_io.hpp"
#include "io/xml_reader.hpp"

namespace grain::io::schema {

namespace {

using A = AttributeSpec;
using C = ChildSpec;
using T = AttrType;
using U = AttrUse;
using B = Bound;
using SV = std::string_view;

// Shorthands for the table: required, ignored; enumerations.
constexpr A req(SV name, T type, B bound = B::None, SV unit = {}, SV doc = {}) {
  return A{name, type, U::Required, {}, bound, {}, {}, unit, doc};
}
constexpr A ign(SV name, T type, B bound = B::None, SV doc = {}) {
  return A{name, type, U::Ignored, {}, bound, {}, {}, {}, doc};
}
constexpr A reqEnum(SV name, SV values, SV unsupported = {}, SV doc = {}) {
  return A{name, T::Enumeration, U::Required, {}, B::None, values, unsupported, {}, doc};
}

constexpr C child(SV name, std::uint32_t minOccurs = 0, std::uint32_t maxOccurs = 1) {
  return C{name, minOccurs, maxOccurs, ChildUse::Parse};
}
constexpr C gui(SV name) {
  return C{name, 0, 1, ChildUse::IgnoredGui};
}

/// The rows `make()` returns, made once per lambda (each lambda is a type of its own): the rows
/// of an element whose attributes are generated from descriptions.
template <class Make>
std::span<const A> rowsOf(Make make) {
  static const detail::GeneratedAttributes rows = make();
  return rows.rows();
}

/// Hand-written rows (the element's variant attribute), then the rows the descriptions of
/// Described... list for `element` ("": the struct's own element).
template <class... Described>
detail::GeneratedAttributes generated(std::initializer_list<A> before = {},
                                      [[maybe_unused]] SV element = {}) {
  detail::GeneratedAttributes g;
  for (const A& row : before) {
    g.add(row);
  }
  (g.add<Described>(element), ...);
  return g;
}

// clang-format off

// ---- Root -------------------------------------------------------------------------------------

constexpr C kRootChildren[] = {child("SceneSettings", 1, 1), child("SceneObjects")};

// ---- SceneSettings ----------------------------------------------------------------------------

constexpr C kSceneSettingsChildren[] = {
    gui("Visualization"),
    child("RecorderSettings", 1, 1),
    child("ContactForceOutput"),
    child("TimeStepperSettings", 1, 1),
    child("ContactParameterMap"),
    child("GlobalGeometries"),
    child("ExternalForces"),
    child("GlobalInitialCondition"),
    child("GlobalSelectiveIds"),
    child("MPISettings"),
};

// The recorder's attributes are RecorderSettings::describe's; the variant `mode` decides whether
// they are read.
std::span<const A> recorderAttributes(RecorderMode mode) {
  const auto make = [](RecorderMode m) {
    detail::GeneratedAttributes g;
    g.add<RecorderSettings>();
    switch (m) {
      case RecorderMode::EveryTimeStep:
        g.row("mode").doc = "everyTimeStep: write the initial state and every step's end state";
        break;
      case RecorderMode::EveryXTimeStep:
        g.row("mode").doc =
            "everyXTimeStep: write the initial state and the state after every step k with k % everyXStep == 0";
        break;
      case RecorderMode::NoOutput:
        g.row("mode").doc = "noOutput: no .sim file";
        break;
    }
    if (m != RecorderMode::EveryXTimeStep) {
      g.ignore("everyXStep", "only for everyXTimeStep");
      g.ignore("statesPerSecond", "only for everyXTimeStep");
    }
    return g;
  };
  static const detail::GeneratedAttributes everyStep = make(RecorderMode::EveryTimeStep);
  static const detail::GeneratedAttributes everyX = make(RecorderMode::EveryXTimeStep);
  static const detail::GeneratedAttributes noOutput = make(RecorderMode::NoOutput);
  switch (mode) {
    case RecorderMode::EveryTimeStep:
      return everyStep.rows();
    case RecorderMode::EveryXTimeStep:
      return everyX.rows();
    case RecorderMode::NoOutput:
      break;
  }
  return noOutput.rows();
}

// ContactForceOutputSettings::describe's attributes, then CompatibleForceSettings::describe's.
std::span<const A> contactForceOutputAttributes() {
  static const detail::GeneratedAttributes rows = [] {
    detail::GeneratedAttributes g;
    g.add<ContactForceOutputSettings>();
    g.add<CompatibleForceSettings>();
    return g;
  }();
  return rows.rows();
}

constexpr C kTimeStepperChildren[] = {
    child("InclusionSolverSettings", 1, 1),
    child("SimulateFromReference"),
};

// Generated from the settings descriptions (settings_io.hpp): the rows of these elements are
// those of the structs' describe(), with the attributes that are not settings members added here.

std::span<const A> timeStepperAttributes() {
  static const detail::GeneratedAttributes rows = [] {
    detail::GeneratedAttributes g;
    g.add<StepperSettings>();
    g.add<InclusionSolverSettings>("TimeStepperSettings");
    return g;
  }();
  return rows.rows();
}

std::span<const A> inclusionSolverAttributes() {
  static const detail::GeneratedAttributes rows = [] {
    detail::GeneratedAttributes g;
    // method (InclusionSolverSettings::describe's first), then SolverExtras, then the rest.
    g.add<InclusionSolverSettings>();
    g.add<SolverExtras>({}, 1);
    return g;
  }();
  return rows.rows();
}

// ---- ContactParameterMap ----------------------------------------------------------------------

constexpr C kContactMapChildren[] = {
    child("ContactParameterStandard"),
    child("ContactParameter", 0, kUnbounded),
};

// The contact law's attributes are ContactParameter::describe's; the variant `type` (UCF, UCFD)
// decides whether the inverse dampings are read or accepted without effect.
std::span<const A> contactLawAttributes(bool pair, ContactModel model) {
  const auto make = [](bool forPair, ContactModel m) {
    detail::GeneratedAttributes g;
    if (forPair) {
      g.add(req("materialId1", T::Integer, B::None, {}, "first material"));
      g.add(req("materialId2", T::Integer, B::None, {}, "second material"));
    }
    g.add<ContactParameter>();
    g.row("type").doc = m == ContactModel::UCF
                            ? "UCF: unilateral contact, Coulomb friction, Newton impacts"
                            : "UCFD: UCF with inverse dampings";
    if (m == ContactModel::UCF) {
      for (const SV name : {SV("invDampingN"), SV("invDampingT")}) {
        A& r = g.row(name);
        r.use = U::Ignored;
        r.unit = {};
        r.doc = "only for UCFD";
      }
    }
    return g;
  };
  static const detail::GeneratedAttributes standardUcf = make(false, ContactModel::UCF);
  static const detail::GeneratedAttributes standardUcfd = make(false, ContactModel::UCFD);
  static const detail::GeneratedAttributes pairUcf = make(true, ContactModel::UCF);
  static const detail::GeneratedAttributes pairUcfd = make(true, ContactModel::UCFD);
  const bool ucf = model == ContactModel::UCF;
  return (pair ? (ucf ? pairUcf : pairUcfd) : (ucf ? standardUcf : standardUcfd)).rows();
}

// ---- Geometries (shared by Geometry and GlobalGeometries) -------------------------------------

constexpr C kGlobalGeometriesChildren[] = {
    child("Sphere", 0, kUnbounded), child("Box", 0, kUnbounded), child("Capsule", 0, kUnbounded),
    child("Halfspace", 0, kUnbounded), child("Mesh", 0, kUnbounded),
};

constexpr SV kSphereKinds = "uniform|random";

// The attributes of a shape: the variant attribute `distribute`, in GlobalGeometries the id, then
// the shape's description (scene_elements.hpp).
template <class Shape>
std::span<const A> shapeAttributes(bool global) {
  const auto make = [](bool inGlobals) {
    A distribute = reqEnum("distribute", "uniform");
    if constexpr (std::is_same_v<Shape, detail::SphereAttributes>) {
      distribute = reqEnum("distribute", kSphereKinds, {},
                           inGlobals ? "uniform: one sphere" : "uniform: every body the same radius");
    }
    detail::GeneratedAttributes g = generated({distribute});
    if (inGlobals) {
      g.add<detail::GlobalGeometryId>();
    }
    g.add<Shape>();
    return g;
  };
  static const detail::GeneratedAttributes inGeometry = make(false);
  static const detail::GeneratedAttributes inGlobals = make(true);
  return (global ? inGlobals : inGeometry).rows();
}

// Random spheres: `distribute`, in GlobalGeometries the ids, then RadiusDistributionSettings'
// attributes with the seed after the generator.
std::span<const A> randomSphereAttributes(bool global) {
  const auto make = [](bool inGlobals) {
    detail::GeneratedAttributes g = generated({reqEnum(
        "distribute", kSphereKinds, {},
        inGlobals ? "random: `instances` spheres with random radii" : "random: radius drawn per body")});
    if (inGlobals) {
      g.add<detail::GlobalSphereIds>();
    }
    g.add<RadiusDistributionSettings>();
    g.add<detail::RandomSeed>({}, inGlobals ? 4 : 2);
    return g;
  };
  static const detail::GeneratedAttributes inGeometry = make(false);
  static const detail::GeneratedAttributes inGlobals = make(true);
  return (global ? inGlobals : inGeometry).rows();
}

// ---- ExternalForces ---------------------------------------------------------------------------

constexpr C kExternalForcesChildren[] = {child("ForceField", 0, kUnbounded)};

// ForceFieldAttributes (`type`, `applyTo`), then GravityField's or SphericalPulseField's
// attributes.
template <class Field>
std::span<const A> forceFieldAttributes() {
  static const detail::GeneratedAttributes rows = [] {
    detail::GeneratedAttributes g = generated<detail::ForceFieldAttributes, Field>();
    g.row("type").doc = std::is_same_v<Field, GravityField>
        ? "gravity: uniform acceleration of every simulated body"
        : "spatialspherical-timerandom: radial pushes of force amplitude from a centre point";
    return g;
  }();
  return rows.rows();
}

// ---- GlobalInitialCondition, GlobalSelectiveIds -----------------------------------------------

// GlobalInitialCondition: GlobalInitialConditionAttributes; Set, Range: SelectiveSetAttributes,
// SelectiveRangeAttributes (scene_elements.hpp).
constexpr C kSelectiveIdsChildren[] = {child("Set"), child("Range")};

// ---- MPISettings ------------------------------------------------------------------------------

constexpr C kMpiChildren[] = {child("ProcessTopology", 1, 1), child("InclusionSolverSettings", 1, 1)};

// The attributes below MPISettings are LoadBalanceSettings::describe's, element by element;
// the variants (mode static|dynamic, type grid|kdTree) differ in what they read and in docs.
std::span<const A> processTopologyAttributes(LoadBalanceSettings::Mode mode) {
  const auto make = [](bool dynamic) {
    detail::GeneratedAttributes g;
    g.add<LoadBalanceSettings>("ProcessTopology");
    if (dynamic) {
      g.row("mode").doc = "dynamic: the decomposition is rebuilt during the run";
    } else {
      g.row("mode").doc = "static: the decomposition is built once";
      for (const SV name : {SV("policy"), SV("policyCheckEveryXTimeStep"), SV("bodyLimit")}) {
        g.ignore(name, "only for mode=\"dynamic\"");
      }
      g.remove("bodyWeight");
    }
    return g;
  };
  static const detail::GeneratedAttributes staticRows = make(false);
  static const detail::GeneratedAttributes dynamicRows = make(true);
  return (mode == LoadBalanceSettings::Mode::Static ? staticRows : dynamicRows).rows();
}

std::span<const A> topologyAttributes(LoadBalanceSettings::TopologyType type) {
  const auto make = [](bool grid) {
    detail::GeneratedAttributes g;
    g.add<LoadBalanceSettings>("Topology");
    if (grid) {
      g.row("type").doc = "grid: an axis-aligned Cartesian grid of process cells over the bodies' box";
      g.row("buildMode").doc =
          "box of the grid: predefined uses minPoint/maxPoint; the grid is axis-aligned, so "
          "MVBB, AABB and binetTensor all use the axis-aligned box of the bodies";
      g.row("minCellSize").doc = "smallest cell edge (the grid's box grows to respect it)";
    } else {
      g.row("type").doc =
          "kdTree: recursive coordinate bisection (Zoltan RCB) of the bodies' centres, weighted, one "
          "domain per process, computed in parallel";
      g.row("buildMode").doc =
          "frame of the cuts: AABB the axes of I; MVBB and binetTensor the principal axes of the "
          "centres (second moments); predefined only the centres inside minPoint/maxPoint take part";
      g.row("minCellSize").doc =
          "smallest thickness of a cell between two cuts: a build with a thinner cell is repeated "
          "from the centres alone or keeps the previous decomposition; a body larger than the "
          "smallest cell is an error";
      g.ignore("dimension", "only for type=\"grid\"");
      g.ignore("matchProcessDimToExtent", "only for type=\"grid\"");
    }
    return g;
  };
  static const detail::GeneratedAttributes gridRows = make(true);
  static const detail::GeneratedAttributes kdTreeRows = make(false);
  return (type == LoadBalanceSettings::TopologyType::Grid ? gridRows : kdTreeRows).rows();
}

std::span<const A> mpiAttributesIn(SV element) {
  static const detail::GeneratedAttributes massPoints = [] {
    detail::GeneratedAttributes g;
    g.add<LoadBalanceSettings>("MassPointPrediction");
    return g;
  }();
  static const detail::GeneratedAttributes outliers = [] {
    detail::GeneratedAttributes g;
    g.add<LoadBalanceSettings>("GlobalOutlierFilter");
    return g;
  }();
  static const detail::GeneratedAttributes solver = [] {
    detail::GeneratedAttributes g;
    g.add<LoadBalanceSettings>("InclusionSolverSettings");
    return g;
  }();
  return element == "MassPointPrediction" ? massPoints.rows()
         : element == "GlobalOutlierFilter" ? outliers.rows()
                                            : solver.rows();
}

constexpr C kProcessTopologyChildren[] = {
    child("Topology", 1, 1), child("MassPointPrediction"), child("GlobalOutlierFilter"), gui("Visualization"),
};

// ---- SceneObjects -----------------------------------------------------------------------------

constexpr C kSceneObjectsChildren[] = {child("RigidBodies", 0, kUnbounded)};

// The attributes of RigidBodies, DynamicState type="animated" and Material: BodyGroup::describe.
constexpr C kRigidBodiesChildren[] = {
    child("Geometry", 1, 1), child("DynamicProperties", 1, 1), gui("Visualization"),
};

constexpr C kGeometryChildren[] = {
    child("Sphere"), child("Box"), child("Capsule"), child("Halfspace"), child("Mesh"), child("GlobalGeomId"),
};

constexpr SV kGeomIdKinds = "uniform|linear|random";

// GlobalGeomId: GlobalGeometryId (uniform) or GlobalIdRange (linear, random) and RandomSeed.
std::span<const A> globalGeomIdAttributes(SV kind) {
  static constexpr A kIdNotRead = ign("id", T::Integer, B::AtLeastOne, "not read");
  static const detail::GeneratedAttributes uniform = [] {
    detail::GeneratedAttributes g = generated<detail::GlobalGeometryId>(
        {reqEnum("distribute", kGeomIdKinds, {}, "uniform: every body the same global geometry")});
    g.row("id").doc = "global geometry id";
    return g;
  }();
  static const detail::GeneratedAttributes linear = [] {
    detail::GeneratedAttributes g = generated<detail::GlobalIdRange>(
        {reqEnum("distribute", kGeomIdKinds, {}, "linear: body k of the group gets startId + k")});
    g.remove("endId").row("startId").doc = "global geometry id of the group's first body";
    g.add(kIdNotRead);
    return g;
  }();
  static const detail::GeneratedAttributes random = [] {
    detail::GeneratedAttributes g = generated<detail::GlobalIdRange, detail::RandomSeed>(
        {reqEnum("distribute", kGeomIdKinds, {},
                 "random: body k gets a uniformly drawn id in [startId, endId] from the counter stream (seed, k)")});
    g.add(kIdNotRead);
    return g;
  }();
  return (kind == "uniform" ? uniform : kind == "linear" ? linear : random).rows();
}

constexpr C kDynamicPropertiesChildren[] = {
    child("DynamicState", 1, 1), child("Mass"), child("InertiaTensor"), child("Material", 1, 1),
    child("InitialCondition", 1, 1),
};
// DynamicState: its variant `type` names a BodyMotion (kBodyMotionNames: the values and the
// variants); animated bodies also take BodyGroup's velocities.
constexpr SV motionName(BodyMotion motion, bool alias = false) {
  for (const settings::EnumName<BodyMotion>& n : kBodyMotionNames) {
    if (n.value == motion && n.alias == alias) {
      return n.name;
    }
  }
  return {};
}
A stateType(SV doc) {
  static const std::string values = detail::enumValuesText<BodyMotion>();
  return reqEnum("type", values, {}, doc);
}

// Mass: MassAttributes' `value` (uniform) or `density` (homogen).
std::span<const A> massAttributes(bool uniform) {
  static const detail::GeneratedAttributes value = [] {
    detail::GeneratedAttributes g = generated<detail::MassAttributes>(
        {reqEnum("distribute", "uniform|homogen", {}, "uniform: the same mass for every body")});
    g.remove("density");
    return g;
  }();
  static const detail::GeneratedAttributes density = [] {
    detail::GeneratedAttributes g = generated<detail::MassAttributes>(
        {reqEnum("distribute", "uniform|homogen", {}, "homogen: mass from the density and the body's volume")});
    g.remove("value");
    return g;
  }();
  return (uniform ? value : density).rows();
}
constexpr A kInertiaHomogen[] = {
    reqEnum("type", "homogen", {}, "principal inertia of the homogeneous solid of the body's mass"),
};

constexpr A kInitialConditionPosVel[] = {reqEnum("type", "posvel", "file")};
constexpr C kInitialConditionChildren[] = {child("InitialPosition", 1, 1), child("InitialVelocity")};

constexpr SV kPositionKinds = "linear|grid|transforms|none";
constexpr SV kPositionKindsLater = "generalized";
constexpr A kPositionTransforms[] = {
    reqEnum("distribute", kPositionKinds, kPositionKindsLater, "transforms: one Pos per body"),
};
constexpr C kPositionTransformsChildren[] = {child("Pos", 1, kUnbounded)};
constexpr A kPositionNone[] = {
    reqEnum("distribute", kPositionKinds, kPositionKindsLater, "none: every body at the origin with identity orientation"),
};
constexpr C kPosChildren[] = {child("Trafo", 1, kUnbounded)};
constexpr SV kVelocityKinds = "transrot|none";
constexpr A kVelocityTransRot[] = {
    reqEnum("distribute", kVelocityKinds, "generalized", "transrot: one Vel per body"),
};
constexpr C kVelocityTransRotChildren[] = {child("Vel", 1, kUnbounded)};
constexpr A kVelocityNone[] = {
    reqEnum("distribute", kVelocityKinds, "generalized", "none: all bodies at rest"),
};
// ---- The table --------------------------------------------------------------------------------
// Specifications of the same element name must be adjacent, and among them those of the same
// parent (elementsNamed and elementsIn return spans).

using E = ElementSpec;

std::span<const ElementSpec> elementTable() {
static const ElementSpec kElements[] = {
    E{.name = "DynamicsSystem", .children = kRootChildren,
      .doc = "root element; besides the namespace declarations (the default namespace, if given, is SceneFile) and xsi:* attributes it has no attributes"},
    E{.name = "SceneSettings", .parent = "DynamicsSystem", .children = kSceneSettingsChildren,
      .doc = "simulation settings"},
    E{.name = "RecorderSettings", .parent = "SceneSettings", .variantAttribute = "mode",
      .variantValue = "everyTimeStep", .attributes = recorderAttributes(RecorderMode::EveryTimeStep), .doc = "what is written to the .sim file"},
    E{.name = "RecorderSettings", .parent = "SceneSettings", .variantAttribute = "mode",
      .variantValue = "everyXTimeStep", .attributes = recorderAttributes(RecorderMode::EveryXTimeStep)},
    E{.name = "RecorderSettings", .parent = "SceneSettings", .variantAttribute = "mode",
      .variantValue = "noOutput", .attributes = recorderAttributes(RecorderMode::NoOutput)},
    E{.name = "ContactForceOutput", .parent = "SceneSettings", .attributes = contactForceOutputAttributes(),
      .doc = "per-contact forces of some steps in ContactForces.dat of the run folder (docs/contact-output.md)"},
    E{.name = "TimeStepperSettings", .parent = "SceneSettings", .attributes = timeStepperAttributes(),
      .children = kTimeStepperChildren, .doc = "Moreau midpoint time stepping"},
    E{.name = "SimulateFromReference", .parent = "TimeStepperSettings", .attributes = rowsOf([] { return generated<detail::SimulateFromReferenceAttributes>(); }),
      .doc = "replaying reference states; only the disabled form is accepted"},
    E{.name = "InclusionSolverSettings", .parent = "TimeStepperSettings", .attributes = inclusionSolverAttributes(),
      .doc = "the prox contact solver"},
    E{.name = "InclusionSolverSettings", .parent = "MPISettings", .attributes = mpiAttributesIn("InclusionSolverSettings"),
      .doc = "contact solver settings of distributed runs"},
    E{.name = "ContactParameterMap", .parent = "SceneSettings", .children = kContactMapChildren,
      .doc = "contact laws per material pair; without it, or without ContactParameterStandard, the "
             "standard law is UCF mu=0.3 epsilonN=0.5 epsilonT=0.5"},
    E{.name = "ContactParameterStandard", .parent = "ContactParameterMap", .variantAttribute = "type",
      .variantValue = "UCF", .attributes = contactLawAttributes(false, ContactModel::UCF), .doc = "law of material pairs without their own ContactParameter"},
    E{.name = "ContactParameterStandard", .parent = "ContactParameterMap", .variantAttribute = "type",
      .variantValue = "UCFD", .attributes = contactLawAttributes(false, ContactModel::UCFD)},
    E{.name = "ContactParameterStandard", .parent = "ContactParameterMap", .variantAttribute = "type",
      .variantValue = "UCFDD", .implemented = false},
    E{.name = "ContactParameter", .parent = "ContactParameterMap", .variantAttribute = "type",
      .variantValue = "UCF", .attributes = contactLawAttributes(true, ContactModel::UCF), .doc = "law of one unordered material pair"},
    E{.name = "ContactParameter", .parent = "ContactParameterMap", .variantAttribute = "type",
      .variantValue = "UCFD", .attributes = contactLawAttributes(true, ContactModel::UCFD)},
    E{.name = "ContactParameter", .parent = "ContactParameterMap", .variantAttribute = "type",
      .variantValue = "UCFDD", .implemented = false},
    E{.name = "GlobalGeometries", .parent = "SceneSettings", .children = kGlobalGeometriesChildren,
      .doc = "shapes with ids, used by GlobalGeomId; ids are unique and >= 1"},
    E{.name = "ExternalForces", .parent = "SceneSettings", .children = kExternalForcesChildren,
      .doc = "force fields on simulated bodies, evaluated at the step midpoint"},
    E{.name = "ForceField", .parent = "ExternalForces", .variantAttribute = "type", .variantValue = settings::nameOf(detail::ForceFieldType::Gravity),
      .attributes = forceFieldAttributes<GravityField>()},
    E{.name = "ForceField", .parent = "ExternalForces", .variantAttribute = "type",
      .variantValue = settings::nameOf(detail::ForceFieldType::SphericalPulse), .attributes = forceFieldAttributes<SphericalPulseField>(),
      .doc = "with period T = boostTime + pauseTime and s = (t - startTime) mod T, the field is on "
             "for startTime <= t <= endTime and s <= boostTime; cycle c = floor((t - startTime)/T) "
             "uses the centre minPoint for c = 0 (or without randomOn), else minPoint + (maxPoint - "
             "minPoint) * (u0, u1, u2) from the counter stream (seed, c)"},
    E{.name = "GlobalInitialCondition", .parent = "SceneSettings", .attributes = rowsOf([] { return generated<detail::GlobalInitialConditionAttributes>(); }),
      .doc = "initial states of the simulated bodies from a .sim file (overrides InitialCondition); "
             "every simulated body of the scene must be in the chosen state"},
    E{.name = "GlobalSelectiveIds", .parent = "SceneSettings", .children = kSelectiveIdsChildren,
      .exactlyOneChild = true,
      .doc = "load only some bodies of the groups with enableSelectiveIds=\"true\"; exactly one of Set, Range"},
    E{.name = "Set", .parent = "GlobalSelectiveIds", .attributes = rowsOf([] { return generated<detail::SelectiveSetAttributes>(); })},
    E{.name = "Range", .parent = "GlobalSelectiveIds", .attributes = rowsOf([] { return generated<detail::SelectiveRangeAttributes>(); })},
    E{.name = "MPISettings", .parent = "SceneSettings", .children = kMpiChildren,
      .doc = "domain decomposition and load balancing of grain-sim-mpi (read and checked by every run; docs/mpi.md)"},
    E{.name = "ProcessTopology", .parent = "MPISettings", .variantAttribute = "mode", .variantValue = "static",
      .attributes = processTopologyAttributes(LoadBalanceSettings::Mode::Static), .children = kProcessTopologyChildren},
    E{.name = "ProcessTopology", .parent = "MPISettings", .variantAttribute = "mode", .variantValue = "dynamic",
      .attributes = processTopologyAttributes(LoadBalanceSettings::Mode::Dynamic), .children = kProcessTopologyChildren},
    E{.name = "Topology", .parent = "ProcessTopology", .variantAttribute = "type", .variantValue = "grid",
      .attributes = topologyAttributes(LoadBalanceSettings::TopologyType::Grid)},
    E{.name = "Topology", .parent = "ProcessTopology", .variantAttribute = "type", .variantValue = "kdTree",
      .attributes = topologyAttributes(LoadBalanceSettings::TopologyType::KdTree)},
    E{.name = "MassPointPrediction", .parent = "ProcessTopology", .attributes = mpiAttributesIn("MassPointPrediction"),
      .doc = "predicted body positions the decomposition is built from (defaults when absent)"},
    E{.name = "GlobalOutlierFilter", .parent = "ProcessTopology", .attributes = mpiAttributesIn("GlobalOutlierFilter"),
      .doc = "k-nearest-neighbour filter of far-away points before building the decomposition"},
    E{.name = "SceneObjects", .parent = "DynamicsSystem", .children = kSceneObjectsChildren,
      .doc = "the bodies"},
    E{.name = "RigidBodies", .parent = "SceneObjects", .attributes = rowsOf([] { return generated<BodyGroup>(); }), .children = kRigidBodiesChildren,
      .doc = "a group of `instances` bodies with ids (groupId, number)"},
    E{.name = "Geometry", .parent = "RigidBodies", .children = kGeometryChildren, .exactlyOneChild = true,
      .doc = "the shape of the group's bodies: exactly one child"},
    E{.name = "Sphere", .parent = "GlobalGeometries", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::SphereAttributes>(true)},
    E{.name = "Sphere", .parent = "GlobalGeometries", .variantAttribute = "distribute", .variantValue = "random",
      .attributes = randomSphereAttributes(true),
      .doc = "the radius of sphere j is drawn from the counter stream (seed, j)"},
    E{.name = "Sphere", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::SphereAttributes>(false)},
    E{.name = "Sphere", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "random",
      .attributes = randomSphereAttributes(false),
      .doc = "generator uniform needs minRadius, maxRadius; truncated-normal needs mean, variance, "
             "minRadius, maxRadius; piecewise-const needs intervals, densities; other generator "
             "attributes are errors"},
    E{.name = "Box", .parent = "GlobalGeometries", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::BoxAttributes>(true)},
    E{.name = "Box", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::BoxAttributes>(false)},
    E{.name = "Capsule", .parent = "GlobalGeometries", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::CapsuleAttributes>(true)},
    E{.name = "Capsule", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::CapsuleAttributes>(false)},
    E{.name = "Halfspace", .parent = "GlobalGeometries", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::HalfspaceAttributes>(true)},
    E{.name = "Halfspace", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::HalfspaceAttributes>(false), .doc = "static or animated bodies only"},
    E{.name = "Mesh", .parent = "GlobalGeometries", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::MeshAttributes>(true)},
    E{.name = "Mesh", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = shapeAttributes<detail::MeshAttributes>(false),
      .doc = "static or animated bodies only; vertices v -> R(rotAxis, angle) (scale * v) + trans"},
    E{.name = "GlobalGeomId", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = globalGeomIdAttributes("uniform"), .doc = "a shape of GlobalGeometries"},
    E{.name = "GlobalGeomId", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "linear",
      .attributes = globalGeomIdAttributes("linear")},
    E{.name = "GlobalGeomId", .parent = "Geometry", .variantAttribute = "distribute", .variantValue = "random",
      .attributes = globalGeomIdAttributes("random")},
    E{.name = "DynamicProperties", .parent = "RigidBodies", .children = kDynamicPropertiesChildren,
      .doc = "Mass and InertiaTensor are required for simulated bodies and ignored for static and animated ones"},
    E{.name = "DynamicState", .parent = "DynamicProperties", .variantAttribute = "type",
      .variantValue = motionName(BodyMotion::Simulated),
      .attributes = rowsOf([] { return generated({stateType("simulated: moved by the dynamics")}); })},
    E{.name = "DynamicState", .parent = "DynamicProperties", .variantAttribute = "type",
      .variantValue = motionName(BodyMotion::Static),
      .attributes = rowsOf([] { return generated({stateType("static: never moves (infinite mass)")}); })},
    E{.name = "DynamicState", .parent = "DynamicProperties", .variantAttribute = "type",
      .variantValue = motionName(BodyMotion::Static, true),
      .attributes = rowsOf([] { return generated({stateType("the same as static")}); })},
    E{.name = "DynamicState", .parent = "DynamicProperties", .variantAttribute = "type",
      .variantValue = motionName(BodyMotion::Animated),
      .attributes = rowsOf([] { return generated<BodyGroup>({stateType(
          "animated: infinite mass, moved with a prescribed constant velocity (rotating drums, moving blades, belts); "
          "contacts see its velocity")}, "DynamicState"); }),
      .doc = "kinematic body; InitialVelocity is ignored for it; like static bodies, animated "
             "ones are not written to .sim files (their pose at time t follows from the scene)"},
    E{.name = "Mass", .parent = "DynamicProperties", .variantAttribute = "distribute", .variantValue = "uniform",
      .attributes = massAttributes(true)},
    E{.name = "Mass", .parent = "DynamicProperties", .variantAttribute = "distribute", .variantValue = "homogen",
      .attributes = massAttributes(false)},
    E{.name = "InertiaTensor", .parent = "DynamicProperties", .variantAttribute = "type", .variantValue = "homogen",
      .attributes = kInertiaHomogen},
    E{.name = "Material", .parent = "DynamicProperties", .variantAttribute = "distribute",
      .variantValue = "uniform", .attributes = rowsOf([] { return generated<BodyGroup>({reqEnum("distribute", "uniform")}, "Material"); })},
    E{.name = "InitialCondition", .parent = "DynamicProperties", .variantAttribute = "type",
      .variantValue = "posvel", .attributes = kInitialConditionPosVel, .children = kInitialConditionChildren,
      .doc = "InitialVelocity is ignored for static and animated bodies"},
    E{.name = "InitialCondition", .parent = "DynamicProperties", .variantAttribute = "type",
      .variantValue = "file", .implemented = false},
    E{.name = "InitialPosition", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "linear", .attributes = rowsOf([] { return generated<detail::LinearPositions>({reqEnum("distribute", kPositionKinds, kPositionKindsLater, "linear: body k at position + k distance direction")}); })},
    E{.name = "InitialPosition", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "grid", .attributes = rowsOf([] { return generated<detail::GridPositions>({reqEnum("distribute", kPositionKinds, kPositionKindsLater, "grid: x fastest, then y, stacked along z, centred in x and y")}); })},
    E{.name = "InitialPosition", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "transforms", .attributes = kPositionTransforms, .children = kPositionTransformsChildren,
      .doc = "body k takes Pos k; the last Pos repeats"},
    E{.name = "InitialPosition", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "none", .attributes = kPositionNone},
    E{.name = "InitialPosition", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "generalized", .implemented = false},
    E{.name = "Pos", .parent = "InitialPosition", .children = kPosChildren,
      .doc = "Trafo elements composed left to right"},
    E{.name = "Trafo", .parent = "Pos", .attributes = rowsOf([] { return generated<detail::TrafoAttributes>(); })},
    E{.name = "InitialVelocity", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "transrot", .attributes = kVelocityTransRot, .children = kVelocityTransRotChildren,
      .doc = "body k takes Vel k; the last Vel repeats"},
    E{.name = "InitialVelocity", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "none", .attributes = kVelocityNone},
    E{.name = "InitialVelocity", .parent = "InitialCondition", .variantAttribute = "distribute",
      .variantValue = "generalized", .implemented = false},
    E{.name = "Vel", .parent = "InitialVelocity", .attributes = rowsOf([] { return generated<detail::VelAttributes>(); })},
};
return kElements;
}
// clang-format on

bool containsValue(std::string_view barList, std::string_view value) {
  const auto parts = splitBar(barList);
  return std::find(parts.begin(), parts.end(), value) != parts.end();
}

using settings::withinBound;

std::string inQuotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) {
    return {};
  }
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::span<const ElementSpec> elements() {
  return elementTable();
}

std::span<const ElementSpec> elementsNamed(std::string_view name) {
  const std::span<const ElementSpec> all = elementTable();
  const auto first =
      std::find_if(all.begin(), all.end(), [&](const ElementSpec& e) { return e.name == name; });
  auto last = first;
  while (last != all.end() && last->name == name) {
    ++last;
  }
  return {first, last};
}

std::span<const ElementSpec> elementsIn(std::string_view name, std::string_view parent) {
  const auto named = elementsNamed(name);
  const auto first = std::find_if(named.begin(), named.end(),
                                  [&](const ElementSpec& e) { return e.parent == parent; });
  auto last = first;
  while (last != named.end() && last->parent == parent) {
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

std::string checkValue(const AttributeSpec& spec, std::string_view rawText) {
  const std::string text = trimmed(rawText);
  const std::string what = "attribute " + inQuotes(spec.name);
  if (const auto p = text.find("${"); p != std::string::npos) {
    const auto e = text.find('}', p);
    const std::string placeholder =
        text.substr(p, e == std::string::npos ? std::string::npos : e - p + 1);
    return what + " contains the unfilled placeholder " + inQuotes(placeholder) +
           " (replace it in the file or with grain-sim --set)";
  }
  const auto boundError = [&](std::string_view suffix) {
    return what + " must be " + std::string(toString(spec.bound)) + std::string(suffix) + " (got " +
           text + ")";
  };
  switch (spec.type) {
    case AttrType::Real: {
      const auto v = detail::parseReal(text);
      if (!v) {
        return what + " must be a number (got " + inQuotes(text) + ")";
      }
      return withinBound(spec.bound, *v) ? std::string() : boundError("");
    }
    case AttrType::Integer: {
      const auto v = detail::parseUnsigned(text);
      if (!v) {
        return what + " must be a non-negative integer (got " + inQuotes(text) + ")";
      }
      return withinBound(spec.bound, static_cast<double>(*v)) ? std::string() : boundError("");
    }
    case AttrType::Boolean:
      return detail::parseBoolean(text)
                 ? std::string()
                 : what + " must be true, false, 1 or 0 (got " + inQuotes(text) + ")";
    case AttrType::Vector3: {
      const auto v = detail::parseVector3(text);
      if (!v) {
        return what + " must be three numbers (got " + inQuotes(text) + ")";
      }
      bool ok = true;
      if (spec.bound == Bound::NonZeroVector) {
        ok = v->norm() > 0.0;
      } else if (spec.bound == Bound::PositiveVector) {
        ok = (v->array() > 0.0).all();
      } else if (spec.bound == Bound::NonZeroComponents) {
        ok = (v->array() != 0.0).all();
      }
      return ok ? std::string() : boundError("");
    }
    case AttrType::IntegerVector3: {
      const auto v = detail::parseUnsignedVector3(text);
      if (!v) {
        return what + " must be three non-negative integers (got " + inQuotes(text) + ")";
      }
      for (const std::uint32_t x : *v) {
        if (!withinBound(spec.bound, static_cast<double>(x))) {
          return boundError(" in every component");
        }
      }
      return {};
    }
    case AttrType::RealList: {
      const auto v = detail::parseRealList(text);
      if (!v) {
        return what + " must be a list of numbers (got " + inQuotes(text) + ")";
      }
      for (const double x : *v) {
        if (!withinBound(spec.bound, x)) {
          return boundError(" in every entry");
        }
      }
      return {};
    }
    case AttrType::BodyIdList:
      return detail::parseBodyIdList(text)
                 ? std::string()
                 : what + " must be a list of body ids 'group,number' (got " + inQuotes(text) + ")";
    case AttrType::BodyIdRange: {
      const auto v = detail::parseBodyIdList(text);
      if (!v || v->size() != 2) {
        return what + " must be two body ids 'group,number' (got " + inQuotes(text) + ")";
      }
      return {};
    }
    case AttrType::Enumeration: {
      if (containsValue(spec.values, text)) {
        return {};
      }
      if (containsValue(spec.unsupportedValues, text)) {
        return "value " + inQuotes(text) + " of " + what + " is not supported yet";
      }
      const auto values = splitBar(spec.values);
      std::string list;
      for (std::size_t i = 0; i < values.size(); ++i) {
        list += (i ? ", " : "");
        list += values[i];
      }
      std::string msg = what + " has unknown value " + inQuotes(text);
      if (const auto near = closestName(text, values); !near.empty()) {
        msg += "; did you mean " + inQuotes(near) + "?";
      }
      return msg + " (expected one of: " + list + ")";
    }
    case AttrType::String:
      return {};
  }
  return what + " has an unknown type";
}

bool acceptsValue(const AttributeSpec& spec, std::string_view text) {
  return checkValue(spec, text).empty();
}

std::string_view closestName(std::string_view word, std::span<const std::string_view> candidates) {
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::string_view best;
  std::size_t bestDistance = std::string_view::npos;
  std::vector<std::size_t> prev, cur;
  for (const std::string_view c : candidates) {
    // Levenshtein distance, case-insensitive.
    prev.resize(c.size() + 1);
    cur.resize(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) {
      prev[j] = j;
    }
    for (std::size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t subst = prev[j - 1] + (lower(word[i - 1]) == lower(c[j - 1]) ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      }
      std::swap(prev, cur);
    }
    const std::size_t d = prev[c.size()];
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  if (best.empty()) {
    return {};
  }
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  if (bestDistance <= limit) {
    return best;
  }
  // Else the only candidate that is a prefix of the word or has it as prefix ("homogeneous"
  // for "homogen"), ignoring case.
  std::string_view prefixMatch;
  int prefixMatches = 0;
  for (const std::string_view c : candidates) {
    const std::size_t n = std::min(word.size(), c.size());
    bool prefix = n >= 3;
    for (std::size_t i = 0; prefix && i < n; ++i) {
      prefix = lower(word[i]) == lower(c[i]);
    }
    if (prefix) {
      prefixMatch = c;
      ++prefixMatches;
    }
  }
  return prefixMatches == 1 ? prefixMatch : std::string_view();
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
    case AttrType::IntegerVector3:
      return "integer vector3";
    case AttrType::RealList:
      return "real list";
    case AttrType::BodyIdList:
      return "body id list";
    case AttrType::BodyIdRange:
      return "body id range";
    case AttrType::Enumeration:
      return "enumeration";
    case AttrType::String:
      return "string";
  }
  return "?";
}

std::string_view toString(Bound b) {
  return settings::boundText(b);
}

std::vector<std::string_view> splitBar(std::string_view s) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    const auto bar = s.find('|');
    parts.push_back(s.substr(0, bar));
    if (bar == std::string_view::npos) {
      break;
    }
    s.remove_prefix(bar + 1);
  }
  return parts;
}

}  // namespace grain::io::schema
