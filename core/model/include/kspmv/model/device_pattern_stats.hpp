// pattern_stats() of a CSR on a device, without bringing the matrix to the
// host: kernels on the matrix's execution space count every figure taken
// over all rows or entries (the histogram of row lengths from the rows
// sorted by length, pellr's warp iterations, each warp's entries,
// diagonals, EHYB's and PKT's in-part shares, EHYB's from balls grown
// breadth-first: part_balls.hpp); the host receives a number
// per length and per 32-row warp, picks the warps the per-warp figures
// sample (pick_warps) and gets those rows alone back, and takes their
// figures while the device counts over the entries. What auto and mode
// "T" rank formats by.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/profiling.hpp"
#include "kspmv/model/model.hpp"
#include "kspmv/model/part_balls.hpp"

namespace kspmv {

namespace detail {

// The figures counted over every entry of `a` (EntryCounts: distinct
// diagonals, entries whose row and column share a ball of about `window`
// rows (part_balls.hpp), entries within their row's PKT packet of
// `packet` rows, the most of a row in its packet) into counts(0..3),
// queued on `space` with nothing waited for.
template <class Scalar, class ExecSpace>
void count_entries(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, std::int64_t window,
                   std::int64_t packet, ScratchSet<ExecSpace>& temps,
                   const Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>& counts) {
  using M = typename ExecSpace::memory_space;
  using policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t n = a.nrows, ncols = a.ncols;
  const auto row_ptr = a.row_ptr;
  const auto col = a.col_idx;
  Kokkos::deep_copy(space, counts, std::int64_t(0));
  if (n == 0) return;
  ProfilingRegion region("kspmv::stats::counted");
  // One pass, a thread per kChunk consecutive entries (the row of its
  // first found by a binary search of row_ptr): a row of a million
  // entries is spread over many threads, not walked by one (a thread a
  // row took 0.1 s on a power-law graph). Distinct j - i: a flag a
  // diagonal (every writer stores the same 1). In-packet entries:
  // counted per row (added once a row segment), for the sum and the
  // longest.
  constexpr std::int64_t kChunk = 64;
  const std::int64_t nnz = a.nnz();
  const std::int64_t chunks = (nnz + kChunk - 1) / kChunk;
  // A byte a diagonal and an int a row (a row has under 2^31 entries).
  const Kokkos::View<std::uint8_t*, M> seen = temps.template take<std::uint8_t>("kspmv::stats::diagonals", n + ncols + 1);
  const Kokkos::View<int*, M> row_in_packet = temps.template take<int>("kspmv::stats::row_in_packet", n);
  Kokkos::deep_copy(space, seen, std::uint8_t(0));
  Kokkos::deep_copy(space, row_in_packet, 0);
  // The balls: seeds, then kBallWaves waves, each reading only the levels
  // the wave before wrote. A square pattern only (EHYB's); elsewhere every
  // row stands in its window.
  const bool balls = n == ncols;
  const Kokkos::View<int*, M> ball = temps.template take<int>("kspmv::stats::ball", balls ? n : 0);
  const Kokkos::View<int*, M> level = temps.template take<int>("kspmv::stats::ball_level", balls ? n : 0);
  const Kokkos::View<int*, M> ball_rows = temps.template take<int>("kspmv::stats::ball_rows", balls ? n : 0);
  if (balls) {
    Kokkos::parallel_for(
        "kspmv::stats::ball_seeds", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
          const bool seed = wave_seed(i, window);
          ball(i) = seed ? static_cast<int>(i) : -1;
          level(i) = seed ? 0 : -1;
        });
    for (int wave = 1; wave <= kBallWaves; ++wave)
      Kokkos::parallel_for(
          "kspmv::stats::ball_wave", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
            if (level(i) >= 0) return;
            const std::int64_t j = wave_parent(row_ptr, col, level, i, wave, kBallRowScan);
            if (j >= 0) {
              ball(i) = ball(j);
              level(i) = wave;
            }
          });
    // Each ball's rows, by its seed (integer adds: the same counts
    // whatever the order).
    Kokkos::deep_copy(space, ball_rows, 0);
    Kokkos::parallel_for(
        "kspmv::stats::ball_rows", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
          if (level(i) >= 0) Kokkos::atomic_add(&ball_rows(ball(i)), 1);
        });
  }
  const int* ball_of = ball.data();
  const int* level_of = level.data();
  const int* rows_of = ball_rows.data();
  // Each result into its own element of `counts` (a device view: no
  // wait for it here).
  const auto diagonals = Kokkos::subview(counts, 0), in_ball = Kokkos::subview(counts, 1);
  const auto in_packet = Kokkos::subview(counts, 2), longest_in_packet = Kokkos::subview(counts, 3);
  Kokkos::parallel_reduce(
      "kspmv::stats::counted", policy(space, 0, chunks),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& in_balls) {
        const std::int64_t k0 = c * kChunk, k1 = k0 + kChunk < nnz ? k0 + kChunk : nnz;
        std::int64_t i = row_of_entry(row_ptr, n, k0), end = row_ptr(i + 1);
        std::int64_t label = ball_label(ball_of, level_of, rows_of, i, n, window, balls);
        int in = 0;
        for (std::int64_t k = k0; k < k1; ++k) {
          while (k >= end && i + 1 < n) {
            if (in) Kokkos::atomic_add(&row_in_packet(i), in);
            in = 0;
            ++i;
            end = row_ptr(i + 1);
            label = ball_label(ball_of, level_of, rows_of, i, n, window, balls);
          }
          if (k >= end) break;  // past row_ptr(n): no row's entry
          const std::int64_t j = col(k);
          // Read before writing: every thread of a stencil stores to the
          // same few flags, and stores to one address queue up.
          if (!seen(j - i + n)) seen(j - i + n) = 1;
          in_balls += ball_label(ball_of, level_of, rows_of, j, n, window, balls) == label ? 1 : 0;
          in += (i / packet == j / packet) ? 1 : 0;
        }
        if (in) Kokkos::atomic_add(&row_in_packet(i), in);
      },
      in_ball);
  Kokkos::parallel_reduce(
      "kspmv::stats::in_packet", policy(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& sum) { sum += std::int64_t(row_in_packet(r)); }, in_packet);
  Kokkos::parallel_reduce(
      "kspmv::stats::longest_in_packet", policy(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& most) {
        if (std::int64_t(row_in_packet(r)) > most) most = row_in_packet(r);
      },
      Kokkos::Max<std::int64_t, M>(longest_in_packet));
  Kokkos::parallel_reduce(
      "kspmv::stats::count_diagonals", policy(space, 0, n + ncols + 1),
      KOKKOS_LAMBDA(const std::int64_t d, std::int64_t& sum) { sum += std::int64_t(seen(d)); }, diagonals);
}

}  // namespace detail

