// SPDX-License-Identifier: MIT
// The 96-sphere pile of the distributed solver tests (tests/mpi/distributed_pile.hpp) and of the
// PQN stepper test (tests/physics/local_solver_stepper_test.cpp), without MPI: 4 x 4 x 6 spheres
// (r = 1 cm, density 1000) dropped into a 10 cm box, mu = 0.3, settled by SOR steps.
// tests/mpi/distributed_run_test.cpp and bench/pqn_pile.cpp use it too.
#pragma once

#include <cmath>
#include <cstdint>

#include <grain/core/timestepping/moreau_stepper.hpp>

namespace grain::test {

inline void addPileSphere(DynamicsSystem& s, BodyId id, Real r, const Vec3& position) {
  BodyDef d;
  d.id = id;
  d.shape = s.shapes.add(Sphere{r});
  d.mass = 1000.0 * 4.0 / 3.0 * M_PI * r * r * r;
  d.inertiaBody = Vec3::Constant(0.4 * d.mass * r * r);
  d.position = position;
  s.addBody(d);
}

inline void addPileWall(DynamicsSystem& s, BodyId id, const Vec3& normal, const Vec3& position) {
  BodyDef d;
  d.id = id;
  d.motion = BodyMotion::Static;
  d.shape = s.shapes.add(Halfspace{normal});
  d.position = position;
  s.addBody(d);
}

/// A box (floor and four walls) with a loose column of 4 x 4 x 6 spheres (r = 1 cm) dropped into
/// it, mu = 0.3.
inline DynamicsSystem pile() {
  DynamicsSystem s;
  s.externalForces.addGravity(GravityField{});
  const Real r = 0.01, w = 0.1;
  addPileWall(s, makeBodyId(0, 0), Vec3(0, 0, 1), Vec3(0, 0, 0));
  addPileWall(s, makeBodyId(0, 1), Vec3(1, 0, 0), Vec3(0, 0, 0));
  addPileWall(s, makeBodyId(0, 2), Vec3(-1, 0, 0), Vec3(w, 0, 0));
  addPileWall(s, makeBodyId(0, 3), Vec3(0, 1, 0), Vec3(0, 0, 0));
  addPileWall(s, makeBodyId(0, 4), Vec3(0, -1, 0), Vec3(0, w, 0));
  std::uint32_t n = 0;
  for (int z = 0; z < 6; ++z) {
    for (int y = 0; y < 4; ++y) {
      for (int x = 0; x < 4; ++x) {
        const Real jitter = 0.002 * std::sin(1.7 * n + 0.3 * z);
        addPileSphere(s, makeBodyId(1, n), r,
                      Vec3(0.0125 + 0.025 * x + jitter, 0.0125 + 0.025 * y - jitter,
                           0.011 + 0.022 * z + 0.3 * jitter));
        ++n;
      }
    }
  }
  ContactParameter p;
  p.mu = 0.3;
  s.contactParameters.setStandard(p);
  return s;
}

constexpr Real kPileDt = 1e-3;  ///< time step of the pile (s)

/// The settings of the settling SOR steps: velocity SOR prox at relTol 1e-10 (absTol 1e-12, at
/// most 5000 sweeps).
inline StepperSettings pileSorSettings() {
  StepperSettings st;
  st.deltaT = kPileDt;
  st.solver.relTol = 1e-10;
  st.solver.absTol = 1e-12;
  st.solver.maxIter = 5000;
  return st;
}

/// The pile after `steps` serial SOR steps (pileSorSettings()): after 150 (default) settled into a
/// dense contact network (about 165 contacts), after 20 landing (its first contacts).
inline DynamicsSystem settledPile(int steps = 150) {
  DynamicsSystem s = pile();
  MoreauStepper stepper(pileSorSettings());
  for (int k = 0; k < steps; ++k) {
    stepper.step(s);
  }
  return s;
}

}  // namespace grain::test
