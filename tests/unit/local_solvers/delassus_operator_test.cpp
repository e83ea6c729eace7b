// SPDX-License-Identifier: MIT
// The matrix-free Delassus operator (DelassusOperator) equals the assembled Delassus matrix
// (assembleLocalProblem) and a dense W_c^T M^-1 W_c built here from first principles, to
// round-off, on hand-built piles (hard and compliant contacts, a belt) and on sphere and box piles
// that grain's own collision detection builds; its body-sum stage combines partial sums as a
// distributed product needs.
#include <cmath>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include <grain/core/solvers/contact_rows.hpp>
#include <grain/core/solvers/delassus_operator.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/core/timestepping/exchange.hpp>

#ifdef GRAIN_TEST_WITH_FCLIB
#include <filesystem>

#include <grain/fclib/fclib_io.hpp>

#include "../../common/test_util.hpp"
#include "fclib_rows.hpp"
#endif

#include "../../physics/physics_fixture.hpp"
#include "pile_scene.hpp"

namespace grain {
namespace {

using test::pile;
using test::SolverScene;

constexpr Real kRoundOff = 1e-12;

/// The contact rows of a step and their operator.
struct Rows {
  detail::SolverBodies bodies;
  detail::SolverContacts contacts;
  detail::SolverRolling rolling;
  DelassusOperator op;

