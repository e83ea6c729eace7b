// SPDX-License-Identifier: MIT
#include <cmath>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain {

void validate(const InclusionSolverSettings& s) {
  GRAIN_REQUIRE(s.alphaSorProx > 0.0 && s.alphaSorProx < 2.0, "alphaSORProx must be in (0, 2)");
  GRAIN_REQUIRE(s.alphaJorProx > 0.0 && s.alphaJorProx < 2.0, "alphaJORProx must be in (0, 2)");
  GRAIN_REQUIRE(s.maxIter >= 1, "maxIter must be >= 1");
  GRAIN_REQUIRE(s.minIter <= s.maxIter, "minIter must be <= maxIter");
  GRAIN_REQUIRE(std::isfinite(s.absTol) && s.absTol >= 0.0, "absTol must be >= 0");
  GRAIN_REQUIRE(std::isfinite(s.relTol) && s.relTol >= 0.0, "relTol must be >= 0");
  GRAIN_REQUIRE(s.driftCorrectionGapAlpha >= 0.0 && s.driftCorrectionGapAlpha <= 1.0,
                "driftCorrectionGapAlpha must be in [0, 1]");
  GRAIN_REQUIRE(std::isfinite(s.driftCorrectionGapSlop) && s.driftCorrectionGapSlop >= 0.0,
                "driftCorrectionGapSlop must be >= 0");
  GRAIN_REQUIRE(s.normalTangentialUpdateRatio >= 1, "normalTangentialUpdateRatio must be >= 1");
  GRAIN_REQUIRE(s.threadCount >= 1, "threadCount must be >= 1");
  GRAIN_REQUIRE(s.minContactsPerThread >= 1, "minContactsPerThread must be >= 1");
  GRAIN_REQUIRE(!s.matrixFree || s.localMethod == LocalSolverMethod::Apgd,
                "matrixFree is supported by method APGD only");
}

std::string_view toString(SolverMethod m) {
  switch (m) {
    case SolverMethod::SorContact:
      return "SORContact";
    case SolverMethod::SorFull:
      return "SORFull";
    case SolverMethod::SorNormalTangential:
      return "SORNormalTangential";
    case SolverMethod::Jor:
      return "JOR";
  }
  return "?";
}

std::string_view toString(RStrategy r) {
  switch (r) {
    case RStrategy::Max:
      return "max";
    case RStrategy::Sum:
      return "sum";
  }
  return "?";
}

std::string_view toString(UcfSubMethod m) {
  switch (m) {
    case UcfSubMethod::AlartCurnier:
      return "AC";
    case UcfSubMethod::DeSaxce:
      return "DS";
  }
  return "?";
}

std::string_view toString(ConvergenceMethod m) {
  switch (m) {
    case ConvergenceMethod::InLambda:
      return "InLambda";
    case ConvergenceMethod::InVelocity:
      return "InVelocity";
    case ConvergenceMethod::InVelocityLocal:
      return "InVelocityLocal";
    case ConvergenceMethod::InEnergyVelocity:
      return "InEnergyVelocity";
    case ConvergenceMethod::NaturalMap:
      return "NaturalMap";
    case ConvergenceMethod::Koziara:
      return "Koziara";
  }
  return "?";
}

}  // namespace grain
