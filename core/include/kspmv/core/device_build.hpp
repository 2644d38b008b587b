// Building blocks of the conversions that run on the device: row lengths,
// rows in length order, pellr's warp iterations, the rows a predicate
// selects, a few chosen rows fetched to the host. Each is a few parallel
// passes on the matrix's execution space; the host sees sizes, a few
// scalars and the rows it asks for.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/device_sort.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/row_segments.hpp"
#include "kspmv/core/row_stats.hpp"
#include "kspmv/core/scratch.hpp"

namespace kspmv::detail {

template <class ExecSpace>
using device_ints = Kokkos::View<int*, typename ExecSpace::memory_space>;

// Each row's length, as int (a row of 2^31 entries or more is refused by
// every format that asks); taken from `temps` where given (a ScratchSet's
// temporary, or a FormatArrays' array that a format keeps).
template <class ExecSpace, class RowPtr, class Arrays = ScratchSet<ExecSpace>>
device_ints<ExecSpace> row_lengths(const ExecSpace& space, const RowPtr& row_ptr, const char* label,
                                   Arrays* temps = nullptr) {
  const std::int64_t n = row_ptr.extent(0) > 0 ? std::int64_t(row_ptr.extent(0)) - 1 : 0;
  const device_ints<ExecSpace> len =
      temps ? temps->template take<int>(label, n)
            : device_ints<ExecSpace>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), n);
  Kokkos::parallel_for(
      "kspmv::row_lengths", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { len(i) = static_cast<int>(row_ptr(i + 1) - row_ptr(i)); });
  return len;
}

// The rows in order of length, ascending or descending, rows of one length
// in their own order (a stable sort: the keys length x rows + row are
// unique, so any sort gives the same order).
// Keys of Key bits (length x n + row) sorted, then read back as rows.
template <class Key, class ExecSpace, class Lengths, class Arrays>
device_ints<ExecSpace> rows_by_length_keys(const ExecSpace& space, const Lengths& len, std::int64_t longest,
                                           bool descending, const char* label, Arrays* out_temps) {
  const std::int64_t n = len.extent(0);
  ScratchSet<ExecSpace> temps(space);
  const Kokkos::View<Key*, typename ExecSpace::memory_space> key = temps.template take<Key>("kspmv::length_keys", n);
  Kokkos::parallel_for(
      "kspmv::length_keys", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t l = descending ? longest - len(i) : std::int64_t(len(i));
        key(i) = static_cast<Key>(l * n + i);
      });
  space.fence();
  Kokkos::sort(key);
  Kokkos::fence();
  const device_ints<ExecSpace> order =
      out_temps ? out_temps->template take<int>(label, n)
                : device_ints<ExecSpace>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), n);
  Kokkos::parallel_for(
      "kspmv::length_order", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t p) { order(p) = static_cast<int>(std::int64_t(key(p)) % n); });
  return order;
}

// Where the device has a radix sort (device_sort.hpp): the lengths alone
// as keys, sorted stably by the bits the longest needs (one pass of 8 bits
// up to 255 entries a row) with the rows as values, its temporaries kept
// blocks. Else keys of length x n + row, of 32 bits where (longest + 1) x n
// fits them (half the passes of 64-bit keys), through Kokkos::sort, which
// on CUDA sorts every bit and allocates and frees its temporary each call
// (0.5-1 ms of auto's pattern figures on an H100). Both give the same
// order. The order taken from `temps` where given (as row_lengths).
template <class ExecSpace, class Lengths, class Arrays = ScratchSet<ExecSpace>>
device_ints<ExecSpace> rows_by_length(const ExecSpace& space, const Lengths& len, std::int64_t longest,
                                      bool descending, const char* label, Arrays* temps = nullptr) {
  const std::uint64_t n = len.extent(0);
  if constexpr (has_radix_sort<ExecSpace>()) {
    if (n <= 0x7FFFFFFFu && longest <= 0x7FFFFFFF) {
      ScratchSet<ExecSpace> local(space);
      auto pairs = take_radix_pairs(local, n, "kspmv::length_keys", "kspmv::length_rows");
      const auto key = pairs.key;
      const auto row = pairs.value;
      Kokkos::parallel_for(
          "kspmv::length_keys", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
            key(i) = static_cast<unsigned>(descending ? longest - len(i) : std::int64_t(len(i)));
            row(i) = static_cast<int>(i);
          });
      pairs.sort(space, key_bits_below(longest + 1), &local);
      const device_ints<ExecSpace> order =
          temps ? temps->template take<int>(label, n)
                : device_ints<ExecSpace>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), n);
      Kokkos::deep_copy(space, order, pairs.value);
      return order;  // `local` fences the copy before its blocks go back
    }
  }
  if (n == 0 || (static_cast<std::uint64_t>(longest) + 1) <= std::uint64_t(0xFFFFFFFFu) / n)
    return rows_by_length_keys<std::uint32_t>(space, len, longest, descending, label, temps);
  return rows_by_length_keys<std::int64_t>(space, len, longest, descending, label, temps);
}

