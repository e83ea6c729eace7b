// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include <grain/core/common/error.hpp>
#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/math/quaternion.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/io/body_random.hpp>
#include <grain/io/mesh_loader.hpp>
#include <grain/io/radius_distribution.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/sim_file.hpp>
#include <grain/io/simulated_share.hpp>

#include "io/scene_elements.hpp"
#include "io/settings_io.hpp"
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

/// The motion a DynamicState@type names (kBodyMotionNames); static for a name that is none,
/// which the format check refuses.
BodyMotion motionNamed(std::string_view type) {
  BodyMotion motion = BodyMotion::Static;
  settings::valueOf(type, motion);
  return motion;
}

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

/// Angle (rad) from exactly one of the attributes deg, rad of `e` (read into `deg`, `rad`);
/// nullopt if neither is given.
std::optional<Real> angleOf(const Element& e, std::optional<Real> deg, std::optional<Real> rad) {
  if (deg && rad) {
    e.failAt("rad", "give either attribute 'deg' or attribute 'rad', not both");
  }
  return deg ? std::optional<Real>(*deg * kDegree) : rad;
}

/// Initial state of one body of a group.
struct InitialPose {
  Vec3 position = Vec3::Zero();
  Quat orientation = Quat::Identity();
  Vec3 velocity = Vec3::Zero();
  Vec3 omegaBody = Vec3::Zero();
};

/// The InitialCondition of a group, read once and evaluated per body on demand: every body's
/// state depends only on its index (jitter from the random stream (seed, index)), so a process
/// that builds a share of a large group keeps no per-group arrays.
struct GroupInitialCondition {
  enum class Kind : std::uint8_t { None, Linear, Grid, Transforms };
  Kind kind = Kind::None;
  // Linear: start + k distance dir; Grid: frame * cell + translation.
  Vec3 start = Vec3::Zero();
  Vec3 direction = Vec3::UnitX();
  Mat3 frame = Mat3::Identity();
  Real distance = 0;
  Real cx = 0, cy = 0;  ///< grid centring offsets (m)
  std::uint64_t gx = 1, gy = 1;
  detail::Jitter jitter;  ///< Linear, Grid
  std::vector<std::pair<Vec3, Quat>>
      poses;  ///< Transforms (at least one): body k takes min(k, last)
  std::vector<std::pair<Vec3, Vec3>> velocities;  ///< transrot: (v, omega_K), min(k, last)

  InitialPose at(std::uint64_t k) const {
    InitialPose pose;
    switch (kind) {
      case Kind::None:
        break;
      case Kind::Linear: {
        pose.position = start + direction * (distance * static_cast<Real>(k));
        if (jitter.jitter) {
          BodyRandom rng(jitter.seed, k);
          for (;;) {
            const Vec3 v = rng.unitVector().cross(direction);
            if (v.norm() > 1e-6) {
              pose.position += jitter.delta * v.normalized();
              break;
            }
          }
        }
        break;
      }
      case Kind::Grid: {
        const std::uint64_t ix = k % gx;
        const std::uint64_t iy = (k / gx) % gy;
        const std::uint64_t iz = k / (gx * gy);
        const Vec3 local(static_cast<Real>(ix) * distance - cx,
                         static_cast<Real>(iy) * distance - cy, static_cast<Real>(iz) * distance);
        pose.position = frame * local + start;
        if (jitter.jitter) {
          BodyRandom rng(jitter.seed, k);
          pose.position += jitter.delta * rng.unitVector();
        }
        break;
      }
      case Kind::Transforms: {
        const auto& [r, q] = poses[std::min<std::uint64_t>(k, poses.size() - 1)];
        pose.position = r;
        pose.orientation = q;
        break;
      }
    }
    if (!velocities.empty()) {
      const auto& [v, w] = velocities[std::min<std::uint64_t>(k, velocities.size() - 1)];
      pose.velocity = v;
      pose.omegaBody = w;
    }
    return pose;
  }
};

/// A child of GlobalGeometries: one shape, or a random sphere per id of a range (made only when a
/// body this process builds refers to it, so the memory follows the bodies, not the range).
struct GlobalGeometry {
  std::uint32_t count = 1;  ///< ids first .. first + count - 1
  ShapeIndex shape = 0;     ///< the shape, unless `radii`
  std::optional<RadiusDistribution>
      radii;  ///< random spheres: id first + j has radii.sample(seed, j)
  std::uint32_t seed = 0;
  std::string element;  ///< "Sphere", "Box", ...
  std::filesystem::path meshFile;
  std::size_t line = 0;
};

/// How a group's bodies get their shapes.
struct GroupShapes {
  enum class Kind : std::uint8_t {
    Shared,
    RandomSphere,
    GlobalUniform,
    GlobalLinear,
    GlobalRandom
  };
  Kind kind = Kind::Shared;
  ShapeIndex shared = 0;
  std::uint32_t globalId = 0;  ///< GlobalUniform
  std::optional<RadiusDistribution> radii;
  std::uint32_t seed = 0;
  std::uint32_t startId = 0;
  std::uint32_t endId = 0;
};

class SceneBuilder {
 public:
  SceneBuilder(const XmlDocument& doc, Diagnostics& diag, SceneDescription& out,
               std::filesystem::path mediaDir, const SceneLoadOptions& options)
      : doc_(doc),
        diag_(diag),
        out_(out),
        mediaDir_(std::move(mediaDir)),
        keepSimulated_(options.keepSimulatedBody),
        share_(options.simulatedShare),
        ranges_(options.simulatedOrdinals),
        readInitialState_(options.readInitialState) {}

  void build() {
    const pugi::xml_node root = doc_.root();
    if (std::string_view(root.name()) != "DynamicsSystem") {
      doc_.fail(
          doc_.lineOf(root), "",
          "the root element must be <DynamicsSystem> (got <" + std::string(root.name()) + ">)");
    }
    const Element rootElement(doc_, diag_, root, "");
    // Every element and attribute is checked first (in document order), so that format errors
    // are reported before any expensive work, and also in parts that are not read.
    checkTree(rootElement);
    const Element settings = *rootElement.child("SceneSettings");
    readSceneSettings(settings);
    if (const auto objects = rootElement.child("SceneObjects")) {
      if (share_) {
        // The share's ordinals need the scene's simulated bodies in all: the instances of the
        // simulated groups (a few attributes per RigidBodies element).
        std::uint64_t total = 0;
        for (const Element& rb : objects->children("RigidBodies")) {
          const Element state = *rb.child("DynamicProperties")->child("DynamicState");
          const bool simulated = motionNamed(state.spec().variantValue) == BodyMotion::Simulated;
          total += simulated ? rb.integer("instances") : 0;
        }
        ranges_ = std::vector<OrdinalRange>{shareOf(total, share_->first, share_->second)};
      }
      for (const Element& rb : objects->children("RigidBodies")) {
        readRigidBodies(rb);
      }
    }
    // After the bodies (GRSF's "post" settings): states from a .sim file.
    if (const auto ic = settings.child("GlobalInitialCondition")) {
      readGlobalInitialCondition(*ic);
    }
    if (out_.system.time > out_.stepper.endTime) {
      settings.child("TimeStepperSettings")
          ->failAt("endTime", "attribute 'endTime' (" + detail::formatReal(out_.stepper.endTime) +
                                  " s) is before the start time " +
                                  detail::formatReal(out_.system.time) +
                                  " s taken from GlobalInitialCondition");
    }
  }

