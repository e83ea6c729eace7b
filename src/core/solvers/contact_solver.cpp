// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/prox.hpp>
#include <grain/core/timestepping/velocity_exchange.hpp>

namespace grain {

namespace {

using detail::ContactLaw;
using detail::kNoSolverBody;
using detail::PairKind;
using detail::SolverBodies;
using detail::SolverContacts;
using detail::SymMat3;

/// Raw pointers to the hot arrays of one sweep (no bounds checks, no reallocation inside).
struct Hot {
  const PairKind* kind;
  const std::uint32_t* bodyA;
  const std::uint32_t* bodyB;
  const Mat3* frame;
  const Vec3* rA;
  const Vec3* rB;
  const Vec3* b;
  const ContactLaw* law;
  Vec3* percussion;
  Vec3* increment;
  Vec3* velocity;
  Vec3* omega;
  const Real* invMass;
  const SymMat3* invInertia;
  std::size_t contacts;
};

/// Velocity (I frame, m/s) of the contact point of B relative to that of A:
/// v_b + w_b x r_b - v_a - w_a x r_a, or v + w x r of the single body of a OneBody contact.
template <bool kTwo>
inline Vec3 relativeVelocity(const Hot& h, std::size_t i) {
  const std::uint32_t bb = h.bodyB[i];
  Vec3 dv = h.velocity[bb] + h.omega[bb].cross(h.rB[i]);
  if constexpr (kTwo) {
    const std::uint32_t a = h.bodyA[i];
    dv -= h.velocity[a] + h.omega[a].cross(h.rA[i]);
  }
  return dv;
}

/// u <- u + M^-1 W_i dP for the world force f = A_IC dP acting on B (and -f on A).
template <bool kTwo>
inline void applyForce(Hot& h, std::size_t i, const Vec3& f) {
  const std::uint32_t bb = h.bodyB[i];
  h.velocity[bb] += h.invMass[bb] * f;
  h.omega[bb] += h.invInertia[bb] * h.rB[i].cross(f);
  if constexpr (kTwo) {
    const std::uint32_t a = h.bodyA[i];
    h.velocity[a] -= h.invMass[a] * f;
    h.omega[a] -= h.invInertia[a] * h.rA[i].cross(f);
  }
}

/// Prox of one whole contact: P_new = prox(P - R^-1 (xi + D P / dt)), xi = gamma + b.
template <UcfSubMethod kSub>
inline Vec3 contactProx(const Vec3& xiIn, const Vec3& p, const ContactLaw& law) {
  Vec3 xi(xiIn.x() + law.dampN * p.x(), xiIn.y() + law.dampT * p.y(), xiIn.z() + law.dampT * p.z());
  if constexpr (kSub == UcfSubMethod::DeSaxce) {
    xi = prox::deSaxceShift(xi, law.mu);
  }
  const Vec3 x(p.x() - law.rInvN * xi.x(), p.y() - law.rInvT * xi.y(), p.z() - law.rInvT * xi.z());
  if constexpr (kSub == UcfSubMethod::DeSaxce) {
    return prox::projectCone(x, law.mu);
  } else {
    return prox::alartCurnier(x, law.mu);
  }
}

template <bool kTwo, UcfSubMethod kSub>
inline void sorContactUpdate(Hot& h, std::size_t i) {
  const Mat3& frame = h.frame[i];
  const Vec3 xi = frame.transpose() * relativeVelocity<kTwo>(h, i) + h.b[i];
  const Vec3 p = h.percussion[i];
  const Vec3 pNew = contactProx<kSub>(xi, p, h.law[i]);
  h.percussion[i] = pNew;
  applyForce<kTwo>(h, i, frame * (pNew - p));
}

template <UcfSubMethod kSub>
void sweepSorContact(Hot& h) {
  for (std::size_t i = 0; i < h.contacts; ++i) {
    switch (h.kind[i]) {
      case PairKind::TwoBodies:
        sorContactUpdate<true, kSub>(h, i);
        break;
      case PairKind::OneBody:
        sorContactUpdate<false, kSub>(h, i);
        break;
      case PairKind::Passive:
        break;
    }
  }
}

/// Normal part only: P_N = max(P_N - r_N^-1 (xi_N + d_N P_N / dt), 0), then velocity update.
template <bool kTwo>
inline void normalUpdate(Hot& h, std::size_t i) {
  const Mat3& frame = h.frame[i];
  const ContactLaw& law = h.law[i];
  Vec3& p = h.percussion[i];
  const Real xiN = frame.col(0).dot(relativeVelocity<kTwo>(h, i)) + h.b[i].x() + law.dampN * p.x();
  const Real pN = prox::projectNonNegative(p.x() - law.rInvN * xiN);
  const Real dN = pN - p.x();
  p.x() = pN;
  applyForce<kTwo>(h, i, dN * frame.col(0));
}

/// Tangential part only: P_T = proj_{disk(mu P_N)}(P_T - r_T^-1 (xi_T + d_T P_T / dt)) with
/// the current P_N, then velocity update.
template <bool kTwo>
inline void tangentialUpdate(Hot& h, std::size_t i) {
  const Mat3& frame = h.frame[i];
  const ContactLaw& law = h.law[i];
  Vec3& p = h.percussion[i];
  const Vec3 dv = relativeVelocity<kTwo>(h, i);
  const Real xi1 = frame.col(1).dot(dv) + h.b[i].y() + law.dampT * p.y();
  const Real xi2 = frame.col(2).dot(dv) + h.b[i].z() + law.dampT * p.z();
  Real x1 = p.y() - law.rInvT * xi1;
  Real x2 = p.z() - law.rInvT * xi2;
  prox::projectDisk(x1, x2, law.mu * p.x());
  const Real d1 = x1 - p.y();
  const Real d2 = x2 - p.z();
  p.y() = x1;
  p.z() = x2;
  applyForce<kTwo>(h, i, d1 * frame.col(1) + d2 * frame.col(2));
}

void sweepSorFull(Hot& h) {
  for (std::size_t i = 0; i < h.contacts; ++i) {
    switch (h.kind[i]) {
      case PairKind::TwoBodies:
        normalUpdate<true>(h, i);
        tangentialUpdate<true>(h, i);
        break;
      case PairKind::OneBody:
        normalUpdate<false>(h, i);
        tangentialUpdate<false>(h, i);
        break;
      case PairKind::Passive:
        break;
    }
  }
}

void sweepNormal(Hot& h) {
  for (std::size_t i = 0; i < h.contacts; ++i) {
    switch (h.kind[i]) {
      case PairKind::TwoBodies:
        normalUpdate<true>(h, i);
        break;
      case PairKind::OneBody:
        normalUpdate<false>(h, i);
        break;
      case PairKind::Passive:
        break;
    }
  }
}

void sweepTangential(Hot& h) {
  for (std::size_t i = 0; i < h.contacts; ++i) {
    switch (h.kind[i]) {
      case PairKind::TwoBodies:
        tangentialUpdate<true>(h, i);
        break;
      case PairKind::OneBody:
        tangentialUpdate<false>(h, i);
        break;
      case PairKind::Passive:
        break;
    }
  }
}

/// JOR: all proxes from the same velocities, then all velocity updates (eqs. 8.34, 8.35).
template <UcfSubMethod kSub>
void sweepJor(Hot& h) {
  for (std::size_t i = 0; i < h.contacts; ++i) {
    const PairKind kind = h.kind[i];
    if (kind == PairKind::Passive) {
      h.increment[i].setZero();
      continue;
    }
    const Vec3 dv =
        kind == PairKind::TwoBodies ? relativeVelocity<true>(h, i) : relativeVelocity<false>(h, i);
    const Vec3 xi = h.frame[i].transpose() * dv + h.b[i];
    const Vec3 p = h.percussion[i];
    const Vec3 pNew = contactProx<kSub>(xi, p, h.law[i]);
    h.increment[i] = pNew - p;
    h.percussion[i] = pNew;
  }
  for (std::size_t i = 0; i < h.contacts; ++i) {
    switch (h.kind[i]) {
      case PairKind::TwoBodies:
        applyForce<true>(h, i, h.frame[i] * h.increment[i]);
        break;
      case PairKind::OneBody:
        applyForce<false>(h, i, h.frame[i] * h.increment[i]);
        break;
      case PairKind::Passive:
        break;
    }
  }
}

Hot makeHot(SolverContacts& c, SolverBodies& b, std::vector<Vec3>& percussion) {
  return Hot{c.kind.data(),     c.bodyA.data(),      c.bodyB.data(),    c.frame.data(),
             c.rA.data(),       c.rB.data(),         c.b.data(),        c.law.data(),
             percussion.data(), c.increment.data(),  b.velocity.data(), b.omega.data(),
             b.invMass.data(),  b.invInertia.data(), c.size()};
}

/// |new - old| <= |old| relTol + absTol, component-wise.
inline bool closeEnough(const Vec3& now, const Vec3& old, Real relTol, Real absTol) {
  for (int k = 0; k < 3; ++k) {
    if (!(std::abs(now[k] - old[k]) <= std::abs(old[k]) * relTol + absTol)) {
      return false;
    }
  }
  return true;
}

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

bool lessKey(const detail::PercussionCacheKey& x, const detail::PercussionCacheKey& y) {
  if (x.lo != y.lo)
    return x.lo < y.lo;
  if (x.hi != y.hi)
    return x.hi < y.hi;
  return x.contact < y.contact;
}

/// Three-way comparison of (lo, hi, ordinal).
int compareEntry(BodyId lo, BodyId hi, std::uint32_t ord, const detail::PercussionCacheEntry& e) {
  if (lo != e.lo)
    return lo < e.lo ? -1 : 1;
  if (hi != e.hi)
    return hi < e.hi ? -1 : 1;
  if (ord != e.ordinal)
    return ord < e.ordinal ? -1 : 1;
  return 0;
}

}  // namespace

ContactSolver::ContactSolver(const InclusionSolverSettings& settings) : settings_(settings) {
  validate(settings_);
  const std::size_t n = settings_.reserveContacts;
  percussion_.reserve(n);
  auto& c = solverContacts_;
  c.kind.reserve(n);
  c.bodyA.reserve(n);
  c.bodyB.reserve(n);
  c.frame.reserve(n);
  c.rA.reserve(n);
  c.rB.reserve(n);
  c.b.reserve(n);
  c.law.reserve(n);
}

void ContactSolver::setupBodies(const BodyStorage& bodies, const ContactProblem& problem) {
  const std::size_t n = bodies.size();
  const ContactStorage& contacts = problem.contacts;
  GRAIN_REQUIRE(problem.velocityStart.size() == n && problem.omegaBodyStart.size() == n,
                "ContactProblem: velocityStart/omegaBodyStart must have one entry per body");
  GRAIN_REQUIRE(std::isfinite(problem.dt) && problem.dt > 0.0, "ContactProblem: dt must be > 0");
  SolverBodies& sb = solverBodies_;
  sb.solverIndexOf.assign(n, kNoSolverBody);
  const auto& a = contacts.bodyA();
  const auto& b = contacts.bodyB();
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    GRAIN_REQUIRE(a[c] < n && b[c] < n && a[c] != b[c],
                  "contact " + std::to_string(c) + " has invalid body indices");
    if (bodies.isSimulated(a[c]))
      sb.solverIndexOf[a[c]] = 0;
    if (bodies.isSimulated(b[c]))
      sb.solverIndexOf[b[c]] = 0;
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
  sb.rotation.resize(m);
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t i = sb.storageIndex[k];
    sb.rotation[k] = bodies.orientations()[i].toRotationMatrix();
    sb.invMass[k] = bodies.invMasses()[i];
    sb.invInertia[k] = SymMat3::rotateDiagonal(sb.rotation[k], bodies.invInertiasBody()[i]);
  }
  loadVelocities(bodies);
}

