// SPDX-License-Identifier: MIT
// Small local problems with closed-form solutions, shared by the local solver tests.
#pragma once

#include <grain/core/math/types.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/local_solver.hpp>

namespace grain::testing {

/// One contact with W = diag(kN, kT, kT).
inline LocalProblem singleContact(Real kN, Real kT, const Vec3& q, Real mu) {
  LocalProblem p;
  p.W.resize(3, 3);
  p.W.insert(0, 0) = kN;
  p.W.insert(1, 1) = kT;
  p.W.insert(2, 2) = kT;
  p.q = q;
  p.mu = VecX::Constant(1, mu);
  return p;
}

/// Default settings of a method with the given tolerance.
inline LocalSolverSettings settingsFor(LocalSolverMethod m, Real tol) {
  LocalSolverSettings s;
  s.method = m;
  s.tolerance = tol;
  return s;
}

}  // namespace grain::testing
