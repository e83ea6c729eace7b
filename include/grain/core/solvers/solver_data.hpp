// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/math/types.hpp>

namespace grain {
class BodyStorage;
}

/// Hot struct-of-arrays data of the contact solver, rebuilt once per solve. Internal to
/// ContactSolver; exposed in a header only so the kernels and the solver share one layout.
namespace grain::detail {

/// Symmetric 3x3 matrix stored as its 6 distinct entries (world-frame inverse inertia).
struct SymMat3 {
  Real xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;

  /// S x.
  Vec3 operator*(const Vec3& x) const {
    return Vec3(xx * x.x() + xy * x.y() + xz * x.z(), xy * x.x() + yy * x.y() + yz * x.z(),
                xz * x.x() + yz * x.y() + zz * x.z());
  }
  /// A diag(d) A^T for a rotation A and a diagonal d.
  static SymMat3 rotateDiagonal(const Mat3& a, const Vec3& d) {
    SymMat3 s;
    const Mat3 ad = a * d.asDiagonal();
    s.xx = ad.row(0).dot(a.row(0));
    s.yy = ad.row(1).dot(a.row(1));
    s.zz = ad.row(2).dot(a.row(2));
    s.xy = ad.row(0).dot(a.row(1));
    s.xz = ad.row(0).dot(a.row(2));
    s.yz = ad.row(1).dot(a.row(2));
    return s;
  }
};

/// Which bodies of a contact take part in the iteration.
enum class PairKind : std::uint8_t {
  TwoBodies,  ///< both simulated: body A is `bodyA`, body B is `bodyB`
  OneBody,    ///< one simulated body (stored as `bodyB`, offset in `rB`); the frame is signed
  Passive,    ///< no simulated body: the percussion stays 0
};

/// Index meaning "not a solver body".
inline constexpr std::uint32_t kNoSolverBody = std::numeric_limits<std::uint32_t>::max();

/// Solver-local copy of the simulated bodies that touch at least one contact. Index k is a
/// "solver body"; `storageIndex[k]` is its index in BodyStorage. Velocities are kept in the
/// inertial frame during the iteration: v (m/s) and omega = A_IK Omega_K (rad/s). A_IK at q^M is
/// not stored: it is formed from the body's quaternion where it is needed
/// (BodyStorage::orientations()[i].toRotationMatrix(), the same bits every time). Between its
/// setup and storing u^E, a velocity solve does not read the bodies' own velocity columns
/// (BodyStorage::velocities, omegasBody) of its solver bodies; ContactSolver keeps its velocity
/// convergence tests' state before the sweep there (v and omega, both in I: omegasBody() then
/// holds omega in I until storeVelocities writes Omega_K).
struct SolverBodies {
  std::vector<std::uint32_t> storageIndex;   ///< solver body -> BodyStorage index
  std::vector<std::uint32_t> solverIndexOf;  ///< BodyStorage index -> solver body or kNoSolverBody
  std::vector<Vec3> velocity;                ///< v in I (m/s)
  std::vector<Vec3> omega;                   ///< omega in I (rad/s)
  std::vector<Real> invMass;                 ///< 1/kg
  std::vector<SymMat3> invInertia;           ///< A_IK Theta_K^-1 A_KI (1/(kg m^2)), at q^M

