// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/error.hpp>
#include <grain/core/contact/contact_storage.hpp>

/// Expensive checks of what must hold after every step (docs/reliability.md). The build option
/// GRAIN_CHECK_INVARIANTS (on in the debug-asan preset) makes MoreauStepper::step call
/// checkStepInvariants() after each step; without it nothing is checked per step, but the
/// functions are always there (the run drivers use findNonFiniteBody() to name the body of a
/// non-finite state, and tests call them directly).
namespace grain {

/// A broken invariant; the message names the step and, where there is one, the body.
class InvariantError : public Error {
 public:
  InvariantError(const std::string& what, std::uint64_t step, bool hasBody, BodyId body)
      : Error(what), step_(step), hasBody_(hasBody), body_(body) {}
  /// The step after which the check failed.
  std::uint64_t step() const { return step_; }
  /// Whether the violation is about one body (then body() is its id).
  bool hasBody() const { return hasBody_; }
  BodyId body() const { return body_; }

 private:
  std::uint64_t step_;
  bool hasBody_;
  BodyId body_;
};

/// Whether this build checks the invariants after every step (GRAIN_CHECK_INVARIANTS).
bool stepInvariantsChecked();

/// Index of the first body whose state (position, orientation, velocity, angular velocity) has
/// a NaN or infinite component, or bodies.size() if every state is finite.
std::size_t findNonFiniteBody(const BodyStorage& bodies);

/// "step S: body (g,n) of group g has a non-finite <field> (x y z)" for body i of a state that
/// findNonFiniteBody() reported.
std::string nonFiniteBodyMessage(const BodyStorage& bodies, std::size_t i, std::uint64_t step);

/// Checks, after step `step`: every body state finite, every orientation a unit quaternion (to
/// 1e-9), no body id twice, and the contacts valid (body indices in range, two different bodies)
/// and in canonical order (by body A, then body B, as ContactStorage::sortCanonical orders them;
/// with the bodies in id order, as distributed runs keep them, this is the order of body ids).
/// A distributed step moves the contacts of split bodies to the front (ContactProblem::
/// splitContacts): then [0, splitContacts) and [splitContacts, C) are each in canonical order.
/// Throws InvariantError naming the first violation. O(N log N + C); `scratch` keeps its memory
/// between calls.
void checkStepInvariants(const BodyStorage& bodies, const ContactStorage& contacts,
                         std::uint64_t step, std::vector<BodyId>& scratch,
                         std::size_t splitContacts = 0);

}  // namespace grain
