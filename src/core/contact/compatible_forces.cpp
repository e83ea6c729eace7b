// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>

#include <grain/core/common/error.hpp>
#include <grain/core/contact/compatible_forces.hpp>

namespace grain {

namespace {

/// Elastic force k c^e of an overlap c (0 in tension).
inline Real lawForce(Real k, Real c, Real e) {
  if (c <= 0.0) {
    return 0.0;
  }
  return e == 1.0 ? k * c : k * std::pow(c, e);
}

/// Newton weight e k c^(e-1); for e = 1 contacts that just touch (c = 0) count as active.
inline Real lawSlope(Real k, Real c, Real e) {
  if (e == 1.0) {
    return c >= 0.0 ? k : 0.0;
  }
  return c > 0.0 ? e * k * std::pow(c, e - 1.0) : 0.0;
}

}  // namespace

void contactRelativeStiffness(const BodyStorage& bodies, const ContactStorage& contacts,
                              const ContactParameterMap& parameters, std::vector<Real>& stiffness) {
  stiffness.resize(contacts.size());
  const auto& materials = bodies.materials();
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    stiffness[i] = parameters.get(materials[contacts.bodyA()[i]], materials[contacts.bodyB()[i]])
                       .relativeStiffness;
  }
}

void CompatibleForceSolver::overlaps(const Eigen::VectorXd& x, Eigen::VectorXd& c) const {
  const std::size_t n = k_.size();
  for (std::size_t i = 0; i < n; ++i) {
    Real g = 0.0;  // J_i x: gap change (m), positive when opening
    if (dofA_[i] >= 0) {
      const auto a = x.segment<6>(dofA_[i]);
      g += jA_[i].dot(a.head<3>()) + jRotA_[i].dot(a.tail<3>());
    }
    if (dofB_[i] >= 0) {
      const auto b = x.segment<6>(dofB_[i]);
      g += jB_[i].dot(b.head<3>()) + jRotB_[i].dot(b.tail<3>());
    }
    c[static_cast<Eigen::Index>(i)] = -g;
  }
}

void CompatibleForceSolver::residual(const Eigen::VectorXd& c, Real exponent,
                                     Eigen::VectorXd& r) const {
  r = load_;
  const std::size_t n = k_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Real f = lawForce(k_[i], c[static_cast<Eigen::Index>(i)], exponent);
    if (f == 0.0) {
      continue;
    }
    if (dofA_[i] >= 0) {
      auto a = r.segment<6>(dofA_[i]);
      a.head<3>() -= f * jA_[i];
      a.tail<3>() -= f * jRotA_[i];
    }
    if (dofB_[i] >= 0) {
      auto b = r.segment<6>(dofB_[i]);
      b.head<3>() -= f * jB_[i];
      b.tail<3>() -= f * jRotB_[i];
    }
  }
}

Real CompatibleForceSolver::potential(const Eigen::VectorXd& x, const Eigen::VectorXd& c,
                                      Real exponent) const {
  Real pi = load_.dot(x);
  const std::size_t n = k_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Real ci = c[static_cast<Eigen::Index>(i)];
    if (ci > 0.0) {
      pi += lawForce(k_[i], ci, exponent) * ci / (exponent + 1.0);
    }
  }
  return pi;
}

