// SPDX-License-Identifier: MIT
// The contact rows of one step (contact_rows.hpp): the one builder of frames, Jacobians and
// constant terms that the velocity prox solver and the assembled Delassus matrix share.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <string>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/contact_rows.hpp>

#include "parallel_items.hpp"

namespace grain::detail {

namespace {

/// Velocity (I frame) of the material point at offset r (I) of a non-simulated body:
/// static bodies do not move; animated bodies move with their stored velocities.
Vec3 passivePointVelocity(const BodyStorage& bodies, std::size_t i, const Vec3& v,
                          const Vec3& omegaBody, const Vec3& r) {
  if (bodies.motions()[i] == BodyMotion::Static) {
    return Vec3::Zero();
  }
  const Vec3 omega = bodies.orientations()[i].toRotationMatrix() * omegaBody;
  return v + omega.cross(r);
}

}  // namespace

void setupSolverBodies(const BodyStorage& bodies, const ContactProblem& problem, SolverBodies& sb,
                       SplitMass splitMass, int threads) {
  const std::size_t n = bodies.size();
  const ContactStorage& contacts = problem.contacts;
  GRAIN_REQUIRE(problem.velocityStart.size() == n && problem.omegaBodyStart.size() == n,
                "ContactProblem: velocityStart/omegaBodyStart must have one entry per body");
  GRAIN_REQUIRE(std::isfinite(problem.dt) && problem.dt > 0.0, "ContactProblem: dt must be > 0");
  sb.solverIndexOf.assign(n, kNoSolverBody);
  const auto& a = contacts.bodyA();
  const auto& b = contacts.bodyB();
  const std::size_t nc = contacts.size();
  auto valid = [&](std::size_t c) { return a[c] < n && b[c] < n && a[c] != b[c]; };
  auto require = [&](std::size_t c) {
    GRAIN_REQUIRE(valid(c), "contact " + std::to_string(c) + " has invalid body indices");
  };
  if (threads > 1) {
    // The simulated bodies with a contact marked per range of contacts on the threads (a body
    // two threads mark gets the same 0 from both, as atomic stores); the first invalid contact
    // is reported after the pass, as on one thread.
    std::atomic<std::size_t> firstInvalid{nc};
    const auto parts = static_cast<std::size_t>(threads);
    forEachItem(parts, threads, [&](std::size_t t) {
      const std::size_t end = nc * (t + 1) / parts;
      for (std::size_t c = nc * t / parts; c < end; ++c) {
        if (!valid(c)) {
          std::size_t seen = firstInvalid.load(std::memory_order_relaxed);
          while (c < seen && !firstInvalid.compare_exchange_weak(seen, c)) {
          }
          return;
        }
        for (const std::uint32_t i : {a[c], b[c]}) {
          if (bodies.isSimulated(i)) {
            std::atomic_ref<std::uint32_t>(sb.solverIndexOf[i]).store(0, std::memory_order_relaxed);
          }
        }
      }
    });
    if (firstInvalid.load() < nc) {
      require(firstInvalid.load());
    }
  } else {
    for (std::size_t c = 0; c < nc; ++c) {
      require(c);
      if (bodies.isSimulated(a[c]))
        sb.solverIndexOf[a[c]] = 0;
      if (bodies.isSimulated(b[c]))
        sb.solverIndexOf[b[c]] = 0;
    }
  }
  const auto& multiplicity = problem.multiplicity;
  GRAIN_REQUIRE(multiplicity.empty() || multiplicity.size() == n,
                "ContactProblem: multiplicity must be empty or have one entry per body");
  for (std::size_t i = 0; i < multiplicity.size(); ++i) {
    if (multiplicity[i] > 1 && bodies.isSimulated(i)) {
      sb.solverIndexOf[i] = 0;
    }
  }
  sb.storageIndex.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (sb.solverIndexOf[i] != kNoSolverBody) {
      sb.solverIndexOf[i] = static_cast<std::uint32_t>(sb.storageIndex.size());
      sb.storageIndex.push_back(static_cast<std::uint32_t>(i));
    }
  }
  const std::size_t m = sb.storageIndex.size();
  sb.velocity.resize(m);
  sb.omega.resize(m);
  sb.invMass.resize(m);
  sb.invInertia.resize(m);
  auto setupBody = [&](std::size_t k) {
    const std::size_t i = sb.storageIndex[k];
    // A copy of a body split over p processes has mass M/p and inertia Theta/p (eq. 13.12).
    const Real p = multiplicity.empty() || splitMass == SplitMass::Whole
                       ? 1.0
                       : static_cast<Real>(std::max(1u, multiplicity[i]));
    const Mat3 rotation = bodies.orientations()[i].toRotationMatrix();  // A_IK
    sb.invMass[k] = p * bodies.invMasses()[i];
    sb.invInertia[k] = SymMat3::rotateDiagonal(rotation, p * bodies.invInertiasBody()[i]);
    sb.velocity[k] = bodies.velocities()[i];
    sb.omega[k] = rotation * bodies.omegasBody()[i];
  };
  forEachItem(m, threads, setupBody);
}

