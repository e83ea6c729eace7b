// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/error.hpp>

namespace grain {

std::size_t BodyStorage::add(const BodyDef& def, Real boundingRadius) {
  GRAIN_REQUIRE(!indexOfId_.find(def.id, id_), "body " + formatBodyId(def.id) + " exists already");
  const bool simulated = def.motion == BodyMotion::Simulated;
  if (simulated) {
    GRAIN_REQUIRE(std::isfinite(def.mass) && def.mass > 0.0,
                  "body " + formatBodyId(def.id) + ": mass must be > 0");
    GRAIN_REQUIRE(def.inertiaBody.allFinite() && (def.inertiaBody.array() > 0.0).all(),
                  "body " + formatBodyId(def.id) + ": inertia must be > 0");
  }
  GRAIN_REQUIRE(def.position.allFinite() && def.velocity.allFinite() && def.omegaBody.allFinite() &&
                    def.orientation.coeffs().allFinite(),
                "body " + formatBodyId(def.id) + ": state must be finite");
  const Real qn = def.orientation.norm();
  GRAIN_REQUIRE(qn > 0.0, "body " + formatBodyId(def.id) + ": orientation must be non-zero");

  GRAIN_REQUIRE(id_.size() < BodyIdIndex::kEmpty, "too many bodies");
  const std::size_t i = id_.size();
  id_.push_back(def.id);
  position_.push_back(def.position);
  // A unit quaternion is kept bit for bit, so a copy of a body equals its original.
  const Quat q = std::abs(qn - 1.0) <= 1e-12 ? def.orientation : def.orientation.normalized();
  orientation_.push_back(q);
  velocity_.push_back(def.velocity);
  omegaBody_.push_back(def.omegaBody);
  orientationStart_.push_back(q);
  velocityStart_.push_back(def.velocity);
  omegaBodyStart_.push_back(def.omegaBody);
  mass_.push_back(simulated ? def.mass : 0.0);
  inertiaBody_.push_back(simulated ? def.inertiaBody : Vec3::Zero());
  invMass_.push_back(simulated ? 1.0 / def.mass : 0.0);
  invInertiaBody_.push_back(simulated ? Vec3(def.inertiaBody.cwiseInverse()) : Vec3::Zero());
  shape_.push_back(def.shape);
  material_.push_back(def.material);
  motion_.push_back(def.motion);
  ownership_.push_back(def.ownership);
  boundingRadius_.push_back(boundingRadius);
  indexOfId_.pushed(id_);
  if (simulated) {
    ++simulatedCount_;
  }
  return i;
}

void BodyStorage::remapShapes(const std::vector<ShapeIndex>& newIndex) {
  for (ShapeIndex& s : shape_) {
    GRAIN_REQUIRE(s < newIndex.size() && newIndex[s] != kNoShape,
                  "remapShapes: a body's shape was dropped");
    s = newIndex[s];
  }
}

void BodyStorage::remove(BodyId id) {
  const std::optional<std::uint32_t> found = indexOfId_.find(id, id_);
  GRAIN_REQUIRE(found.has_value(), "body " + formatBodyId(id) + " does not exist");
  const std::size_t i = *found;
  const std::size_t last = id_.size() - 1;
  indexOfId_.removing(i, id_);
  if (motion_[i] == BodyMotion::Simulated) {
    --simulatedCount_;
  }
  auto moveLast = [&](auto& v) {
    v[i] = std::move(v[last]);
    v.pop_back();
  };
  moveLast(id_);
  moveLast(position_);
  moveLast(orientation_);
  moveLast(velocity_);
  moveLast(omegaBody_);
  moveLast(orientationStart_);
  moveLast(velocityStart_);
  moveLast(omegaBodyStart_);
  moveLast(invMass_);
  moveLast(invInertiaBody_);
  moveLast(mass_);
  moveLast(inertiaBody_);
  moveLast(shape_);
  moveLast(material_);
  moveLast(motion_);
  moveLast(ownership_);
  moveLast(boundingRadius_);
}

std::optional<std::size_t> BodyStorage::indexOf(BodyId id) const {
  const std::optional<std::uint32_t> i = indexOfId_.find(id, id_);
  if (!i) {
    return std::nullopt;
  }
  return *i;
}

void BodyStorage::reserve(std::size_t n) {
  id_.reserve(n);
  position_.reserve(n);
  orientation_.reserve(n);
  velocity_.reserve(n);
  omegaBody_.reserve(n);
  orientationStart_.reserve(n);
  velocityStart_.reserve(n);
  omegaBodyStart_.reserve(n);
  invMass_.reserve(n);
  invInertiaBody_.reserve(n);
  mass_.reserve(n);
  inertiaBody_.reserve(n);
  shape_.reserve(n);
  material_.reserve(n);
  motion_.reserve(n);
  ownership_.reserve(n);
  boundingRadius_.reserve(n);
  indexOfId_.reserve(n, id_);
}

bool BodyStorage::sortedById() const {
  return std::is_sorted(id_.begin(), id_.end());
}

bool BodyStorage::sortById() {
  if (sortedById()) {
    return false;
  }
  // After an exchange the storage is mostly in id order: copies were appended and removals moved
  // the last body into holes. Split it into a greedy increasing run (most bodies) and the rest,
  // sort the rest and merge: O(N + m log m) for m misplaced bodies.
  const std::size_t n = id_.size();
  std::vector<std::uint32_t>& kept = sortScratch_.kept;
  std::vector<std::uint32_t>& rest = sortScratch_.rest;
  std::vector<std::uint32_t>& order = sortScratch_.order;
  kept.clear();
  rest.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const bool above = kept.empty() || id_[i] > id_[kept.back()];
    // A body larger than its successor, which still fits the run, is the misplaced one.
    const bool misplaced = !above || (i + 1 < n && id_[i + 1] < id_[i] &&
                                      (kept.empty() || id_[i + 1] > id_[kept.back()]));
    (misplaced ? rest : kept).push_back(static_cast<std::uint32_t>(i));
  }
  std::sort(rest.begin(), rest.end(),
            [&](std::uint32_t a, std::uint32_t b) { return id_[a] < id_[b]; });
  order.resize(n);
  std::merge(kept.begin(), kept.end(), rest.begin(), rest.end(), order.begin(),
             [&](std::uint32_t a, std::uint32_t b) { return id_[a] < id_[b]; });
  // The permutation's cycles, once for all columns: position k receives the body at order[k].
  std::vector<std::uint32_t>& cycles = sortScratch_.cycles;
  std::vector<char>& done = sortScratch_.done;
  cycles.clear();
  done.assign(n, 0);
  constexpr std::uint32_t kEnd = BodyIdIndex::kEmpty;  // permuting() skips these
  for (std::uint32_t k = 0; k < n; ++k) {
    if (done[k] != 0 || order[k] == k) {
      continue;
    }
    for (std::uint32_t j = k; done[j] == 0; j = order[j]) {
      done[j] = 1;
      cycles.push_back(j);
    }
    cycles.push_back(kEnd);
  }
  auto permute = [&](auto& v) {
    for (std::size_t c = 0; c < cycles.size();) {
      const std::uint32_t first = cycles[c];
      auto saved = std::move(v[first]);
      std::size_t k = c;
      for (; cycles[k + 1] != kEnd; ++k) {
        v[cycles[k]] = std::move(v[cycles[k + 1]]);
      }
      v[cycles[k]] = std::move(saved);
      c = k + 2;
    }
  };
  indexOfId_.permuting(cycles, order, id_);
  permute(id_);
  permute(position_);
  permute(orientation_);
  permute(velocity_);
  permute(omegaBody_);
  permute(orientationStart_);
  permute(velocityStart_);
  permute(omegaBodyStart_);
  permute(invMass_);
  permute(invInertiaBody_);
  permute(mass_);
  permute(inertiaBody_);
  permute(shape_);
  permute(material_);
  permute(motion_);
  permute(ownership_);
  permute(boundingRadius_);
  return true;
}

BodyDef BodyStorage::def(std::size_t i) const {
  BodyDef d;
  d.id = id_[i];
  d.motion = motion_[i];
  d.shape = shape_[i];
  d.material = material_[i];
  d.mass = mass_[i];
  d.inertiaBody = inertiaBody_[i];
  d.position = position_[i];
  d.orientation = orientation_[i];
  d.velocity = velocity_[i];
  d.omegaBody = omegaBody_[i];
  d.ownership = ownership_[i];
  return d;
}

}  // namespace grain
