// SPDX-License-Identifier: MIT
// The local problem assembled from a ContactStorage is the problem the velocity ContactSolver
// solves: closed-form Delassus blocks, identical SOR iterates, and the velocity solver's
// converged percussions solve the assembled problem.
#include <cmath>

#include <Eigen/Eigenvalues>
#include <gtest/gtest.h>

#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/local_solver.hpp>

#include "pile_scene.hpp"

namespace grain {
namespace {

using test::pile;
using test::SolverScene;

LocalProblem assemble(SolverScene& s, const InclusionSolverSettings& set) {
  const ContactProblem problem{s.contacts, s.parameters, s.velocityStart, s.omegaBodyStart, s.dt};
  return assembleLocalProblem(s.bodies, problem, set);
}

TEST(LocalProblemAssembly, SphereOnFloorClosedForm) {
  // Floor + solid sphere (m, R): W = diag(1/m, 1/m + R^2/Theta, same) = diag(1, 3.5, 3.5)/m;
  // q = free contact velocity = (v_z - g dt, v_x - R w_y, v_y + R w_x) in (n, t1, t2).
  SolverScene s;
  s.addFixed();
  const Real m = 2.0, r = 0.5;
  s.addSphere(m, r, Vec3(0.0, 0.0, r), Vec3(0.3, -0.2, -1.0), Vec3(0.4, 0.6, 0.0));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  s.setLaw(0.5);
  s.prepare();
  const LocalProblem p = assemble(s, InclusionSolverSettings{});
  const Eigen::MatrixXd w(p.W);
  const Vec3 t1 = s.contacts.tangent1(0);
  const Vec3 t2 = s.contacts.tangent2(0);
  EXPECT_NEAR(w(0, 0), 1.0 / m, 1e-14);
  EXPECT_NEAR((w.block<2, 2>(1, 1) - Eigen::Matrix2d::Identity() * 3.5 / m).norm(), 0.0, 1e-13);
  EXPECT_NEAR(w(0, 1), 0.0, 1e-14);
  EXPECT_NEAR(w(0, 2), 0.0, 1e-14);
  const Vec3 contactVelocity =
      Vec3(0.3, -0.2, -1.0 - 9.81 * s.dt) + Vec3(0.4, 0.6, 0.0).cross(Vec3(0.0, 0.0, -r));
  EXPECT_NEAR(p.q[0], contactVelocity.z(), 1e-14);
  EXPECT_NEAR(p.q[1], contactVelocity.dot(t1), 1e-14);
  EXPECT_NEAR(p.q[2], contactVelocity.dot(t2), 1e-14);
  EXPECT_EQ(p.mu[0], 0.5);
}

TEST(LocalProblemAssembly, SymmetricPositiveSemiDefinite) {
  SolverScene s = pile();
  const LocalProblem p = assemble(s, InclusionSolverSettings{});
  const Eigen::MatrixXd w(p.W);
  EXPECT_LT((w - w.transpose()).norm(), 1e-13 * w.norm());
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(w);
  EXPECT_GT(eig.eigenvalues().minCoeff(), -1e-12 * eig.eigenvalues().maxCoeff());
}

/// Local SOR prox on the assembled problem runs the same iterates as the velocity SOR prox.
void expectSameSorIterates(ContactModel model, UcfSubMethod sub, RStrategy strategy) {
  for (std::uint32_t sweeps : {1u, 3u, 12u}) {
    SolverScene s = pile(model);
    InclusionSolverSettings vel;
    vel.method = SolverMethod::SorContact;
    vel.subMethodUcf = sub;
    vel.rStrategy = strategy;
    vel.alphaSorProx = 1.3;
    vel.maxIter = sweeps;
    vel.absTol = vel.relTol = 0.0;
    const LocalProblem p = assemble(s, vel);
    ContactSolver solver(vel);
    s.solve(solver);

    LocalSolverSettings loc;
    loc.method = LocalSolverMethod::SorProx;
    loc.subMethod = sub;
    loc.rStrategy = strategy;
    loc.alphaSor = 1.3;
    loc.tolerance = 0.0;
    loc.maxIter = sweeps;
    const LocalSolverResult res = solve(p, loc);
    ASSERT_EQ(res.iterations, sweeps);
    Real scale = 0.0;
    for (std::size_t c = 0; c < s.contacts.size(); ++c) {
      scale = std::max(scale, solver.percussions()[c].norm());
    }
    ASSERT_GT(scale, 0.0);
    for (std::size_t c = 0; c < s.contacts.size(); ++c) {
      const Vec3 local = res.r.segment<3>(static_cast<Eigen::Index>(3 * c));
      EXPECT_LT((local - solver.percussions()[c]).norm(), 1e-12 * scale)
          << "contact " << c << " after " << sweeps << " sweeps";
    }
  }
}

TEST(LocalProblemAssembly, SorMatchesVelocitySolverAlartCurnier) {
  expectSameSorIterates(ContactModel::UCF, UcfSubMethod::AlartCurnier, RStrategy::Max);
}

TEST(LocalProblemAssembly, SorMatchesVelocitySolverDeSaxce) {
  expectSameSorIterates(ContactModel::UCF, UcfSubMethod::DeSaxce, RStrategy::Max);
}

TEST(LocalProblemAssembly, SorMatchesVelocitySolverSumAndUcfd) {
  expectSameSorIterates(ContactModel::UCFD, UcfSubMethod::AlartCurnier, RStrategy::Sum);
}

/// xi of every contact from the bodies' velocities: gamma^E + eps gamma^S.
VecX xiFromBodies(const SolverScene& s, Real epsN, Real epsT) {
  VecX xi(3 * static_cast<Eigen::Index>(s.contacts.size()));
  auto pointVelocity = [&](std::uint32_t i, const Vec3& v, const Vec3& omegaBody, const Vec3& r) {
    if (s.bodies.motions()[i] == BodyMotion::Static) {
      return Vec3(Vec3::Zero());
    }
    return Vec3(v + (s.bodies.orientations()[i] * omegaBody).cross(r));
  };
  for (std::size_t c = 0; c < s.contacts.size(); ++c) {
    const std::uint32_t a = s.contacts.bodyA()[c];
    const std::uint32_t b = s.contacts.bodyB()[c];
    Mat3 frame;
    frame << s.contacts.normals()[c], s.contacts.tangent1(c), s.contacts.tangent2(c);
    const Vec3& rA = s.contacts.rA()[c];
    const Vec3& rB = s.contacts.rB()[c];
    const Vec3 gE = frame.transpose() *
                    (pointVelocity(b, s.bodies.velocities()[b], s.bodies.omegasBody()[b], rB) -
                     pointVelocity(a, s.bodies.velocities()[a], s.bodies.omegasBody()[a], rA));
    const Vec3 gS =
        frame.transpose() * (pointVelocity(b, s.velocityStart[b], s.omegaBodyStart[b], rB) -
                             pointVelocity(a, s.velocityStart[a], s.omegaBodyStart[a], rA));
    xi.segment<3>(static_cast<Eigen::Index>(3 * c)) = gE + Vec3(epsN, epsT, epsT).cwiseProduct(gS);
  }
  return xi;
}

TEST(LocalProblemAssembly, VelocitySolverSolutionSolvesLocalProblem) {
  SolverScene s = pile();
  InclusionSolverSettings vel = test::tightSettings();
  const LocalProblem p = assemble(s, vel);
  ContactSolver solver(vel);
  const SolverStats st = s.solve(solver);
  ASSERT_TRUE(st.converged);
  VecX r(p.q.size());
  for (std::size_t c = 0; c < s.contacts.size(); ++c) {
    r.segment<3>(static_cast<Eigen::Index>(3 * c)) = solver.percussions()[c];
  }
  // u = W P + q is the xi the bodies' end velocities give (independent of the SOR iterates).
  const VecX u = localVelocity(p, r);
  const VecX xi = xiFromBodies(s, 0.3, 0.1);
  EXPECT_LT((u - xi).norm(), 1e-10 * xi.norm());
  // ... and it satisfies the contact law of the local problem.
  const LocalErrorEvaluator ev(p);
  EXPECT_LT(ev.naturalMap(r, u), 1e-9);
  // APGD on the assembled problem finds the same contact velocities.
  LocalSolverSettings loc;
  loc.method = LocalSolverMethod::Apgd;
  loc.tolerance = 1e-11;
  const LocalSolverResult res = solve(p, loc);
  EXPECT_TRUE(res.converged);
  EXPECT_LT((res.u - xi).norm(), 1e-7 * xi.norm());
}

TEST(LocalProblemAssembly, DriftTermEntersTheNormalVelocity) {
  SolverScene s = pile();
  InclusionSolverSettings set;
  const LocalProblem plain = assemble(s, set);
  set.driftCorrectionGap = true;
  set.driftCorrectionGapAlpha = 0.25;
  const LocalProblem drift = assemble(s, set);
  for (std::size_t c = 0; c < s.contacts.size(); ++c) {
    const auto k = static_cast<Eigen::Index>(3 * c);
    EXPECT_NEAR(drift.q[k] - plain.q[k], 0.25 * 2.0 * s.contacts.gaps()[c] / s.dt, 1e-12);
    EXPECT_EQ(drift.q[k + 1], plain.q[k + 1]);
  }
  // With a slop only the overlap beyond it is corrected; shallower overlaps (and the positive
  // gaps of this synthetic problem) get no term.
  set.driftCorrectionGapSlop = 4e-4;
  const LocalProblem slop = assemble(s, set);
  int deep = 0;
  for (std::size_t c = 0; c < s.contacts.size(); ++c) {
    const auto k = static_cast<Eigen::Index>(3 * c);
    const Real g = s.contacts.gaps()[c];
    const Real excess = g < -4e-4 ? g + 4e-4 : 0.0;
    deep += excess < 0.0 ? 1 : 0;
    EXPECT_NEAR(slop.q[k] - plain.q[k], 0.25 * 2.0 * excess / s.dt, 1e-12);
  }
  EXPECT_EQ(deep, 1);  // the belt contact, g_N = -1 mm
}

// q is affine in the body velocities (q = W_c^T u + b), so applying percussions r to the bodies
// and assembling again gives q + W r: applyContactPercussions is M^-1 W_c r.
TEST(LocalProblemAssembly, AppliedPercussionsMoveQByWr) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    SolverScene s = pile(model);
    InclusionSolverSettings set;
    const LocalProblem before = assemble(s, set);
    VecX r(before.q.size());
    for (Eigen::Index k = 0; k < r.size(); ++k) {
      r[k] = 0.01 * std::sin(1.7 * static_cast<Real>(k) + 0.3);
    }
    const auto staticBefore = s.bodies.velocities()[0];
    applyContactPercussions(s.bodies, s.contacts, r);
    const LocalProblem after = assemble(s, set);
    // UCFD: D/dt on the diagonal of W is compliance, not body motion.
    VecX expected = before.q + before.W * r;
    if (model == ContactModel::UCFD) {
      const ContactParameter& p = s.parameters.standard();
      for (Eigen::Index c = 0; c < r.size() / 3; ++c) {
        expected[3 * c] -= p.invDampingN / s.dt * r[3 * c];
        expected[3 * c + 1] -= p.invDampingT / s.dt * r[3 * c + 1];
        expected[3 * c + 2] -= p.invDampingT / s.dt * r[3 * c + 2];
      }
    }
    EXPECT_LT((after.q - expected).norm(), 1e-12 * expected.norm());
    EXPECT_EQ(s.bodies.velocities()[0], staticBefore);         // the floor does not move
    EXPECT_EQ(s.bodies.velocities()[1], Vec3(0.3, 0.1, 0.0));  // nor does the belt
  }
}

}  // namespace
}  // namespace grain