void ContactSolver::loadVelocities(const BodyStorage& bodies) {
  SolverBodies& sb = solverBodies_;
  for (std::size_t k = 0; k < sb.size(); ++k) {
    const std::size_t i = sb.storageIndex[k];
    sb.velocity[k] = bodies.velocities()[i];
    sb.omega[k] = sb.rotation[k] * bodies.omegasBody()[i];
  }
}

void ContactSolver::storeVelocities(BodyStorage& bodies) const {
  const SolverBodies& sb = solverBodies_;
  auto& v = bodies.velocities();
  auto& w = bodies.omegasBody();
  for (std::size_t k = 0; k < sb.size(); ++k) {
    const std::size_t i = sb.storageIndex[k];
    v[i] = sb.velocity[k];
    w[i] = sb.rotation[k].transpose() * sb.omega[k];
  }
}

void ContactSolver::setupContacts(const BodyStorage& bodies, const ContactProblem& problem) {
  const ContactStorage& contacts = problem.contacts;
  const std::size_t nc = contacts.size();
  SolverContacts& sc = solverContacts_;
  const SolverBodies& sb = solverBodies_;
  sc.kind.resize(nc);
  sc.bodyA.resize(nc);
  sc.bodyB.resize(nc);
  sc.frame.resize(nc);
  sc.rA.resize(nc);
  sc.rB.resize(nc);
  sc.b.resize(nc);
  sc.law.resize(nc);
  if (settings_.method == SolverMethod::Jor) {
    sc.increment.resize(nc);
  }

  const bool jor = settings_.method == SolverMethod::Jor;
  const Real alpha = jor ? settings_.alphaJorProx : settings_.alphaSorProx;
  // The whole-contact cone projection needs one scalar metric per contact (see the header).
  const bool coneMetric = settings_.subMethodUcf == UcfSubMethod::DeSaxce &&
                          (settings_.method == SolverMethod::SorContact || jor);
  const Real dt = problem.dt;
  const Real driftFactor =
      settings_.driftCorrectionGap ? settings_.driftCorrectionGapAlpha * 2.0 / dt : 0.0;

  const auto& materials = bodies.materials();
  MaterialId lastM1 = 0;
  MaterialId lastM2 = 0;
  const ContactParameter* param = nullptr;

  for (std::size_t c = 0; c < nc; ++c) {
    const std::uint32_t a = contacts.bodyA()[c];
    const std::uint32_t b = contacts.bodyB()[c];
    const bool simA = bodies.isSimulated(a);
    const bool simB = bodies.isSimulated(b);
    Mat3 frame;
    frame.col(0) = contacts.normals()[c];
    frame.col(1) = contacts.tangents1()[c];
    frame.col(2) = contacts.tangents2()[c];
    const Vec3& rA = contacts.rA()[c];
    const Vec3& rB = contacts.rB()[c];

    if (param == nullptr || materials[a] != lastM1 || materials[b] != lastM2) {
      lastM1 = materials[a];
      lastM2 = materials[b];
      param = &problem.parameters.get(lastM1, lastM2);
    }

    // gamma^S = W^T u^S + chi (both bodies, I frame -> C frame), and the constant velocity of
    // a non-simulated partner at the end of the step (its part of W^T u^E + chi).
    auto pointVelocityStart = [&](std::uint32_t i, const Vec3& r) -> Vec3 {
      if (bodies.isSimulated(i)) {
        const Mat3& rot = sb.rotation[sb.solverIndexOf[i]];
        return problem.velocityStart[i] + (rot * problem.omegaBodyStart[i]).cross(r);
      }
      return passivePointVelocity(bodies, i, problem.velocityStart[i], problem.omegaBodyStart[i],
                                  r);
    };
    const Vec3 gammaStart =
        frame.transpose() * (pointVelocityStart(b, rB) - pointVelocityStart(a, rA));
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
    bc.x() += driftFactor * contacts.gaps()[c];
    sc.b[c] = bc;

    // Delassus block G_ii = sum_B m_B^-1 I + J_B^T Theta_B^-1 J_B (I frame inertia).
    Mat3 g = Mat3::Zero();
    auto addBody = [&](std::uint32_t i, const Vec3& r) {
      const std::uint32_t k = sb.solverIndexOf[i];
      Mat3 j;
      for (int col = 0; col < 3; ++col) {
        j.col(col) = r.cross(frame.col(col));
      }
      Mat3 ij;
      for (int col = 0; col < 3; ++col) {
        ij.col(col) = sb.invInertia[k] * j.col(col);
      }
      g += sb.invMass[k] * Mat3::Identity() + j.transpose() * ij;
    };
    if (simA)
      addBody(a, rA);
    if (simB)
      addBody(b, rB);

    ContactLaw law;
    law.mu = param->mu;
    if (param->model == ContactModel::UCFD) {
      law.dampN = param->invDampingN / dt;
      law.dampT = param->invDampingT / dt;
    }
    const Real gN = g(0, 0) + law.dampN;
    const Real gT = std::max(g(1, 1), g(2, 2)) + law.dampT;
    if (settings_.rStrategy == RStrategy::Sum) {
      law.rInvN = law.rInvT = alpha / (g.trace() + law.dampN + 2.0 * law.dampT);
    } else if (coneMetric) {
      law.rInvN = law.rInvT = alpha / std::max(gN, gT);
    } else {
      law.rInvN = alpha / gN;
      law.rInvT = alpha / gT;
    }

    if (simA && simB) {
      sc.kind[c] = PairKind::TwoBodies;
      sc.bodyA[c] = sb.solverIndexOf[a];
      sc.bodyB[c] = sb.solverIndexOf[b];
      sc.frame[c] = frame;
      sc.rA[c] = rA;
      sc.rB[c] = rB;
    } else if (simB) {
      sc.kind[c] = PairKind::OneBody;
      sc.bodyA[c] = kNoSolverBody;
      sc.bodyB[c] = sb.solverIndexOf[b];
      sc.frame[c] = frame;
      sc.rA[c] = Vec3::Zero();
      sc.rB[c] = rB;
    } else if (simA) {
      // gamma = -A_CI (v_a + w_a x r_a): keep the single body in the B slot, negate the frame.
      sc.kind[c] = PairKind::OneBody;
      sc.bodyA[c] = kNoSolverBody;
      sc.bodyB[c] = sb.solverIndexOf[a];
      sc.frame[c] = -frame;
      sc.rA[c] = Vec3::Zero();
      sc.rB[c] = rA;
    } else {
      sc.kind[c] = PairKind::Passive;
      sc.bodyA[c] = kNoSolverBody;
      sc.bodyB[c] = kNoSolverBody;
      sc.frame[c] = frame;
      sc.rA[c] = Vec3::Zero();
      sc.rB[c] = Vec3::Zero();
    }
    sc.law[c] = law;
  }
}