 private:
  static void checkTree(const Element& e) {
    for (const Element& c : e.allChildren()) {
      checkTree(c);
    }
  }

  // ---- SceneSettings --------------------------------------------------------------------------

  void readSceneSettings(const Element& s) {
    // TimeStepperSettings first: statesPerSecond needs deltaT.
    readTimeStepper(*s.child("TimeStepperSettings"));
    readRecorder(*s.child("RecorderSettings"));
    if (const auto cfo = s.child("ContactForceOutput")) {
      readContactForceOutput(*cfo);
    }
    if (const auto map = s.child("ContactParameterMap")) {
      readContactMap(*map);
    }
    if (const auto forces = s.child("ExternalForces")) {
      for (const Element& f : forces->children("ForceField")) {
        readForceField(f);
      }
    }
    if (const auto globals = s.child("GlobalGeometries")) {
      readGlobalGeometries(*globals);
    }
    if (const auto sel = s.child("GlobalSelectiveIds")) {
      readSelectiveIds(*sel);
    }
    if (const auto mpi = s.child("MPISettings")) {
      readMpiSettings(*mpi);
    }
  }

  void readTimeStepper(const Element& e) {
    detail::readSettings(e, out_.stepper);
    if (const auto ref = e.child("SimulateFromReference")) {
      if (detail::read<detail::SimulateFromReferenceAttributes>(*ref).enabled) {
        ref->failAt("enabled", "<SimulateFromReference enabled=\"true\"> is not supported yet");
      }
      ref->markIgnored();
    }
    readSolver(*e.child("InclusionSolverSettings"));
    detail::readSettings(e, out_.stepper.solver, "TimeStepperSettings");
  }

  void readSolver(const Element& e) {
    InclusionSolverSettings& s = out_.stepper.solver;
    const std::string method = e.enumeration("method");
    solverMethodName_ = method;  // as the scene spells it ("SOR"), for messages
    detail::readSettings(e, out_.solverExtras);
    if (out_.solverExtras.useGpu) {
      e.warn("useGPU=\"true\": grain has no GPU solver, the contact problem is solved on the CPU");
    }
    detail::readSettings(e, s);  // method sets s.method or s.localMethod
    if (s.localMethod && e.has("convergenceMethod") &&
        s.convergenceMethod != ConvergenceMethod::NaturalMap &&
        s.convergenceMethod != ConvergenceMethod::Koziara) {
      e.warn("convergenceMethod=\"" + e.enumeration("convergenceMethod") +
             "\" does not apply to the local solver " + method +
             ": it stops on the NaturalMap error <= relTol");
    }
    if (e.has("ipmPreconditioner") && !(s.localMethod == LocalSolverMethod::Ipm && s.matrixFree)) {
      e.warn("ipmPreconditioner=\"" + e.enumeration("ipmPreconditioner") +
             "\" has no effect: it applies to method IPM with matrixFree=\"true\" only");
    }
    detail::checkRelations(e, s);
    if (s.matrixFree && !(s.localMethod && runsMatrixFree(*s.localMethod))) {
      e.failAt("matrixFree", "matrixFree=\"true\" is supported by methods " +
                                 matrixFreeMethodNames() + " only (got method \"" + method + "\")");
    }
    atElement(e, [&] { validate(out_.stepper); });
  }

  void readRecorder(const Element& e) {
    RecorderSettings& r = out_.recorder;
    detail::readSettings(e, r);  // everyXStep, statesPerSecond only with mode="everyXTimeStep"
    if (r.mode == RecorderMode::EveryXTimeStep && !e.has("everyXStep")) {
      if (r.statesPerSecond) {
        // 1/(sps dt) that is an integer up to rounding gives that integer.
        const Real x = 1.0 / (*r.statesPerSecond * out_.stepper.deltaT);
        const Real steps = std::floor(x * (1.0 + 1e-9));
        r.everyXStep = steps < 1.0 ? 1 : static_cast<std::uint64_t>(std::min(steps, 4e9));
        e.resolve("everyXStep", std::to_string(r.everyXStep));
      } else {
        e.fail("mode=\"everyXTimeStep\" needs attribute 'everyXStep' or 'statesPerSecond'");
      }
    }
  }

  void readContactForceOutput(const Element& e) {
    ContactForceOutputSettings c;
    detail::readSettings(e, c);
    detail::readSettings(e, c.compatible);
    out_.contactForceOutput = c;
  }

