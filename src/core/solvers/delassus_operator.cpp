// SPDX-License-Identifier: MIT
#include <array>
#include <string>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/contact_rows.hpp>
#include <grain/core/solvers/delassus_operator.hpp>
#include <grain/core/timestepping/exchange.hpp>

namespace grain {

using detail::PairKind;

void DelassusOperator::bind(const detail::SolverContacts& contacts,
                            const detail::SolverBodies& bodies) {
  contacts_ = &contacts;
  bodies_ = &bodies;
  linear_.resize(bodies.size());
  angular_.resize(bodies.size());
}

void DelassusOperator::scatter(const VecX& x) {
  const detail::SolverContacts& c = *contacts_;
  const std::size_t n = c.size();
  GRAIN_REQUIRE(x.size() == static_cast<Eigen::Index>(3 * n),
                "DelassusOperator: x must have 3 entries per contact, got " +
                    std::to_string(x.size()) + " for " + std::to_string(n) + " contacts");
  for (std::size_t k = 0; k < linear_.size(); ++k) {
    linear_[k].setZero();
    angular_[k].setZero();
  }
  const PairKind* kind = c.kind.data();
  const std::uint32_t* bodyA = c.bodyA.data();
  const std::uint32_t* bodyB = c.bodyB.data();
  const Mat3* frame = c.frame.data();
  const Mat3* jacA = c.jacA.data();
  const Mat3* jacB = c.jacB.data();
  Vec3* lin = linear_.data();
  Vec3* ang = angular_.data();
  const Real* xp = x.data();
  for (std::size_t i = 0; i < n; ++i) {
    if (kind[i] == PairKind::Passive) {
      continue;
    }
    const Eigen::Map<const Vec3> xi(xp + 3 * i);
    const Vec3 f = frame[i] * xi;
    const std::uint32_t b = bodyB[i];
    lin[b] += f;
    ang[b].noalias() += jacB[i] * xi;
    if (kind[i] == PairKind::TwoBodies) {
      const std::uint32_t a = bodyA[i];
      lin[a] -= f;
      ang[a].noalias() -= jacA[i] * xi;
    }
  }
}

void DelassusOperator::applyInverseMass() {
  const detail::SolverBodies& b = *bodies_;
  for (std::size_t k = 0; k < linear_.size(); ++k) {
    linear_[k] *= b.invMass[k];
    angular_[k] = b.invInertia[k] * angular_[k];
  }
}

void DelassusOperator::gather(const VecX& x, VecX& y) const {
  const detail::SolverContacts& c = *contacts_;
  const std::size_t n = c.size();
  y.resize(static_cast<Eigen::Index>(3 * n));
  const PairKind* kind = c.kind.data();
  const std::uint32_t* bodyA = c.bodyA.data();
  const std::uint32_t* bodyB = c.bodyB.data();
  const Mat3* frame = c.frame.data();
  const Mat3* jacA = c.jacA.data();
  const Mat3* jacB = c.jacB.data();
  const detail::ContactLaw* law = c.law.data();
  const Vec3* dv = linear_.data();
  const Vec3* dw = angular_.data();
  const Real* xp = x.data();
  Real* yp = y.data();
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Map<const Vec3> xi(xp + 3 * i);
    Eigen::Map<Vec3> yi(yp + 3 * i);
    if (kind[i] == PairKind::Passive) {
      yi = xi;
      continue;
    }
    const std::uint32_t b = bodyB[i];
    Vec3 v = frame[i].transpose() * dv[b] + jacB[i].transpose() * dw[b];
    if (kind[i] == PairKind::TwoBodies) {
      const std::uint32_t a = bodyA[i];
      v -= frame[i].transpose() * dv[a] + jacA[i].transpose() * dw[a];
    }
    yi = v + Vec3(law[i].dampN * xi.x(), law[i].dampT * xi.y(), law[i].dampT * xi.z());
  }
}

Mat3 DelassusOperator::diagonalBlock(std::size_t i) const {
  return detail::diagonalBlock(*contacts_, *bodies_, i);
}

Real reducedSum(Real local, Reducer* reducer) {
  std::array<Real, 1> s{local};
  if (reducer != nullptr) {
    reducer->sum(s);
  }
  return s[0];
}

}  // namespace grain
