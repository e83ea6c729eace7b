// SPDX-License-Identifier: MIT
// Contact solver: termination (T9), method equivalence, warm start, animated partners, drift
// correction, UCFD compliance, finiteness check and the split-body exchange protocol.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/timestepping/exchange.hpp>

#include "solver_test_scene.hpp"

namespace grain {
namespace {

using test::SolverScene;
using test::tightSettings;

constexpr Real kG = 9.81;

SolverScene restingSphere(Real m = 1.0, Real r = 0.1) {
  SolverScene s;
  s.addFixed();
  s.addSphere(m, r, Vec3(0.0, 0.0, r));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  s.setLaw(0.5);
  s.prepare();
  return s;
}

/// A small frictional pile: two spheres on the floor, one on top between them (slightly
/// asymmetric), a sideways push and a spinning top sphere, so that friction is active.
SolverScene pile() {
  SolverScene s;
  const Real r = 0.05;
  s.addFixed();
  s.addSphere(1.0, r, Vec3(0.0, 0.0, r), Vec3(0.05, 0.0, -0.1));
  s.addSphere(1.2, r, Vec3(0.12, 0.0, r), Vec3(-0.02, 0.01, -0.05));
  const Vec3 c0(0.0, 0.0, r), c1(0.12, 0.0, r);
  // Top sphere touching both lower spheres.
  const Real h = std::sqrt(4.0 * r * r - 0.06 * 0.06);
  const Vec3 c2(0.06, 0.0, r + h);
  s.addSphere(0.8, r, c2, Vec3(0.0, 0.0, -0.2), Vec3(0.0, 3.0, 1.0));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  s.contacts.add(0, 2, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  const Vec3 n02 = (c2 - c0).normalized();
  const Vec3 n12 = (c2 - c1).normalized();
  s.contacts.add(1, 3, n02, 0.0, r * n02, -r * n02);
  s.contacts.add(2, 3, n12, 0.0, r * n12, -r * n12);
  s.setLaw(0.3);
  s.prepare();
  return s;
}

// T9: with zero tolerances exactly maxIter sweeps are done.
TEST(ContactSolverBehaviour, ZeroTolerancesRunMaxIter) {
  for (ConvergenceMethod cm :
       {ConvergenceMethod::InLambda, ConvergenceMethod::InVelocity,
        ConvergenceMethod::InVelocityLocal, ConvergenceMethod::InEnergyVelocity}) {
    SolverScene s = pile();
    InclusionSolverSettings set;
    set.convergenceMethod = cm;
    set.absTol = set.relTol = 0.0;
    set.maxIter = 23;
    ContactSolver solver(set);
    const SolverStats st = s.solve(solver);
    EXPECT_EQ(st.iterations, 23u) << toString(cm);
    EXPECT_FALSE(st.converged);
  }
}

// T9: minIter is honoured even when the first sweeps already converge.
TEST(ContactSolverBehaviour, MinIterHonoured) {
  // alpha = 1 on a single resting contact: exact after sweep 1, no change in sweep 2.
  for (ConvergenceMethod cm : {ConvergenceMethod::InLambda, ConvergenceMethod::InVelocity}) {
    InclusionSolverSettings set;
    set.alphaSorProx = 1.0;
    set.convergenceMethod = cm;
    {
      SolverScene s = restingSphere();
      ContactSolver solver(set);
      const SolverStats st = s.solve(solver);
      EXPECT_EQ(st.iterations, 2u);
      EXPECT_TRUE(st.converged);
    }
    {
      set.minIter = 7;
      SolverScene s = restingSphere();
      ContactSolver solver(set);
      const SolverStats st = s.solve(solver);
      EXPECT_EQ(st.iterations, 7u);
      EXPECT_TRUE(st.converged);
      set.minIter = 0;
    }
  }
}

TEST(ContactSolverBehaviour, NoContactsZeroIterations) {
  SolverScene s;
  s.addSphere(1.0, 0.1, Vec3::Zero(), Vec3(1.0, 2.0, 3.0));
  s.prepare();
  const Vec3 free = s.bodies.velocities()[0];
  InclusionSolverSettings set;
  set.minIter = 10;
  ContactSolver solver(set);
  const SolverStats st = s.solve(solver);
  EXPECT_EQ(st.iterations, 0u);
  EXPECT_TRUE(st.converged);
  EXPECT_TRUE(solver.percussions().empty());
  EXPECT_EQ(s.bodies.velocities()[0], free);
}

// T10: all methods reach the same end velocities on a frictional pile.
TEST(ContactSolverBehaviour, MethodsAgreeOnPile) {
  SolverScene ref = pile();
  ContactSolver refSolver(tightSettings());
  ASSERT_TRUE(ref.solve(refSolver).converged);
  // The reference is a solution: every contact is closed (P_N > 0) or separating.
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_GE(refSolver.percussions()[c].x(), 0.0);
  }
  struct Case {
    SolverMethod method;
    UcfSubMethod sub;
    RStrategy r;
  };
  const Case cases[] = {
      {SolverMethod::SorContact, UcfSubMethod::DeSaxce, RStrategy::Max},
      {SolverMethod::SorContact, UcfSubMethod::AlartCurnier, RStrategy::Sum},
      {SolverMethod::SorFull, UcfSubMethod::AlartCurnier, RStrategy::Max},
      {SolverMethod::SorNormalTangential, UcfSubMethod::AlartCurnier, RStrategy::Max},
      {SolverMethod::Jor, UcfSubMethod::AlartCurnier, RStrategy::Max},
      {SolverMethod::Jor, UcfSubMethod::DeSaxce, RStrategy::Sum},
  };
  for (const Case& c : cases) {
    SolverScene s = pile();
    InclusionSolverSettings set = tightSettings(c.method, c.sub);
    set.rStrategy = c.r;
    ContactSolver solver(set);
    const SolverStats st = s.solve(solver);
    EXPECT_TRUE(st.converged) << toString(c.method) << " " << toString(c.sub);
    for (std::size_t i = 1; i < 4; ++i) {
      EXPECT_NEAR((s.bodies.velocities()[i] - ref.bodies.velocities()[i]).norm(), 0.0, 1e-9)
          << toString(c.method) << " " << toString(c.sub) << " body " << i;
      EXPECT_NEAR((s.bodies.omegasBody()[i] - ref.bodies.omegasBody()[i]).norm(), 0.0, 1e-7)
          << toString(c.method) << " " << toString(c.sub) << " body " << i;
    }
  }
}

// T10: warm start from the cached percussions of an identical previous problem.
TEST(ContactSolverBehaviour, WarmStartReducesIterations) {
  const int n = 10;
  const Real m = 0.5, r = 0.02;
  SolverScene s;
  s.addFixed();
  for (int k = 0; k < n; ++k) {
    s.addSphere(m, r, Vec3(0.0, 0.0, r + 2.0 * r * k));
  }
  const Vec3 up(0.0, 0.0, r);
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), -up);
  for (int k = 1; k < n; ++k) {
    s.contacts.add(k, k + 1, Vec3::UnitZ(), 0.0, up, -up);
  }
  s.setLaw(0.5);
  s.prepare();
  InclusionSolverSettings set = tightSettings();
  set.absTol = 1e-12;
  set.relTol = 1e-10;
  set.usePercussionCache = true;
  ContactSolver solver(set);
  const SolverStats first = s.solve(solver);
  ASSERT_TRUE(first.converged);
  EXPECT_GT(first.iterations, 10u);
  const std::vector<Vec3> p1 = solver.percussions();

