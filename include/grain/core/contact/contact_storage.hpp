// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include <grain/core/math/quaternion.hpp>
#include <grain/core/math/types.hpp>

namespace grain {

/// Struct-of-arrays list of the contacts found by collision detection at the midpoint
/// configuration q^M of one step.
///
/// Conventions (thesis §1.4 of the numerics digest): the normal e_n points out of body A
/// towards body B; the tangents complete a right-handed frame (n, t1, t2); the gap g_N is
/// positive when separated and negative when penetrating. rA/rB are the vectors from the
/// centres of mass of A/B to the contact points on their surfaces, in the inertial frame.
/// Body A is always the body with the smaller index when both are simulated; a static or
/// animated partner is always body A. The tangents are not stored: they are a function of the
/// normal (quat::makeTangents), formed again where needed, always to the same bits.
class ContactStorage {
 public:
  std::size_t size() const { return bodyA_.size(); }
  bool empty() const { return bodyA_.empty(); }
  void clear();
  void reserve(std::size_t n);

  /// Adds a contact; tangents are computed from the normal. Returns its index.
  std::size_t add(std::uint32_t bodyA, std::uint32_t bodyB, const Vec3& normal, Real gap,
                  const Vec3& rA, const Vec3& rB);

  const std::vector<std::uint32_t>& bodyA() const { return bodyA_; }
  const std::vector<std::uint32_t>& bodyB() const { return bodyB_; }
  const std::vector<Vec3>& normals() const { return normal_; }  ///< e_n in I
  /// The contact frame [e_n e_t1 e_t2] of contact c (columns in I).
  Mat3 frame(std::size_t c) const {
    Mat3 f;
    Vec3 t1;
    Vec3 t2;
    quat::makeTangents(normal_[c], t1, t2);
    f << normal_[c], t1, t2;
    return f;
  }
  /// e_t1 in I of contact c.
  Vec3 tangent1(std::size_t c) const { return frame(c).col(1); }
  /// e_t2 in I of contact c.
  Vec3 tangent2(std::size_t c) const { return frame(c).col(2); }
  const std::vector<Real>& gaps() const { return gap_; }  ///< g_N (m)
  const std::vector<Vec3>& rA() const { return rA_; }     ///< S_A -> C_A in I (m)
  const std::vector<Vec3>& rB() const { return rB_; }     ///< S_B -> C_B in I (m)

  /// Sorts contacts by (bodyA, bodyB, gap) so that the result does not depend on the order in
  /// which the broad phase produced pairs (reproducible runs).
  void sortCanonical();

  /// Appends the contacts of `other` (same body indexing) after this storage's own.
  void append(const ContactStorage& other);

  /// Keeps the contacts c with keep[c] != 0 (keep.size() == size()), in their order.
  void keepOnly(const std::vector<char>& keep);

  /// Moves the contacts c with first[c] != 0 (first.size() == size()) before the others, both
  /// groups in their order; returns how many were moved. Allocates only when the contacts
  /// outgrow every earlier call.
  std::size_t moveToFront(const std::vector<char>& first);

 private:
  std::vector<std::uint32_t> bodyA_;
  std::vector<std::uint32_t> bodyB_;
  std::vector<Vec3> normal_;
  std::vector<Real> gap_;
  std::vector<Vec3> rA_;
  std::vector<Vec3> rB_;
  // moveToFront(): the new order and one array of each element type to permute through.
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> scratchIndex_;
  std::vector<Vec3> scratchVec3_;
  std::vector<Real> scratchReal_;
};

}  // namespace grain
