// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <utility>

#include <grain/core/common/error.hpp>
#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/math/quaternion.hpp>
#include <grain/io/body_random.hpp>
#include <grain/io/mesh_loader.hpp>
#include <grain/io/scene.hpp>

#include "io/xml_reader.hpp"

namespace grain::io {

const BodyGroup* SceneDescription::groupOf(BodyId id) const {
  for (const BodyGroup& g : groups) {
    const std::uint32_t n = bodyNumber(id);
    if (bodyGroup(id) == g.groupId && n >= g.firstNumber && n - g.firstNumber < g.count) {
      return &g;
    }
  }
  return nullptr;
}

namespace {

using detail::Diagnostics;
using detail::Element;
using detail::XmlDocument;

constexpr Real kDegree = std::numbers::pi_v<Real> / 180.0;

/// Runs f; a grain::Error from the core (other than a SceneError) becomes a SceneError at `e`.
template <class F>
auto atElement(const Element& e, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const SceneError&) {
    throw;
  } catch (const grain::Error& err) {
    e.fail(err.what());
  }
}

/// Angle (rad) from exactly one of the attributes deg, rad; nullopt if neither is given.
std::optional<Real> readAngle(const Element& e) {
  const bool hasDeg = e.has("deg");
  const bool hasRad = e.has("rad");
  if (hasDeg && hasRad) {
    e.failAt("rad", "give either attribute 'deg' or attribute 'rad', not both");
  }
  if (hasDeg) {
    return e.real("deg") * kDegree;
  }
  if (hasRad) {
    return e.real("rad");
  }
  return std::nullopt;
}

/// Per-body initial state of one group.
struct GroupState {
  std::vector<Vec3> position;
  std::vector<Quat> orientation;
  std::vector<Vec3> velocity;
  std::vector<Vec3> omegaBody;
  explicit GroupState(std::size_t n)
      : position(n, Vec3::Zero()),
        orientation(n, Quat::Identity()),
        velocity(n, Vec3::Zero()),
        omegaBody(n, Vec3::Zero()) {}
};

class SceneBuilder {
 public:
  SceneBuilder(const XmlDocument& doc, Diagnostics& diag, SceneDescription& out,
               std::filesystem::path mediaDir)
      : doc_(doc), diag_(diag), out_(out), mediaDir_(std::move(mediaDir)) {}

  void build() {
    const pugi::xml_node root = doc_.root();
    if (std::string_view(root.name()) != "DynamicsSystem") {
      doc_.fail(
          doc_.lineOf(root), "",
          "the root element must be <DynamicsSystem> (got <" + std::string(root.name()) + ">)");
    }
    const Element rootElement(doc_, diag_, root, "");
    readSceneSettings(*rootElement.child("SceneSettings"));
    if (const auto objects = rootElement.child("SceneObjects")) {
      for (const Element& rb : objects->children("RigidBodies")) {
        readRigidBodies(rb);
      }
    }
  }

 private:
  // ---- SceneSettings --------------------------------------------------------------------------

  void readSceneSettings(const Element& s) {
    // TimeStepperSettings first: statesPerSecond needs deltaT.
    readTimeStepper(*s.child("TimeStepperSettings"));
    readRecorder(*s.child("RecorderSettings"));
    if (const auto map = s.child("ContactParameterMap")) {
      readContactMap(*map);
    }
    if (const auto forces = s.child("ExternalForces")) {
      for (const Element& f : forces->children("ForceField")) {
        readForceField(f);
      }
    }
    out_.hasMpiSettings = static_cast<bool>(s.node().child("MPISettings"));
  }

  void readTimeStepper(const Element& e) {
    out_.stepper.deltaT = e.real("deltaT");
    out_.stepper.endTime = e.real("endTime");
    if (const auto ref = e.child("SimulateFromReference")) {
      if (ref->boolean("enabled")) {
        ref->failAt("enabled", "<SimulateFromReference enabled=\"true\"> is not supported yet");
      }
      if (ref->has("type")) {
        (void)ref->enumeration("type");
      }
      ref->markIgnored();
    }
    readSolver(*e.child("InclusionSolverSettings"));
  }

