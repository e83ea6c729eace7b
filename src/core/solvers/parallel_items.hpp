// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>

namespace grain::detail {

/// Calls item(i) for every i in [0, count): with threads > 1 on that many threads, each a static
/// range of the indices, else in order on the calling thread. For the solver's passes whose items
/// are independent (each writes only its own outputs from its own inputs), which so give the same
/// bits on any number of threads.
template <class Item>
void forEachItem(std::size_t count, int threads, const Item& item) {
  if (threads > 1) {
    const auto n = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for num_threads(threads) schedule(static) default(none) shared(item, n)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      item(static_cast<std::size_t>(i));
    }
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    item(i);
  }
}

}  // namespace grain::detail
