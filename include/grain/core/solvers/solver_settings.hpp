// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <grain/core/common/settings.hpp>
#include <grain/core/math/types.hpp>

/// Settings of the contact (inclusion) solver, named and defaulted as GRSF's
/// InclusionSolverSettings so scene files carry over unchanged.
namespace grain {

/// Iteration pattern of the prox solver (thesis §8.3).
enum class SolverMethod : std::uint8_t {
  SorContact,  ///< velocity SOR prox, one contact (N,T1,T2) at a time (GRSF "SORContact", "SOR")
  SorFull,     ///< per contact: normal prox, velocity update, tangential prox, velocity update
  SorNormalTangential,  ///< sweeps of all normal proxes, then all tangential ones
  Jor,                  ///< velocity JOR prox: all contacts from the same velocities
};

/// How the diagonal metric R is taken from the 3x3 Delassus block G_ii.
enum class RStrategy : std::uint8_t {
  Max,  ///< r_N = G_NN/alpha, r_T = max(G_T1T1, G_T2T2)/alpha (De Saxce cone: max of all three)
  Sum,  ///< r_N = r_T = (G_NN + G_T1T1 + G_T2T2)/alpha (one scalar for the whole contact)
};

/// Which formulation of the Coulomb law the prox uses.
enum class UcfSubMethod : std::uint8_t {
  AlartCurnier,  ///< "AC": R+ for the normal, disk of radius mu P_N for the tangent
  DeSaxce,       ///< "DS": projection onto the friction cone with the De Saxce shift
};

/// Termination test of the iteration (thesis eqs. 8.27, 8.40).
enum class ConvergenceMethod : std::uint8_t {
  InLambda,          ///< every percussion component: |P_new - P_old| <= |P_old| relTol + absTol
  InVelocity,        ///< every simulated body's velocity components, same test
  InVelocityLocal,   ///< like InVelocity, checked on the bodies touched by contacts
  InEnergyVelocity,  ///< every body: | ||u_new||_M - ||u_old||_M | <= ||u_old||_M relTol + absTol
  /// Natural-map error of the current iterate <= relTol (LocalErrorMeasure::NaturalMap; absTol is
  /// not used).
  NaturalMap,
  /// Koziara's energy measure of the current iterate <= relTol (LocalErrorMeasure::Koziara;
  /// absTol is not used).
  Koziara,
};

/// The names of the enumerations in scene files (InclusionSolverSettings attributes method,
/// matrixRStrategy, subMethodUCF, convergenceMethod) and in toString.
inline constexpr settings::EnumName<SolverMethod> kSolverMethodNames[] = {
    {SolverMethod::SorContact, "SOR", true},
    {SolverMethod::SorContact, "SORContact"},
    {SolverMethod::SorFull, "SORFull"},
    {SolverMethod::SorNormalTangential, "SORNormalTangential"},
    {SolverMethod::Jor, "JOR"},
};
inline constexpr settings::EnumName<RStrategy> kRStrategyNames[] = {
    {RStrategy::Max, "max"},
    {RStrategy::Sum, "sum"},
};
inline constexpr settings::EnumName<UcfSubMethod> kUcfSubMethodNames[] = {
    {UcfSubMethod::AlartCurnier, "AC"},
    {UcfSubMethod::DeSaxce, "DS"},
};
inline constexpr settings::EnumName<ConvergenceMethod> kConvergenceMethodNames[] = {
    {ConvergenceMethod::InLambda, "InLambda"},
    {ConvergenceMethod::InVelocity, "InVelocity"},
    {ConvergenceMethod::InVelocityLocal, "InVelocityLocal"},
    {ConvergenceMethod::InEnergyVelocity, "InEnergyVelocity"},
    {ConvergenceMethod::NaturalMap, "NaturalMap"},
    {ConvergenceMethod::Koziara, "Koziara"},
};
constexpr std::span<const settings::EnumName<SolverMethod>> enumNames(SolverMethod) {
  return kSolverMethodNames;
}
constexpr std::span<const settings::EnumName<RStrategy>> enumNames(RStrategy) {
  return kRStrategyNames;
}
constexpr std::span<const settings::EnumName<UcfSubMethod>> enumNames(UcfSubMethod) {
  return kUcfSubMethodNames;
}
constexpr std::span<const settings::EnumName<ConvergenceMethod>> enumNames(ConvergenceMethod) {
  return kConvergenceMethodNames;
}

/// Solver of local (Delassus-matrix) problems (local_solver.hpp). Declared here so that the
/// time stepper's settings can select one (InclusionSolverSettings::localMethod).
enum class LocalSolverMethod : std::uint8_t { SorProx, JorProx, Apgd, Pqn, Ipm, Nsn, NsnProx };

/// Preconditioner of the conjugate gradients that solve the Newton systems (N + G^-2) dx = b of
/// the interior point method on the matrix-free Delassus operator (solveIpm,
/// matrix_free_problem.hpp; N = S W S). Neither needs communication.
enum class IpmPreconditioner : std::uint8_t {
  /// Per contact i: (N_ii + G_i^-2 + delta I)^-1, the contact's own 3 x 3 block.
  BlockJacobi,
  /// Additive Schwarz per solver body: the contacts acting on a body solved together (their
  /// block of N + G^-2 + delta I with the couplings N_ij through the shared bodies, inverted
  /// densely), the bodies' corrections added with the weight 1/sqrt(bodies holding the contact)
  /// on each side (schwarz_preconditioner.hpp).
  AdditiveSchwarz,
};

/// The names of IpmPreconditioner in scene files (InclusionSolverSettings@ipmPreconditioner).
inline constexpr settings::EnumName<IpmPreconditioner> kIpmPreconditionerNames[] = {
    {IpmPreconditioner::BlockJacobi, "blockJacobi"},
    {IpmPreconditioner::AdditiveSchwarz, "additiveSchwarz"},
};
constexpr std::span<const settings::EnumName<IpmPreconditioner>> enumNames(IpmPreconditioner) {
  return kIpmPreconditionerNames;
}

/// The problem a local solver solves.
enum class LocalProblemKind : std::uint8_t {
  /// FC(W, q, mu): the Coulomb friction law of the time step (u_N = 0 at a sliding contact).
  Coulomb,
  /// Anitescu's cone complementarity problem, the convex relaxation of FC(W, q, mu) (no De Saxce
  /// term): a sliding contact separates with the normal "dilation" velocity u_N = mu |u_T| > 0.
  /// It equals the Coulomb problem where no contact slides and without friction (local_ipm.hpp).
  ConvexRelaxation,
};

struct LocalMethodName {
  LocalSolverMethod method;
  std::string_view sceneName;  ///< value of the scene attribute InclusionSolverSettings/@method
  LocalProblemKind solves = LocalProblemKind::Coulomb;
  /// Also runs on the matrix-free Delassus operator (InclusionSolverSettings::matrixFree,
  /// matrix_free_problem.hpp), the form that runs distributed in grain-sim-mpi.
  bool matrixFree = false;
};

/// The one table of scene names of the local solvers (the scene reader, the schema, the settings
/// printout and the checks of matrixFree use it, through kSolverChoiceNames and
/// localMethodEntry()): every LocalSolverMethod has exactly one entry (a unit test checks it).
inline constexpr std::array<LocalMethodName, 7> kLocalMethodNames{{
    {LocalSolverMethod::SorProx, "DelassusSOR"},
    {LocalSolverMethod::JorProx, "DelassusJOR"},
    {LocalSolverMethod::Apgd, "APGD", LocalProblemKind::Coulomb, true},
    {LocalSolverMethod::Pqn, "PQN", LocalProblemKind::Coulomb, true},
    {LocalSolverMethod::Ipm, "IPM", LocalProblemKind::ConvexRelaxation, true},
    {LocalSolverMethod::Nsn, "NSN"},
    {LocalSolverMethod::NsnProx, "NSNProx"},
}};

/// The entry of `m` in kLocalMethodNames (null if it has none, which a unit test forbids).
constexpr const LocalMethodName* localMethodEntry(LocalSolverMethod m) {
  for (const LocalMethodName& e : kLocalMethodNames) {
    if (e.method == m) {
      return &e;
    }
  }
  return nullptr;
}

/// True if the local solver `m` also runs matrix-free (and so distributed).
constexpr bool runsMatrixFree(LocalSolverMethod m) {
  const LocalMethodName* e = localMethodEntry(m);
  return e != nullptr && e->matrixFree;
}

/// The scene names of the local solvers that run matrix-free, "APGD, PQN and IPM" (for messages).
std::string matrixFreeMethodNames();

/// The scene's InclusionSolverSettings/@method: one attribute for two members, a velocity prox
/// method (InclusionSolverSettings::method) or a local solver (::localMethod). A value is the
/// code of either (choiceOf); its names are those of kSolverMethodNames, then kLocalMethodNames.
enum class SolverChoice : std::uint8_t {};
constexpr SolverChoice choiceOf(SolverMethod m) {
  return static_cast<SolverChoice>(m);
}
constexpr SolverChoice choiceOf(LocalSolverMethod m) {
  return static_cast<SolverChoice>(0x80u | static_cast<unsigned>(m));
}
inline constexpr auto kSolverChoiceNames = [] {
  std::array<settings::EnumName<SolverChoice>,
             std::size(kSolverMethodNames) + kLocalMethodNames.size()>
      names{};
  std::size_t i = 0;
  for (const settings::EnumName<SolverMethod>& n : kSolverMethodNames) {
    names[i++] = {choiceOf(n.value), n.name, n.alias};
  }
  for (const LocalMethodName& m : kLocalMethodNames) {
    names[i++] = {choiceOf(m.method), m.sceneName};
  }
  return names;
}();
constexpr std::span<const settings::EnumName<SolverChoice>> enumNames(SolverChoice) {
  return kSolverChoiceNames;
}

struct InclusionSolverSettings;
/// The method `s` selects (its local method if set).
inline SolverChoice solverChoice(const InclusionSolverSettings& s);
/// Selects the method: a local solver sets localMethod (and method to SorContact, unused), a
/// velocity prox method sets method and clears localMethod.
inline void setSolverChoice(InclusionSolverSettings& s, const SolverChoice& c);

struct InclusionSolverSettings {
  SolverMethod method = SolverMethod::SorContact;
  /// If set, every step assembles the local problem and solves it with this local solver
  /// instead of the velocity prox solver (`method` is then unused; see MoreauStepper).
  std::optional<LocalSolverMethod> localMethod;
  /// With localMethod Apgd, Pqn or Ipm: the step's problem is not assembled; the method runs on
  /// the matrix-free Delassus operator (MatrixFreeProblem, solveApgd, solvePqn, solveIpm) with the
  /// same settings and measures (PQN falls back to the velocity SOR prox, see MoreauStepper). Only
  /// valid with a local method that runs matrix-free (runsMatrixFree(), validate()).
  bool matrixFree = false;
  /// With localMethod Ipm and matrixFree: the preconditioner of the Newton systems' conjugate
  /// gradients (LocalSolverSettings::ipmPreconditioner).
  IpmPreconditioner ipmPreconditioner = IpmPreconditioner::BlockJacobi;
  Real alphaSorProx = 1.2;  ///< relaxation in (0, 2) for the SOR methods
  Real alphaJorProx = 0.5;  ///< relaxation in (0, 2) for JOR
  RStrategy rStrategy = RStrategy::Max;
  UcfSubMethod subMethodUcf = UcfSubMethod::AlartCurnier;
  ConvergenceMethod convergenceMethod = ConvergenceMethod::InVelocity;
  std::uint32_t minIter = 0;
  std::uint32_t maxIter = 5000;
  Real absTol = 1e-7;
  Real relTol = 1e-7;
  bool usePercussionCache = false;  ///< warm start from the percussions of the previous step
  bool driftCorrectionGap =
      false;  ///< add alpha * 2 g_N / dt to the normal velocity (eps_N = 0 only)
  Real driftCorrectionGapAlpha = 0.2;
  /// Penetration (m) the drift correction leaves alone: only the part of -g_N beyond it is
  /// pushed apart, alpha * 2 (g_N + slop) / dt (driftGap). A resting contact then keeps a
  /// constant small overlap and stays active instead of being pushed open and falling back every
  /// step.
  Real driftCorrectionGapSlop = 0.0;
  bool computeTotalOverlap = false;  ///< per-body sum of penetrations (for output)
  bool isFiniteCheck = false;        ///< check velocities for NaN/Inf after each solve
  std::uint32_t reserveContacts = 1000;
  /// Every how many sweeps SORNormalTangential does a tangential sweep (GRSF: 4 normal : 1
  /// tangential).
  std::uint32_t normalTangentialUpdateRatio = 4;
  /// Threads of the step (scene: TimeStepperSettings/@threadCount, grain only). 1: the serial
  /// sweeps in ContactStorage order. More: the SOR sweeps (SorContact, SorFull,
  /// SorNormalTangential) run on that many threads, each a block of bodies in ContactStorage
  /// order, then the contacts between blocks colour by colour (ContactColouring), with results
  /// deterministic for a given thread count; JOR, the rolling pass and the local solvers stay
  /// serial.
  std::uint32_t threadCount = 1;
  /// With threadCount > 1: the blocks, and a colour, are shared among the threads if they have at
  /// least this many contacts per thread; smaller colours are swept by one thread, and a solve
  /// without anything that large runs on the calling thread alone (a barrier costs about as much
  /// as a few dozen contact updates). The results do not depend on it.
  std::uint32_t minContactsPerThread = 256;
  /// Local method PQN: Newton steps before the fallback to SOR prox (LocalSolverSettings::
  /// pqnMaxIter; not a scene attribute).
  std::uint32_t pqnMaxIter = 1000;
  /// Local method PQN: Newton steps on each contact's (W_ii)_NN R_i, in velocity units
  /// (LocalSolverSettings::pqnScaling, local_pqn.hpp; not a scene attribute).
  bool pqnScaling = true;
  /// Local method PQN: the continuation of the smoothing, theta_0 (LocalSolverSettings::
  /// pqnOmegaContinuation, local_pqn.hpp; 0: off; not a scene attribute).
  Real pqnOmegaContinuation = 1e-4;