  void readSolver(const Element& e) {
    InclusionSolverSettings& s = out_.stepper.solver;
    const std::string method = e.enumeration("method");
    if (method == "SOR" || method == "SORContact") {
      s.method = SolverMethod::SorContact;
    } else if (method == "SORFull") {
      s.method = SolverMethod::SorFull;
    } else if (method == "SORNormalTangential") {
      s.method = SolverMethod::SorNormalTangential;
    } else {
      s.method = SolverMethod::Jor;
    }
    out_.solverExtras.useGpu = e.boolean("useGPU");
    out_.solverExtras.gpuDevice = e.integer("useGPUID");
    if (out_.solverExtras.useGpu) {
      e.warn("useGPU=\"true\": grain has no GPU solver, the contact problem is solved on the CPU");
    }
    s.alphaJorProx = e.real("alphaJORProx");
    s.alphaSorProx = e.real("alphaSORProx");
    s.rStrategy = e.enumeration("matrixRStrategy") == "sum" ? RStrategy::Sum : RStrategy::Max;
    s.subMethodUcf =
        e.enumeration("subMethodUCF") == "DS" ? UcfSubMethod::DeSaxce : UcfSubMethod::AlartCurnier;
    const std::string conv = e.enumeration("convergenceMethod");
    s.convergenceMethod = conv == "InLambda"           ? ConvergenceMethod::InLambda
                          : conv == "InVelocityLocal"  ? ConvergenceMethod::InVelocityLocal
                          : conv == "InEnergyVelocity" ? ConvergenceMethod::InEnergyVelocity
                                                       : ConvergenceMethod::InVelocity;
    s.minIter = e.integer("minIter");
    s.maxIter = e.integer("maxIter");
    if (s.minIter > s.maxIter) {
      e.failAt("minIter", "attribute 'minIter' must be <= maxIter (got " +
                              std::to_string(s.minIter) + " > " + std::to_string(s.maxIter) + ")");
    }
    s.absTol = e.real("absTol");
    s.relTol = e.real("relTol");
    out_.solverExtras.computeResidual = e.boolean("computeResidual");
    s.computeTotalOverlap = e.boolean("computeTotalOverlap");
    s.usePercussionCache = e.boolean("usePercussionCache");
    s.reserveContacts = e.integer("reserveContacts");
    s.isFiniteCheck = e.boolean("isFiniteCheck");
    s.driftCorrectionGap = e.boolean("driftCorrectionGap");
    if (s.driftCorrectionGap && !e.has("driftCorrectionGapAlpha")) {
      e.fail(
          "missing required attribute 'driftCorrectionGapAlpha' (required when "
          "driftCorrectionGap is true)");
    }
    s.driftCorrectionGapAlpha = e.real("driftCorrectionGapAlpha");
    atElement(e, [&] { validate(out_.stepper); });
  }

  void readRecorder(const Element& e) {
    RecorderSettings& r = out_.recorder;
    const std::string mode = e.enumeration("mode");
    if (mode == "everyTimeStep") {
      r.mode = RecorderMode::EveryTimeStep;
      r.everyXStep = 1;
    } else if (mode == "noOutput") {
      r.mode = RecorderMode::NoOutput;
      r.everyXStep = 1;
    } else {
      r.mode = RecorderMode::EveryXTimeStep;
      if (const auto every = e.optionalInteger("everyXStep")) {
        r.everyXStep = *every;
      } else if (const auto sps = e.optionalReal("statesPerSecond")) {
        // 1/(sps dt) that is an integer up to rounding gives that integer.
        const Real x = 1.0 / (*sps * out_.stepper.deltaT);
        const Real steps = std::floor(x * (1.0 + 1e-9));
        r.everyXStep = steps < 1.0 ? 1 : static_cast<std::uint64_t>(steps);
      } else {
        e.fail("mode=\"everyXTimeStep\" needs attribute 'everyXStep' or 'statesPerSecond'");
      }
    }
  }

  ContactParameter readContactLaw(const Element& e) {
    ContactParameter p;
    p.model = e.enumeration("type") == "UCFD" ? ContactModel::UCFD : ContactModel::UCF;
    p.mu = e.real("mu");
    p.epsilonN = e.real("epsilonN");
    p.epsilonT = e.real("epsilonT");
    if (p.model == ContactModel::UCFD) {
      p.invDampingN = e.real("invDampingN");
      p.invDampingT = e.real("invDampingT");
    }
    atElement(e, [&] { validateContactParameter(p); });
    return p;
  }

