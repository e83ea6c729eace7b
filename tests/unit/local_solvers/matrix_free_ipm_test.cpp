// SPDX-License-Identifier: MIT
// The interior point method on the matrix-free Delassus operator (MatrixFreeProblem, solveIpm):
// the assembled IPM's convex relaxation solved with the Newton systems by preconditioned
// conjugate gradients. On the rows of FCLIB global problems (tests/data/fclib) and on a small pile
// it reaches the assembled IPM's solution (the same u, unique for the relaxation) to the
// tolerance of the relaxed measure, and it counts its products and reductions as documented.
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/core/solvers/matrix_free_problem.hpp>

#ifdef GRAIN_TEST_WITH_FCLIB
#include <grain/fclib/fclib_io.hpp>

#include "../../common/test_util.hpp"
#include "fclib_rows.hpp"
#endif

#include "pile_scene.hpp"

namespace grain {
namespace {

using test::pile;
using test::SolverScene;

ContactProblem problemOf(const SolverScene& s) {
  return ContactProblem{s.contacts, s.parameters, s.velocityStart, s.omegaBodyStart, s.dt};
}

LocalSolverSettings ipmSettings(Real tolerance) {
  LocalSolverSettings s;
  s.method = LocalSolverMethod::Ipm;
  s.tolerance = tolerance;
  return s;
}

/// ipmSettings with the Newton systems solved to 1e-10 and no polishing or APGD stage: the
/// interior point iterations alone, whose products and reductions follow a formula.
LocalSolverSettings interiorPointOnly(Real tolerance) {
  LocalSolverSettings s = ipmSettings(tolerance);
  s.ipmCgTolerance = 1e-10;
  s.ipmPolishSteps = 0;
  s.ipmApgdSteps = 0;
  return s;
}

/// Both IPMs reach the tolerance on the relaxed measure, the matrix-free one also measured on the
/// assembled problem (u = W r + q with the assembled W), and they agree on u to uTol |q|.
void expectSameSolution(const LocalProblem& assembled, MatrixFreeProblem& mf,
                        const LocalSolverSettings& settings, Real uTol, const std::string& name) {
  const LocalSolverResult a = solve(assembled, settings);
  LocalSolverResult b;
  solveIpm(mf, settings, nullptr, b);
  const std::uint32_t aIpm = a.iterations - a.polishSteps;
  const std::uint32_t bIpm = b.iterations - b.polishSteps;
  std::printf(
      "%s: %zu contacts; assembled %u IPM iterations + %u polishing, error %.3g; matrix-free %u "
      "IPM iterations + %u polishing, %u PCG iterations (%.1f per Newton system), %u W products, "
      "%u reductions, error %.3g, |du|/|q| %.3g\n",
      name.c_str(), mf.contactCount(), aIpm, a.polishSteps, a.error, bIpm, b.polishSteps,
      b.cgIterations, bIpm > 0 ? b.cgIterations / (2.0 * bIpm) : 0.0, b.delassusProducts,
      b.reductions, b.error, (a.u - b.u).norm() / assembled.q.norm());
  ASSERT_TRUE(a.converged) << name << " assembled IPM relaxed error " << a.error;
  ASSERT_TRUE(b.converged) << name << " matrix-free IPM relaxed error " << b.error;
  EXPECT_LE(b.error, settings.tolerance) << name;
  const LocalErrorEvaluator evaluator(assembled);
  EXPECT_LE(evaluator.relaxed(b.r, assembled.W * b.r + assembled.q), 1.01 * settings.tolerance)
      << name;
  EXPECT_LT((a.u - b.u).norm(), uTol * assembled.q.norm()) << name;
  EXPECT_GT(b.cgIterations, 0u) << name;
}

TEST(MatrixFreeIpm, SolvesTheAssembledRelaxationOnAPile) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    SolverScene s = pile(model);
    InclusionSolverSettings set;
    set.driftCorrectionGap = true;
    const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
    MatrixFreeProblem mf;
    mf.build(s.bodies, problemOf(s), set);
    expectSameSolution(assembled, mf, ipmSettings(1e-10), 1e-7,
                       model == ContactModel::UCFD ? "pile UCFD" : "pile UCF");
  }
}