  ContactParameter readContactLaw(const Element& e) {
    ContactParameter p;
    detail::readSettings(e, p);  // UCF: the inverse dampings are ignored, p keeps 0
    const InclusionSolverSettings& solver = out_.stepper.solver;
    if (p.muRolling > 0.0 && (solver.localMethod || solver.method != SolverMethod::SorContact)) {
      e.failAt("muRolling", "attribute 'muRolling' (" + e.string("muRolling") +
                                "): " + kMuRollingNeedsSorContact +
                                " (InclusionSolverSettings has method=\"" + solverMethodName_ +
                                "\")");
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
    if (detail::read<detail::ForceFieldAttributes>(e).type == detail::ForceFieldType::Gravity) {
      GravityField g;
      detail::readSettings(e, g);
      g.direction.normalize();
      out_.system.externalForces.addGravity(g);
      return;
    }
    SphericalPulseField f;
    detail::readSettings(e, f);
    detail::checkRelations(e, f);
    atElement(e, [&] { out_.system.externalForces.addSphericalPulse(f); });
  }

  // ---- GlobalGeometries, GlobalSelectiveIds, MPISettings --------------------------------------

  void addGlobalGeometry(const Element& g, std::uint32_t first, GlobalGeometry geometry) {
    const std::uint64_t last = std::uint64_t{first} + geometry.count - 1;
    // The definitions are disjoint ranges: the one starting at or before `last` must end before
    // `first`.
    if (auto next = globals_.upper_bound(static_cast<std::uint32_t>(last));
        next != globals_.begin()) {
      --next;
      if (std::uint64_t{next->first} + next->second.count > first) {
        const std::uint32_t used = std::max(first, next->first);
        g.failAt("id", "global geometry id " + std::to_string(used) + " is already used on line " +
                           std::to_string(next->second.line));
      }
    }
    geometry.element = std::string(g.name());
    geometry.line = g.line();
    globals_.emplace(first, std::move(geometry));
  }

  /// The definition of global geometry `id`, or null.
  const GlobalGeometry* findGlobal(std::uint32_t id) const {
    auto it = globals_.upper_bound(id);
    if (it == globals_.begin()) {
      return nullptr;
    }
    --it;
    return std::uint64_t{id} < std::uint64_t{it->first} + it->second.count ? &it->second : nullptr;
  }

  /// The shape of global geometry `id` (defined), made on first use for random spheres.
  ShapeIndex globalShape(std::uint32_t id, const GlobalGeometry& g) {
    if (!g.radii) {
      return g.shape;
    }
    if (const auto made = globalSpheres_.find(id); made != globalSpheres_.end()) {
      return made->second;
    }
    const std::uint32_t first = std::prev(globals_.upper_bound(id))->first;
    const ShapeIndex shape = out_.system.shapes.add(Sphere{g.radii->sample(g.seed, id - first)});
    globalSpheres_.emplace(id, shape);
    return shape;
  }

  void readGlobalGeometries(const Element& e) {
    for (const Element& g : e.allChildren()) {
      if (g.name() == "Sphere" && g.spec().variantValue == "random") {
        const auto ids = detail::read<detail::GlobalSphereIds>(g);
        GlobalGeometry random;
        random.radii = readRadiusDistribution(g);
        if (std::uint64_t{ids.id} + ids.instances - 1 > 0xffffffffull) {
          g.failAt("instances", "ids id .. id + instances - 1 exceed the 32-bit range");
        }
        random.count = ids.instances;
        random.seed = detail::read<detail::RandomSeed>(g).seed;
        addGlobalGeometry(g, ids.id, std::move(random));
        continue;
      }
      GlobalGeometry one;
      const std::uint32_t id = detail::read<detail::GlobalGeometryId>(g).id;
      const Shape shape = readShape(g, one.meshFile);
      one.shape = atElement(g, [&] { return out_.system.shapes.add(shape); });
      addGlobalGeometry(g, id, std::move(one));
    }
  }

  void readSelectiveIds(const Element& e) {
    SelectiveIds sel;
    if (const auto set = e.child("Set")) {
      sel.set = detail::read<detail::SelectiveSetAttributes>(*set).value;
      std::sort(sel.set.begin(), sel.set.end());
    }
    if (const auto range = e.child("Range")) {
      const auto ids = detail::read<detail::SelectiveRangeAttributes>(*range).value;
      if (ids.first > ids.second) {
        range->failAt("value", "attribute 'value' must give the first id before the second (got " +
                                   range->string("value") + ")");
      }
      sel.ranges.push_back(ids);
    }
    out_.selectiveIds = std::move(sel);
  }

  void readMpiSettings(const Element& e) {
    LoadBalanceSettings m;
    const Element pt = *e.child("ProcessTopology");
    detail::readSettings(pt, m, "ProcessTopology");
    const Element t = *pt.child("Topology");
    detail::readSettings(t, m, "Topology");
    if (m.buildMode == LoadBalanceSettings::BuildMode::Predefined) {
      if (!m.aligned) {
        t.failAt("aligned",
                 "attribute 'aligned' must be true (only axis-aligned predefined "
                 "boxes are supported)");
      }
      detail::checkRelations(t, m, "Topology");
    } else {
      // Only meaningful for predefined boxes: accepted, reported, not used.
      const LoadBalanceSettings defaults;
      m.aligned = defaults.aligned;
      m.minPoint = defaults.minPoint;
      m.maxPoint = defaults.maxPoint;
      for (const char* a : {"aligned", "minPoint", "maxPoint"}) {
        if (t.has(a)) {
          diag_.ignored.push_back(t.path() + "@" + a);
        }
      }
    }
    if (const auto mp = pt.child("MassPointPrediction")) {
      detail::readSettings(*mp, m, "MassPointPrediction");
    }
    if (const auto of = pt.child("GlobalOutlierFilter")) {
      m.outlierFilter = true;
      detail::readSettings(*of, m, "GlobalOutlierFilter");
    }
    detail::readSettings(*e.child("InclusionSolverSettings"), m, "InclusionSolverSettings");
    out_.mpi = m;
  }

  // ---- SceneObjects ---------------------------------------------------------------------------

  bool selected(const BodyGroup& group, std::uint32_t k) const {
    return !group.enableSelectiveIds || !out_.selectiveIds ||
           out_.selectiveIds->contains(group.id(k));
  }

  /// The number of k in [0, count) that selected() accepts, from the selection's set and ranges
  /// (not by visiting every index).
  std::uint32_t selectedCount(const BodyGroup& group) const {
    if (!group.enableSelectiveIds || !out_.selectiveIds || group.count == 0) {
      return group.count;
    }
    const SelectiveIds& sel = *out_.selectiveIds;
    const BodyId a = group.id(0);
    const BodyId b = a + group.count;  // one past the group's last id
    // The ranges clipped to [a, b), merged.
    std::vector<std::pair<BodyId, BodyId>> ranges;
    for (const auto& [first, second] : sel.ranges) {
      const BodyId lo = std::max(first, a);
      const BodyId hi = std::min(second, b);
      if (lo < hi) {
        ranges.emplace_back(lo, hi);
      }
    }
    std::sort(ranges.begin(), ranges.end());
    std::uint64_t n = 0;
    BodyId covered = a;  // ids below it are counted
    for (const auto& [lo, hi] : ranges) {
      const BodyId from = std::max(lo, covered);
      if (from < hi) {
        n += hi - from;
        covered = hi;
      }
    }
    const auto inRange = [&](BodyId id) {
      return std::any_of(ranges.begin(), ranges.end(),
                         [&](const auto& r) { return id >= r.first && id < r.second; });
    };
    // The set is sorted and may repeat an id.
    auto it = std::lower_bound(sel.set.begin(), sel.set.end(), a);
    for (BodyId last = b; it != sel.set.end() && *it < b; ++it) {
      if (*it != last && !inRange(*it)) {
        ++n;
      }
      last = *it;
    }
    return static_cast<std::uint32_t>(n);
  }

  void readRigidBodies(const Element& e) {
    BodyGroup group;
    detail::readSettings(e, group);
    group.line = e.line();
    if (!e.has("groupId")) {
      if (anyGroup_ && maxGroupId_ == 0xffffffffu) {
        e.fail("cannot number this group: groupId " + std::to_string(maxGroupId_) +
               " is already the largest possible");
      }
      group.groupId = anyGroup_ ? maxGroupId_ + 1 : 0;
      e.resolve("groupId", std::to_string(group.groupId));
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
    group.motion = motionNamed(state.spec().variantValue);
    detail::readSettings(state, group, "DynamicState");  // velocities of animated bodies
    const bool simulated = group.motion == BodyMotion::Simulated;

    GroupShapes shapes = readGeometry(*e.child("Geometry"), group);
    detail::readSettings(*dynamics.child("Material"), group, "Material");

    const auto massEl = dynamics.child("Mass");
    const auto inertiaEl = dynamics.child("InertiaTensor");
    if (simulated) {
      if (!massEl) {
        dynamics.fail("missing required element 'Mass' (simulated bodies need a mass)");
      }
      if (!inertiaEl) {
        dynamics.fail("missing required element 'InertiaTensor' (simulated bodies need one)");
      }
    } else {
      // Static and animated bodies have no mass; GRSF's files still carry these elements.
      if (massEl) {
        massEl->markIgnored();
      }
      if (inertiaEl) {
        inertiaEl->markIgnored();
      }
    }
    // Mass properties per shape (groups with one shape per body compute them per body).
    std::map<ShapeIndex, std::pair<Real, Vec3>> massCache;
    const auto massOf = [&](ShapeIndex shape) -> std::pair<Real, Vec3> {
      if (!simulated) {
        return {0.0, Vec3::Zero()};
      }
      if (const auto it = massCache.find(shape); it != massCache.end()) {
        return it->second;
      }
      const Shape& s = out_.system.shapes[shape];
      const auto m = detail::read<detail::MassAttributes>(*massEl);  // value or density
      Real mass = m.value;
      if (massEl->spec().variantValue != "uniform") {
        mass = atElement(*massEl, [&] { return homogeneousMassProperties(s, m.density).mass; });
      }
      const Vec3 inertia = atElement(*inertiaEl, [&] { return homogeneousInertia(s, mass); });
      if (!shapes.radii) {
        massCache.emplace(shape, std::make_pair(mass, inertia));
      }
      return {mass, inertia};
    };

    const GroupInitialCondition init =
        readInitialCondition(*dynamics.child("InitialCondition"), group.motion);

    const std::uint32_t groupIndex = static_cast<std::uint32_t>(out_.groups.size());
    bool first = true;
    // The indices to visit: all, or for simulated bodies with a share (ordinal ranges) those of
    // the share (the group's ordinals are [nextOrdinal_, nextOrdinal_ + count)); `loaded` then
    // counts the selected bodies of the whole group without visiting them.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> spans{{0, group.count}};
    const bool shared = simulated && ranges_.has_value();
    if (shared) {
      spans.clear();
      const std::uint64_t from = nextOrdinal_;
      const std::uint64_t to = nextOrdinal_ + group.count;
      // The ranges are increasing: those that end after the group's first ordinal, in order.
      auto r = std::partition_point(ranges_->begin(), ranges_->end(),
                                    [&](const OrdinalRange& x) { return x.end <= from; });
      for (; r != ranges_->end() && r->begin < to; ++r) {
        const std::uint64_t lo = std::max(r->begin, from);
        const std::uint64_t hi = std::min(r->end, to);
        if (lo < hi) {
          spans.emplace_back(static_cast<std::uint32_t>(lo - from),
                             static_cast<std::uint32_t>(hi - from));
        }
      }
      group.loaded = selectedCount(group);
    }
    if (simulated) {
      nextOrdinal_ += group.count;
    }
    for (const auto& [kBegin, kEnd] : spans) {
      if (simulated) {
        out_.simulatedIndicesVisited += kEnd - kBegin;
      }
      for (std::uint32_t k = kBegin; k < kEnd; ++k) {
        if (!selected(group, k)) {
          continue;
        }
        if (!shared) {
          ++group.loaded;
        }
        if (simulated && keepSimulated_ && !keepSimulated_(group.id(k))) {
          continue;  // another process builds it
        }
        std::uint32_t globalId = 0;
        const ShapeIndex shape = shapeOfBody(e, shapes, group, k, globalId);
        if (first) {
          group.shape = shape;
          first = false;
        }
        const auto [mass, inertia] = massOf(shape);
        BodyDef d;
        d.id = group.id(k);
        d.motion = group.motion;
        d.shape = shape;
        d.material = group.material;
        d.mass = mass;
        d.inertiaBody = inertia;
        const InitialPose pose = init.at(k);
        d.position = pose.position;
        d.orientation = pose.orientation;
        if (group.motion == BodyMotion::Animated) {
          d.velocity = group.animatedVelocity;
          // Constant omega in I about a fixed axis is constant in K: Omega_K = A_KI omega_I.
          d.omegaBody = d.orientation.conjugate() * group.animatedAngularVelocity;
        } else {
          d.velocity = pose.velocity;
          d.omegaBody = pose.omegaBody;
        }
        atElement(e, [&] { out_.system.addBody(d); });
        out_.groupOfBody.push_back(groupIndex);
        out_.globalGeomIdOfBody.push_back(globalId);
      }
    }
    out_.groups.push_back(std::move(group));
  }

  /// Shape (and global geometry id, 0 if none) of body k of the group.
  ShapeIndex shapeOfBody(const Element& e, GroupShapes& shapes, const BodyGroup& group,
                         std::uint32_t k, std::uint32_t& globalId) {
    switch (shapes.kind) {
      case GroupShapes::Kind::Shared:
        return shapes.shared;
      case GroupShapes::Kind::RandomSphere:
        return out_.system.shapes.add(Sphere{shapes.radii->sample(shapes.seed, k)});
      case GroupShapes::Kind::GlobalUniform:
        globalId = shapes.globalId;
        break;
      case GroupShapes::Kind::GlobalLinear: {
        const std::uint64_t id = std::uint64_t{shapes.startId} + k;
        globalId = id > 0xffffffffull ? 0 : static_cast<std::uint32_t>(id);
        break;
      }
      case GroupShapes::Kind::GlobalRandom: {
        // First output of the stream (seed, k) modulo the number of ids (bias < 2^-32).
        BodyRandom rng(shapes.seed, k);
        const std::uint64_t span = std::uint64_t{shapes.endId} - shapes.startId + 1;
        globalId = static_cast<std::uint32_t>(shapes.startId + rng.next() % span);
        break;
      }
    }
    const GlobalGeometry* global = findGlobal(globalId);
    const Element geom = *e.child("Geometry");
    const Element ref = *geom.child("GlobalGeomId");
    if (globalId == 0 || global == nullptr) {
      ref.fail("body " + formatBodyId(group.id(k)) + " (index " + std::to_string(k) +
               ") refers to global geometry id " + std::to_string(globalId) +
               ", which GlobalGeometries does not define");
    }
    checkMotionAllowsShape(ref, group, global->element,
                           " (global geometry " + std::to_string(globalId) + ")");
    return globalShape(globalId, *global);
  }

  /// Every id a GlobalGeomId can give is defined, with a shape the bodies may have.
  void checkGlobalIds(const Element& g, const BodyGroup& group, const GroupShapes& shapes) const {
    std::uint64_t first = shapes.globalId;
    std::uint64_t last = shapes.globalId;
    std::string range;
    if (shapes.kind == GroupShapes::Kind::GlobalLinear) {
      first = shapes.startId;
      last = first + group.count - 1;
      range = "startId .. startId + instances - 1 = ";
    } else if (shapes.kind == GroupShapes::Kind::GlobalRandom) {
      first = shapes.startId;
      last = shapes.endId;
      range = "startId .. endId = ";
    }
    const char* attr = shapes.kind == GroupShapes::Kind::GlobalUniform ? "id" : "startId";
    // One check per definition the range meets (not per id: a group of 10^8 bodies with linear
    // ids would otherwise be a loop over all of them on every process).
    for (std::uint64_t id = first; id <= last;) {
      const GlobalGeometry* global = findGlobal(static_cast<std::uint32_t>(id));
      if (global == nullptr) {
        g.failAt(attr, range.empty()
                           ? "global geometry id " + std::to_string(id) +
                                 " is not defined in GlobalGeometries"
                           : "global geometry ids " + range + std::to_string(first) + " .. " +
                                 std::to_string(last) + " must be defined in GlobalGeometries; " +
                                 std::to_string(id) + " is not");
      }
      checkMotionAllowsShape(g, group, global->element,
                             " (global geometry " + std::to_string(id) + ")");
      id = std::uint64_t{std::prev(globals_.upper_bound(static_cast<std::uint32_t>(id)))->first} +
           global->count;
    }
  }

  static void checkMotionAllowsShape(const Element& g, const BodyGroup& group,
                                     std::string_view shapeElement, const std::string& what) {
    if (group.motion == BodyMotion::Simulated &&
        (shapeElement == "Halfspace" || shapeElement == "Mesh")) {
      g.fail("a " + std::string(shapeElement) + what +
             " body must be static or animated (simulated bodies need a Sphere, Box or "
             "Capsule)");
    }
  }

  RadiusDistribution readRadiusDistribution(const Element& g) {
    const auto radii = detail::read<RadiusDistributionSettings>(g);
    const std::string generator = g.enumeration("generator");
    std::vector<std::string_view> needed;
    if (radii.generator == RadiusGenerator::Uniform) {
      needed = {"minRadius", "maxRadius"};
    } else if (radii.generator == RadiusGenerator::TruncatedNormal) {
      needed = {"mean", "variance", "minRadius", "maxRadius"};
    } else {
      needed = {"intervals", "densities"};
    }
    for (const std::string_view a : needed) {
      if (!g.has(a)) {
        g.fail("missing required attribute '" + std::string(a) + "' (required with generator=\"" +
               generator + "\")");
      }
    }
    for (const char* a : {"minRadius", "maxRadius", "mean", "variance", "intervals", "densities"}) {
      if (g.has(a) && std::find(needed.begin(), needed.end(), a) == needed.end()) {
        g.failAt(a, std::string("attribute '") + a + "' is not used by generator=\"" + generator +
                        "\" (it needs " + joinNames(needed) + ")");
      }
    }
    detail::checkRelations(g, radii);  // maxRadius >= minRadius
    const std::vector<Real>& bounds = radii.intervals;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      if (!(bounds[i] < bounds[i + 1])) {
        g.failAt("intervals",
                 "attribute 'intervals' must be increasing (got " + g.string("intervals") + ")");
      }
    }
    const std::size_t densities = radii.densities.size();
    if (radii.generator == RadiusGenerator::PiecewiseConstant &&
        (bounds.size() < 2 || densities + 1 != bounds.size())) {
      g.failAt("densities", "attribute 'densities' needs one value per interval: " +
                                std::to_string(bounds.size() < 2 ? 1 : bounds.size() - 1) +
                                " for " + std::to_string(bounds.size()) + " interval bounds (got " +
                                std::to_string(densities) + ")");
    }
    return atElement(g, [&] { return RadiusDistribution::from(radii); });
  }

  static std::string joinNames(const std::vector<std::string_view>& names) {
    std::string s;
    for (std::size_t i = 0; i < names.size(); ++i) {
      s += (i ? ", " : "");
      s += names[i];
    }
    return s;
  }

  GroupShapes readGeometry(const Element& geometry, BodyGroup& group) {
    std::optional<Element> found;
    for (const char* name : {"Sphere", "Box", "Capsule", "Halfspace", "Mesh", "GlobalGeomId"}) {
      if (auto c = geometry.child(name)) {
        found.emplace(std::move(*c));
      }
    }
    const Element& g = *found;  // Geometry has exactly one child (checked by the table)
    group.geometryElement = std::string(g.name());
    GroupShapes shapes;
    if (g.name() == "GlobalGeomId") {
      group.shapePerBody = g.spec().variantValue != "uniform";
      const auto ids = detail::read<detail::GlobalIdRange>(g);  // linear, random
      shapes.startId = ids.startId;
      shapes.endId = ids.endId;
      if (g.spec().variantValue == "uniform") {
        shapes.kind = GroupShapes::Kind::GlobalUniform;
        shapes.globalId = detail::read<detail::GlobalGeometryId>(g).id;
      } else if (g.spec().variantValue == "linear") {
        shapes.kind = GroupShapes::Kind::GlobalLinear;
        if (std::uint64_t{shapes.startId} + group.count - 1 > 0xffffffffull) {
          g.failAt("startId", "ids startId .. startId + instances - 1 exceed the 32-bit range");
        }
      } else {
        shapes.kind = GroupShapes::Kind::GlobalRandom;
        shapes.seed = detail::read<detail::RandomSeed>(g).seed;
        detail::checkRelations(g, ids);  // endId >= startId
      }
      checkGlobalIds(g, group, shapes);
      return shapes;
    }
    checkMotionAllowsShape(g, group, g.name(), "");
    if (g.name() == "Sphere" && g.spec().variantValue == "random") {
      shapes.kind = GroupShapes::Kind::RandomSphere;
      shapes.radii = readRadiusDistribution(g);
      shapes.seed = detail::read<detail::RandomSeed>(g).seed;
      group.shapePerBody = true;
      return shapes;
    }
    const Shape shape = readShape(g, group.meshFile);
    shapes.shared = atElement(g, [&] { return out_.system.shapes.add(shape); });
    return shapes;
  }

  /// A Sphere (uniform), Box, Capsule, Halfspace or Mesh element (in Geometry or
  /// GlobalGeometries).
  Shape readShape(const Element& g, std::filesystem::path& meshFile) {
    if (g.name() == "Sphere") {
      return detail::read<detail::SphereAttributes>(g).shape();
    }
    if (g.name() == "Box") {
      return detail::read<detail::BoxAttributes>(g).shape();
    }
    if (g.name() == "Capsule") {
      return detail::read<detail::CapsuleAttributes>(g).shape();
    }
    if (g.name() == "Halfspace") {
      return detail::read<detail::HalfspaceAttributes>(g).shape();
    }
    return readMesh(g, meshFile);
  }

  Shape readMesh(const Element& g, std::filesystem::path& meshFile) {
    const auto m = detail::read<detail::MeshAttributes>(g);
    MeshImportTransform t;
    t.scale = m.scale;
    t.translation = m.trans;
    const auto angle = angleOf(g, m.deg, m.rad);
    if (g.has("rotAxis") && !angle) {
      g.fail("missing required attribute 'deg' or 'rad' (required with rotAxis)");
    }
    t.rotation = quat::fromAxisAngle(m.rotAxis, angle.value_or(0.0));
    if (!angle) {
      g.resolve("deg", "0");  // the effective configuration names the default rotation in full
    }
    const std::string& file = m.file;
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
    meshFile = path;
    try {
      return Mesh{loadTriangleMesh(path, t), m.oneSided};
    } catch (const grain::Error& err) {
      g.failAt("file", err.what());
    }
  }

  // ---- Initial conditions ---------------------------------------------------------------------

  static GroupInitialCondition readInitialCondition(const Element& ic, BodyMotion motion) {
    GroupInitialCondition init;
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
      if (motion != BodyMotion::Simulated) {
        vel->markIgnored();  // static bodies do not move, animated ones as prescribed
      } else if (vel->spec().variantValue == "transrot") {
        readVelocities(*vel, init);
      }
    }
    return init;
  }