  void readContactMap(const Element& e) {
    ContactParameterMap& map = out_.system.contactParameters;
    if (const auto standard = e.child("ContactParameterStandard")) {
      map.setStandard(readContactLaw(*standard));
    }
    std::map<std::pair<MaterialId, MaterialId>, std::size_t> seen;
    for (const Element& c : e.children("ContactParameter")) {
      const MaterialId m1 = c.integer("materialId1");
      const MaterialId m2 = c.integer("materialId2");
      const ContactParameter p = readContactLaw(c);
      const auto key = std::minmax(m1, m2);
      const auto [it, inserted] = seen.emplace(key, c.line());
      if (!inserted) {
        c.failAt("materialId1", "contact parameters of materials (" + std::to_string(m1) + ", " +
                                    std::to_string(m2) + ") are already given on line " +
                                    std::to_string(it->second));
      }
      map.set(m1, m2, p);
    }
  }

  void readForceField(const Element& e) {
    (void)e.enumeration("type");  // only "gravity" is implemented
    (void)e.enumeration("applyTo");
    GravityField g;
    g.value = e.real("value");
    g.direction = e.vector3("direction").normalized();
    out_.system.externalForces.addGravity(g);
  }

  // ---- SceneObjects ---------------------------------------------------------------------------

  void readRigidBodies(const Element& e) {
    BodyGroup group;
    group.name = e.string("name");
    group.line = e.line();
    group.count = e.integer("instances");
    group.enableSelectiveIds = e.boolean("enableSelectiveIds");
    if (const auto id = e.optionalInteger("groupId")) {
      group.groupId = *id;
    } else {
      if (anyGroup_ && maxGroupId_ == 0xffffffffu) {
        e.fail("cannot number this group: groupId " + std::to_string(maxGroupId_) +
               " is already the largest possible");
      }
      group.groupId = anyGroup_ ? maxGroupId_ + 1 : 0;
    }
    maxGroupId_ = anyGroup_ ? std::max(maxGroupId_, group.groupId) : group.groupId;
    anyGroup_ = true;
    std::uint64_t& next = nextNumber_[group.groupId];
    if (next + group.count > (std::uint64_t{1} << 32)) {
      e.failAt("instances",
               "group " + std::to_string(group.groupId) + " would have more than 2^32 bodies");
    }
    group.firstNumber = static_cast<std::uint32_t>(next);
    next += group.count;

    const Element dynamics = *e.child("DynamicProperties");
    const Element state = *dynamics.child("DynamicState");
    const std::string type = state.enumeration("type");
    group.motion = type == "simulated" ? BodyMotion::Simulated : BodyMotion::Static;
    const bool simulated = group.motion == BodyMotion::Simulated;

    const Shape shape = readGeometry(*e.child("Geometry"), group);
    group.material = dynamics.child("Material")->integer("id");

    Real mass = 0.0;
    Vec3 inertia = Vec3::Zero();
    const auto massEl = dynamics.child("Mass");
    const auto inertiaEl = dynamics.child("InertiaTensor");
    if (simulated) {
      if (!massEl) {
        dynamics.fail("missing required element 'Mass' (simulated bodies need a mass)");
      }
      if (!inertiaEl) {
        dynamics.fail("missing required element 'InertiaTensor' (simulated bodies need one)");
      }
      if (massEl->spec().variantValue == "uniform") {
        mass = massEl->real("value");
      } else {
        const Real density = massEl->real("density");
        mass = atElement(*massEl, [&] { return homogeneousMassProperties(shape, density).mass; });
      }
      inertia = atElement(*inertiaEl, [&] { return homogeneousInertia(shape, mass); });
    } else {
      // Static bodies have no mass; GRSF's files still carry these elements.
      if (massEl) {
        massEl->markIgnored();
      }
      if (inertiaEl) {
        inertiaEl->markIgnored();
      }
    }

    GroupState init(group.count);
    readInitialCondition(*dynamics.child("InitialCondition"), simulated, init);

    const std::uint32_t groupIndex = static_cast<std::uint32_t>(out_.groups.size());
    for (std::uint32_t k = 0; k < group.count; ++k) {
      BodyDef d;
      d.id = group.id(k);
      d.motion = group.motion;
      d.shape = group.shape;
      d.material = group.material;
      d.mass = mass;
      d.inertiaBody = inertia;
      d.position = init.position[k];
      d.orientation = init.orientation[k];
      d.velocity = init.velocity[k];
      d.omegaBody = init.omegaBody[k];
      atElement(e, [&] { out_.system.addBody(d); });
      out_.groupOfBody.push_back(groupIndex);
    }
    out_.groups.push_back(std::move(group));
  }

