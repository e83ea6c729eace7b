// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include <grain/core/collision/collision_detector.hpp>
#include <grain/core/common/error.hpp>

#include "../solvers/parallel_items.hpp"
#include "kernels.hpp"
#include "radix_sort.hpp"

namespace grain {

namespace {

/// Bounding sphere of a sphere, box or capsule about its own centre (I frame), not yet enlarged
/// by the margin (CollisionDetector::inflateRadius).
inline void boundingSphere(const Shape& shape, const collision::ShapePose& pose, Vec3& center,
                           Real& radius) {
  if (const auto* s = std::get_if<Sphere>(&shape)) {
    center = pose.position;
    radius = s->radius;
  } else if (const auto* b = std::get_if<Box>(&shape)) {
    center = pose.position + pose.rotation * b->center;
    radius = b->halfExtent.norm();
  } else {
    const auto* c = std::get_if<Capsule>(&shape);
    center = pose.position;
    radius = 0.5 * c->length + c->radius;
  }
}

}  // namespace

CollisionDetector::CollisionDetector(const CollisionSettings& settings) : settings_(settings) {
  settings::checkBounds(settings_, "collision: ");
}

void CollisionDetector::detect(const BodyStorage& bodies, const ShapeStore& shapes,
                               ContactStorage& contacts, std::uint32_t threads) {
  threads_ = std::max(1u, threads);
  if (parts_.size() + 1 < threads_) {
    parts_.resize(threads_ - 1);
  }
  contacts.clear();
  stats_ = {};
  keys_.clear();
  keyShift_ = std::max(1, static_cast<int>(std::bit_width(bodies.size())));
  prepare(bodies, shapes);
  if (!simulatedBodies_.empty()) {
    if (settings_.broadPhase == BroadPhase::BruteForce) {
      bruteForceBroadPhase(bodies.size());
    } else {
      gridBroadPhase();
      planeAndMeshPairs();
    }
  }
  sortPairs();
  stats_.candidatePairs = keys_.size();
  narrowPhase(bodies, shapes, contacts);
  contacts.sortCanonical();  // no-op: the contacts are produced in canonical order
  stats_.contacts = contacts.size();
}

const collision::MeshBvh* CollisionDetector::meshBvh(const ShapeStore& shapes, ShapeIndex shape) {
  if (bvhCache_.size() <= shape) {
    bvhCache_.resize(shapes.size());
  }
  const Mesh& mesh = *std::get_if<Mesh>(&shapes[shape]);
  auto& slot = bvhCache_[shape];
  if (!slot || slot->meshData() != mesh.data.get()) {
    slot = std::make_shared<const collision::MeshBvh>(mesh.data);
  }
  return slot.get();
}

void CollisionDetector::prepare(const BodyStorage& bodies, const ShapeStore& shapes) {
  const std::size_t n = bodies.size();
  GRAIN_REQUIRE(n < (std::size_t{1} << 31), "collision: too many bodies");
  spheres_.resize(n);
  simulated_.resize(n);
  slot_.resize(n);
  poses_.clear();
  boxes_.clear();
  bounds_.clear();
  // Filled through cursors and cut to size at the end (no per-body capacity checks).
  simulatedBodies_.resize(n);
  candidates_.resize(n);
  std::size_t simulatedCount = 0;
  std::size_t candidateCount = 0;
  halfspaces_.clear();
  meshes_.clear();
  const auto& pos = bodies.positions();
  const auto& ori = bodies.orientations();
  const auto& shapeIdx = bodies.shapes();
  for (std::size_t i = 0; i < n; ++i) {
    const auto idx = static_cast<std::uint32_t>(i);
    const Shape& shape = shapes[shapeIdx[i]];
    const ShapeType type = shapeType(shape);
    const bool sim = bodies.isSimulated(i);
    simulated_[i] = sim ? 1 : 0;
    spheres_[i] = SphereData{pos[i], -1.0};
    if (type == ShapeType::Sphere) {
      const Real r = std::get_if<Sphere>(&shape)->radius;
      spheres_[i].radius = r;
      slot_[i] = kSphereSlot;
    } else {
      slot_[i] = static_cast<std::uint32_t>(poses_.size());
      collision::ShapePose& pose = poses_.emplace_back();
      pose.shape = &shape;
      pose.position = pos[i];
      pose.meshBvh = nullptr;
      pose.rotation = ori[i].toRotationMatrix();
      Aabb& aabb = boxes_.emplace_back();
      collision::CellList::Sphere& bounds = bounds_.emplace_back();
      if (type == ShapeType::Halfspace || type == ShapeType::Mesh) {
        GRAIN_REQUIRE(!sim,
                      "collision: simulated bodies with halfspace or mesh shapes are not "
                      "supported (body " +
                          formatBodyId(bodies.ids()[i]) + ")");
        if (type == ShapeType::Halfspace) {
          halfspaces_.push_back(idx);
        } else {
          pose.meshBvh = meshBvh(shapes, shapeIdx[i]);
          aabb = transformAabb(pose.meshBvh->bounds(), pos[i], pose.rotation);
          aabb.inflate(collision::aabbMargin(aabb));
          meshes_.push_back(idx);
        }
        continue;
      }
      aabb = collision::shapeAabb(shape, pos[i], pose.rotation);
      aabb.inflate(collision::aabbMargin(aabb));
      boundingSphere(shape, pose, bounds.center, bounds.radius);
      bounds.radius = inflateRadius(bounds.radius, bounds.center);
    }
    candidates_[candidateCount++] = idx;
    if (sim) {
      simulatedBodies_[simulatedCount++] = idx;
    }
  }
  candidates_.resize(candidateCount);
  simulatedBodies_.resize(simulatedCount);
}

void CollisionDetector::gridBroadPhase() {
  // Large-body threshold from the mean bounding radius of the simulated bodies.
  Real sum = 0.0;
  for (const std::uint32_t i : simulatedBodies_) {
    sum += bound(i).radius;
  }
  const Real cut = settings_.largeBodyRatio * sum / static_cast<Real>(simulatedBodies_.size());
  GRAIN_REQUIRE(std::isfinite(cut), "collision: non-finite body positions or sizes");
  gridBodies_.clear();
  largeBodies_.clear();
  Real maxRadius = 0.0;
  for (const std::uint32_t i : candidates_) {
    const collision::CellList::Sphere s = bound(i);
    GRAIN_REQUIRE(s.center.allFinite(), "collision: non-finite body position");
    if (s.radius <= cut) {
      gridBodies_.push_back(i);
      maxRadius = std::max(maxRadius, s.radius);
    } else {
      largeBodies_.push_back(i);
    }
  }
  const auto sphereOf = [this](std::uint32_t i) { return bound(i); };
  // On several threads each finds the bounds and cells of a range of the grid bodies and places
  // those of a range of cells (the same list).
  const std::size_t parts = gridBodies_.size() >= kMinItemsPerThread * threads_ ? threads_ : 1;
  grid_.build(
      gridBodies_, sphereOf, simulated_, 2.0 * maxRadius * settings_.cellSizeFactor, parts,
      [parts](const auto& part) { detail::forEachItem(parts, static_cast<int>(parts), part); });
  stats_.gridBodies = gridBodies_.size();
  stats_.largeBodies = largeBodies_.size();
  stats_.cellSize = grid_.cellSize();
  stats_.denseGrid = grid_.dense();

  gridPairs();

  // Large bodies against the grid, then against each other.
  for (const std::uint32_t L : largeBodies_) {
    const bool simL = simulated_[L] != 0;
    grid_.forEachInBox(box(L), [&](std::uint32_t j, bool simJ) {
      if (simL || simJ) {
        addPair(L, j);
      }
    });
  }
  constexpr std::size_t kBruteLarge = 256;
  if (largeBodies_.size() <= kBruteLarge) {
    for (std::size_t p = 0; p < largeBodies_.size(); ++p) {
      const std::uint32_t i = largeBodies_[p];
      for (std::size_t q = p + 1; q < largeBodies_.size(); ++q) {
        const std::uint32_t j = largeBodies_[q];
        if ((simulated_[i] || simulated_[j]) && box(i).overlaps(box(j))) {
          addPair(i, j);
        }
      }
    }
  } else {
    Real maxLarge = 0.0;
    for (const std::uint32_t i : largeBodies_) {
      maxLarge = std::max(maxLarge, bound(i).radius);
    }
    largeGrid_.build(largeBodies_, sphereOf, simulated_, 2.0 * maxLarge);
    largeGrid_.forEachPair([this](std::uint32_t a, std::uint32_t b, bool simA, bool simB) {
      if (box(a).overlaps(box(b))) {
        addPair(a, b, simA, simB);
      }
    });
  }
}

void CollisionDetector::gridPairs() {
  // On several threads each takes a range of the grid's cells; the keys are sorted later, so
  // the order in which the threads' keys are joined does not matter.
  const std::uint32_t parts = gridBodies_.size() >= kMinItemsPerThread * threads_ ? threads_ : 1;
  if (parts > 1) {
    const auto count = static_cast<std::ptrdiff_t>(parts);
    const int teamSize = static_cast<int>(parts);
#pragma omp parallel for num_threads(teamSize) schedule(static, 1) default(none) shared(count)
    for (std::ptrdiff_t t = 0; t < count; ++t) {
      std::vector<std::uint64_t>& keys = t == 0 ? keys_ : parts_[t - 1].keys;
      keys.clear();
      grid_.forEachPair([&](std::uint32_t a, std::uint32_t b, bool simA,
                            bool simB) { addPair(keys, a, b, simA, simB); },
                        static_cast<std::size_t>(t), static_cast<std::size_t>(count));
    }
    for (std::uint32_t t = 1; t < parts; ++t) {
      keys_.insert(keys_.end(), parts_[t - 1].keys.begin(), parts_[t - 1].keys.end());
    }
  } else {
    grid_.forEachPair([this](std::uint32_t a, std::uint32_t b, bool simA, bool simB) {
      addPair(a, b, simA, simB);
    });
  }
}

void CollisionDetector::planeAndMeshPairs() {
  // Each body's box is formed once and tested against every plane (the pairs are sorted later,
  // so the order in which they are found does not matter).
  planes_.clear();
  for (const std::uint32_t h : halfspaces_) {
    const collision::ShapePose& ph = poses_[slot_[h]];
    const Vec3 n = ph.rotation * std::get_if<Halfspace>(ph.shape)->normal;
    planes_.push_back(Plane{n, n.cwiseAbs(), ph.position, h});
  }
  if (!planes_.empty()) {
    // On several threads each takes a range of the simulated bodies (its pairs in its own keys,
    // thread 0's in keys_, joined in thread order).
    const std::size_t nb = simulatedBodies_.size();
    const std::size_t parts = nb >= kMinItemsPerThread * threads_ ? threads_ : 1;
    detail::forEachItem(parts, static_cast<int>(parts), [&](std::size_t t) {
      std::vector<std::uint64_t>& keys = t == 0 ? keys_ : parts_[t - 1].keys;
      if (t > 0) {
        keys.clear();
      }
      const std::size_t end = nb * (t + 1) / parts;  // local: the keys' stores could alias nb
      for (std::size_t k = nb * t / parts; k < end; ++k) {
        const std::uint32_t j = simulatedBodies_[k];
        const Aabb b = box(j);
        const Vec3 center = b.center();
        const Vec3 halfExtent = b.halfExtent();
        for (const Plane& p : planes_) {
          // Lowest point of the (margin-enlarged) box along n against the plane.
          if (p.normal.dot(center - p.position) - p.absNormal.dot(halfExtent) <= 0.0) {
            addPair(keys, p.body, j, simulated_[p.body] != 0, true);
          }
        }
      }
    });
    for (std::size_t t = 1; t < parts; ++t) {
      keys_.insert(keys_.end(), parts_[t - 1].keys.begin(), parts_[t - 1].keys.end());
    }
  }
  for (const std::uint32_t m : meshes_) {
    const Aabb& bm = boxes_[slot_[m]];
    for (const std::uint32_t j : simulatedBodies_) {
      if (bm.overlaps(box(j))) {
        addPair(m, j);
      }
    }
  }
}

void CollisionDetector::bruteForceBroadPhase(std::size_t bodyCount) {
  for (std::size_t i = 0; i < bodyCount; ++i) {
    for (std::size_t j = i + 1; j < bodyCount; ++j) {
      if (simulated_[i] || simulated_[j]) {
        addPair(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j));
      }
    }
  }
}