void ContactSolver::initialPercussions(const BodyStorage& bodies, const ContactProblem& problem) {
  const ContactStorage& contacts = problem.contacts;
  const std::size_t nc = contacts.size();
  percussion_.assign(nc, Vec3::Zero());
  if (!settings_.usePercussionCache) {
    return;
  }
  const auto& ids = bodies.ids();
  cacheKeys_.resize(nc);
  for (std::size_t c = 0; c < nc; ++c) {
    const BodyId ia = ids[contacts.bodyA()[c]];
    const BodyId ib = ids[contacts.bodyB()[c]];
    cacheKeys_[c] = {std::min(ia, ib), std::max(ia, ib), static_cast<std::uint32_t>(c)};
  }
  std::sort(cacheKeys_.begin(), cacheKeys_.end(), lessKey);
  cacheOrdinal_.resize(nc);
  for (std::size_t k = 0; k < nc; ++k) {
    const bool samePair = k > 0 && cacheKeys_[k].lo == cacheKeys_[k - 1].lo &&
                          cacheKeys_[k].hi == cacheKeys_[k - 1].hi;
    cacheOrdinal_[cacheKeys_[k].contact] =
        samePair ? cacheOrdinal_[cacheKeys_[k - 1].contact] + 1 : 0;
  }

  // Merge the sorted keys with the sorted cache of the previous solve.
  Hot h = makeHot(solverContacts_, solverBodies_, percussion_);
  std::size_t e = 0;
  for (std::size_t k = 0; k < nc; ++k) {
    const auto& key = cacheKeys_[k];
    const std::uint32_t c = key.contact;
    const std::uint32_t ord = cacheOrdinal_[c];
    while (e < cache_.size() && compareEntry(key.lo, key.hi, ord, cache_[e]) > 0) {
      ++e;
    }
    if (e == cache_.size()) {
      break;
    }
    if (compareEntry(key.lo, key.hi, ord, cache_[e]) != 0) {
      continue;
    }
    const PairKind kind = solverContacts_.kind[c];
    if (kind == PairKind::Passive) {
      continue;
    }
    // The cache holds the percussion on the body with the larger id, in I.
    const bool bIsHi = ids[contacts.bodyB()[c]] == key.hi;
    const Vec3 onB = bIsHi ? cache_[e].percussionOnHi : Vec3(-cache_[e].percussionOnHi);
    Mat3 frame;
    frame.col(0) = contacts.normals()[c];
    frame.col(1) = contacts.tangents1()[c];
    frame.col(2) = contacts.tangents2()[c];
    Vec3 p0 = frame.transpose() * onB;
    // Start from an admissible percussion: P_N >= 0, ||P_T|| <= mu P_N.
    p0 = prox::alartCurnier(p0, solverContacts_.law[c].mu);
    percussion_[c] = p0;
    // u^{E,0} = u^S + M^-1 h dt + M^-1 W P^0.
    if (kind == PairKind::TwoBodies) {
      applyForce<true>(h, c, solverContacts_.frame[c] * p0);
    } else {
      applyForce<false>(h, c, solverContacts_.frame[c] * p0);
    }
  }
}

