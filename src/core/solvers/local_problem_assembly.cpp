// SPDX-License-Identifier: MIT
#include <vector>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/contact_rows.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>

namespace grain {

namespace {

/// One appearance of a solver body in a contact: W_i,B^T u_B = sign (frame^T v + jac^T omega),
/// the velocity response of a percussion P on the body being sign (m^-1 frame P, dOmega P).
struct BodyTerm {
  std::uint32_t contact;
  Real sign;
  const Mat3* frame;   // A_IC (signed for a one-body contact, see SolverContacts)
  const Mat3* jac;     // J = [r x n, r x t1, r x t2]
  const Mat3* dOmega;  // Theta^-1 J
};

}  // namespace

LocalProblem assembleLocalProblem(const BodyStorage& bodies, const ContactProblem& problem,
                                  const InclusionSolverSettings& settings) {
  // The rows the velocity prox solver iterates on (contact_rows.hpp).
  detail::SolverBodies sb;
  detail::SolverContacts sc;
  detail::SolverRolling rolling;
  detail::setupSolverBodies(bodies, problem, sb);
  detail::setupSolverContacts(bodies, problem, settings, sb, sc, rolling);
  const std::size_t nc = sc.size();

  LocalProblem out;
  out.q.setZero(static_cast<Eigen::Index>(3 * nc));
  out.mu.setZero(static_cast<Eigen::Index>(nc));
  std::vector<Eigen::Triplet<Real>> triplets;
  // Contacts of every solver body, grouped by body (compressed rows).
  std::vector<std::uint32_t> start(sb.size() + 1, 0);
  for (std::size_t c = 0; c < nc; ++c) {
    if (sc.kind[c] == detail::PairKind::TwoBodies) {
      ++start[sc.bodyA[c] + 1];
    }
    if (sc.kind[c] != detail::PairKind::Passive) {
      ++start[sc.bodyB[c] + 1];
    }
  }
  for (std::size_t k = 0; k < sb.size(); ++k) {
    start[k + 1] += start[k];
  }
  std::vector<BodyTerm> terms(start.back());
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);

  for (std::size_t c = 0; c < nc; ++c) {
    const auto k = static_cast<Eigen::Index>(3 * c);
    const detail::ContactLaw& law = sc.law[c];
    out.mu[static_cast<Eigen::Index>(c)] = law.mu;
    if (sc.kind[c] == detail::PairKind::Passive) {
      // No dynamics: r = 0 is the unique solution of u = r.
      for (int d = 0; d < 3; ++d) {
        triplets.emplace_back(k + d, k + d, 1.0);
      }
      continue;
    }
    out.q.segment<3>(k) = detail::contactVelocity(sc, sb, c) + sc.b[c];
    const auto contact = static_cast<std::uint32_t>(c);
    terms[fill[sc.bodyB[c]]++] = {contact, 1.0, &sc.frame[c], &sc.jacB[c], &sc.dOmegaB[c]};
    if (sc.kind[c] == detail::PairKind::TwoBodies) {
      terms[fill[sc.bodyA[c]]++] = {contact, -1.0, &sc.frame[c], &sc.jacA[c], &sc.dOmegaA[c]};
    }
    if (law.dampN != 0.0 || law.dampT != 0.0) {
      triplets.emplace_back(k, k, law.dampN);
      triplets.emplace_back(k + 1, k + 1, law.dampT);
      triplets.emplace_back(k + 2, k + 2, law.dampT);
    }
  }

  // W = sum over bodies of the couplings of the contacts they share.
  for (std::size_t body = 0; body < sb.size(); ++body) {
    const Real invMass = sb.invMass[body];
    for (std::uint32_t x = start[body]; x < start[body + 1]; ++x) {
      const BodyTerm& ti = terms[x];
      for (std::uint32_t y = start[body]; y < start[body + 1]; ++y) {
        const BodyTerm& tj = terms[y];
        const Mat3 block = detail::bodyCouplingBlock(invMass, ti.sign, *ti.frame, *ti.jac, tj.sign,
                                                     *tj.frame, *tj.dOmega);
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
    const Mat3 frame = contacts.frame(c);
    const Vec3 f = frame.col(0) * p.x() + frame.col(1) * p.y() + frame.col(2) * p.z();
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
