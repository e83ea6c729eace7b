// SPDX-License-Identifier: MIT
// Random sphere radii: ranges, means against closed forms, the inverse normal CDF.
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/io/radius_distribution.hpp>

namespace grain::io {
namespace {

/// Sample mean of n radii drawn for body indices 0..n-1; checks every radius is in range.
Real sampleMean(const RadiusDistribution& d, std::uint64_t seed, int n) {
  Real sum = 0.0;
  for (int k = 0; k < n; ++k) {
    const Real r = d.sample(seed, static_cast<std::uint64_t>(k));
    EXPECT_GE(r, d.minRadius());
    EXPECT_LE(r, d.maxRadius());
    sum += r;
  }
  return sum / n;
}

TEST(InverseNormalCdf, MatchesKnownQuantiles) {
  EXPECT_NEAR(inverseNormalCdf(0.5), 0.0, 1e-15);
  EXPECT_NEAR(inverseNormalCdf(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(inverseNormalCdf(0.025), -1.959963984540054, 1e-13);
  EXPECT_NEAR(inverseNormalCdf(0.8413447460685429), 1.0, 1e-13);
  EXPECT_NEAR(inverseNormalCdf(1e-10), -6.361340902404056, 1e-10);
  for (const Real z : {-7.0, -3.3, -0.2, 0.7, 2.5, 6.0}) {
    const Real p = 0.5 * std::erfc(-z / std::sqrt(2.0));
    EXPECT_NEAR(inverseNormalCdf(p), z, 1e-9 * (1 + std::abs(z)));
  }
  EXPECT_THROW(inverseNormalCdf(0.0), Error);
  EXPECT_THROW(inverseNormalCdf(1.0), Error);
}

TEST(RadiusDistribution, UniformMean) {
  const auto d = RadiusDistribution::uniform(0.01, 0.03);
  EXPECT_DOUBLE_EQ(d.mean(), 0.02);
  // Standard deviation 0.02 / sqrt(12); 4 sigma of the mean of 20000 samples.
  EXPECT_NEAR(sampleMean(d, 1, 20000), 0.02, 4 * 0.02 / std::sqrt(12.0 * 20000));
  EXPECT_EQ(RadiusDistribution::uniform(0.5, 0.5).sample(3, 7), 0.5);
}

TEST(RadiusDistribution, TruncatedNormalMeanMatchesClosedForm) {
  // mu + sigma (phi(a) - phi(b)) / (Phi(b) - Phi(a)) with a = -1, b = 2 (in units of sigma).
  const auto d = RadiusDistribution::truncatedNormal(1.0, 0.1, 0.9, 1.2);
  const auto phi = [](Real z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi); };
  const auto cdf = [](Real z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const Real expected = 1.0 + 0.1 * (phi(-1) - phi(2)) / (cdf(2) - cdf(-1));
  EXPECT_NEAR(d.mean(), expected, 1e-14);
  EXPECT_NEAR(sampleMean(d, 2, 20000), expected, 4 * 0.1 / std::sqrt(20000.0));
  // A window far in the upper tail (sampled through the mirrored CDF) stays inside it and
  // has the exponential-tail mean: about a + sigma^2 / (a - mu).
  const auto tail = RadiusDistribution::truncatedNormal(1.0, 0.1, 1.8, 2.0);
  EXPECT_NEAR(tail.mean(), 1.8 + 0.01 / 0.8, 1e-3);
  EXPECT_NEAR(sampleMean(tail, 3, 20000), tail.mean(), 4 * 0.0125 / std::sqrt(20000.0));
  EXPECT_THROW(RadiusDistribution::truncatedNormal(1.0, 0.01, 2.0, 3.0), Error);
  EXPECT_THROW(RadiusDistribution::truncatedNormal(1.0, 0.1, 2.0, 1.0), Error);
}

TEST(RadiusDistribution, PiecewiseConstantWeightsByDensityTimesWidth) {
  // Weights 1 * 1 and 3 * 2: P(first) = 1/7, mean = (1/7) 1.5 + (6/7) 3.
  const auto d = RadiusDistribution::piecewiseConstant({1.0, 2.0, 4.0}, {1.0, 3.0});
  EXPECT_NEAR(d.mean(), 1.5 / 7.0 + 18.0 / 7.0, 1e-14);
  int first = 0;
  for (int k = 0; k < 20000; ++k) {
    first += d.sample(9, static_cast<std::uint64_t>(k)) < 2.0 ? 1 : 0;
  }
  EXPECT_NEAR(first / 20000.0, 1.0 / 7.0, 4 * std::sqrt(1.0 / 7 * 6.0 / 7 / 20000));
  // A zero density empties its interval.
  const auto gap = RadiusDistribution::piecewiseConstant({1.0, 2.0, 3.0}, {0.0, 1.0});
  for (int k = 0; k < 1000; ++k) {
    EXPECT_GE(gap.sample(4, static_cast<std::uint64_t>(k)), 2.0);
  }
  EXPECT_THROW(RadiusDistribution::piecewiseConstant({1.0, 2.0}, {0.0}), Error);
  EXPECT_THROW(RadiusDistribution::piecewiseConstant({2.0, 1.0}, {1.0}), Error);
  EXPECT_THROW(RadiusDistribution::piecewiseConstant({1.0, 2.0, 3.0}, {1.0}), Error);
}

TEST(RadiusDistribution, ValuesDependOnSeedAndIndexOnly) {
  const auto d = RadiusDistribution::truncatedNormal(1.0, 0.2, 0.5, 1.5);
  const Real r7 = d.sample(5, 7);
  for (int k = 0; k < 7; ++k) {
    (void)d.sample(5, static_cast<std::uint64_t>(k));
  }
  EXPECT_EQ(d.sample(5, 7), r7);
  EXPECT_NE(d.sample(6, 7), r7);
}

}  // namespace
}  // namespace grain::io