void ContactSolver::storePercussionCache(const BodyStorage& bodies, const ContactProblem& problem) {
  const ContactStorage& contacts = problem.contacts;
  const auto& ids = bodies.ids();
  cacheNext_.clear();
  for (const auto& key : cacheKeys_) {
    const std::uint32_t c = key.contact;
    const Vec3& p = percussion_[c];
    const Vec3 onB = contacts.normals()[c] * p.x() + contacts.tangents1()[c] * p.y() +
                     contacts.tangents2()[c] * p.z();
    const bool bIsHi = ids[contacts.bodyB()[c]] == key.hi;
    cacheNext_.push_back({key.lo, key.hi, cacheOrdinal_[c], bIsHi ? onB : Vec3(-onB)});
  }
  cache_.swap(cacheNext_);
}

bool ContactSolver::hasTangentialSweep(std::uint32_t iteration) const {
  if (settings_.method != SolverMethod::SorNormalTangential) {
    return true;
  }
  return (iteration + 1) % settings_.normalTangentialUpdateRatio == 0 ||
         iteration + 1 == settings_.maxIter;
}

void ContactSolver::sweep(bool tangentialSweep) {
  Hot h = makeHot(solverContacts_, solverBodies_, percussion_);
  const bool ds = settings_.subMethodUcf == UcfSubMethod::DeSaxce;
  switch (settings_.method) {
    case SolverMethod::SorContact:
      if (ds) {
        sweepSorContact<UcfSubMethod::DeSaxce>(h);
      } else {
        sweepSorContact<UcfSubMethod::AlartCurnier>(h);
      }
      break;
    case SolverMethod::SorFull:
      sweepSorFull(h);
      break;
    case SolverMethod::SorNormalTangential:
      sweepNormal(h);
      if (tangentialSweep) {
        sweepTangential(h);
      }
      break;
    case SolverMethod::Jor:
      if (ds) {
        sweepJor<UcfSubMethod::DeSaxce>(h);
      } else {
        sweepJor<UcfSubMethod::AlartCurnier>(h);
      }
      break;
  }
}

