// SPDX-License-Identifier: MIT
// Accuracy measures of ContactSolver iterates, computed from the solver's own per-contact data
// (kept out of contact_solver.cpp so that the sweep kernels there stay small and inlined).
#include <cmath>

#include <grain/core/solvers/contact_rows.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/solver_data.hpp>

#include "parallel_items.hpp"

namespace grain::detail {

namespace {

/// D P / dt of a UCFD contact (0 for hard contacts).
Vec3 compliance(const ContactLaw& law, const Vec3& p) {
  return Vec3(law.dampN * p.x(), law.dampT * p.y(), law.dampT * p.z());
}

/// W_ii^-1 = (G_ii + D_i/dt)^-1 (kg) of a contact that is not passive, symmetrised.
Mat3 contactBlockInverse(const SolverContacts& c, const SolverBodies& b, std::size_t i) {
  const Mat3 g = diagonalBlock(c, b, i);
  return (0.5 * (g + g.transpose())).inverse();
}

}  // namespace

void prepareContactMeasures(const SolverContacts& c, const SolverBodies& b,
                            ContactMeasureData& data, std::span<const std::uint32_t> rowOf,
                            int threads) {
  const std::size_t n = c.size();
  data.q.resize(n);
  auto prepare = [&](std::size_t i) {
    const std::size_t row = rowOf.empty() ? i : rowOf[i];
    // As assembleLocalProblem(): a passive contact has q_i = 0 (W_ii = I, r_i = 0 = u_i).
    data.q[i] = c.kind[row] == PairKind::Passive ? Vec3::Zero()
                                                 : Vec3(contactVelocity(c, b, row) + c.b[row]);
  };
  forEachItem(n, threads, prepare);
}

MeasureSums contactMeasureSums(const SolverContacts& c, const SolverBodies& b,
                               const std::vector<Vec3>& percussion, const ContactMeasureData& data,
                               std::span<const std::uint32_t> rowOf, int threads) {
  auto addRange = [&](std::size_t begin, std::size_t end, MeasureSums& s) {
    auto& v = s.value;
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t row = rowOf.empty() ? i : rowOf[i];
      if (c.kind[row] == PairKind::Passive) {
        continue;
      }
      const Vec3& r = percussion[i];
      const Vec3 u = contactVelocity(c, b, row) + c.b[row] + compliance(c.law[row], r);
      const Vec3 e = naturalMapResidual(r, u, c.law[row].mu);
      const Vec3& q = data.q[i];
      const Mat3 wInv = contactBlockInverse(c, b, row);
      v[MeasureSums::Residual2] += e.squaredNorm();
      v[MeasureSums::R2] += r.squaredNorm();
      v[MeasureSums::U2] += u.squaredNorm();
      v[MeasureSums::Q2] += q.squaredNorm();
      v[MeasureSums::KoziaraNumerator] += e.dot(wInv * e);
      v[MeasureSums::KoziaraDenominator] += q.dot(wInv * q);
    }
  };
  const std::size_t n = c.size();
  MeasureSums total;
  if (threads <= 1) {
    addRange(0, n, total);
    return total;
  }
#pragma omp parallel for ordered schedule(static, 1) num_threads(threads) default(none) \
    shared(addRange, total, n, threads)
  for (int t = 0; t < threads; ++t) {
    MeasureSums part;
    const auto count = static_cast<std::size_t>(threads);
    addRange(n * static_cast<std::size_t>(t) / count, n * static_cast<std::size_t>(t + 1) / count,
             part);
#pragma omp ordered
    for (std::size_t k = 0; k < MeasureSums::Count; ++k) {
      total.value[k] += part.value[k];
    }
  }
  return total;
}

ContactMeasures measuresFromSums(const MeasureSums& sums) {
  const auto& v = sums.value;
  ContactMeasures m;
  m.naturalMap =
      naturalMapError(std::sqrt(v[MeasureSums::Residual2]), std::sqrt(v[MeasureSums::Q2]),
                      std::sqrt(v[MeasureSums::R2]), std::sqrt(v[MeasureSums::U2]));
  m.koziara = koziaraError(v[MeasureSums::KoziaraNumerator], v[MeasureSums::KoziaraDenominator]);
  if (!std::isfinite(m.koziara)) {
    m.koziara = std::numeric_limits<Real>::infinity();
  }
  return m;
}

}  // namespace grain::detail
