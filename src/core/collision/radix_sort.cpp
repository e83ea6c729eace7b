// SPDX-License-Identifier: MIT
// The broad phase's sort of its pair keys (CollisionDetector::sortPairs), on its own and on
// threads. Kept apart from collision_detector.cpp, whose per-body loops GCC inlines to a budget
// for the translation unit.
#include "radix_sort.hpp"

#include <algorithm>
#include <array>

#include "../solvers/parallel_items.hpp"

namespace grain::collision::detail {

void radixSort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& tmp, int bits) {
  if (keys.size() < 256) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  const int passes = std::max(1, (bits + 11) / 12);
  const int digit = (bits + passes - 1) / passes;
  const std::uint64_t mask = (std::uint64_t{1} << digit) - 1;
  std::array<std::uint32_t, (1u << 12) + 1> count{};
  tmp.resize(keys.size());
  for (int p = 0; p < passes; ++p) {
    const int shift = p * digit;
    std::fill(count.begin(), count.begin() + (std::size_t{1} << digit) + 1, 0u);
    for (const std::uint64_t k : keys) {
      ++count[((k >> shift) & mask) + 1];
    }
    if (count[((keys.front() >> shift) & mask) + 1] == keys.size()) {
      continue;  // all keys share this digit
    }
    for (std::size_t d = 1; d <= mask + 1; ++d) {
      count[d] += count[d - 1];
    }
    for (const std::uint64_t k : keys) {
      tmp[count[(k >> shift) & mask]++] = k;
    }
    keys.swap(tmp);
  }
}

void radixSort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& tmp, int bits,
               std::vector<std::uint32_t>& counts, int threads) {
  const std::size_t n = keys.size();
  const int passes = std::max(1, (bits + 11) / 12);
  const int digit = (bits + passes - 1) / passes;
  const std::uint64_t mask = (std::uint64_t{1} << digit) - 1;
  const std::size_t buckets = mask + 1;
  const auto parts = static_cast<std::size_t>(threads);
  auto begin = [&](std::size_t t) { return n * t / parts; };
  counts.resize(parts * buckets);
  tmp.resize(n);
  for (int p = 0; p < passes; ++p) {
    const int shift = p * digit;
    // Local bounds and pointers: the stores would otherwise make the compiler reload them.
    grain::detail::forEachItem(parts, threads, [&](std::size_t t) {
      std::uint32_t* const count = counts.data() + t * buckets;
      std::fill(count, count + buckets, 0u);
      const std::uint64_t* const in = keys.data();
      const std::size_t end = begin(t + 1);
      for (std::size_t k = begin(t); k < end; ++k) {
        ++count[(in[k] >> shift) & mask];
      }
    });
    const std::uint64_t first = (keys.front() >> shift) & mask;
    std::size_t same = 0;
    for (std::size_t t = 0; t < parts; ++t) {
      same += counts[t * buckets + first];
    }
    if (same == n) {
      continue;  // all keys share this digit
    }
    // Each range's first place for each digit: by digit, then by range.
    std::uint32_t at = 0;
    for (std::size_t d = 0; d < buckets; ++d) {
      for (std::size_t t = 0; t < parts; ++t) {
        const std::uint32_t count = counts[t * buckets + d];
        counts[t * buckets + d] = at;
        at += count;
      }
    }
    grain::detail::forEachItem(parts, threads, [&](std::size_t t) {
      std::uint32_t* const cursor = counts.data() + t * buckets;
      const std::uint64_t* const in = keys.data();
      std::uint64_t* const out = tmp.data();
      const std::size_t end = begin(t + 1);
      const int s = shift;
      const std::uint64_t m = mask;
      for (std::size_t k = begin(t); k < end; ++k) {
        const std::uint64_t key = in[k];
        out[cursor[(key >> s) & m]++] = key;
      }
    });
    keys.swap(tmp);
  }
}

}  // namespace grain::collision::detail
