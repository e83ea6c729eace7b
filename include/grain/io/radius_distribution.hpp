// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include <grain/core/math/types.hpp>
#include <grain/io/body_random.hpp>

namespace grain::io {

/// Distribution of random sphere radii (Sphere distribute="random"). The radius of body k of a
/// group is sample(seed, k): it depends on the body's index alone, so any subset of a group gets
/// the radii of the full scene.
class RadiusDistribution {
 public:
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