  /// The description of the members (grain/core/common/settings.hpp): scene attributes of
  /// <InclusionSolverSettings> (threadCount: of <TimeStepperSettings>), ranges, units, docs.
  /// `method` is one attribute of two members, method and localMethod (SolverChoice).
  template <class V>
  static constexpr void describe(V&& v) {
    using S = InclusionSolverSettings;
    using settings::Bound;
    using settings::field;
    v(field("method", &solverChoice, &setSolverChoice)
          .required()
          .withDoc("contact solver; SOR = SORContact (velocity prox, thesis 8.3.2); DelassusSOR, "
                   "DelassusJOR, APGD, PQN, IPM, NSN, NSNProx: local solvers on the assembled "
                   "Delassus problem, APGD, PQN and IPM also matrix-free (matrixFree; "
                   "docs/solvers.md). IPM solves the convex relaxation of the Coulomb law, not "
                   "the law: a sliding contact separates with the normal velocity mu |u_T| "
                   "(dilation); it equals the Coulomb solution where no contact slides or "
                   "without friction. grain-sim-mpi on more than one process runs the velocity "
                   "prox methods and APGD, PQN and IPM with matrixFree=\"true\" only and "
                   "refuses the others (docs/mpi.md)"));
    v(field<&S::alphaJorProx>("alphaJORProx")
          .required()
          .withBound(Bound::OpenZeroTwo)
          .withDoc("JOR relaxation factor"));
    v(field<&S::alphaSorProx>("alphaSORProx")
          .required()
          .withBound(Bound::OpenZeroTwo)
          .withDoc("SOR relaxation factor: R_N = alpha/G_nn, R_T = alpha/max(G_tt)"));
    v(field<&S::rStrategy>("matrixRStrategy")
          .withUnsupported("sum2")
          .withDoc("how the prox metric R is taken from the Delassus block"));
    v(field<&S::subMethodUcf>("subMethodUCF")
          .withDoc("AC: Alart-Curnier (R+ and disk); DS: De Saxce cone"));
    v(field<&S::convergenceMethod>("convergenceMethod")
          .withUnsupported("InEnergyLocalMix")
          .withDoc("stopping test: In*: quantity compared between sweeps (velocity prox methods); "
                   "NaturalMap, Koziara: accuracy measure of the iterate <= relTol (absTol "
                   "unused); local solvers stop on Koziara if given, else on NaturalMap (IPM on "
                   "the natural map of its convex relaxation, whatever is given)"));
    v(field<&S::minIter>("minIter").withDoc("minimum number of sweeps (<= maxIter)"));
    v(field<&S::maxIter>("maxIter")
          .required()
          .withBound(Bound::AtLeastOne)
          .withDoc("maximum number of sweeps (local solvers: iterations)"));
    v(field<&S::absTol>("absTol")
          .required()
          .withBound(Bound::NonNegative)
          .withDoc("absolute tolerance: converged if |new - old| <= |old| relTol + absTol"));
    v(field<&S::relTol>("relTol")
          .required()
          .withBound(Bound::NonNegative)
          .withDoc("relative tolerance; the error tolerance of NaturalMap, Koziara and the local "
                   "solvers"));
    v(field<&S::computeTotalOverlap>("computeTotalOverlap")
          .withDoc("per-body sum of penetrations (m)"));
    v(field<&S::usePercussionCache>("usePercussionCache")
          .withDoc("warm start from the previous step"));
    v(field<&S::matrixFree>("matrixFree")
          .withDoc("APGD, PQN and IPM only: iterate on the matrix-free Delassus operator "
                   "instead of the assembled matrix (docs/solvers.md; IPM solves its Newton "
                   "systems by preconditioned conjugate gradients); the form of these methods "
                   "that runs distributed in grain-sim-mpi (PQN falls back to SORContact sweeps "
                   "when its Newton steps fail)"));
    v(field<&S::ipmPreconditioner>("ipmPreconditioner")
          .withDoc("IPM with matrixFree=\"true\" only (elsewhere a warning, no effect): "
                   "preconditioner of the conjugate gradients that solve its Newton systems, no "
                   "communication either. blockJacobi: each contact's own 3x3 block inverted. "
                   "additiveSchwarz: per simulated body, the contacts acting on it solved "
                   "together with their couplings through the shared bodies (a dense block of 3k "
                   "unknowns for k contacts, factorised every interior point iteration; a body "
                   "with more than 64 contacts forms none), each contact's share weighted "
                   "1/sqrt(number of its bodies): far fewer Delassus products where many contacts "
                   "share bodies (spheres-in-a-box: 692 against 16349), but the interior point "
                   "iterations may stall on small piles (docs/solvers.md)"));
    v(field<&S::reserveContacts>("reserveContacts").withDoc("contacts to reserve memory for"));
    v(field<&S::isFiniteCheck>("isFiniteCheck")
          .withDoc("check velocities for NaN/inf after each solve"));
    v(field<&S::driftCorrectionGap>("driftCorrectionGap")
          .withDoc("push penetrating contacts apart"));
    v(field<&S::driftCorrectionGapAlpha>("driftCorrectionGapAlpha")
          .withBound(Bound::UnitInterval)
          .requiredWhen([](const S& s) { return s.driftCorrectionGap; },
                        "when driftCorrectionGap is true")
          .withDoc("fraction of the penetration removed per step; required when "
                   "driftCorrectionGap is true"));
    v(field<&S::driftCorrectionGapSlop>("driftCorrectionGapSlop")
          .withBound(Bound::NonNegative)
          .withUnit("m")
          .withDoc("penetration left uncorrected: only the overlap beyond it is pushed apart"));
    v(field<&S::threadCount>("threadCount")
          .in("TimeStepperSettings")
          .withBound(Bound::AtLeastOne)
          .withDoc("threads per process (grain only, not GRSF): more than 1 sweeps the SOR methods "
                   "in parallel, each thread a block of bodies and then the contacts between "
                   "blocks colour by colour, with results deterministic for a given thread count "
                   "(docs/architecture.md); grain-sim --threads N sets it"));
    v(field<&S::normalTangentialUpdateRatio>("normalTangentialUpdateRatio")
          .internal()
          .withBound(Bound::AtLeastOne));
    v(field<&S::minContactsPerThread>("minContactsPerThread")
          .internal()
          .withBound(Bound::AtLeastOne));
    v(field<&S::pqnMaxIter>("pqnMaxIter").internal().withBound(Bound::AtLeastOne));
  }