void setupSolverContacts(const BodyStorage& bodies, const ContactProblem& problem,
                         const InclusionSolverSettings& settings, const SolverBodies& sb,
                         SolverContacts& sc, SolverRolling& rolling,
                         std::span<const std::uint32_t> rowOf) {
  const ContactStorage& contacts = problem.contacts;
  const std::size_t nc = contacts.size();
  GRAIN_REQUIRE(rowOf.empty() || rowOf.size() == nc, "setupSolverContacts: one row per contact");
  sc.resizeRows(nc);
  rolling.clear();

  const bool jor = settings.method == SolverMethod::Jor;
  const Real alpha = jor ? settings.alphaJorProx : settings.alphaSorProx;
  // The whole-contact cone projection needs one scalar metric per contact (see ContactSolver).
  const bool coneMetric = settings.subMethodUcf == UcfSubMethod::DeSaxce &&
                          (settings.method == SolverMethod::SorContact || jor);
  const Real dt = problem.dt;
  const Real driftFactor =
      settings.driftCorrectionGap ? settings.driftCorrectionGapAlpha * 2.0 / dt : 0.0;

  const auto& materials = bodies.materials();
  // What consecutive contacts share, kept per thread: the material pair's parameters and A_IK of
  // the last simulated body on each side of a contact (0: A, 1: B): contacts come in order of
  // body A, so most find their matrix formed (the same bits as forming it again).
  struct Recent {
    MaterialId lastM1 = 0;
    MaterialId lastM2 = 0;
    const ContactParameter* param = nullptr;
    std::array<std::uint32_t, 2> rotationBody = {kNoSolverBody, kNoSolverBody};
    std::array<Mat3, 2> rotation = {Mat3::Identity(), Mat3::Identity()};
  };
  // Row `row` of contact c; every row depends on its contact alone.
  auto setupContact = [&](std::size_t c, Recent& recent) {
    MaterialId& lastM1 = recent.lastM1;
    MaterialId& lastM2 = recent.lastM2;
    const ContactParameter*& param = recent.param;
    std::array<std::uint32_t, 2>& rotationBody = recent.rotationBody;
    std::array<Mat3, 2>& rotation = recent.rotation;
    const std::size_t row = rowOf.empty() ? c : rowOf[c];
    const std::uint32_t a = contacts.bodyA()[c];
    const std::uint32_t b = contacts.bodyB()[c];
    const bool simA = bodies.isSimulated(a);
    const bool simB = bodies.isSimulated(b);
    const Mat3 frame = contacts.frame(c);
    const Vec3& rA = contacts.rA()[c];
    const Vec3& rB = contacts.rB()[c];

    if (param == nullptr || materials[a] != lastM1 || materials[b] != lastM2) {
      lastM1 = materials[a];
      lastM2 = materials[b];
      param = &problem.parameters.get(lastM1, lastM2);
    }

    // gamma^S = W^T u^S + chi (both bodies, I frame -> C frame), and the constant velocity of
    // a non-simulated partner at the end of the step (its part of W^T u^E + chi).
    auto pointVelocityStart = [&](std::size_t side, std::uint32_t i, const Vec3& r) -> Vec3 {
      if (bodies.isSimulated(i)) {
        if (rotationBody[side] != i) {
          rotation[side] = bodies.orientations()[i].toRotationMatrix();
          rotationBody[side] = i;
        }
        return problem.velocityStart[i] + (rotation[side] * problem.omegaBodyStart[i]).cross(r);
      }
      return passivePointVelocity(bodies, i, problem.velocityStart[i], problem.omegaBodyStart[i],
                                  r);
    };
    const Vec3 gammaStart =
        frame.transpose() * (pointVelocityStart(1, b, rB) - pointVelocityStart(0, a, rA));
    Vec3 passiveVelocity = Vec3::Zero();
    if (!simB) {
      passiveVelocity +=
          passivePointVelocity(bodies, b, bodies.velocities()[b], bodies.omegasBody()[b], rB);
    }
    if (!simA) {
      passiveVelocity -=
          passivePointVelocity(bodies, a, bodies.velocities()[a], bodies.omegasBody()[a], rA);
    }
    const Vec3 eps(param->epsilonN, param->epsilonT, param->epsilonT);
    Vec3 bc = eps.cwiseProduct(gammaStart) + frame.transpose() * passiveVelocity;
    bc.x() += driftFactor * driftGap(contacts.gaps()[c], settings.driftCorrectionGapSlop);
    sc.b[row] = bc;

    // Rotational Jacobians J = [r x n, r x t1, r x t2], their velocity responses
    // Theta_I^-1 J, and the Delassus block G_ii = sum_B m_B^-1 I + J_B^T Theta_B^-1 J_B.
    Mat3 jacA = Mat3::Zero();
    Mat3 jacB = Mat3::Zero();
    Mat3 dOmegaA = Mat3::Zero();
    Mat3 dOmegaB = Mat3::Zero();
    Mat3 g = Mat3::Zero();
    auto addBody = [&](std::uint32_t i, const Vec3& r, Mat3& jac, Mat3& dOmega) {
      const std::uint32_t k = sb.solverIndexOf[i];
      for (int col = 0; col < 3; ++col) {
        jac.col(col) = r.cross(frame.col(col));
        dOmega.col(col) = sb.invInertia[k] * jac.col(col);
      }
      g += sb.invMass[k] * Mat3::Identity() + jac.transpose() * dOmega;
    };
    if (simA)
      addBody(a, rA, jacA, dOmegaA);
    if (simB)
      addBody(b, rB, jacB, dOmegaB);

    ContactLaw law;
    law.mu = param->mu;
    if (param->model == ContactModel::UCFD) {
      law.dampN = param->invDampingN / dt;
      law.dampT = param->invDampingT / dt;
    }
    const Real gN = g(0, 0) + law.dampN;
    const Real gT = std::max(g(1, 1), g(2, 2)) + law.dampT;
    if (settings.rStrategy == RStrategy::Sum) {
      law.rInvN = law.rInvT = alpha / (g.trace() + law.dampN + 2.0 * law.dampT);
    } else if (coneMetric) {
      law.rInvN = law.rInvT = alpha / std::max(gN, gT);
    } else {
      law.rInvN = alpha / gN;
      law.rInvT = alpha / gT;
    }

    if (simA && simB) {
      sc.kind[row] = PairKind::TwoBodies;
      sc.bodyA[row] = sb.solverIndexOf[a];
      sc.bodyB[row] = sb.solverIndexOf[b];
      sc.frame[row] = frame;
      sc.jacA[row] = jacA;
      sc.jacB[row] = jacB;
      sc.dOmegaA[row] = dOmegaA;
      sc.dOmegaB[row] = dOmegaB;
    } else if (simB) {
      sc.kind[row] = PairKind::OneBody;
      sc.bodyA[row] = kNoSolverBody;
      sc.bodyB[row] = sb.solverIndexOf[b];
      sc.frame[row] = frame;
      sc.jacA[row].setZero();
      sc.jacB[row] = jacB;
      sc.dOmegaA[row].setZero();
      sc.dOmegaB[row] = dOmegaB;
    } else if (simA) {
      // gamma = -(A_CI v_a + J_a^T w_a): keep the single body in the B slot, negate frame and J.
      sc.kind[row] = PairKind::OneBody;
      sc.bodyA[row] = kNoSolverBody;
      sc.bodyB[row] = sb.solverIndexOf[a];
      sc.frame[row] = -frame;
      sc.jacA[row].setZero();
      sc.jacB[row] = -jacA;
      sc.dOmegaA[row].setZero();
      sc.dOmegaB[row] = -dOmegaA;
    } else {
      sc.kind[row] = PairKind::Passive;
      sc.bodyA[row] = kNoSolverBody;
      sc.bodyB[row] = kNoSolverBody;
      sc.frame[row] = frame;
      sc.jacA[row].setZero();
      sc.jacB[row].setZero();
      sc.dOmegaA[row].setZero();
      sc.dOmegaB[row].setZero();
    }
    sc.law[row] = law;

    // solve() refused rolling resistance for the other methods (checkRollingResistanceSupported).
    if (param->muRolling > 0.0 && sc.kind[row] != PairKind::Passive) {
      addRollingContact(rolling, sc, sb, bodies, c, row, a, b, rA, rB, frame, param->muRolling,
                        alpha);
    }
  };
  // On several threads the contacts are shared out in static ranges; the rolling contacts are
  // appended in contact order, so a problem with rolling resistance is set up on one thread.
  const int threads = static_cast<int>(settings.threadCount);
  if (threads > 1 &&
      nc >= static_cast<std::size_t>(settings.minContactsPerThread) * settings.threadCount &&
      !problem.parameters.hasRollingResistance()) {
    const auto count = static_cast<std::ptrdiff_t>(nc);
#pragma omp parallel num_threads(threads) default(none) shared(setupContact, count)
    {
      Recent recent;
#pragma omp for schedule(static)
      for (std::ptrdiff_t c = 0; c < count; ++c) {
        setupContact(static_cast<std::size_t>(c), recent);
      }
    }
    return;
  }
  Recent recent;
  for (std::size_t c = 0; c < nc; ++c) {
    setupContact(c, recent);
  }
}

}  // namespace grain::detail
