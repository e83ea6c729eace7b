// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <grain/core/contact/contact_storage.hpp>

namespace grain {

/// Contacts per body in compressed-sparse-row form: the contacts of body i are
/// contactIndex()[offsets()[i] .. offsets()[i+1]). Only simulated bodies get entries
/// (static partners do not couple contacts). Built once per step after collision detection.
class ContactGraph {
 public:
  /// Builds the graph of `contacts` over `bodyCount` bodies; `simulated[i]` says whether body i
  /// is simulated.
  void build(const ContactStorage& contacts, std::size_t bodyCount,
             const std::vector<bool>& simulated);

  std::span<const std::uint32_t> contactsOf(std::size_t body) const {
    return {contactIndex_.data() + offsets_[body], contactIndex_.data() + offsets_[body + 1]};
  }
  const std::vector<std::uint32_t>& offsets() const { return offsets_; }
  const std::vector<std::uint32_t>& contactIndex() const { return contactIndex_; }
  /// Number of contacts touching at least one simulated body.
  std::size_t bodyCount() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }

 private:
  std::vector<std::uint32_t> offsets_;
  std::vector<std::uint32_t> contactIndex_;
  std::vector<std::uint32_t> fill_;  ///< build(): next free slot per body (kept between steps)
};

}  // namespace grain