  static void readLinear(const Element& e, GroupInitialCondition& init) {
    const auto line = detail::read<detail::LinearPositions>(e);
    init.kind = GroupInitialCondition::Kind::Linear;
    init.start = line.position;
    init.direction = line.direction.normalized();
    init.distance = line.distance;
    init.jitter = line.jitter;
  }

  static void readGrid(const Element& e, GroupInitialCondition& init) {
    const auto grid = detail::read<detail::GridPositions>(e);
    init.kind = GroupInitialCondition::Kind::Grid;
    init.start = grid.translation;
    init.gx = grid.gridSizeX;
    init.gy = grid.gridSizeY;
    init.distance = grid.distance;
    init.jitter = grid.jitter;
    const Vec3& dirZ = grid.dirZ;
    const Vec3& dirX = grid.dirX;
    // Grid frame: z along dirZ, y = dirZ x dirX, x = y x z (dirX made orthogonal to dirZ).
    init.frame.col(2) = dirZ.normalized();
    const Vec3 y = dirZ.cross(dirX);
    if (y.norm() <= 1e-12 * dirZ.norm() * dirX.norm()) {
      e.failAt("dirX", "attribute 'dirX' must not be parallel to dirZ");
    }
    init.frame.col(1) = y.normalized();
    init.frame.col(0) = init.frame.col(1).cross(init.frame.col(2)).normalized();
    init.cx = 0.5 * static_cast<Real>(init.gx - 1) * init.distance;
    init.cy = 0.5 * static_cast<Real>(init.gy - 1) * init.distance;
  }

