// SPDX-License-Identifier: MIT
// Compatible normal contact forces against closed forms: indeterminately supported beams and
// plates (linear and Hertzian springs), determinate cases, friction left untouched.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/contact/compatible_forces.hpp>
#include <grain/core/solvers/contact_solver.hpp>

#include "../solvers/solver_test_scene.hpp"

namespace grain {
namespace {

constexpr Real kHalfHeight = 0.1;  // m, contacts lie this far below the centre of mass

/// A rigid body (index 1) resting on a static floor (index 0) through contacts at the given
/// (x, y) positions relative to its centre of mass, kHalfHeight below it; normal +z.
struct SupportedBody {
  test::SolverScene scene;
  std::size_t floor = 0;
  std::size_t body = 0;

  explicit SupportedBody(const std::vector<Vec3>& supports, Real mass = 1.0) {
    floor = scene.addFixed();
    BodyDef d;
    d.id = makeBodyId(1, 1);
    d.mass = mass;
    d.inertiaBody = Vec3(0.1, 0.5, 0.5) * mass;
    d.position = Vec3(0.0, 0.0, kHalfHeight);
    body = scene.bodies.add(d, 2.0);
    for (const Vec3& s : supports) {
      const Vec3 rB(s.x(), s.y(), -kHalfHeight);
      scene.contacts.add(static_cast<std::uint32_t>(floor), static_cast<std::uint32_t>(body),
                         Vec3::UnitZ(), 0.0, rB + Vec3(0.0, 0.0, kHalfHeight), rB);
    }
  }

  std::vector<Real> compatible(const std::vector<Real>& solver, const std::vector<Real>& k,
                               Real exponent = 1.0, Real tolerance = 1e-13) {
    CompatibleForceSolver s;
    CompatibleForceSettings settings;
    settings.exponent = exponent;
    settings.tolerance = tolerance;
    std::vector<Real> out;
    const CompatibleForceStats stats =
        s.solve(scene.bodies, scene.contacts, solver, k, settings, out);
    EXPECT_TRUE(stats.converged);
    EXPECT_LE(stats.relativeResidual, tolerance);
    return out;
  }
};

std::vector<Vec3> beamSupports() {
  return {Vec3(-1.0, 0, 0), Vec3(0, 0, 0), Vec3(1.0, 0, 0)};
}

void expectForces(const std::vector<Real>& got, const std::vector<Real>& want, Real relTol) {
  ASSERT_EQ(got.size(), want.size());
  Real scale = 0.0;
  for (const Real w : want) {
    scale = std::max(scale, std::abs(w));
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], relTol * scale) << "contact " << i;
  }
}

TEST(CompatibleForces, BeamOnThreeEqualSupportsCarriesAThirdEachWhateverTheSolverChose) {
  SupportedBody beam(beamSupports());
  const std::vector<Real> k(3, 1.0);
  // Every one of these balances a weight of 10 at the centre (force 10, no torque).
  for (const std::vector<Real>& solver : {std::vector<Real>{5, 0, 5}, std::vector<Real>{0, 10, 0},
                                          std::vector<Real>{1, 8, 1}, std::vector<Real>{4, 2, 4}}) {
    expectForces(beam.compatible(solver, k), {10.0 / 3, 10.0 / 3, 10.0 / 3}, 1e-12);
  }
}

TEST(CompatibleForces, BeamStiffMiddleSupportTakesTheLargerShareLinearlyInTheLoad) {
  SupportedBody beam(beamSupports());
  expectForces(beam.compatible({5, 0, 5}, {1, 3, 1}), {2, 6, 2}, 1e-12);
  expectForces(beam.compatible({0, 35, 0}, {1, 3, 1}), {7, 21, 7}, 1e-12);
  // Twice as stiff: 10 k_i / sum k = 2.5 / 5 / 2.5.
  expectForces(beam.compatible({3, 4, 3}, {1, 2, 1}), {2.5, 5, 2.5}, 1e-12);
}

