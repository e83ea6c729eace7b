// SPDX-License-Identifier: MIT
// Rolling resistance of the velocity prox solver (ContactParameter::muRolling, SorContact only):
// setup of SolverRolling and the pass of rolling updates after each SORContact sweep. Kept out of
// contact_solver.cpp so that the contact kernels there compile as before (GCC inlines less in
// that translation unit once it grows).
#include <algorithm>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/solvers/prox.hpp>
#include <grain/core/solvers/solver_data.hpp>

namespace grain::detail {

namespace {

/// Angular velocity (I frame, rad/s) of a non-simulated body: 0 for a static body, the stored
/// one for an animated body.
Vec3 passiveOmega(const BodyStorage& bodies, std::size_t i) {
  if (bodies.motions()[i] == BodyMotion::Static) {
    return Vec3::Zero();
  }
  return bodies.orientations()[i].toRotationMatrix() * bodies.omegasBody()[i];
}

}  // namespace

void addRollingContact(SolverRolling& rolling, const SolverContacts& contacts,
                       const SolverBodies& solverBodies, const BodyStorage& bodies, std::size_t c,
                       std::size_t row, std::uint32_t a, std::uint32_t b, const Vec3& rA,
                       const Vec3& rB, const Mat3& frame, Real muRolling, Real alpha) {
  const bool simA = bodies.isSimulated(a);
  const bool simB = bodies.isSimulated(b);
  // Tangent columns as stored (negated, like the frame, when the single simulated body is A), so
  // that T^T omega of the single body is the relative rolling velocity in the contact frame.
  Mat32 t;
  t.col(0) = contacts.frame[row].col(1);
  t.col(1) = contacts.frame[row].col(2);
  auto response = [&](std::uint32_t i) {
    const SymMat3& inv = solverBodies.invInertia[solverBodies.solverIndexOf[i]];
    Mat32 d;
    d.col(0) = inv * t.col(0);
    d.col(1) = inv * t.col(1);
    return d;
  };
  Mat32 dA = Mat32::Zero();
  Mat32 dB = Mat32::Zero();
  Real radius = 0.0;  // R* (m)
  if (simA && simB) {
    dA = response(a);
    dB = response(b);
    const Real ra = rA.norm();
    const Real rb = rB.norm();
    radius = ra + rb > 0.0 ? ra * rb / (ra + rb) : 0.0;
  } else {
    dB = response(simB ? b : a);
    radius = simB ? rB.norm() : rA.norm();
  }
  // Diagonal of T^T (Theta_a^-1 + Theta_b^-1) T.
  const Real w11 = t.col(0).dot(dA.col(0) + dB.col(0));
  const Real w22 = t.col(1).dot(dA.col(1) + dB.col(1));
  const Real wMax = std::max(w11, w22);
  // T^T (omega_B - omega_A) of the non-simulated partners in the unsigned frame (the
  // percussions are in the contact frame A_IC whichever body is simulated).
  Vec3 omegaPassive = Vec3::Zero();
  if (!simB) {
    omegaPassive += passiveOmega(bodies, b);
  }
  if (!simA) {
    omegaPassive -= passiveOmega(bodies, a);
  }
  rolling.contact.push_back(static_cast<std::uint32_t>(c));
  rolling.row.push_back(static_cast<std::uint32_t>(row));
  rolling.dOmegaA.push_back(dA);
  rolling.dOmegaB.push_back(dB);
  rolling.b.push_back(Vec2(frame.col(1).dot(omegaPassive), frame.col(2).dot(omegaPassive)));
  rolling.rInv.push_back(wMax > 0.0 ? alpha / wMax : 0.0);
  rolling.bound.push_back(muRolling * radius);
  rolling.moment.push_back(Vec2::Zero());
}

void sweepRolling(SolverRolling& rolling, const SolverContacts& contacts, SolverBodies& bodies,
                  const std::vector<Vec3>& percussion) {
  Vec3* omega = bodies.omega.data();
  for (std::size_t j = 0; j < rolling.size(); ++j) {
    const std::uint32_t c = rolling.contact[j];
    const std::uint32_t i = rolling.row[j];
    const bool two = contacts.kind[i] == PairKind::TwoBodies;
    const std::uint32_t bb = contacts.bodyB[i];
    Vec3 w = omega[bb];
    if (two) {
      w -= omega[contacts.bodyA[i]];
    }
    const Mat3& frame = contacts.frame[i];
    const Vec2 m = rolling.moment[j];
    const Real rInv = rolling.rInv[j];
    Real x1 = m.x() - rInv * (frame.col(1).dot(w) + rolling.b[j].x());
    Real x2 = m.y() - rInv * (frame.col(2).dot(w) + rolling.b[j].y());
    prox::projectDisk(x1, x2, rolling.bound[j] * percussion[c].x());
    const Vec2 dM(x1 - m.x(), x2 - m.y());
    rolling.moment[j] = Vec2(x1, x2);
    omega[bb] += rolling.dOmegaB[j] * dM;
    if (two) {
      omega[contacts.bodyA[i]] -= rolling.dOmegaA[j] * dM;
    }
  }
}

}  // namespace grain::detail
