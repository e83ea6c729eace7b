// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include <grain/core/solvers/contact_rows.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/fclib/fclib_io.hpp>

#include "../../common/test_util.hpp"

namespace grain::test {

/// The contact rows of an FCLIB global problem of rigid bodies: M diagonal with 6 entries per
/// body (mass three times, then the principal inertia), H with per contact the 6 x 3 blocks
/// (A_IC; J) of body B and their negatives for body A (the linear parts exactly opposite). The
/// angular unknowns are the file's (body frame), so the rows use them with rotation I. Fails the
/// test if the file has another structure.
struct GlobalRows {
  detail::SolverBodies bodies;
  detail::SolverContacts contacts;
};

inline void buildGlobalRows(const fclib::GlobalProblem& g, GlobalRows& rows) {
  detail::SolverBodies& bodies = rows.bodies;
  detail::SolverContacts& contacts = rows.contacts;
  const Eigen::Index dofs = g.M.rows();
  ASSERT_EQ(dofs % 6, 0);
  const auto nb = static_cast<std::size_t>(dofs / 6);
  const VecX m = g.M.diagonal();
  for (Eigen::Index col = 0; col < g.M.outerSize(); ++col) {
    for (SparseMat::InnerIterator it(g.M, col); it; ++it) {
      ASSERT_TRUE(it.row() == it.col() || it.value() == 0.0) << "M is not diagonal";
    }
  }
  for (std::size_t k = 0; k < nb; ++k) {
    const auto d = static_cast<Eigen::Index>(6 * k);
    ASSERT_EQ(m[d], m[d + 1]);
    ASSERT_EQ(m[d], m[d + 2]);
    bodies.storageIndex.push_back(static_cast<std::uint32_t>(k));
    bodies.invMass.push_back(1.0 / m[d]);
    bodies.invInertia.push_back(detail::SymMat3::rotateDiagonal(
        Mat3::Identity(), Vec3(1.0 / m[d + 3], 1.0 / m[d + 4], 1.0 / m[d + 5])));
  }
  const auto n = static_cast<std::size_t>(g.mu.size());
  ASSERT_EQ(g.spaceDim, 3);
  // Per contact: body -> its 6 x 3 block of H.
  std::vector<std::map<std::uint32_t, Eigen::Matrix<Real, 6, 3>>> blocks(n);
  for (Eigen::Index col = 0; col < g.H.outerSize(); ++col) {
    for (SparseMat::InnerIterator it(g.H, col); it; ++it) {
      auto& block = blocks[static_cast<std::size_t>(it.col() / 3)];
      const auto body = static_cast<std::uint32_t>(it.row() / 6);
      if (block.find(body) == block.end()) {
        block[body].setZero();
      }
      block[body](it.row() % 6, it.col() % 3) += it.value();
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_GE(blocks[i].size(), 1u);
    ASSERT_LE(blocks[i].size(), 2u);
    const auto b = blocks[i].rbegin();
    contacts.bodyB.push_back(b->first);
    contacts.frame.push_back(b->second.topRows<3>());
    contacts.jacB.push_back(b->second.bottomRows<3>());
    contacts.dOmegaB.push_back(Mat3::Zero());  // Theta^-1 J, set below
    contacts.dOmegaA.push_back(Mat3::Zero());
    contacts.b.push_back(Vec3::Zero());
    detail::ContactLaw law;
    law.mu = g.mu[static_cast<Eigen::Index>(i)];
    contacts.law.push_back(law);
    if (blocks[i].size() == 1) {
      contacts.kind.push_back(detail::PairKind::OneBody);
      contacts.bodyA.push_back(detail::kNoSolverBody);
      contacts.jacA.push_back(Mat3::Zero());
      continue;
    }
    const auto a = blocks[i].begin();
    const Mat3 linearA = a->second.topRows<3>();
    ASSERT_LE((linearA + contacts.frame.back()).cwiseAbs().maxCoeff(), 1e-14)
        << "contact " << i << ": the linear blocks of its bodies are not opposite";
    contacts.kind.push_back(detail::PairKind::TwoBodies);
    contacts.bodyA.push_back(a->first);
    contacts.jacA.push_back(-a->second.bottomRows<3>());
  }
  // The velocity responses Theta^-1 J of the rows, as setupSolverContacts forms them: the
  // operator applies Theta^-1 itself, but the diagonal blocks W_ii (preconditioners, measures)
  // read them.
  for (std::size_t i = 0; i < n; ++i) {
    for (int col = 0; col < 3; ++col) {
      contacts.dOmegaB[i].col(col) =
          bodies.invInertia[contacts.bodyB[i]] * Vec3(contacts.jacB[i].col(col));
      if (contacts.kind[i] == detail::PairKind::TwoBodies) {
        contacts.dOmegaA[i].col(col) =
            bodies.invInertia[contacts.bodyA[i]] * Vec3(contacts.jacA[i].col(col));
      }
    }
  }
}

/// The FCLIB global problems of tests/data/fclib that the matrix-free operator tests read.
inline constexpr std::array<const char*, 3> kFclibGlobalProblems{
    "Box_Stacks-i0122-82-5.hdf5", "Spheres-i099-356-679.hdf5",
    "spheres-in-a-box-98-i10000-256-10.hdf5"};

/// Reads tests/data/fclib/`name`: its condensed local problem (fclib::condense) and its contact
/// rows (buildGlobalRows). Fails the test (the caller checks HasFatalFailure()) if the file is
/// missing or of another structure.
inline void loadFclibRows(const char* name, LocalProblem& condensed, GlobalRows& rows) {
  const std::filesystem::path file = grain::testing::testDataDir() / "fclib" / name;
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " not found (tests/data/fclib)";
  const fclib::GlobalProblem global = fclib::readGlobal(file.string());
  condensed = fclib::condense(global);
  buildGlobalRows(global, rows);
}

}  // namespace grain::test
