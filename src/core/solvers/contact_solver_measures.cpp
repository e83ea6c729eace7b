// SPDX-License-Identifier: MIT
// Accuracy measures of ContactSolver iterates, computed from the solver's own per-contact data
// (kept out of contact_solver.cpp so that the sweep kernels there stay small and inlined).
#include <cmath>

#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/solver_data.hpp>

namespace grain::detail {

namespace {

/// gamma_i = W_i^T u for the solver bodies' velocities (see ContactSolver); 0 for passive ones.
Vec3 contactVelocity(const SolverContacts& c, const SolverBodies& b, std::size_t i) {
  switch (c.kind[i]) {
    case PairKind::TwoBodies: {
      const std::uint32_t a = c.bodyA[i];
      const std::uint32_t bb = c.bodyB[i];
      return c.frame[i].transpose() * (b.velocity[bb] - b.velocity[a]) +
             c.jacB[i].transpose() * b.omega[bb] - c.jacA[i].transpose() * b.omega[a];
    }
    case PairKind::OneBody: {
      const std::uint32_t bb = c.bodyB[i];
      return c.frame[i].transpose() * b.velocity[bb] + c.jacB[i].transpose() * b.omega[bb];
    }
    case PairKind::Passive:
      break;
  }
  return Vec3::Zero();
}

/// D P / dt of a UCFD contact (0 for hard contacts).
Vec3 compliance(const ContactLaw& law, const Vec3& p) {
  return Vec3(law.dampN * p.x(), law.dampT * p.y(), law.dampT * p.z());
}

}  // namespace

void prepareContactMeasures(const SolverContacts& c, const SolverBodies& b,
                            ContactMeasureData& data) {
  const std::size_t n = c.size();
  data.q.resize(n);
  data.blockInverse.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (c.kind[i] == PairKind::Passive) {
      // As assembleLocalProblem(): W_ii = I, q_i = 0, so r_i = 0 = u_i.
      data.q[i].setZero();
      data.blockInverse[i].setIdentity();
      continue;
    }
    data.q[i] = contactVelocity(c, b, i) + c.b[i];
    // G_ii = sum_B m_B^-1 I + J_B^T Theta_B^-1 J_B (the frame of a one-body contact is signed,
    // which leaves frame^T frame = I and J^T Theta^-1 J unchanged).
    const ContactLaw& law = c.law[i];
    Mat3 g = c.jacB[i].transpose() * c.dOmegaB[i];
    Real invMass = b.invMass[c.bodyB[i]];
    if (c.kind[i] == PairKind::TwoBodies) {
      g += c.jacA[i].transpose() * c.dOmegaA[i];
      invMass += b.invMass[c.bodyA[i]];
    }
    g.diagonal() += Vec3(invMass + law.dampN, invMass + law.dampT, invMass + law.dampT);
    data.blockInverse[i] = (0.5 * (g + g.transpose())).inverse();
  }
}

MeasureSums contactMeasureSums(const SolverContacts& c, const SolverBodies& b,
                               const std::vector<Vec3>& percussion,
                               const ContactMeasureData& data) {
  MeasureSums s;
  auto& v = s.value;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c.kind[i] == PairKind::Passive) {
      continue;
    }
    const Vec3& r = percussion[i];
    const Vec3 u = contactVelocity(c, b, i) + c.b[i] + compliance(c.law[i], r);
    const Vec3 e = naturalMapResidual(r, u, c.law[i].mu);
    const Vec3& q = data.q[i];
    const Mat3& wInv = data.blockInverse[i];
    v[MeasureSums::Residual2] += e.squaredNorm();
    v[MeasureSums::R2] += r.squaredNorm();
    v[MeasureSums::U2] += u.squaredNorm();
    v[MeasureSums::Q2] += q.squaredNorm();
    v[MeasureSums::KoziaraNumerator] += e.dot(wInv * e);
    v[MeasureSums::KoziaraDenominator] += q.dot(wInv * q);
  }
  return s;
}

ContactMeasures measuresFromSums(const MeasureSums& sums) {
  const auto& v = sums.value;
  ContactMeasures m;
  m.naturalMap =
      naturalMapError(std::sqrt(v[MeasureSums::Residual2]), std::sqrt(v[MeasureSums::Q2]),
                      std::sqrt(v[MeasureSums::R2]), std::sqrt(v[MeasureSums::U2]));
  m.koziara = koziaraError(v[MeasureSums::KoziaraNumerator], v[MeasureSums::KoziaraDenominator]);
  if (!std::isfinite(m.koziara)) {
    m.koziara = std::numeric_limits<Real>::infinity();
  }
  return m;
}

}  // namespace grain::detail
