// SPDX-License-Identifier: MIT
// Micro-benchmark of the contact solver: a dense sphere network (simple cubic lattice of
// touching spheres on a static floor, about 6 contacts per sphere), a fixed number of velocity
// SOR sweeps (SORContact, minIter = maxIter), reported as contact updates per second.
//
// Usage: grain-solver_benchmark [sweeps] [bodies...]   (defaults: 50 sweeps, 10^4 and 10^5 bodies)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/contact_parameters.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/solvers/contact_solver.hpp>

namespace {

using namespace grain;
using Clock = std::chrono::steady_clock;

struct Network {
  BodyStorage bodies;
  ContactStorage contacts;
  ContactParameterMap parameters;
  std::vector<Vec3> velocityStart;
  std::vector<Vec3> omegaBodyStart;
  std::vector<Vec3> freeVelocity;
  std::vector<Vec3> freeOmega;
  Real dt = 2e-4;
};

/// Lattice of side^3 spheres of radius r, spacing 2r, on a static floor (body 0).
void buildNetwork(Network& net, int side) {
  const Real r = 0.005;
  const Real m = 1e-3;
  std::mt19937 rng(42);
  std::uniform_real_distribution<Real> jitter(-0.01, 0.01);
  const std::size_t n = static_cast<std::size_t>(side) * side * side;
  net.bodies.reserve(n + 1);
  BodyDef floor;
  floor.id = makeBodyId(0, 0);
  floor.motion = BodyMotion::Static;
  net.bodies.add(floor, 1e30);
  auto index = [side](int i, int j, int k) {
    return static_cast<std::uint32_t>(1 + i + side * (j + side * k));
  };
  std::uint32_t number = 0;
  for (int k = 0; k < side; ++k) {
    for (int j = 0; j < side; ++j) {
      for (int i = 0; i < side; ++i) {
        BodyDef d;
        d.id = makeBodyId(1, number++);
        d.mass = m;
        d.inertiaBody = Vec3::Constant(0.4 * m * r * r);
        d.position = Vec3(2 * r * i, 2 * r * j, r + 2 * r * k);
        d.velocity = Vec3(jitter(rng), jitter(rng), jitter(rng));
        d.omegaBody = Vec3(jitter(rng), jitter(rng), jitter(rng)) / r;
        net.bodies.add(d, r);
      }
    }
  }
  net.contacts.reserve(3 * n + side * side);
  const Vec3 axes[3] = {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()};
  for (int k = 0; k < side; ++k) {
    for (int j = 0; j < side; ++j) {
      for (int i = 0; i < side; ++i) {
        const std::uint32_t a = index(i, j, k);
        if (k == 0) {
          net.contacts.add(0, a, Vec3::UnitZ(), 0.0, Vec3::Zero(), Vec3(0.0, 0.0, -r));
        }
        const int next[3][3] = {{i + 1, j, k}, {i, j + 1, k}, {i, j, k + 1}};
        for (int d = 0; d < 3; ++d) {
          if (next[d][0] < side && next[d][1] < side && next[d][2] < side) {
            const std::uint32_t b = index(next[d][0], next[d][1], next[d][2]);
            net.contacts.add(a, b, axes[d], 0.0, r * axes[d], -r * axes[d]);
          }
        }
      }
    }
  }
  net.contacts.sortCanonical();
  ContactParameter p;
  p.mu = 0.5;
  p.epsilonN = 0.0;
  p.epsilonT = 0.0;
  net.parameters.setStandard(p);
  net.velocityStart = net.bodies.velocities();
  net.omegaBodyStart = net.bodies.omegasBody();
  for (std::size_t i = 1; i < net.bodies.size(); ++i) {
    net.bodies.velocities()[i] += net.dt * Vec3(0.0, 0.0, -9.81);
  }
  net.freeVelocity = net.bodies.velocities();
  net.freeOmega = net.bodies.omegasBody();
}

/// Runs one solve from the free velocity; returns wall seconds.
double timedSolve(Network& net, ContactSolver& solver, SolverStats& stats) {
  net.bodies.velocities() = net.freeVelocity;
  net.bodies.omegasBody() = net.freeOmega;
  const ContactProblem problem{net.contacts, net.parameters, net.velocityStart, net.omegaBodyStart,
                               net.dt};
  const auto t0 = Clock::now();
  stats = solver.solve(net.bodies, problem, nullptr);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t sweeps = 50;
  std::vector<std::size_t> sizes;
  if (argc > 1) {
    sweeps = static_cast<std::uint32_t>(std::max(2L, std::strtol(argv[1], nullptr, 10)));
  }
  for (int a = 2; a < argc; ++a) {
    sizes.push_back(static_cast<std::size_t>(std::strtoull(argv[a], nullptr, 10)));
  }
  if (sizes.empty()) {
    sizes = {10000, 100000};
  }
  std::printf("%10s %10s %8s %12s %12s %14s %14s\n", "bodies", "contacts", "sweeps", "solve_s",
              "setup_s", "updates/s", "sweep_upd/s");
  for (std::size_t target : sizes) {
    const int side = std::max(2, static_cast<int>(std::lround(std::cbrt(double(target)))));
    Network net;
    buildNetwork(net, side);
    InclusionSolverSettings set;
    set.method = SolverMethod::SorContact;
    set.subMethodUcf = UcfSubMethod::AlartCurnier;
    set.alphaSorProx = 1.2;
    set.minIter = set.maxIter = sweeps;
    ContactSolver solver(set);
    InclusionSolverSettings one = set;
    one.minIter = one.maxIter = 1;
    ContactSolver single(one);
    SolverStats st;
    SolverStats st1;
    // Warm-up (page faults, buffer growth), then best of 5.
    timedSolve(net, solver, st);
    timedSolve(net, single, st1);
    double best = 1e300;
    double best1 = 1e300;
    for (int rep = 0; rep < 5; ++rep) {
      best = std::min(best, timedSolve(net, solver, st));
      best1 = std::min(best1, timedSolve(net, single, st1));
    }
    const double nc = static_cast<double>(net.contacts.size());
    const double setup = std::max(0.0, best1 - (best - best1) / (sweeps - 1));
    std::printf("%10zu %10zu %8u %12.4f %12.4f %14.4g %14.4g\n", net.bodies.size() - 1,
                net.contacts.size(), st.iterations, best, setup, nc * sweeps / best,
                nc * (sweeps - 1) / (best - best1));
  }
  return 0;
}