  s.resetToFree();
  const SolverStats second = s.solve(solver);
  EXPECT_TRUE(second.converged);
  EXPECT_LE(second.iterations, 2u);
  EXPECT_LT(second.iterations, first.iterations);
  for (int c = 0; c < n; ++c) {
    EXPECT_NEAR(solver.percussions()[c].x(), p1[c].x(), 1e-10);
    EXPECT_NEAR(solver.percussions()[c].x(), (n - c) * m * kG * s.dt, 1e-10);
  }
  for (int k = 1; k <= n; ++k) {
    EXPECT_NEAR(s.bodies.velocities()[k].norm(), 0.0, 1e-9);
  }

  // The same contacts given in reversed order are matched by body ids, not by index.
  SolverScene t;
  t.addFixed();
  for (int k = 0; k < n; ++k) {
    t.addSphere(m, r, Vec3(0.0, 0.0, r + 2.0 * r * k));
  }
  for (int k = n - 1; k >= 1; --k) {
    t.contacts.add(k, k + 1, Vec3::UnitZ(), 0.0, up, -up);
  }
  t.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), -up);
  t.setLaw(0.5);
  t.prepare();
  const SolverStats third = t.solve(solver);
  EXPECT_TRUE(third.converged);
  // The other sweep order moves the (inexact) start a little, but far less than a cold start.
  EXPECT_LT(10 * third.iterations, first.iterations);
}

