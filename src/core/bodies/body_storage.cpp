// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <numeric>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/common/error.hpp>

namespace grain {

std::size_t BodyStorage::add(const BodyDef& def, Real boundingRadius) {
  GRAIN_REQUIRE(!indexOfId_.contains(def.id), "body " + formatBodyId(def.id) + " exists already");
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
  indexOfId_.emplace(def.id, i);
  if (simulated) {
    ++simulatedCount_;
  }
  return i;
}

void BodyStorage::remove(BodyId id) {
  const auto it = indexOfId_.find(id);
  GRAIN_REQUIRE(it != indexOfId_.end(), "body " + formatBodyId(id) + " does not exist");
  const std::size_t i = it->second;
  const std::size_t last = id_.size() - 1;
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
  indexOfId_.erase(it);
  if (i != last) {
    indexOfId_[id_[i]] = i;
  }
}

std::optional<std::size_t> BodyStorage::indexOf(BodyId id) const {
  const auto it = indexOfId_.find(id);
  if (it == indexOfId_.end()) {
    return std::nullopt;
  }
  return it->second;
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
  indexOfId_.reserve(n);
}

bool BodyStorage::sortedById() const {
  return std::is_sorted(id_.begin(), id_.end());
}

bool BodyStorage::sortById() {
  if (sortedById()) {
    return false;
  }
  std::vector<std::uint32_t> order(id_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return id_[a] < id_[b]; });
  auto permute = [&](auto& v) {
    std::remove_reference_t<decltype(v)> sorted;
    sorted.reserve(v.size());
    for (const std::uint32_t k : order) {
      sorted.push_back(std::move(v[k]));
    }
    v.swap(sorted);
  };
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
  for (std::size_t i = 0; i < id_.size(); ++i) {
    indexOfId_[id_[i]] = i;
  }
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
