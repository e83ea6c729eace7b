// SPDX-License-Identifier: MIT
#include <grain/core/common/error.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain {

void validate(const InclusionSolverSettings& s) {
  settings::check(s);
  GRAIN_REQUIRE(!s.matrixFree || (s.localMethod && runsMatrixFree(*s.localMethod)),
                "matrixFree is supported by methods " + matrixFreeMethodNames() + " only");
}

std::string matrixFreeMethodNames() {
  std::string names;
  std::size_t count = 0;
  for (const LocalMethodName& e : kLocalMethodNames) {
    count += e.matrixFree ? 1 : 0;
  }
  std::size_t k = 0;
  for (const LocalMethodName& e : kLocalMethodNames) {
    if (!e.matrixFree) {
      continue;
    }
    if (k > 0) {
      names += k + 1 == count ? " and " : ", ";
    }
    names += e.sceneName;
    ++k;
  }
  return names;
}

std::string_view toString(SolverMethod m) {
  return settings::nameOf(m);
}

std::string_view toString(RStrategy r) {
  return settings::nameOf(r);
}

std::string_view toString(UcfSubMethod m) {
  return settings::nameOf(m);
}

std::string_view toString(ConvergenceMethod m) {
  return settings::nameOf(m);
}

std::string_view toString(IpmPreconditioner p) {
  return settings::nameOf(p);
}

}  // namespace grain
