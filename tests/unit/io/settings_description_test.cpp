// SPDX-License-Identifier: MIT
// The settings descriptions (grain/core/common/settings.hpp) against what they drive: the scene
// schema rows (names, use, bounds, units, defaults taken from the default-constructed struct),
// the core's range checks and the enumeration names.
#include <array>
#include <limits>
#include <string>
#include <type_traits>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/solvers/solver_settings.hpp>
#include <grain/core/timestepping/load_balance_settings.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
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
  } else {
    return false;  // vectors have no default in the scene format
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
}

TEST(SettingsDescription, EnumerationValuesAreTheDescribedNames) {
  const AttributeSpec* method =
      io::schema::findAttribute(spec("InclusionSolverSettings", "TimeStepperSettings"), "method");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->values,
            "SOR|SORContact|SORFull|SORNormalTangential|JOR|DelassusSOR|"
            "DelassusJOR|APGD|PQN|NSN|NSNProx");
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

}  // namespace
}  // namespace grain
