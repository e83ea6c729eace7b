// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_graph.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain {

class VelocityExchange;

/// Outcome of one contact solve.
struct SolverStats {
  std::uint32_t iterations = 0;  ///< global sweeps done
  bool converged = false;
  bool finite = true;             ///< false if isFiniteCheck found NaN/Inf
};

/// What the contact problem of one step (thesis eq. 8.8) needs besides the bodies.
struct ContactProblem {
  const ContactStorage& contacts;
  const ContactGraph& graph;
  const ContactParameterMap& parameters;
  const std::vector<Vec3>& velocityStart;   ///< v^S per body (I frame, m/s)
  const std::vector<Vec3>& omegaBodyStart;  ///< Omega^S per body (K frame, rad/s)
  Real dt;                                  ///< time step (s)
};

}  // namespace grain

namespace grain {

/// Prox solver of the contact problem of one Moreau step (thesis §8.3.2): velocity SOR/JOR
/// prox over the contacts, with Alart-Curnier or De Saxce projections.
class ContactSolver {
 public:
  explicit ContactSolver(const InclusionSolverSettings& settings);

  /// Solves the contact problem. On entry the bodies' velocities hold the free velocity
  /// u^S + M^-1 h dt; on exit they hold u^E. Orientations must be those at q^M.
  /// `exchange` may be null (serial run).
  SolverStats solve(BodyStorage& bodies, const ContactProblem& problem, VelocityExchange* exchange);

  /// Percussions of the last solve, per contact, (P_N, P_T1, P_T2) in N s.
  const std::vector<Vec3>& percussions() const { return percussion_; }
  const InclusionSolverSettings& settings() const { return settings_; }

 private:
  InclusionSolverSettings settings_;
  std::vector<Vec3> percussion_;
};

}  // namespace grain
