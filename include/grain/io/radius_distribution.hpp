// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <grain/core/common/settings.hpp>
#include <grain/core/math/types.hpp>
#include <grain/io/body_random.hpp>

namespace grain::io {

/// The distributions of random sphere radii.
enum class RadiusGenerator : std::uint8_t { Uniform, TruncatedNormal, PiecewiseConstant };

/// The scene names of RadiusGenerator (`generator` of <Sphere distribute="random">).
inline constexpr std::array<settings::EnumName<RadiusGenerator>, 3> kRadiusGeneratorNames = {{
    {RadiusGenerator::Uniform, "uniform"},
    {RadiusGenerator::TruncatedNormal, "truncated-normal"},
    {RadiusGenerator::PiecewiseConstant, "piecewise-const"},
}};
constexpr std::span<const settings::EnumName<RadiusGenerator>> enumNames(RadiusGenerator) {
  return kRadiusGeneratorNames;
}

/// A radius distribution as a scene gives it (the attributes of <Sphere distribute="random">
/// but its seed): the generator and the parameters it uses.
struct RadiusDistributionSettings {
  RadiusGenerator generator = RadiusGenerator::Uniform;
  Real minRadius = 0.0;         ///< m; uniform, truncated-normal
  Real maxRadius = 0.0;         ///< m; uniform, truncated-normal
  Real mean = 0.0;              ///< m; truncated-normal
  Real variance = 0.0;          ///< m, the standard deviation (GRSF's name); truncated-normal
  std::vector<Real> intervals;  ///< m, n + 1 increasing bounds; piecewise-const
  std::vector<Real> densities;  ///< 1/m, n weights; piecewise-const

  /// The description of the members (grain/core/common/settings.hpp): the attributes of
  /// <Sphere distribute="random"> (in Geometry and GlobalGeometries) but the seed.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = RadiusDistributionSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::generator>("generator")
          .required()
          .withDoc("radius distribution; radii are drawn per body index k from the counter stream "
                   "(seed, "
                   "k)"));
    v(field<&S::minRadius>("minRadius")
          .derived()
          .withBound(Bound::Positive)
          .withUnit("m")
          .withDoc("smallest radius (uniform, truncated-normal; required there, <= maxRadius)"));
    v(field<&S::maxRadius>("maxRadius")
          .derived()
          .withBound(Bound::Positive)
          .withUnit("m")
          .withDoc("largest radius (uniform, truncated-normal)"));
    v(field<&S::mean>("mean")
          .derived()
          .withBound(Bound::Positive)
          .withUnit("m")
          .withDoc("mean of the untruncated normal (truncated-normal)"));
    v(field<&S::variance>("variance")
          .derived()
          .withBound(Bound::Positive)
          .withUnit("m")
          .withDoc("standard deviation sigma of the untruncated normal (truncated-normal; the "
                   "name is GRSF's, the value is used as sigma as GRSF does)"));
    v(field<&S::intervals>("intervals")
          .derived()
          .withBound(Bound::Positive)
          .withUnit("m")
          .withDoc("n+1 increasing interval bounds (piecewise-const)"));
    v(field<&S::densities>("densities")
          .derived()
          .withBound(Bound::NonNegative)
          .withUnit("1/m")
          .withDoc("n probability densities, one per interval, not all 0 (piecewise-const); "
                   "interval i is chosen with weight densities[i] (intervals[i+1] - "
                   "intervals[i])"));
  }

  /// The checks between members: the window of uniform and truncated-normal is not empty.
  template <class V>
  static constexpr void relations(V&& v) {
    using S = RadiusDistributionSettings;
    v(settings::relation<&S::maxRadius, &S::minRadius>("maxRadius", settings::Order::GreaterEqual,
                                                       "minRadius")
          .when([](const S& s) { return s.generator != RadiusGenerator::PiecewiseConstant; }));
  }
};

/// Distribution of random sphere radii (Sphere distribute="random"). The radius of body k of a
/// group is sample(seed, k): it depends on the body's index alone, so any subset of a group gets
/// the radii of the full scene.
class RadiusDistribution {
 public:
  /// The distribution `s` gives (its relations checked: maxRadius >= minRadius).
  static RadiusDistribution from(const RadiusDistributionSettings& s);
  /// Uniform in [minRadius, maxRadius] (m); 0 < minRadius <= maxRadius.
  static RadiusDistribution uniform(Real minRadius, Real maxRadius);
  /// Normal with mean `mean` and standard deviation `sigma` (m), truncated to
  /// [minRadius, maxRadius]; sampled by inverting the normal CDF with one uniform number.
  /// Throws grain::Error if the window has no probability mass in double precision.
  static RadiusDistribution truncatedNormal(Real mean, Real sigma, Real minRadius, Real maxRadius);
  /// Piecewise constant density: n + 1 increasing positive bounds, n densities >= 0 (not all 0).
  /// Interval i is chosen with probability densities[i] (bounds[i+1] - bounds[i]) / sum, then a
  /// radius uniformly within it (two uniform numbers).
  static RadiusDistribution piecewiseConstant(std::vector<Real> bounds,
                                              std::vector<Real> densities);

  /// Draws one radius (m) from the stream.
  Real sample(BodyRandom& rng) const;
  /// The radius of body `index` for `seed`: sample(BodyRandom(seed, index)).
  Real sample(std::uint64_t seed, std::uint64_t index) const;

  /// Expected radius (m), in closed form.
  Real mean() const;
  /// Smallest and largest possible radius (m).
  Real minRadius() const;
  Real maxRadius() const;

 private:
  enum class Kind : std::uint8_t { Uniform, TruncatedNormal, PiecewiseConstant };
  Kind kind_ = Kind::Uniform;
  Real a_ = 0.0;  // min radius
  Real b_ = 0.0;  // max radius
  Real mu_ = 0.0;
  Real sigma_ = 0.0;
  bool mirrored_ = false;  // truncated normal: sample the upper tail via Q(z) = Phi(-z)
  Real pLow_ = 0.0;        // CDF (or upper-tail) values at the window ends
  Real pHigh_ = 0.0;
  std::vector<Real> bounds_;
  std::vector<Real> cumulative_;  // cumulative weights, cumulative_.back() = total
};

/// Inverse of the standard normal CDF for p in (0, 1) (full double precision).
Real inverseNormalCdf(Real p);

}  // namespace grain::io