void CollisionDetector::sortPairs() {
  // keys_ were packed with keyShift_ bits for B; see addPair().
  const int bits = 2 * keyShift_;
  if (threads_ > 1 && keys_.size() >= kMinItemsPerThread * threads_) {
    collision::detail::radixSort(keys_, keysTmp_, bits, radixCounts_, static_cast<int>(threads_));
  } else {
    collision::detail::radixSort(keys_, keysTmp_, bits);
  }
}

std::vector<BodyPair> CollisionDetector::candidatePairs() const {
  std::vector<BodyPair> pairs(keys_.size());
  for (std::size_t k = 0; k < keys_.size(); ++k) {
    pairs[k] = pairOf(keys_[k]);
  }
  return pairs;
}

void CollisionDetector::narrowRange(const BodyStorage& bodies, const ShapeStore& shapes,
                                    std::size_t begin, std::size_t end, ContactStorage& contacts,
                                    collision::ContactManifold& manifold,
                                    collision::NarrowPhaseScratch& scratch) const {
  const auto& pos = bodies.positions();
  const std::size_t count = end;
  constexpr std::size_t kPrefetch = 16;
  for (std::size_t k = begin; k < count; ++k) {
    const BodyPair p = pairOf(keys_[k]);
    // B is a random body: fetch its data some pairs ahead (A advances sequentially).
    if (k + kPrefetch < count) {
      __builtin_prefetch(&spheres_[pairOf(keys_[k + kPrefetch]).b]);
    }
    // Sphere-sphere pairs (the bulk of a granular packing) use compact per-body data instead of
    // the full poses; same arithmetic as the table kernel.
    const SphereData& sa = spheres_[p.a];
    const SphereData& sb = spheres_[p.b];
    if (sa.radius >= 0.0 && sb.radius >= 0.0) {
      collision::ContactPoint c;
      if (collision::detail::sphereContact(sa.position, sa.radius, sb.position, sb.radius,
                                           Vec3::UnitZ(), c)) {
        contacts.add(p.a, p.b, c.normal, c.gap, c.pointA - sa.position, c.pointB - sb.position);
      }
      continue;
    }
    const collision::ShapePose pa = pose(bodies, shapes, p.a);
    const collision::ShapePose pb = pose(bodies, shapes, p.b);
    const collision::PairKernel kernel =
        collision::pairKernel(shapeType(*pa.shape), shapeType(*pb.shape));
    if (kernel == nullptr) {
      continue;
    }
    manifold.clear();
    kernel(pa, pb, manifold, scratch);
    if (manifold.empty()) {
      continue;
    }
    // Turn points into lever arms and order them as sortCanonical() does (gap, then rA).
    for (collision::ContactPoint& c : manifold) {
      c.pointA -= pos[p.a];
      c.pointB -= pos[p.b];
    }
    if (manifold.size() > 1) {
      std::sort(manifold.begin(), manifold.end(),
                [](const collision::ContactPoint& x, const collision::ContactPoint& y) {
                  if (x.gap != y.gap) {
                    return x.gap < y.gap;
                  }
                  return std::lexicographical_compare(x.pointA.data(), x.pointA.data() + 3,
                                                      y.pointA.data(), y.pointA.data() + 3);
                });
    }
    for (const collision::ContactPoint& c : manifold) {
      contacts.add(p.a, p.b, c.normal, c.gap, c.pointA, c.pointB);
    }
  }
}

