// SPDX-License-Identifier: MIT
// Micro-benchmark of collision detection: random dense packings of spheres on a floor.
//
// Usage: grain-collision_benchmark [repetitions]
// For N = 10^4 and 10^5 spheres (monodisperse, and radii varying by a factor 2.5) placed at
// random in a cube at a solid fraction of 0.6 (so each sphere overlaps ~5 others, like a dense
// pile), it times CollisionDetector::detect() and prints spheres per second. For scale it also
// times a stand-in for one projected Gauss-Seidel sweep over the contacts, the unit of work of
// the contact solver, which runs 10-50 such sweeps per step, and prints the share collision
// detection would take of (collision + 10 or 50 sweeps).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <vector>

#include <grain/core/collision/collision_detector.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>

namespace {

using grain::Real;
using grain::Vec3;
using Clock = std::chrono::steady_clock;

grain::DynamicsSystem makePacking(int n, Real rMin, Real rMax, std::uint32_t seed) {
  grain::DynamicsSystem sys;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> uni(0.0, 1.0);
  constexpr int kRadii = 64;
  std::vector<grain::ShapeIndex> shapes;
  Real meanVolume = 0.0;
  for (int k = 0; k < kRadii; ++k) {
    const Real r = rMin + (rMax - rMin) * k / std::max(1, kRadii - 1);
    shapes.push_back(sys.shapes.add(grain::Sphere{r}));
    meanVolume += 4.0 / 3.0 * std::numbers::pi * r * r * r / kRadii;
  }
  const Real side = std::cbrt(n * meanVolume / 0.6);
  grain::BodyDef floor;
  floor.id = grain::makeBodyId(0, 0);
  floor.motion = grain::BodyMotion::Static;
  floor.shape = sys.shapes.add(grain::Halfspace{Vec3::UnitZ()});
  sys.addBody(floor);
  sys.bodies.reserve(static_cast<std::size_t>(n) + 1);
  for (int i = 0; i < n; ++i) {
    grain::BodyDef d;
    d.id = grain::makeBodyId(1, static_cast<std::uint32_t>(i));
    d.shape = shapes[rng() % kRadii];
    d.mass = 1.0;
    d.inertiaBody = Vec3::Ones();
    d.position = Vec3(side * uni(rng), side * uni(rng), rMax + (side - rMax) * uni(rng));
    sys.addBody(d);
  }
  return sys;
}

/// Stand-in for one projected Gauss-Seidel sweep of the contact solver (seconds): per contact
/// the relative velocity in the contact frame, a prox step onto the Coulomb cone (R+ x disk) with
/// a simplified diagonal, and the velocity update of both bodies. Same data traffic and similar
/// arithmetic as a real sweep; it only serves to put the collision time in proportion.
double referenceSweep(grain::DynamicsSystem& sys, const grain::ContactStorage& c,
                      std::vector<Vec3>& percussion) {
  auto& v = sys.bodies.velocities();
  auto& w = sys.bodies.omegasBody();
  const auto& invM = sys.bodies.invMasses();
  const auto& invI = sys.bodies.invInertiasBody();
  percussion.resize(c.size(), Vec3::Zero());
  constexpr Real mu = 0.5;
  const auto start = Clock::now();
  for (std::size_t k = 0; k < c.size(); ++k) {
    const std::uint32_t a = c.bodyA()[k];
    const std::uint32_t b = c.bodyB()[k];
    const Vec3& n = c.normals()[k];
    const Vec3 t1 = c.tangent1(k);
    const Vec3 t2 = c.tangent2(k);
    const Vec3 rel = v[b] + w[b].cross(c.rB()[k]) - v[a] - w[a].cross(c.rA()[k]);
    const Real r = 0.5 / (invM[a] + invM[b] + 1e-300);
    Vec3& lambda = percussion[k];
    Vec3 next = lambda - r * Vec3(n.dot(rel), t1.dot(rel), t2.dot(rel));
    next.x() = std::max(next.x(), Real(0));
    const Real tn = std::hypot(next.y(), next.z());
    if (tn > mu * next.x()) {
      next.tail<2>() *= mu * next.x() / tn;
    }
    const Vec3 dl = next - lambda;
    lambda = next;
    const Vec3 p = dl.x() * n + dl.y() * t1 + dl.z() * t2;
    v[a] -= invM[a] * p;
    v[b] += invM[b] * p;
    w[a] -= invI[a].cwiseProduct(c.rA()[k].cross(p));
    w[b] += invI[b].cwiseProduct(c.rB()[k].cross(p));
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run(const char* label, int n, Real rMin, Real rMax, int reps) {
  grain::DynamicsSystem sys = makePacking(n, rMin, rMax, 12345u + static_cast<std::uint32_t>(n));
  grain::CollisionDetector detector;
  grain::ContactStorage contacts;
  detector.detect(sys.bodies, sys.shapes, contacts);  // warm-up: allocates the buffers
  double best = 1e300;
  double total = 0.0;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    detector.detect(sys.bodies, sys.shapes, contacts);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, s);
    total += s;
  }
  double sweep = 1e300;
  std::vector<Vec3> percussion;
  for (int r = 0; r < 3; ++r) {
    sweep = std::min(sweep, referenceSweep(sys, contacts, percussion));
  }
  const auto& st = detector.stats();
  const double mean = total / reps;
  // Shares use the best times of both (closest to an unloaded machine).
  std::printf(
      "%-13s N=%7d  detect mean %7.2f ms, best %7.2f ms = %5.2f M spheres/s  contacts %7zu  "
      "candidates %7zu  cell %.3f  | sweep stand-in %6.2f ms; collision share at 10 / 50 "
      "sweeps: %4.1f %% / %4.1f %%\n",
      label, n, 1e3 * mean, 1e3 * best, n / best * 1e-6, st.contacts, st.candidatePairs,
      st.cellSize, 1e3 * sweep, 100.0 * best / (best + 10 * sweep),
      100.0 * best / (best + 50 * sweep));
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  for (const int n : {10000, 100000}) {
    run("mono r=1", n, 1.0, 1.0, reps);
    run("poly r=0.4..1", n, 0.4, 1.0, reps);
  }
  return 0;
}
