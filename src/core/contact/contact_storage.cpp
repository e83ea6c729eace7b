// SPDX-License-Identifier: MIT
#include <algorithm>
#include <numeric>

#include <grain/core/common/error.hpp>
#include <grain/core/contact/contact_storage.hpp>

namespace grain {

void ContactStorage::clear() {
  bodyA_.clear();
  bodyB_.clear();
  normal_.clear();
  gap_.clear();
  rA_.clear();
  rB_.clear();
}

void ContactStorage::reserve(std::size_t n) {
  bodyA_.reserve(n);
  bodyB_.reserve(n);
  normal_.reserve(n);
  gap_.reserve(n);
  rA_.reserve(n);
  rB_.reserve(n);
}

std::size_t ContactStorage::add(std::uint32_t bodyA, std::uint32_t bodyB, const Vec3& normal,
                                Real gap, const Vec3& rA, const Vec3& rB) {
  bodyA_.push_back(bodyA);
  bodyB_.push_back(bodyB);
  normal_.push_back(normal);
  gap_.push_back(gap);
  rA_.push_back(rA);
  rB_.push_back(rB);
  return bodyA_.size() - 1;
}

void ContactStorage::sortCanonical() {
  const auto less = [&](std::size_t a, std::size_t b) {
    if (bodyA_[a] != bodyA_[b])
      return bodyA_[a] < bodyA_[b];
    if (bodyB_[a] != bodyB_[b])
      return bodyB_[a] < bodyB_[b];
    if (gap_[a] != gap_[b])
      return gap_[a] < gap_[b];
    return std::lexicographical_compare(rA_[a].data(), rA_[a].data() + 3, rA_[b].data(),
                                        rA_[b].data() + 3);
  };
  // Collision detection already emits canonical order: skip the sort (and its allocations).
  bool sorted = true;
  for (std::size_t k = 1; k < size() && sorted; ++k) {
    sorted = !less(k, k - 1);
  }
  if (sorted) {
    return;
  }
  std::vector<std::uint32_t> order(size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), less);
  auto permute = [&](auto& v) {
    auto copy = v;
    for (std::size_t k = 0; k < order.size(); ++k) {
      v[k] = copy[order[k]];
    }
  };
  permute(bodyA_);
  permute(bodyB_);
  permute(normal_);
  permute(gap_);
  permute(rA_);
  permute(rB_);
}

void ContactStorage::append(const ContactStorage& other) {
  auto add = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  add(bodyA_, other.bodyA_);
  add(bodyB_, other.bodyB_);
  add(normal_, other.normal_);
  add(gap_, other.gap_);
  add(rA_, other.rA_);
  add(rB_, other.rB_);
}

void ContactStorage::keepOnly(const std::vector<char>& keep) {
  GRAIN_REQUIRE(keep.size() == size(), "ContactStorage::keepOnly: one flag per contact");
  auto compact = [&](auto& v) {
    std::size_t out = 0;
    for (std::size_t c = 0; c < keep.size(); ++c) {
      if (keep[c] != 0) {
        v[out++] = v[c];
      }
    }
    v.resize(out);
  };
  compact(bodyA_);
  compact(bodyB_);
  compact(normal_);
  compact(gap_);
  compact(rA_);
  compact(rB_);
}

std::size_t ContactStorage::moveToFront(const std::vector<char>& first) {
  GRAIN_REQUIRE(first.size() == size(), "ContactStorage::moveToFront: one flag per contact");
  order_.clear();
  for (std::size_t c = 0; c < first.size(); ++c) {
    if (first[c] != 0) {
      order_.push_back(static_cast<std::uint32_t>(c));
    }
  }
  const std::size_t moved = order_.size();
  if (moved == 0 || moved == size()) {
    return moved;
  }
  for (std::size_t c = 0; c < first.size(); ++c) {
    if (first[c] == 0) {
      order_.push_back(static_cast<std::uint32_t>(c));
    }
  }
  auto permute = [&](auto& v, auto& scratch) {
    scratch.resize(v.size());
    for (std::size_t k = 0; k < order_.size(); ++k) {
      scratch[k] = v[order_[k]];
    }
    v.swap(scratch);
  };
  permute(bodyA_, scratchIndex_);
  permute(bodyB_, scratchIndex_);
  permute(normal_, scratchVec3_);
  permute(gap_, scratchReal_);
  permute(rA_, scratchVec3_);
  permute(rB_, scratchVec3_);
  return moved;
}

}  // namespace grain
