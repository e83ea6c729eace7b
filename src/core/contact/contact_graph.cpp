// SPDX-License-Identifier: MIT
#include <grain/core/contact/contact_graph.hpp>

namespace grain {

void ContactGraph::build(const ContactStorage& contacts, std::size_t bodyCount,
                         const std::vector<bool>& simulated) {
  offsets_.assign(bodyCount + 1, 0);
  const auto& a = contacts.bodyA();
  const auto& b = contacts.bodyB();
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    if (simulated[a[c]])
      ++offsets_[a[c] + 1];
    if (simulated[b[c]])
      ++offsets_[b[c] + 1];
  }
  for (std::size_t i = 0; i < bodyCount; ++i) {
    offsets_[i + 1] += offsets_[i];
  }
  contactIndex_.resize(offsets_[bodyCount]);
  std::vector<std::uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const auto ci = static_cast<std::uint32_t>(c);
    if (simulated[a[c]])
      contactIndex_[fill[a[c]]++] = ci;
    if (simulated[b[c]])
      contactIndex_[fill[b[c]]++] = ci;
  }
}

}  // namespace grain
