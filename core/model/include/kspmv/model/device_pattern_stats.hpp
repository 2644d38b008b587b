// pattern_stats() of a CSR on a device, without bringing the matrix to the
// host: kernels on the matrix's execution space count every figure taken
// over all rows or entries (the histogram of row lengths from the rows
// sorted by length, pellr's warp iterations, each warp's entries,
// diagonals, EHYB's and PKT's in-part shares); the host receives a number
// per length and per 32-row warp, picks the warps the per-warp figures
// sample (pick_warps) and gets those rows alone back. What auto and mode
// "T" rank formats by.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/model/model.hpp"

namespace kspmv {
namespace detail {

// The rows at `positions` (the caller's order before first_ascending, then
// positions of `ascending`, the rows sorted by length) copied back: their
// ids, offsets and columns. Two round trips: the rows' total length, then
// the rows.
template <class Scalar, class ExecSpace, class Lengths>
void fetch_sampled_rows(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, const Lengths& len,
                        const device_ints<ExecSpace>& ascending, const std::vector<std::int64_t>& positions,
                        std::size_t first_ascending, SampledRows& out) {
  using M = typename ExecSpace::memory_space;
  const auto row_ptr = a.row_ptr;
  const auto col = a.col_idx;
  const std::int64_t rows = static_cast<std::int64_t>(positions.size());
  const std::int64_t split = static_cast<std::int64_t>(first_ascending);
  auto alloc = [&](const char* label) { return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)); };
  Kokkos::View<std::int64_t*, M> pos_d(alloc("kspmv::stats::positions"), rows);
  Kokkos::View<ordinal_t*, M> ids_d(alloc("kspmv::stats::sample_ids"), rows);
  Kokkos::View<std::int64_t*, M> local_d(alloc("kspmv::stats::sample_local"), rows + 1);
  Kokkos::View<offset_t*, M> begins_d(alloc("kspmv::stats::sample_begins"), rows);
  Kokkos::deep_copy(space, pos_d, unmanaged_host<const std::int64_t>(positions.data(), positions.size()));
  std::int64_t entries = 0;
  Kokkos::parallel_scan(
      "kspmv::stats::sample_offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, rows),
      KOKKOS_LAMBDA(const std::int64_t q, std::int64_t& sum, const bool final) {
        const ordinal_t r = q < split ? static_cast<ordinal_t>(pos_d(q)) : ascending(pos_d(q));
        if (final) {
          ids_d(q) = r;
          local_d(q) = sum;
          begins_d(q) = row_ptr(r);
          if (q + 1 == rows) local_d(rows) = sum + len(r);
        }
        sum += len(r);
      },
      entries);
  Kokkos::View<ordinal_t*, M> cols_d(alloc("kspmv::stats::sample_cols"), entries);
  // A thread an entry (its row found by a binary search of the offsets):
  // the sample holds the longest rows, which a thread a row would copy
  // alone.
  Kokkos::parallel_for(
      "kspmv::stats::sample_cols", Kokkos::RangePolicy<ExecSpace>(space, 0, entries), KOKKOS_LAMBDA(const std::int64_t j) {
        std::int64_t lo = 0, hi = rows;  // the last q with local_d(q) <= j
        while (hi - lo > 1) {
          const std::int64_t mid = (lo + hi) / 2;
          if (local_d(mid) <= j) lo = mid; else hi = mid;
        }
        cols_d(j) = col(begins_d(lo) + (j - local_d(lo)));
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

}  // namespace detail

template <class Scalar, class ExecSpace>
PatternStats pattern_stats(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, int scalar_bytes,
                           const ModelHardware& hw, std::int64_t max_entries) {
  using M = typename ExecSpace::memory_space;
  using policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t n = a.nrows, ncols = a.ncols;
  const auto row_ptr = a.row_ptr;
  const auto col = a.col_idx;
  PatternSource src;
  src.nrows = n;
  src.ncols = ncols;
  const auto len = detail::row_lengths(space, row_ptr, "kspmv::stats::lengths");
  std::int64_t longest = 0;
  if (n > 0)
    Kokkos::parallel_reduce(
        "kspmv::stats::longest", policy(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& most) {
          if (len(i) > most) most = len(i);
        },
        Kokkos::Max<std::int64_t>(longest));
  // The histogram from the rows sorted by length (a device sort, which the
  // sampled ascending order needs anyway): where each length's run ends.
  detail::device_ints<ExecSpace> ascending;
  if (n > 0) {
    ascending = detail::rows_by_length(space, len, longest, false, "kspmv::stats::ascending");
    Kokkos::View<std::int64_t*, M> ends(Kokkos::view_alloc(space, std::string("kspmv::stats::length_ends")), longest + 1);
    Kokkos::parallel_for(
        "kspmv::stats::length_ends", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t p) {
          const int l = len(ascending(p));
          if (p + 1 == n || len(ascending(p + 1)) != l) ends(l) = p + 1;
        });
    std::vector<std::int64_t> h(static_cast<std::size_t>(longest) + 1);
    Kokkos::deep_copy(space, detail::unmanaged_host<std::int64_t>(h.data(), h.size()), ends);
    space.fence();
    src.length_counts.assign(h.size(), 0);
    std::int64_t before = 0;
    for (std::size_t l = 0; l < h.size(); ++l) {
      if (h[l] == 0) continue;
      src.length_counts[l] = h[l] - before;
      before = h[l];
    }
  }
  src.caller_warps = detail::warp_iterations(space, len, detail::device_ints<ExecSpace>());
  {
    const std::int64_t warps = (n + 31) / 32;
    Kokkos::View<double*, M> entries(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::stats::warp_entries")),
                                     warps);
    Kokkos::parallel_for(
        "kspmv::stats::warp_entries", policy(space, 0, warps), KOKKOS_LAMBDA(const std::int64_t w) {
          std::int64_t sum = 0;
          for (std::int64_t i = 32 * w; i < 32 * w + 32 && i < n; ++i) sum += len(i);
          entries(w) = double(sum);
        });
    src.warp_entries.resize(static_cast<std::size_t>(warps));
    Kokkos::deep_copy(space, detail::unmanaged_host<double>(src.warp_entries.data(), src.warp_entries.size()), entries);
  }
  const std::int64_t window = model_ehyb_window(n, hw);
  const std::int64_t packet = pkt_default_rows(scalar_bytes);
  src.ehyb_window = window;
  if (n > 0) {
    // The figures counted over every entry in one pass, a thread per
    // kChunk consecutive entries (the row of its first found by a binary
    // search of row_ptr): a row of a million entries is spread over many
    // threads, not walked by one (a thread a row took 0.1 s on a power-law
    // graph). Distinct j - i: a flag a diagonal (every writer stores the
    // same 1). In-packet entries: counted per row (added once a row
    // segment), for the sum and the longest.
    constexpr std::int64_t kChunk = 64;
    const std::int64_t nnz = a.nnz();
    const std::int64_t chunks = (nnz + kChunk - 1) / kChunk;
    Kokkos::View<int*, M> seen(Kokkos::view_alloc(space, std::string("kspmv::stats::diagonals")), n + ncols + 1);
    Kokkos::View<std::int64_t*, M> row_in_packet(Kokkos::view_alloc(space, std::string("kspmv::stats::row_in_packet")), n);
    Kokkos::parallel_reduce(
        "kspmv::stats::counted", policy(space, 0, chunks),
        KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& in_window) {
          const std::int64_t k0 = c * kChunk, k1 = k0 + kChunk < nnz ? k0 + kChunk : nnz;
          std::int64_t lo = 0, hi = n;  // the last row i with row_ptr(i) <= k0
          while (hi - lo > 1) {
            const std::int64_t mid = (lo + hi) / 2;
            if (std::int64_t(row_ptr(mid)) <= k0) lo = mid; else hi = mid;
          }
          std::int64_t i = lo, end = row_ptr(i + 1), in = 0;
          for (std::int64_t k = k0; k < k1; ++k) {
            while (k >= end && i + 1 < n) {
              if (in) Kokkos::atomic_add(&row_in_packet(i), in);
              in = 0;
              ++i;
              end = row_ptr(i + 1);
            }
            if (k >= end) break;  // past row_ptr(n): no row's entry
            const std::int64_t j = col(k);
            seen(j - i + n) = 1;
            in_window += (i / window == j / window) ? 1 : 0;
            in += (i / packet == j / packet) ? 1 : 0;
          }
          if (in) Kokkos::atomic_add(&row_in_packet(i), in);
        },
        src.in_window);
    Kokkos::parallel_reduce(
        "kspmv::stats::in_packet", policy(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& sum) { sum += row_in_packet(r); }, src.in_packet);
    Kokkos::parallel_reduce(
        "kspmv::stats::longest_in_packet", policy(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& most) {
          if (row_in_packet(r) > most) most = row_in_packet(r);
        },
        Kokkos::Max<std::int64_t>(src.longest_in_packet));
    Kokkos::parallel_reduce(
        "kspmv::stats::count_diagonals", policy(space, 0, n + ncols + 1),
        KOKKOS_LAMBDA(const std::int64_t d, std::int64_t& sum) { sum += seen(d); }, src.diagonals);
  }
  src.fetch_rows = [&](const std::vector<std::int64_t>& positions, std::size_t first_ascending, SampledRows& out) {
    detail::fetch_sampled_rows(space, a, len, ascending, positions, first_ascending, out);
  };
  return pattern_stats(src, scalar_bytes, max_entries);
}

}  // namespace kspmv