CompatibleForceSolver::Phase CompatibleForceSolver::newton(Real exponent,
                                                           const CompatibleForceSettings& settings,
                                                           Real loadNorm) {
  Phase phase;
  const Eigen::Index dofs = x_.size();
  const std::size_t n = k_.size();
  overlaps(x_, c_);
  residual(c_, exponent, r_);
  bool patternAnalysed = false;
  // Best iterate so far; the iteration stops when it has not halved the best residual for
  // kStagnation iterations (contacts that carry almost nothing switching in and out at the
  // round-off level of the factorisation) and returns the best iterate.
  constexpr std::uint32_t kStagnation = 8;
  Real bestNorm = std::numeric_limits<Real>::infinity();
  std::uint32_t sinceProgress = 0;
  for (;;) {
    phase.residualNorm = r_.norm();
    if (phase.residualNorm <= settings.tolerance * loadNorm) {
      phase.converged = true;
      return phase;
    }
    if (phase.residualNorm < 0.5 * bestNorm) {
      sinceProgress = 0;
    } else {
      ++sinceProgress;
    }
    if (phase.residualNorm < bestNorm) {
      bestNorm = phase.residualNorm;
      xBest_ = x_;
    }
    if (phase.iterations >= settings.maxIterations || sinceProgress >= kStagnation) {
      if (bestNorm < phase.residualNorm) {
        x_ = xBest_;
        overlaps(x_, c_);
        residual(c_, exponent, r_);
        phase.residualNorm = bestNorm;
      }
      return phase;
    }
    ++phase.iterations;

    // Newton matrix H = sum_i J_i^T s_i J_i (+ shift); all contacts enter (s_i may be 0) so
    // that the sparsity pattern is the same in every iteration.
    triplets_.clear();
    Eigen::Matrix<Real, 12, 1> j;
    for (std::size_t i = 0; i < n; ++i) {
      const Real s = lawSlope(k_[i], c_[static_cast<Eigen::Index>(i)], exponent);
      std::int64_t off[2] = {dofA_[i], dofB_[i]};
      j.head<3>() = jA_[i];
      j.segment<3>(3) = jRotA_[i];
      j.segment<3>(6) = jB_[i];
      j.tail<3>() = jRotB_[i];
      for (int p = 0; p < 2; ++p) {
        if (off[p] < 0) {
          continue;
        }
        for (int q = 0; q < 2; ++q) {
          if (off[q] < 0) {
            continue;
          }
          for (int a = 0; a < 6; ++a) {
            for (int b = 0; b < 6; ++b) {
              triplets_.emplace_back(off[p] + a, off[q] + b, s * j[6 * p + a] * j[6 * q + b]);
            }
          }
        }
      }
    }
    h_.resize(dofs, dofs);
    h_.setFromTriplets(triplets_.begin(), triplets_.end());
    // Diagonal shift: shift * (H_jj + largest diagonal of the same kind of coordinate).
    Real maxDiag[2] = {0.0, 0.0};
    for (Eigen::Index d = 0; d < dofs; ++d) {
      maxDiag[(d % 6) / 3] = std::max(maxDiag[(d % 6) / 3], h_.coeff(d, d));
    }
    // The rotational scale is at least the translational one times the largest lever arm
    // squared. A rotation whose contacts are central up to round-off (spheres: r x n ~ 1e-16 r)
    // has a diagonal of order 1e-32 k r^2; a shift relative to that alone would leave it free,
    // Newton would solve the round-off torques of the load exactly with huge rotations, and
    // those would fix every force (the solver's values came back unchanged).
    maxDiag[1] = std::max(maxDiag[1], maxDiag[0] * leverArmSq_);
    for (int kind = 0; kind < 2; ++kind) {
      if (maxDiag[kind] <= 0.0) {
        maxDiag[kind] = std::max(maxDiag[0], maxDiag[1]);
      }
      if (maxDiag[kind] <= 0.0) {
        maxDiag[kind] = 1.0;
      }
    }
    for (Eigen::Index d = 0; d < dofs; ++d) {
      h_.coeffRef(d, d) += settings.shift * (h_.coeff(d, d) + maxDiag[(d % 6) / 3]);
    }
    if (!patternAnalysed) {
      ldlt_.analyzePattern(h_);
      patternAnalysed = true;
    }
    ldlt_.factorize(h_);
    if (ldlt_.info() != Eigen::Success) {
      return phase;
    }
    dx_ = -ldlt_.solve(r_);

    // Backtracking: accept when Pi decreases (Armijo) or the residual norm does.
    const Real pi0 = potential(x_, c_, exponent);
    const Real slope = r_.dot(dx_);  // directional derivative of Pi, < 0
    Real t = 1.0;
    bool accepted = false;
    for (int ls = 0; ls < 40; ++ls) {
      xTrial_ = x_ + t * dx_;
      overlaps(xTrial_, cTrial_);
      residual(cTrial_, exponent, rTrial_);
      const Real pi = potential(xTrial_, cTrial_, exponent);
      if (pi <= pi0 + 1e-4 * t * slope || rTrial_.norm() <= (1.0 - 1e-4 * t) * phase.residualNorm) {
        accepted = true;
        break;
      }
      t *= 0.5;
    }
    if (!accepted) {
      return phase;
    }
    x_.swap(xTrial_);
    c_.swap(cTrial_);
    r_.swap(rTrial_);
  }
}