  Rows(const BodyStorage& b, const ContactProblem& problem, const InclusionSolverSettings& set) {
    detail::setupSolverBodies(b, problem, bodies);
    detail::setupSolverContacts(b, problem, set, bodies, contacts, rolling);
    op.bind(contacts, bodies);
  }
};

/// W = W_c^T M^-1 W_c (+ D / dt, identity rows of contacts without a simulated body) as a dense
/// matrix, from the contact storage and the bodies directly: per contact the columns
/// (A_IC; J) of body B and their negatives for body A, per simulated body the 6 x 6 inverse mass
/// diag(m^-1 I, A_IK Theta_K^-1 A_KI).
Eigen::MatrixXd denseDelassus(const BodyStorage& bodies, const ContactProblem& problem) {
  const ContactStorage& c = problem.contacts;
  const auto n = static_cast<Eigen::Index>(c.size());
  const auto nb = static_cast<Eigen::Index>(bodies.size());
  Eigen::MatrixXd wc = Eigen::MatrixXd::Zero(6 * nb, 3 * n);
  Eigen::MatrixXd mInv = Eigen::MatrixXd::Zero(6 * nb, 6 * nb);
  for (Eigen::Index b = 0; b < nb; ++b) {
    if (!bodies.isSimulated(static_cast<std::size_t>(b))) {
      continue;
    }
    const Mat3 rot = bodies.orientations()[b].toRotationMatrix();
    mInv.block<3, 3>(6 * b, 6 * b) = bodies.invMasses()[b] * Mat3::Identity();
    mInv.block<3, 3>(6 * b + 3, 6 * b + 3) =
        rot * bodies.invInertiasBody()[b].asDiagonal() * rot.transpose();
  }
  Eigen::MatrixXd extra = Eigen::MatrixXd::Zero(3 * n, 3 * n);
  for (Eigen::Index i = 0; i < n; ++i) {
    Mat3 frame;
    frame << c.normals()[i], c.tangent1(i), c.tangent2(i);
    const std::uint32_t a = c.bodyA()[i];
    const std::uint32_t b = c.bodyB()[i];
    const bool simA = bodies.isSimulated(a);
    const bool simB = bodies.isSimulated(b);
    auto column = [&](std::uint32_t body, const Vec3& r, Real sign) {
      Mat3 jac;
      for (int k = 0; k < 3; ++k) {
        jac.col(k) = r.cross(frame.col(k));
      }
      wc.block<3, 3>(6 * body, 3 * i) = sign * frame;
      wc.block<3, 3>(6 * body + 3, 3 * i) = sign * jac;
    };
    if (simA) {
      column(a, c.rA()[i], -1.0);
    }
    if (simB) {
      column(b, c.rB()[i], 1.0);
    }
    const ContactParameter& p =
        problem.parameters.get(bodies.materials()[a], bodies.materials()[b]);
    if (!simA && !simB) {
      extra.block<3, 3>(3 * i, 3 * i).setIdentity();
    } else if (p.model == ContactModel::UCFD) {
      extra.block<3, 3>(3 * i, 3 * i).diagonal() =
          Vec3(p.invDampingN, p.invDampingT, p.invDampingT) / problem.dt;
    }
  }
  return wc.transpose() * mInv * wc + extra;
}

/// Every column of the operator, W e_j, as a dense matrix.
Eigen::MatrixXd operatorColumns(DelassusOperator& op) {
  const auto m = static_cast<Eigen::Index>(3 * op.contactCount());
  Eigen::MatrixXd w(m, m);
  VecX e = VecX::Zero(m);
  VecX y;
  for (Eigen::Index j = 0; j < m; ++j) {
    e[j] = 1.0;
    op.multiply(e, y);
    w.col(j) = y;
    e[j] = 0.0;
  }
  return w;
}

/// The operator against the assembled matrix and the dense reference: the whole matrix entry by
/// entry, and products with random vectors (relative to the product's norm).
void expectOperatorEqualsAssembled(const BodyStorage& bodies, const ContactProblem& problem,
                                   const InclusionSolverSettings& set, std::uint32_t seed) {
  Rows rows(bodies, problem, set);
  const LocalProblem assembled = assembleLocalProblem(bodies, problem, set);
  const Eigen::MatrixXd dense = denseDelassus(bodies, problem);
  const Eigen::MatrixXd w(assembled.W);
  const Eigen::MatrixXd matrixFree = operatorColumns(rows.op);
  const Real scale = w.cwiseAbs().maxCoeff();
  ASSERT_GT(scale, 0.0);
  EXPECT_LE((matrixFree - w).cwiseAbs().maxCoeff(), kRoundOff * scale);
  EXPECT_LE((matrixFree - dense).cwiseAbs().maxCoeff(), kRoundOff * scale);

  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> uniform(-1.0, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    VecX x(w.cols());
    for (Eigen::Index k = 0; k < x.size(); ++k) {
      x[k] = uniform(rng);
    }
    VecX y;
    rows.op.multiply(x, y);
    const VecX reference = assembled.W * x;
    EXPECT_LE((y - reference).norm(), kRoundOff * reference.norm()) << "trial " << trial;
  }
  for (std::size_t i = 0; i < rows.op.contactCount(); ++i) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    EXPECT_LE((rows.op.diagonalBlock(i) - w.block<3, 3>(k, k)).cwiseAbs().maxCoeff(),
              kRoundOff * scale)
        << "contact " << i;
  }
}

ContactProblem problemOf(const SolverScene& s) {
  return ContactProblem{s.contacts, s.parameters, s.velocityStart, s.omegaBodyStart, s.dt};
}

// Floor, animated belt and four spheres: two-body, one-body (A and B simulated) contacts,
// rotated inertia frames, hard and compliant (UCFD) laws.
TEST(DelassusOperator, EqualsAssembledOnHandBuiltPile) {
  for (ContactModel model : {ContactModel::UCF, ContactModel::UCFD}) {
    SolverScene s = pile(model);
    expectOperatorEqualsAssembled(s.bodies, problemOf(s), InclusionSolverSettings{}, 7u);
  }
}

// A contact between two non-simulated bodies has W_ii = I and no coupling in both forms.
TEST(DelassusOperator, PassiveContactIsTheIdentity) {
  SolverScene s = pile();
  s.contacts.add(0, 1, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3::Zero());  // floor - belt
  s.prepare();
  expectOperatorEqualsAssembled(s.bodies, problemOf(s), InclusionSolverSettings{}, 11u);
}

/// Spheres and boxes dropped in a grid onto a floor, the contacts from grain's collision
/// detection: the operator is compared with the assembled matrix at every step with contacts.
void dropPileAndCompare(ContactModel model) {
  using namespace testing;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  if (model == ContactModel::UCFD) {
    ContactParameter p = sys.contactParameters.get(0, 0);
    p.model = ContactModel::UCFD;
    p.invDampingN = 1e-4;
    p.invDampingT = 3e-4;
    sys.contactParameters.setStandard(p);
  }
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  std::uint32_t number = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int layer = 0; layer < 3; ++layer) {
        const Vec3 pos(0.1 * i + 0.013 * layer, 0.1 * j - 0.007 * layer * i,
                       0.05 + 0.095 * layer - 1e-4);
        const Quat tilt = quat::fromAxisAngle(Vec3(1.0, 2.0, 0.5).normalized(), 0.2 * layer * j);
        const Real extra = 0.04 * static_cast<Real>(number);
        if ((i + j + layer) % 2 == 0) {
          addSimulated(sys, number, Sphere{0.05}, 0.3 + extra, pos);
        } else {
          addSimulated(sys, number, Box{Vec3(0.05, 0.04, 0.045), Vec3::Zero()}, 0.4 + extra, pos,
                       tilt, Vec3(0.0, 0.0, -0.1), Vec3(0.5, -0.3, 0.2));
        }
        ++number;
      }
    }
  }
  StepperSettings set = tightSettings(1e-3);
  set.solver.maxIter = 200;
  set.solver.relTol = 1e-8;
  MoreauStepper stepper(set);
  std::size_t compared = 0;
  std::size_t mostContacts = 0;
  stepper.setContactProblemObserver([&](const BodyStorage& bodies, const ContactProblem& problem,
                                        std::uint64_t step) {
    if (step % 5 != 0) {
      return;
    }
    SCOPED_TRACE("step " + std::to_string(step));
    expectOperatorEqualsAssembled(bodies, problem, set.solver, static_cast<std::uint32_t>(step));
    ++compared;
    mostContacts = std::max(mostContacts, problem.contacts.size());
  });
  for (int k = 0; k < 60; ++k) {
    stepper.step(sys);
  }
  EXPECT_GE(compared, 10u);
  EXPECT_GE(mostContacts, 30u);  // box faces: several contacts per pair
}

