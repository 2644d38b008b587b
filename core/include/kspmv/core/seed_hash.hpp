// A row's seed test for the breadth-first partitions (device_partition.hpp's
// cells, part_balls.hpp's balls): a fixed mix of its index, no state and no
// random source, so the same seeds come out on every run and every backend,
// the host's loops included.
#pragma once

#include <Kokkos_Macros.hpp>

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

}  // namespace detail
}  // namespace kspmv
