// SPDX-License-Identifier: MIT
// The settings descriptions (grain/core/common/settings.hpp) against what they drive: the scene
// schema rows (names, use, bounds, units, defaults taken from the default-constructed struct),
// the core's range checks and the enumeration names.
#include <array>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/collision/collision_detector.hpp>
#include <grain/core/common/error.hpp>
#include <grain/core/contact/compatible_forces.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/solver_settings.hpp>
#include <grain/core/timestepping/external_forces.hpp>
#include <grain/core/timestepping/load_balance_settings.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/radius_distribution.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/scene_schema.hpp>

namespace grain {
namespace {

using io::schema::AttributeSpec;
using io::schema::AttrUse;
using io::schema::ElementSpec;

const ElementSpec& spec(std::string_view name, std::string_view parent, std::size_t variant = 0) {
  const auto specs = io::schema::elementsIn(name, parent);
  EXPECT_GT(specs.size(), variant) << name << " in " << parent;
  return specs[variant];
}

/// The default of a row as the value of the member type.
template <class T>
bool sameDefault(const AttributeSpec& row, const T& value) {
  const std::string text(row.defaultValue);
  if constexpr (std::is_same_v<T, bool>) {
    return text == (value ? "true" : "false");
  } else if constexpr (std::is_enum_v<T>) {
    return text == settings::nameOf(value);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return std::stod(text) == static_cast<double>(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return text == value;
  } else if constexpr (std::is_same_v<T, Vec3>) {
    std::istringstream in(text);
    Vec3 v;
    return static_cast<bool>(in >> v.x() >> v.y() >> v.z()) && v == value;
  } else {
    return false;  // lists have no default in the scene format
  }
}

/// Every scene member of S described for `element` (but `absent`, which this variant lacks) has
/// a row in `e` with the description's use, bound and unit, and an optional one the struct's
/// default.
template <class S>
void expectRows(const ElementSpec& e, std::string_view element = {}, std::string_view absent = {}) {
  const S defaults{};
  int checked = 0;
  S::describe([&](const auto& f) {
    if (f.use == settings::Use::Internal || f.element != element) {
      return;
    }
    const AttributeSpec* row = io::schema::findAttribute(e, f.name);
    if (f.name == absent) {
      EXPECT_EQ(row, nullptr) << f.name;
      return;
    }
    ASSERT_NE(row, nullptr) << e.name << "@" << f.name;
    ++checked;
    EXPECT_EQ(row->bound, f.bound) << f.name;
    if (row->use == AttrUse::Ignored) {
      return;  // accepted without effect in this variant
    }
    EXPECT_EQ(row->unit, f.unit) << f.name;
    switch (f.use) {
      case settings::Use::Required:
        EXPECT_EQ(row->use, AttrUse::Required) << f.name;
        break;
      case settings::Use::Optional:
        EXPECT_EQ(row->use, AttrUse::Optional) << f.name;
        EXPECT_TRUE(sameDefault(*row, f.value(defaults)))
            << e.name << "@" << f.name << " default '" << row->defaultValue << "'";
        break;
      default:
        EXPECT_EQ(row->use, AttrUse::Optional) << f.name;
        EXPECT_TRUE(row->defaultValue.empty()) << f.name;
        break;
    }
  });
  EXPECT_GT(checked, 0) << e.name;
}

TEST(SettingsDescription, SchemaRowsComeFromTheDescriptions) {
  expectRows<StepperSettings>(spec("TimeStepperSettings", "SceneSettings"));
  expectRows<InclusionSolverSettings>(spec("TimeStepperSettings", "SceneSettings"),
                                      "TimeStepperSettings");
  expectRows<InclusionSolverSettings>(spec("InclusionSolverSettings", "TimeStepperSettings"));
  expectRows<io::SolverExtras>(spec("InclusionSolverSettings", "TimeStepperSettings"));
  for (const char* law : {"ContactParameterStandard", "ContactParameter"}) {
    for (std::size_t variant = 0; variant < 2; ++variant) {  // UCF, UCFD
      expectRows<ContactParameter>(spec(law, "ContactParameterMap", variant));
    }
  }
  // bodyWeight is an attribute of dynamic decompositions only.
  expectRows<LoadBalanceSettings>(spec("ProcessTopology", "MPISettings", 0), "ProcessTopology",
                                  "bodyWeight");
  expectRows<LoadBalanceSettings>(spec("ProcessTopology", "MPISettings", 1), "ProcessTopology");
  for (std::size_t variant = 0; variant < 2; ++variant) {  // grid, kdTree
    expectRows<LoadBalanceSettings>(spec("Topology", "ProcessTopology", variant), "Topology");
  }
  expectRows<LoadBalanceSettings>(spec("MassPointPrediction", "ProcessTopology"),
                                  "MassPointPrediction");
  expectRows<LoadBalanceSettings>(spec("GlobalOutlierFilter", "ProcessTopology"),
                                  "GlobalOutlierFilter");
  expectRows<LoadBalanceSettings>(spec("InclusionSolverSettings", "MPISettings"),
                                  "InclusionSolverSettings");
  for (std::size_t variant = 0; variant < 3; ++variant) {  // everyTimeStep, everyX..., noOutput
    expectRows<io::RecorderSettings>(spec("RecorderSettings", "SceneSettings", variant));
  }
  expectRows<io::ContactForceOutputSettings>(spec("ContactForceOutput", "SceneSettings"));
  expectRows<CompatibleForceSettings>(spec("ContactForceOutput", "SceneSettings"));
  expectRows<GravityField>(spec("ForceField", "ExternalForces", 0));
  expectRows<SphericalPulseField>(spec("ForceField", "ExternalForces", 1));
  // The elements that build bodies.
  expectRows<io::BodyGroup>(spec("RigidBodies", "SceneObjects"));
  expectRows<io::BodyGroup>(spec("DynamicState", "DynamicProperties", 3), "DynamicState");
  expectRows<io::BodyGroup>(spec("Material", "DynamicProperties"), "Material");
  expectRows<io::RadiusDistributionSettings>(spec("Sphere", "Geometry", 1));
  expectRows<io::RadiusDistributionSettings>(spec("Sphere", "GlobalGeometries", 1));
}

TEST(SettingsDescription, RowsAreInTheOrderOfTheSceneFormat) {
  // method (InclusionSolverSettings::describe's first field), the extras, then the rest.
  const auto rows = spec("InclusionSolverSettings", "TimeStepperSettings").attributes;
  ASSERT_GE(rows.size(), 5u);
  EXPECT_EQ(rows[0].name, "method");
  EXPECT_EQ(rows[1].name, "useGPU");
  EXPECT_EQ(rows[4].name, "alphaJORProx");
  const auto pulse = spec("ForceField", "ExternalForces", 1).attributes;
  ASSERT_GE(pulse.size(), 3u);
  EXPECT_EQ(pulse[0].name, "type");
  EXPECT_EQ(pulse[1].name, "applyTo");
  EXPECT_EQ(pulse[2].name, "seed");
  // statesPerSecond: a described member without default (absent: everyXStep decides).
  const AttributeSpec* sps =
      io::schema::findAttribute(spec("RecorderSettings", "SceneSettings", 1), "statesPerSecond");
  ASSERT_NE(sps, nullptr);
  EXPECT_EQ(sps->unit, "1/s");
  EXPECT_EQ(sps->bound, settings::Bound::Positive);
  EXPECT_TRUE(sps->defaultValue.empty());
  const AttributeSpec* exponent =
      io::schema::findAttribute(spec("ContactForceOutput", "SceneSettings"), "exponent");
  ASSERT_NE(exponent, nullptr);
  EXPECT_EQ(exponent->bound, settings::Bound::AtLeastOne);
}

TEST(SettingsDescription, MethodIsOneAttributeOfTwoMembers) {
  InclusionSolverSettings s;
  SolverChoice c{};
  ASSERT_TRUE(settings::valueOf("APGD", c));
  setSolverChoice(s, c);
  EXPECT_EQ(s.localMethod, LocalSolverMethod::Apgd);
  EXPECT_EQ(s.method, SolverMethod::SorContact);
  EXPECT_EQ(settings::nameOf(solverChoice(s)), "APGD");
  ASSERT_TRUE(settings::valueOf("SOR", c));  // an alias of SORContact
  setSolverChoice(s, c);
  EXPECT_FALSE(s.localMethod.has_value());
  EXPECT_EQ(s.method, SolverMethod::SorContact);
  EXPECT_EQ(settings::nameOf(solverChoice(s)), "SORContact");
  ASSERT_TRUE(settings::valueOf("JOR", c));
  setSolverChoice(s, c);
  EXPECT_EQ(s.method, SolverMethod::Jor);
  ASSERT_TRUE(settings::valueOf("IPM", c));  // the interior point method, the convex relaxation
  setSolverChoice(s, c);
  EXPECT_EQ(s.localMethod, LocalSolverMethod::Ipm);
  EXPECT_FALSE(settings::valueOf("InteriorPoint", c));
  const AttributeSpec* method =
      io::schema::findAttribute(spec("InclusionSolverSettings", "TimeStepperSettings"), "method");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->use, AttrUse::Required);
  EXPECT_NE(method->doc.find("DelassusSOR"), std::string_view::npos);
  // The scene reference says that IPM solves the convex relaxation.
  EXPECT_NE(method->doc.find("IPM solves the convex relaxation"), std::string_view::npos);
}

TEST(SettingsDescription, EnumerationValuesAreTheDescribedNames) {
  const AttributeSpec* method =
      io::schema::findAttribute(spec("InclusionSolverSettings", "TimeStepperSettings"), "method");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->values,
            "SOR|SORContact|SORFull|SORNormalTangential|JOR|DelassusSOR|"
            "DelassusJOR|APGD|PQN|IPM|NSN|NSNProx");
  const AttributeSpec* conv = io::schema::findAttribute(
      spec("InclusionSolverSettings", "TimeStepperSettings"), "convergenceMethod");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->values,
            "InLambda|InVelocity|InVelocityLocal|InEnergyVelocity|NaturalMap|Koziara");
  EXPECT_EQ(conv->unsupportedValues, "InEnergyLocalMix");
  // An alias reads as its value; the value's name is not the alias.
  SolverMethod m = SolverMethod::Jor;
  EXPECT_TRUE(settings::valueOf("SOR", m));
  EXPECT_EQ(m, SolverMethod::SorContact);
  EXPECT_EQ(toString(SolverMethod::SorContact), "SORContact");
  EXPECT_FALSE(settings::valueOf("sor", m));
  EXPECT_EQ(settings::nameOf(LoadBalanceSettings::BuildMode::BinetTensor), "binetTensor");
}

