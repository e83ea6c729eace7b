// SPDX-License-Identifier: MIT
// ShapeStore::intern and compaction: what a process does with the shapes of bodies that arrive
// from and leave for other processes.
#include <cmath>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/timestepping/dynamics_system.hpp>

namespace grain {
namespace {

BodyDef sphereBody(BodyId id, ShapeIndex shape) {
  BodyDef d;
  d.id = id;
  d.shape = shape;
  d.mass = 1.0;
  d.inertiaBody = Vec3::Constant(0.1);
  return d;
}

TEST(ShapeStore, InternFindsAnEqualShapeAndAddsANewOne) {
  ShapeStore store;
  const ShapeIndex a = store.add(Sphere{0.5});
  const ShapeIndex b = store.add(Box{Vec3(1, 2, 3), Vec3::Zero()});
  EXPECT_EQ(store.intern(Sphere{0.5}), a);
  EXPECT_EQ(store.intern(Box{Vec3(1, 2, 3), Vec3::Zero()}), b);
  EXPECT_EQ(store.size(), 2u);
  // One ulp away is another shape: copies must keep their exact values.
  const ShapeIndex c = store.intern(Sphere{std::nextafter(0.5, 1.0)});
  EXPECT_EQ(c, 2u);
  EXPECT_EQ(std::get<Sphere>(store[c]).radius, std::nextafter(0.5, 1.0));
  EXPECT_EQ(store.intern(Sphere{std::nextafter(0.5, 1.0)}), c);
  EXPECT_EQ(store.size(), 3u);
}

TEST(ShapeStore, InternKeepsTheGivenBitsOfDirections) {
  // add() normalises; intern() takes a shape from another store as it is.
  ShapeStore store;
  const Vec3 axis = Vec3(1, 1, 0).normalized();
  const ShapeIndex i = store.intern(Capsule{axis, 0.1, 0.4});
  EXPECT_EQ(std::get<Capsule>(store[i]).axis, axis);
  EXPECT_EQ(store.intern(Capsule{axis, 0.1, 0.4}), i);
  EXPECT_NE(store.intern(Capsule{axis, 0.1, 0.5}), i);
}

TEST(ShapeStore, InternRejectsInvalidShapes) {
  ShapeStore store;
  EXPECT_THROW(store.intern(Sphere{-1.0}), Error);
  EXPECT_EQ(store.size(), 0u);
}

TEST(ShapeStore, CompactionKeepsUsedShapesInOrderAndRenumbersBodies) {
  DynamicsSystem system;
  std::vector<ShapeIndex> shapes;
  for (int k = 0; k < 6; ++k) {
    shapes.push_back(system.shapes.add(Sphere{0.1 + 0.01 * k}));
  }
  system.addBody(sphereBody(makeBodyId(0, 1), shapes[1]));
  system.addBody(sphereBody(makeBodyId(0, 4), shapes[4]));
  system.addBody(sphereBody(makeBodyId(0, 5), shapes[4]));
  system.compactShapes();
  ASSERT_EQ(system.shapes.size(), 2u);
  EXPECT_EQ(std::get<Sphere>(system.shapes[0]).radius, 0.1 + 0.01 * 1);
  EXPECT_EQ(std::get<Sphere>(system.shapes[1]).radius, 0.1 + 0.01 * 4);
  EXPECT_EQ(system.bodies.shapes()[0], 0u);
  EXPECT_EQ(system.bodies.shapes()[1], 1u);
  EXPECT_EQ(system.bodies.shapes()[2], 1u);
  // The store still finds its shapes by value after compaction, and drops the others.
  EXPECT_EQ(system.shapes.intern(Sphere{0.1 + 0.01 * 4}), 1u);
  EXPECT_EQ(system.shapes.intern(Sphere{0.1 + 0.01 * 2}), 2u);
}

TEST(ShapeStore, ShapeKeysDifferByTypeAndValue) {
  EXPECT_EQ(shapeKey(Sphere{1.0}), shapeKey(Sphere{1.0}));
  EXPECT_NE(shapeKey(Sphere{1.0}), shapeKey(Sphere{2.0}));
  EXPECT_NE(shapeKey(Halfspace{Vec3::UnitZ()}), shapeKey(Halfspace{Vec3::UnitX()}));
  EXPECT_NE(shapeKey(Box{Vec3::Ones(), Vec3::Zero()}), shapeKey(Box{Vec3::Ones(), Vec3::UnitX()}));
}

}  // namespace
}  // namespace grain