  static void readTransforms(const Element& e, GroupInitialCondition& init) {
    init.kind = GroupInitialCondition::Kind::Transforms;
    for (const Element& pos : e.children("Pos")) {
      Vec3 r = Vec3::Zero();
      Quat q = Quat::Identity();
      for (const Element& t : pos.children("Trafo")) {
        const auto trafo = detail::read<detail::TrafoAttributes>(t);
        const auto angle = angleOf(t, trafo.deg, trafo.rad);
        if (!angle) {
          t.fail("missing required attribute 'deg' or 'rad'");
        }
        r += q * trafo.trans;
        q = (q * quat::fromAxisAngle(trafo.axis, *angle)).normalized();
      }
      init.poses.emplace_back(r, q);
    }
  }

  static void readVelocities(const Element& e, GroupInitialCondition& init) {
    for (const Element& v : e.children("Vel")) {
      const auto vel = detail::read<detail::VelAttributes>(v);
      init.velocities.emplace_back(vel.transDir.normalized() * vel.absTransVel,
                                   vel.rotDir.normalized() * vel.absRotVel);
    }
  }

  // ---- GlobalInitialCondition -----------------------------------------------------------------

  void readGlobalInitialCondition(const Element& e) {
    const auto a = detail::read<detail::GlobalInitialConditionAttributes>(e);
    InitialConditionSource src;
    const std::string& file = a.file;
    src.file = std::filesystem::absolute(std::filesystem::path(file));
    src.continueTime = a.useTimeToContinue;
    src.readVelocities = a.readVelocities;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(src.file, ec)) {
      e.failAt("file",
               ".sim file '" + file + "' not found (looked for '" + src.file.string() + "')");
    }
    SimFileReader reader;
    try {
      reader.open(src.file);
      if (reader.stateCount() == 0) {
        e.failAt("file", ".sim file '" + src.file.string() + "' has no complete state");
      }
      if (a.whichState == detail::WhichState::Beg) {
        src.stateIndex = 0;
      } else if (a.whichState == detail::WhichState::End) {
        src.stateIndex = reader.stateCount() - 1;
      } else {
        const Real t = *a.time;
        const std::vector<double> times = reader.readTimes();
        const auto it = std::find_if(times.begin(), times.end(), [&](double x) { return x >= t; });
        if (it == times.end()) {
          e.failAt("time", "no state of '" + src.file.string() +
                               "' has a time >= " + e.string("time") + " s (the last is at " +
                               detail::formatReal(times.back()) + " s)");
        }
        src.stateIndex = static_cast<std::size_t>(it - times.begin());
      }
    } catch (const SceneError&) {
      throw;
    } catch (const grain::Error& err) {
      e.failAt("file", err.what());
    }

