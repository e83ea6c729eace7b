// SPDX-License-Identifier: MIT
// The pile of bench/peer_ratio.sh in Bullet: equal spheres in a box (a floor and four walls as
// static planes), stepped by btDiscreteDynamicsWorld with its sequential impulse solver at a
// fixed time step, one substep per step. Prints the wall time of the stepping loop alone (set-up
// excluded) and the final state's mean height and kinetic energy, the check that it simulates
// the same pile as grain and LAMMPS.
//
// Bullet's world works in units of the sphere radius (positions, the walls and gravity are
// divided by it; the results are given back in m and J): Bullet's length tolerances are absolute
// and meant for bodies of about one unit (the broadphase enlarges every box by 0.05 units, the
// contact breaking threshold is 0.02 units, the split impulse's penetration threshold 0.04
// units). In metres, with 1 cm spheres, the broadphase of the default pile pairs spheres up to
// 26 radii apart, two thirds of all pairs (340236 of 499500), and a step takes some 0.1 s.
//
// Usage: grain-bullet_pile PILE_FILE
//
// PILE_FILE (written by bench/peer_ratio.sh): lines "key value" for radius (m), density (kg/m^3),
// friction (the Coulomb coefficient of every contact), restitution, gravity (m/s^2, along -z),
// dt (s), steps, iterations (solver iterations per step) and halfwidth (the walls are the planes
// x = +-halfwidth and y = +-halfwidth, the floor z = 0), then "positions N" and N lines "x y z"
// (sphere centres, m); '#' starts a comment line. Output, one line:
//   bullet  spheres N  steps S  dt T  iterations I  step-loop W s  mean-height Z m
//     kinetic-energy E J
// (E translational plus rotational.) Exit code 2 on a bad file.
#include <btBulletDynamicsCommon.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Pile {
  std::map<std::string, double> values;
  std::vector<btVector3> positions;
};

bool readPile(const char* path, Pile& pile) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "bullet_pile: cannot read %s\n", path);
    return false;
  }
  std::string line;
  std::size_t count = 0;
  bool inPositions = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream fields(line);
    if (inPositions) {
      double x = 0.0;
      double y = 0.0;
      double z = 0.0;
      if (!(fields >> x >> y >> z)) {
        std::fprintf(stderr, "bullet_pile: bad position line: %s\n", line.c_str());
        return false;
      }
      pile.positions.emplace_back(btScalar(x), btScalar(y), btScalar(z));
      continue;
    }
    std::string key;
    fields >> key;
    if (key == "positions") {
      fields >> count;
      inPositions = true;
      continue;
    }
    double value = 0.0;
    if (!(fields >> value)) {
      std::fprintf(stderr, "bullet_pile: bad line: %s\n", line.c_str());
      return false;
    }
    pile.values[key] = value;
  }
  for (const char* key : {"radius", "density", "friction", "restitution", "gravity", "dt", "steps",
                          "iterations", "halfwidth"}) {
    if (pile.values.count(key) == 0) {
      std::fprintf(stderr, "bullet_pile: %s has no %s\n", path, key);
      return false;
    }
  }
  if (count == 0 || pile.positions.size() != count) {
    std::fprintf(stderr, "bullet_pile: %s: expected %zu positions, read %zu\n", path, count,
                 pile.positions.size());
    return false;
  }
  return true;
}

/// Bullet multiplies the friction (and restitution) coefficients of the two objects of a contact:
/// every object gets the square root, so that each contact has the pile's coefficient.
void setContactCoefficients(btCollisionObject& object, const Pile& pile) {
  object.setFriction(btScalar(std::sqrt(pile.values.at("friction"))));
  object.setRestitution(btScalar(std::sqrt(pile.values.at("restitution"))));
  object.setRollingFriction(0);
  object.setSpinningFriction(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: grain-bullet_pile PILE_FILE\n");
    return 2;
  }
  Pile pile;
  if (!readPile(argv[1], pile)) {
    return 2;
  }
  const double radius = pile.values.at("radius");
  const double mass = pile.values.at("density") * 4.0 / 3.0 * M_PI * radius * radius * radius;
  const double dt = pile.values.at("dt");
  const long steps = std::lround(pile.values.at("steps"));
  const int iterations = static_cast<int>(std::lround(pile.values.at("iterations")));
  // Lengths in units of the radius: the sphere has radius 1.
  const double unit = radius;
  const btScalar halfwidth = btScalar(pile.values.at("halfwidth") / unit);

  btDefaultCollisionConfiguration configuration;
  btCollisionDispatcher dispatcher(&configuration);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &configuration);
  world.setGravity(btVector3(0, 0, btScalar(-pile.values.at("gravity") / unit)));
  world.getSolverInfo().m_numIterations = iterations;

  // The floor and the walls: planes n.x = c with the normal n into the box.
  const btVector3 normals[] = {btVector3(0, 0, 1), btVector3(1, 0, 0), btVector3(-1, 0, 0),
                               btVector3(0, 1, 0), btVector3(0, -1, 0)};
  const btScalar offsets[] = {0, -halfwidth, -halfwidth, -halfwidth, -halfwidth};
  std::vector<std::unique_ptr<btCollisionShape>> planeShapes;
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  for (int k = 0; k < 5; ++k) {
    planeShapes.push_back(std::make_unique<btStaticPlaneShape>(normals[k], offsets[k]));
    btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, planeShapes.back().get());
    bodies.push_back(std::make_unique<btRigidBody>(info));
    setContactCoefficients(*bodies.back(), pile);
    world.addRigidBody(bodies.back().get());
  }

  btSphereShape sphere{1};
  btVector3 inertia(0, 0, 0);
  sphere.calculateLocalInertia(btScalar(mass), inertia);
  std::vector<std::unique_ptr<btDefaultMotionState>> motionStates;
  std::vector<btRigidBody*> spheres;
  for (const btVector3& r : pile.positions) {
    btTransform start;
    start.setIdentity();
    start.setOrigin(r / btScalar(unit));
    motionStates.push_back(std::make_unique<btDefaultMotionState>(start));
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(mass), motionStates.back().get(),
                                                  &sphere, inertia);
    bodies.push_back(std::make_unique<btRigidBody>(info));
    btRigidBody& body = *bodies.back();
    setContactCoefficients(body, pile);
    // grain has no sleeping bodies: every sphere is stepped and solved in every step.
    body.setActivationState(DISABLE_DEACTIVATION);
    world.addRigidBody(&body);
    spheres.push_back(&body);
  }

  const auto start = std::chrono::steady_clock::now();
  for (long s = 0; s < steps; ++s) {
    // maxSubSteps = 0: one step of exactly dt.
    world.stepSimulation(btScalar(dt), 0);
  }
  const double loop =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  double height = 0.0;
  double energy = 0.0;
  const double rotationalInertia = 0.4 * mass * radius * radius;
  for (const btRigidBody* body : spheres) {
    height += body->getCenterOfMassPosition().z() * unit;
    energy += 0.5 * mass * body->getLinearVelocity().length2() * unit * unit +
              0.5 * rotationalInertia * body->getAngularVelocity().length2();
  }
  height /= static_cast<double>(spheres.size());

  for (btRigidBody* body : spheres) {
    world.removeRigidBody(body);
  }
  for (std::size_t k = 0; k < 5; ++k) {
    world.removeRigidBody(bodies[k].get());
  }
  std::printf(
      "bullet  spheres %zu  steps %ld  dt %g  iterations %d  step-loop %.4f s  mean-height %.5f m"
      "  kinetic-energy %.4g J\n",
      spheres.size(), steps, dt, iterations, loop, height, energy);
  return 0;
}
