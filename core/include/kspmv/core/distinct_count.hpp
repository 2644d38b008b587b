// How many distinct values a list holds: the sectors or lines a warp's
// loads touch, counted by the model's pattern figures and the formats'
// reports. A warp of 32 short rows holds a few hundred values; a warp of
// power-law hubs holds hundreds of thousands, where sorting them cost tens
// of milliseconds on one host thread (15-30 ms on a 1M-row power-law
// graph), so a large list over a range it covers densely is counted with a
// bitmap in linear time instead.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kspmv {

// The number of distinct values in v (v is reordered).
inline std::int64_t distinct_count(std::vector<std::int64_t>& v) {
  constexpr std::size_t kSortBelow = 2048;
  if (v.size() >= kSortBelow) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    const std::uint64_t span = static_cast<std::uint64_t>(*hi - *lo) + 1, base = static_cast<std::uint64_t>(*lo);
    // A bitmap of the range where it is at most 8 bytes a value.
    if (span / 64 <= v.size()) {
      std::vector<std::uint64_t> seen(static_cast<std::size_t>(span / 64 + 1), 0);
      std::int64_t count = 0;
      for (const std::int64_t x : v) {
        const std::uint64_t b = static_cast<std::uint64_t>(x) - base;
        std::uint64_t& word = seen[static_cast<std::size_t>(b / 64)];
        const std::uint64_t bit = std::uint64_t(1) << (b % 64);
        count += (word & bit) ? 0 : 1;
        word |= bit;
      }
      return count;
    }
  }
  std::sort(v.begin(), v.end());
  return static_cast<std::int64_t>(std::unique(v.begin(), v.end()) - v.begin());
}

}  // namespace kspmv