// A multi-point manifold (two contacts of the same pair) is warm started per point.
TEST(ContactSolverBehaviour, WarmStartDistinguishesManifoldPoints) {
  SolverScene s;
  s.addFixed();
  BodyDef d;
  d.id = makeBodyId(5, 0);
  d.mass = 2.0;
  d.inertiaBody = Vec3(0.01, 0.01, 0.01);
  d.position = Vec3(0.0, 0.0, 0.05);
  s.bodies.add(d, 1.0);
  // Two support points under a bar, at different distances from the centre: unequal loads.
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(-0.1, 0.0, -0.05));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.3, 0.0, -0.05));
  s.setLaw(0.0);
  s.prepare();
  InclusionSolverSettings set = tightSettings();
  set.usePercussionCache = true;
  ContactSolver solver(set);
  ASSERT_TRUE(s.solve(solver).converged);
  const Vec3 p0 = solver.percussions()[0];
  const Vec3 p1 = solver.percussions()[1];
  // Lever rule: 0.1 P_0 = 0.3 P_1 and P_0 + P_1 = m g dt.
  EXPECT_NEAR(p0.x(), 0.75 * 2.0 * kG * s.dt, 1e-12);
  EXPECT_NEAR(p1.x(), 0.25 * 2.0 * kG * s.dt, 1e-12);
  s.resetToFree();
  const SolverStats again = s.solve(solver);
  EXPECT_LE(again.iterations, 2u);
}

// T10: an animated belt drives a resting sphere through friction (chi term).
TEST(ContactSolverBehaviour, AnimatedBeltDrivesSphere) {
  const Real m = 1.0, r = 0.05, mu = 0.5;
  for (Real beltSpeed : {0.01, 1.0}) {
    SolverScene s;
    s.addFixed(BodyMotion::Animated, Vec3(beltSpeed, 0.0, 0.0));
    s.addSphere(m, r, Vec3(0.0, 0.0, r));
    s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
    s.setLaw(mu);
    s.prepare();
    ContactSolver solver(tightSettings());
    ASSERT_TRUE(s.solve(solver).converged);
    const Vec3 v = s.bodies.velocities()[1];
    const Real pN = m * kG * s.dt;
    EXPECT_NEAR(solver.percussions()[0].x(), pN, 1e-12);
    EXPECT_NEAR(v.z(), 0.0, 1e-12);
    if (beltSpeed * 2.0 / 7.0 * m <= mu * pN) {
      // Sticking: contact point moves with the belt, v = 2/7 of the belt speed.
      EXPECT_NEAR(v.x(), 2.0 / 7.0 * beltSpeed, 1e-12);
      const Vec3 omega = s.bodies.omegasBody()[1];
      EXPECT_NEAR(v.x() + omega.cross(Vec3(0.0, 0.0, -r)).x(), beltSpeed, 1e-12);
    } else {
      // Slipping: full friction mu P_N along the belt motion.
      EXPECT_NEAR(v.x(), mu * kG * s.dt, 1e-12);
    }
    // The animated body keeps its velocity.
    EXPECT_EQ(s.bodies.velocities()[0], Vec3(beltSpeed, 0.0, 0.0));
  }
}

