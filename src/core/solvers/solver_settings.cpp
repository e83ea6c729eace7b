// SPDX-License-Identifier: MIT
#include <grain/core/common/error.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain {

void validate(const InclusionSolverSettings& s) {
  settings::check(s);
  GRAIN_REQUIRE(!s.matrixFree || s.localMethod == LocalSolverMethod::Apgd ||
                    s.localMethod == LocalSolverMethod::Pqn,
                "matrixFree is supported by methods APGD and PQN only");
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

}  // namespace grain
