// SPDX-License-Identifier: MIT
// No heap allocation inside a step once the buffers have grown: a settled pile of a few hundred
// spheres on a floor (SOR prox, warm start, the default stepper) is stepped past its warm-up,
// then the global operator new is counted over further steps. This program replaces the global
// operator new and delete, so it is its own test executable.
//
// To see where a step allocates: gdb --args grain_step_allocations, `break
// countedAllocationHook`, run, bt.
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "../physics/physics_fixture.hpp"

namespace {

std::atomic<bool> gCounting{false};
std::atomic<std::size_t> gAllocations{0};
std::vector<int>* gEscaped = nullptr;

}  // namespace

/// Called for every allocation while counting (a breakpoint here shows who allocates).
extern "C" void countedAllocationHook(std::size_t bytes);
extern "C" __attribute__((noinline)) void countedAllocationHook(std::size_t bytes) {
  asm volatile("" : : "r"(bytes) : "memory");
}

namespace {

void* allocate(std::size_t bytes, std::size_t alignment) {
  if (gCounting.load(std::memory_order_relaxed)) {
    gAllocations.fetch_add(1, std::memory_order_relaxed);
    countedAllocationHook(bytes);
  }
  if (bytes == 0) {
    bytes = 1;
  }
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(bytes);
  } else if (posix_memalign(&p, alignment, bytes) != 0) {
    p = nullptr;
  }
  if (p == nullptr) {
    throw std::bad_alloc();
  }
  return p;
}

}  // namespace

void* operator new(std::size_t bytes) {
  return allocate(bytes, alignof(std::max_align_t));
}
void* operator new[](std::size_t bytes) {
  return allocate(bytes, alignof(std::max_align_t));
}
void* operator new(std::size_t bytes, std::align_val_t a) {
  return allocate(bytes, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t bytes, std::align_val_t a) {
  return allocate(bytes, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace grain {
namespace {

using testing::addSimulated;
using testing::addStatic;
using testing::makeSystem;

/// `count` spheres of radius 5 mm, 2500 kg/m^3, on a jittered grid above a floor inside a box
/// of half width 0.06 m (about three layers once settled).
DynamicsSystem makePile(int count) {
  constexpr Real kHalfWidth = 0.06;
  constexpr Real kRadius = 0.005;
  DynamicsSystem sys = makeSystem(0.5, 0.0);
  addStatic(sys, 0, Halfspace{Vec3::UnitZ()}, Vec3::Zero());
  addStatic(sys, 1, Halfspace{-Vec3::UnitX()}, Vec3(kHalfWidth, 0, 0));
  addStatic(sys, 2, Halfspace{Vec3::UnitX()}, Vec3(-kHalfWidth, 0, 0));
  addStatic(sys, 3, Halfspace{-Vec3::UnitY()}, Vec3(0, kHalfWidth, 0));
  addStatic(sys, 4, Halfspace{Vec3::UnitY()}, Vec3(0, -kHalfWidth, 0));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<Real> jitter(-0.0005, 0.0005);
  const int perRow = 10;
  const Real spacing = 0.0115;
  for (int i = 0; i < count; ++i) {
    const int ix = i % perRow;
    const int iy = (i / perRow) % perRow;
    const int iz = i / (perRow * perRow);
    const Vec3 pos(-0.05175 + spacing * ix + jitter(rng), -0.05175 + spacing * iy + jitter(rng),
                   0.01 + spacing * iz);
    addSimulated(sys, static_cast<std::uint32_t>(i), Sphere{kRadius},
                 2500.0 * 4.0 / 3.0 * testing::kPi * kRadius * kRadius * kRadius, pos);
  }
  return sys;
}

TEST(StepAllocations, NoneOnceThePileHasSettled) {
  DynamicsSystem sys = makePile(300);
  StepperSettings settings;  // the default stepper and SOR prox method
  settings.deltaT = 0.002;
  settings.solver.alphaSorProx = 1.5;
  settings.solver.maxIter = 80;
  settings.solver.absTol = 1e-6;
  settings.solver.relTol = 1e-6;
  settings.solver.usePercussionCache = true;
  settings.solver.driftCorrectionGap = true;
  settings.solver.driftCorrectionGapAlpha = 0.1;
  settings.solver.driftCorrectionGapSlop = 1e-4;
  settings.solver.reserveContacts = 0;  // every buffer grows inside the warm-up steps
  MoreauStepper stepper(settings);
  // Warm-up: the pile falls and settles; the buffers reach the steady contact count.
  std::size_t maxContacts = 0;
  for (int k = 0; k < 400; ++k) {
    maxContacts = std::max(maxContacts, stepper.step(sys).contacts);
  }
  ASSERT_GT(maxContacts, 600u);  // a pile with contacts, not free fall
  const int steps = 100;
  std::size_t contacts = 0;
  std::size_t grown = 0;  // steps with more contacts than ever before
  gAllocations = 0;
  gCounting = true;
  for (int k = 0; k < steps; ++k) {
    const StepStats s = stepper.step(sys);
    contacts = s.contacts;
    if (s.contacts > maxContacts) {
      ++grown;
      maxContacts = s.contacts;
    }
  }
  gCounting = false;
  EXPECT_GT(contacts, 600u);
  EXPECT_EQ(grown, 0u) << "the pile is not settled: the contact count still grows";
  EXPECT_EQ(gAllocations.load(), 0u) << "heap allocations in " << steps << " steps";
}

TEST(StepAllocations, TheCounterSeesAllocations) {
  // The replaced operator new is the one the library calls: a vector's growth is counted.
  gAllocations = 0;
  gCounting = true;
  gEscaped = new std::vector<int>(10);  // kept in a global, so the allocations cannot be elided
  gCounting = false;
  delete gEscaped;
  gEscaped = nullptr;
  EXPECT_EQ(gAllocations.load(), 2u);
}

}  // namespace
}  // namespace grain
