// SPDX-License-Identifier: MIT
// Mass splitting (thesis ch. 13): a body whose contacts are solved on two processes, as two copies
// with half the mass whose velocities are averaged, gives the solution of the unsplit problem.
// The two "processes" are two solvers on two threads joined by an in-memory exchange. The
// matrix-free Delassus operator keeps the split body whole and sums its copies' impulses instead:
// its products and its APGD solve equal the serial ones.
#include <array>
#include <barrier>
#include <cmath>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>
#include <grain/core/timestepping/exchange.hpp>

#include "solver_test_scene.hpp"

namespace grain {
namespace {

using test::SolverScene;

/// What the two threads share: one slot per side, and a barrier for both.
struct Meeting {
  std::barrier<> sync{2};
  std::array<Vec3, 2> velocity;
  std::array<Vec3, 2> omega;
  std::array<bool, 2> flag{};
  std::array<std::vector<Real>, 2> values;
};

/// One side of the two-process exchange: body `splitId` is shared; its copies are averaged.
class TwoSideExchange final : public SplitBodyExchange, public Reducer {
 public:
  TwoSideExchange(Meeting& meeting, int side, BodyId splitId, unsigned period)
      : meeting_(meeting), side_(side), splitId_(splitId), period_(period) {}

  void planSplits(const BodyStorage&, const ContactStorage&, std::vector<std::uint32_t>&,
                  std::vector<detail::PercussionCacheEntry>&) override {}
  bool beginSolve(const BodyStorage& bodies, std::span<const std::uint32_t> storageIndex) override {
    for (std::size_t k = 0; k < storageIndex.size(); ++k) {
      if (bodies.ids()[storageIndex[k]] == splitId_) {
        slot_ = k;
      }
    }
    return true;
  }
  unsigned period() const override { return period_; }
  unsigned checkRatio() const override { return 1; }
  void average(std::span<Vec3> velocity, std::span<Vec3> omega) override {
    ++averagings;
    meeting_.velocity[side_] = velocity[slot_];
    meeting_.omega[side_] = omega[slot_];
    mean(velocity, omega);
  }
  // The overlapped halves: the copy is sent at the start; it must not change until the finish.
  void startAverage(std::span<const Vec3> velocity, std::span<const Vec3> omega) override {
    ++averagings;
    ++started;
    ++starts;
    meeting_.velocity[side_] = velocity[slot_];
    meeting_.omega[side_] = omega[slot_];
  }
  void finishAverage(std::span<Vec3> velocity, std::span<Vec3> omega) override {
    if (started == 0) {
      average(velocity, omega);
      return;
    }
    --started;
    unchangedSinceStart = unchangedSinceStart && velocity[slot_] == meeting_.velocity[side_] &&
                          omega[slot_] == meeting_.omega[side_];
    mean(velocity, omega);
  }
  void mean(std::span<Vec3> velocity, std::span<Vec3> omega) {
    meeting_.sync.arrive_and_wait();
    const Vec3 v = 0.5 * (meeting_.velocity[0] + meeting_.velocity[1]);
    const Vec3 w = 0.5 * (meeting_.omega[0] + meeting_.omega[1]);
    meeting_.sync.arrive_and_wait();
    velocity[slot_] = v;
    omega[slot_] = w;
  }
  void sum(std::span<Vec3> linear, std::span<Vec3> angular) override {
    ++sums;
    meeting_.velocity[side_] = linear[slot_];
    meeting_.omega[side_] = angular[slot_];
    meeting_.sync.arrive_and_wait();
    const Vec3 p = meeting_.velocity[0] + meeting_.velocity[1];
    const Vec3 l = meeting_.omega[0] + meeting_.omega[1];
    meeting_.sync.arrive_and_wait();
    linear[slot_] = p;
    angular[slot_] = l;
  }
  Reducer& coupledReducer() override { return *this; }

  bool distributed() const override { return true; }
  bool allTrue(bool local) override {
    meeting_.flag[side_] = local;
    meeting_.sync.arrive_and_wait();
    const bool all = meeting_.flag[0] && meeting_.flag[1];
    meeting_.sync.arrive_and_wait();
    return all;
  }
  void sum(std::span<Real> values) override {
    ++reductions;
    combine(values, [](Real a, Real b) { return a + b; });
  }
  void max(std::span<Real> values) override {
    combine(values, [](Real a, Real b) { return std::max(a, b); });
  }

