// SPDX-License-Identifier: MIT
#pragma once

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain {

/// Builds the local problem FC(W, q, mu) of one Moreau step (the problem ContactSolver solves
/// matrix-free), contact i of `problem.contacts` being contact i of the result:
///
///   W_ij = sum_{B simulated, in i and j} s_iB s_jB (m_B^-1 A_CI,i A_IC,j + J_iB^T Theta_B^-1 J_jB)
///          (+ D_i / dt on the diagonal for UCFD contacts, D = diag(d_N, d_T, d_T)),
///   q_i  = s_ib (A_CI v_b + J_b^T omega_b) - s_ia (...)  over the simulated bodies of contact i,
///          + b_i,
///
/// with J_B = [r_B x n, r_B x t1, r_B x t2] (I frame), s = +1 for body B and -1 for body A of a
/// contact, omega = A_IK Omega_K and Theta_B^-1 = A_IK Theta_K^-1 A_KI at the bodies' current
/// orientations (q^M). The body velocities must hold the free velocity u^S + M^-1 h dt, as on
/// entry to ContactSolver::solve(); b_i is the solver's constant term
///   b_i = eps_i gamma_i^S + (velocity of the non-simulated partner at the contact point)
///         [+ (alpha_drift 2 g_N / dt, 0, 0) if settings.driftCorrectionGap].
/// Then r = P and u = W r + q = xi (see LocalProblem for the mapping), and the mu of each
/// contact is that of its material pair. A contact without a simulated body gets W_ii = I, no
/// coupling and q_i = 0, so its unique solution is r_i = 0 (ContactSolver leaves it at 0).
/// W and q are built from the contact rows ContactSolver iterates on (contact_rows.hpp): with
/// mass splitting (problem.multiplicity) m_B and Theta_B are those of the body's copy. Rolling
/// resistance has no rows in W (only ContactSolver's SorContact treats it).
/// Throws grain::Error for invalid body indices or sizes.
LocalProblem assembleLocalProblem(const BodyStorage& bodies, const ContactProblem& problem,
                                  const InclusionSolverSettings& settings);

/// Applies percussions to the bodies: u <- u + M^-1 W_c r, i.e. for every contact i with
/// P_i = r.segment<3>(3i) (contact frame, N s) and f = A_IC P_i (I frame):
///   body B: v += f / m,  Omega_K += Theta_K^-1 A_KI (r_B x f);   body A: the same with -f, r_A,
/// for the simulated bodies only, at their current orientations (q^M). With the free velocities
/// on entry and r a solution of assembleLocalProblem()'s problem, the bodies then hold u^E.
/// Throws grain::Error if r does not have 3 entries per contact.
void applyContactPercussions(BodyStorage& bodies, const ContactStorage& contacts, const VecX& r);

}  // namespace grain
