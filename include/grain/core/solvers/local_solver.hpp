// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/solver_settings.hpp>

/// Solvers of local frictional contact problems FC(W, q, mu) (see LocalProblem): the
/// Delassus-matrix SOR and JOR prox iterations of the thesis (§8.3.1), an accelerated projected
/// gradient (APGD) and Koziara's projected quasi-Newton method (PQN). Pure Eigen, serial.
///
/// Common conventions. r is the unknown (percussions), u = W r + q. Every solver starts from
/// r^0 (zero or a given guess projected onto the cones) and stops as soon as the selected error
/// measure (LocalErrorMeasure) is <= tolerance. If it does not get there, SOR and JOR return their
/// last iterate and APGD and PQN (which are not monotone) the iterate with the smallest error
/// they have evaluated. The reported error is always that of the returned (r, u), u = W r + q.
/// (The natural-map measure reproduces the error Siconos 4.4 reports for its FC3D solvers to all
/// printed digits, e.g. 2.320601e-10 for NSGS and 1.106706e-09 for PROX on
/// Capsules-i122-1617.dat.)
///
/// Metric of the prox iterations (thesis §8.3.1, as in ContactSolver), from the diagonal block
/// G = W_ii and the relaxation alpha:
///   - Max, Alart-Curnier: r_N^-1 = alpha / G_NN, r_T^-1 = alpha / max(G_T1T1, G_T2T2);
///   - Max, De Saxce: one scalar, r^-1 = alpha / max(G_NN, G_T1T1, G_T2T2);
///   - Sum: one scalar, r^-1 = alpha / (G_NN + G_T1T1 + G_T2T2).
/// A non-positive diagonal entry is replaced by the mean positive diagonal entry of W.
///
/// Prox of one contact, x = r_i - R_i^-1 v:
///   - Alart-Curnier: v = u_i, r_N = max(x_N, 0), r_T = projection of x_T onto the disk of
///     radius mu r_N (new r_N);
///   - De Saxce: v = u_i + mu ||u_T,i|| e_N, r_i = projection of x onto K_mu.
///
/// Methods:
///   - SorProx (8.24, 8.25): contacts in index order, each from u_i = sum_j W_ij r_j + q_i with
///     the newest r_j, one sweep per iteration. With the same metric and order this is exactly
///     the velocity SOR prox of ContactSolver (SORContact) on the assembled problem.
///   - JorProx (8.21, 8.22): every contact from the same u = W r^k + q. The iteration
///     diverges when alpha exceeds 2 / lambda_max(R^1/2 W R^1/2) (R^-1 the metric with
///     alpha = 1), which is well below 0.5 in dense piles (many contacts per body); with
///     jorAutoAlpha (default) alpha is capped at 1 / (1.05 lambda_max), lambda_max estimated by
///     power iteration, which makes JOR the projected gradient method with the step of APGD.
///   - Apgd: Nesterov-accelerated projected fixed-point iteration with gradient restart
///     (O'Donoghue-Candes), the APGD of Mazhar, Heyn, Negrut, Tasora (ACM TOG 2015) and Chrono,
///     applied to the De Saxce map:
///       g = u(y) + mu ||u_T(y)|| e_N (per contact),  x^{k+1} = P_K(y^k - t D^-1 g),
///       theta_{k+1} = (theta_k sqrt(theta_k^2 + 4) - theta_k^2) / 2,
///       beta = theta_k (1 - theta_k) / (theta_k^2 + theta_{k+1}),
///       y^{k+1} = x^{k+1} + beta (x^{k+1} - x^k);
///     restart (y = x^{k+1}, theta = 1) when g . (x^{k+1} - x^k) > 0. D = diag(d_i I3) with
///     d_i = max diagonal entry of W_ii (apgdDiagonalScaling; d_i = 1 otherwise), and
///     t = 1 / (1.05 lambda), lambda the largest eigenvalue of D^-1/2 W D^-1/2 estimated by
///     power iteration (from the vector of ones, at most powerIterations products, stopped when
///     the estimate changes by less than 0.1 %). One product with W per iteration: W y is kept as
///     the linear combination (1 + beta) W x^{k+1} - beta W x^k. For the convex relaxation
///     (apgdDeSaxce = false: g = u(y), Anitescu's cone complementarity problem solved by Chrono)
///     this is the accelerated projected gradient of 1/2 r.W r + q.r on the cones; with the De
///     Saxce term it is a heuristic acceleration of Acary-Bremond-Huber's FP-DS fixed point whose
///     fixed points are exactly the solutions of FC(W, q, mu).
///     The same iteration runs on the matrix-free Delassus operator of a time step
///     (matrix_free_problem.hpp, solveApgd).
///   - Pqn: Koziara's projected quasi-Newton method (formulas and grain's additions in
///     local_pqn.hpp), with SorProx as the fallback when it does not reach the tolerance in
///     pqnMaxIter Newton steps.
///   - Ipm: primal-dual interior point method with Nesterov-Todd scaling and Mehrotra
///     predictor-corrector for the CONVEX RELAXATION (Anitescu's cone complementarity problem,
///     u = W r + q without the De Saxce term), followed by semismooth Newton polishing
///     (local_ipm.hpp). It always stops on, and reports, LocalErrorMeasure::Relaxed: its
///     solution is not that of FC(W, q, mu) where contacts slide (they separate with
///     u_N = mu ||u_T||). It ignores the initial guess and counts ipmMaxIter, not maxIter. The
///     same method runs on the matrix-free Delassus operator of a time step, its Newton systems
///     solved by preconditioned conjugate gradients (matrix_free_problem.hpp, solveIpm).
///   - Nsn: semismooth Newton method on the Alart-Curnier function of the whole problem, with a
///     non-monotone line search, SOR rescue sweeps when it stalls and SorProx as the fallback
///     (local_nsn.hpp).
///   - NsnProx: proximal-point outer iteration on FC(W + sigma I, q - sigma r^k, mu), each inner
///     problem solved by the Nsn iteration (local_nsn.hpp); for rank-deficient W.
///
/// Trivial problems. Without an initial guess, when every q_N >= 0 the solution is r = 0
/// (u = q then lies in the dual cone at every contact, natural-map error exactly 0); solve()
/// returns it without any setup, for every method but Ipm (whose relaxed problem needs
/// q_i in the dual cone, not only q_N >= 0) and for every measure but Relaxed.
///
/// Error checks. JOR and APGD get u(r^k) from their own products, so they test every
/// iteration at no extra cost. SOR needs one extra product per test: errorCheck = Every tests
/// every errorCheckPeriod-th sweep; Adaptive (default) tests when the cheap increment
/// ||r^{k+1} - r^k|| / ||r^{k+1}|| is <= a threshold that starts at the tolerance and is
/// multiplied by tolerance/error after every failed test (the Siconos NSGS strategy), and in any
/// case at sweep k + max(1, floor(k/8)) after a test at sweep k (k = 0 at the start): the
/// increment of a rank-deficient W can stay large while r drifts along solutions. This costs at
/// most about 8 extra products per doubling of the sweep count and overshoots the first
/// converged sweep by at most 1/8. The last iteration is always tested.
///
/// Small problems. SorProx with the adaptive test and the natural-map measure on a problem of
/// at most 64 contacts runs without setup allocations: the diagonal blocks are read from the
/// columns of W, u = W r + q is kept current by column updates (W_:j (r_j^new - r_j^old) after
/// each contact, the same Gauss-Seidel iterates as the block-row sweep up to rounding), so the
/// error is tested after every sweep at no product's cost; u is recomputed from r every 64
/// sweeps and before returning (except after a single sweep from r = 0, where the updated u is
/// already bitwise the recomputed one). Embedded planar problems (T2 rows and columns of W
/// holding only the diagonal, q_T2 = 0) are swept and tested with the 2-D formulas (no square
/// roots).
namespace grain {

// LocalSolverMethod (which local solver) is declared in solver_settings.hpp.

/// When the SOR solver evaluates the full error (see above).
enum class ErrorCheck : std::uint8_t { Every, Adaptive };

/// Settings of the local solvers. Defaults: R strategy max and Alart-Curnier prox as in GRSF,
/// alphaSor = 1 (GRSF's velocity solver uses 1.2; Acary-Bremond-Huber 2018 find over-relaxation
/// unreliable on rigid FCLIB sets), alphaJor = 0.5 capped by the step rule above, and Koziara's
/// Table 1 (relative delta) for PQN.
struct LocalSolverSettings {
  LocalSolverMethod method = LocalSolverMethod::SorProx;
  LocalErrorMeasure errorMeasure = LocalErrorMeasure::NaturalMap;  ///< Ipm: always Relaxed
  Real tolerance = 1e-8;
  std::uint32_t maxIter = 100000;  ///< iterations (SOR/JOR sweeps, APGD steps, PQN steps)
  ErrorCheck errorCheck = ErrorCheck::Adaptive;
  std::uint32_t errorCheckPeriod = 1;  ///< SOR with ErrorCheck::Every
  Real alphaSor = 1.0;                 ///< SOR relaxation in (0, 2)
  Real alphaJor = 0.5;                 ///< JOR relaxation in (0, 2)
  bool jorAutoAlpha = true;  ///< JOR: alpha = min(alphaJor, 1 / (1.05 lambda_max)), see above
  RStrategy rStrategy = RStrategy::Max;
  UcfSubMethod subMethod = UcfSubMethod::AlartCurnier;
  bool apgdDiagonalScaling = true;
  bool apgdDeSaxce = true;
  std::uint32_t powerIterations = 30;  ///< APGD: power iterations for the step size
  // PQN (Koziara 2019, Algorithm 1).
  std::uint32_t pqnMaxIter = 1000;  ///< Newton steps before the SOR fallback
  Real pqnDelta = 0.01;             ///< delta relative to the mean diagonal entry of W
  Real pqnOmegaFactor = 1e-3;       ///< smoothing omega = factor * tolerance
  /// omega_k = max(omega, theta_k e_k |q|_inf) with theta_0 this, divided by 10 after a Newton
  /// step that lowers the error e by less than a tenth; 0: omega throughout (local_pqn.hpp).
  Real pqnOmegaContinuation = 1e-4;
  Real pqnGmresEpsilon = 0.25;         ///< inexactness: GMRES stops at eps ||C||
  std::uint32_t pqnGmresMaxIter = 10;  ///< GMRES iterations per Newton step (no restart)
  bool pqnBacktracking = true;         ///< halve the step while the error grows (not in Koziara)
  bool pqnDeltaContinuation = true;    ///< delta_k = delta |C_k| / |C_0| (not in Koziara)
  bool pqnScaling = true;              ///< Newton variable (W_ii)_NN R_i (local_pqn.hpp)
  bool pqnDirectSolve = false;         ///< sparse LU of X W + Y + delta I instead of GMRES
  Real pqnWarmStartTolerance = 0;      ///< SOR until this error first (off if <= tolerance)
  // NSN: Alart-Curnier semismooth Newton, and its proximal-point variant (local_nsn.hpp).
  std::uint32_t nsnMaxIter = 100;         ///< Newton steps before the SOR fallback
  std::uint32_t nsnDenseLimit = 30;       ///< dense LU up to this many unknowns 3n, else sparse
  std::uint32_t nsnRescueSweeps = 10;     ///< SOR sweeps when Newton stalls (0: stop instead)
  std::uint32_t nsnLineSearchMemory = 5;  ///< non-monotone Armijo: iterates remembered (>= 1)
  std::uint32_t proxMaxIter = 200;        ///< NsnProx: outer steps before the SOR fallback
  std::uint32_t proxInnerMaxIter = 20;    ///< NsnProx: Newton steps per inner problem
  Real proxSigma = 1.0;        ///< NsnProx: initial shift factor c_0 (times mean(diag W))
  Real proxNu = 1.0;           ///< NsnProx: sigma ~ error^nu
  Real proxSigmaMin = 0.0;     ///< NsnProx: lower bound of sigma / mean(diag W)
  Real proxInnerFactor = 0.1;  ///< NsnProx: inner tolerance relative to the outer error
  // IPM for the convex relaxation (local_ipm.hpp).
  std::uint32_t ipmMaxIter = 100;     ///< interior point iterations (>= 1)
  Real ipmStepFraction = 0.99;        ///< fraction of the step to the cone boundary, in (0, 1)
  Real ipmRegularization = 1e-10;     ///< delta relative to the mean diagonal entry, >= 0
  std::uint32_t ipmPolishSteps = 5;   ///< Newton polishing steps after the IPM (0: none)
  std::uint32_t ipmApgdSteps = 2000;  ///< then APGD steps on the relaxation (0: none)
  /// Matrix-free IPM (solveIpm): PCG stops a Newton system at |A dx - b| <= ipmCgTolerance |b|
  /// (2-norms over all processes), in (0, 1).
  Real ipmCgTolerance = 1e-6;
  std::uint32_t ipmCgMaxIter = 500;  ///< matrix-free IPM: PCG iterations per Newton system
  /// Matrix-free IPM: the preconditioner of its PCG (block-Jacobi or additive Schwarz per body).
  IpmPreconditioner ipmPreconditioner = IpmPreconditioner::BlockJacobi;