  Shape readGeometry(const Element& geometry, BodyGroup& group) {
    std::vector<Element> shapes;
    for (const char* name : {"Sphere", "Box", "Capsule", "Halfspace", "Mesh"}) {
      for (Element& s : geometry.children(name)) {
        shapes.push_back(std::move(s));
      }
    }
    if (shapes.size() != 1) {
      geometry.fail("<Geometry> needs exactly one of Sphere, Box, Capsule, Halfspace, Mesh (got " +
                    std::to_string(shapes.size()) + ")");
    }
    const Element& g = shapes.front();
    group.geometryElement = std::string(g.name());
    if (group.motion == BodyMotion::Simulated && (g.name() == "Halfspace" || g.name() == "Mesh")) {
      g.fail("a " + std::string(g.name()) +
             " body must be static (simulated bodies need a Sphere, Box or Capsule)");
    }
    Shape shape;
    if (g.name() == "Sphere") {
      shape = Sphere{g.real("radius")};
    } else if (g.name() == "Box") {
      Box b;
      b.halfExtent = 0.5 * g.vector3("extent");
      b.center = g.vector3("center");
      shape = b;
    } else if (g.name() == "Capsule") {
      Capsule c;
      c.axis = g.vector3("normal");
      c.radius = g.real("radius");
      c.length = g.real("length");
      shape = c;
    } else if (g.name() == "Halfspace") {
      shape = Halfspace{g.vector3("normal")};
    } else {
      shape = readMesh(g, group);
    }
    group.shape = atElement(g, [&] { return out_.system.shapes.add(shape); });
    return shape;
  }

  Shape readMesh(const Element& g, BodyGroup& group) {
    MeshImportTransform t;
    t.scale = g.vector3("scale");
    t.translation = g.vector3("trans");
    const auto angle = readAngle(g);
    if (g.has("rotAxis") && !angle) {
      g.fail("missing required attribute 'deg' or 'rad' (required with rotAxis)");
    }
    t.rotation = quat::fromAxisAngle(g.vector3("rotAxis"), angle.value_or(0.0));
    const std::string file = g.string("file");
    if (!meshSupportAvailable()) {
      g.failAt("file", "Mesh geometry needs Assimp, and this build of grain has no Assimp");
    }
    std::filesystem::path path(file);
    if (path.is_relative()) {
      path = mediaDir_ / path;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      g.failAt("file", "mesh file '" + file + "' not found (looked for '" + path.string() + "')");
    }
    group.meshFile = path;
    try {
      return Mesh{loadTriangleMesh(path, t)};
    } catch (const grain::Error& err) {
      g.failAt("file", err.what());
    }
  }

  // ---- Initial conditions ---------------------------------------------------------------------

  void readInitialCondition(const Element& ic, bool simulated, GroupState& init) {
    const Element pos = *ic.child("InitialPosition");
    const std::string_view kind = pos.spec().variantValue;
    if (kind == "linear") {
      readLinear(pos, init);
    } else if (kind == "grid") {
      readGrid(pos, init);
    } else if (kind == "transforms") {
      readTransforms(pos, init);
    }  // "none": origin, identity
    if (const auto vel = ic.child("InitialVelocity")) {
      if (!simulated) {
        vel->markIgnored();  // static bodies do not move
      } else if (vel->spec().variantValue == "transrot") {
        readVelocities(*vel, init);
      }
    }
  }

  static void readLinear(const Element& e, GroupState& init) {
    const Vec3 start = e.vector3("position");
    const Vec3 dir = e.vector3("direction").normalized();
    const Real distance = e.real("distance");
    const bool jitter = e.boolean("jitter");
    const Real delta = e.real("delta");
    const std::uint32_t seed = e.integer("seed");
    for (std::size_t k = 0; k < init.position.size(); ++k) {
      Vec3 p = start + dir * (distance * static_cast<Real>(k));
      if (jitter) {
        BodyRandom rng(seed, k);
        for (;;) {
          const Vec3 v = rng.unitVector().cross(dir);
          if (v.norm() > 1e-6) {
            p += delta * v.normalized();
            break;
          }
        }
      }
      init.position[k] = p;
    }
  }

