// SPDX-License-Identifier: MIT
// The scene names of the local solvers (one table) and the settings the stepper derives.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <grain/core/solvers/local_method_settings.hpp>

namespace grain {
namespace {

// Every LocalSolverMethod (every value toString() knows) has exactly one scene name, and the
// names round-trip, unless it is listed as not offered in the stepper. A method added to the enum
// without a table entry or an exclusion fails here.
TEST(LocalMethodSettings, EveryLocalMethodHasOneSceneName) {
  int methods = 0;
  int excluded = 0;
  for (int v = 0; v < 256; ++v) {
    const auto m = static_cast<LocalSolverMethod>(v);
    if (toString(m) == "?") {
      continue;
    }
    if (std::find(kLocalMethodsNotInStepper.begin(), kLocalMethodsNotInStepper.end(), m) !=
        kLocalMethodsNotInStepper.end()) {
      EXPECT_TRUE(sceneName(m).empty()) << toString(m) << " is excluded but has a scene name";
      ++excluded;
      continue;
    }
    ++methods;
    const std::string_view name = sceneName(m);
    EXPECT_FALSE(name.empty()) << "LocalSolverMethod " << toString(m) << " has no scene name";
    int entries = 0;
    for (const LocalMethodName& e : kLocalMethodNames) {
      entries += e.method == m ? 1 : 0;
    }
    EXPECT_EQ(entries, 1) << toString(m);
  }
  EXPECT_EQ(methods, static_cast<int>(kLocalMethodNames.size()));
  EXPECT_EQ(excluded, static_cast<int>(kLocalMethodsNotInStepper.size()));
  std::set<std::string_view> names;
  for (const LocalMethodName& e : kLocalMethodNames) {
    EXPECT_TRUE(names.insert(e.sceneName).second) << "duplicate scene name " << e.sceneName;
    // No clash with the velocity prox methods' names.
    for (SolverMethod v : {SolverMethod::SorContact, SolverMethod::SorFull,
                           SolverMethod::SorNormalTangential, SolverMethod::Jor}) {
      EXPECT_NE(e.sceneName, toString(v));
    }
  }
}

TEST(LocalMethodSettings, SettingsFollowTheScene) {
  InclusionSolverSettings s;
  s.localMethod = LocalSolverMethod::Apgd;
  s.relTol = 1e-5;
  s.maxIter = 321;
  s.alphaSorProx = 1.3;
  s.alphaJorProx = 0.3;
  s.rStrategy = RStrategy::Sum;
  s.subMethodUcf = UcfSubMethod::DeSaxce;
  s.convergenceMethod = ConvergenceMethod::Koziara;
  LocalSolverSettings l = localSolverSettings(s);
  EXPECT_EQ(l.method, LocalSolverMethod::Apgd);
  EXPECT_EQ(l.errorMeasure, LocalErrorMeasure::Koziara);
  EXPECT_EQ(l.tolerance, 1e-5);
  EXPECT_EQ(l.maxIter, 321u);
  EXPECT_EQ(l.alphaSor, 1.3);
  EXPECT_EQ(l.alphaJor, 0.3);
  EXPECT_EQ(l.rStrategy, RStrategy::Sum);
  EXPECT_EQ(l.subMethod, UcfSubMethod::DeSaxce);
  EXPECT_NO_THROW(validate(l));
  for (ConvergenceMethod c : {ConvergenceMethod::NaturalMap, ConvergenceMethod::InVelocity,
                              ConvergenceMethod::InLambda}) {
    s.convergenceMethod = c;
    EXPECT_EQ(localSolverSettings(s).errorMeasure, LocalErrorMeasure::NaturalMap);
  }
  EXPECT_EQ(methodSceneName(s), "APGD");
  s.localMethod.reset();
  EXPECT_EQ(methodSceneName(s), "SORContact");
}

}  // namespace
}  // namespace grain
