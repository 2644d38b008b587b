// A stable radix sort of (key, value) pairs on the device, by as many low
// bits of the key as its range needs.
//
// Kokkos::sort takes keys only and sorts every bit of them (a 64-bit key
// made of a column and an entry: eight 8-bit passes over 8 bytes a key).
// Pairs keyed by a column of an 8M-column matrix need three passes over 8
// bytes a pair, and a stable sort keeps equal keys in their input order,
// so no tie-breaking bits are needed. CUB's radix sort does this on CUDA;
// other backends have none here, and their callers take their own path
// (has_radix_sort()).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "kspmv/core/error.hpp"
#include "kspmv/core/scratch.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
#include <cub/device/device_radix_sort.cuh>
#define KSPMV_HAVE_CUB_RADIX_SORT 1
#endif

namespace kspmv::detail {

// Whether radix_sort_pairs runs on ExecSpace.
template <class ExecSpace>
constexpr bool has_radix_sort() {
#if defined(KSPMV_HAVE_CUB_RADIX_SORT)
  return std::is_same_v<ExecSpace, Kokkos::Cuda>;
#else
  return false;
#endif
}

// Bits that hold every key below `bound` (at least 1).
inline int key_bits_below(std::int64_t bound) {
  int bits = 1;
  while (bits < 63 && (std::int64_t(1) << bits) < bound) ++bits;
  return bits;
}

// Sorts the pairs (keys(i), values(i)) by the low `key_bits` bits of the
// keys, stably, on `space`. The spare views, as long as the keys, are the
// sort's second buffers: on return `keys` and `values` name whichever
// views hold the sorted pairs, and the spares the others, whose contents
// are then undefined. The sort's own temporary comes from `temps` where
// given (kept blocks: no device allocation; the caller's set fences before
// it is reused) and the call returns once the sort is queued; else it is
// allocated and the call returns once the sort is done and it is freed.
// Keys are unsigned and values int, in any views of device memory. Throws
// UnsupportedError where has_radix_sort() is false, and Error where CUDA
// reports one (as the CUDA backend's kernels do).
template <class ExecSpace, class Keys, class Values>
void radix_sort_pairs(const ExecSpace& space, Keys& keys, Keys& spare_keys, Values& values, Values& spare_values,
                      int key_bits, ScratchSet<ExecSpace>* temps = nullptr) {
  static_assert(std::is_same_v<typename Keys::non_const_value_type, unsigned> &&
                    std::is_same_v<typename Values::non_const_value_type, int>,
                "radix_sort_pairs: unsigned keys, int values");
  const std::int64_t n = keys.extent(0);
  if (values.extent(0) != keys.extent(0) || spare_keys.extent(0) != keys.extent(0) ||
      spare_values.extent(0) != keys.extent(0))
    throw InvalidArgumentError("radix_sort_pairs: keys, values and their spares differ in length");
  if (n > std::int64_t(0x7FFFFFFF)) throw OverflowError("radix_sort_pairs: more than 2^31 - 1 pairs");
  if (n < 2) return;
#if defined(KSPMV_HAVE_CUB_RADIX_SORT)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    auto check = [](cudaError_t e) {
      if (e != cudaSuccess)
        throw Error(ErrorCode::InvalidArgument, std::string("radix_sort_pairs: ") + cudaGetErrorString(e));
    };
    cub::DoubleBuffer<unsigned> k(keys.data(), spare_keys.data());
    cub::DoubleBuffer<int> v(values.data(), spare_values.data());
    std::size_t bytes = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, static_cast<int>(n), 0, key_bits,
                                          space.cuda_stream()));
    using M = typename ExecSpace::memory_space;
    Kokkos::View<unsigned char*, M> temp;
    if (temps)
      temp = temps->template take<unsigned char>("kspmv::radix_sort::temp", bytes > 0 ? bytes : 1);
    else
      temp = Kokkos::View<unsigned char*, M>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::radix_sort::temp")),
          bytes > 0 ? bytes : 1);
    check(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, k, v, static_cast<int>(n), 0, key_bits,
                                          space.cuda_stream()));
    if (!temps) space.fence();  // before `temp` is freed
    if (k.Current() != keys.data()) std::swap(keys, spare_keys);
    if (v.Current() != values.data()) std::swap(values, spare_values);
    return;
  }
#endif
  (void)space;
  (void)key_bits;
  (void)temps;
  throw UnsupportedError("radix_sort_pairs: no device radix sort on this execution space");
}

// The four buffers of a radix sort of n pairs (keys, values and their
// spares), blocks of a scratch set; sort() sorts them by radix_sort_pairs,
// after which key and value hold the sorted pairs.
template <class ExecSpace>
struct RadixPairs {
  using memory_space = typename ExecSpace::memory_space;
  Kokkos::View<unsigned*, memory_space> key, spare_key;
  Kokkos::View<int*, memory_space> value, spare_value;
  void sort(const ExecSpace& space, int key_bits, ScratchSet<ExecSpace>* temps) {
    radix_sort_pairs(space, key, spare_key, value, spare_value, key_bits, temps);
  }
};
template <class ExecSpace>
RadixPairs<ExecSpace> take_radix_pairs(ScratchSet<ExecSpace>& temps, std::int64_t n, const char* key_label,
                                       const char* value_label) {
  RadixPairs<ExecSpace> p;
  p.key = temps.template take<unsigned>(key_label, n);
  p.spare_key = temps.template take<unsigned>(key_label, n);
  p.value = temps.template take<int>(value_label, n);
  p.spare_value = temps.template take<int>(value_label, n);
  return p;
}

}  // namespace kspmv::detail