// The belt's velocity enters gamma^S too, so with restitution the relative velocity is
// reflected: a ball falling on a belt rising at w leaves with w + eps (w + v).
TEST(ContactSolverBehaviour, AnimatedPartnerEntersStartVelocity) {
  SolverScene s;
  s.gravity.setZero();
  s.addFixed(BodyMotion::Animated, Vec3(0.0, 0.0, 0.5));
  s.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 0.1), Vec3(0.0, 0.0, -2.0));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -0.1));
  s.setLaw(0.0, 0.5);
  s.prepare();
  ContactSolver solver(tightSettings());
  s.solve(solver);
  // gamma^E = -eps gamma^S with gamma = v - w: v^E = w + 0.5 (w - v^S) = 0.5 + 0.5*2.5.
  EXPECT_NEAR(s.bodies.velocities()[1].z(), 0.5 + 0.5 * 2.5, 1e-12);
}

// T10: drift correction pushes a penetrating body out at alpha 2 |g_N| / dt.
TEST(ContactSolverBehaviour, DriftCorrectionPushesOut) {
  SolverScene s;
  s.addFixed();
  s.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 0.099));
  const Real gap = -0.001;
  s.contacts.add(0, 1, Vec3::UnitZ(), gap, Vec3::Zero(), Vec3(0.0, 0.0, -0.1));
  s.setLaw(0.3);
  s.prepare();
  InclusionSolverSettings set = tightSettings();
  set.driftCorrectionGap = true;
  set.driftCorrectionGapAlpha = 0.2;
  ContactSolver solver(set);
  s.solve(solver);
  EXPECT_NEAR(s.bodies.velocities()[1].z(), 0.2 * 2.0 * 0.001 / s.dt, 1e-12);
  EXPECT_GT(solver.percussions()[0].x(), kG * s.dt);

  // A slop of 0.4 mm leaves that much overlap alone: only the remaining 0.6 mm is pushed out.
  SolverScene u;
  u.addFixed();
  u.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 0.099));
  u.contacts.add(0, 1, Vec3::UnitZ(), gap, Vec3::Zero(), Vec3(0.0, 0.0, -0.1));
  u.setLaw(0.3);
  u.prepare();
  set.driftCorrectionGapSlop = 0.0004;
  ContactSolver withSlop(set);
  u.solve(withSlop);
  EXPECT_NEAR(u.bodies.velocities()[1].z(), 0.2 * 2.0 * 0.0006 / u.dt, 1e-12);

  // Without drift correction the body just stops.
  SolverScene t;
  t.addFixed();
  t.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 0.099));
  t.contacts.add(0, 1, Vec3::UnitZ(), gap, Vec3::Zero(), Vec3(0.0, 0.0, -0.1));
  t.setLaw(0.3);
  t.prepare();
  ContactSolver plain(tightSettings());
  t.solve(plain);
  EXPECT_NEAR(t.bodies.velocities()[1].z(), 0.0, 1e-12);
}

