// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <span>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/contact_rows.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/core/solvers/prox.hpp>
#include <grain/core/timestepping/exchange.hpp>

#include "parallel_items.hpp"

// The per-contact helpers below must be inlined into the sweep loops (GCC otherwise keeps some
// of them out of line because they have several callers), and so must everything they call.
// GCC's inliner works to a budget for the whole translation unit (--param inline-unit-growth):
// once this file had grown, it left Eigen's 3x3 matrix-vector product of applyPercussion() out
// of line, a call per contact update (9 % more instructions per SORContact sweep;
// -fopt-info-inline-missed names the calls it skipped). Hence the 3x3 products of the sweeps
// are written out (matVec, matTVec) and the sweep loops are flattened: what they call is inlined
// whatever the size of the file. tests/build/hot_loops_test.sh checks the compiled loops.
#if defined(__GNUC__) || defined(__clang__)
#define GRAIN_SOLVER_INLINE inline __attribute__((always_inline))
#define GRAIN_SOLVER_FLATTEN __attribute__((flatten))
#define GRAIN_SOLVER_RESTRICT __restrict__
#else
#define GRAIN_SOLVER_INLINE inline
#define GRAIN_SOLVER_FLATTEN
#define GRAIN_SOLVER_RESTRICT
#endif

namespace grain {

namespace {

using detail::ContactLaw;
using detail::PairKind;
using detail::SolverBodies;
using detail::SolverContacts;

/// Raw pointers to the hot arrays of one sweep (no bounds checks, no reallocation inside).
struct Hot {
  const PairKind* GRAIN_SOLVER_RESTRICT kind;
  const std::uint32_t* GRAIN_SOLVER_RESTRICT bodyA;
  const std::uint32_t* GRAIN_SOLVER_RESTRICT bodyB;
  const Mat3* GRAIN_SOLVER_RESTRICT frame;
  const Mat3* GRAIN_SOLVER_RESTRICT jacA;
  const Mat3* GRAIN_SOLVER_RESTRICT jacB;
  const Mat3* GRAIN_SOLVER_RESTRICT dOmegaA;
  const Mat3* GRAIN_SOLVER_RESTRICT dOmegaB;
  const Vec3* GRAIN_SOLVER_RESTRICT b;
  const ContactLaw* GRAIN_SOLVER_RESTRICT law;
  Vec3* GRAIN_SOLVER_RESTRICT percussion;
  Vec3* GRAIN_SOLVER_RESTRICT increment;
  Vec3* GRAIN_SOLVER_RESTRICT velocity;
  Vec3* GRAIN_SOLVER_RESTRICT omega;
  const Real* GRAIN_SOLVER_RESTRICT invMass;
  std::size_t contacts;
};

/// m v for a 3x3 block of the sweeps. The sums are associated as Eigen 3.4 evaluates m * v with
/// SSE2 (rows 0 and 1 as packets from the left, row 2 as a0 + (a1 + a2)), so that the sweeps
/// give bit for bit the results of the Eigen expressions they replace.
GRAIN_SOLVER_INLINE Vec3 matVec(const Mat3& m, const Vec3& v) {
  return Vec3(m(0, 0) * v.x() + m(0, 1) * v.y() + m(0, 2) * v.z(),
              m(1, 0) * v.x() + m(1, 1) * v.y() + m(1, 2) * v.z(),
              m(2, 0) * v.x() + (m(2, 1) * v.y() + m(2, 2) * v.z()));
}

/// m^T v for a 3x3 block of the sweeps (every row summed from the left, as Eigen does).
GRAIN_SOLVER_INLINE Vec3 matTVec(const Mat3& m, const Vec3& v) {
  return Vec3(m(0, 0) * v.x() + m(1, 0) * v.y() + m(2, 0) * v.z(),
              m(0, 1) * v.x() + m(1, 1) * v.y() + m(2, 1) * v.z(),
              m(0, 2) * v.x() + m(1, 2) * v.y() + m(2, 2) * v.z());
}

/// Relative contact velocity in the contact frame, gamma = W_a^T u_a + W_b^T u_b (without the
/// constant part of non-simulated bodies):
/// A_CI (v_b - v_a) + J_b^T w_b - J_a^T w_a, J = [r x n, r x t1, r x t2] (I frame).
template <bool kTwo>
GRAIN_SOLVER_INLINE Vec3 contactVelocity(const Hot& h, std::size_t i) {
  const std::uint32_t bb = h.bodyB[i];
  if constexpr (kTwo) {
    const std::uint32_t a = h.bodyA[i];
    return matTVec(h.frame[i], h.velocity[bb] - h.velocity[a]) + matTVec(h.jacB[i], h.omega[bb]) -
           matTVec(h.jacA[i], h.omega[a]);
  } else {
    return matTVec(h.frame[i], h.velocity[bb]) + matTVec(h.jacB[i], h.omega[bb]);
  }
}

/// u <- u + M^-1 W_i dP: v_b += f/m_b, w_b += Theta_b^-1 J_b dP with f = A_IC dP, and the
/// opposite on A.
template <bool kTwo>
GRAIN_SOLVER_INLINE void applyPercussion(Hot& h, std::size_t i, const Vec3& dP) {
  const std::uint32_t bb = h.bodyB[i];
  const Vec3 f = matVec(h.frame[i], dP);
  h.velocity[bb] += h.invMass[bb] * f;
  h.omega[bb] += matVec(h.dOmegaB[i], dP);
  if constexpr (kTwo) {
    const std::uint32_t a = h.bodyA[i];
    h.velocity[a] -= h.invMass[a] * f;
    h.omega[a] -= matVec(h.dOmegaA[i], dP);
  }
}

/// Prox of one whole contact: P_new = prox(P - R^-1 (xi + D P / dt)), xi = gamma + b.
template <UcfSubMethod kSub>
GRAIN_SOLVER_INLINE Vec3 contactProx(const Vec3& xiIn, const Vec3& p, const ContactLaw& law) {
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
GRAIN_SOLVER_INLINE void sorContactUpdate(Hot& h, std::size_t i) {
  const Vec3 xi = contactVelocity<kTwo>(h, i) + h.b[i];
  const Vec3 p = h.percussion[i];
  const Vec3 pNew = contactProx<kSub>(xi, p, h.law[i]);
  h.percussion[i] = pNew;
  applyPercussion<kTwo>(h, i, pNew - p);
}

/// Normal part only: P_N = max(P_N - r_N^-1 (xi_N + d_N P_N / dt), 0), then velocity update.
template <bool kTwo>
GRAIN_SOLVER_INLINE void normalUpdate(Hot& h, std::size_t i) {
  const ContactLaw& law = h.law[i];
  Vec3& p = h.percussion[i];
  const Real xiN = contactVelocity<kTwo>(h, i).x() + h.b[i].x() + law.dampN * p.x();
  const Real pN = prox::projectNonNegative(p.x() - law.rInvN * xiN);
  const Real dN = pN - p.x();
  p.x() = pN;
  applyPercussion<kTwo>(h, i, Vec3(dN, 0.0, 0.0));
}

/// Tangential part only: P_T = proj_{disk(mu P_N)}(P_T - r_T^-1 (xi_T + d_T P_T / dt)) with
/// the current P_N, then velocity update.
template <bool kTwo>
GRAIN_SOLVER_INLINE void tangentialUpdate(Hot& h, std::size_t i) {
  const ContactLaw& law = h.law[i];
  Vec3& p = h.percussion[i];
  const Vec3 gamma = contactVelocity<kTwo>(h, i);
  const Real xi1 = gamma.y() + h.b[i].y() + law.dampT * p.y();
  const Real xi2 = gamma.z() + h.b[i].z() + law.dampT * p.z();
  Real x1 = p.y() - law.rInvT * xi1;
  Real x2 = p.z() - law.rInvT * xi2;
  prox::projectDisk(x1, x2, law.mu * p.x());
  const Real d1 = x1 - p.y();
  const Real d2 = x2 - p.z();
  p.y() = x1;
  p.z() = x2;
  applyPercussion<kTwo>(h, i, Vec3(0.0, d1, d2));
}

/// The per-contact updates of the SOR sweeps, one kernel each, shared by the serial sweeps
/// (sweepRange) and the coloured ones (sweepColours).
template <UcfSubMethod kSub>
struct SorContactKernel {
  GRAIN_SOLVER_INLINE void operator()(Hot& h, std::size_t i) const {
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
};

/// The warm start of a coloured solve: u += M^-1 W P^0 with the row's percussion P^0 (the
/// sweeps' order and threads, so the same bits for a given thread count).
struct WarmStartKernel {
  GRAIN_SOLVER_INLINE void operator()(Hot& h, std::size_t i) const {
    const Vec3 p = h.percussion[i];
    if (p.x() == 0 && p.y() == 0 && p.z() == 0) {
      return;  // no entry in the cache, or a passive contact
    }
    switch (h.kind[i]) {
      case PairKind::TwoBodies:
        applyPercussion<true>(h, i, p);
        break;
      case PairKind::OneBody:
        applyPercussion<false>(h, i, p);
        break;
      case PairKind::Passive:
        break;
    }
  }
};

struct SorFullKernel {
  GRAIN_SOLVER_INLINE void operator()(Hot& h, std::size_t i) const {
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
};

struct NormalKernel {
  GRAIN_SOLVER_INLINE void operator()(Hot& h, std::size_t i) const {
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
};

struct TangentialKernel {
  GRAIN_SOLVER_INLINE void operator()(Hot& h, std::size_t i) const {
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
};

/// One SOR sweep over the contacts [begin, end) in order.
template <class Kernel>
GRAIN_SOLVER_FLATTEN void sweepRange(Hot& h, std::size_t begin, std::size_t end) {
  const Kernel kernel;
  for (std::size_t i = begin; i < end; ++i) {
    kernel(h, i);
  }
}

/// SorContact sweep over the contacts [begin, end), De Saxce's or Alart-Curnier's prox.
void sweepSorContactRange(Hot& h, bool deSaxce, std::size_t begin, std::size_t end) {
  if (deSaxce) {
    sweepRange<SorContactKernel<UcfSubMethod::DeSaxce>>(h, begin, end);
  } else {
    sweepRange<SorContactKernel<UcfSubMethod::AlartCurnier>>(h, begin, end);
  }
}

/// JOR: all proxes from the same velocities, then all velocity updates (eqs. 8.34, 8.35).
template <UcfSubMethod kSub>
GRAIN_SOLVER_FLATTEN void sweepJor(Hot& h) {
  for (std::size_t i = 0; i < h.contacts; ++i) {
    const PairKind kind = h.kind[i];
    if (kind == PairKind::Passive) {
      h.increment[i].setZero();
      continue;
    }
    const Vec3 xi =
        (kind == PairKind::TwoBodies ? contactVelocity<true>(h, i) : contactVelocity<false>(h, i)) +
        h.b[i];
    const Vec3 p = h.percussion[i];
    const Vec3 pNew = contactProx<kSub>(xi, p, h.law[i]);
    h.increment[i] = pNew - p;
    h.percussion[i] = pNew;
  }
  for (std::size_t i = 0; i < h.contacts; ++i) {
    switch (h.kind[i]) {
      case PairKind::TwoBodies:
        applyPercussion<true>(h, i, h.increment[i]);
        break;
      case PairKind::OneBody:
        applyPercussion<false>(h, i, h.increment[i]);
        break;
      case PairKind::Passive:
        break;
    }
  }
}

/// Per-contact updates of the SOR methods for the coloured sweeps: the same updates as the
/// serial sweeps above, one contact at a time.
/// One sweep in colour order on `threads` threads (OpenMP; the threads of GCC's runtime persist
/// between parallel regions) over contact rows stored in colour order (`h`, so that a colour is a
/// contiguous range and is read as a stream). The blocks (ContactColouring, one per thread) share
/// no simulated body, so each thread sweeps its block in ContactStorage order; the contacts of a
/// regular colour share no simulated body, so each thread updates its share of a shared colour
/// without touching what another thread reads or writes; a barrier separates the segments; a
/// single-thread segment (small colours, the overflow colour) is swept by one thread, the last
/// one after the parallel region. Every segment visits its contacts in order, so the result is
/// the same for every schedule and without threads (`parallel` false): bit for bit
/// deterministic for a given number of blocks (the thread count).
template <class Kernel>
void sweepColours(Hot& h, std::span<const detail::ColourSegment> segments,
                  std::span<const std::uint32_t> blockOffsets, int threads, bool parallel,
                  Kernel kernel) {
  std::size_t inRegion = segments.size();
  if (parallel) {
    if (!segments.empty() && !segments.back().shared) {
      --inRegion;
    }
    const detail::ColourSegment* segment = segments.data();
    const std::uint32_t* blockOffset = blockOffsets.data();
    const auto blockCount = static_cast<std::ptrdiff_t>(blockOffsets.size()) - 1;
#pragma omp parallel num_threads(threads) default(none) \
    shared(h, segment, inRegion, kernel, blockOffset, blockCount)
    {
      for (std::size_t s = 0; s < inRegion; ++s) {
        const std::ptrdiff_t begin = segment[s].begin;
        const std::ptrdiff_t end = segment[s].end;
        if (segment[s].shared && segment[s].blocks) {
          // One block per thread, each in ContactStorage order.
#pragma omp for schedule(static, 1)
          for (std::ptrdiff_t b = 0; b < blockCount; ++b) {
            for (std::uint32_t j = blockOffset[b]; j < blockOffset[b + 1]; ++j) {
              kernel(h, j);
            }
          }
        } else if (segment[s].shared) {
#pragma omp for schedule(static)
          for (std::ptrdiff_t j = begin; j < end; ++j) {
            kernel(h, static_cast<std::size_t>(j));
          }
        } else {
#pragma omp single
          for (std::ptrdiff_t j = begin; j < end; ++j) {
            kernel(h, static_cast<std::size_t>(j));
          }
        }
      }
    }
  } else {
    inRegion = 0;
  }
  for (std::size_t s = inRegion; s < segments.size(); ++s) {
    for (std::size_t j = segments[s].begin; j < segments[s].end; ++j) {
      kernel(h, j);
    }
  }
}

Hot makeHot(SolverContacts& c, SolverBodies& b, std::vector<Vec3>& percussion) {
  return Hot{c.kind.data(),     c.bodyA.data(), c.bodyB.data(),    c.frame.data(),
             c.jacA.data(),     c.jacB.data(),  c.dOmegaA.data(),  c.dOmegaB.data(),
             c.b.data(),        c.law.data(),   percussion.data(), c.increment.data(),
             b.velocity.data(), b.omega.data(), b.invMass.data(),  c.size()};
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

}  // namespace

void checkRollingResistanceSupported(const InclusionSolverSettings& settings,
                                     const ContactParameterMap& parameters) {
  if ((settings.localMethod || settings.method != SolverMethod::SorContact) &&
      parameters.hasRollingResistance()) {
    throw Error(kMuRollingNeedsSorContact);
  }
}

ContactSolver::ContactSolver(const InclusionSolverSettings& settings) : settings_(settings) {
  validate(settings_);
  const std::size_t n = settings_.reserveContacts;
  percussion_.reserve(n);
  auto& c = solverContacts_;
  c.kind.reserve(n);
  c.bodyA.reserve(n);
  c.bodyB.reserve(n);
  c.frame.reserve(n);
  c.jacA.reserve(n);
  c.jacB.reserve(n);
  c.dOmegaA.reserve(n);
  c.dOmegaB.reserve(n);
  c.b.reserve(n);
  c.law.reserve(n);
}

void ContactSolver::setupBodies(const BodyStorage& bodies, const ContactProblem& problem) {
  detail::setupSolverBodies(bodies, problem, solverBodies_, detail::SplitMass::Split,
                            passThreads(bodies.size()));
}

void ContactSolver::storeVelocities(BodyStorage& bodies) const {
  const SolverBodies& sb = solverBodies_;
  auto& v = bodies.velocities();
  auto& w = bodies.omegasBody();
  auto store = [&](std::size_t k) {
    const std::size_t i = sb.storageIndex[k];
    v[i] = sb.velocity[k];
    w[i] = bodies.orientations()[i].toRotationMatrix().transpose() * sb.omega[k];
  };
  detail::forEachItem(sb.size(), passThreads(sb.size()), store);
}

void ContactSolver::setupContacts(const BodyStorage& bodies, const ContactProblem& problem) {
  if (settings_.method == SolverMethod::Jor) {
    solverContacts_.increment.resize(problem.contacts.size());
  }
  detail::setupSolverContacts(bodies, problem, settings_, solverBodies_, solverContacts_,
                              solverRolling_, rowOf_);
}

void ContactSolver::initialPercussions(const BodyStorage& bodies, const ContactProblem& problem) {
  const ContactStorage& contacts = problem.contacts;
  percussion_.assign(contacts.size(), Vec3::Zero());
  if (!settings_.usePercussionCache) {
    return;
  }
  // A coloured solve applies the percussions later, block by block (applyColouredWarmStart), so
  // the lookup writes only each contact's own percussion and runs on the threads, each over a
  // range of the sorted keys (uncoloured solves have one thread: passThreads).
  const int threads = passThreads(contacts.size());
  detail::makePercussionCacheKeys(bodies, contacts, cacheKeys_, cacheOrdinal_, &cacheKeyScratch_,
                                  threads);
  Hot h = makeHot(solverContacts_, solverBodies_, percussion_);
  const bool apply = colouring_ == nullptr;
  auto found = [&](std::uint32_t c, const Vec3& p) {
    const std::size_t row = rowOf_.empty() ? c : rowOf_[c];
    const PairKind kind = solverContacts_.kind[row];
    if (kind == PairKind::Passive) {
      return;
    }
    // Start from an admissible percussion: P_N >= 0, ||P_T|| <= mu P_N.
    const Vec3 p0 = prox::alartCurnier(p, solverContacts_.law[row].mu);
    percussion_[c] = p0;
    if (!apply) {
      return;
    }
    // u^{E,0} = u^S + M^-1 h dt + M^-1 W P^0.
    if (kind == PairKind::TwoBodies) {
      applyPercussion<true>(h, row, p0);
    } else {
      applyPercussion<false>(h, row, p0);
    }
  };
  if (threads <= 1) {
    detail::forEachCachedPercussion(bodies, contacts, cacheKeys_, cacheOrdinal_, cache_, found);
    return;
  }
  const std::size_t nk = cacheKeys_.size();
  const auto parts = static_cast<std::size_t>(threads);
  detail::forEachItem(parts, threads, [&](std::size_t t) {
    detail::forEachCachedPercussion(bodies, contacts, cacheKeys_, cacheOrdinal_, cache_,
                                    nk * t / parts, nk * (t + 1) / parts, found);
  });
}

void ContactSolver::applyColouredWarmStart(const ContactColouring& colouring) {
  Hot h = makeHot(solverContacts_, solverBodies_, colouredPercussion_);
  sweepColours(h, segments_, colouring.blockOffsets(), static_cast<int>(settings_.threadCount),
               sharedSweeps_, WarmStartKernel{});
}

void ContactSolver::storePercussionCache(const BodyStorage& bodies, const ContactProblem& problem) {
  // The previous solve's entries were last read by initialPercussions(): rebuilt in place.
  detail::makePercussionCache(bodies, problem.contacts, cacheKeys_, cacheOrdinal_, percussion_,
                              cache_, passThreads(problem.contacts.size()));
}

bool ContactSolver::hasTangentialSweep(std::uint32_t iteration) const {
  if (settings_.method != SolverMethod::SorNormalTangential) {
    return true;
  }
  return (iteration + 1) % settings_.normalTangentialUpdateRatio == 0 ||
         iteration + 1 == settings_.maxIter;
}

bool ContactSolver::splitContactsFirst(const ContactProblem& problem) {
  const ContactStorage& contacts = problem.contacts;
  if (problem.splitContacts > contacts.size()) {
    return false;
  }
  if (problem.multiplicity.empty()) {
    return true;
  }
  for (std::size_t c = problem.splitContacts; c < contacts.size(); ++c) {
    if (problem.multiplicity[contacts.bodyA()[c]] > 1 ||
        problem.multiplicity[contacts.bodyB()[c]] > 1) {
      return false;
    }
  }
  return true;
}

void ContactSolver::sweepOverlapped(std::size_t splitContacts, SplitBodyExchange& split) {
  Hot h = makeHot(solverContacts_, solverBodies_, percussion_);
  const bool ds = settings_.subMethodUcf == UcfSubMethod::DeSaxce;
  sweepSorContactRange(h, ds, 0, splitContacts);
  split.startAverage(solverBodies_.velocity, solverBodies_.omega);
  sweepSorContactRange(h, ds, splitContacts, h.contacts);
  split.finishAverage(solverBodies_.velocity, solverBodies_.omega);
}

void ContactSolver::sweep(bool tangentialSweep) {
  Hot h = makeHot(solverContacts_, solverBodies_, percussion_);
  const bool ds = settings_.subMethodUcf == UcfSubMethod::DeSaxce;
  switch (settings_.method) {
    case SolverMethod::SorContact:
      sweepSorContactRange(h, ds, 0, h.contacts);
      // Rolling resistance: a pass over the contacts that have it, after the contacts' own.
      if (solverRolling_.size() > 0) {
        detail::sweepRolling(solverRolling_, solverContacts_, solverBodies_, percussion_);
      }
      break;
    case SolverMethod::SorFull:
      sweepRange<SorFullKernel>(h, 0, h.contacts);
      break;
    case SolverMethod::SorNormalTangential:
      sweepRange<NormalKernel>(h, 0, h.contacts);
      if (tangentialSweep) {
        sweepRange<TangentialKernel>(h, 0, h.contacts);
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

void ContactSolver::planColourSegments(const ContactColouring& colouring) {
  segments_.clear();
  const std::uint64_t minShared =
      static_cast<std::uint64_t>(settings_.minContactsPerThread) * settings_.threadCount;
  // The blocks first: one thread each, in parallel when they hold enough contacts.
  const std::vector<std::uint32_t>& blockOffsets = colouring.blockOffsets();
  if (blockOffsets.back() > 0) {
    const bool shared = blockOffsets.size() > 2 && blockOffsets.back() >= minShared;
    segments_.push_back({0, blockOffsets.back(), shared, true});
  }
  const std::vector<std::uint32_t>& offsets = colouring.offsets();
  for (std::uint32_t k = 0; k < ContactColouring::kColourCount; ++k) {
    const std::uint32_t begin = offsets[k];
    const std::uint32_t end = offsets[k + 1];
    if (begin == end) {
      continue;
    }
    const bool shared = k != ContactColouring::kOverflow && end - begin >= minShared;
    if (!shared && !segments_.empty() && !segments_.back().shared) {
      segments_.back().end = end;  // the colours are contiguous in order()
    } else {
      segments_.push_back({begin, end, shared});
    }
  }
  sharedSweeps_ = std::any_of(segments_.begin(), segments_.end(),
                              [](const detail::ColourSegment& s) { return s.shared; });
  // The rows the sweeps read, in colour order: row j is contact order[j].
  const std::vector<std::uint32_t>& order = colouring.order();
  rowOf_.resize(order.size());
  detail::forEachItem(order.size(), passThreads(order.size()),
                      [&](std::size_t j) { rowOf_[order[j]] = static_cast<std::uint32_t>(j); });
}

void ContactSolver::gatherColouredPercussions(const ContactColouring& colouring) {
  const std::vector<std::uint32_t>& order = colouring.order();
  colouredPercussion_.resize(order.size());
  colouredAhead_ = false;
  detail::forEachItem(order.size(), passThreads(order.size()),
                      [&](std::size_t j) { colouredPercussion_[j] = percussion_[order[j]]; });
}

void ContactSolver::sweepColoured(const ContactColouring& colouring, bool tangentialSweep) {
  Hot h = makeHot(solverContacts_, solverBodies_, colouredPercussion_);
  const int threads = static_cast<int>(settings_.threadCount);
  const std::span<const detail::ColourSegment> seg = segments_;
  const std::span<const std::uint32_t> blocks = colouring.blockOffsets();
  const bool par = sharedSweeps_;
  const bool ds = settings_.subMethodUcf == UcfSubMethod::DeSaxce;
  switch (settings_.method) {
    case SolverMethod::SorContact:
      if (ds) {
        sweepColours(h, seg, blocks, threads, par, SorContactKernel<UcfSubMethod::DeSaxce>{});
      } else {
        sweepColours(h, seg, blocks, threads, par, SorContactKernel<UcfSubMethod::AlartCurnier>{});
      }
      break;
    case SolverMethod::SorFull:
      sweepColours(h, seg, blocks, threads, par, SorFullKernel{});
      break;
    case SolverMethod::SorNormalTangential:
      sweepColours(h, seg, blocks, threads, par, NormalKernel{});
      if (tangentialSweep) {
        sweepColours(h, seg, blocks, threads, par, TangentialKernel{});
      }
      break;
    case SolverMethod::Jor:
      break;  // not coloured (solve())
  }
  // The percussions go back to ContactStorage order only when they are read there (the rolling
  // pass, the convergence tests, the measures, the end of the solve: syncPercussions()), not
  // after every sweep: one pass over all contacts on one thread.
  colouredAhead_ = true;
  if (settings_.method == SolverMethod::SorContact && solverRolling_.size() > 0) {
    syncPercussions();
    detail::sweepRolling(solverRolling_, solverContacts_, solverBodies_, percussion_);
  }
}

int ContactSolver::measureThreads() const {
  return colouring_ != nullptr ? static_cast<int>(settings_.threadCount) : 1;
}

int ContactSolver::passThreads(std::size_t items) const {
  const std::uint64_t enough =
      static_cast<std::uint64_t>(settings_.minContactsPerThread) * settings_.threadCount;
  return colouring_ != nullptr && items >= enough ? static_cast<int>(settings_.threadCount) : 1;
}

void ContactSolver::syncPercussions() {
  if (!colouredAhead_) {
    return;
  }
  const std::vector<std::uint32_t>& order = colouring_->order();
  detail::forEachItem(order.size(), passThreads(order.size()),
                      [&](std::size_t j) { percussion_[order[j]] = colouredPercussion_[j]; });
  colouredAhead_ = false;
}

void ContactSolver::saveOldState(BodyStorage& bodies) {
  if (usesMeasure()) {
    return;
  }
  if (settings_.convergenceMethod == ConvergenceMethod::InLambda) {
    solverContacts_.percussionOld.assign(percussion_.begin(), percussion_.end());
    solverRolling_.momentOld.assign(solverRolling_.moment.begin(), solverRolling_.moment.end());
    return;
  }
  // The state before the sweep goes, as it is (v and omega, both in I), to the bodies' own
  // velocity columns, which the solve does not read between its setup and storeVelocities()
  // (SolverBodies); the tests form Omega_K = A_KI omega of both states as they compare them.
  const SolverBodies& sb = solverBodies_;
  auto& v = bodies.velocities();
  auto& w = bodies.omegasBody();
  if (colouring_ != nullptr && sharedSweeps_) {
    // Threaded solve: the same copies, the bodies shared out among the threads.
    const auto count = static_cast<std::ptrdiff_t>(sb.size());
    const int teamSize = static_cast<int>(settings_.threadCount);
#pragma omp parallel for num_threads(teamSize) schedule(static)
    for (std::ptrdiff_t k = 0; k < count; ++k) {
      const std::size_t i = sb.storageIndex[k];
      v[i] = sb.velocity[k];
      w[i] = sb.omega[k];
    }
    return;
  }
  for (std::size_t k = 0; k < sb.size(); ++k) {
    const std::size_t i = sb.storageIndex[k];
    v[i] = sb.velocity[k];
    w[i] = sb.omega[k];
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
      // Rolling percussions (N m s) by the same test.
      const detail::SolverRolling& sr = solverRolling_;
      for (std::size_t j = 0; j < sr.size(); ++j) {
        for (int k = 0; k < 2; ++k) {
          if (!(std::abs(sr.moment[j][k] - sr.momentOld[j][k]) <=
                std::abs(sr.momentOld[j][k]) * rel + abs)) {
            return false;
          }
        }
      }
      return true;
    }
    case ConvergenceMethod::InVelocity:
    case ConvergenceMethod::InVelocityLocal: {
      // The state before the sweep is in the bodies' velocity columns, omega in I
      // (saveOldState); the angular velocities are compared in K.
      for (std::size_t k = 0; k < sb.size(); ++k) {
        const std::size_t i = sb.storageIndex[k];
        if (!closeEnough(sb.velocity[k], bodies.velocities()[i], rel, abs)) {
          return false;
        }
        const Mat3 rotation = bodies.orientations()[i].toRotationMatrix();  // A_IK
        if (!closeEnough(rotation.transpose() * sb.omega[k],
                         rotation.transpose() * bodies.omegasBody()[i], rel, abs)) {
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
        const Mat3 rotation = bodies.orientations()[i].toRotationMatrix();  // A_IK
        const Vec3 omegaBody = rotation.transpose() * sb.omega[k];
        const Real eNew = std::sqrt(mass[i] * sb.velocity[k].squaredNorm() +
                                    omegaBody.dot(inertia[i].cwiseProduct(omegaBody)));
        // The state before the sweep, omega in I (saveOldState).
        const Vec3& velocityOld = bodies.velocities()[i];
        const Vec3 omegaBodyOld = rotation.transpose() * bodies.omegasBody()[i];
        const Real eOld = std::sqrt(mass[i] * velocityOld.squaredNorm() +
                                    omegaBodyOld.dot(inertia[i].cwiseProduct(omegaBodyOld)));
        if (!(std::abs(eNew - eOld) <= eOld * rel + abs)) {
          return false;
        }
      }
      return true;
    }
    case ConvergenceMethod::NaturalMap:
    case ConvergenceMethod::Koziara:
      break;  // global measures: see solve()
  }
  return false;
}

detail::ContactMeasures ContactSolver::evaluateMeasures(Reducer* reducer,
                                                        detail::MeasureSums& local) const {
  local = detail::contactMeasureSums(solverContacts_, solverBodies_, percussion_, measureData_,
                                     rowOf_, measureThreads());
  if (reducer == nullptr) {
    return detail::measuresFromSums(local);
  }
  detail::MeasureSums sums = local;
  reducer->sum(sums.value);
  return detail::measuresFromSums(sums);
}

bool ContactSolver::allFinite(const BodyStorage& bodies) const {
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i) &&
        (!bodies.velocities()[i].allFinite() || !bodies.omegasBody()[i].allFinite())) {
      return false;
    }
  }
  for (const Vec3& p : percussion_) {
    if (!p.allFinite()) {
      return false;
    }
  }
  for (const detail::Vec2& m : solverRolling_.moment) {
    if (!m.allFinite()) {
      return false;
    }
  }
  return true;
}

SolverStats ContactSolver::solve(BodyStorage& bodies, const ContactProblem& problem,
                                 SplitBodyExchange* split) {
  SolverStats stats;
  const std::size_t nc = problem.contacts.size();
  checkRollingResistanceSupported(settings_, problem.parameters);
  // The coloured sweeps only with more than one thread: one thread keeps the serial order.
  colouring_ = settings_.threadCount > 1 && settings_.method != SolverMethod::Jor
                   ? problem.colouring
                   : nullptr;
  GRAIN_REQUIRE(colouring_ == nullptr || colouring_->size() == nc,
                "the contact colouring does not match the contacts");
  setupBodies(bodies, problem);
  // Every solve tells the exchange its bodies, so that all processes stay in step.
  const bool coupled = split != nullptr && split->beginSolve(bodies, solverBodies_.storageIndex);
  if (nc == 0 && !coupled) {
    percussion_.clear();
    solverRolling_.clear();
    cache_.clear();
    stats.converged = true;
    storeVelocities(bodies);
    if (settings_.isFiniteCheck) {
      stats.finite = allFinite(bodies);
    }
    return stats;
  }
  if (colouring_ != nullptr) {
    planColourSegments(*colouring_);
  } else {
    rowOf_.clear();
  }
  setupContacts(bodies, problem);
  detail::prepareContactMeasures(solverContacts_, solverBodies_, measureData_, rowOf_,
                                 passThreads(nc));
  initialPercussions(bodies, problem);
  if (colouring_ != nullptr) {
    gatherColouredPercussions(*colouring_);
    if (settings_.usePercussionCache) {
      applyColouredWarmStart(*colouring_);
    }
  }
  // A warm-started copy of a split body holds u_free + p M^-1 (its own contacts' warm start), not
  // the body's velocity: the mean over the p copies is u_free + M^-1 (all contacts' warm start).
  // Sweeping from the copies would throw most of the warm start away (hundreds of sweeps to win it
  // back on a settled pile), so the copies are averaged once before the first sweep.
  if (coupled && settings_.usePercussionCache) {
    split->average(solverBodies_.velocity, solverBodies_.omega);
  }

  Reducer* reducer = coupled ? &split->coupledReducer() : nullptr;
  const unsigned period = coupled ? std::max(1u, split->period()) : 0;
  const unsigned checkRatio = coupled ? std::max(1u, split->checkRatio()) : 1;
  // SorContact without rolling resistance sweeps the contacts in order, each once: the split
  // bodies' velocities are final once the first splitContacts contacts are swept (checked here:
  // a problem whose contacts are not so ordered averages after the whole sweep).
  const bool overlap = coupled && settings_.method == SolverMethod::SorContact &&
                       solverRolling_.size() == 0 && splitContactsFirst(problem);
  std::uint32_t averagings = 0;  // averaging exchanges so far
  detail::ContactMeasures measures;
  std::uint32_t measuredIteration = 0;  // sweeps done when `measures` was evaluated (0: never)
  std::uint32_t nextMeasure = 1;        // sweeps after which the next measure test is due
  for (std::uint32_t it = 0; it < settings_.maxIter; ++it) {
    const bool tangential = hasTangentialSweep(it);
    // Coupled processes average after every period-th sweep and after the last allowed one; as
    // they only stop right after an averaging, every solve ends on one.
    const bool averaging = coupled && ((it + 1) % period == 0 || it + 1 == settings_.maxIter);
    // SorNormalTangential: only test after iterations that include the tangential sweep. The
    // accuracy measures (about one sweep each) are tested on a geometric schedule and after the
    // last allowed sweep. Coupled processes test only right after every checkRatio-th averaging.
    const bool measureDue = !usesMeasure() || it + 1 >= nextMeasure || it + 1 == settings_.maxIter;
    const bool exchangeAllows =
        !coupled ||
        (averaging && (it + 1 == settings_.maxIter || (averagings + 1) % checkRatio == 0));
    const bool check = it + 1 >= settings_.minIter && tangential && measureDue && exchangeAllows;
    if (check) {
      syncPercussions();
      saveOldState(bodies);
    }
    if (averaging && overlap && colouring_ == nullptr) {
      sweepOverlapped(problem.splitContacts, *split);
    } else {
      if (colouring_ != nullptr) {
        sweepColoured(*colouring_, tangential);
      } else {
        sweep(tangential);
      }
      if (averaging) {
        split->average(solverBodies_.velocity, solverBodies_.omega);
      }
    }
    stats.iterations = it + 1;
    averagings += averaging ? 1 : 0;
    if (check) {
      syncPercussions();
      bool local = false;
      // After the last allowed sweep the solve ends anyway: no reduction (see the class notes).
      Reducer* decide = it + 1 < settings_.maxIter ? reducer : nullptr;
      if (usesMeasure()) {
        measures = evaluateMeasures(decide, stats.localMeasureSums);
        measuredIteration = it + 1;
        nextMeasure = it + 1 + std::max<std::uint32_t>(1, (it + 1) / 8);
        const Real error = settings_.convergenceMethod == ConvergenceMethod::Koziara
                               ? measures.koziara
                               : measures.naturalMap;
        local = error <= settings_.relTol;
      } else {
        local = locallyConverged(bodies);
      }
      // A measure is already the coupled processes' (their sums reduced), the same bits on every
      // one of them: its test needs no second reduction. The velocity tests are local.
      const bool global = decide != nullptr && !usesMeasure() ? decide->allTrue(local) : local;
      if (global) {
        stats.converged = true;
        break;
      }
    }
  }
  syncPercussions();
  if (measuredIteration != stats.iterations) {
    measures = evaluateMeasures(nullptr, stats.localMeasureSums);
  }
  stats.naturalMapError = measures.naturalMap;
  stats.koziaraError = measures.koziara;
  storeVelocities(bodies);
  if (settings_.isFiniteCheck) {
    stats.finite = allFinite(bodies);
  }
  if (settings_.usePercussionCache) {
    storePercussionCache(bodies, problem);
  }
  return stats;
}

}  // namespace grain
