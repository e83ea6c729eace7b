// SPDX-License-Identifier: MIT
#include <grain/core/solvers/local_method_settings.hpp>

namespace grain {

std::string_view sceneName(LocalSolverMethod method) {
  const LocalMethodName* e = localMethodEntry(method);
  return e != nullptr ? e->sceneName : std::string_view{};
}

LocalProblemKind problemSolved(LocalSolverMethod method) {
  const LocalMethodName* e = localMethodEntry(method);
  return e != nullptr ? e->solves : LocalProblemKind::Coulomb;
}

std::string_view methodSceneName(const InclusionSolverSettings& s) {
  return s.localMethod ? sceneName(*s.localMethod) : toString(s.method);
}

LocalErrorMeasure localErrorMeasure(ConvergenceMethod m) {
  return m == ConvergenceMethod::Koziara ? LocalErrorMeasure::Koziara
                                         : LocalErrorMeasure::NaturalMap;
}

LocalSolverSettings localSolverSettings(const InclusionSolverSettings& s) {
  LocalSolverSettings l;
  l.method = s.localMethod.value_or(LocalSolverMethod::SorProx);
  l.errorMeasure = localErrorMeasure(s.convergenceMethod);
  l.tolerance = s.relTol;
  l.maxIter = s.maxIter;
  l.alphaSor = s.alphaSorProx;
  l.alphaJor = s.alphaJorProx;
  l.rStrategy = s.rStrategy;
  l.subMethod = s.subMethodUcf;
  l.pqnMaxIter = s.pqnMaxIter;
  l.pqnScaling = s.pqnScaling;
  l.pqnOmegaContinuation = s.pqnOmegaContinuation;
  l.ipmPreconditioner = s.ipmPreconditioner;
  return l;
}

}  // namespace grain
