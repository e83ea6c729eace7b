// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <string_view>

#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/solver_settings.hpp>

/// The local solvers as methods of the time stepper: their names in scene files
/// (InclusionSolverSettings method) and the LocalSolverSettings the stepper derives from a scene's
/// InclusionSolverSettings.
namespace grain {

// LocalMethodName and kLocalMethodNames, the one table of scene names of the local solvers (with
// the problem each solves and whether it also runs matrix-free), are declared beside
// InclusionSolverSettings (solver_settings.hpp), whose `method` attribute they name.

/// The scene name of a local solver ("" if it has none, which a unit test forbids).
std::string_view sceneName(LocalSolverMethod m);
/// The problem the local solver `m` solves (LocalProblemKind::ConvexRelaxation for the interior
/// point method, whose sliding contacts dilate).
LocalProblemKind problemSolved(LocalSolverMethod m);
/// The scene name of the method the settings select: a local solver's, or the velocity prox
/// solver's toString(method).
std::string_view methodSceneName(const InclusionSolverSettings& s);

/// The measure a local solver in the stepper stops on: Koziara for ConvergenceMethod::Koziara,
/// the natural map for every other convergence method.
LocalErrorMeasure localErrorMeasure(ConvergenceMethod m);

/// Settings of the local solver for s.localMethod (SorProx if unset): tolerance = relTol,
/// maxIter, errorMeasure = localErrorMeasure(convergenceMethod), alphaSor = alphaSORProx,
/// alphaJor = alphaJORProx, rStrategy, subMethod and ipmPreconditioner from the scene, pqnMaxIter,
/// pqnScaling and pqnOmegaContinuation from s (no scene attributes); everything else at the
/// defaults of LocalSolverSettings.
LocalSolverSettings localSolverSettings(const InclusionSolverSettings& s);

}  // namespace grain
