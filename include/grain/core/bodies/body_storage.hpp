// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/bodies/body_id_index.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/math/types.hpp>

namespace grain {

/// How a body moves.
enum class BodyMotion : std::uint8_t {
  Simulated,  ///< integrated by the stepper, takes part in the contact problem
  Static,     ///< never moves; infinite mass
  Animated,   ///< moved with a prescribed constant velocity; infinite mass (enters through chi)
};

/// The names of BodyMotion in scene files (the variant attribute DynamicState@type; "not
/// simulated" is the scene format's other spelling of static), found through enumNames.
inline constexpr settings::EnumName<BodyMotion> kBodyMotionNames[] = {
    {BodyMotion::Simulated, "simulated"},
    {BodyMotion::Static, "static"},
    {BodyMotion::Static, "not simulated", true},
    {BodyMotion::Animated, "animated"},
};
constexpr std::span<const settings::EnumName<BodyMotion>> enumNames(BodyMotion) {
  return kBodyMotionNames;
}

/// Who owns a body in a distributed run. Serial runs only have local bodies.
enum class BodyOwnership : std::uint8_t { Local, Remote };

/// Everything needed to add one body. Units: SI; frames as named.
struct BodyDef {
  BodyId id = 0;
  BodyMotion motion = BodyMotion::Simulated;
  ShapeIndex shape = 0;
  MaterialId material = 0;
  Real mass = 0.0;                  ///< kg; ignored unless simulated
  Vec3 inertiaBody = Vec3::Zero();  ///< principal inertia in K (kg m^2); ignored unless simulated
  Vec3 position = Vec3::Zero();     ///< r_S in I (m)
  Quat orientation = Quat::Identity();  ///< K -> I
  Vec3 velocity = Vec3::Zero();         ///< v_S in I (m/s)
  Vec3 omegaBody = Vec3::Zero();        ///< angular velocity in K (rad/s)
  BodyOwnership ownership = BodyOwnership::Local;
};

/// Struct-of-arrays storage of all bodies (simulated, static, animated; local and remote).
///
/// Index order is insertion order; removal swaps the last body into the hole, so indices are
/// not stable across add/remove but ids are. sortById() restores id order: the run drivers call
/// it after loading and the stepper after every body exchange (migration in a distributed run),
/// so that collision detection, contact order and solver order follow body ids, whatever the
/// history of the storage or the number of processes. Solvers and collision work on indices within
/// one step. Static and animated bodies have zero inverse mass and inertia, which lets every kernel
/// treat all bodies alike.
///
/// Besides the state q = (r, p), u = (v, Omega), each body carries its step-start state
/// (p^S, v^S, Omega^S of the current step): the first half step and the force stage write it,
/// the contact problem and the second half step read it, so a body that changes its process in
/// the middle of a step takes it along. It is needed on one process too, so it is kept (80 B
/// per body): p^S by the second half step (p^E = p^S + dt/2 F(p^M) (Omega^S + Omega^E)),
/// Omega^S there and, with v^S, by the contact problem (gamma^S of the restitution term, read
/// when the rows are set up); none of them can be formed again from q^M or u with the same bits
/// (the half steps normalise, the gyroscopic step is implicit). Only p^S travels with a body
/// (it changes process between the half steps, before v^S and Omega^S are written).
///
/// indexOf() looks ids up in a BodyIdIndex (4-byte slots, at most half full: 8-16 B per body).
///
/// Copies are exact: add() stores the given state bit for bit (an orientation that is not a
/// unit quaternion to 1e-12 is normalised), so a remote copy equals its original.
class BodyStorage {
 public:
  std::size_t size() const { return id_.size(); }
  bool empty() const { return id_.empty(); }

  /// Adds a body; throws grain::Error on a duplicate id or non-positive mass/inertia of a
  /// simulated body. Returns its index.
  std::size_t add(const BodyDef& def, Real boundingRadius);
  /// Removes the body with this id (swap with last). Throws grain::Error if unknown.
  void remove(BodyId id);
  /// Index of the body, if present.
  std::optional<std::size_t> indexOf(BodyId id) const;
  /// Reserves memory for n bodies.
  void reserve(std::size_t n);

