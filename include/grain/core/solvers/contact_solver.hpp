// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_colouring.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/solvers/solver_data.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain {

class SplitBodyExchange;
class Reducer;

/// Outcome of one contact solve.
struct SolverStats {
  std::uint32_t iterations = 0;  ///< global sweeps done
  bool converged = false;
  bool finite = true;  ///< false if isFiniteCheck found NaN/Inf
  /// Accuracy measures of the returned iterate (LocalErrorMeasure NaturalMap and Koziara of the
  /// step's local problem, r = P, u = xi (+ D P / dt)); 0 without contacts.
  Real naturalMapError = 0;
  Real koziaraError = 0;
  /// The sums behind both measures over this process's contacts alone (for a distributed step,
  /// which adds them over all processes in its statistics reduction); all zero without contacts.
  detail::MeasureSums localMeasureSums;
};

/// What the contact problem of one step (thesis eq. 8.8) needs besides the bodies.
struct ContactProblem {
  const ContactStorage& contacts;
  const ContactParameterMap& parameters;
  const std::vector<Vec3>& velocityStart;   ///< v^S per body (I frame, m/s)
  const std::vector<Vec3>& omegaBodyStart;  ///< Omega^S per body (K frame, rad/s)
  Real dt;                                  ///< time step (s)
  /// Mass splitting (SplitBodyExchange::planSplits): per body, the number of processes sharing it
  /// in this solve; empty means 1 for every body. A body with multiplicity p > 1 is solved with
  /// mass M/p and inertia Theta/p (and takes part even without a contact here).
  std::span<const std::uint32_t> multiplicity = {};
  /// Mass splitting: the first splitContacts contacts touch a body with multiplicity > 1, the
  /// others none (MoreauStepper orders them so). A coupled SorContact solve sends the split
  /// bodies' velocities after sweeping the first group and sweeps the second while the messages
  /// travel (ContactSolver).
  std::size_t splitContacts = 0;
  /// Colouring of the contacts (built by the stepper when threadCount > 1); null: the serial
  /// sweeps in ContactStorage order.
  const ContactColouring* colouring = nullptr;
};

}  // namespace grain

