// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <unordered_map>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/math/types.hpp>

namespace grain {

/// Contact law of a material pair.
enum class ContactModel : std::uint8_t {
  UCF,   ///< unilateral contact + spatial Coulomb friction + Newton impact law
  UCFD,  ///< UCF with inverse dampings (compliance) in normal and tangential direction
};

/// Parameters of the contact law between two materials (dimensionless unless stated).
struct ContactParameter {
  ContactModel model = ContactModel::UCF;
  Real mu = 0.3;           ///< Coulomb friction coefficient (>= 0)
  Real epsilonN = 0.5;     ///< normal Newton restitution in [0, 1]
  Real epsilonT = 0.5;     ///< tangential Newton restitution in [0, 1]
  Real invDampingN = 0.0;  ///< UCFD normal inverse damping (m/(N s)... per unit percussion, s/kg)
  Real invDampingT = 0.0;  ///< UCFD tangential inverse damping (s/kg)
  /// Relative normal stiffness k~ (> 0, dimensionless) of the pair for the compatible contact
  /// forces (compatible_forces.hpp, docs/contact-output.md); it never changes the dynamics.
  Real relativeStiffness = 1.0;
  /// Rolling-resistance coefficient mu_r (>= 0, dimensionless; grain's own, not GRSF's): the
  /// rolling percussion M (N m s) in the tangent plane opposes the relative rolling angular
  /// velocity and is bounded by |M| <= mu_r R* P_N, R* the effective rolling radius (m)
  /// (docs/physics.md). 0 (the default) is the law without rolling resistance. Only the
  /// velocity prox method SorContact solves it (checkRollingResistanceSupported in
  /// contact_solver.hpp).
  Real muRolling = 0.0;
};

/// Throws grain::Error if a value is out of range (mu < 0, epsilons outside [0,1], ...).
void validateContactParameter(const ContactParameter& p);

/// Contact parameters per unordered material pair, with a standard fallback. The built-in
/// standard (UCF, mu 0.3, epsilonN 0.5, epsilonT 0.5) is GRSF's.
class ContactParameterMap {
 public:
  void setStandard(const ContactParameter& p);
  /// Sets the parameters of the unordered pair {m1, m2}.
  void set(MaterialId m1, MaterialId m2, const ContactParameter& p);
  /// Parameters of the pair {m1, m2}, or the standard one.
  const ContactParameter& get(MaterialId m1, MaterialId m2) const;
  const ContactParameter& standard() const { return standard_; }
  std::size_t size() const { return pairs_.size(); }
  /// Whether the standard law or any pair's law has rolling resistance (muRolling > 0).
  bool hasRollingResistance() const;

 private:
  static std::uint64_t key(MaterialId a, MaterialId b) {
    return a < b ? (std::uint64_t(a) << 32 | b) : (std::uint64_t(b) << 32 | a);
  }
  ContactParameter standard_{};
  std::unordered_map<std::uint64_t, ContactParameter> pairs_;
};

}  // namespace grain