  /// The description of the members (grain/core/common/settings.hpp): no scene attributes (the
  /// stepper derives the settings from InclusionSolverSettings, localSolverSettings()), the
  /// ranges validate() checks. Members without a range are not listed.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = LocalSolverSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::tolerance>("tolerance").internal().withBound(Bound::NonNegative));
    v(field<&S::maxIter>("maxIter").internal().withBound(Bound::AtLeastOne));
    v(field<&S::errorCheckPeriod>("errorCheckPeriod").internal().withBound(Bound::AtLeastOne));
    v(field<&S::alphaSor>("alphaSor").internal().withBound(Bound::OpenZeroTwo));
    v(field<&S::alphaJor>("alphaJor").internal().withBound(Bound::OpenZeroTwo));
    v(field<&S::powerIterations>("powerIterations").internal().withBound(Bound::AtLeastOne));
    v(field<&S::pqnMaxIter>("pqnMaxIter").internal().withBound(Bound::AtLeastOne));
    v(field<&S::pqnDelta>("pqnDelta").internal().withBound(Bound::NonNegative));
    v(field<&S::pqnOmegaFactor>("pqnOmegaFactor").internal().withBound(Bound::Positive));
    v(field<&S::pqnOmegaContinuation>("pqnOmegaContinuation")
          .internal()
          .withBound(Bound::NonNegative));
    v(field<&S::pqnGmresEpsilon>("pqnGmresEpsilon").internal().withBound(Bound::OpenUnitInterval));
    v(field<&S::pqnGmresMaxIter>("pqnGmresMaxIter").internal().withBound(Bound::AtLeastOne));
    v(field<&S::pqnWarmStartTolerance>("pqnWarmStartTolerance")
          .internal()
          .withBound(Bound::NonNegative));
    v(field<&S::nsnMaxIter>("nsnMaxIter").internal().withBound(Bound::AtLeastOne));
    v(field<&S::nsnLineSearchMemory>("nsnLineSearchMemory")
          .internal()
          .withBound(Bound::AtLeastOne));
    v(field<&S::proxMaxIter>("proxMaxIter").internal().withBound(Bound::AtLeastOne));
    v(field<&S::proxInnerMaxIter>("proxInnerMaxIter").internal().withBound(Bound::AtLeastOne));
    v(field<&S::proxSigma>("proxSigma").internal().withBound(Bound::Positive));
    v(field<&S::proxNu>("proxNu").internal().withBound(Bound::NonNegative));
    v(field<&S::proxSigmaMin>("proxSigmaMin").internal().withBound(Bound::NonNegative));
    v(field<&S::proxInnerFactor>("proxInnerFactor").internal().withBound(Bound::OpenUnitInterval));
    v(field<&S::ipmMaxIter>("ipmMaxIter").internal().withBound(Bound::AtLeastOne));
    v(field<&S::ipmStepFraction>("ipmStepFraction").internal().withBound(Bound::OpenUnitInterval));
    v(field<&S::ipmRegularization>("ipmRegularization").internal().withBound(Bound::NonNegative));
    v(field<&S::ipmCgTolerance>("ipmCgTolerance").internal().withBound(Bound::OpenUnitInterval));
    v(field<&S::ipmCgMaxIter>("ipmCgMaxIter").internal().withBound(Bound::AtLeastOne));
  }
};

