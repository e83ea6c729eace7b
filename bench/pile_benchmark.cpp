// SPDX-License-Identifier: MIT
// Step benchmark on a settled dense pile: spheres on a face-centred cubic lattice (12 touching
// neighbours each) resting on a floor inside four walls, so that every step solves a
// realistic, fully connected contact network. Reports the wall time per step split by stage
// and the SOR contact updates per second (contacts x sweeps / solve time), at a fixed number of
// sweeps per step (minIter = maxIter).
//
// Usage: grain-pile_benchmark [bodies ...] [--sweeps N] [--steps N] [--threads T]
//        default: 10000 100000 bodies, 50 sweeps, 5 measured steps after 2 warm-up steps, 1 thread.
// With T > 1 threads the ContactGraph stage includes the contact colouring and the SOR sweeps run
// colour by colour (docs/architecture.md); the updates per second are then those of T threads.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <grain/core/geometry/mass_properties.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>

namespace {

using namespace grain;

DynamicsSystem makeFccPile(std::size_t target, Real radius) {
  DynamicsSystem sys;
  sys.externalForces.addGravity({9.81, -Vec3::UnitZ()});
  ContactParameter p;
  p.mu = 0.5;
  p.epsilonN = 0.0;
  p.epsilonT = 0.0;
  sys.contactParameters.setStandard(p);

  // Lattice constant so that nearest neighbours (a / sqrt 2 apart) overlap by 1e-6 r.
  const Real a = std::sqrt(2.0) * (2.0 * radius - 1e-6 * radius);
  // A base of n x n cells and as many layers as needed (about as tall as wide).
  const auto n = static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(target) / 4.0)));
  const Vec3 basis[4] = {Vec3(0, 0, 0), Vec3(0.5, 0.5, 0), Vec3(0.5, 0, 0.5), Vec3(0, 0.5, 0.5)};
  const Sphere sphere{radius};
  const ShapeIndex sphereShape = sys.shapes.add(sphere);
  const Real mass = 2500.0 * volume(sphere);
  const Vec3 inertia = homogeneousInertia(sphere, mass);
  sys.bodies.reserve(target + 5);

  const Real extent = a * static_cast<Real>(n);
  auto addWall = [&](std::uint32_t number, const Vec3& normal, const Vec3& pos) {
    BodyDef d;
    d.id = makeBodyId(1, number);
    d.motion = BodyMotion::Static;
    d.shape = sys.shapes.add(Halfspace{normal});
    d.position = pos;
    sys.addBody(d);
  };
  addWall(0, Vec3::UnitZ(), Vec3::Zero());
  addWall(1, Vec3::UnitX(), Vec3(-radius, 0, 0));
  addWall(2, -Vec3::UnitX(), Vec3(extent - 0.5 * a + radius, 0, 0));
  addWall(3, Vec3::UnitY(), Vec3(0, -radius, 0));
  addWall(4, -Vec3::UnitY(), Vec3(0, extent - 0.5 * a + radius, 0));

  std::uint32_t number = 0;
  for (std::size_t k = 0; number < target; ++k) {
    for (std::size_t j = 0; j < n && number < target; ++j) {
      for (std::size_t i = 0; i < n && number < target; ++i) {
        for (const Vec3& b : basis) {
          if (number >= target)
            break;
          const Vec3 cell(static_cast<Real>(i), static_cast<Real>(j), static_cast<Real>(k));
          const Vec3 x = a * (cell + b);
          if (x.x() > extent - 0.5 * a + 1e-12 || x.y() > extent - 0.5 * a + 1e-12)
            continue;
          BodyDef d;
          d.id = makeBodyId(0, number++);
          d.shape = sphereShape;
          d.mass = mass;
          d.inertiaBody = inertia;
          d.position = x + Vec3(0, 0, radius * (1.0 - 1e-6));
          sys.addBody(d);
        }
      }
    }
  }
  return sys;
}

void run(std::size_t bodies, std::uint32_t sweeps, int steps, std::uint32_t threads) {
  DynamicsSystem sys = makeFccPile(bodies, 0.005);
  StepperSettings settings;
  settings.deltaT = 1e-3;
  settings.solver.method = SolverMethod::SorContact;
  settings.solver.alphaSorProx = 1.5;
  settings.solver.minIter = sweeps;
  settings.solver.maxIter = sweeps;
  settings.solver.reserveContacts = 8 * bodies;
  settings.solver.threadCount = threads;
  MoreauStepper stepper(settings);
  std::size_t maxContacts = 0;  // over all steps: the pile has more before it settles
  for (int k = 0; k < 2; ++k) {
    maxContacts = std::max(maxContacts, stepper.step(sys).contacts);  // warm-up: allocations
  }
  std::array<double, static_cast<std::size_t>(Stage::Count)> stage{};
  double total = 0.0;
  double updates = 0.0;
  std::size_t contacts = 0;
  for (int k = 0; k < steps; ++k) {
    const StepStats s = stepper.step(sys);
    for (std::size_t i = 0; i < stage.size(); ++i)
      stage[i] += s.stageSeconds[i];
    total += s.stepSeconds;
    updates += static_cast<double>(s.contacts) * s.iterations;
    contacts = s.contacts;
    maxContacts = std::max(maxContacts, s.contacts);
  }
  const double solve = stage[static_cast<std::size_t>(Stage::ContactSolve)];
  std::printf("bodies %zu  contacts %zu  sweeps/step %u  steps %d  most contacts %zu\n",
              sys.bodies.simulatedCount(), contacts, sweeps, steps, maxContacts);
  std::printf("  %-20s %12s %8s\n", "stage", "ms/step", "share");
  for (std::size_t i = 0; i < stage.size(); ++i) {
    std::printf("  %-20s %12.3f %7.1f%%\n", std::string(toString(static_cast<Stage>(i))).c_str(),
                1e3 * stage[i] / steps, 100.0 * stage[i] / total);
  }
  std::printf("  %-20s %12.3f\n", "step", 1e3 * total / steps);
  if (threads == 1) {
    std::printf("  SOR contact updates per second (one core): %.3g\n\n", updates / solve);
  } else {
    std::printf("  SOR contact updates per second (%u threads): %.3g\n\n", threads,
                updates / solve);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  std::uint32_t sweeps = 50;
  int steps = 5;
  std::uint32_t threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--sweeps" && i + 1 < argc) {
      sweeps = static_cast<std::uint32_t>(std::atoi(argv[++i]));
    } else if (arg == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = static_cast<std::uint32_t>(std::max(1, std::atoi(argv[++i])));
    } else {
      sizes.push_back(static_cast<std::size_t>(std::atoll(arg.c_str())));
    }
  }
  if (sizes.empty())
    sizes = {10000, 100000};
  for (std::size_t n : sizes)
    run(n, sweeps, steps, threads);
  return 0;
}