  int averagings = 0;
  int sums = 0;
  int reductions = 0;  // sum(std::span<Real>) calls
  int started = 0;     // startAverage() calls not yet finished
  int starts = 0;      // startAverage() calls in all
  bool unchangedSinceStart = true;

 private:
  template <class Op>
  void combine(std::span<Real> values, Op op) {
    meeting_.values[side_].assign(values.begin(), values.end());
    meeting_.sync.arrive_and_wait();
    for (std::size_t k = 0; k < values.size(); ++k) {
      values[k] = op(meeting_.values[0][k], meeting_.values[1][k]);
    }
    meeting_.sync.arrive_and_wait();
  }

  Meeting& meeting_;
  int side_;
  BodyId splitId_;
  unsigned period_;
  std::size_t slot_ = 0;
};

/// Two spheres on a floor and a third resting on both, pushed and spinning so that friction
/// acts. Contacts: 0 floor-1, 1 floor-2, 2 sphere1-top, 3 sphere2-top. `keep` selects contacts.
SolverScene pile(const std::vector<int>& keep) {
  SolverScene s;
  const Real r = 0.05;
  s.addFixed();
  s.addSphere(1.0, r, Vec3(0.0, 0.0, r), Vec3(0.05, 0.0, -0.1));
  s.addSphere(1.2, r, Vec3(0.12, 0.0, r), Vec3(-0.02, 0.01, -0.05));
  const Vec3 c0(0.0, 0.0, r), c1(0.12, 0.0, r);
  const Real h = std::sqrt(4.0 * r * r - 0.06 * 0.06);
  const Vec3 c2(0.06, 0.0, r + h);
  s.addSphere(0.8, r, c2, Vec3(0.1, 0.0, -0.2), Vec3(0.0, 3.0, 1.0));
  const Vec3 n02 = (c2 - c0).normalized();
  const Vec3 n12 = (c2 - c1).normalized();
  for (const int c : keep) {
    switch (c) {
      case 0:
        s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
        break;
      case 1:
        s.contacts.add(0, 2, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
        break;
      case 2:
        s.contacts.add(1, 3, n02, 0.0, r * n02, -r * n02);
        break;
      default:
        s.contacts.add(2, 3, n12, 0.0, r * n12, -r * n12);
        break;
    }
  }
  s.setLaw(0.3);
  s.prepare();
  return s;
}

InclusionSolverSettings tight() {
  InclusionSolverSettings set;
  set.convergenceMethod = ConvergenceMethod::InVelocity;
  set.absTol = 1e-15;
  set.relTol = 1e-13;
  set.maxIter = 200000;
  return set;
}

/// Solves the two halves on two threads; returns their final velocities.
struct SplitResult {
  std::array<std::vector<Vec3>, 2> velocity;
  std::array<std::vector<Vec3>, 2> omega;
  std::array<SolverStats, 2> stats;
  std::array<int, 2> averagings{};
  std::array<bool, 2> unchangedSinceStart{};
  std::array<int, 2> starts{};
};

/// overlapped: each side's contact with the top sphere first (ContactProblem::splitContacts = 1),
/// so that the solver sends the copies' velocities before it sweeps the floor contact.
SplitResult solveSplit(unsigned period, bool overlapped = false) {
  // Side 0 solves floor-1 and 1-top, side 1 floor-2 and 2-top; the top sphere (index 3) has
  // contacts on both sides and is split into two copies of half its mass.
  std::array<SolverScene, 2> scenes = overlapped
                                          ? std::array<SolverScene, 2>{pile({2, 0}), pile({3, 1})}
                                          : std::array<SolverScene, 2>{pile({0, 2}), pile({1, 3})};
  Meeting meeting;
  const BodyId top = scenes[0].bodies.ids()[3];
  std::array<TwoSideExchange, 2> exchanges{TwoSideExchange(meeting, 0, top, period),
                                           TwoSideExchange(meeting, 1, top, period)};
  const std::vector<std::uint32_t> multiplicity{1, 1, 1, 2};
  SplitResult out;
  auto run = [&](int side) {
    SolverScene& s = scenes[side];
    ContactSolver solver(tight());
    const ContactProblem problem{s.contacts, s.parameters, s.velocityStart,     s.omegaBodyStart,
                                 s.dt,       multiplicity, overlapped ? 1u : 0u};
    out.stats[side] = solver.solve(s.bodies, problem, &exchanges[side]);
    out.velocity[side] = s.bodies.velocities();
    out.omega[side] = s.bodies.omegasBody();
    out.averagings[side] = exchanges[side].averagings;
    out.starts[side] = exchanges[side].starts;
    out.unchangedSinceStart[side] =
        exchanges[side].unchangedSinceStart && exchanges[side].started == 0;
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  return out;
}

TEST(MassSplitting, TwoCopiesMatchTheUnsplitSolve) {
  SolverScene whole = pile({0, 1, 2, 3});
  ContactSolver solver(tight());
  ASSERT_TRUE(whole.solve(solver).converged);
  // Friction is active: the reference is not a frictionless special case.
  bool sticking = false;
  for (const Vec3& p : solver.percussions()) {
    sticking = sticking || p.tail<2>().norm() > 1e-6;
  }
  ASSERT_TRUE(sticking);

  for (const auto& [period, overlapped] :
       {std::pair{1u, false}, std::pair{3u, false}, std::pair{1u, true}, std::pair{3u, true}}) {
    SCOPED_TRACE("splitNodeUpdateRatio " + std::to_string(period) +
                 (overlapped ? ", overlapped" : ""));
    const SplitResult split = solveSplit(period, overlapped);
    // Overlapped: the copy sent at the start is the one averaged at the finish.
    EXPECT_TRUE(split.unchangedSinceStart[0] && split.unchangedSinceStart[1]);
    EXPECT_EQ(split.starts[0], overlapped ? split.averagings[0] : 0);
    ASSERT_TRUE(split.stats[0].converged);
    ASSERT_TRUE(split.stats[1].converged);
    // Both sides stop together, after an averaging.
    EXPECT_EQ(split.stats[0].iterations, split.stats[1].iterations);
    EXPECT_EQ(split.averagings[0], split.averagings[1]);
    EXPECT_GT(split.averagings[0], 0);
    // The copies of the split body leave with the same velocity, bit for bit.
    EXPECT_EQ(split.velocity[0][3], split.velocity[1][3]);
    EXPECT_EQ(split.omega[0][3], split.omega[1][3]);
    // Each body's velocity (from the side that solved it) equals the unsplit solution.
    const Real tol = 1e-9;
    EXPECT_LT((split.velocity[0][1] - whole.bodies.velocities()[1]).norm(), tol);
    EXPECT_LT((split.omega[0][1] - whole.bodies.omegasBody()[1]).norm(), tol);
    EXPECT_LT((split.velocity[1][2] - whole.bodies.velocities()[2]).norm(), tol);
    EXPECT_LT((split.omega[1][2] - whole.bodies.omegasBody()[2]).norm(), tol);
    EXPECT_LT((split.velocity[0][3] - whole.bodies.velocities()[3]).norm(), tol);
    EXPECT_LT((split.omega[0][3] - whole.bodies.omegasBody()[3]).norm(), tol);
  }
}

// Without averaging, the two halves are not the same problem: each copy would carry the whole
// body's inertia against half the contacts. This is what the averaging fixes (a check that the
// test above could fail).
TEST(MassSplitting, WithoutAveragingTheHalvesDisagree) {
  SolverScene whole = pile({0, 1, 2, 3});
  ContactSolver solver(tight());
  whole.solve(solver);
  SolverScene half = pile({0, 2});
  ContactSolver halfSolver(tight());
  half.solve(halfSolver);
  EXPECT_GT((half.bodies.velocities()[3] - whole.bodies.velocities()[3]).norm(), 1e-3);
}

/// Percussions of the four contacts of pile({0, 1, 2, 3}) (contact frames, N s): not a solution,
/// just a fixed vector with normal and tangential parts.
VecX fixedPercussions() {
  VecX x(12);
  for (int k = 0; k < 12; ++k) {
    x[k] = (k % 3 == 0 ? 2e-3 : 5e-4) * std::sin(1.3 * k + 0.4);
  }
  return x;
}

/// The rows of `whole` (4 contacts) that side `side` solves: contacts {0, 2} or {1, 3}.
VecX sideRows(const VecX& whole, int side) {
  VecX out(6);
  out.head<3>() = whole.segment<3>(3 * side);
  out.tail<3>() = whole.segment<3>(3 * (side + 2));
  return out;
}

LocalSolverSettings apgdSettings() {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Apgd;
  s.tolerance = 1e-10;
  s.maxIter = 100000;
  return s;
}

LocalSolverSettings pqnSettings() {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Pqn;
  s.tolerance = 1e-12;
  return s;
}

/// What the two sides of a matrix-free solve give back.
struct MatrixFreeSides {
  std::array<VecX, 2> product;   ///< W x on the side's rows, with the split body's impulses summed
  std::array<VecX, 2> unsummed;  ///< the same without the sum
  std::array<LocalSolverResult, 2> apgd;
  std::array<LocalSolverResult, 2> pqn;
  std::array<int, 2> pqnSums{};  ///< reductions and body sums of the PQN solve
  std::array<Real, 2> naturalMap{};
  std::array<std::vector<Vec3>, 2> velocity;
  std::array<std::vector<Vec3>, 2> omega;
  std::array<int, 2> sums{};
};

MatrixFreeSides solveMatrixFreeSides() {
  std::array<SolverScene, 2> scenes{pile({0, 2}), pile({1, 3})};
  Meeting meeting;
  const BodyId top = scenes[0].bodies.ids()[3];
  std::array<TwoSideExchange, 2> exchanges{TwoSideExchange(meeting, 0, top, 1),
                                           TwoSideExchange(meeting, 1, top, 1)};
  const std::vector<std::uint32_t> multiplicity{1, 1, 1, 2};
  const VecX x = fixedPercussions();
  MatrixFreeSides out;
  auto run = [&](int side) {
    SolverScene& s = scenes[side];
    InclusionSolverSettings settings;
    const ContactProblem problem{s.contacts,       s.parameters, s.velocityStart,
                                 s.omegaBodyStart, s.dt,         multiplicity};
    MatrixFreeProblem mf;
    mf.build(s.bodies, problem, settings);
    TwoSideExchange& ex = exchanges[side];
    ex.beginSolve(s.bodies, mf.bodyStorageIndex());
    mf.delassus().multiply(
        sideRows(x, side), out.product[side],
        [&](std::span<Vec3> linear, std::span<Vec3> angular) { ex.sum(linear, angular); });
    mf.delassus().multiply(sideRows(x, side), out.unsummed[side]);
    const int before = ex.sums + ex.reductions;
    solvePqn(mf, pqnSettings(), nullptr, out.pqn[side], &ex, &ex);
    out.pqnSums[side] = ex.sums + ex.reductions - before;
    solveApgd(mf, apgdSettings(), nullptr, out.apgd[side], &ex, &ex);
    out.naturalMap[side] =
        mf.error(LocalErrorMeasure::NaturalMap, out.apgd[side].r, out.apgd[side].u, &ex);
    mf.applyPercussions(s.bodies, out.apgd[side].r, &ex);
    out.velocity[side] = s.bodies.velocities();
    out.omega[side] = s.bodies.omegasBody();
    out.sums[side] = ex.sums;
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  return out;
}

TEST(MassSplitting, MatrixFreeProductSumsTheSplitBodysImpulses) {
  SolverScene whole = pile({0, 1, 2, 3});
  const ContactProblem problem{whole.contacts, whole.parameters, whole.velocityStart,
                               whole.omegaBodyStart, whole.dt};
  MatrixFreeProblem mf;
  mf.build(whole.bodies, problem, InclusionSolverSettings{});
  VecX y;
  mf.delassus().multiply(fixedPercussions(), y);
  const MatrixFreeSides sides = solveMatrixFreeSides();
  for (int side = 0; side < 2; ++side) {
    SCOPED_TRACE("side " + std::to_string(side));
    const VecX serial = sideRows(y, side);
    // Every row, the split body's contact among them, is the serial product to round-off.
    EXPECT_LT((sides.product[side] - serial).lpNorm<Eigen::Infinity>(),
              1e-14 * serial.lpNorm<Eigen::Infinity>());
    // Without the sum the split body's row misses the other side's impulse (the test can fail).
    EXPECT_GT((sides.unsummed[side] - serial).tail<3>().norm(), 1e-3 * serial.tail<3>().norm());
  }
}

TEST(MassSplitting, MatrixFreeApgdOnTwoSidesIsTheSerialApgd) {
  SolverScene whole = pile({0, 1, 2, 3});
  const ContactProblem problem{whole.contacts, whole.parameters, whole.velocityStart,
                               whole.omegaBodyStart, whole.dt};
  MatrixFreeProblem mf;
  mf.build(whole.bodies, problem, InclusionSolverSettings{});
  LocalSolverResult serial;
  solveApgd(mf, apgdSettings(), nullptr, serial);
  ASSERT_TRUE(serial.converged);
  applyContactPercussions(whole.bodies, whole.contacts, serial.r);

  const MatrixFreeSides sides = solveMatrixFreeSides();
  const Real scale = serial.r.lpNorm<Eigen::Infinity>();
  for (int side = 0; side < 2; ++side) {
    SCOPED_TRACE("side " + std::to_string(side));
    const LocalSolverResult& r = sides.apgd[side];
    ASSERT_TRUE(r.converged);
    // The same iteration: the same step size, restarts and stop, so the same count and the
    // serial percussions up to round-off.
    EXPECT_EQ(r.iterations, serial.iterations);
    EXPECT_LT((r.r - sideRows(serial.r, side)).lpNorm<Eigen::Infinity>(), 1e-9 * scale);
    EXPECT_NEAR(sides.naturalMap[side], serial.error, 1e-3 * serial.error + 1e-15);
    EXPECT_GT(sides.sums[side], 2);  // the products and the final velocity update
  }
  // The copies of the split body leave with the same velocity, bit for bit, and every body with
  // the serial one.
  EXPECT_EQ(sides.velocity[0][3], sides.velocity[1][3]);
  EXPECT_EQ(sides.omega[0][3], sides.omega[1][3]);
  const Real tol = 1e-9;
  EXPECT_LT((sides.velocity[0][1] - whole.bodies.velocities()[1]).norm(), tol);
  EXPECT_LT((sides.omega[0][1] - whole.bodies.omegasBody()[1]).norm(), tol);
  EXPECT_LT((sides.velocity[1][2] - whole.bodies.velocities()[2]).norm(), tol);
  EXPECT_LT((sides.omega[1][2] - whole.bodies.omegasBody()[2]).norm(), tol);
  EXPECT_LT((sides.velocity[0][3] - whole.bodies.velocities()[3]).norm(), tol);
  EXPECT_LT((sides.omega[0][3] - whole.bodies.omegasBody()[3]).norm(), tol);
}

// Matrix-free PQN on the two sides, every norm and GMRES inner product summed over both: the
// serial Newton steps (the same count, the serial percussions to round-off), with both sides
// making the same number of collective calls.
TEST(MassSplitting, MatrixFreePqnOnTwoSidesIsTheSerialPqn) {
  SolverScene whole = pile({0, 1, 2, 3});
  const ContactProblem problem{whole.contacts, whole.parameters, whole.velocityStart,
                               whole.omegaBodyStart, whole.dt};
  MatrixFreeProblem mf;
  mf.build(whole.bodies, problem, InclusionSolverSettings{});
  LocalSolverResult serial;
  solvePqn(mf, pqnSettings(), nullptr, serial);
  ASSERT_TRUE(serial.converged);
  ASSERT_GT(serial.iterations, 1u);

  const MatrixFreeSides sides = solveMatrixFreeSides();
  const Real scale = serial.r.lpNorm<Eigen::Infinity>();
  EXPECT_EQ(sides.pqnSums[0], sides.pqnSums[1]);
  for (int side = 0; side < 2; ++side) {
    SCOPED_TRACE("side " + std::to_string(side));
    const LocalSolverResult& r = sides.pqn[side];
    ASSERT_TRUE(r.converged);
    EXPECT_EQ(r.iterations, serial.iterations);
    EXPECT_LT((r.r - sideRows(serial.r, side)).lpNorm<Eigen::Infinity>(), 1e-9 * scale);
    EXPECT_LE(r.error, pqnSettings().tolerance);
    // Without the global sums each side would stop on its own rows' error, not the serial one.
    EXPECT_NEAR(r.error, serial.error, 1e-3 * serial.error + 1e-15);
    EXPECT_GT(sides.pqnSums[side], 4 * static_cast<int>(serial.iterations));
  }
}

}  // namespace
}  // namespace grain
