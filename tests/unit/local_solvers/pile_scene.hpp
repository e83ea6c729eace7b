// SPDX-License-Identifier: MIT
#pragma once

#include "../solvers/solver_test_scene.hpp"

namespace grain::test {

/// Floor (0), an animated belt (1) and four spheres (2..5) in a small pile: contacts with the
/// floor, the belt and between spheres, normals not aligned with the axes, spins.
inline SolverScene pile(ContactModel model = ContactModel::UCF) {
  SolverScene s;
  s.addFixed();
  s.addFixed(BodyMotion::Animated, Vec3(0.3, 0.1, 0.0));
  const Real r = 0.1;
  s.addSphere(1.0, r, Vec3(0.0, 0.0, r), Vec3(0.1, 0.0, -0.5), Vec3(0.0, 2.0, 0.0));
  s.addSphere(2.0, r, Vec3(0.2, 0.0, r), Vec3(-0.2, 0.1, -0.3), Vec3(1.0, 0.0, 0.5));
  s.addSphere(1.5, r, Vec3(0.1, 0.05, r + 0.17), Vec3(0.0, 0.0, -1.0));
  s.addSphere(0.7, r, Vec3(0.4, 0.0, r), Vec3(0.3, 0.0, -0.2));
  s.bodies.orientations()[3] = Quat(Eigen::AngleAxisd(0.7, Vec3(1.0, 2.0, 3.0).normalized()));
  s.bodies.orientations()[4] = Quat(Eigen::AngleAxisd(-1.1, Vec3(0.0, 1.0, 1.0).normalized()));
  auto addBetween = [&](std::uint32_t a, std::uint32_t b) {
    const Vec3 pa = s.bodies.positions()[a];
    const Vec3 pb = s.bodies.positions()[b];
    const Vec3 n = (pb - pa).normalized();
    s.contacts.add(a, b, n, (pb - pa).norm() - 2 * r, r * n, -r * n);
  };
  for (std::uint32_t b : {2u, 3u}) {  // floor
    s.contacts.add(0, b, Vec3::UnitZ(), 0.0, Vec3(s.bodies.positions()[b].x(), 0.0, 0.0),
                   Vec3(0.0, 0.0, -r));
  }
  s.contacts.add(1, 5, Vec3::UnitZ(), -0.001, Vec3::Zero(), Vec3(0.0, 0.0, -r));  // belt
  addBetween(2, 3);
  addBetween(2, 4);
  addBetween(3, 4);
  addBetween(3, 5);
  ContactParameter p;
  p.model = model;
  p.mu = 0.4;
  p.epsilonN = 0.3;
  p.epsilonT = 0.1;
  if (model == ContactModel::UCFD) {
    p.invDampingN = 2e-4;
    p.invDampingT = 5e-4;
  }
  s.parameters.setStandard(p);
  s.prepare();
  return s;
}

}  // namespace grain::test
