// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/math/types.hpp>

/// The attributes of the scene elements that build bodies rather than set options (private to
/// grain_io), described once as the settings structs are (grain/core/common/settings.hpp): the
/// scene schema rows of these elements are generated from the descriptions (scene_schema.cpp)
/// and the scene reader reads them with detail::read (scene_loader.cpp). What is not here is
/// the scene's structure: the variant attributes no struct holds (`distribute` of the
/// geometries, masses and initial conditions, `type` of DynamicState), which choose the
/// element's specification and hence which of these structs applies.
namespace grain::io::detail {

/// <Sphere distribute="uniform">.
struct SphereAttributes {
  Real radius = 0.0;

  Sphere shape() const { return Sphere{radius}; }

  template <class V>
  static constexpr void describe(V&& v) {
    using S = SphereAttributes;
    v(settings::field<&S::radius>("radius")
          .required()
          .withBound(settings::Bound::Positive)
          .withUnit("m")
          .withDoc("radius"));
  }
};

/// <Box>: full edge lengths (the core's Box holds the half extents).
struct BoxAttributes {
  Vec3 extent = Vec3::Zero();
  Vec3 center = Vec3::Zero();

  Box shape() const { return Box{.halfExtent = 0.5 * extent, .center = center}; }

  template <class V>
  static constexpr void describe(V&& v) {
    using S = BoxAttributes;
    using settings::field;
    v(field<&S::extent>("extent")
          .required()
          .withBound(settings::Bound::PositiveVector)
          .withUnit("m")
          .withDoc("full edge lengths along the body axes"));
    v(field<&S::center>("center").withUnit("m").withDoc(
        "box centre in the body frame (simulated boxes: 0 0 0)"));
  }
};

/// <Capsule>.
struct CapsuleAttributes {
  Vec3 normal = Vec3::UnitZ();
  Real radius = 0.0;
  Real length = 0.0;

  Capsule shape() const { return Capsule{.axis = normal, .radius = radius, .length = length}; }

  template <class V>
  static constexpr void describe(V&& v) {
    using S = CapsuleAttributes;
    using settings::Bound;
    using settings::field;
    v(field<&S::normal>("normal")
          .required()
          .withBound(Bound::NonZeroVector)
          .withDoc("axis in the body frame"));
    v(field<&S::radius>("radius")
          .required()
          .withBound(Bound::Positive)
          .withUnit("m")
          .withDoc("radius"));
    v(field<&S::length>("length")
          .required()
          .withBound(Bound::Positive)
          .withUnit("m")
          .withDoc("distance of the cap centres"));
    v(settings::ignored<S, Vec3>("position").withDoc("the capsule is centred at the body"));
  }
};

/// <Halfspace>.
struct HalfspaceAttributes {
  Vec3 normal = Vec3::UnitZ();

  Halfspace shape() const { return Halfspace{normal}; }

  template <class V>
  static constexpr void describe(V&& v) {
    using S = HalfspaceAttributes;
    v(settings::field<&S::normal>("normal")
          .required()
          .withBound(settings::Bound::NonZeroVector)
          .withDoc("outward normal in the body frame"));
    v(settings::ignored<S, Vec3>("position").withDoc("the plane passes through the body position"));
  }
};

/// <Mesh>: the file and its import transform (scale, then rotation, then translation).
struct MeshAttributes {
  std::string file;
  Vec3 scale = Vec3::Ones();
  Vec3 rotAxis = Vec3::UnitX();
  std::optional<Real> deg;  ///< deg or rad: the rotation angle
  std::optional<Real> rad;
  Vec3 trans = Vec3::Zero();
  bool oneSided = false;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = MeshAttributes;
    using settings::Bound;
    using settings::field;
    using settings::ignored;
    v(field<&S::file>("file").required().withDoc(
        "mesh file (any format Assimp reads); relative paths are resolved against the media "
        "directory (-m, default: the scene file's folder)"));
    v(field<&S::scale>("scale")
          .withBound(Bound::NonZeroComponents)
          .withDoc("per-axis scale applied first"));
    v(field<&S::rotAxis>("rotAxis")
          .withBound(Bound::NonZeroVector)
          .withDoc("rotation axis applied after scaling; when given, deg or rad is required"));
    v(field<&S::deg>("deg").derived().withUnit("deg").withDoc("rotation angle"));
    v(field<&S::rad>("rad").derived().withUnit("rad").withDoc("rotation angle (instead of deg)"));
    v(field<&S::trans>("trans").withUnit("m").withDoc("translation applied last (body frame)"));
    v(field<&S::oneSided>("oneSided")
          .withDoc("false: every triangle is a thin two-sided shell; true: only the front (the "
                   "side of the counter-clockwise face normal) repels, a body that crossed a "
                   "face by less than its radius is pushed back to the front"));
    v(ignored<S, std::string>("name"));
    v(ignored<S, bool>("writeToLog"));
    v(ignored<S, std::string>("useInstance"));
    v(ignored<S, std::string>("rotationAxis"));
    v(ignored<S, std::string>("angleDegree"));
    v(ignored<S, std::string>("translation"));
  }
};