  /// The checks between members (settings::Relation).
  template <class V>
  static constexpr void relations(V&& v) {
    using S = InclusionSolverSettings;
    v(settings::relation<&S::minIter, &S::maxIter>("minIter", settings::Order::LessEqual,
                                                   "maxIter"));
  }
};

inline SolverChoice solverChoice(const InclusionSolverSettings& s) {
  return s.localMethod ? choiceOf(*s.localMethod) : choiceOf(s.method);
}

inline void setSolverChoice(InclusionSolverSettings& s, const SolverChoice& c) {
  const auto code = static_cast<unsigned>(c);
  s.localMethod = std::nullopt;
  s.method = SolverMethod::SorContact;
  if ((code & 0x80u) != 0) {
    s.localMethod = static_cast<LocalSolverMethod>(code & 0x7fu);
  } else {
    s.method = static_cast<SolverMethod>(code);
  }
}

/// Throws grain::Error naming the field if a value is out of range: the bounds and relations of
/// InclusionSolverSettings::describe and ::relations (settings::check: minIter <= maxIter), and
/// matrixFree only with the local methods that run matrix-free (runsMatrixFree()).
void validate(const InclusionSolverSettings& s);

/// The gap (m) the drift correction acts on, alpha * 2 driftGap / dt: g_N + slop for an overlap
/// deeper than `slop` (m), 0 for a shallower one; g_N itself when slop is 0.
inline Real driftGap(Real gap, Real slop) {
  return slop > 0.0 && gap > -slop ? 0.0 : gap + slop;
}

std::string_view toString(SolverMethod m);
std::string_view toString(RStrategy r);
std::string_view toString(UcfSubMethod m);
std::string_view toString(ConvergenceMethod m);
std::string_view toString(IpmPreconditioner p);

}  // namespace grain