// DynamicState's variants and the values of its `type` are BodyMotion's scene names, in the
// order of kBodyMotionNames (aliases included).
TEST(SettingsDescription, DynamicStateTypesAreTheNamesOfBodyMotion) {
  const auto variants = io::schema::elementsIn("DynamicState", "DynamicProperties");
  ASSERT_EQ(variants.size(), std::size(kBodyMotionNames));
  for (std::size_t k = 0; k < variants.size(); ++k) {
    EXPECT_EQ(variants[k].variantValue, kBodyMotionNames[k].name);
    const AttributeSpec* type = io::schema::findAttribute(variants[k], "type");
    ASSERT_NE(type, nullptr) << variants[k].variantValue;
    EXPECT_EQ(type->values, "simulated|static|not simulated|animated");
  }
  BodyMotion m = BodyMotion::Simulated;
  EXPECT_TRUE(settings::valueOf("not simulated", m));
  EXPECT_EQ(m, BodyMotion::Static);
  EXPECT_EQ(settings::nameOf(BodyMotion::Static), "static");
  EXPECT_EQ(settings::nameOf(BodyMotion::Animated), "animated");
}

/// The message of the grain::Error f throws, "" if none.
template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(SettingsDescription, CoreChecksTheDescribedBounds) {
  InclusionSolverSettings s;
  EXPECT_EQ(errorOf([&] { validate(s); }), "");
  s.alphaSorProx = 2.0;
  EXPECT_EQ(errorOf([&] { validate(s); }), "alphaSORProx must be in (0, 2)");
  s = {};
  s.absTol = std::numeric_limits<Real>::infinity();
  EXPECT_EQ(errorOf([&] { validate(s); }), "absTol must be >= 0");
  s = {};
  s.threadCount = 0;
  EXPECT_EQ(errorOf([&] { validate(s); }), "threadCount must be >= 1");
  s = {};
  s.normalTangentialUpdateRatio = 0;  // not a scene attribute, checked all the same
  EXPECT_EQ(errorOf([&] { validate(s); }), "normalTangentialUpdateRatio must be >= 1");

  StepperSettings st;
  st.deltaT = 0.0;
  EXPECT_EQ(errorOf([&] { validate(st); }), "deltaT must be > 0");

  ContactParameter p;
  p.epsilonN = 1.5;
  EXPECT_EQ(errorOf([&] { validateContactParameter(p); }), "epsilonN must be in [0, 1]");
  p = {};
  p.muRolling = -0.1;
  EXPECT_EQ(errorOf([&] { validateContactParameter(p); }), "muRolling must be >= 0");

  LoadBalanceSettings b;
  EXPECT_EQ(errorOf([&] { settings::checkBounds(b); }), "");
  b.policyCheckEveryXTimeStep = 0;
  EXPECT_EQ(errorOf([&] { settings::checkBounds(b); }), "policyCheckEveryXTimeStep must be >= 1");
}

