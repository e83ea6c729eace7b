// SPDX-License-Identifier: MIT
#include <cmath>
#include <numbers>

#include <grain/core/common/error.hpp>
#include <grain/core/geometry/mass_properties.hpp>

namespace grain {

namespace {
constexpr Real kPi = std::numbers::pi_v<Real>;

/// Index of the coordinate axis the unit vector a lies on, or -1.
int alignedAxis(const Vec3& a) {
  for (int k = 0; k < 3; ++k) {
    if (std::abs(std::abs(a[k]) - 1.0) < 1e-12) {
      return k;
    }
  }
  return -1;
}
}  // namespace

Real volume(const Shape& s) {
  if (const auto* sp = std::get_if<Sphere>(&s)) {
    return 4.0 / 3.0 * kPi * sp->radius * sp->radius * sp->radius;
  }
  if (const auto* b = std::get_if<Box>(&s)) {
    return 8.0 * b->halfExtent.x() * b->halfExtent.y() * b->halfExtent.z();
  }
  if (const auto* c = std::get_if<Capsule>(&s)) {
    const Real r = c->radius;
    return kPi * r * r * c->length + 4.0 / 3.0 * kPi * r * r * r;
  }
  throw Error("homogeneous mass needs a sphere, box or capsule");
}

Vec3 homogeneousInertia(const Shape& s, Real mass) {
  GRAIN_REQUIRE(std::isfinite(mass) && mass > 0.0, "mass must be > 0");
  if (const auto* sp = std::get_if<Sphere>(&s)) {
    return Vec3::Constant(0.4 * mass * sp->radius * sp->radius);
  }
  if (const auto* b = std::get_if<Box>(&s)) {
    GRAIN_REQUIRE(b->center.isZero(0.0),
                  "a simulated box must be centred at its body origin (center = 0 0 0)");
    const Vec3 e = 2.0 * b->halfExtent;  // full edge lengths
    return Vec3(e.y() * e.y() + e.z() * e.z(), e.x() * e.x() + e.z() * e.z(),
                e.x() * e.x() + e.y() * e.y()) *
           (mass / 12.0);
  }
  if (const auto* c = std::get_if<Capsule>(&s)) {
    const int k = alignedAxis(c->axis.normalized());
    GRAIN_REQUIRE(k >= 0,
                  "a simulated capsule's normal must be a body axis (1 0 0, 0 1 0 or 0 0 1)");
    // Cylinder of length L plus two hemispheres, mass split by volume.
    const Real r = c->radius;
    const Real len = c->length;
    const Real vCyl = kPi * r * r * len;
    const Real vSph = 4.0 / 3.0 * kPi * r * r * r;
    const Real mCyl = mass * vCyl / (vCyl + vSph);
    const Real mHemi = 0.5 * mass * vSph / (vCyl + vSph);
    const Real iAxial = mCyl * r * r / 2.0 + 2.0 * mHemi * (2.0 / 5.0) * r * r;
    // Hemisphere about its own centroid (3r/8 from the flat face): 83/320 m r^2; shifted
    // to the capsule centre at distance L/2 + 3r/8.
    const Real dHemi = 0.5 * len + 3.0 * r / 8.0;
    const Real iTrans = mCyl * (3.0 * r * r + len * len) / 12.0 +
                        2.0 * (mHemi * 83.0 / 320.0 * r * r + mHemi * dHemi * dHemi);
    Vec3 inertia = Vec3::Constant(iTrans);
    inertia[k] = iAxial;
    return inertia;
  }
  throw Error("homogeneous inertia needs a sphere, box or capsule");
}

MassProperties homogeneousMassProperties(const Shape& s, Real density) {
  GRAIN_REQUIRE(std::isfinite(density) && density > 0.0, "density must be > 0");
  MassProperties p;
  p.mass = density * volume(s);
  p.inertiaBody = homogeneousInertia(s, p.mass);
  return p;
}

}  // namespace grain