  std::size_t size() const { return storageIndex.size(); }
};

/// Per-contact law data used by the prox (see ContactSolver for the formulas).
struct ContactLaw {
  Real rInvN = 0;  ///< r_N^-1 = alpha / (G_NN + d_N/dt)   (or the shared scalar)
  Real rInvT = 0;  ///< r_T^-1 = alpha / (max(G_T1T1, G_T2T2) + d_T/dt)
  Real mu = 0;     ///< Coulomb coefficient
  Real dampN = 0;  ///< d_N/dt: UCFD normal compliance per step (1/kg)
  Real dampT = 0;  ///< d_T/dt: UCFD tangential compliance per step (1/kg)
};

/// Struct-of-arrays contact data of one solve (the rows), in ContactStorage order or, for the
/// threaded sweeps, in colour order (setupSolverContacts' rowOf). Stored once per contact.
struct SolverContacts {
  std::vector<PairKind> kind;
  std::vector<std::uint32_t> bodyA;  ///< solver body of A (TwoBodies only)
  std::vector<std::uint32_t> bodyB;  ///< solver body of B, or of the single simulated body
  /// Columns (n, t1, t2) in I. For a OneBody contact whose simulated body is A, frame, jacB
  /// and dOmegaB are negated so that gamma = frame^T v + jacB^T omega for the single body.
  std::vector<Mat3> frame;
  std::vector<Mat3> jacA;     ///< J_a = [r_a x n, r_a x t1, r_a x t2] (I, m), TwoBodies only
  std::vector<Mat3> jacB;     ///< J_b, or the (signed) J of the single simulated body
  std::vector<Mat3> dOmegaA;  ///< Theta_a^-1 J_a (I frame, 1/(kg m)): omega_a -= dOmegaA dP
  std::vector<Mat3> dOmegaB;  ///< Theta_b^-1 J_b: omega_b += dOmegaB dP
  std::vector<Vec3> b;  ///< constant part of xi (m/s): eps gamma^S + passive-body velocity + drift
  std::vector<ContactLaw> law;
  std::vector<Vec3> percussionOld;  ///< convergence scratch (InLambda)
  std::vector<Vec3> increment;      ///< JOR: percussion increments of the current sweep

  std::size_t size() const { return kind.size(); }
  /// Sizes the rows (kind ... law) for n contacts; the scratch arrays are left alone.
  void resizeRows(std::size_t n) {
    kind.resize(n);
    bodyA.resize(n);
    bodyB.resize(n);
    frame.resize(n);
    jacA.resize(n);
    jacB.resize(n);
    dOmegaA.resize(n);
    dOmegaB.resize(n);
    b.resize(n);
    law.resize(n);
  }
};

/// A stretch [begin, end) of ContactColouring::order() swept in one go by the threaded sweeps:
/// the blocks (one per thread), one colour shared among the threads, or consecutive small colours
/// (and the overflow colour) swept by one thread.
struct ColourSegment {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  bool shared = false;  ///< shared among the threads (the blocks, or one large colour)
  bool blocks = false;  ///< the blocks: ContactColouring::blockOffsets() cut [begin, end)
};

/// 2-vector in the tangent plane (t1, t2) of a contact frame.
using Vec2 = Eigen::Matrix<Real, 2, 1>;
/// Two columns in I, e.g. Theta^-1 [t1 t2].
using Mat32 = Eigen::Matrix<Real, 3, 2>;

/// Rolling resistance (ContactParameter::muRolling > 0) of the contacts that have it, SorContact
/// only, in struct-of-arrays form; entry j belongs to contact `contact[j]` (ascending). With
/// T = [t1 t2] the tangent columns of SolverContacts::frame (signed as the frame is), the
/// relative rolling velocity is w_t = T^T (omega_b - omega_a) + b (rad/s), and the update is
///   M <- proj_{disk(bound P_N)}(M - rInv w_t),  omega_b += dOmegaB dM,  omega_a -= dOmegaA dM.
struct SolverRolling {
  std::vector<std::uint32_t> contact;  ///< contact index (ContactStorage order), ascending
  std::vector<std::uint32_t> row;      ///< its row in SolverContacts (setupSolverContacts' rowOf)
  std::vector<Mat32> dOmegaA;          ///< Theta_a^-1 T (I frame, 1/(kg m^2)), TwoBodies only
  std::vector<Mat32> dOmegaB;          ///< Theta_b^-1 T, or of the single simulated body
  std::vector<Vec2> b;          ///< T^T (omega_B - omega_A) of non-simulated partners (rad/s)
  std::vector<Real> rInv;       ///< alpha / max diag(T^T (Theta_a^-1 + Theta_b^-1) T) (kg m^2)
  std::vector<Real> bound;      ///< mu_r R* (m): |M| <= bound P_N
  std::vector<Vec2> moment;     ///< M, the rolling percussion (N m s) in (t1, t2)
  std::vector<Vec2> momentOld;  ///< convergence scratch (InLambda)