    src.line = e.line();
    BodyStorage& bodies = out_.system.bodies;
    if (!readInitialState_) {
      // The caller reads the bodies' states (grain-sim-mpi: each process a slice of the state);
      // the time is needed here (endTime check, animated bodies).
      src.statesRead = false;
      try {
        src.stateTime = reader.readTime(src.stateIndex);
      } catch (const grain::Error& err) {
        e.failAt("file", err.what());
      }
      continueFrom(src);
      return;
    }
    // The state is read block by block into the bodies built here: no copy of the whole state
    // is kept.
    std::vector<std::size_t> missingIndex;
    try {
      src.stateTime = readIntoHeldBodies(
          reader, src.stateIndex, bodies,
          [&](std::size_t i, const SimBodyState& b) { applyInitialState(src, bodies, i, b); },
          missingIndex);
    } catch (const grain::Error& err) {
      e.failAt("file", err.what());
    }
    if (!missingIndex.empty()) {
      std::vector<BodyId> missing;
      for (const std::size_t i : missingIndex) {
        missing.push_back(bodies.ids()[i]);
      }
      e.failAt("file", missingInitialBodiesMessage(src, missing.size(), nameBodies(missing)));
    }
    continueFrom(src);
  }

  /// useTimeToContinue: the run starts at the state's time, animated bodies at their pose then.
  void continueFrom(const InitialConditionSource& src) {
    BodyStorage& bodies = out_.system.bodies;
    const double stateTime = src.stateTime;
    if (src.continueTime) {
      out_.system.time = stateTime;
      // Animated bodies continue from their pose at that time.
      for (std::size_t i = 0; i < bodies.size(); ++i) {
        if (bodies.motions()[i] != BodyMotion::Animated) {
          continue;
        }
        const Real t = stateTime;
        const Quat& q = bodies.orientations()[i];
        const Vec3 omegaI = q * bodies.omegasBody()[i];
        bodies.positions()[i] += t * bodies.velocities()[i];
        const Real angle = omegaI.norm() * t;
        if (angle > 0.0) {
          bodies.orientations()[i] = (quat::fromAxisAngle(omegaI, angle) * q).normalized();
        }
      }
    }
    out_.initialCondition = src;
  }

  const XmlDocument& doc_;
  Diagnostics& diag_;
  SceneDescription& out_;
  std::filesystem::path mediaDir_;
  std::function<bool(BodyId)> keepSimulated_;  ///< nullptr: every simulated body
  std::optional<std::pair<int, int>> share_;   ///< SceneLoadOptions::simulatedShare
  /// The simulated ordinals to build (SceneLoadOptions::simulatedOrdinals, or the share's range).
  std::optional<std::vector<OrdinalRange>> ranges_;
  std::uint64_t nextOrdinal_ = 0;  ///< ordinal of the next simulated group's index 0
  bool readInitialState_ = true;
  std::string solverMethodName_;  ///< InclusionSolverSettings method as written
  std::map<std::uint32_t, std::uint64_t> nextNumber_;
  std::map<std::uint32_t, GlobalGeometry> globals_;              ///< by first id; disjoint ranges
  std::unordered_map<std::uint32_t, ShapeIndex> globalSpheres_;  ///< random spheres made so far
  std::uint32_t maxGroupId_ = 0;
  bool anyGroup_ = false;
};