// T10: UCFD. A damped resting sphere carries P_N = m g dt at steady state and sinks at the
// constant velocity d_N m g.
TEST(ContactSolverBehaviour, UcfdRestingContactSteadyState) {
  const Real m = 2.0, dN = 0.004;  // s/kg
  SolverScene s = restingSphere(m, 0.1);
  ContactParameter p;
  p.model = ContactModel::UCFD;
  p.mu = 0.5;
  p.epsilonN = 0.0;
  p.epsilonT = 0.0;
  p.invDampingN = dN;
  p.invDampingT = 0.001;
  s.parameters.setStandard(p);
  ContactSolver solver(tightSettings());
  // Repeat steps at a fixed contact: u^S <- u^E, free velocity u^S - g dt.
  s.bodies.velocities()[1].setZero();
  Real pN = 0.0;
  for (int step = 0; step < 200; ++step) {
    s.velocityStart = s.bodies.velocities();
    s.omegaBodyStart = s.bodies.omegasBody();
    s.bodies.velocities()[1] += s.dt * s.gravity;
    ASSERT_TRUE(s.solve(solver).converged);
    pN = solver.percussions()[0].x();
    if (step == 0) {
      // First step: P (1/m + d/dt) = g dt, so the compliant contact carries less than m g dt.
      EXPECT_NEAR(pN, kG * s.dt / (1.0 / m + dN / s.dt), 1e-12);
    }
  }
  EXPECT_NEAR(pN, m * kG * s.dt, 1e-9);
  EXPECT_NEAR(s.bodies.velocities()[1].z(), -dN * m * kG, 1e-8);
  // All methods agree on the regularised problem.
  for (SolverMethod method :
       {SolverMethod::SorFull, SolverMethod::SorNormalTangential, SolverMethod::Jor}) {
    SolverScene t = restingSphere(m, 0.1);
    t.parameters.setStandard(p);
    ContactSolver other(tightSettings(method));
    ASSERT_TRUE(t.solve(other).converged);
    EXPECT_NEAR(other.percussions()[0].x(), kG * t.dt / (1.0 / m + dN / t.dt), 1e-12);
  }
}

// UCFD tangential compliance: a sphere sliding slowly is not stopped completely; the
// tangential inclusion -(xi_T + d_T P_T/dt) in N(P_T) gives a closed form when sticking.
TEST(ContactSolverBehaviour, UcfdTangentialCompliance) {
  const Real m = 1.0, r = 0.1, dT = 0.002, v0 = 0.01;
  SolverScene s;
  s.addFixed();
  s.addSphere(m, r, Vec3(0.0, 0.0, r), Vec3(v0, 0.0, 0.0));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  ContactParameter p;
  p.model = ContactModel::UCFD;
  p.mu = 1.0;
  p.epsilonN = p.epsilonT = 0.0;
  p.invDampingT = dT;
  s.parameters.setStandard(p);
  s.prepare();
  ContactSolver solver(tightSettings());
  ASSERT_TRUE(s.solve(solver).converged);
  // Tangential: gamma_T = v0 + G_TT P_T with G_TT = 7/(2m); gamma_T + dT/dt P_T = 0.
  const Real pT = -v0 / (3.5 / m + dT / s.dt);
  const Vec3 pw = solver.percussions()[0].y() * s.contacts.tangent1(0) +
                  solver.percussions()[0].z() * s.contacts.tangent2(0);
  EXPECT_NEAR(pw.x(), pT, 1e-13);
  EXPECT_NEAR(solver.percussions()[0].x(), m * kG * s.dt, 1e-12);
}

TEST(ContactSolverBehaviour, FiniteCheck) {
  SolverScene s = restingSphere();
  s.bodies.velocities()[1].x() = std::numeric_limits<Real>::quiet_NaN();
  InclusionSolverSettings set;
  set.isFiniteCheck = true;
  set.maxIter = 5;
  ContactSolver solver(set);
  const SolverStats st = s.solve(solver);
  EXPECT_FALSE(st.finite);
  EXPECT_FALSE(st.converged);
  EXPECT_EQ(st.iterations, 5u);

  SolverScene t = restingSphere();
  ContactSolver ok(set);
  EXPECT_TRUE(t.solve(ok).finite);

  // A body without contacts is checked too.
  SolverScene u = restingSphere();
  const std::size_t lone = u.addSphere(1.0, 0.1, Vec3(3.0, 0.0, 0.0));
  u.prepare();
  u.bodies.omegasBody()[lone].z() = std::numeric_limits<Real>::infinity();
  ContactSolver third(set);
  EXPECT_FALSE(u.solve(third).finite);
}