TEST(DelassusOperator, EqualsAssembledOnSphereAndBoxPile) {
  dropPileAndCompare(ContactModel::UCF);
}

TEST(DelassusOperator, EqualsAssembledOnCompliantSphereAndBoxPile) {
  dropPileAndCompare(ContactModel::UCFD);
}

// The body-sum stage is where a distributed product combines the impulses of bodies whose
// contacts live on several processes: splitting the contacts into two halves, each with its own
// operator, and adding the other half's impulses there gives the whole product's rows.
TEST(DelassusOperator, BodySumStageCombinesPartialImpulses) {
  SolverScene s = pile(ContactModel::UCFD);
  const InclusionSolverSettings set;
  Rows whole(s.bodies, problemOf(s), set);
  const std::size_t n = whole.contacts.size();
  ASSERT_GE(n, 4u);

  // Halves 0 (even contacts) and 1 (odd contacts), on the same bodies.
  auto half = [&](std::size_t parity) {
    detail::SolverContacts h;
    for (std::size_t i = parity; i < n; i += 2) {
      const detail::SolverContacts& c = whole.contacts;
      h.kind.push_back(c.kind[i]);
      h.bodyA.push_back(c.bodyA[i]);
      h.bodyB.push_back(c.bodyB[i]);
      h.frame.push_back(c.frame[i]);
      h.jacA.push_back(c.jacA[i]);
      h.jacB.push_back(c.jacB[i]);
      h.dOmegaA.push_back(c.dOmegaA[i]);
      h.dOmegaB.push_back(c.dOmegaB[i]);
      h.b.push_back(c.b[i]);
      h.law.push_back(c.law[i]);
    }
    return h;
  };
  const detail::SolverContacts even = half(0);
  const detail::SolverContacts odd = half(1);
  DelassusOperator opEven(even, whole.bodies);
  DelassusOperator opOdd(odd, whole.bodies);

  VecX x(static_cast<Eigen::Index>(3 * n));
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    x[k] = std::sin(1.0 + 0.7 * static_cast<Real>(k));
  }
  VecX xEven(static_cast<Eigen::Index>(3 * even.size()));
  VecX xOdd(static_cast<Eigen::Index>(3 * odd.size()));
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    (i % 2 == 0 ? xEven : xOdd).segment<3>(3 * static_cast<Eigen::Index>(i / 2)) = x.segment<3>(k);
  }
  VecX y;
  whole.op.multiply(x, y);

  opOdd.scatter(xOdd);
  int calls = 0;
  VecX yEven;
  opEven.multiply(xEven, yEven, [&](std::span<Vec3> impulse, std::span<Vec3> angular) {
    ++calls;
    ASSERT_EQ(impulse.size(), whole.bodies.size());
    for (std::size_t k = 0; k < impulse.size(); ++k) {
      impulse[k] += opOdd.impulse()[k];
      angular[k] += opOdd.angularImpulse()[k];
    }
  });
  EXPECT_EQ(calls, 1);
  for (std::size_t i = 0; i < n; i += 2) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    EXPECT_LE((yEven.segment<3>(3 * static_cast<Eigen::Index>(i / 2)) - y.segment<3>(k)).norm(),
              kRoundOff * y.norm())
        << "contact " << i;
  }
  // Without the other half's impulses the rows differ (the halves share bodies).
  VecX alone;
  opEven.multiply(xEven, alone);
  EXPECT_GT((alone - yEven).norm(), 1e-3 * yEven.norm());
}

