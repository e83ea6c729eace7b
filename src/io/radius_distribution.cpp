// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <numbers>

#include <grain/core/common/error.hpp>
#include <grain/io/radius_distribution.hpp>

namespace grain::io {

namespace {

/// Standard normal CDF.
Real phi(Real z) {
  return 0.5 * std::erfc(-z / std::numbers::sqrt2_v<Real>);
}

/// Standard normal density.
Real density(Real z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi_v<Real>);
}

}  // namespace

Real inverseNormalCdf(Real p) {
  GRAIN_REQUIRE(p > 0.0 && p < 1.0, "inverseNormalCdf: p must be in (0, 1)");
  // Rational approximation (relative error < 1.2e-9, after P. J. Acklam), then one Halley step
  // on Phi(x) - p, which brings it to full double precision.
  constexpr Real a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                        1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr Real b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                        6.680131188771972e+01, -1.328068155288572e+01};
  constexpr Real c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                        -2.549671010422001e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr Real d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                        3.754408661907416e+00};
  constexpr Real pLow = 0.02425;
  Real x = 0.0;
  if (p < pLow) {
    const Real q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - pLow) {
    const Real q = p - 0.5;
    const Real r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    const Real q = std::sqrt(-2.0 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  const Real e = phi(x) - p;
  const Real u = e * std::sqrt(2.0 * std::numbers::pi_v<Real>) * std::exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

RadiusDistribution RadiusDistribution::from(const RadiusDistributionSettings& s) {
  settings::checkRelations(s);
  switch (s.generator) {
    case RadiusGenerator::Uniform:
      return uniform(s.minRadius, s.maxRadius);
    case RadiusGenerator::TruncatedNormal:
      return truncatedNormal(s.mean, s.variance, s.minRadius, s.maxRadius);
    case RadiusGenerator::PiecewiseConstant:
      break;
  }
  return piecewiseConstant(s.intervals, s.densities);
}

namespace {

/// The window [minRadius, maxRadius] of uniform and truncated-normal: both > 0 and finite, and
/// maxRadius >= minRadius (the relation of RadiusDistributionSettings).
void checkWindow(Real minRadius, Real maxRadius) {
  GRAIN_REQUIRE(std::isfinite(minRadius) && minRadius > 0.0, "minRadius must be > 0");
  GRAIN_REQUIRE(std::isfinite(maxRadius), "maxRadius must be finite");
  RadiusDistributionSettings window;
  window.minRadius = minRadius;
  window.maxRadius = maxRadius;
  settings::checkRelations(window);
}

}  // namespace

RadiusDistribution RadiusDistribution::uniform(Real minRadius, Real maxRadius) {
  checkWindow(minRadius, maxRadius);
  RadiusDistribution r;
  r.kind_ = Kind::Uniform;
  r.a_ = minRadius;
  r.b_ = maxRadius;
  return r;
}

RadiusDistribution RadiusDistribution::truncatedNormal(Real mean, Real sigma, Real minRadius,
                                                       Real maxRadius) {
  GRAIN_REQUIRE(std::isfinite(mean) && mean > 0.0, "mean must be > 0");
  GRAIN_REQUIRE(std::isfinite(sigma) && sigma > 0.0, "the standard deviation must be > 0");
  checkWindow(minRadius, maxRadius);
  RadiusDistribution r;
  r.kind_ = Kind::TruncatedNormal;
  r.a_ = minRadius;
  r.b_ = maxRadius;
  r.mu_ = mean;
  r.sigma_ = sigma;
  const Real za = (minRadius - mean) / sigma;
  const Real zb = (maxRadius - mean) / sigma;
  // Work in the tail where the CDF is small, where it has full relative precision.
  r.mirrored_ = za > 0.0;
  if (r.mirrored_) {
    r.pLow_ = phi(-zb);
    r.pHigh_ = phi(-za);
  } else {
    r.pLow_ = phi(za);
    r.pHigh_ = phi(zb);
  }
  GRAIN_REQUIRE(minRadius == maxRadius || r.pHigh_ > r.pLow_,
                "the window [minRadius, maxRadius] lies too far in the tail of the normal "
                "distribution (no probability mass in double precision)");
  return r;
}

RadiusDistribution RadiusDistribution::piecewiseConstant(std::vector<Real> bounds,
                                                         std::vector<Real> densities) {
  GRAIN_REQUIRE(bounds.size() >= 2, "intervals needs at least two bounds");
  GRAIN_REQUIRE(densities.size() + 1 == bounds.size(),
                "densities needs one value per interval (" + std::to_string(bounds.size() - 1) +
                    " for " + std::to_string(bounds.size()) + " bounds, got " +
                    std::to_string(densities.size()) + ")");
  GRAIN_REQUIRE(bounds.front() > 0.0, "interval bounds must be > 0");
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    GRAIN_REQUIRE(bounds[i] < bounds[i + 1], "interval bounds must be increasing");
  }
  RadiusDistribution r;
  r.kind_ = Kind::PiecewiseConstant;
  r.a_ = bounds.front();
  r.b_ = bounds.back();
  Real sum = 0.0;
  for (std::size_t i = 0; i < densities.size(); ++i) {
    GRAIN_REQUIRE(std::isfinite(densities[i]) && densities[i] >= 0.0, "densities must be >= 0");
    sum += densities[i] * (bounds[i + 1] - bounds[i]);
    r.cumulative_.push_back(sum);
  }
  GRAIN_REQUIRE(sum > 0.0, "densities must not all be 0");
  r.bounds_ = std::move(bounds);
  return r;
}

Real RadiusDistribution::sample(BodyRandom& rng) const {
  switch (kind_) {
    case Kind::Uniform:
      return rng.uniform(a_, b_);
    case Kind::TruncatedNormal: {
      if (a_ == b_) {
        return a_;
      }
      const Real p = pLow_ + (pHigh_ - pLow_) * rng.uniform01();
      Real z = p > 0.0 && p < 1.0 ? inverseNormalCdf(p) : (p <= 0.0 ? -40.0 : 40.0);
      if (mirrored_) {
        z = -z;
      }
      return std::clamp(mu_ + sigma_ * z, a_, b_);
    }
    case Kind::PiecewiseConstant: {
      const Real w = rng.uniform01() * cumulative_.back();
      const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), w);
      std::size_t i = static_cast<std::size_t>(it - cumulative_.begin());
      if (i >= cumulative_.size()) {
        i = cumulative_.size() - 1;
      }
      // Skip intervals of zero weight that upper_bound cannot land in anyway (w < back()).
      return rng.uniform(bounds_[i], bounds_[i + 1]);
    }
  }
  return a_;
}

Real RadiusDistribution::sample(std::uint64_t seed, std::uint64_t index) const {
  BodyRandom rng(seed, index);
  return sample(rng);
}

Real RadiusDistribution::mean() const {
  switch (kind_) {
    case Kind::Uniform:
      return 0.5 * (a_ + b_);
    case Kind::TruncatedNormal: {
      if (a_ == b_) {
        return a_;
      }
      const Real za = (a_ - mu_) / sigma_;
      const Real zb = (b_ - mu_) / sigma_;
      return mu_ + sigma_ * (density(za) - density(zb)) / (pHigh_ - pLow_);
    }
    case Kind::PiecewiseConstant: {
      Real m = 0.0;
      Real prev = 0.0;
      for (std::size_t i = 0; i < cumulative_.size(); ++i) {
        m += (cumulative_[i] - prev) * 0.5 * (bounds_[i] + bounds_[i + 1]);
        prev = cumulative_[i];
      }
      return m / cumulative_.back();
    }
  }
  return a_;
}

Real RadiusDistribution::minRadius() const {
  return a_;
}

Real RadiusDistribution::maxRadius() const {
  return b_;
}

}  // namespace grain::io