/// Throws grain::Error naming the field if a value is out of range (the bounds of
/// LocalSolverSettings::describe, settings::checkBounds).
void validate(const LocalSolverSettings& s);

/// Outcome of a local solve.
struct LocalSolverResult {
  VecX r;                                 ///< contact percussions (impulses), 3n
  VecX u;                                 ///< W r + q, 3n
  std::uint32_t iterations = 0;           ///< iterations of the method (plus fallback sweeps)
  std::uint32_t fallbackIterations = 0;   ///< PQN, NSN: SOR sweeps of fallback and rescues
  std::uint32_t warmStartIterations = 0;  ///< PQN: SOR sweeps before the first Newton step
  std::uint32_t polishSteps = 0;          ///< IPM: Newton polishing and APGD steps (in iterations)
  std::uint32_t gmresIterations = 0;      ///< PQN: GMRES iterations of all its Newton steps
  std::uint32_t cgIterations = 0;         ///< matrix-free IPM: PCG iterations of all its systems
  std::uint32_t delassusProducts = 0;     ///< matrix-free solvers: products with W
  std::uint32_t reductions = 0;  ///< matrix-free solvers: global sums, maxima and ANDs (allreduces)
  double seconds = 0.0;          ///< wall time of the whole solve (setup included)
  Real error = 0.0;              ///< selected measure at (r, u) (Ipm: Relaxed)
  bool converged = false;        ///< error <= tolerance
  bool finite = true;            ///< false if a NaN/Inf appeared (the solve then stops)

