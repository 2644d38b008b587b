// Breadth-first waves from hashed seeds, the rule the cells
// (device_partition.hpp) and the model's balls (part_balls.hpp) grow by:
// rows whose seed_hash falls in 1 / every are seeds (level 0), and in wave
// L a row of no level joins the group of the first column of its row that
// wave L - 1 reached. No state and no random source: the same groups on
// every run and every backend, the host's loops included. The cells'
// kernels and the balls' kernels and host loops all call wave_seed and
// wave_parent (the cells scan whole rows, the balls at most kBallRowScan
// entries of one).
#pragma once

#include <Kokkos_Macros.hpp>
#include <cstdint>

namespace kspmv {
namespace detail {

KOKKOS_INLINE_FUNCTION unsigned seed_hash(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

KOKKOS_INLINE_FUNCTION bool wave_seed(std::int64_t i, std::int64_t every) {
  return seed_hash(static_cast<unsigned>(i)) % static_cast<unsigned>(every) == 0;
}

// The column whose group row i joins in `wave`, or -1: the first of its
// row, among its first max_scan entries, other than i with level wave - 1.
// A thread of wave L writes only rows of no level and reads only levels
// L - 1: no race. Views or pointers (a std::vector's operator[] is
// host-only: host loops pass its data()).
template <class RowPtr, class ColIdx, class Level>
KOKKOS_INLINE_FUNCTION std::int64_t wave_parent(const RowPtr& row_ptr, const ColIdx& col, const Level& level,
                                                std::int64_t i, int wave, std::int64_t max_scan) {
  const std::int64_t begin = row_ptr[i], end = row_ptr[i + 1];
  const std::int64_t stop = end - begin > max_scan ? begin + max_scan : end;
  for (std::int64_t k = begin; k < stop; ++k) {
    const std::int64_t j = col[k];
    if (j != i && level[j] == wave - 1) return j;
  }
  return -1;
}

}  // namespace detail
}  // namespace kspmv