template <class Scalar, class ExecSpace>
PatternStats pattern_stats(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, int scalar_bytes,
                           const ModelHardware& hw, std::int64_t max_entries) {
  using M = typename ExecSpace::memory_space;
  using policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t n = a.nrows, ncols = a.ncols;
  const auto row_ptr = a.row_ptr;
  PatternSource src;
  src.nrows = n;
  src.ncols = ncols;
  detail::ScratchSet<ExecSpace> temps(space);  // every temporary below (kspmv/core/scratch.hpp)
  std::optional<detail::ProfilingRegion> part(std::in_place, "kspmv::stats::lengths");
  const auto len = detail::row_lengths(space, row_ptr, "kspmv::stats::lengths", &temps);
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
    ascending = detail::rows_by_length(space, len, longest, false, "kspmv::stats::ascending", &temps);
    const Kokkos::View<std::int64_t*, M> ends = temps.template take<std::int64_t>("kspmv::stats::length_ends", longest + 1);
    Kokkos::deep_copy(space, ends, std::int64_t(0));
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
  part.emplace("kspmv::stats::warps");
  src.caller_warps = detail::warp_iterations(space, len, detail::device_ints<ExecSpace>());
  {
    const std::int64_t warps = (n + 31) / 32;
    const Kokkos::View<double*, M> entries = temps.template take<double>("kspmv::stats::warp_entries", warps);
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
  // The figures counted over every entry, launched by fetch_rows once
  // the sampled rows are on the host: the device counts while the host
  // takes the per-warp figures (pattern_stats' longest step on the host),
  // and await_counts reads the four results back with one copy.
  const Kokkos::View<std::int64_t*, M> counts = temps.template take<std::int64_t>("kspmv::stats::counts", 4);
  bool counting = false;
  const auto count_entries = [&] {
    counting = true;
    detail::count_entries(space, a, window, packet, temps, counts);
  };
  part.reset();
  src.fetch_rows = [&](const std::vector<std::int64_t>& positions, std::size_t first_ascending, SampledRows& out) {
    detail::fetch_rows(space, a, len, ascending, positions, first_ascending, out);
    count_entries();
  };
  src.await_counts = [&] {
    if (!counting) count_entries();
    std::int64_t h[4];
    Kokkos::deep_copy(space, detail::unmanaged_host<std::int64_t>(h, 4), counts);
    space.fence();
    EntryCounts c;
    c.diagonals = h[0];
    c.in_ball = h[1];
    c.in_packet = h[2];
    c.longest_in_packet = h[3];
    return c;
  };
  return pattern_stats(src, scalar_bytes, max_entries);
}

}  // namespace kspmv
