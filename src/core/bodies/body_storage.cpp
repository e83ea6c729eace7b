// SPDX-License-Identifier: MIT
#include <cmath>

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
  orientation_.push_back(def.orientation.normalized());
  velocity_.push_back(def.velocity);
  omegaBody_.push_back(def.omegaBody);
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
