// SPDX-License-Identifier: MIT
#include "schwarz_preconditioner.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <Eigen/Cholesky>

#include <grain/core/solvers/contact_rows.hpp>

namespace grain::detail {

namespace {

/// A factorisation is kept if its smallest pivot is at least kMinPivot times the block's largest
/// diagonal entry (a condition number within reach of double precision); else the diagonal is
/// shifted, relative to that entry, from kMinShift, times 100 up to kMaxShift.
constexpr Real kMinPivot = 1e-14;
constexpr Real kMinShift = 1e-12;
constexpr Real kMaxShift = 1e-6;

/// One side of a contact: its simulated body, sign (-1 on the A side), rotational Jacobian J and
/// velocity response Theta^-1 J.
struct Side {
  std::uint32_t body;
  Real sign;
  const Mat3* jac;
  const Mat3* dOmega;
};

/// The sides of a non-passive contact (B first); returns how many (1 or 2).
std::size_t sidesOf(const SolverContacts& c, std::size_t i, std::array<Side, 2>& sides) {
  sides[0] = {c.bodyB[i], 1.0, &c.jacB[i], &c.dOmegaB[i]};
  if (c.kind[i] != PairKind::TwoBodies) {
    return 1;
  }
  sides[1] = {c.bodyA[i], -1.0, &c.jacA[i], &c.dOmegaA[i]};
  return 2;
}

}  // namespace

Mat3 couplingBlock(const SolverContacts& c, const SolverBodies& b, std::size_t i, std::size_t j) {
  Mat3 w = Mat3::Zero();
  if (c.kind[i] == PairKind::Passive || c.kind[j] == PairKind::Passive) {
    return w;
  }
  std::array<Side, 2> si{};
  std::array<Side, 2> sj{};
  const std::size_t ni = sidesOf(c, i, si);
  const std::size_t nj = sidesOf(c, j, sj);
  for (std::size_t p = 0; p < ni; ++p) {
    for (std::size_t q = 0; q < nj; ++q) {
      const std::uint32_t k = si[p].body;
      if (k == sj[q].body) {
        w += bodyCouplingBlock(b.invMass[k], si[p].sign, c.frame[i], *si[p].jac, sj[q].sign,
                               c.frame[j], *sj[q].dOmega);
      }
    }
  }
  return w;
}

void SchwarzPreconditioner::setUp(const SolverContacts& rows, const SolverBodies& bodies) {
  const std::size_t n = rows.size();
  const std::size_t nb = bodies.size();
  // Contacts per body.
  std::vector<std::uint32_t> count(nb, 0);
  std::array<Side, 2> sides{};
  for (std::size_t i = 0; i < n; ++i) {
    if (rows.kind[i] == PairKind::Passive) {
      continue;
    }
    const std::size_t ns = sidesOf(rows, i, sides);
    for (std::size_t s = 0; s < ns; ++s) {
      ++count[sides[s].body];
    }
  }
  // One subdomain per body with 1 to kMaxContacts contacts, in body order.
  std::vector<std::uint32_t> subdomainOf(nb, kNoSolverBody);
  begin_.assign(1, 0);
  for (std::size_t k = 0; k < nb; ++k) {
    if (count[k] > 0 && count[k] <= kMaxContacts) {
      subdomainOf[k] = static_cast<std::uint32_t>(begin_.size() - 1);
      begin_.push_back(begin_.back() + count[k]);
    }
  }
  // Members in contact order.
  members_.resize(begin_.back());
  std::vector<std::uint32_t> cursor(begin_.begin(), begin_.end() - 1);
  std::vector<std::uint32_t> holders(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (rows.kind[i] == PairKind::Passive) {
      continue;
    }
    const std::size_t ns = sidesOf(rows, i, sides);
    for (std::size_t s = 0; s < ns; ++s) {
      const std::uint32_t d = subdomainOf[sides[s].body];
      if (d != kNoSolverBody) {
        members_[cursor[d]++] = static_cast<std::uint32_t>(i);
        ++holders[i];
      }
    }
  }
  // W_ii as the operator forms it (exact also where a frame is not orthonormal, unlike
  // detail::diagonalBlock()), so that every block is a principal block of S W S + B.
  own_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    own_[i] = couplingBlock(rows, bodies, i, i);
    own_[i].diagonal() += Vec3(rows.law[i].dampN, rows.law[i].dampT, rows.law[i].dampT);
  }
  weight_.resize(n);
  outside_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    weight_[i] = holders[i] > 0 ? 1.0 / std::sqrt(static_cast<Real>(holders[i])) : 1.0;
    if (holders[i] == 0) {
      outside_.push_back(static_cast<std::uint32_t>(i));
    }
  }
  outsideInverse_.resize(outside_.size());
  // The couplings of each subdomain, and the storage of the inverses.
  const std::size_t nd = subdomains();
  couplingBegin_.resize(nd + 1);
  inverseBegin_.resize(nd + 1);
  couplingBegin_[0] = 0;
  inverseBegin_[0] = 0;
  for (std::size_t d = 0; d < nd; ++d) {
    const std::size_t k = begin_[d + 1] - begin_[d];
    couplingBegin_[d + 1] = couplingBegin_[d] + k * (k - 1) / 2;
    inverseBegin_[d + 1] = inverseBegin_[d] + 9 * k * k;
  }
  coupling_.resize(couplingBegin_[nd]);
  inverse_.resize(inverseBegin_[nd]);
  std::size_t largest = 0;
  for (std::size_t d = 0; d < nd; ++d) {
    largest = std::max<std::size_t>(largest, begin_[d + 1] - begin_[d]);
  }
  block_.resize(9 * largest * largest);
  in_.resize(static_cast<Eigen::Index>(3 * largest));
  out_.resize(static_cast<Eigen::Index>(3 * largest));
  for (std::size_t d = 0; d < nd; ++d) {
    const std::uint32_t* m = members_.data() + begin_[d];
    const std::size_t k = begin_[d + 1] - begin_[d];
    std::size_t at = couplingBegin_[d];
    for (std::size_t p = 0; p < k; ++p) {
      for (std::size_t q = p + 1; q < k; ++q) {
        coupling_[at++] = couplingBlock(rows, bodies, m[p], m[q]);
      }
    }
  }
}

