// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/settings.hpp>

namespace grain {

/// Uniform gravitational field: acceleration `value` (m/s^2) along the unit `direction` (I).
struct GravityField {
  Real value = 9.81;
  Vec3 direction = -Vec3::UnitZ();
  Vec3 acceleration() const { return value * direction.normalized(); }

  /// The description of the members (grain/core/common/settings.hpp): the attributes of
  /// <ForceField type="gravity">, and the ranges addGravity checks ("gravity value ...").
  template <class V>
  static constexpr void describe(V&& v) {
    using S = GravityField;
    using settings::Bound;
    using settings::field;
    v(field<&S::value>("value")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("m/s^2")
          .withDoc("acceleration"));
    v(field<&S::direction>("direction")
          .required()
          .withBound(Bound::NonZeroVector)
          .withDoc("direction in the inertial frame (normalised)"));
  }
};

/// Radial push field ("spatialspherical-timerandom" in scene files): while it is on, every
/// simulated body gets the force `amplitude` (N) along the unit vector from a centre point to
/// the body's centre of mass (no force on a body exactly at the centre).
///
/// Timing: the field is on for startTime <= t <= endTime during the boost phases. With the
/// period T = boostTime + pauseTime and s = (t - startTime) mod T, a boost phase is
/// s <= boostTime, the rest of the period is a pause.
///
/// Centre: cycle c = floor((t - startTime) / T) (0 for the first boost). Without randomOn, and
/// in cycle 0, the centre is minPoint. With randomOn, cycle c >= 1 has the centre
/// minPoint + (maxPoint - minPoint) (*) (u0, u1, u2) (component-wise), where u0, u1, u2 are the
/// first three outputs of the counter-based stream keyed by (seed, c) that grain::io::BodyRandom
/// defines (state_0 = splitmix64(splitmix64(seed) + c), u_n = top 53 bits of
/// splitmix64(state_0 + n 0x9E3779B97F4A7C15) times 2^-53). The field has no state: its value
/// depends on t alone, so restarted runs see the same pushes.
struct SphericalPulseField {
  std::uint32_t seed = 0;
  Real boostTime = 1.0;          ///< s, > 0
  Real pauseTime = 1.0;          ///< s, >= 0
  Real startTime = 0.0;          ///< s
  Real endTime = 1.0;            ///< s, >= startTime
  Real amplitude = 0.0;          ///< N, >= 0
  bool randomOn = false;         ///< new random centre for each cycle
  Vec3 minPoint = Vec3::Zero();  ///< corner of the box of centres (m, I)
  Vec3 maxPoint = Vec3::Zero();  ///< opposite corner (m, I), >= minPoint component-wise

  /// Whether the field pushes at time t (s).
  bool active(Real t) const;
  /// Centre point (m, I) at time t (s).
  Vec3 centre(Real t) const;

  /// The description of the members (grain/core/common/settings.hpp): the attributes of
  /// <ForceField type="spatialspherical-timerandom">, in the order of the scene format, and the
  /// ranges addSphericalPulse checks.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = SphericalPulseField;
    using settings::Bound;
    using settings::field;
    v(field<&S::seed>("seed").required().withDoc("seed of the random centres"));
    v(field<&S::boostTime>("boostTime")
          .required()
          .withBound(Bound::Positive)
          .withUnit("s")
          .withDoc("length of a push phase"));
    v(field<&S::pauseTime>("pauseTime")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("s")
          .withDoc("length of the pause after each push"));
    v(field<&S::amplitude>("amplitude")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("N")
          .withDoc("force on each simulated body, along centre -> body"));
    v(field<&S::randomOn>("randomOn")
          .required()
          .withDoc(
              "true: a new random centre in [minPoint, maxPoint] for every cycle after the first; "
              "false: the centre is minPoint"));
    v(field<&S::minPoint>("minPoint")
          .required()
          .withUnit("m")
          .withDoc("corner of the box of centres (inertial frame)"));
    v(field<&S::maxPoint>("maxPoint")
          .required()
          .withUnit("m")
          .withDoc("opposite corner (>= minPoint in every component)"));
    v(field<&S::startTime>("startTime")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("s")
          .withDoc("the field acts from startTime"));
    v(field<&S::endTime>("endTime")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("s")
          .withDoc("to endTime (>= startTime)"));
  }

  /// The checks between members (settings::Relation).
  template <class V>
  static constexpr void relations(V&& v) {
    using S = SphericalPulseField;
    using settings::Order;
    v(settings::relation<&S::maxPoint, &S::minPoint>("maxPoint", Order::GreaterEqual, "minPoint"));
    v(settings::relation<&S::endTime, &S::startTime>("endTime", Order::GreaterEqual, "startTime"));
  }
};

/// External forces acting on simulated bodies. Evaluated at the step midpoint t^M (positions
/// q^M): uniform gravity as one acceleration, position-dependent fields as per-body forces.
class ExternalForces {
 public:
  void addGravity(const GravityField& g);
  const std::vector<GravityField>& gravityFields() const { return gravity_; }
  /// Sum of all gravitational accelerations (m/s^2, I frame).
  Vec3 gravityAcceleration() const;

  /// Adds a radial push field; throws grain::Error for invalid parameters.
  void addSphericalPulse(const SphericalPulseField& f);
  const std::vector<SphericalPulseField>& sphericalPulseFields() const { return pulses_; }

  /// Whether there are per-body (position- or time-dependent) forces besides gravity.
  bool hasBodyForces() const { return !pulses_.empty(); }
  /// Adds the per-body forces (N, I frame) at time t (s) to forces[i] for every simulated body
  /// i, using the current positions of `bodies`; `forces` has bodies.size() entries. Gravity
  /// is not included (see gravityAcceleration()).
  void addBodyForces(Real t, const BodyStorage& bodies, std::span<Vec3> forces) const;

 private:
  std::vector<GravityField> gravity_;
  std::vector<SphericalPulseField> pulses_;
};

}  // namespace grain