// Without the polishing stages: one product for the start, one per PCG iteration and one per
// interior point iteration (u = W r + q); 4 reductions to set up (contact count, first error,
// mean diagonal, |p|_inf), 7 per iteration (x . y, predicted complementarity, two steps to the
// boundary, the error, the first residual of each PCG) and 2 per PCG iteration, and 1 for the
// polishing's scale.
TEST(MatrixFreeIpm, CountsProductsAndReductions) {
  SolverScene s = pile(ContactModel::UCF);
  const InclusionSolverSettings set;
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), set);
  LocalSolverSettings settings = interiorPointOnly(1e-9);
  LocalSolverResult b;
  solveIpm(mf, settings, nullptr, b);
  ASSERT_TRUE(b.converged) << b.error;
  ASSERT_EQ(b.polishSteps, 0u);
  EXPECT_GT(b.iterations, 3u);
  EXPECT_EQ(b.delassusProducts, 1 + b.cgIterations + b.iterations);
  EXPECT_EQ(b.reductions, 4 + 7 * b.iterations + 2 * b.cgIterations + 1);
  // The initial guess is not used (an interior start is needed), but its size is checked.
  LocalSolverResult c;
  const VecX guess = VecX::Ones(b.r.size());
  solveIpm(mf, settings, &guess, c);
  EXPECT_EQ(c.iterations, b.iterations);
  EXPECT_EQ((c.r - b.r).norm(), 0.0);
  const VecX wrong = VecX::Ones(3);
  EXPECT_THROW(solveIpm(mf, settings, &wrong, c), Error);
}

// A sliding contact of the relaxation dilates: a sphere sliding on the floor (u_T of the free
// motion beyond the friction cone) separates with u_N = mu |u_T| instead of staying on the floor.
TEST(MatrixFreeIpm, SlidingContactDilates) {
  SolverScene s;
  s.addFixed();
  const Real r = 0.1;
  s.addSphere(1.0, r, Vec3(0.0, 0.0, r), Vec3(2.0, 0.0, -0.1));
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
  s.setLaw(0.3);
  s.prepare();
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  LocalSolverResult b;
  solveIpm(mf, ipmSettings(1e-10), nullptr, b);
  ASSERT_TRUE(b.converged) << b.error;
  const Vec3 u = b.u.head<3>();
  const Real slip = std::hypot(u.y(), u.z());
  ASSERT_GT(slip, 0.1);
  EXPECT_NEAR(u.x(), 0.3 * slip, 1e-8 * slip);
  // The Coulomb solution keeps the sphere on the floor: natural-map error far from 0.
  EXPECT_GT(mf.error(LocalErrorMeasure::NaturalMap, b.r, b.u, nullptr), 1e-3);
}

// Two bodies touching in space by four contacts (two of them with the bodies' roles swapped,
// W rank 6 < 12) and a third body on the floor by four contacts. The additive Schwarz
// subdomains are {the pair's contacts} twice (once per body, weight 1/sqrt(2) each) and {the
// floor contacts}: they hold every coupling of W, so the preconditioner is the exact inverse of
// the Newton matrix and PCG ends every Newton system after one iteration, where block-Jacobi
// needs several. Wrong coupling blocks W_ij (a sign, a missing rotational or linear part, a
// swapped side) would cost iterations.
SolverScene blocksScene() {
  SolverScene s;
  s.addFixed();
  const Real r = 0.1;
  const std::size_t lower =
      s.addSphere(1.0, r, Vec3(0.0, 0.0, 0.0), Vec3(0.1, 0.0, 0.2), Vec3(0.0, 0.5, 0.0));
  const std::size_t upper =
      s.addSphere(2.0, r, Vec3(0.0, 0.0, 0.2), Vec3(0.4, -0.2, -1.0), Vec3(1.0, 0.0, 2.0));
  const std::size_t single = s.addSphere(1.5, r, Vec3(1.0, 0.0, r), Vec3(0.3, 0.1, -0.8));
  s.bodies.orientations()[upper] = Quat(Eigen::AngleAxisd(0.4, Vec3(1.0, 2.0, 0.5).normalized()));
  const std::array<Vec3, 4> corners{Vec3(0.05, 0.05, 0.0), Vec3(-0.05, 0.04, 0.0),
                                    Vec3(-0.05, -0.06, 0.0), Vec3(0.04, -0.05, 0.0)};
  for (std::size_t k = 0; k < corners.size(); ++k) {
    const auto a = static_cast<std::uint32_t>(k % 2 == 0 ? lower : upper);
    const auto b = static_cast<std::uint32_t>(k % 2 == 0 ? upper : lower);
    const Vec3 point = corners[k] + Vec3(0.0, 0.0, r);  // on the plane z = r between them
    const Vec3 n = k % 2 == 0 ? Vec3::UnitZ() : Vec3(-Vec3::UnitZ());
    s.contacts.add(a, b, n, 0.0, point - s.bodies.positions()[a], point - s.bodies.positions()[b]);
    s.contacts.add(0, static_cast<std::uint32_t>(single), Vec3::UnitZ(), 0.0,
                   corners[k] + s.bodies.positions()[single] - Vec3(0.0, 0.0, r),
                   corners[k] - Vec3(0.0, 0.0, r));
  }
  s.setLaw(0.3);
  s.prepare();
  return s;
}

