// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/math/types.hpp>

namespace grain {

/// Contact law of a material pair.
enum class ContactModel : std::uint8_t {
  UCF,   ///< unilateral contact + spatial Coulomb friction + Newton impact law
  UCFD,  ///< UCF with inverse dampings (compliance) in normal and tangential direction
};

/// The names of the contact laws in scene files (attribute type) and in toString.
inline constexpr settings::EnumName<ContactModel> kContactModelNames[] = {
    {ContactModel::UCF, "UCF"},
    {ContactModel::UCFD, "UCFD"},
};
constexpr std::span<const settings::EnumName<ContactModel>> enumNames(ContactModel) {
  return kContactModelNames;
}

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

  /// The description of the members (grain/core/common/settings.hpp): the attributes of
  /// <ContactParameterStandard> and <ContactParameter>, whose variant `type` selects the law.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = ContactParameter;
    using settings::Bound;
    using settings::field;
    v(field<&S::model>("type").required().withUnsupported("UCFDD"));
    v(field<&S::mu>("mu")
          .required()
          .withBound(Bound::NonNegative)
          .withDoc("Coulomb friction coefficient"));
    v(field<&S::epsilonN>("epsilonN")
          .required()
          .withBound(Bound::UnitInterval)
          .withDoc("normal restitution"));
    v(field<&S::epsilonT>("epsilonT")
          .required()
          .withBound(Bound::UnitInterval)
          .withDoc("tangential restitution"));
    v(field<&S::invDampingN>("invDampingN")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("s/kg")
          .withDoc("normal inverse damping"));
    v(field<&S::invDampingT>("invDampingT")
          .required()
          .withBound(Bound::NonNegative)
          .withUnit("s/kg")
          .withDoc("tangential inverse damping"));
    v(field<&S::relativeStiffness>("relativeStiffness")
          .withBound(Bound::Positive)
          .withDoc("relative normal stiffness of the pair for compatible contact forces "
                   "(ContactForceOutput); no effect on the motion"));
    v(field<&S::muRolling>("muRolling")
          .withBound(Bound::NonNegative)
          .withDoc("rolling-resistance coefficient mu_r (grain only, not GRSF): a constant "
                   "rolling torque of at most mu_r R* lambda_N opposes the relative rolling of "
                   "the pair, R* = r_A r_B/(r_A + r_B) from the centres of mass to the contact "
                   "point; method SORContact only"));
  }
};

/// Throws grain::Error if a value is out of range (mu < 0, epsilons outside [0,1], ...): the
/// bounds of ContactParameter::describe (settings::checkBounds).
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