  std::size_t size() const { return contact.size(); }
  void clear() {
    contact.clear();
    row.clear();
    dOmegaA.clear();
    dOmegaB.clear();
    b.clear();
    rInv.clear();
    bound.clear();
    moment.clear();
    momentOld.clear();
  }
};

/// Appends contact c (not Passive, its SolverContacts row `row` already set up) to `rolling`: a,
/// b its bodies (BodyStorage), rA, rB the contact point from their centres (I, m), frame the
/// unsigned contact frame [n t1 t2] (I), muRolling > 0, alpha the SOR relaxation.
void addRollingContact(SolverRolling& rolling, const SolverContacts& contacts,
                       const SolverBodies& solverBodies, const BodyStorage& bodies, std::size_t c,
                       std::size_t row, std::uint32_t a, std::uint32_t b, const Vec3& rA,
                       const Vec3& rB, const Mat3& frame, Real muRolling, Real alpha);
/// One pass of rolling updates over the contacts of `rolling` (see SolverRolling), with the
/// current normal percussions (ContactStorage order) and solver-body angular velocities.
void sweepRolling(SolverRolling& rolling, const SolverContacts& contacts, SolverBodies& bodies,
                  const std::vector<Vec3>& percussion);

/// Per-solve data of the accuracy measures (contact_solver_measures.cpp), in the notation of
/// LocalProblem: r = P, u = xi + D P / dt, W = G + D / dt, q = u at P = 0. The blocks W_ii^-1
/// are formed again from the contact rows at each evaluation rather than stored (72 B per
/// contact; one evaluation per solve unless the convergence test is a measure).
struct ContactMeasureData {
  std::vector<Vec3> q;  ///< q_i: xi_i at the free velocity and P = 0 (m/s)
};

/// Sums over this process's contacts that the measures need; a distributed run adds them over
/// the coupled processes (Reducer::sum) before measuresFromSums().
struct MeasureSums {
  enum Index : std::size_t {
    Residual2,           ///< sum_i ||e_i||^2, e_i the natural-map residual
    R2,                  ///< ||r||^2
    U2,                  ///< ||u||^2
    Q2,                  ///< ||q||^2
    KoziaraNumerator,    ///< sum_i e_i . W_ii^-1 e_i
    KoziaraDenominator,  ///< sum_i q_i . W_ii^-1 q_i
    Count
  };
  std::array<Real, Count> value{};
};

/// Both accuracy measures of one iterate.
struct ContactMeasures {
  Real naturalMap = 0;  ///< LocalErrorMeasure::NaturalMap
  Real koziara = 0;     ///< LocalErrorMeasure::Koziara
};

struct SolverBodies;
struct SolverContacts;

/// Fills `data` for the current contacts; the solver bodies must hold the free velocities
/// (before any percussion is applied). Contact i has row rowOf[i] of `contacts` (row i if
/// rowOf is empty; see setupSolverContacts); `data` and the sums follow ContactStorage order.
/// With threads > 1 the contacts are shared out among that many threads (the same bits).
void prepareContactMeasures(const SolverContacts& contacts, const SolverBodies& bodies,
                            ContactMeasureData& data, std::span<const std::uint32_t> rowOf = {},
                            int threads = 1);
/// The local sums of the iterate (percussions in ContactStorage order, current solver-body
/// velocities). With threads > 1, each thread sums a static range of the contacts and the
/// partial sums are added in thread order: the same bits for the same thread count.
MeasureSums contactMeasureSums(const SolverContacts& contacts, const SolverBodies& bodies,
                               const std::vector<Vec3>& percussion, const ContactMeasureData& data,
                               std::span<const std::uint32_t> rowOf = {}, int threads = 1);
/// The measures from the (global) sums.
ContactMeasures measuresFromSums(const MeasureSums& sums);

/// Warm-start entry: world-frame percussion (N s) on the body with the larger id of the pair,
/// keyed by the ordered id pair and the ordinal of the contact within the pair.
struct PercussionCacheEntry {
  BodyId lo = 0;
  BodyId hi = 0;
  std::uint32_t ordinal = 0;
  Vec3 percussionOnHi = Vec3::Zero();
};

/// Sort key of a contact for the warm-start lookup.
struct PercussionCacheKey {
  BodyId lo = 0;
  BodyId hi = 0;
  std::uint32_t contact = 0;  ///< index in ContactStorage
};

}  // namespace grain::detail