TEST(SettingsDescription, CoreChecksEveryDescribedStruct) {
  // The load balancer's settings: scene bounds, wider ones where programs need them.
  LoadBalanceSettings b;
  b.massPointCount = 0;  // the centres only: no scene value, but a program's
  b.minCellSize = 0.0;   // no minimum
  EXPECT_EQ(errorOf([&] { validate(b); }), "");
  b.minCellSize = -1.0;
  EXPECT_EQ(errorOf([&] { validate(b); }), "minCellSize must be >= 0");
  b = {};
  b.massPointDeltaT = 0.0;
  EXPECT_EQ(errorOf([&] { validate(b); }), "deltaT must be > 0");
  b = {};
  b.gridDimension = {2, 0, 1};
  EXPECT_EQ(errorOf([&] { validate(b); }), "dimension must be >= 1 in every component");
  b = {};
  b.buildMode = LoadBalanceSettings::BuildMode::Predefined;
  b.minPoint = Vec3(0, 0, 0);
  b.maxPoint = Vec3(1, 0, 1);
  EXPECT_EQ(errorOf([&] { validate(b); }), "maxPoint must be > minPoint in every component");
  b.maxPoint = Vec3(1, 1, 1);
  EXPECT_EQ(errorOf([&] { validate(b); }), "");
  b.buildMode = LoadBalanceSettings::BuildMode::Aabb;  // the box only matters when predefined
  b.maxPoint = Vec3::Zero();
  EXPECT_EQ(errorOf([&] { validate(b); }), "");

  InclusionSolverSettings s;
  s.minIter = 10;
  s.maxIter = 5;
  EXPECT_EQ(errorOf([&] { validate(s); }), "minIter must be <= maxIter");

  CollisionSettings c;
  c.cellSizeFactor = 0.0;
  EXPECT_EQ(errorOf([&] { CollisionDetector d(c); }), "collision: cellSizeFactor must be > 0");
  c = {};
  c.largeBodyRatio = 0.5;
  EXPECT_EQ(errorOf([&] { CollisionDetector d(c); }), "collision: largeBodyRatio must be >= 1");

  LocalSolverSettings l;
  EXPECT_EQ(errorOf([&] { validate(l); }), "");
  l.pqnGmresEpsilon = 1.0;
  EXPECT_EQ(errorOf([&] { validate(l); }), "pqnGmresEpsilon must be in (0, 1)");
  l = {};
  l.alphaJor = std::numeric_limits<Real>::quiet_NaN();
  EXPECT_EQ(errorOf([&] { validate(l); }), "alphaJor must be in (0, 2)");
  l = {};
  l.nsnLineSearchMemory = 0;
  EXPECT_EQ(errorOf([&] { validate(l); }), "nsnLineSearchMemory must be >= 1");

  CompatibleForceSettings f;
  EXPECT_EQ(errorOf([&] { settings::checkBounds(f); }), "");
  f.exponent = 0.5;
  EXPECT_EQ(errorOf([&] { settings::checkBounds(f); }), "exponent must be >= 1");

  ExternalForces forces;
  GravityField g;
  g.direction = Vec3::Zero();
  EXPECT_EQ(errorOf([&] { forces.addGravity(g); }), "gravity direction must be a non-zero vector");
  g = {};
  g.value = -1.0;
  EXPECT_EQ(errorOf([&] { forces.addGravity(g); }), "gravity value must be >= 0");
  SphericalPulseField p;
  p.startTime = 2.0;
  p.endTime = 1.0;
  EXPECT_EQ(errorOf([&] { forces.addSphericalPulse(p); }), "endTime must be >= startTime");
  p = {};
  p.maxPoint = Vec3(1, -1, 1);
  EXPECT_EQ(errorOf([&] { forces.addSphericalPulse(p); }),
            "maxPoint must be >= minPoint in every component");
  p = {};
  p.boostTime = 0.0;
  EXPECT_EQ(errorOf([&] { forces.addSphericalPulse(p); }), "boostTime must be > 0");
  EXPECT_TRUE(forces.gravityFields().empty());
}