/// The id of a shape of GlobalGeometries (every child but the random spheres).
struct GlobalGeometryId {
  std::uint32_t id = 0;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = GlobalGeometryId;
    v(settings::field<&S::id>("id")
          .required()
          .withBound(settings::Bound::AtLeastOne)
          .withDoc("global geometry id (>= 1; 0 means a body's own geometry)"));
  }
};

/// The ids of the random spheres of GlobalGeometries: id .. id + instances - 1.
struct GlobalSphereIds {
  std::uint32_t id = 0;
  std::uint32_t instances = 1;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = GlobalSphereIds;
    using settings::Bound;
    v(settings::field<&S::id>("id")
          .required()
          .withBound(Bound::AtLeastOne)
          .withDoc("id of the first sphere; sphere j (0-based) gets id + j"));
    v(settings::field<&S::instances>("instances")
          .withBound(Bound::AtLeastOne)
          .withDoc("number of spheres"));
  }
};

/// The seed of a random choice per body (random radii, random global geometry ids).
struct RandomSeed {
  std::uint32_t seed = 0;

  template <class V>
  static constexpr void describe(V&& v) {
    v(settings::field<&RandomSeed::seed>("seed").required().withDoc("random seed"));
  }
};

/// <GlobalGeomId distribute="linear|random">: the ids bodies take (distribute="uniform" has a
/// GlobalGeometryId).
struct GlobalIdRange {
  std::uint32_t startId = 0;
  std::uint32_t endId = 0;  ///< random only

  template <class V>
  static constexpr void describe(V&& v) {
    using S = GlobalIdRange;
    using settings::Bound;
    v(settings::field<&S::startId>("startId")
          .required()
          .withBound(Bound::AtLeastOne)
          .withDoc("smallest id"));
    v(settings::field<&S::endId>("endId")
          .required()
          .withBound(Bound::AtLeastOne)
          .withDoc("largest id (>= startId)"));
  }

  template <class V>
  static constexpr void relations(V&& v) {
    v(settings::relation<&GlobalIdRange::endId, &GlobalIdRange::startId>(
        "endId", settings::Order::GreaterEqual, "startId"));
  }
};

/// <Mass>: `value` with distribute="uniform", `density` with "homogen".
struct MassAttributes {
  Real value = 0.0;
  Real density = 0.0;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = MassAttributes;
    using settings::Bound;
    v(settings::field<&S::value>("value")
          .required()
          .withBound(Bound::Positive)
          .withUnit("kg")
          .withDoc("mass of each body"));
    v(settings::field<&S::density>("density")
          .required()
          .withBound(Bound::Positive)
          .withUnit("kg/m^3")
          .withDoc("density"));
  }
};

/// Jittered placement shared by <InitialPosition distribute="linear|grid">.
struct Jitter {
  bool jitter = false;
  Real delta = 0.0;
  std::uint32_t seed = 5;

  /// The attributes `jitter`, `delta` and `seed` of S, whose member S::jitter is a Jitter (one
  /// description for both distributions).
  template <class S, class V>
  static constexpr void describeIn(V&& v) {
    using settings::field;
    v(field<&S::jitter, &Jitter::jitter>("jitter").required().withDoc(
        "add delta times a random unit vector (linear: perpendicular to direction)"));
    v(field<&S::jitter, &Jitter::delta>("delta")
          .required()
          .withBound(settings::Bound::NonNegative)
          .withUnit("m")
          .withDoc("jitter length"));
    v(field<&S::jitter, &Jitter::seed>("seed").withDoc("jitter seed"));
  }
};

