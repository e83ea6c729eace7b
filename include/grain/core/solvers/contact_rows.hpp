// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/solver_data.hpp>
#include <grain/core/solvers/solver_settings.hpp>

/// The contact rows of one Moreau step: per contact the frame A_IC, the rotational Jacobians
/// J = [r x n, r x t1, r x t2], their velocity responses Theta^-1 J, the constant part b of the
/// contact velocity and the law, per solver body its inverse mass and world-frame inverse inertia
/// (formulas in ContactSolver). One builder serves every consumer: the velocity prox solver
/// (ContactSolver), its accuracy measures, the assembled Delassus matrix (assembleLocalProblem)
/// and the matrix-free Delassus operator (DelassusOperator).
namespace grain::detail {

/// How a body of multiplicity p > 1 (ContactProblem::multiplicity) enters the solve.
enum class SplitMass : std::uint8_t {
  Split,  ///< as a copy with mass M/p and inertia Theta/p (mass splitting, the prox solver)
  Whole,  ///< with its whole mass and inertia (the matrix-free operator sums the copies' impulses)
};

/// Fills `sb` with the simulated bodies of `problem`'s contacts (and, with mass splitting, those
/// of multiplicity > 1), in BodyStorage order: inverse mass and inertia (times the multiplicity
/// with SplitMass::Split), the world-frame inverse inertia at q^M, and the bodies' current
/// velocities (v in I, omega = A_IK Omega_K). Throws grain::Error for invalid body indices, sizes
/// or dt. With threads > 1 the bodies' rows are filled by that many threads (the same bits).
void setupSolverBodies(const BodyStorage& bodies, const ContactProblem& problem, SolverBodies& sb,
                       SplitMass splitMass = SplitMass::Split, int threads = 1);

/// Fills `sc` with the rows of every contact of `problem` (kind, solver bodies, frame, J,
/// Theta^-1 J, b, law) and `rolling` with the contacts that have rolling resistance. Contact c
/// goes to row rowOf[c] (a permutation, e.g. colour order for the threaded sweeps), or to row c
/// (ContactStorage order) when rowOf is empty. The law's metric R^-1 follows `settings` (method,
/// alpha, rStrategy, subMethodUcf); b includes the drift term if settings.driftCorrectionGap.
/// `sb` must come from setupSolverBodies() for the same problem.
void setupSolverContacts(const BodyStorage& bodies, const ContactProblem& problem,
                         const InclusionSolverSettings& settings, const SolverBodies& sb,
                         SolverContacts& sc, SolverRolling& rolling,
                         std::span<const std::uint32_t> rowOf = {});

/// gamma_i = W_i^T u of contact i for the solver bodies' current velocities (the relative
/// contact velocity without b_i, m/s); 0 for a passive contact.
inline Vec3 contactVelocity(const SolverContacts& c, const SolverBodies& b, std::size_t i) {
  switch (c.kind[i]) {
    case PairKind::TwoBodies: {
      const std::uint32_t a = c.bodyA[i];
      const std::uint32_t bb = c.bodyB[i];
      return c.frame[i].transpose() * (b.velocity[bb] - b.velocity[a]) +
             c.jacB[i].transpose() * b.omega[bb] - c.jacA[i].transpose() * b.omega[a];
    }
    case PairKind::OneBody: {
      const std::uint32_t bb = c.bodyB[i];
      return c.frame[i].transpose() * b.velocity[bb] + c.jacB[i].transpose() * b.omega[bb];
    }
    case PairKind::Passive:
      break;
  }
  return Vec3::Zero();
}

/// The share of one simulated body in the Delassus block W_ij of two contacts it belongs to:
/// s_i s_j (m^-1 A_CI,i A_IC,j + J_i^T Theta^-1 J_j), from the rows' (signed) frames, the body's
/// Jacobians J and velocity responses Theta^-1 J (dOmega) on its side of each contact and the
/// sides' signs (-1 for the A side). W_ij is the sum over the bodies the two contacts share
/// (assembleLocalProblem(), the additive Schwarz preconditioner).
inline Mat3 bodyCouplingBlock(Real invMass, Real signI, const Mat3& frameI, const Mat3& jacI,
                              Real signJ, const Mat3& frameJ, const Mat3& dOmegaJ) {
  return signI * signJ * (invMass * frameI.transpose() * frameJ + jacI.transpose() * dOmegaJ);
}

/// The Delassus block W_ii = G_ii + D_i / dt of contact i (G_ii = sum_B m_B^-1 I +
/// J_B^T Theta_B^-1 J_B, D the UCFD compliance); the identity for a passive contact (as
/// assembleLocalProblem()).
inline Mat3 diagonalBlock(const SolverContacts& c, const SolverBodies& b, std::size_t i) {
  if (c.kind[i] == PairKind::Passive) {
    return Mat3::Identity();
  }
  // The frame of a one-body contact is signed, which leaves frame^T frame = I and
  // J^T Theta^-1 J unchanged.
  const ContactLaw& law = c.law[i];
  Mat3 g = c.jacB[i].transpose() * c.dOmegaB[i];
  Real invMass = b.invMass[c.bodyB[i]];
  if (c.kind[i] == PairKind::TwoBodies) {
    g += c.jacA[i].transpose() * c.dOmegaA[i];
    invMass += b.invMass[c.bodyA[i]];
  }
  g.diagonal() += Vec3(invMass + law.dampN, invMass + law.dampT, invMass + law.dampT);
  return g;
}

}  // namespace grain::detail