TEST(SettingsDescription, AttributesWithoutMemberAreAcceptedWithoutEffect) {
  // Topology@minGridSize: described by LoadBalanceSettings (settings::ignored), no member.
  for (std::size_t variant = 0; variant < 2; ++variant) {  // grid, kdTree
    const AttributeSpec* row =
        io::schema::findAttribute(spec("Topology", "ProcessTopology", variant), "minGridSize");
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->use, AttrUse::Ignored);
    EXPECT_EQ(row->type, io::schema::AttrType::Real);
    EXPECT_EQ(row->bound, settings::Bound::Positive);  // its value is still checked
  }
  LoadBalanceSettings b;  // the core's checks pass over it
  EXPECT_EQ(errorOf([&] { settings::checkBounds(b); }), "");
}

TEST(SettingsDescription, RadiusWindowIsCheckedOnce) {
  // maxRadius >= minRadius is RadiusDistributionSettings' relation: the scene reader reports it
  // at the attribute (scene_features_test), programs get it from RadiusDistribution.
  io::RadiusDistributionSettings s;
  s.minRadius = 2.0;
  s.maxRadius = 1.0;
  EXPECT_EQ(errorOf([&] { io::RadiusDistribution::from(s); }), "maxRadius must be >= minRadius");
  EXPECT_EQ(errorOf([&] { io::RadiusDistribution::uniform(2.0, 1.0); }),
            "maxRadius must be >= minRadius");
  s.generator = io::RadiusGenerator::PiecewiseConstant;  // the window does not apply
  s.intervals = {1.0, 2.0};
  s.densities = {1.0};
  EXPECT_EQ(errorOf([&] { io::RadiusDistribution::from(s); }), "");
  const AttributeSpec* generator =
      io::schema::findAttribute(spec("Sphere", "Geometry", 1), "generator");
  ASSERT_NE(generator, nullptr);
  EXPECT_EQ(generator->values, "uniform|truncated-normal|piecewise-const");
}

}  // namespace
}  // namespace grain