TEST(CompatibleForces, SorSweepOrderChangesTheSolverForcesButNotTheCompatibleOnes) {
  const Real g = 9.81;
  std::vector<std::vector<Real>> solverForces;
  for (const std::vector<int>& order :
       {std::vector<int>{0, 1, 2}, std::vector<int>{1, 0, 2}, std::vector<int>{2, 1, 0}}) {
    std::vector<Vec3> supports;
    for (const int o : order) {
      supports.push_back(beamSupports()[static_cast<std::size_t>(o)]);
    }
    SupportedBody beam(supports, 10.0 / g);  // weight 10 N
    beam.scene.gravity = Vec3(0, 0, -g);
    beam.scene.setLaw(0.0);
    beam.scene.prepare();
    ContactSolver solver(test::tightSettings());
    ASSERT_TRUE(beam.scene.solve(solver).converged);
    std::vector<Real> forceOf(3);  // N, in support order left, middle, right
    std::vector<Real> solverN(3);
    for (std::size_t i = 0; i < 3; ++i) {
      solverN[i] = solver.percussions()[i].x();
      forceOf[static_cast<std::size_t>(order[i])] = solverN[i] / beam.scene.dt;
    }
    EXPECT_NEAR(forceOf[0] + forceOf[1] + forceOf[2], 10.0, 1e-9);
    solverForces.push_back(forceOf);
    // Compatible percussions are a third of m g dt each, in every sweep order.
    const std::vector<Real> compat = beam.compatible(solverN, {1, 1, 1});
    for (const Real p : compat) {
      EXPECT_NEAR(p / beam.scene.dt, 10.0 / 3, 1e-10);
    }
  }
  // The rigid solver's answer depends on the order (the beam problem is indeterminate).
  Real spread = 0.0;
  for (std::size_t c = 0; c < 3; ++c) {
    spread = std::max(spread, std::abs(solverForces[0][c] - solverForces[1][c]));
  }
  EXPECT_GT(spread, 1.0);
}

TEST(CompatibleForces, PlateOnFourSupportsWithOffCentreLoad) {
  // Supports at (+-s, +-s); load w at (a, b): f_i = w/4 (1 + a x_i / s^2 + b y_i / s^2).
  const Real s = 0.5, w = 12.0, a = 0.1, b = -0.15;
  const std::vector<Vec3> supports = {Vec3(s, s, 0), Vec3(-s, s, 0), Vec3(-s, -s, 0),
                                      Vec3(s, -s, 0)};
  SupportedBody plate(supports);
  std::vector<Real> want, solver;
  for (const Vec3& p : supports) {
    const Real f = w / 4 * (1 + a * p.x() / (s * s) + b * p.y() / (s * s));
    want.push_back(f);
    // A solver answer with the same load plus a self-stress (+,-,+,-).
    solver.push_back(f + 1.2 * p.x() * p.y() / (s * s));
  }
  for (const Real f : solver) {
    ASSERT_GE(f, 0.0);
  }
  expectForces(plate.compatible(solver, {1, 1, 1, 1}), want, 1e-12);
}

TEST(CompatibleForces, OneSupportLeavesWhenItWouldPullAndHertzSharesDifferently) {
  // Beam on supports at x = -1, 0, 1, load 469 at x = 342/469 (the solver's answer below is
  // one that balances it). Linear springs: the all-active solution would pull on the left
  // support (469/3 - 171 < 0), so it leaves and the rest is determinate: 0 / 127 / 342.
  // Hertz (f = c^1.5): overlaps c = (1, 25, 49) are linear in x and give 1 / 125 / 343, which
  // sum to 469 with moment -1 + 343 = 342.
  SupportedBody beam(beamSupports());
  const std::vector<Real> load = {0, 127, 342};
  expectForces(beam.compatible(load, {1, 1, 1}), {0, 127, 342}, 1e-12);
  expectForces(beam.compatible(load, {1, 1, 1}, 1.5), {1, 125, 343}, 1e-10);
  expectForces(beam.compatible({1, 125, 343}, {1, 1, 1}), {0, 127, 342}, 1e-12);
  // Hertz with stiffness 2 everywhere: the same forces (k scales out of the overlaps).
  expectForces(beam.compatible({1, 125, 343}, {2, 2, 2}, 1.5), {1, 125, 343}, 1e-10);
}

TEST(CompatibleForces, DeterminateCasesReturnTheSolverForces) {
  {
    SupportedBody sphere({Vec3::Zero()});
    const Real p = 0.0123;
    const std::vector<Real> out = sphere.compatible({p}, {1.0});
    EXPECT_NEAR(out[0], p, 1e-12 * p);
    const std::vector<Real> hertz = sphere.compatible({p}, {3.0}, 1.5);
    EXPECT_NEAR(hertz[0], p, 1e-12 * p);
  }
  {
    // Two supports (capsule-like): force and one moment fix both values, even off-centre.
    SupportedBody rod({Vec3(-0.4, 0, 0), Vec3(0.4, 0, 0)});
    for (const Real exponent : {1.0, 1.5}) {
      const std::vector<Real> out = rod.compatible({3.0, 7.0}, {1.0, 5.0}, exponent);
      EXPECT_NEAR(out[0], 3.0, 3e-12);
      EXPECT_NEAR(out[1], 7.0, 7e-12);
    }
  }
}