/// Copies `orig` into `copy` adding the resolved attributes (parallel walk of equal trees).
void addResolved(pugi::xml_node orig, pugi::xml_node copy, const Diagnostics& diag) {
  if (const auto it = diag.resolved.find(orig.internal_object()); it != diag.resolved.end()) {
    for (const auto& [name, value] : it->second) {
      if (!copy.attribute(name.c_str())) {
        copy.append_attribute(name.c_str()).set_value(value.c_str());
      }
    }
  }
  for (pugi::xml_node o = orig.first_child(), c = copy.first_child(); o && c;
       o = o.next_sibling(), c = c.next_sibling()) {
    addResolved(o, c, diag);
  }
}

std::string effectiveXml(const XmlDocument& doc, const Diagnostics& diag,
                         const SceneDescription& scene) {
  pugi::xml_document copy;
  copy.reset(doc.document());
  addResolved(doc.document(), copy, diag);
  // Strip comments of the original: the header comment says what this file is.
  std::vector<pugi::xml_node> comments;
  for (const pugi::xpath_node& n : copy.select_nodes("//comment()")) {
    comments.push_back(n.node());
  }
  for (pugi::xml_node n : comments) {
    n.parent().remove_child(n);
  }
  std::string header = " Effective configuration of " + scene.file.string() +
                       ": every attribute grain uses, with defaults and derived values filled "
                       "in. ";
  if (!scene.ignored.empty()) {
    header += "\n     Accepted without effect:";
    for (const std::string& i : scene.ignored) {
      header += "\n       " + i;
    }
    header += "\n";
  }
  // "--" may not appear inside a comment.
  for (std::size_t p = header.find("--"); p != std::string::npos; p = header.find("--", p)) {
    header.replace(p, 2, "- -");
  }
  pugi::xml_node comment = copy.prepend_child(pugi::node_comment);
  comment.set_value(header.c_str());
  std::ostringstream out;
  copy.save(out, "  ", pugi::format_indent, pugi::encoding_utf8);
  return out.str();
}

}  // namespace

bool SelectiveIds::contains(BodyId id) const {
  if (std::binary_search(set.begin(), set.end(), id)) {
    return true;
  }
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const auto& r) { return id >= r.first && id < r.second; });
}

std::string readSceneText(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw SceneError(file.string(), 0, "", "cannot open the scene file");
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    throw SceneError(file.string(), 0, "", "cannot read the scene file");
  }
  return text;
}

std::uint64_t machineMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGE_SIZE);
  std::uint64_t bytes = pages > 0 && pageSize > 0 ? static_cast<std::uint64_t>(pages) *
                                                        static_cast<std::uint64_t>(pageSize)
                                                  : std::numeric_limits<std::uint64_t>::max();
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      bytes = std::min<std::uint64_t>(bytes, limit.rlim_cur);
    }
  }
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  std::uint64_t limit = 0;
  if (cgroup >> limit && limit > 0) {  // "max" (no limit) does not read as a number
    bytes = std::min(bytes, limit);
  }
  return bytes;
}

