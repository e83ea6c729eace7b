// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <sstream>

#include <grain/core/timestepping/invariants.hpp>

namespace grain {

namespace {

std::string prefix(const BodyStorage& bodies, std::size_t i, std::uint64_t step) {
  const BodyId id = bodies.ids()[i];
  return "step " + std::to_string(step) + ": body " + formatBodyId(id) + " of group " +
         std::to_string(bodyGroup(id));
}

template <class V>
std::string components(const V& v) {
  std::ostringstream s;
  s.precision(17);
  s << "(";
  for (Eigen::Index k = 0; k < v.size(); ++k) {
    s << (k > 0 ? " " : "") << v[k];
  }
  s << ")";
  return s.str();
}

[[noreturn]] void failBody(const BodyStorage& bodies, std::size_t i, std::uint64_t step,
                           const std::string& what) {
  throw InvariantError(prefix(bodies, i, step) + " " + what, step, true, bodies.ids()[i]);
}

[[noreturn]] void failContact(std::size_t c, std::uint64_t step, const std::string& what) {
  throw InvariantError(
      "step " + std::to_string(step) + ": contact " + std::to_string(c) + " " + what, step, false,
      0);
}

}  // namespace

std::size_t findNonFiniteBody(const BodyStorage& bodies) {
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (!bodies.positions()[i].allFinite() || !bodies.orientations()[i].coeffs().allFinite() ||
        !bodies.velocities()[i].allFinite() || !bodies.omegasBody()[i].allFinite()) {
      return i;
    }
  }
  return bodies.size();
}

std::string nonFiniteBodyMessage(const BodyStorage& bodies, std::size_t i, std::uint64_t step) {
  std::string field;
  if (!bodies.positions()[i].allFinite()) {
    field = "position r_S = " + components(bodies.positions()[i]) + " m";
  } else if (!bodies.orientations()[i].coeffs().allFinite()) {
    field = "orientation (x y z w) = " + components(bodies.orientations()[i].coeffs());
  } else if (!bodies.velocities()[i].allFinite()) {
    field = "velocity v_S = " + components(bodies.velocities()[i]) + " m/s";
  } else {
    field = "angular velocity Omega_K = " + components(bodies.omegasBody()[i]) + " rad/s";
  }
  return prefix(bodies, i, step) + " has a non-finite " + field;
}

void checkStepInvariants(const BodyStorage& bodies, const ContactStorage& contacts,
                         std::uint64_t step, std::vector<BodyId>& scratch,
                         std::size_t splitContacts) {
  const std::size_t n = bodies.size();
  const std::size_t bad = findNonFiniteBody(bodies);
  if (bad < n) {
    throw InvariantError(nonFiniteBodyMessage(bodies, bad, step), step, true, bodies.ids()[bad]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Real norm = bodies.orientations()[i].norm();
    if (!(std::abs(norm - 1.0) <= 1e-9)) {
      std::ostringstream s;
      s.precision(17);
      s << "has an orientation that is not a unit quaternion (|q| = " << norm << ")";
      failBody(bodies, i, step, s.str());
    }
  }
  // No body twice: the ids, sorted, are strictly increasing.
  scratch.assign(bodies.ids().begin(), bodies.ids().end());
  std::sort(scratch.begin(), scratch.end());
  const auto twice = std::adjacent_find(scratch.begin(), scratch.end());
  if (twice != scratch.end()) {
    throw InvariantError("step " + std::to_string(step) + ": body " + formatBodyId(*twice) +
                             " of group " + std::to_string(bodyGroup(*twice)) + " is stored twice",
                         step, true, *twice);
  }
  const auto& a = contacts.bodyA();
  const auto& b = contacts.bodyB();
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    if (a[c] >= n || b[c] >= n) {
      failContact(c, step,
                  "refers to body index " + std::to_string(std::max(a[c], b[c])) + " of " +
                      std::to_string(n) + " bodies");
    }
    if (a[c] == b[c]) {
      failContact(c, step, "is between body " + formatBodyId(bodies.ids()[a[c]]) + " and itself");
    }
    if (c > 0 && c != splitContacts && (a[c] < a[c - 1] || (a[c] == a[c - 1] && b[c] < b[c - 1]))) {
      failContact(c, step,
                  "(bodies " + formatBodyId(bodies.ids()[a[c]]) + ", " +
                      formatBodyId(bodies.ids()[b[c]]) + ") comes after contact " +
                      std::to_string(c - 1) + " (bodies " + formatBodyId(bodies.ids()[a[c - 1]]) +
                      ", " + formatBodyId(bodies.ids()[b[c - 1]]) +
                      "): the contacts are not in canonical order");
    }
  }
}

}  // namespace grain