// Static partners never change; a static body's stored velocity does not enter gamma.
TEST(ContactSolverBehaviour, StaticBodiesUntouched) {
  SolverScene s;
  s.addFixed(BodyMotion::Static, Vec3(5.0, 0.0, 0.0), Vec3(0.0, 0.0, 3.0));
  s.addSphere(1.0, 0.1, Vec3(0.0, 0.0, 0.1));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -0.1));
  s.setLaw(0.5);
  s.prepare();
  ContactSolver solver(tightSettings());
  s.solve(solver);
  EXPECT_EQ(s.bodies.velocities()[0], Vec3(5.0, 0.0, 0.0));
  EXPECT_EQ(s.bodies.omegasBody()[0], Vec3(0.0, 0.0, 3.0));
  EXPECT_NEAR(s.bodies.velocities()[1].norm(), 0.0, 1e-12);
}

// Reducer test double: counts decisions and can veto convergence.
class CountingReducer final : public Reducer {
 public:
  explicit CountingReducer(bool veto) : veto_(veto) {}
  bool distributed() const override { return true; }
  bool allTrue(bool local) override {
    ++decisions;
    lastLocal = local;
    return local && !veto_;
  }
  void sum(std::span<Real>) override { ++sums; }
  void max(std::span<Real>) override {}
  int decisions = 0;
  int sums = 0;
  bool lastLocal = false;

 private:
  bool veto_;
};

// Split-body exchange test double: coupled or not, counts averagings, sees the solver's arrays.
class CountingExchange final : public SplitBodyExchange {
 public:
  CountingExchange(unsigned period, unsigned checkRatio, bool coupled, bool veto)
      : reducer(veto), period_(period), checkRatio_(checkRatio), coupled_(coupled) {}
  void planSplits(const BodyStorage&, const ContactStorage&, std::vector<std::uint32_t>&,
                  std::vector<detail::PercussionCacheEntry>&) override {}
  bool beginSolve(const BodyStorage&, std::span<const std::uint32_t> storageIndex) override {
    ++solves;
    solverBodies = storageIndex.size();
    return coupled_;
  }
  unsigned period() const override { return period_; }
  unsigned checkRatio() const override { return checkRatio_; }
  void average(std::span<Vec3> velocity, std::span<Vec3>) override {
    ++averagings;
    if (!velocity.empty()) {
      seenVelocity = velocity.back();
    }
  }
  void sum(std::span<Vec3>, std::span<Vec3>) override {
    ADD_FAILURE() << "the velocity prox solver averages, it does not sum";
  }
  Reducer& coupledReducer() override { return reducer; }
  int solves = 0;
  std::size_t solverBodies = 0;
  int averagings = 0;
  Vec3 seenVelocity = Vec3::Constant(-1.0);

 public:
  CountingReducer reducer;

 private:
  unsigned period_;
  unsigned checkRatio_;
  bool coupled_;
};