TEST(CompatibleForces, FrictionOnAnInclineStaysUntouched) {
  // Box at rest on an incline, in slope coordinates: x down the slope, z the slope normal.
  // Contacts at (+-a, +-b, -c); friction T (total, along -x) at the base tilts the normal
  // load: sum x_i f_i = c T, so f_i = N/4 + c T x_i / (4 a^2) for equal stiffness.
  const Real a = 0.3, b = 0.2, c = kHalfHeight, theta = 0.3, weight = 20.0;
  const Real normal = weight * std::cos(theta), tangential = weight * std::sin(theta);
  const std::vector<Vec3> supports = {Vec3(a, b, 0), Vec3(-a, b, 0), Vec3(-a, -b, 0),
                                      Vec3(a, -b, 0)};
  SupportedBody box(supports);
  std::vector<Vec3> percussions;
  std::vector<Real> want;
  for (std::size_t i = 0; i < supports.size(); ++i) {
    const Vec3& p = supports[i];
    const Real f = normal / 4 + c * tangential * p.x() / (4 * a * a);
    want.push_back(f);
    const Vec3 friction(-tangential / 4, 0, 0);  // on the box, I frame
    const Real selfStress = 0.8 * (p.x() * p.y() > 0 ? 1.0 : -1.0);
    percussions.emplace_back(f + selfStress, friction.dot(box.scene.contacts.tangent1(i)),
                             friction.dot(box.scene.contacts.tangent2(i)));
  }
  CompatibleForceSolver solver;
  CompatibleForceSettings settings;
  settings.tolerance = 1e-13;
  std::vector<Vec3> out;
  const std::vector<Real> k(4, 1.0);
  ASSERT_TRUE(
      solver.solve(box.scene.bodies, box.scene.contacts, percussions, k, settings, out).converged);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_NEAR(out[i].x(), want[i], 1e-12 * normal);
    EXPECT_EQ(out[i].y(), percussions[i].y());
    EXPECT_EQ(out[i].z(), percussions[i].z());
  }
}

