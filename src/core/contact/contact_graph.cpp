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
  fill_.assign(offsets_.begin(), offsets_.end() - 1);
  // The three arrays do not overlap: said, so that the loop keeps a and b in registers as it did
  // with a freshly allocated fill array.
  std::uint32_t* __restrict__ next = fill_.data();
  std::uint32_t* __restrict__ index = contactIndex_.data();
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const auto ci = static_cast<std::uint32_t>(c);
    if (simulated[a[c]])
      index[next[a[c]]++] = ci;
    if (simulated[b[c]])
      index[next[b[c]]++] = ci;
  }
}

}  // namespace grain
