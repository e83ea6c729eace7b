// SPDX-License-Identifier: MIT
#include <cmath>

#include <grain/core/common/error.hpp>
#include <grain/core/timestepping/external_forces.hpp>

namespace grain {

namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

bool SphericalPulseField::active(Real t) const {
  if (t < startTime || t > endTime) {
    return false;
  }
  const Real period = boostTime + pauseTime;
  return std::fmod(t - startTime, period) <= boostTime;
}

Vec3 SphericalPulseField::centre(Real t) const {
  if (!randomOn || t < startTime) {
    return minPoint;
  }
  const Real cycle = std::floor((t - startTime) / (boostTime + pauseTime));
  if (cycle < 1.0) {
    return minPoint;
  }
  const std::uint64_t state = splitmix64(splitmix64(seed) + static_cast<std::uint64_t>(cycle));
  Vec3 u;
  for (int n = 0; n < 3; ++n) {
    const std::uint64_t x = splitmix64(state + static_cast<std::uint64_t>(n) * kGolden);
    u[n] = static_cast<Real>(x >> 11) * 0x1.0p-53;
  }
  return minPoint + (maxPoint - minPoint).cwiseProduct(u);
}

void ExternalForces::addGravity(const GravityField& g) {
  settings::check(g, "gravity ");
  gravity_.push_back(g);
}

Vec3 ExternalForces::gravityAcceleration() const {
  Vec3 a = Vec3::Zero();
  for (const auto& g : gravity_) {
    a += g.acceleration();
  }
  return a;
}

void ExternalForces::addSphericalPulse(const SphericalPulseField& f) {
  GRAIN_REQUIRE(f.minPoint.allFinite() && f.maxPoint.allFinite(),
                "minPoint and maxPoint must be finite");
  settings::check(f);
  pulses_.push_back(f);
}

void ExternalForces::addBodyForces(Real t, const BodyStorage& bodies,
                                   std::span<Vec3> forces) const {
  GRAIN_REQUIRE(forces.size() == bodies.size(), "one force per body expected");
  const auto& r = bodies.positions();
  const auto& motion = bodies.motions();
  const std::size_t n = bodies.size();
  for (const SphericalPulseField& f : pulses_) {
    if (!f.active(t) || f.amplitude == 0.0) {
      continue;
    }
    const Vec3 c = f.centre(t);
    for (std::size_t i = 0; i < n; ++i) {
      if (motion[i] != BodyMotion::Simulated) {
        continue;
      }
      const Vec3 d = r[i] - c;
      const Real len = d.norm();
      if (len > 0.0) {
        forces[i] += (f.amplitude / len) * d;
      }
    }
  }
}

}  // namespace grain