void SchwarzPreconditioner::factorise(const VecX& sc, std::span<const Mat3> barrier,
                                      std::span<const Mat3> inverse) {
  for (std::size_t o = 0; o < outside_.size(); ++o) {
    outsideInverse_[o] = inverse[outside_[o]];
  }
  fallbacks_ = 0;
  shifted_ = 0;
  const std::size_t nd = subdomains();
  for (std::size_t d = 0; d < nd; ++d) {
    const std::uint32_t* m = members_.data() + begin_[d];
    const auto k = static_cast<Eigen::Index>(begin_[d + 1] - begin_[d]);
    Eigen::Map<Eigen::MatrixXd> block(block_.data(), 3 * k, 3 * k);
    // The block with `shift` added to its diagonal.
    auto fill = [&](Real shift) {
      const Mat3* w = coupling_.data() + couplingBegin_[d];
      for (Eigen::Index p = 0; p < k; ++p) {
        const Vec3 sp = sc.segment<3>(3 * static_cast<Eigen::Index>(m[p]));
        block.block<3, 3>(3 * p, 3 * p) = sp.asDiagonal() * own_[m[p]] * sp.asDiagonal() +
                                          barrier[m[p]] + shift * Mat3::Identity();
        for (Eigen::Index q = p + 1; q < k; ++q) {
          const Vec3 sq = sc.segment<3>(3 * static_cast<Eigen::Index>(m[q]));
          const Mat3 a = sp.asDiagonal() * (*w++) * sq.asDiagonal();
          block.block<3, 3>(3 * p, 3 * q) = a;
          block.block<3, 3>(3 * q, 3 * p) = a.transpose();
        }
      }
    };
    fill(0.0);
    const Real scale = block.diagonal().cwiseAbs().maxCoeff();
    Eigen::Map<Eigen::MatrixXd> inv(inverse_.data() + inverseBegin_[d], 3 * k, 3 * k);
    bool ok = false;
    // Tries 0, then kMinShift scale, ..., kMaxShift scale (none if scale is 0 or not finite: the
    // block then falls back to block-Jacobi).
    const bool finiteScale = std::isfinite(scale) && scale > 0.0;
    for (Real shift = 0.0; !ok && finiteScale && shift <= kMaxShift * scale;
         shift = shift > 0.0 ? 100.0 * shift : kMinShift * scale) {
      if (shift > 0.0) {
        fill(shift);
        ++shifted_;
      }
      const Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(block);  // in place
      if (llt.info() != Eigen::Success ||
          !(block.diagonal().minCoeff() >= std::sqrt(kMinPivot * scale))) {
        continue;
      }
      inv.setIdentity();
      llt.solveInPlace(inv);
      // Exactly symmetric, as CG needs.
      for (Eigen::Index c = 0; c < 3 * k; ++c) {
        for (Eigen::Index r = c + 1; r < 3 * k; ++r) {
          const Real v = 0.5 * (inv(r, c) + inv(c, r));
          inv(r, c) = v;
          inv(c, r) = v;
        }
      }
      ok = inv.allFinite();
    }
    if (!ok) {
      ++fallbacks_;
      inv.setZero();
      for (Eigen::Index p = 0; p < k; ++p) {
        inv.block<3, 3>(3 * p, 3 * p) = inverse[m[p]];
      }
    }
  }
}

void SchwarzPreconditioner::apply(const VecX& v, VecX& out) {
  out.setZero(v.size());
  const std::size_t nd = subdomains();
  const Real* vp = v.data();
  Real* op = out.data();
  for (std::size_t d = 0; d < nd; ++d) {
    const std::uint32_t* m = members_.data() + begin_[d];
    const auto k = static_cast<Eigen::Index>(begin_[d + 1] - begin_[d]);
    for (Eigen::Index p = 0; p < k; ++p) {
      in_.segment<3>(3 * p) = weight_[m[p]] * Eigen::Map<const Vec3>(vp + 3 * m[p]);
    }
    const Eigen::Map<const Eigen::MatrixXd> inv(inverse_.data() + inverseBegin_[d], 3 * k, 3 * k);
    out_.head(3 * k).noalias() = inv * in_.head(3 * k);
    for (Eigen::Index p = 0; p < k; ++p) {
      Eigen::Map<Vec3>(op + 3 * m[p]) += weight_[m[p]] * out_.segment<3>(3 * p);
    }
  }
  for (std::size_t o = 0; o < outside_.size(); ++o) {
    const std::size_t i = outside_[o];
    Eigen::Map<Vec3>(op + 3 * i) = outsideInverse_[o] * Eigen::Map<const Vec3>(vp + 3 * i);
  }
}

}  // namespace grain::detail