namespace grain {

/// The message of the solvers that refuse rolling resistance.
inline constexpr const char* kMuRollingNeedsSorContact =
    "muRolling is supported by method SORContact only";

/// Throws grain::Error (kMuRollingNeedsSorContact) if a contact law of `parameters` has rolling
/// resistance (muRolling > 0) and the settings select another method than SorContact or a
/// local solver.
void checkRollingResistanceSupported(const InclusionSolverSettings& settings,
                                     const ContactParameterMap& parameters);

/// Prox solver of the contact problem of one Moreau step (thesis §8.3.2): velocity SOR/JOR
/// prox over the contacts, with Alart-Curnier or De Saxce projections.
///
/// Problem (thesis eqs. 8.8, 8.14, 8.29-8.31, 7.75). For every contact i with percussion
/// P_i = (P_N, P_T1, P_T2) in the contact frame A_IC = [n t1 t2] (n from A to B):
///
///   u^E   = u^S + M^-1 h dt + sum_i W_i P_i                                   (8.8)
///   gamma = W_a^T u_a + W_b^T u_b = A_CI (v_b + w_b x r_b - v_a - w_a x r_a)   (7.18-7.21)
///   xi_i  = gamma_i^E + eps_i gamma_i^S,   eps_i = diag(eps_N, eps_T, eps_T)  (7.75)
///   -xi_N in N_{R0+}(P_N),   -xi_T in N_{mu P_N B2}(P_T)
///
/// Static and animated bodies have no degrees of freedom; an animated body's prescribed
/// velocity enters gamma^S and gamma^E (the chi term, so b contains (I+eps) chi). Static
/// bodies count as not moving whatever velocity is stored for them.
///
/// Velocity prox iteration (8.34-8.38). With xi_i = W_i^T u^E + b_i, where
///   b_i = eps_i W_i^T u^S + (I + eps_i) chi_i   [+ (alpha_drift 2 g_N / dt, 0, 0), see below],
/// one contact update is
///   P_i <- prox_{C_i}^{R_i}(P_i - R_i^-1 xi_i),   u^E <- u^E + M^-1 W_i (P_i^new - P_i^old).
/// u^{E,0} = u^S + M^-1 h dt + M^-1 W P^0 with P^0 = 0 or the cached percussions.
///
/// Metric R_i (§8.3.1, thesis "take the maximum of all diagonal entries of the block"):
/// G_ii = sum_{B simulated} W_{i,B}^T M_B^-1 W_{i,B} = sum_B (m_B^-1 I3 + J_B^T Theta_B^-1 J_B)
/// with J_B = [r_B x n, r_B x t1, r_B x t2] (I frame) and Theta_B^-1 = A_IK Theta_K^-1 A_KI.
///   - Max, Alart-Curnier prox:  r_N^-1 = alpha / G_NN,  r_T^-1 = alpha / max(G_T1T1, G_T2T2).
///   - Max, De Saxce prox: the cone K_mu is ONE set, so one scalar for the whole contact,
///     r^-1 = alpha / max(G_NN, G_T1T1, G_T2T2). (Different r_N, r_T would make the fixed
///     point of the Euclidean cone projection differ from the De Saxce law.)
///   - Sum: one scalar r^-1 = alpha / (G_NN + G_T1T1 + G_T2T2).
/// alpha = alphaSorProx for the SOR methods and alphaJorProx for JOR.
///
/// Prox (sub-method, thesis §7.1.3):
///   - AlartCurnier: P_N = max(x_N, 0); P_T = projection of x_T onto the disk of radius
///     mu P_N (NEW P_N), x = P - R^-1 xi (7.31).
///   - DeSaxce: xi_N <- xi_N + mu ||xi_T|| (7.33), x = P - r^-1 xi, P = projection onto
///     K_mu (7.32). SorFull and SorNormalTangential split a contact into its normal and
///     tangential parts, which only the Alart-Curnier form allows; they always use it (both
///     forms have the same solutions).
///
/// Methods:
///   - SorContact: for each contact in ContactStorage order, the (N,T) prox of the whole
///     contact from the current velocities, then the velocity update (8.37, 8.38).
///   - SorFull: per contact, normal prox, velocity update, tangential prox with the new P_N
///     and the updated velocities, velocity update.
///   - SorNormalTangential: one iteration is a sweep of all normal proxes; after every
///     normalTangentialUpdateRatio-th iteration, and after the last allowed one, a sweep of all
///     tangential proxes (with the current P_N) follows. Convergence is only tested after
///     iterations that include the tangential sweep, so a converged result is a fixed point of
///     both sweeps.
///   - Jor: every contact's prox from the same velocities u^{E,eta}, then the velocity update
///     with all increments (8.34, 8.35), relaxation alphaJorProx.
///
/// UCFD (compliant contact, ContactParameter::invDampingN/T = d_N, d_T in s/kg): a linear
/// damper in series with the hard contact. Under the contact force lambda = P/dt the damper
/// lets the contact points approach with the velocity d lambda, so the hard law applies to
/// xi + d lambda:
///   -(xi_N + d_N P_N / dt) in N_{R0+}(P_N),   -(xi_T + d_T P_T / dt) in N_{mu P_N B2}(P_T).
/// The iteration matrix becomes G + D/dt, D = diag(d_N, d_T, d_T); the prox uses
/// xi + D P / dt and R is built from the diagonal of G_ii + D/dt. A resting body then carries
/// P_N = m g dt while sinking at the steady velocity d_N m g.
///
/// Drift correction (driftCorrectionGap, thesis §8.2, eq. 8.4): the normal inclusion becomes
/// -(gamma_N^E + eps_N gamma_N^S + alpha_drift 2 g_N^M / dt) in N_{R0+}(P_N), i.e. the term is
/// ADDED to b_N (it does not replace the restitution term). A penetration (g_N < 0) then
/// leaves with gamma_N = -alpha_drift 2 g_N / dt > 0. It is meant for eps_N = 0 only: combined
/// with restitution it adds energy.
///
/// Convergence (after a sweep, once at least minIter sweeps are done):
///   - InLambda: every percussion component |P_new - P_old| <= |P_old| relTol + absTol (8.27);
///   - InVelocity: every velocity component (v in I, Omega in K) of every simulated body, same
///     test. Bodies without contacts keep their velocity, so only bodies in contacts are
///     visited; InVelocityLocal is the same test on the same bodies;
///   - InEnergyVelocity: every body | ||u_new||_M - ||u_old||_M | <= ||u_old||_M relTol + absTol
///     with ||u||_M^2 = m v.v + Omega_K . Theta_K Omega_K (8.40);
///   - NaturalMap, Koziara: the accuracy measure of the current iterate (LocalErrorMeasure, on
///     the step's local problem r = P, u = xi + D P / dt, W = G + D / dt, q = u at P = 0) is
///     <= relTol; absTol is not used. One evaluation costs about one sweep, so the test is done
///     after sweeps 1, 2, ..., then after sweep k + max(1, floor(k/8)) following a test at sweep
///     k (at most 1/8 extra work, and at most 1/8 more sweeps than the first converged one),
///     and always after the last allowed sweep. The measures' global norms are summed over
///     coupled processes with Reducer::sum().
/// Distributed solves (SplitBodyExchange `split`, thesis Algorithm 13.1): split bodies enter with
/// their inverse mass and inertia times their multiplicity. If beginSolve() reports this
/// process as coupled, the velocities of split bodies are averaged after every period()-th
/// sweep, convergence is tested only right after every checkRatio()-th averaging (and then with
/// the tests above), the decision is taken together with the coupled processes (the velocity
/// tests with coupledReducer().allTrue(); the measures from their global norms, summed with
/// coupledReducer().sum(), which every process receives with the same bits, so that their test
/// needs no second reduction), and the solve always ends on an averaging exchange, so that all
/// copies of a split body leave with the same velocity. Overlap (SorContact without rolling
/// resistance, contacts ordered as ContactProblem::splitContacts says): an averaging sweep first
/// sweeps the contacts that touch split bodies, then sends the copies' velocities (startAverage),
/// sweeps the other contacts while the messages travel and takes the mean (finishAverage): the
/// result is that of the same sweep followed by average(). After the last allowed sweep the solve
/// ends whatever the test says, so the test's result is this process's own (SolverStats::converged)
/// and no reduction is made: the step's statistics reduction (reduceStats) combines it. Likewise,
/// the measures of the returned iterate evaluated after the loop are this process's own, with their
/// sums in SolverStats::localMeasureSums for that reduction. An uncoupled process iterates on its
/// own, as a serial solve.
///
/// Accuracy of the result: both measures of the returned iterate are computed once per solve
/// whatever the convergence method (SolverStats::naturalMapError, koziaraError), from the
/// solver's own data (contact_solver_measures.cpp): q_i and W_ii^-1 once per solve, then one
/// pass over the contacts; nothing is assembled.
///
/// isFiniteCheck: after the solve, every simulated body's velocity and every percussion is
/// checked for NaN/Inf (SolverStats::finite). Without contacts and split bodies solve() returns
/// after beginSolve() (0 iterations, converged); beginSolve() is called on every solve, so that
/// processes stay in step.
///
/// Rolling resistance (ContactParameter::muRolling = mu_r > 0; SorContact only, other methods
/// and the local solvers refuse it, checkRollingResistanceSupported): a constant resisting
/// torque (type A of Ai et al., Powder Technology 206, 2011). The rolling percussion
/// M = (M_1, M_2) (N m s) acts in the tangent plane, on B as +T M, on A as -T M (T = [t1 t2]);
///   -w_t in N_{mu_r R* P_N B2}(M),   w_t = T^T (omega_b^E - omega_a^E)   (rad/s),
/// R* = r_a r_b / (r_a + r_b) with r the distance from a body's centre of mass to the contact
/// point (r of the simulated body if the partner is static or animated; an animated partner's
/// angular velocity enters w_t). Spin about n is free. Every SorContact sweep is followed by a
/// pass over the contacts with rolling resistance (detail::sweepRolling), each
///   M <- proj_{disk(mu_r R* P_N)}(M - r_M^-1 w_t),  omega_b += Theta_b^-1 T dM,
///   omega_a -= Theta_a^-1 T dM,
/// r_M^-1 = alphaSorProx / max diag(T^T (Theta_a^-1 + Theta_b^-1) T) (SolverRolling). M starts
/// from 0 in every solve (the warm-start cache holds the contact percussions only). InVelocity
/// and InEnergyVelocity see the rolling updates in the angular velocities; InLambda also tests
/// M; the accuracy measures (NaturalMap, Koziara, SolverStats) cover the contact percussions
/// only.
///
/// Warm start (usePercussionCache): the percussions of the previous solve are kept as world
/// vectors keyed by (smaller body id, larger body id, ordinal of the contact among the contacts
/// of that pair in ContactStorage order) and projected onto the new contact frames.
///
/// Implementation: the iteration works on solver-local copies of the velocities of the
/// simulated bodies in contacts, with angular velocities in the inertial frame,
/// omega = A_IK Omega_K. The contact Jacobian of eq. 7.21 is then, per body B of contact i,
///   W_B^T u_B = +-(A_CI v_B + J_B^T omega_B),   J_B = [r_B x n, r_B x t1, r_B x t2]
/// (the K-frame block A_KI (r x A_IC) of the thesis is A_KI J_B), and the update is
///   v_B += +-m_B^-1 A_IC dP,   omega_B += +-Theta_B^-1 J_B dP
/// with Theta_B^-1 = A_IK Theta_K^-1 A_KI at q^M.
/// Per contact the setup stores (once per solve) the frame A_IC, J_a, J_b, Theta_a^-1 J_a,
/// Theta_b^-1 J_b, b_i, R_i, mu and the UCFD terms in struct-of-arrays form (built by
/// contact_rows.hpp, which assembleLocalProblem and DelassusOperator share); contacts with one
/// simulated partner use a one-body kernel. Nothing is allocated per contact once the buffers
/// have grown, and the kernels have no virtual calls.
///
/// Threads (settings.threadCount > 1 and a ContactProblem::colouring): each thread sweeps the
/// contacts inside its block of bodies in ContactStorage order, then the contacts between blocks
/// follow colour by colour, each colour shared among the threads, the overflow colour on one
/// thread (ContactColouring), over contact rows built in that order (the percussions go back to
/// ContactStorage order where they are read there); the rows' setup, the measures' sums and the
/// copies of the convergence test are shared out too. The blocks, and the contacts of a colour,
/// touch disjoint simulated bodies, so the result is the same bits for a given thread count. With
/// one thread the solve is the serial one whatever the problem carries.
class ContactSolver {
 public:
  /// Validates the settings (throws grain::Error) and reserves settings.reserveContacts.
  explicit ContactSolver(const InclusionSolverSettings& settings);