void ContactSolver::saveOldState() {
  if (settings_.convergenceMethod == ConvergenceMethod::InLambda) {
    solverContacts_.percussionOld.assign(percussion_.begin(), percussion_.end());
    return;
  }
  SolverBodies& sb = solverBodies_;
  sb.velocityOld.resize(sb.size());
  sb.omegaBodyOld.resize(sb.size());
  for (std::size_t k = 0; k < sb.size(); ++k) {
    sb.velocityOld[k] = sb.velocity[k];
    sb.omegaBodyOld[k] = sb.rotation[k].transpose() * sb.omega[k];
  }
}

bool ContactSolver::locallyConverged(const BodyStorage& bodies) const {
  const Real rel = settings_.relTol;
  const Real abs = settings_.absTol;
  const SolverBodies& sb = solverBodies_;
  switch (settings_.convergenceMethod) {
    case ConvergenceMethod::InLambda: {
      const auto& old = solverContacts_.percussionOld;
      for (std::size_t c = 0; c < percussion_.size(); ++c) {
        if (!closeEnough(percussion_[c], old[c], rel, abs)) {
          return false;
        }
      }
      return true;
    }
    case ConvergenceMethod::InVelocity:
    case ConvergenceMethod::InVelocityLocal: {
      for (std::size_t k = 0; k < sb.size(); ++k) {
        if (!closeEnough(sb.velocity[k], sb.velocityOld[k], rel, abs) ||
            !closeEnough(sb.rotation[k].transpose() * sb.omega[k], sb.omegaBodyOld[k], rel, abs)) {
          return false;
        }
      }
      return true;
    }
    case ConvergenceMethod::InEnergyVelocity: {
      const auto& mass = bodies.masses();
      const auto& inertia = bodies.inertiasBody();
      for (std::size_t k = 0; k < sb.size(); ++k) {
        const std::size_t i = sb.storageIndex[k];
        const Vec3 omegaBody = sb.rotation[k].transpose() * sb.omega[k];
        const Real eNew = std::sqrt(mass[i] * sb.velocity[k].squaredNorm() +
                                    omegaBody.dot(inertia[i].cwiseProduct(omegaBody)));
        const Real eOld =
            std::sqrt(mass[i] * sb.velocityOld[k].squaredNorm() +
                      sb.omegaBodyOld[k].dot(inertia[i].cwiseProduct(sb.omegaBodyOld[k])));
        if (!(std::abs(eNew - eOld) <= eOld * rel + abs)) {
          return false;
        }
      }
      return true;
    }
  }
  return false;
}

