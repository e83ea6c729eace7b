// SPDX-License-Identifier: MIT
#include <string>
#include <vector>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>

namespace grain {

namespace {

/// One appearance of a simulated body in a contact: W_i,B^T u_B = sign (A_CI v + J^T omega).
struct BodyTerm {
  std::uint32_t contact;
  Real sign;
  Mat3 frame;  // A_IC (columns n, t1, t2)
  Mat3 jac;    // J = [r x n, r x t1, r x t2]
};

/// Velocity (I) of the material point at r of body i at the start of the step, with the
/// solver's rule for non-simulated bodies (static: 0, animated: its prescribed motion).
Vec3 pointVelocity(const BodyStorage& bodies, std::size_t i, const Vec3& v, const Vec3& omegaBody,
                   const Vec3& r) {
  if (bodies.motions()[i] == BodyMotion::Static) {
    return Vec3::Zero();
  }
  const Vec3 omega = bodies.orientations()[i].toRotationMatrix() * omegaBody;
  return v + omega.cross(r);
}

}  // namespace

LocalProblem assembleLocalProblem(const BodyStorage& bodies, const ContactProblem& problem,
                                  const InclusionSolverSettings& settings) {
  const ContactStorage& contacts = problem.contacts;
  const std::size_t nb = bodies.size();
  const std::size_t nc = contacts.size();
  GRAIN_REQUIRE(problem.velocityStart.size() == nb && problem.omegaBodyStart.size() == nb,
                "ContactProblem: velocityStart/omegaBodyStart must have one entry per body");
  GRAIN_REQUIRE(std::isfinite(problem.dt) && problem.dt > 0.0, "ContactProblem: dt must be > 0");
  const Real dt = problem.dt;
  const Real driftFactor =
      settings.driftCorrectionGap ? settings.driftCorrectionGapAlpha * 2.0 / dt : 0.0;

  LocalProblem out;
  out.q.setZero(static_cast<Eigen::Index>(3 * nc));
  out.mu.setZero(static_cast<Eigen::Index>(nc));
  std::vector<std::vector<BodyTerm>> terms(nb);
  std::vector<Eigen::Triplet<Real>> triplets;
  const auto& materials = bodies.materials();

  for (std::size_t c = 0; c < nc; ++c) {
    const std::uint32_t a = contacts.bodyA()[c];
    const std::uint32_t b = contacts.bodyB()[c];
    GRAIN_REQUIRE(a < nb && b < nb && a != b,
                  "contact " + std::to_string(c) + " has invalid body indices");
    const bool simA = bodies.isSimulated(a);
    const bool simB = bodies.isSimulated(b);
    Mat3 frame;
    frame.col(0) = contacts.normals()[c];
    frame.col(1) = contacts.tangents1()[c];
    frame.col(2) = contacts.tangents2()[c];
    const Vec3& rA = contacts.rA()[c];
    const Vec3& rB = contacts.rB()[c];
    const ContactParameter& param = problem.parameters.get(materials[a], materials[b]);
    const auto k = static_cast<Eigen::Index>(3 * c);
    out.mu[static_cast<Eigen::Index>(c)] = param.mu;

    if (!simA && !simB) {
      // No dynamics: r = 0 is the unique solution of u = r.
      for (int d = 0; d < 3; ++d) {
        triplets.emplace_back(k + d, k + d, 1.0);
      }
      continue;
    }

    // Constant part b_i (as ContactSolver::setupContacts).
    auto startVelocity = [&](std::uint32_t i, const Vec3& r) -> Vec3 {
      if (bodies.isSimulated(i)) {
        const Mat3 rot = bodies.orientations()[i].toRotationMatrix();
        return problem.velocityStart[i] + (rot * problem.omegaBodyStart[i]).cross(r);
      }
      return pointVelocity(bodies, i, problem.velocityStart[i], problem.omegaBodyStart[i], r);
    };
    const Vec3 gammaStart = frame.transpose() * (startVelocity(b, rB) - startVelocity(a, rA));
    Vec3 passive = Vec3::Zero();
    if (!simB) {
      passive += pointVelocity(bodies, b, bodies.velocities()[b], bodies.omegasBody()[b], rB);
    }
    if (!simA) {
      passive -= pointVelocity(bodies, a, bodies.velocities()[a], bodies.omegasBody()[a], rA);
    }
    const Vec3 eps(param.epsilonN, param.epsilonT, param.epsilonT);
    Vec3 qc = eps.cwiseProduct(gammaStart) + frame.transpose() * passive;
    qc.x() += driftFactor * driftGap(contacts.gaps()[c], settings.driftCorrectionGapSlop);

    // Free relative velocity of the simulated bodies, and their Jacobian terms.
    auto addBody = [&](std::uint32_t i, const Vec3& r, Real sign) {
      BodyTerm t;
      t.contact = static_cast<std::uint32_t>(c);
      t.sign = sign;
      t.frame = frame;
      for (int col = 0; col < 3; ++col) {
        t.jac.col(col) = r.cross(frame.col(col));
      }
      const Vec3 omega = bodies.orientations()[i].toRotationMatrix() * bodies.omegasBody()[i];
      qc += sign * (frame.transpose() * bodies.velocities()[i] + t.jac.transpose() * omega);
      terms[i].push_back(t);
    };
    if (simA) {
      addBody(a, rA, -1.0);
    }
    if (simB) {
      addBody(b, rB, +1.0);
    }
    out.q.segment<3>(k) = qc;

    if (param.model == ContactModel::UCFD) {
      triplets.emplace_back(k, k, param.invDampingN / dt);
      triplets.emplace_back(k + 1, k + 1, param.invDampingT / dt);
      triplets.emplace_back(k + 2, k + 2, param.invDampingT / dt);
    }
  }

  // W = sum over bodies of the couplings of the contacts they share.
  for (std::size_t i = 0; i < nb; ++i) {
    const auto& list = terms[i];
    if (list.empty()) {
      continue;
    }
    const Mat3 rot = bodies.orientations()[i].toRotationMatrix();
    const Mat3 invInertia = rot * bodies.invInertiasBody()[i].asDiagonal() * rot.transpose();
    const Real invMass = bodies.invMasses()[i];
    for (const BodyTerm& ti : list) {
      for (const BodyTerm& tj : list) {
        const Mat3 block =
            ti.sign * tj.sign *
            (invMass * ti.frame.transpose() * tj.frame + ti.jac.transpose() * invInertia * tj.jac);
        const auto ri = static_cast<Eigen::Index>(3 * ti.contact);
        const auto cj = static_cast<Eigen::Index>(3 * tj.contact);
        for (int r = 0; r < 3; ++r) {
          for (int s = 0; s < 3; ++s) {
            triplets.emplace_back(ri + r, cj + s, block(r, s));
          }
        }
      }
    }
  }
  out.W.resize(static_cast<Eigen::Index>(3 * nc), static_cast<Eigen::Index>(3 * nc));
  out.W.setFromTriplets(triplets.begin(), triplets.end());
  out.title = "grain contact problem";
  return out;
}

void applyContactPercussions(BodyStorage& bodies, const ContactStorage& contacts, const VecX& r) {
  const std::size_t nc = contacts.size();
  GRAIN_REQUIRE(r.size() == static_cast<Eigen::Index>(3 * nc),
                "applyContactPercussions: r must have 3 entries per contact");
  auto& v = bodies.velocities();
  auto& w = bodies.omegasBody();
  const auto& invMass = bodies.invMasses();
  const auto& invInertia = bodies.invInertiasBody();
  const auto& orientation = bodies.orientations();
  auto apply = [&](std::uint32_t i, const Vec3& rArm, const Vec3& f) {
    v[i] += invMass[i] * f;
    const Mat3 rot = orientation[i].toRotationMatrix();
    w[i] += invInertia[i].cwiseProduct(rot.transpose() * rArm.cross(f));
  };
  for (std::size_t c = 0; c < nc; ++c) {
    const Vec3 p = r.segment<3>(static_cast<Eigen::Index>(3 * c));
    const Vec3 f = contacts.normals()[c] * p.x() + contacts.tangents1()[c] * p.y() +
                   contacts.tangents2()[c] * p.z();
    const std::uint32_t a = contacts.bodyA()[c];
    const std::uint32_t b = contacts.bodyB()[c];
    if (bodies.isSimulated(b)) {
      apply(b, contacts.rB()[c], f);
    }
    if (bodies.isSimulated(a)) {
      apply(a, contacts.rA()[c], -f);
    }
  }
}

}  // namespace grain