  /// Solves the contact problem. On entry the bodies' velocities hold the free velocity
  /// u^S + M^-1 h dt; on exit they hold u^E. Orientations must be those at q^M.
  /// `split` is null in a serial run.
  SolverStats solve(BodyStorage& bodies, const ContactProblem& problem,
                    SplitBodyExchange* split = nullptr);

  /// Percussions of the last solve, per contact, (P_N, P_T1, P_T2) in N s.
  const std::vector<Vec3>& percussions() const { return percussion_; }
  /// Warm-start cache left by the last solve (sorted by key; empty without usePercussionCache).
  const std::vector<detail::PercussionCacheEntry>& percussionCache() const { return cache_; }
  /// Replaces the warm-start cache (restarts); `cache` must be sorted as percussionCache() is.
  void setPercussionCache(std::vector<detail::PercussionCacheEntry> cache) {
    cache_ = std::move(cache);
  }
  /// Moves the warm-start cache out (a distributed step routes it to where the contacts are
  /// solved next; see BodyExchange::exchangeBodies), leaving the solver's empty.
  std::vector<detail::PercussionCacheEntry> takePercussionCache() {
    return std::exchange(cache_, {});
  }
  /// The settings the solver was built with.
  const InclusionSolverSettings& settings() const { return settings_; }
  /// Contacts of the last solve with rolling resistance (indices in ContactStorage, ascending)
  /// and their rolling percussions M (N m s) in the (t1, t2) axes of the contact frame.
  const std::vector<std::uint32_t>& rollingContacts() const { return solverRolling_.contact; }
  const std::vector<detail::Vec2>& rollingPercussions() const { return solverRolling_.moment; }