/// <InitialPosition distribute="linear">: body k at position + k distance direction.
struct LinearPositions {
  Vec3 position = Vec3::Zero();
  Vec3 direction = Vec3::UnitX();
  Real distance = 0.0;
  Jitter jitter;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = LinearPositions;
    using settings::Bound;
    using settings::field;
    v(field<&S::position>("position").required().withUnit("m").withDoc("first body"));
    v(field<&S::direction>("direction")
          .required()
          .withBound(Bound::NonZeroVector)
          .withDoc("line direction"));
    v(field<&S::distance>("distance")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("m")
          .withDoc("spacing"));
    Jitter::describeIn<S>(v);
  }
};

/// <InitialPosition distribute="grid">: x fastest, then y, stacked along z, centred in x and y.
struct GridPositions {
  Vec3 translation = Vec3::Zero();
  std::uint32_t gridSizeX = 1;
  std::uint32_t gridSizeY = 1;
  Real distance = 0.0;
  Jitter jitter;
  Vec3 dirZ = Vec3::UnitZ();
  Vec3 dirX = Vec3::UnitX();

  template <class V>
  static constexpr void describe(V&& v) {
    using S = GridPositions;
    using settings::Bound;
    using settings::field;
    v(field<&S::translation>("translation").required().withUnit("m").withDoc("grid origin"));
    v(field<&S::gridSizeX>("gridSizeX")
          .required()
          .withBound(Bound::AtLeastOne)
          .withDoc("bodies along x"));
    v(field<&S::gridSizeY>("gridSizeY")
          .required()
          .withBound(Bound::AtLeastOne)
          .withDoc("bodies along y"));
    v(field<&S::distance>("distance")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("m")
          .withDoc("spacing"));
    Jitter::describeIn<S>(v);
    v(field<&S::dirZ>("dirZ")
          .withBound(Bound::NonZeroVector)
          .withDoc("stacking direction of the grid"));
    v(field<&S::dirX>("dirX")
          .withBound(Bound::NonZeroVector)
          .withDoc("fastest-running grid direction (made orthogonal to dirZ)"));
  }
};

/// <Trafo> of a <Pos>: r += q trans, then q = q q(axis, angle).
struct TrafoAttributes {
  Vec3 trans = Vec3::Zero();
  Vec3 axis = Vec3::UnitX();
  std::optional<Real> deg;  ///< deg or rad: the angle
  std::optional<Real> rad;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = TrafoAttributes;
    using settings::field;
    v(field<&S::trans>("trans").required().withUnit("m").withDoc(
        "translation in the current frame: r += q trans"));
    v(field<&S::axis>("axis")
          .required()
          .withBound(settings::Bound::NonZeroVector)
          .withDoc("rotation axis in the current frame: q = q q(axis, angle)"));
    v(field<&S::deg>("deg").derived().withUnit("deg").withDoc("angle; exactly one of deg, rad"));
    v(field<&S::rad>("rad").derived().withUnit("rad").withDoc("angle"));
  }
};

/// <Vel> of <InitialVelocity distribute="transrot">: one body's velocities.
struct VelAttributes {
  Vec3 transDir = Vec3::UnitX();
  Real absTransVel = 0.0;
  Vec3 rotDir = Vec3::UnitX();
  Real absRotVel = 0.0;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = VelAttributes;
    using settings::Bound;
    using settings::field;
    v(field<&S::transDir>("transDir")
          .required()
          .withBound(Bound::NonZeroVector)
          .withDoc("direction of v_S (inertial frame)"));
    v(field<&S::absTransVel>("absTransVel").required().withUnit("m/s").withDoc("|v_S|"));
    v(field<&S::rotDir>("rotDir")
          .required()
          .withBound(Bound::NonZeroVector)
          .withDoc("direction of the angular velocity (body frame)"));
    v(field<&S::absRotVel>("absRotVel").required().withUnit("rad/s").withDoc("|omega|"));
  }
};

/// The kinds of <ForceField> (its variant `type`).
enum class ForceFieldType : std::uint8_t { Gravity, SphericalPulse };
inline constexpr std::array<settings::EnumName<ForceFieldType>, 2> kForceFieldTypeNames = {{
    {ForceFieldType::Gravity, "gravity"},
    {ForceFieldType::SphericalPulse, "spatialspherical-timerandom"},
}};
constexpr std::span<const settings::EnumName<ForceFieldType>> enumNames(ForceFieldType) {
  return kForceFieldTypeNames;
}

/// The bodies a force field acts on (only all of them; the scene format spells it three ways).
enum class ForceTarget : std::uint8_t { All };
inline constexpr std::array<settings::EnumName<ForceTarget>, 3> kForceTargetNames = {{
    {ForceTarget::All, "all"},
    {ForceTarget::All, "All", true},
    {ForceTarget::All, "ALL", true},
}};
constexpr std::span<const settings::EnumName<ForceTarget>> enumNames(ForceTarget) {
  return kForceTargetNames;
}