TEST(CompatibleForces, SpherePyramidWithRoundOffLeverArmsGetsTheElasticForces) {
  // A pyramid of unit-diameter spheres of weight w: four spheres in the pockets of a fixed
  // 3 x 3 base, one on top of them. Contact normals (from the lower sphere up) are
  // (+-1/2, +-1/2, b), b = 1/sqrt(2). Equal springs: the top sphere's four contacts carry
  // w / (4 b) = sqrt(2) w / 4 each; a sphere of the second layer carries w plus the top
  // sphere's push, and its pocket contacts get (5 + e) sqrt(2) w / 16 with e = 2 from the
  // base sphere diagonally away from the top, -2 from the one under it, 0 from the other two.
  // The lever arms are computed as the collision detector does (contact point minus centre),
  // so they are central only up to round-off, plus a perpendicular 1e-16 r so that every arm is
  // off-centre by round-off on any platform: the rotations of the spheres must stay out of the
  // problem instead of making the round-off torques equations that fix every force.
  const Real w = 0.7, r = 0.5, b = 1.0 / std::sqrt(2.0);
  const Vec3 origin(0.123, 0.456, 0.789);
  test::SolverScene scene;
  std::vector<std::size_t> base, middle;
  std::vector<Vec3> basePos, middlePos;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) {
      base.push_back(scene.addFixed());
      basePos.push_back(origin + Vec3(i, j, 0));
    }
  }
  const Real m = w / 9.81;
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 2; ++i) {
      middlePos.push_back(origin + Vec3(i + 0.5, j + 0.5, b));
      middle.push_back(scene.addSphere(m, r, middlePos.back()));
    }
  }
  const Vec3 topPos = origin + Vec3(1, 1, 2 * b);
  const std::size_t top = scene.addSphere(m, r, topPos);
  std::vector<Real> want, solver;
  Real largestRoundOffArm = 0.0;
  auto addContact = [&](std::size_t ia, const Vec3& cA, std::size_t ib, const Vec3& cB) {
    const Vec3 d = cB - cA;
    const Vec3 n = d / d.norm();
    const Vec3 offCentre = n.cross(Vec3(0.6, 0.8, 0.0)).normalized() * (1e-16 * r);
    const Vec3 rA = (cA + r * n) - cA + offCentre;
    const Vec3 rB = (cB - r * n) - cB - offCentre;
    largestRoundOffArm = std::max({largestRoundOffArm, rA.cross(n).norm(), rB.cross(n).norm()});
    scene.contacts.add(static_cast<std::uint32_t>(ia), static_cast<std::uint32_t>(ib), n,
                       d.norm() - 2 * r, rA, rB);
  };
  // The solver's answer: a self-stressed one. The top sphere rests on two diagonal contacts
  // only (w / (2 b) each); every second-layer sphere splits its load over its pocket by least
  // squares (non-negative here).
  for (std::size_t k = 0; k < middle.size(); ++k) {
    const bool loaded = k == 0 || k == 3;  // the top's diagonal pair (-,-) and (+,+)
    const Vec3 out = (middlePos[k] - topPos).cwiseProduct(Vec3(1, 1, 0)).normalized();
    const Vec3 push =
        loaded ? Vec3(w / (2 * b) * (middlePos[k] - topPos).normalized()) : Vec3(0, 0, 0);
    const Vec3 load = Vec3(0, 0, w) - push;  // the pocket contacts' resultant on the sphere
    Mat3 ntn = Mat3::Zero();
    std::vector<std::size_t> pocket;
    for (std::size_t i = 0; i < base.size(); ++i) {
      if ((basePos[i] - middlePos[k]).cwiseAbs().head<2>().maxCoeff() < 0.6) {
        pocket.push_back(i);
        const Vec3 n = (middlePos[k] - basePos[i]).normalized();
        ntn += n * n.transpose();
      }
    }
    ASSERT_EQ(pocket.size(), 4u);
    const Vec3 y = ntn.inverse() * load;
    for (const std::size_t i : pocket) {
      addContact(base[i], basePos[i], middle[k], middlePos[k]);
      const Vec3 n = (middlePos[k] - basePos[i]).normalized();
      solver.push_back(n.dot(y));
      const Real e =
          2.0 * out.dot((basePos[i] - middlePos[k]).cwiseProduct(Vec3(1, 1, 0)).normalized());
      want.push_back((5.0 + std::round(e)) * std::sqrt(2.0) * w / 16.0);
    }
  }
  for (std::size_t k = 0; k < middle.size(); ++k) {
    addContact(middle[k], middlePos[k], top, topPos);
    solver.push_back(k == 0 || k == 3 ? w / (2 * b) : 0.0);
    want.push_back(std::sqrt(2.0) * w / 4.0);
  }
  ASSERT_GT(largestRoundOffArm, 0.0);  // the case this test is about
  ASSERT_LT(largestRoundOffArm, 1e-14);
  for (const Real f : solver) {
    ASSERT_GE(f, 0.0);
  }
  CompatibleForceSolver s;
  CompatibleForceSettings settings;
  settings.tolerance = 1e-13;
  std::vector<Real> out;
  const CompatibleForceStats stats = s.solve(scene.bodies, scene.contacts, solver,
                                             std::vector<Real>(solver.size(), 1.0), settings, out);
  EXPECT_TRUE(stats.converged);
  expectForces(out, want, 1e-12);
}

TEST(CompatibleForces, StiffnessFromMaterialPairsAndValidation) {
  SupportedBody beam(beamSupports());
  ContactParameterMap map;
  ContactParameter p;
  p.relativeStiffness = 4.0;
  map.set(0, 0, p);
  std::vector<Real> k;
  contactRelativeStiffness(beam.scene.bodies, beam.scene.contacts, map, k);
  EXPECT_EQ(k, std::vector<Real>(3, 4.0));
  p.relativeStiffness = 0.0;
  EXPECT_THROW(map.set(0, 1, p), Error);
  CompatibleForceSolver solver;
  CompatibleForceSettings settings;
  settings.exponent = 0.5;
  std::vector<Real> out;
  const std::vector<Real> f = {1, 1, 1};
  EXPECT_THROW(solver.solve(beam.scene.bodies, beam.scene.contacts, f, k, settings, out), Error);
}

TEST(CompatibleForces, NoLoadGivesZeroForces) {
  SupportedBody beam(beamSupports());
  const std::vector<Real> out = beam.compatible({0, 0, 0}, {1, 1, 1});
  EXPECT_EQ(out, std::vector<Real>(3, 0.0));
}

}  // namespace
}  // namespace grain