  // Hot per-body data (struct of arrays).
  std::vector<BodyId>& ids() { return id_; }
  const std::vector<BodyId>& ids() const { return id_; }
  std::vector<Vec3>& positions() { return position_; }  ///< r_S in I (m)
  const std::vector<Vec3>& positions() const { return position_; }
  std::vector<Quat>& orientations() { return orientation_; }  ///< K -> I
  const std::vector<Quat>& orientations() const { return orientation_; }
  std::vector<Vec3>& velocities() { return velocity_; }  ///< v_S in I (m/s)
  const std::vector<Vec3>& velocities() const { return velocity_; }
  std::vector<Vec3>& omegasBody() { return omegaBody_; }  ///< Omega in K (rad/s)
  const std::vector<Vec3>& omegasBody() const { return omegaBody_; }
  const std::vector<Real>& invMasses() const { return invMass_; }  ///< 1/kg, 0 if not simulated
  const std::vector<Vec3>& invInertiasBody() const { return invInertiaBody_; }  ///< 1/(kg m^2)
  const std::vector<Real>& masses() const { return mass_; }  ///< kg, 0 if not simulated
  const std::vector<Vec3>& inertiasBody() const { return inertiaBody_; }
  const std::vector<ShapeIndex>& shapes() const { return shape_; }
  /// Renumbers the shapes after ShapeStore::compact: shape i becomes newIndex[shape i].
  void remapShapes(const std::vector<ShapeIndex>& newIndex);
  const std::vector<MaterialId>& materials() const { return material_; }
  const std::vector<BodyMotion>& motions() const { return motion_; }
  const std::vector<BodyOwnership>& ownerships() const { return ownership_; }
  std::vector<BodyOwnership>& ownerships() { return ownership_; }
  /// Radius (m) of the origin-centred sphere enclosing the shape (infinity for halfspaces).
  const std::vector<Real>& boundingRadii() const { return boundingRadius_; }

  /// Step-start state (see the class comment): orientation p^S (K -> I), velocity v^S (I, m/s),
  /// angular velocity Omega^S (K, rad/s). add() initialises them with the current state.
  std::vector<Quat>& orientationsStart() { return orientationStart_; }
  const std::vector<Quat>& orientationsStart() const { return orientationStart_; }
  std::vector<Vec3>& velocitiesStart() { return velocityStart_; }
  const std::vector<Vec3>& velocitiesStart() const { return velocityStart_; }
  std::vector<Vec3>& omegasBodyStart() { return omegaBodyStart_; }
  const std::vector<Vec3>& omegasBodyStart() const { return omegaBodyStart_; }

  /// Reorders the bodies by increasing id (one permutation of every column, in place); returns
  /// false and does nothing if they are in id order already. O(N + m log m) for m bodies out of
  /// place (appended or moved by removals), without allocation in steady state.
  bool sortById();
  /// True if the bodies are in increasing id order.
  bool sortedById() const;

  /// Number of simulated bodies.
  std::size_t simulatedCount() const { return simulatedCount_; }
  bool isSimulated(std::size_t i) const { return motion_[i] == BodyMotion::Simulated; }

  /// BodyDef describing body i (for communication and tests).
  BodyDef def(std::size_t i) const;

 private:
  std::vector<BodyId> id_;
  std::vector<Vec3> position_;
  std::vector<Quat> orientation_;
  std::vector<Vec3> velocity_;
  std::vector<Vec3> omegaBody_;
  std::vector<Quat> orientationStart_;
  std::vector<Vec3> velocityStart_;
  std::vector<Vec3> omegaBodyStart_;
  std::vector<Real> invMass_;
  std::vector<Vec3> invInertiaBody_;
  std::vector<Real> mass_;
  std::vector<Vec3> inertiaBody_;
  std::vector<ShapeIndex> shape_;
  std::vector<MaterialId> material_;
  std::vector<BodyMotion> motion_;
  std::vector<BodyOwnership> ownership_;
  std::vector<Real> boundingRadius_;
  BodyIdIndex indexOfId_;  ///< id_ -> index
  std::size_t simulatedCount_ = 0;
  /// sortById()'s buffers, kept between calls.
  struct SortScratch {
    std::vector<std::uint32_t> kept, rest, order, cycles;
    std::vector<char> done;
  } sortScratch_;
};

}  // namespace grain