std::string formatBytes(double bytes) {
  static const char* const units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  std::size_t u = 0;
  while (bytes >= 1000.0 && u + 1 < std::size(units)) {
    bytes /= 1000.0;
    ++u;
  }
  std::ostringstream s;
  s.precision(3);
  s << bytes << " " << units[u];
  return s.str();
}

namespace {

/// Refuses, before anything is built, a scene that records more simulated bodies than a `.sim`
/// file can count: its header holds the bodies per state in 32 bits (the GRSF format), so a
/// larger state would be written with a wrong count. Runs without output are not limited.
void checkSimBodyCount(const XmlDocument& doc) {
  const pugi::xml_node settings = doc.root().child("SceneSettings");
  if (std::string_view(settings.child("RecorderSettings").attribute("mode").value()) ==
      "noOutput") {
    return;
  }
  constexpr std::uint64_t kLimit = 0xffffffffull;
  std::uint64_t simulated = 0;
  for (const pugi::xml_node rb : doc.root().child("SceneObjects").children("RigidBodies")) {
    const std::string_view type =
        rb.child("DynamicProperties").child("DynamicState").attribute("type").value();
    const pugi::xml_attribute a = rb.attribute("instances");
    const auto n = detail::parseUnsigned(a.value());
    if (motionNamed(type) != BodyMotion::Simulated || !n) {
      continue;  // the format check reports a bad count
    }
    simulated += *n;
    if (simulated > kLimit) {
      doc.fail(doc.lineOf(a, rb), "SceneObjects/RigidBodies",
               "attribute 'instances' (\"" + std::string(a.value()) + "\"): the scene simulates " +
                   std::to_string(simulated) +
                   " bodies so far, more than the 4294967295 a .sim file counts per state (a "
                   "32-bit field of the format); use RecorderSettings mode=\"noOutput\" or "
                   "fewer bodies");
    }
  }
}

/// Refuses a scene whose bodies cannot fit into `budget` bytes, before anything is built: the
/// `instances` of every RigidBodies element (also a value such as "1e9" that the format check
/// would reject later) times kEstimatedBytesPerBody.
void checkMemory(const XmlDocument& doc, std::uint64_t budget) {
  const pugi::xml_node objects = doc.root().child("SceneObjects");
  double bodies = 0.0;
  std::size_t index = 0;
  const std::size_t groups = static_cast<std::size_t>(std::distance(
      objects.children("RigidBodies").begin(), objects.children("RigidBodies").end()));
  for (const pugi::xml_node rb : objects.children("RigidBodies")) {
    ++index;
    const pugi::xml_attribute a = rb.attribute("instances");
    std::optional<Real> n;
    if (const auto u = detail::parseUnsigned(a.value())) {
      n = static_cast<Real>(*u);
    } else {
      n = detail::parseReal(a.value());
    }
    if (!a || !n || *n < 0.0) {
      continue;  // the format check reports it
    }
    bodies += *n;
    const double bytes = bodies * static_cast<double>(kEstimatedBytesPerBody);
    if (bytes <= static_cast<double>(budget)) {
      continue;
    }
    std::string path = "SceneObjects/RigidBodies";
    if (rb.attribute("name")) {
      path += "[name=\"" + std::string(rb.attribute("name").value()) + "\"]";
    } else if (groups > 1) {
      path += "[" + std::to_string(index) + "]";
    }
    std::ostringstream count;
    count.precision(6);
    count << bodies;
    doc.fail(doc.lineOf(a, rb), path,
             "attribute 'instances' (\"" + std::string(a.value()) + "\"): the scene's " +
                 count.str() + " bodies need an estimated " + formatBytes(bytes) + " of memory (" +
                 std::to_string(kEstimatedBytesPerBody) +
                 " bytes per body at least), more than the " +
                 formatBytes(static_cast<double>(budget)) +
                 " this machine has for the run; lower 'instances' or run on more memory "
                 "(grain-sim-mpi on several nodes)");
  }
}

}  // namespace

SceneDescription loadSceneFromString(std::string text, const std::filesystem::path& file,
                                     const SceneLoadOptions& options) {
  SceneDescription out;
  out.file = file;
  out.text = text;
  const XmlDocument doc(std::move(text), file.string());
  // Refused up front, before any body is built: a scene whose states a .sim file cannot count,
  // and a scene that cannot fit into memory.
  checkSimBodyCount(doc);
  if (const std::uint64_t budget = options.memoryBudget.value_or(machineMemoryBytes());
      budget > 0) {
    checkMemory(doc, budget);
  }
  Diagnostics diag;
  const std::filesystem::path media =
      options.mediaDirectory.empty() ? file.parent_path() : options.mediaDirectory;
  SceneBuilder(doc, diag, out, media, options).build();
  // Elements read twice report their ignored parts twice: keep the first of each.
  std::vector<std::string> ignored;
  for (std::string& i : diag.ignored) {
    if (std::find(ignored.begin(), ignored.end(), i) == ignored.end()) {
      ignored.push_back(std::move(i));
    }
  }
  out.ignored = std::move(ignored);
  out.warnings = std::move(diag.warnings);
  out.effectiveXml = effectiveXml(doc, diag, out);
  return out;
}

void applyInitialState(const InitialConditionSource& source, BodyStorage& bodies, std::size_t i,
                       const SimBodyState& body) {
  bodies.positions()[i] = body.position;
  bodies.orientations()[i] = body.orientation.normalized();
  if (source.readVelocities) {
    bodies.velocities()[i] = body.velocity;
    bodies.omegasBody()[i] = body.omegaBody;
  }
}

std::string nameBodies(const std::vector<BodyId>& ids, std::size_t most) {
  std::string list;
  for (std::size_t j = 0; j < std::min(ids.size(), most); ++j) {
    list += (j ? ", " : "") + formatBodyId(ids[j]);
  }
  return list;
}

std::string missingInitialBodiesMessage(const InitialConditionSource& source, std::uint64_t count,
                                        const std::string& named) {
  return std::to_string(count) + " simulated bod" + (count == 1 ? "y is" : "ies are") +
         " missing from state " + std::to_string(source.stateIndex) +
         " (t = " + detail::formatReal(source.stateTime) + " s) of '" + source.file.string() +
         "': " + named + (count > 5 ? ", ..." : "");
}

SceneDescription loadScene(const std::filesystem::path& file, const SceneLoadOptions& options) {
  return loadSceneFromString(readSceneText(file), file, options);
}

}  // namespace grain::io