TEST(ContactSolverBehaviour, SplitExchangeProtocol) {
  {
    // Zero tolerances: 10 sweeps, averaging after sweeps 3, 6, 9 and the last (10); convergence
    // is tested only right after an averaging, together after 3, 6 and 9; the test after the
    // last allowed sweep is this process's own (the step's statistics reduction combines it).
    SolverScene s = pile();
    InclusionSolverSettings set;
    set.absTol = set.relTol = 0.0;
    set.maxIter = 10;
    ContactSolver solver(set);
    CountingExchange ex(3, 1, true, false);
    const SolverStats st = s.solve(solver, &ex);
    EXPECT_EQ(st.iterations, 10u);
    EXPECT_EQ(ex.solves, 1);
    EXPECT_EQ(ex.averagings, 4);
    EXPECT_EQ(ex.reducer.decisions, 3);
  }
  {
    // convergenceCheckRatio 2: tested together after every second averaging (sweeps 4, 8), and
    // on its own after the last.
    SolverScene s = pile();
    InclusionSolverSettings set;
    set.absTol = set.relTol = 0.0;
    set.maxIter = 10;
    ContactSolver solver(set);
    CountingExchange ex(2, 2, true, false);
    solver.solve(s.bodies,
                 ContactProblem{s.contacts, s.parameters, s.velocityStart, s.omegaBodyStart, s.dt},
                 &ex);
    EXPECT_EQ(ex.averagings, 5);
    EXPECT_EQ(ex.reducer.decisions, 2);
  }
  {
    // The exchange sees the solver's current velocities (not the free velocity), and a
    // converged coupled solve stops right after an averaging.
    SolverScene s = restingSphere();
    InclusionSolverSettings set;
    set.alphaSorProx = 1.0;
    set.minIter = 4;
    ContactSolver solver(set);
    CountingExchange ex(1, 1, true, false);
    const SolverStats st = s.solve(solver, &ex);
    EXPECT_EQ(st.iterations, 4u);
    EXPECT_EQ(ex.averagings, 4);
    EXPECT_EQ(ex.reducer.decisions, 1);  // only tested from minIter on
    EXPECT_NEAR(ex.seenVelocity.norm(), 0.0, 1e-15);
  }
  {
    // A veto from another process keeps the iteration going until maxIter; the last sweep's
    // test is this process's own (converged here: the step's reduction makes it global).
    SolverScene s = restingSphere();
    InclusionSolverSettings set;
    set.alphaSorProx = 1.0;
    set.maxIter = 12;
    ContactSolver solver(set);
    CountingExchange ex(1, 1, true, true);
    const SolverStats st = s.solve(solver, &ex);
    EXPECT_EQ(st.iterations, 12u);
    EXPECT_TRUE(st.converged);
    EXPECT_EQ(ex.averagings, 12);
    EXPECT_EQ(ex.reducer.decisions, 11);
    EXPECT_TRUE(ex.reducer.lastLocal);
  }
  {
    // An uncoupled process iterates on its own: no averaging, no collective decision.
    SolverScene s = pile();
    ContactSolver solver(tightSettings());
    CountingExchange ex(1, 1, false, true);
    const SolverStats st = s.solve(solver, &ex);
    EXPECT_TRUE(st.converged);
    EXPECT_EQ(ex.solves, 1);
    EXPECT_EQ(ex.averagings, 0);
    EXPECT_EQ(ex.reducer.decisions, 0);
  }
}

// Collective calls line up: a process without contacts still tells the exchange about its
// solve, and a coupled one takes part in every averaging and decision.
TEST(ContactSolverBehaviour, SolveWithoutContactsStillJoinsTheExchange) {
  SolverScene s = restingSphere();
  s.contacts.clear();
  InclusionSolverSettings set;
  set.maxIter = 6;
  set.absTol = set.relTol = 0.0;
  ContactSolver solver(set);
  CountingExchange uncoupled(1, 1, false, false);
  EXPECT_EQ(s.solve(solver, &uncoupled).iterations, 0u);
  EXPECT_EQ(uncoupled.solves, 1);
  CountingExchange coupled(2, 1, true, true);  // another process has not converged
  const SolverStats st = s.solve(solver, &coupled);
  EXPECT_EQ(st.iterations, 6u);
  EXPECT_EQ(coupled.averagings, 3);
  EXPECT_EQ(coupled.reducer.decisions, 2);  // after sweeps 2 and 4; sweep 6 is the last
}

// An exchange that changes velocities (as split-body averaging does) is seen by the solver.
TEST(ContactSolverBehaviour, ExchangedVelocitiesAreUsed) {
  class Kick final : public SplitBodyExchange {
   public:
    void planSplits(const BodyStorage&, const ContactStorage&, std::vector<std::uint32_t>&,
                    std::vector<detail::PercussionCacheEntry>&) override {}
    bool beginSolve(const BodyStorage&, std::span<const std::uint32_t>) override { return true; }
    unsigned period() const override { return 1; }
    unsigned checkRatio() const override { return 1; }
    void average(std::span<Vec3> velocity, std::span<Vec3>) override {
      if (!done) {
        velocity.back().x() += 0.25;
        done = true;
      }
    }
    void sum(std::span<Vec3>, std::span<Vec3>) override {
      ADD_FAILURE() << "the velocity prox solver averages, it does not sum";
    }
    Reducer& coupledReducer() override { return reducer; }
    bool done = false;
    LocalReducer reducer;
  } kick;
  SolverScene s = restingSphere();
  s.setLaw(0.0);
  ContactSolver solver(tightSettings());
  s.solve(solver, &kick);
  EXPECT_NEAR(s.bodies.velocities()[1].x(), 0.25, 1e-15);
}