bool ContactSolver::allFinite() const {
  const SolverBodies& sb = solverBodies_;
  for (std::size_t k = 0; k < sb.size(); ++k) {
    if (!sb.velocity[k].allFinite() || !sb.omega[k].allFinite()) {
      return false;
    }
  }
  for (const Vec3& p : percussion_) {
    if (!p.allFinite()) {
      return false;
    }
  }
  return true;
}

SolverStats ContactSolver::solve(BodyStorage& bodies, const ContactProblem& problem,
                                 VelocityExchange* exchange) {
  SolverStats stats;
  const std::size_t nc = problem.contacts.size();
  if (nc == 0) {
    percussion_.clear();
    cache_.clear();
    stats.converged = true;
    return stats;
  }
  setupBodies(bodies, problem);
  setupContacts(bodies, problem);
  initialPercussions(bodies, problem);

  const unsigned exchangePeriod = exchange != nullptr ? exchange->splitExchangePeriod() : 0;
  for (std::uint32_t it = 0; it < settings_.maxIter; ++it) {
    const bool tangential = hasTangentialSweep(it);
    // SorNormalTangential: only test after iterations that include the tangential sweep.
    const bool check = it + 1 >= settings_.minIter && tangential;
    if (check) {
      saveOldState();
    }
    sweep(tangential);
    stats.iterations = it + 1;
    if (exchangePeriod > 0 && (it + 1) % exchangePeriod == 0) {
      storeVelocities(bodies);
      exchange->exchangeSplitVelocities(bodies);
      loadVelocities(bodies);
    }
    if (check) {
      const bool local = locallyConverged(bodies);
      const bool global = exchange != nullptr ? exchange->reduceConverged(local) : local;
      if (global) {
        stats.converged = true;
        break;
      }
    }
  }
  storeVelocities(bodies);
  if (settings_.isFiniteCheck) {
    stats.finite = allFinite();
  }
  if (settings_.usePercussionCache) {
    storePercussionCache(bodies, problem);
  }
  return stats;
}

}  // namespace grain