 private:
  void setupBodies(const BodyStorage& bodies, const ContactProblem& problem);
  void storeVelocities(BodyStorage& bodies) const;
  void setupContacts(const BodyStorage& bodies, const ContactProblem& problem);
  void initialPercussions(const BodyStorage& bodies, const ContactProblem& problem);
  void storePercussionCache(const BodyStorage& bodies, const ContactProblem& problem);
  void sweep(bool tangentialSweep);
  /// A SorContact sweep with the averaging of split bodies overlapped: the first splitContacts
  /// contacts, split.startAverage(), the other contacts, split.finishAverage().
  void sweepOverlapped(std::size_t splitContacts, SplitBodyExchange& split);
  /// True if no contact from problem.splitContacts on touches a body with multiplicity > 1.
  static bool splitContactsFirst(const ContactProblem& problem);
  /// Splits the colouring of this solve into segments_ (shared colours, single-thread runs) and
  /// sets rowOf_, the rows in colour order.
  void planColourSegments(const ContactColouring& colouring);
  /// percussion_ from colouredPercussion_ if a coloured sweep changed it since the last call.
  void syncPercussions();
  /// Threads of the accuracy measures' sums: the thread count of a coloured solve, else 1 (a
  /// function of the settings alone, so that the sums do not depend on the colours' sizes).
  int measureThreads() const;
  /// colouredPercussion_ from percussion_ (the warm start).
  void gatherColouredPercussions(const ContactColouring& colouring);
  /// The warm-start percussions (colouredPercussion_) applied to the solver bodies' velocities,
  /// block by block and colour by colour on the sweeps' threads.
  void applyColouredWarmStart(const ContactColouring& colouring);
  /// Threads of a pass over `items` bodies or contacts whose items are independent (the same bits
  /// on any number of threads): the thread count of a coloured solve with at least
  /// minContactsPerThread items per thread, else 1.
  int passThreads(std::size_t items) const;
  /// One sweep colour by colour (segments_) on settings_.threadCount threads.
  void sweepColoured(const ContactColouring& colouring, bool tangentialSweep);
  bool hasTangentialSweep(std::uint32_t iteration) const;
  /// The velocity convergence tests' state before the sweep (v and omega, both in I), kept in
  /// the solver bodies' own columns of `bodies` (detail::SolverBodies); InLambda: the
  /// percussions.
  void saveOldState(BodyStorage& bodies);
  bool locallyConverged(const BodyStorage& bodies) const;
  /// Both measures of the current iterate, their sums over the coupled processes of `reducer`
  /// (nullptr: this process's contacts); `local` receives this process's own sums.
  detail::ContactMeasures evaluateMeasures(Reducer* reducer, detail::MeasureSums& local) const;
  bool usesMeasure() const {
    return settings_.convergenceMethod == ConvergenceMethod::NaturalMap ||
           settings_.convergenceMethod == ConvergenceMethod::Koziara;
  }
  bool allFinite(const BodyStorage& bodies) const;