// SorNormalTangential: friction is applied although normal sweeps dominate, and the ratio
// decides when convergence can be declared.
TEST(ContactSolverBehaviour, NormalTangentialRatio) {
  SolverScene s = pile();
  InclusionSolverSettings set = tightSettings(SolverMethod::SorNormalTangential);
  set.normalTangentialUpdateRatio = 3;
  ContactSolver solver(set);
  const SolverStats st = s.solve(solver);
  EXPECT_TRUE(st.converged);
  EXPECT_EQ(st.iterations % 3, 0u);
  bool friction = false;
  for (const Vec3& p : solver.percussions()) {
    friction = friction || p.tail<2>().norm() > 1e-6;
  }
  EXPECT_TRUE(friction);
}

}  // namespace
}  // namespace grain

namespace grain {
namespace {

// Every convergence criterion stops at the solution of the stack (P_N,k = k m g dt).
TEST(ContactSolverBehaviour, ConvergenceMethodsReachSolution) {
  for (ConvergenceMethod cm :
       {ConvergenceMethod::InLambda, ConvergenceMethod::InVelocity,
        ConvergenceMethod::InVelocityLocal, ConvergenceMethod::InEnergyVelocity}) {
    const int n = 5;
    const Real m = 0.2, r = 0.01;
    SolverScene s;
    s.addFixed();
    for (int k = 0; k < n; ++k) {
      s.addSphere(m, r, Vec3(0.0, 0.0, r + 2.0 * r * k));
    }
    // A free body without contacts: it must keep its free velocity.
    const std::size_t lone = s.addSphere(m, r, Vec3(5.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0));
    const Vec3 up(0.0, 0.0, r);
    s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), -up);
    for (int k = 1; k < n; ++k) {
      s.contacts.add(k, k + 1, Vec3::UnitZ(), 0.0, up, -up);
    }
    s.setLaw(0.5);
    s.prepare();
    InclusionSolverSettings set = tightSettings();
    set.convergenceMethod = cm;
    ContactSolver solver(set);
    const SolverStats st = s.solve(solver);
    EXPECT_TRUE(st.converged) << toString(cm);
    EXPECT_GT(st.iterations, 5u);
    for (int c = 0; c < n; ++c) {
      EXPECT_NEAR(solver.percussions()[c].x(), (n - c) * m * kG * s.dt, 1e-11) << toString(cm);
    }
    EXPECT_EQ(s.bodies.velocities()[lone], Vec3(1.0, 0.0, 0.0) + s.dt * s.gravity);
  }
}

// JOR uses alphaJorProx: one sweep on a single resting contact gives alpha m g dt.
TEST(ContactSolverBehaviour, JorUsesItsOwnRelaxation) {
  SolverScene s = restingSphere(2.0);
  InclusionSolverSettings set;
  set.method = SolverMethod::Jor;
  set.alphaJorProx = 0.3;
  set.alphaSorProx = 1.7;
  set.maxIter = 1;
  ContactSolver solver(set);
  s.solve(solver);
  EXPECT_NEAR(solver.percussions()[0].x(), 0.3 * 2.0 * kG * s.dt, 1e-15);
}

// Percussions and velocities do not depend on the process: repeated solves are bit-identical.
TEST(ContactSolverBehaviour, Deterministic) {
  SolverScene a = pile();
  SolverScene b = pile();
  ContactSolver sa(tightSettings());
  ContactSolver sb(tightSettings());
  a.solve(sa);
  b.solve(sb);
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(sa.percussions()[c], sb.percussions()[c]);
  }
  for (std::size_t i = 0; i < a.bodies.size(); ++i) {
    EXPECT_EQ(a.bodies.velocities()[i], b.bodies.velocities()[i]);
  }
}

}  // namespace
}  // namespace grain
