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

namespace detail {
// Distinct values of v[0, n), all in [lo, lo + span), counted with a
// bitmap of the range (`bits`, reused: assigned span / 64 + 1 zero words).
inline std::int64_t bitmap_distinct(const std::int64_t* v, std::size_t n, std::int64_t lo, std::uint64_t span,
                                    std::vector<std::uint64_t>& bits) {
  bits.assign(static_cast<std::size_t>(span / 64 + 1), 0);
  const std::uint64_t base = static_cast<std::uint64_t>(lo);
  std::int64_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t b = static_cast<std::uint64_t>(v[i]) - base;
    std::uint64_t& word = bits[static_cast<std::size_t>(b / 64)];
    const std::uint64_t bit = std::uint64_t(1) << (b % 64);
    count += (word & bit) ? 0 : 1;
    word |= bit;
  }
  return count;
}
}  // namespace detail

// The number of distinct values in v (v is reordered).
inline std::int64_t distinct_count(std::vector<std::int64_t>& v) {
  constexpr std::size_t kSortBelow = 2048;
  if (v.size() >= kSortBelow) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    const std::uint64_t span = static_cast<std::uint64_t>(*hi - *lo) + 1;
    // A bitmap of the range where it is at most 8 bytes a value.
    if (span / 64 <= v.size()) {
      std::vector<std::uint64_t> bits;
      return detail::bitmap_distinct(v.data(), v.size(), *lo, span, bits);
    }
  }
  std::sort(v.begin(), v.end());
  return static_cast<std::int64_t>(std::unique(v.begin(), v.end()) - v.begin());
}

// Counts the distinct values of one list after another in linear time: an
// open-addressing hash set whose slots carry the number of the list that
// filled them, so a new list starts with no clearing. Sorting each list
// (distinct_count) took most of the model's pattern figures (a warp's 32
// rows' sectors, a load's 32 lanes' lines: millions of short lists). A
// list that never decreases is counted by its steps alone. Not for
// sharing between threads: one counter a thread.
class DistinctCounter {
 public:
  std::int64_t count(const std::int64_t* v, std::size_t n) {
    if (n == 0) return 0;
    std::int64_t steps = 1;
    std::size_t k = 1;
    for (; k < n && v[k] >= v[k - 1]; ++k) steps += v[k] != v[k - 1];
    if (k == n) return steps;
    if (n >= kBitmapFrom) {  // distinct_count's bitmap, where the range is dense
      const auto [lo, hi] = std::minmax_element(v, v + n);
      const std::uint64_t span = static_cast<std::uint64_t>(*hi - *lo) + 1;
      if (span / 64 <= n) return detail::bitmap_distinct(v, n, *lo, span, bits_);
    }
    reserve(n);
    if (++list_ == 0) {  // the list numbers wrapped: clear once in 2^32 lists
      std::fill(owner_.begin(), owner_.end(), 0u);
      list_ = 1;
    }
    const std::size_t mask = keys_.size() - 1;
    std::int64_t distinct = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t x = v[i];
      std::size_t slot = static_cast<std::size_t>((static_cast<std::uint64_t>(x) * 0x9E3779B97F4A7C15ull) >> shift_);
      for (;; slot = (slot + 1) & mask) {
        if (owner_[slot] != list_) {
          owner_[slot] = list_;
          keys_[slot] = x;
          ++distinct;
          break;
        }
        if (keys_[slot] == x) break;
      }
    }
    return distinct;
  }
  std::int64_t count(const std::vector<std::int64_t>& v) { return count(v.data(), v.size()); }

 private:
  static constexpr std::size_t kBitmapFrom = 2048;
  // At least twice as many slots as values (a probe finds a free slot or
  // its value within a few steps), a power of two.
  void reserve(std::size_t n) {
    std::size_t size = 64;
    int bits = 6;
    while (size < 2 * n) {
      size *= 2;
      ++bits;
    }
    if (size <= keys_.size()) return;
    keys_.assign(size, 0);
    owner_.assign(size, 0u);
    shift_ = 64 - bits;
    list_ = 0;
  }
  std::vector<std::int64_t> keys_;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> owner_;
  std::uint32_t list_ = 0;
  int shift_ = 58;
};

}  // namespace kspmv