  InclusionSolverSettings settings_;
  const ContactColouring* colouring_ = nullptr;  ///< of the current solve, or null (serial)
  std::vector<detail::ColourSegment> segments_;  ///< of colouring_ (planColourSegments)
  bool sharedSweeps_ = false;  ///< some segment is shared: the sweeps start threads
  /// Threaded solves: the row of solverContacts_ of each contact (ContactStorage order), the rows
  /// being built in colour order so that a colour is a contiguous stretch, read as a stream, as
  /// the serial sweeps read theirs; empty otherwise (row c is contact c). The rows are stored
  /// once, in the order the sweeps read them; the contact-order passes (warm start, rolling,
  /// measures) go through rowOf_.
  std::vector<std::uint32_t> rowOf_;
  std::vector<Vec3> colouredPercussion_;  ///< threaded solves: the percussions in row order
  bool colouredAhead_ = false;            ///< colouredPercussion_ is newer than percussion_
  std::vector<Vec3> percussion_;          ///< ContactStorage order
  detail::SolverBodies solverBodies_;
  detail::SolverContacts solverContacts_;
  detail::SolverRolling solverRolling_;
  detail::ContactMeasureData measureData_;
  std::vector<detail::PercussionCacheKey> cacheKeys_;        // current contacts, sorted
  std::vector<std::uint32_t> cacheOrdinal_;                  // per contact
  std::vector<detail::PercussionCacheKey> cacheKeyScratch_;  // merging two runs of keys
  std::vector<detail::PercussionCacheEntry> cache_;          // previous solve, sorted
};

}  // namespace grain