void CollisionDetector::narrowPhase(const BodyStorage& bodies, const ShapeStore& shapes,
                                    ContactStorage& contacts) {
  const std::size_t count = keys_.size();
  const std::uint32_t parts = count >= kMinItemsPerThread * threads_ ? threads_ : 1;
  if (parts == 1) {
    narrowRange(bodies, shapes, 0, count, contacts, manifold_, scratch_);
    return;
  }
  // Consecutive ranges of the sorted pairs, one per thread, joined in order: the contacts of one
  // thread's run, in canonical order.
  const auto t0 = static_cast<std::ptrdiff_t>(parts);
  const int teamSize = static_cast<int>(parts);
#pragma omp parallel for num_threads(teamSize) schedule(static, 1) default(none) \
    shared(bodies, shapes, contacts, count, t0)
  for (std::ptrdiff_t t = 0; t < t0; ++t) {
    const std::size_t begin = count * static_cast<std::size_t>(t) / static_cast<std::size_t>(t0);
    const std::size_t end = count * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(t0);
    if (t == 0) {
      narrowRange(bodies, shapes, begin, end, contacts, manifold_, scratch_);
    } else {
      ThreadPart& part = parts_[t - 1];
      part.contacts.clear();
      narrowRange(bodies, shapes, begin, end, part.contacts, part.manifold, part.scratch);
    }
  }
  for (std::uint32_t t = 1; t < parts; ++t) {
    contacts.append(parts_[t - 1].contacts);
  }
}

}  // namespace grain