TEST(MatrixFreeIpm, AdditiveSchwarzIsExactWhereItsSubdomainsHoldEveryCoupling) {
  SolverScene s = blocksScene();
  MatrixFreeProblem mf;
  mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
  ASSERT_EQ(mf.contactCount(), 8u);
  LocalSolverSettings settings = ipmSettings(1e-6);
  settings.ipmPolishSteps = 0;
  settings.ipmApgdSteps = 0;
  // The first interior point iterations (the Newton matrices still well conditioned): one PCG
  // iteration per Newton system, two systems per interior point iteration.
  settings.ipmMaxIter = 4;
  settings.ipmPreconditioner = IpmPreconditioner::AdditiveSchwarz;
  LocalSolverResult first;
  solveIpm(mf, settings, nullptr, first);
  ASSERT_EQ(first.iterations, 4u);
  EXPECT_EQ(first.cgIterations, 2 * first.iterations);
  settings.ipmPreconditioner = IpmPreconditioner::BlockJacobi;
  solveIpm(mf, settings, nullptr, first);
  EXPECT_GT(first.cgIterations, 6 * first.iterations);
  // To the tolerance: near the solution the Newton matrices' condition number passes 1e14 and
  // the inverse is no longer exact in double precision, but Schwarz still needs far fewer
  // iterations, and both end on the same u.
  settings.ipmMaxIter = 100;
  LocalSolverResult jacobi;
  solveIpm(mf, settings, nullptr, jacobi);
  settings.ipmPreconditioner = IpmPreconditioner::AdditiveSchwarz;
  LocalSolverResult schwarz;
  solveIpm(mf, settings, nullptr, schwarz);
  std::printf(
      "blocks: block-Jacobi %u IPM iterations, %u PCG iterations; additive Schwarz %u, %u\n",
      jacobi.iterations, jacobi.cgIterations, schwarz.iterations, schwarz.cgIterations);
  ASSERT_TRUE(jacobi.converged) << jacobi.error;
  ASSERT_TRUE(schwarz.converged) << schwarz.error;
  EXPECT_LT(5 * schwarz.cgIterations, jacobi.cgIterations);
  EXPECT_EQ(schwarz.delassusProducts, 1 + schwarz.cgIterations + schwarz.iterations);
  EXPECT_LT((schwarz.u - jacobi.u).norm(), 1e-5 * mf.q().norm());
}

// With the default polishing stages the pile converges with either preconditioner, to the same
// solution. (With additive Schwarz and ipmCgTolerance 1e-6 the UCF pile's interior point
// iterations stall short of the tolerance until ipmMaxIter, with one or two PCG iterations per
// Newton system, and the polishing step ends the solve: 503 products against block-Jacobi's
// 251; docs/solvers.md.) With the Newton systems solved to 1e-10, the interior point iterations
// alone converge, with the product and reduction counts of block-Jacobi's formula and fewer
// products (353 against 451).
TEST(MatrixFreeIpm, AdditiveSchwarzSolvesThePile) {
  {
    SolverScene s = pile(ContactModel::UCF);
    MatrixFreeProblem mf;
    mf.build(s.bodies, problemOf(s), InclusionSolverSettings{});
    LocalSolverSettings settings = interiorPointOnly(1e-9);
    LocalSolverResult jacobi;
    solveIpm(mf, settings, nullptr, jacobi);
    settings.ipmPreconditioner = IpmPreconditioner::AdditiveSchwarz;
    LocalSolverResult b;
    solveIpm(mf, settings, nullptr, b);
    ASSERT_TRUE(b.converged) << b.error;
    ASSERT_EQ(b.polishSteps, 0u);
    EXPECT_EQ(b.delassusProducts, 1 + b.cgIterations + b.iterations);
    EXPECT_EQ(b.reductions, 4 + 7 * b.iterations + 2 * b.cgIterations + 1);
    EXPECT_LT(b.delassusProducts, jacobi.delassusProducts);
    EXPECT_LT((b.u - jacobi.u).norm(), 1e-7 * mf.q().norm());
  }
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    SolverScene s = pile(model);
    InclusionSolverSettings set;
    set.driftCorrectionGap = true;
    const LocalProblem assembled = assembleLocalProblem(s.bodies, problemOf(s), set);
    MatrixFreeProblem mf;
    mf.build(s.bodies, problemOf(s), set);
    LocalSolverSettings settings = ipmSettings(1e-10);
    settings.ipmPreconditioner = IpmPreconditioner::AdditiveSchwarz;
    expectSameSolution(assembled, mf, settings, 1e-7,
                       model == ContactModel::UCFD ? "pile UCFD, Schwarz" : "pile UCF, Schwarz");
  }
}