  /// Every field but r and u back to its default (r and u keep their values and storage).
  void resetKeepingStorage() {
    iterations = 0;
    fallbackIterations = 0;
    warmStartIterations = 0;
    polishSteps = 0;
    gmresIterations = 0;
    cgIterations = 0;
    delassusProducts = 0;
    reductions = 0;
    seconds = 0.0;
    error = 0.0;
    converged = false;
    finite = true;
  }
};

/// Solves the problem (validated first). `initialGuess` (3n) is projected onto the cones
/// before use; without it the iteration starts from r = 0.
LocalSolverResult solve(const LocalProblem& problem, const LocalSolverSettings& settings,
                        const VecX* initialGuess = nullptr);
/// The same solve into a caller-owned result: every field is reset as in a fresh result, but the
/// storage of result.r and result.u is kept (reallocated only if the size differs) where the
/// method writes them in place (the SOR path of small problems and problems solved by r = 0).
/// Repeated solves of problems of one size then allocate nothing for the output.
/// `initialGuess` may be &result.r (warm start from the previous solve).
void solve(const LocalProblem& problem, const LocalSolverSettings& settings,
           const VecX* initialGuess, LocalSolverResult& result);

/// Name of a method ("sor", "jor", "apgd", "pqn", "ipm", "nsn", "prox").
std::string_view toString(LocalSolverMethod m);
/// Method from its name (case-insensitive, also "nsgs" for sor and "nsn-prox" for prox); nullopt
/// if unknown.
std::optional<LocalSolverMethod> localSolverMethodFromString(std::string_view name);

}  // namespace grain