  static void readGrid(const Element& e, GroupState& init) {
    const Vec3 translation = e.vector3("translation");
    const std::uint64_t gx = e.integer("gridSizeX");
    const std::uint64_t gy = e.integer("gridSizeY");
    const Real d = e.real("distance");
    const bool jitter = e.boolean("jitter");
    const Real delta = e.real("delta");
    const std::uint32_t seed = e.integer("seed");
    const Vec3 dirZ = e.vector3("dirZ");
    const Vec3 dirX = e.vector3("dirX");
    // Grid frame: z along dirZ, y = dirZ x dirX, x = y x z (dirX made orthogonal to dirZ).
    Mat3 frame;
    frame.col(2) = dirZ.normalized();
    const Vec3 y = dirZ.cross(dirX);
    if (y.norm() <= 1e-12 * dirZ.norm() * dirX.norm()) {
      e.failAt("dirX", "attribute 'dirX' must not be parallel to dirZ");
    }
    frame.col(1) = y.normalized();
    frame.col(0) = frame.col(1).cross(frame.col(2)).normalized();
    const Real cx = 0.5 * static_cast<Real>(gx - 1) * d;
    const Real cy = 0.5 * static_cast<Real>(gy - 1) * d;
    for (std::size_t k = 0; k < init.position.size(); ++k) {
      const std::uint64_t ix = k % gx;
      const std::uint64_t iy = (k / gx) % gy;
      const std::uint64_t iz = k / (gx * gy);
      const Vec3 local(static_cast<Real>(ix) * d - cx, static_cast<Real>(iy) * d - cy,
                       static_cast<Real>(iz) * d);
      Vec3 p = frame * local + translation;
      if (jitter) {
        BodyRandom rng(seed, k);
        p += delta * rng.unitVector();
      }
      init.position[k] = p;
    }
  }

  static void readTransforms(const Element& e, GroupState& init) {
    std::vector<std::pair<Vec3, Quat>> poses;
    for (const Element& pos : e.children("Pos")) {
      Vec3 r = Vec3::Zero();
      Quat q = Quat::Identity();
      for (const Element& t : pos.children("Trafo")) {
        const Vec3 trans = t.vector3("trans");
        const Vec3 axis = t.vector3("axis");
        const auto angle = readAngle(t);
        if (!angle) {
          t.fail("missing required attribute 'deg' or 'rad'");
        }
        r += q * trans;
        q = (q * quat::fromAxisAngle(axis, *angle)).normalized();
      }
      poses.emplace_back(r, q);
    }
    for (std::size_t k = 0; k < init.position.size(); ++k) {
      const auto& [r, q] = poses[std::min(k, poses.size() - 1)];
      init.position[k] = r;
      init.orientation[k] = q;
    }
  }

  static void readVelocities(const Element& e, GroupState& init) {
    std::vector<std::pair<Vec3, Vec3>> vels;
    for (const Element& v : e.children("Vel")) {
      const Vec3 v0 = v.vector3("transDir").normalized() * v.real("absTransVel");
      const Vec3 w0 = v.vector3("rotDir").normalized() * v.real("absRotVel");
      vels.emplace_back(v0, w0);
    }
    for (std::size_t k = 0; k < init.velocity.size(); ++k) {
      const auto& [v, w] = vels[std::min(k, vels.size() - 1)];
      init.velocity[k] = v;
      init.omegaBody[k] = w;
    }
  }

  const XmlDocument& doc_;
  Diagnostics& diag_;
  SceneDescription& out_;
  std::filesystem::path mediaDir_;
  std::map<std::uint32_t, std::uint64_t> nextNumber_;
  std::uint32_t maxGroupId_ = 0;
  bool anyGroup_ = false;
};

}  // namespace

SceneDescription loadScene(const std::filesystem::path& file, const SceneLoadOptions& options) {
  SceneDescription out;
  out.file = file;
  const XmlDocument doc(file, file.string());
  Diagnostics diag;
  const std::filesystem::path media =
      options.mediaDirectory.empty() ? file.parent_path() : options.mediaDirectory;
  SceneBuilder(doc, diag, out, media).build();
  out.ignored = std::move(diag.ignored);
  out.warnings = std::move(diag.warnings);
  return out;
}

}  // namespace grain::io