#ifdef GRAIN_TEST_WITH_FCLIB

// FCLIB global problems of tests/data/fclib, as contact rows (fclib_rows.hpp): the matrix-free
// IPM ends on the assembled IPM's solution of the condensed problem.
TEST(MatrixFreeIpm, SolvesTheAssembledRelaxationOnFclibProblems) {
  for (const char* name : test::kFclibGlobalProblems) {
    SCOPED_TRACE(name);
    LocalProblem condensed;
    test::GlobalRows rows;
    test::loadFclibRows(name, condensed, rows);
    if (HasFatalFailure()) {
      return;
    }
    MatrixFreeProblem mf;
    mf.assign(rows.bodies, rows.contacts, condensed.q);
    ASSERT_EQ(mf.contactCount(), condensed.contactCount());
    // spheres-in-a-box: 256 contacts on 98 spheres, W rank-deficient; from the 7th interior point
    // iteration on, PCG stops at ipmCgMaxIter with a relative residual near 1e-4 (the sticking
    // contacts' redundant directions are held only by G^-2, of the order of x . y), and the
    // iteration stalls near a relaxed error of 1e-5; the APGD stage then reaches 1e-6
    // (docs/solvers.md).
    const bool hard = std::string(name).starts_with("spheres-in-a-box");
    expectSameSolution(condensed, mf, ipmSettings(hard ? 1e-6 : 1e-10), hard ? 1e-3 : 1e-6, name);
  }
}

// Additive Schwarz per body against block-Jacobi on the FCLIB problems: the same solution (both
// on the assembled one to its tolerance), and fewer products with W (docs/solvers.md): more
// than 10 times fewer on spheres-in-a-box (W rank-deficient, the sticking contacts' redundant
// directions coupled through the shared spheres), 5 times fewer on Box_Stacks, less than 5/4 of
// block-Jacobi's on Spheres-i099 (a sixth fewer measured).
TEST(MatrixFreeIpm, AdditiveSchwarzNeedsFewerProductsOnFclibProblems) {
  for (const char* name : test::kFclibGlobalProblems) {
    SCOPED_TRACE(name);
    LocalProblem condensed;
    test::GlobalRows rows;
    test::loadFclibRows(name, condensed, rows);
    if (HasFatalFailure()) {
      return;
    }
    MatrixFreeProblem mf;
    mf.assign(rows.bodies, rows.contacts, condensed.q);
    const bool hard = std::string(name).starts_with("spheres-in-a-box");
    LocalSolverSettings settings = ipmSettings(hard ? 1e-6 : 1e-10);
    LocalSolverResult jacobi;
    solveIpm(mf, settings, nullptr, jacobi);
    settings.ipmPreconditioner = IpmPreconditioner::AdditiveSchwarz;
    expectSameSolution(condensed, mf, settings, hard ? 1e-3 : 1e-6,
                       std::string(name) + ", Schwarz");
    LocalSolverResult schwarz;
    solveIpm(mf, settings, nullptr, schwarz);
    ASSERT_TRUE(jacobi.converged) << jacobi.error;
    ASSERT_TRUE(schwarz.converged) << schwarz.error;
    EXPECT_LT((schwarz.u - jacobi.u).norm(), (hard ? 1e-3 : 1e-6) * condensed.q.norm());
    // Measured: 692 against 16349, 63 against 1268, 1064 against 1280.
    if (hard) {
      EXPECT_LT(10 * schwarz.delassusProducts, jacobi.delassusProducts);
    } else if (std::string(name).starts_with("Box_Stacks")) {
      EXPECT_LT(5 * schwarz.delassusProducts, jacobi.delassusProducts);
    } else {
      EXPECT_LT(4 * schwarz.delassusProducts, 5 * jacobi.delassusProducts);
    }
  }
}

#endif  // GRAIN_TEST_WITH_FCLIB

}  // namespace
}  // namespace grain
