// The in-part share a partition into parts of `window` rows can keep,
// whatever the caller's row order: what the model prices EHYB with
// (PatternStats::ehyb_in_part), since EHYB partitions the rows itself
// (cells on the device, device_partition.hpp) and never keeps the caller's
// windows.
//
// Balls: seeds 1 / window apart, grown by the cells' waves
// (seeded_waves.hpp) all at once: in wave L a row not yet reached joins
// the ball of the first column of its row (among its first kBallRowScan)
// that wave L - 1 reached. After kBallWaves waves the
// rows still unreached, and the rows of a ball grown past kBallMostParts
// parts (a hub's reach: a dense block joins one seed in one wave, an R-MAT
// graph's hubs gather 14-18 parts' rows), stand in runs of `window`
// consecutive rows (the caller's windows; a non-square pattern has no
// balls, only those). The figure is the share of entries whose row and
// column share a label.
//
// Measured on the host against cell_partition's parts (132 of them, as on
// an H100 or H200; docs/PERFORMANCE.md, "EHYB's in-part share from
// balls"): 1.4-4.5 points above the cells' share on FEM meshes of
// 0.39-0.9M rows in scrambled, RCM and gmsh's orders (cells 80-90%, the
// caller's windows 4-62%), 4.9-7.1 above on meshes of 50-120k rows and a
// 27-point stencil (cells 74-79%), within 0.7 points on random rows,
// power-law graphs and a dense block, 3.5-4.3 below on 2-D and 3-D
// stencils in their natural order, where 24 waves do not fill a part.
//
// The same code runs in the device's kernels (device_pattern_stats.hpp)
// and the host's loops (pattern_stats.cpp): the same figure to the bit.
#pragma once

#include <Kokkos_Macros.hpp>
#include <cstdint>

#include "kspmv/core/seeded_waves.hpp"

namespace kspmv {
namespace detail {

// Waves the balls grow: enough for parts of a few thousand rows of a 3D
// mesh (12-16 waves fill them), all queued with nothing waited for.
constexpr int kBallWaves = 24;
// The entries of a row one wave reads at most: a row of a million
// entries is not walked by one thread 24 times.
constexpr std::int64_t kBallRowScan = 1024;

// Rows a ball may hold, in parts: on FEM meshes the largest ball held
// 2.5-3.9 parts' rows; a dense block's 61, R-MAT graphs' 14-18.
constexpr std::int64_t kBallMostParts = 8;

// A row's (or column's) label: its ball's seed where a wave reached it and
// the ball holds at most kBallMostParts * window rows (ball_rows[seed]),
// else its run of `window` rows (numbered past the rows).
KOKKOS_INLINE_FUNCTION std::int64_t ball_label(const int* ball, const int* level, const int* ball_rows, std::int64_t x,
                                               std::int64_t n, std::int64_t window, bool balls) {
  return balls && x < n && level[x] >= 0 && ball_rows[ball[x]] <= kBallMostParts * window ? std::int64_t(ball[x])
                                                                                          : n + x / window;
}

}  // namespace detail
}  // namespace kspmv
