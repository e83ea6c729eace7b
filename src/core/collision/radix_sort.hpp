// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

namespace grain::collision::detail {

/// Sorts keys whose significant bits are below `bits` (LSD radix sort, <= 12-bit digits; fewer
/// than 256 keys by std::sort). `tmp` is scratch.
void radixSort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& tmp, int bits);

/// radixSort() on `threads` threads, each over a range of the keys: per pass, each thread
/// counts the digits of its range, then places its range where the counts of the digits before
/// and of the ranges before put it. Stable as the serial passes, so the order is the same.
/// `tmp` and `counts` are scratch.
void radixSort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& tmp, int bits,
               std::vector<std::uint32_t>& counts, int threads);

}  // namespace grain::collision::detail