CompatibleForceStats CompatibleForceSolver::solve(const BodyStorage& bodies,
                                                  const ContactStorage& contacts,
                                                  std::span<const Real> solverNormal,
                                                  std::span<const Real> stiffness,
                                                  const CompatibleForceSettings& settings,
                                                  std::vector<Real>& compatibleNormal) {
  const std::size_t n = contacts.size();
  GRAIN_REQUIRE(solverNormal.size() == n && stiffness.size() == n,
                "compatible forces: one solver value and one stiffness per contact needed");
  settings::checkBounds(settings, "compatible forces: ");

  // Coordinates: 6 per simulated body in a contact, in body index order.
  bodyDof_.assign(bodies.size(), -1);
  for (std::size_t i = 0; i < n; ++i) {
    for (const std::uint32_t b : {contacts.bodyA()[i], contacts.bodyB()[i]}) {
      if (bodies.isSimulated(b)) {
        bodyDof_[b] = 0;
      }
    }
  }
  std::int64_t dofs = 0;
  for (auto& d : bodyDof_) {
    if (d == 0) {
      d = dofs;
      dofs += 6;
    }
  }

  leverArmSq_ = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (bodies.isSimulated(contacts.bodyA()[i])) {
      leverArmSq_ = std::max(leverArmSq_, contacts.rA()[i].squaredNorm());
    }
    if (bodies.isSimulated(contacts.bodyB()[i])) {
      leverArmSq_ = std::max(leverArmSq_, contacts.rB()[i].squaredNorm());
    }
  }

  dofA_.resize(n);
  dofB_.resize(n);
  jA_.resize(n);
  jRotA_.resize(n);
  jB_.resize(n);
  jRotB_.resize(n);
  k_.resize(n);
  load_.setZero(dofs);
  for (std::size_t i = 0; i < n; ++i) {
    GRAIN_REQUIRE(std::isfinite(stiffness[i]) && stiffness[i] > 0.0,
                  "compatible forces: stiffness must be > 0");
    const Vec3& nrm = contacts.normals()[i];
    k_[i] = stiffness[i];
    dofA_[i] = bodyDof_[contacts.bodyA()[i]];
    dofB_[i] = bodyDof_[contacts.bodyB()[i]];
    jA_[i] = -nrm;
    jRotA_[i] = -contacts.rA()[i].cross(nrm);
    jB_[i] = nrm;
    jRotB_[i] = contacts.rB()[i].cross(nrm);
    const Real f = solverNormal[i];
    if (dofA_[i] >= 0) {
      load_.segment<3>(dofA_[i]) += f * jA_[i];
      load_.segment<3>(dofA_[i] + 3) += f * jRotA_[i];
    }
    if (dofB_[i] >= 0) {
      load_.segment<3>(dofB_[i]) += f * jB_[i];
      load_.segment<3>(dofB_[i] + 3) += f * jRotB_[i];
    }
  }

  CompatibleForceStats stats;
  compatibleNormal.assign(n, 0.0);
  const Real loadNorm = load_.norm();
  if (n == 0 || loadNorm == 0.0) {
    stats.converged = true;
    return stats;
  }
  x_.setZero(dofs);
  c_.resize(static_cast<Eigen::Index>(n));
  cTrial_.resize(static_cast<Eigen::Index>(n));

  // Phase 1: linear springs from x = 0. Phase 2 (e > 1): the power law from the scaled linear
  // solution, x0 = s x_lin with k (s c_max)^e = k c_max.
  Phase phase = newton(1.0, settings, loadNorm);
  stats.iterations = phase.iterations;
  if (settings.exponent != 1.0) {
    overlaps(x_, c_);
    const Real cMax = c_.maxCoeff();
    if (cMax > 0.0) {
      x_ *= std::pow(cMax, (1.0 - settings.exponent) / settings.exponent);
    }
    phase = newton(settings.exponent, settings, loadNorm);
    stats.iterations += phase.iterations;
  }
  stats.converged = phase.converged;
  stats.relativeResidual = phase.residualNorm / loadNorm;
  overlaps(x_, c_);
  for (std::size_t i = 0; i < n; ++i) {
    compatibleNormal[i] = lawForce(k_[i], c_[static_cast<Eigen::Index>(i)], settings.exponent);
    if (compatibleNormal[i] > 0.0) {
      ++stats.activeContacts;
    }
  }
  return stats;
}

CompatibleForceStats CompatibleForceSolver::solve(const BodyStorage& bodies,
                                                  const ContactStorage& contacts,
                                                  std::span<const Vec3> percussions,
                                                  std::span<const Real> stiffness,
                                                  const CompatibleForceSettings& settings,
                                                  std::vector<Vec3>& compatible) {
  std::vector<Real> normal(percussions.size());
  for (std::size_t i = 0; i < percussions.size(); ++i) {
    normal[i] = percussions[i].x();
  }
  std::vector<Real> out;
  const CompatibleForceStats stats = solve(bodies, contacts, normal, stiffness, settings, out);
  compatible.assign(percussions.begin(), percussions.end());
  for (std::size_t i = 0; i < compatible.size(); ++i) {
    compatible[i].x() = out[i];
  }
  return stats;
}

}  // namespace grain