/// <ForceField>'s own attributes: the variant `type` (GravityField or SphericalPulseField, whose
/// descriptions give the other attributes; the schema documents `type` per variant) and the
/// bodies it acts on, which grain checks and needs no further (every field acts on every
/// simulated body).
struct ForceFieldAttributes {
  ForceFieldType type = ForceFieldType::Gravity;
  ForceTarget applyTo = ForceTarget::All;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = ForceFieldAttributes;
    v(settings::field<&S::type>("type").required());
    v(settings::field<&S::applyTo>("applyTo").withDoc("bodies the field acts on"));
  }
};

/// The state GlobalInitialCondition takes from its .sim file.
enum class WhichState : std::uint8_t { Beg, End, Time };
inline constexpr std::array<settings::EnumName<WhichState>, 3> kWhichStateNames = {{
    {WhichState::Beg, "beg"},
    {WhichState::End, "end"},
    {WhichState::Time, "time"},
}};
constexpr std::span<const settings::EnumName<WhichState>> enumNames(WhichState) {
  return kWhichStateNames;
}

/// <GlobalInitialCondition>: the simulated bodies' states from a .sim file.
struct GlobalInitialConditionAttributes {
  std::string file;
  WhichState whichState = WhichState::End;
  std::optional<Real> time;  ///< s
  bool useTimeToContinue = false;
  bool readVelocities = true;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = GlobalInitialConditionAttributes;
    using settings::field;
    v(field<&S::file>("file").required().withDoc(
        ".sim file; a relative path is taken relative to the current working directory"));
    v(field<&S::whichState>("whichState")
          .required()
          .withDoc("first state, last state, or the first state with t >= time"));
    v(field<&S::time>("time")
          .derived()
          .requiredWhen([](const S& s) { return s.whichState == WhichState::Time; },
                        "with whichState=\"time\"")
          .withBound(settings::Bound::NonNegative)
          .withUnit("s")
          .withDoc("required with whichState=\"time\""));
    v(field<&S::useTimeToContinue>("useTimeToContinue")
          .required()
          .withDoc("true: the simulation starts at the state's time (animated bodies are placed "
                   "at their pose of that time); false: at t = 0"));
    v(field<&S::readVelocities>("readVelocities")
          .withDoc("false: keep the velocities of InitialCondition, read only positions and "
                   "orientations"));
  }
};

/// How SimulateFromReference would replay reference states (not supported yet).
enum class ReferenceMode : std::uint8_t { Continue, UseStates };
inline constexpr std::array<settings::EnumName<ReferenceMode>, 2> kReferenceModeNames = {{
    {ReferenceMode::Continue, "continue"},
    {ReferenceMode::UseStates, "useStates"},
}};
constexpr std::span<const settings::EnumName<ReferenceMode>> enumNames(ReferenceMode) {
  return kReferenceModeNames;
}

/// <SimulateFromReference>: only the disabled form is accepted (read for `enabled` alone).
struct SimulateFromReferenceAttributes {
  bool enabled = false;
  ReferenceMode type = ReferenceMode::Continue;
  std::string file;

  template <class V>
  static constexpr void describe(V&& v) {
    using S = SimulateFromReferenceAttributes;
    v(settings::field<&S::enabled>("enabled").required().withDoc(
        "only enabled=\"false\" is supported yet"));
    v(settings::field<&S::type>("type").derived().withDoc("unused while enabled is false"));
    v(settings::field<&S::file>("file").withDoc("unused while enabled is false"));
  }
};

/// <Set> of GlobalSelectiveIds: the bodies to load.
struct SelectiveSetAttributes {
  std::vector<BodyId> value;

  template <class V>
  static constexpr void describe(V&& v) {
    v(settings::field<&SelectiveSetAttributes::value>("value").required().withDoc(
        "ids \"group,number\" of the bodies to load"));
  }
};

/// <Range> of GlobalSelectiveIds: the bodies with ids in [first, second).
struct SelectiveRangeAttributes {
  std::pair<BodyId, BodyId> value;

  template <class V>
  static constexpr void describe(V&& v) {
    v(settings::field<&SelectiveRangeAttributes::value>("value").required().withDoc(
        "\"g1,n1 g2,n2\": bodies with id in [(g1,n1), (g2,n2)) (ids ordered as group * 2^32 + "
        "number)"));
  }
};

}  // namespace grain::io::detail