// How many rows hold each length 0 .. longest, on the host. A thread a
// run of kRows rows adds each run of equal lengths it meets with one
// atomic: a stencil's or a banded matrix's rows, all one length, would
// otherwise queue a million atomics on one counter (0.6 ms on an H100).
template <class ExecSpace, class RowPtr>
std::vector<std::int64_t> length_histogram(const ExecSpace& space, const RowPtr& row_ptr, std::int64_t longest) {
  constexpr std::int64_t kRows = 64;
  const std::int64_t n = row_ptr.extent(0) > 0 ? std::int64_t(row_ptr.extent(0)) - 1 : 0;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(std::max<std::int64_t>(longest, 0)) + 1, 0);
  if (n == 0) return counts;
  ScratchSet<ExecSpace> temps(space);
  const auto count = temps.template take<std::int64_t>("kspmv::length_histogram", counts.size());
  Kokkos::deep_copy(space, count, std::int64_t(0));
  Kokkos::parallel_for(
      "kspmv::length_histogram", Kokkos::RangePolicy<ExecSpace>(space, 0, (n + kRows - 1) / kRows),
      KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t i0 = c * kRows, i1 = i0 + kRows < n ? i0 + kRows : n;
        std::int64_t run_length = std::int64_t(row_ptr(i0 + 1) - row_ptr(i0)), run = 0;
        for (std::int64_t i = i0; i < i1; ++i) {
          const std::int64_t l = std::int64_t(row_ptr(i + 1) - row_ptr(i));
          if (l != run_length) {
            Kokkos::atomic_add(&count(run_length), run);
            run_length = l;
            run = 0;
          }
          ++run;
        }
        Kokkos::atomic_add(&count(run_length), run);
      });
  Kokkos::deep_copy(space, unmanaged_host<std::int64_t>(counts.data(), counts.size()), count);
  space.fence();
  return counts;
}

// pellr eq. (1) and (2) for rows taken in `order` (empty: the caller's):
// N_iter, the sum over warps of their longest row, and N_p.
template <class ExecSpace, class Lengths>
WarpIterations warp_iterations(const ExecSpace& space, const Lengths& len, const device_ints<ExecSpace>& order,
                               int warp = 32) {
  const std::int64_t n = len.extent(0);
  const std::int64_t warps = (n + warp - 1) / warp;
  const bool ordered = order.extent(0) > 0;
  WarpIterations w;
  Kokkos::parallel_reduce(
      "kspmv::warp_iterations", Kokkos::RangePolicy<ExecSpace>(space, 0, warps),
      KOKKOS_LAMBDA(const std::int64_t b, std::int64_t& iter) {
        std::int64_t mx = 0;
        for (std::int64_t j = b * warp; j < (b + 1) * warp && j < n; ++j) {
          const std::int64_t l = len(ordered ? order(j) : j);
          mx = l > mx ? l : mx;
        }
        iter += mx;
      },
      w.n_iter);
  // N_p: sum of (2 len - 1) over every slot of the padded warps.
  std::int64_t entries = 0;
  Kokkos::parallel_reduce(
      "kspmv::entries", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& s) { s += len(i); }, entries);
  w.n_p = 2 * entries - warps * warp;
  return w;
}