/// Two processes holding the same values: every sum doubles.
class DoublingReducer final : public Reducer {
 public:
  bool distributed() const override { return true; }
  bool allTrue(bool local) override { return local; }
  void sum(std::span<Real> values) override {
    for (Real& v : values) {
      v *= 2.0;
    }
  }
  void max(std::span<Real>) override {}
};

TEST(DelassusOperator, ReducedSumGoesThroughTheReducer) {
  const VecX a = VecX::LinSpaced(6, 1.0, 6.0);
  const VecX b = VecX::Constant(6, 0.5);
  EXPECT_DOUBLE_EQ(reducedSum(a.dot(b), nullptr), 10.5);
  LocalReducer serial;
  EXPECT_DOUBLE_EQ(reducedSum(a.dot(b), &serial), 10.5);
  DoublingReducer two;
  EXPECT_DOUBLE_EQ(reducedSum(a.dot(b), &two), 21.0);
  EXPECT_DOUBLE_EQ(reducedSum(-1.25, &two), -2.5);
}

#ifdef GRAIN_TEST_WITH_FCLIB

// FCLIB global problems (M, H) of tests/data/fclib: the operator on their rows equals the
// condensed W = H^T M^-1 H of fclib::condense() to round-off, product by product.
TEST(DelassusOperator, EqualsCondensedFclibGlobalProblems) {
  for (const char* name : test::kFclibGlobalProblems) {
    SCOPED_TRACE(name);
    LocalProblem condensed;
    test::GlobalRows rows;
    test::loadFclibRows(name, condensed, rows);
    if (HasFatalFailure()) {
      return;
    }
    DelassusOperator op(rows.contacts, rows.bodies);
    ASSERT_EQ(op.contactCount(), condensed.contactCount());
    std::mt19937 rng(5u);
    std::uniform_real_distribution<Real> uniform(-1.0, 1.0);
    VecX y;
    for (int trial = 0; trial < 5; ++trial) {
      VecX x(condensed.q.size());
      for (Eigen::Index k = 0; k < x.size(); ++k) {
        x[k] = uniform(rng);
      }
      op.multiply(x, y);
      const VecX reference = condensed.W * x;
      EXPECT_LE((y - reference).norm(), kRoundOff * reference.norm()) << "trial " << trial;
    }
    // Diagonal blocks, as the solvers' scaling and preconditioners read them (diagonalBlock(),
    // from the rows' velocity responses Theta^-1 J; it takes the frame as orthonormal, as
    // grain's rows are, so only where the FCLIB frame is), and as products of the operator.
    std::size_t skewFrames = 0;
    for (std::size_t i = 0; i < op.contactCount(); ++i) {
      const auto k = static_cast<Eigen::Index>(3 * i);
      const Mat3 wii = Eigen::MatrixXd(condensed.W.block(k, k, 3, 3));
      const Mat3& frame = rows.contacts.frame[i];
      if ((frame.transpose() * frame - Mat3::Identity()).cwiseAbs().maxCoeff() <= 1e-12) {
        EXPECT_LE((op.diagonalBlock(i) - wii).cwiseAbs().maxCoeff(),
                  kRoundOff * wii.cwiseAbs().maxCoeff())
            << "contact " << i << ": diagonalBlock";
      } else {
        ++skewFrames;
      }
      if (i >= 20) {
        continue;  // every column is a full product: a sample of the contacts suffices
      }
      VecX e = VecX::Zero(condensed.q.size());
      Mat3 columns;
      for (int d = 0; d < 3; ++d) {
        e[k + d] = 1.0;
        op.multiply(e, y);
        columns.col(d) = y.segment<3>(k);
        e[k + d] = 0.0;
      }
      EXPECT_LE((columns - wii).cwiseAbs().maxCoeff(), kRoundOff * wii.cwiseAbs().maxCoeff())
          << "contact " << i;
    }
    std::printf("%s: %zu of %zu contact frames not orthonormal\n", name, skewFrames,
                op.contactCount());
  }
}

#endif  // GRAIN_TEST_WITH_FCLIB

}  // namespace
}  // namespace grain
