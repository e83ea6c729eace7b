// SPDX-License-Identifier: MIT
// The scene names of the local solvers (one table) and the settings the stepper derives.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_method_settings.hpp>

namespace grain {
namespace {

// Every LocalSolverMethod (every value toString() knows) has exactly one scene name, and the
// names round-trip. A method added to the enum without a table entry fails here.
TEST(LocalMethodSettings, EveryLocalMethodHasOneSceneName) {
  int methods = 0;
  for (int v = 0; v < 256; ++v) {
    const auto m = static_cast<LocalSolverMethod>(v);
    if (toString(m) == "?") {
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
    ASSERT_NE(localMethodEntry(m), nullptr);
    EXPECT_EQ(localMethodEntry(m)->sceneName, name);
  }
  EXPECT_EQ(methods, static_cast<int>(kLocalMethodNames.size()));
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

// What the table says of each method: the interior point method solves the convex relaxation
// (the stepper offers it, its sliding contacts dilate), the others the Coulomb problem; APGD, PQN
// and IPM also run matrix-free, and the messages name exactly these.
TEST(LocalMethodSettings, TableSaysWhatEachMethodSolvesAndWhereItRuns) {
  for (const LocalMethodName& e : kLocalMethodNames) {
    const bool ipm = e.method == LocalSolverMethod::Ipm;
    EXPECT_EQ(problemSolved(e.method),
              ipm ? LocalProblemKind::ConvexRelaxation : LocalProblemKind::Coulomb)
        << e.sceneName;
    const bool matrixFree =
        e.method == LocalSolverMethod::Apgd || e.method == LocalSolverMethod::Pqn || ipm;
    EXPECT_EQ(runsMatrixFree(e.method), matrixFree) << e.sceneName;
  }
  EXPECT_EQ(sceneName(LocalSolverMethod::Ipm), "IPM");
  EXPECT_EQ(matrixFreeMethodNames(), "APGD, PQN and IPM");
  InclusionSolverSettings s;
  s.matrixFree = true;
  for (const LocalMethodName& e : kLocalMethodNames) {
    s.localMethod = e.method;
    if (e.matrixFree) {
      EXPECT_NO_THROW(validate(s)) << e.sceneName;
    } else {
      EXPECT_THROW(validate(s), Error) << e.sceneName;
    }
  }
  s.localMethod.reset();
  EXPECT_THROW(validate(s), Error);
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
  EXPECT_EQ(l.ipmPreconditioner, IpmPreconditioner::BlockJacobi);
  EXPECT_NO_THROW(validate(l));
  s.ipmPreconditioner = IpmPreconditioner::AdditiveSchwarz;
  EXPECT_EQ(localSolverSettings(s).ipmPreconditioner, IpmPreconditioner::AdditiveSchwarz);
  EXPECT_EQ(toString(IpmPreconditioner::AdditiveSchwarz), "additiveSchwarz");
  EXPECT_EQ(toString(IpmPreconditioner::BlockJacobi), "blockJacobi");
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