// The rows i in [0, n) where pred(i), ascending: an exclusive scan of the
// predicate, then a scatter. The rows taken from `arrays` where given.
template <class ExecSpace, class Pred, class Arrays = ScratchSet<ExecSpace>>
device_ints<ExecSpace> rows_where(const ExecSpace& space, std::int64_t n, const Pred& pred, const char* label,
                                  Arrays* arrays = nullptr) {
  ScratchSet<ExecSpace> temps(space);
  const device_ints<ExecSpace> pos = temps.template take<int>("kspmv::rows_where", n);
  std::int64_t count = 0;
  kspmv::detail::scan(
      "kspmv::rows_where_scan", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
        if (final) pos(i) = static_cast<int>(sum);
        sum += pred(i) ? 1 : 0;
      },
      count, &temps);
  const device_ints<ExecSpace> out =
      arrays ? arrays->template take<int>(label, count)
             : device_ints<ExecSpace>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)), count);
  Kokkos::parallel_for(
      "kspmv::rows_where_fill", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        if (pred(i)) out(pos(i)) = static_cast<int>(i);
      });
  return out;
}

// The rows at `positions` of `a` copied to the host: positions[q] for q <
// first_in_order are rows of the caller's order, the rest positions in
// `order` (a permutation new_to_old: the rows sorted by length, say); len:
// a's row lengths. Two round trips: the rows' total length, then the rows.
// A thread an entry copies the columns (its row found by a binary search
// of the offsets): a sample of the longest rows is not a few threads'
// walk.
template <class Scalar, class ExecSpace, class Lengths>
void fetch_rows(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, const Lengths& len,
                const device_ints<ExecSpace>& order, const std::vector<std::int64_t>& positions,
                std::size_t first_in_order, SampledRows& out) {
  using M = typename ExecSpace::memory_space;
  const auto row_ptr = a.row_ptr;
  const auto col = a.col_idx;
  const std::int64_t rows = static_cast<std::int64_t>(positions.size());
  const std::int64_t split = static_cast<std::int64_t>(first_in_order);
  ScratchSet<ExecSpace> temps(space);
  const Kokkos::View<ordinal_t*, M> ids_d = temps.template take<ordinal_t>("kspmv::fetch_rows::ids", rows);
  const Kokkos::View<std::int64_t*, M> local_d = temps.template take<std::int64_t>("kspmv::fetch_rows::local", rows + 1);
  const Kokkos::View<offset_t*, M> begins_d = temps.template take<offset_t>("kspmv::fetch_rows::begins", rows);
  // positions, the caller's, outlives the set.
  const Kokkos::View<std::int64_t*, M> pos_d = temps.upload(positions, "kspmv::fetch_rows::positions");
  std::int64_t entries = 0;
  kspmv::detail::scan(
      "kspmv::fetch_rows::offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, rows),
      KOKKOS_LAMBDA(const std::int64_t q, std::int64_t& sum, const bool final) {
        const ordinal_t r = q < split ? static_cast<ordinal_t>(pos_d(q)) : order(pos_d(q));
        if (final) {
          ids_d(q) = r;
          local_d(q) = sum;
          begins_d(q) = row_ptr(r);
          if (q + 1 == rows) local_d(rows) = sum + len(r);
        }
        sum += len(r);
      },
      entries, &temps);
  const Kokkos::View<ordinal_t*, M> cols_d = temps.template take<ordinal_t>("kspmv::fetch_rows::cols", entries);
  Kokkos::parallel_for(
      "kspmv::fetch_rows::cols", Kokkos::RangePolicy<ExecSpace>(space, 0, entries), KOKKOS_LAMBDA(const std::int64_t j) {
        const std::int64_t q = row_of_entry(local_d, rows, j);
        cols_d(j) = col(begins_d(q) + (j - local_d(q)));
      });
  out.ids.resize(positions.size());
  out.begins.resize(positions.size());
  out.local.assign(positions.size() + 1, 0);
  out.cols.resize(static_cast<std::size_t>(entries));
  Kokkos::deep_copy(space, unmanaged_host<ordinal_t>(out.ids.data(), out.ids.size()), ids_d);
  Kokkos::deep_copy(space, unmanaged_host<offset_t>(out.begins.data(), out.begins.size()), begins_d);
  if (rows > 0) Kokkos::deep_copy(space, unmanaged_host<std::int64_t>(out.local.data(), out.local.size()), local_d);
  Kokkos::deep_copy(space, unmanaged_host<ordinal_t>(out.cols.data(), out.cols.size()), cols_d);
  space.fence();
}

}  // namespace kspmv::detail
