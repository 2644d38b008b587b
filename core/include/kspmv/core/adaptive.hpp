// Adaptive threads per row (evc-hyb §1, the "adaptive TPR" method): rows
// sorted by length are cut into ranges, each range gets the smallest power
// of two TPR with max length <= 8 * TPR (so a group of lanes does about 8
// products each), capped at the block size; each range gets its own blocks.
// Shared by csr-adaptive and the vector-CSR part of evc-hyb.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kspmv/core/error.hpp"

// Functions the conversions run on the device too.
#if defined(__CUDACC__)
#define KSPMV_HOST_DEVICE __host__ __device__
#else
#define KSPMV_HOST_DEVICE
#endif

namespace kspmv {

struct TprRange {
  int begin = 0, end = 0;  // positions in the sorted order
  int tpr = 1;             // lanes per row
  int first_block = 0;     // the range's first block (team) of the launch
  int blocks = 0;
};

// The smallest power of two t <= max_tpr with length <= 8 t.
KSPMV_HOST_DEVICE inline int tpr_for_length(std::int64_t length, int max_tpr) {
  int t = 1;
  while (t < max_tpr && length > 8 * static_cast<std::int64_t>(t)) t *= 2;
  return t;
}

// CSR with vector_length lanes a row (csr-scalar: 1): whether the lanes
// walk their rows with the lines kept in L1 (a few short steps a lane)
// rather than streamed past it. Measured on the H100: kept,
// csr-scalar is 1.21-1.32x faster on 7-point stencils but 0.88x on
// 27-point ones, whose 32 rows a warp no longer fit L1. Shared by the
// conversion and the model (only walked lines are found again in L2).
inline bool csr_walks_rows(double mean, std::int64_t longest, int vector_length) {
  return mean <= 8.0 * vector_length && longest <= 32 * static_cast<std::int64_t>(vector_length);
}

// CSR's lanes a row for a mean row length (CUSP's rule): the smallest
// power of two from 2 up to 32 at least the mean. Shared by the csr and
// csr-vector conversions and the model.
inline int csr_vector_length_for_mean(double mean) {
  int v = 2;
  while (v < 32 && v < mean) v *= 2;
  return v;
}

// csr-adaptive's lanes a block, the largest TPR of its ranges. Shared by
// the format (CsrAdaptiveDevice::block_threads) and the model's count of
// its lines.
constexpr int kCsrAdaptiveBlockThreads = 256;

// EHYB's CUDA kernel: slots a lane loads per step (per round trip), by the
// parts an SM holds. One part runs 1024 threads of 64 registers, room for
// eight; two or more run at 32 registers, four. Shared by the kernel and
// the model (its serial chain).
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr int ehyb_slots_per_step(int parts_per_sm) { return parts_per_sm <= 1 ? 8 : 4; }

// EVC-HYB's automatic thread rules, shared by its conversion and the
// performance model. `lanes` is the device's concurrent threads.
// The split: the paper's 128, lowered towards 32 when the rows are too few
// to keep the lanes busy (thread-per-row chains of 128 entries would then
// leave the device idle).
inline int evc_auto_split(std::int64_t nrows, std::int64_t lanes) {
  const std::int64_t rows_per_lane = std::max<std::int64_t>(1, nrows / std::max<std::int64_t>(1, lanes));
  return static_cast<int>(std::clamp<std::int64_t>(32 * rows_per_lane, 32, 128));
}
// The most lanes that may share a sub-ELL row: doubled while the part's
// `ell_rows` rows still fit the device's lanes, at most a warp.
inline int evc_lane_cap(std::int64_t ell_rows, std::int64_t lanes) {
  int cap = 1;
  while (ell_rows > 0 && cap < 32 && ell_rows * cap * 2 <= lanes) cap *= 2;
  return cap;
}
// Lanes for a row of `width` slots under that cap: about four slots a lane.
inline int evc_lanes_for_width(std::int64_t width, int cap) {
  int l = 1;
  while (l < cap && 4 * static_cast<std::int64_t>(l) < width) l *= 2;
  return l;
}

// A row's lanes: its length's TPR (tpr_for_length), at least min_tpr, at
// most block_threads.
KSPMV_HOST_DEVICE inline int tpr_of_row(std::int64_t length, int block_threads, int min_tpr) {
  const int t = tpr_for_length(length, block_threads);
  return t < min_tpr ? (min_tpr < block_threads ? min_tpr : block_threads) : t;
}
// TPRs are powers of two: rows are counted by log2(tpr).
constexpr int kTprClasses = 16;
KSPMV_HOST_DEVICE inline int tpr_class(int tpr) {
  int c = 0;
  while ((1 << c) < tpr) ++c;
  return c;
}

// Rows sorted by ascending length, counted by their TPR's class
// (rows_of_class[tpr_class(tpr)]): the ranges of one TPR each, ascending,
// the first at position 0 and block first_block. A block holds
// block_threads / tpr rows (one row per block when tpr == block_threads).
inline std::vector<TprRange> tpr_ranges_from_counts(const std::vector<std::int64_t>& rows_of_class, int block_threads,
                                                    int first_block = 0) {
  std::vector<TprRange> out;
  std::int64_t position = 0, block = first_block;
  for (std::size_t c = 0; c < rows_of_class.size(); ++c) {
    const std::int64_t rows = rows_of_class[c];
    if (rows == 0) continue;
    TprRange r;
    r.tpr = 1 << c;
    r.begin = static_cast<int>(position);
    r.end = static_cast<int>(position + rows);
    r.first_block = static_cast<int>(block);
    const std::int64_t rows_per_block = block_threads / r.tpr;
    const std::int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
    if (block + blocks > 0x7fffffff) throw OverflowError("adaptive TPR: more than 2^31 blocks");
    r.blocks = static_cast<int>(blocks);
    block += blocks;
    position += rows;
    out.push_back(r);
  }
  return out;
}

// `sorted_len` ascending; positions [offset, offset + size) of the launch.
// `min_tpr` raises the TPR of every range (vector CSR uses at least a warp
// per row).
inline std::vector<TprRange> tpr_ranges(const std::vector<std::int64_t>& sorted_len, int block_threads,
                                        int min_tpr = 1, int first_block = 0) {
  std::vector<std::int64_t> rows_of_class(kTprClasses, 0);
  for (const std::int64_t len : sorted_len) ++rows_of_class[tpr_class(tpr_of_row(len, block_threads, min_tpr))];
  return tpr_ranges_from_counts(rows_of_class, block_threads, first_block);
}

// PKT (pkt.hpp), shared with the model: a packet's scratch holds its x
// window and y accumulators in 32 KB, so at most this many rows, 1024 by
// default.
inline int pkt_scratch_rows(int scalar_bytes) { return 32768 / (2 * scalar_bytes); }
inline int pkt_default_rows(int scalar_bytes) { return std::min(1024, pkt_scratch_rows(scalar_bytes)); }
// csr-merge (Merrill & Garland's merge path): the rows' ends and the
// nonzeros form one list of nrows + nnz items, cut into units of equal
// items; a unit is a block of kMergeBlockThreads threads on the tuned CUDA
// path, each thread walking items_per_unit / kMergeBlockThreads of them.
// Shared by the conversion and the model.
constexpr int kMergeBlockThreads = 256;
// The most items a thread of the tuned kernel walks: its unit's products
// and row ends are staged in shared memory (4 a thread is 14.3 KB a block
// for double). On an H100, 4 a thread was 1.00-1.09x faster than 6 or 8 on
// power-law, R-MAT, uniform and normal rows (more blocks in flight, each
// with a shorter stage) and 0.88-0.94x as fast as 6 on a 7-point stencil
// and a banded matrix, where csr-merge is not the format to use.
constexpr int kMergeMaxItemsPerThread = 4;
// Blocks an SM holds at once at that size: the units a GPU needs to be
// full before a thread takes more than one item.
constexpr int kMergeBlocksPerProcessor = 8;
// Items per unit. GPU: a whole number of items per thread, as few as keep
// every SM's blocks busy (one full wave of `processors` x
// kMergeBlocksPerProcessor blocks), at most kMergeMaxItemsPerThread.
// Host: one thread walks a unit; units of 256 to 4096 items, about four
// per host thread. `requested` > 0 (ConvertOptions::merge_unit_items)
// overrides the rule; on the GPU it is rounded up to whole items per
// thread, within the same bounds.
inline std::int64_t merge_unit_items(std::int64_t items, int processors, bool gpu, std::int64_t requested = 0) {
  const std::int64_t p = std::max(1, processors);
  if (gpu) {
    const std::int64_t t = kMergeBlockThreads;
    const std::int64_t wave = t * p * kMergeBlocksPerProcessor;  // threads of one full wave
    const std::int64_t per_thread = requested > 0 ? (requested + t - 1) / t : (items + wave - 1) / wave;
    return std::clamp<std::int64_t>(per_thread, 1, kMergeMaxItemsPerThread) * t;
  }
  if (requested > 0) return requested;
  return std::clamp<std::int64_t>((items + 4 * p - 1) / (4 * p), 256, 4096);
}
// csr-merge's column panels. A panel's slice of x is kept to
// kMergePanelL2Share of the L2 (the rest holds y, the offsets and the
// streamed entries passing through): on an H100 (50 MB L2) a 64 MB x took
// 0.53x (power-law, 8M rows) and 0.82x (R-MAT, 8M rows) of one pass's time
// in three panels, two to four panels within 10% of that; an x of 24-32 MB
// (3-4M rows) that L2 nearly holds gained nothing and lost up to 1.6x in
// more panels, hence none until x outgrows the L2. Nor where the rows'
// columns lie near their diagonal (a stencil, a banded or well-ordered
// mesh): then the rows a GPU works on at once gather from a window of x
// that L2 holds anyway, and panels would only add passes over y.
constexpr double kMergePanelL2Share = 0.45;
constexpr int kMergeMaxColumnPanels = 64;
// Panels for an x of `ncols` scalars of `scalar_bytes` on a device of
// `l2_bytes` of L2 (0: a host, none), whose rows gather from windows of x
// `mean_row_window` columns wide on average, centred on their diagonal
// (csr_merge.hpp's mean_row_window; negative: not known, taken as wide).
// `requested` > 0 (ConvertOptions::merge_column_panels) overrides the
// rule, at most one a column.
inline int merge_column_panels(std::int64_t ncols, int scalar_bytes, std::int64_t l2_bytes, double mean_row_window,
                               int requested = 0) {
  const std::int64_t most = std::max<std::int64_t>(1, std::min<std::int64_t>(ncols, kMergeMaxColumnPanels));
  if (requested > 0) return static_cast<int>(std::min<std::int64_t>(requested, most));
  const double x_bytes = double(ncols) * scalar_bytes;
  if (l2_bytes <= 0 || x_bytes <= double(l2_bytes)) return 1;
  const double panel_bytes = kMergePanelL2Share * double(l2_bytes);
  if (mean_row_window >= 0 && mean_row_window * scalar_bytes <= panel_bytes) return 1;
  return static_cast<int>(std::min<std::int64_t>(most, static_cast<std::int64_t>(std::ceil(x_bytes / panel_bytes))));
}
// The units that cover `items` (at least one where there are items).
inline std::int64_t merge_units(std::int64_t items, std::int64_t unit_items) {
  return unit_items > 0 ? (items + unit_items - 1) / unit_items : 0;
}

namespace detail {
// Threads of a team on a GPU (the team size of the thread-per-row formats).
constexpr int kGpuTeamSize = 128;
// PKT's threads per packet where packets are few (fewer than two per
// SM); the CUDA kernel's launch bound.
constexpr int kPktManyThreads = 512;
}  // namespace detail
// Threads a PKT packet gets on a GPU: a block per packet leaves most SMs
// idle where packets are fewer than two an SM and gives each thread a long
// chain of slots (raefsky1, 4 packets: 574 slots a thread at 128 threads),
// so such packets are spread over kPktManyThreads.
inline int pkt_gpu_threads(std::int64_t packets, int processors) {
  return packets < 2 * std::int64_t(std::max(1, processors)) ? std::max(detail::kGpuTeamSize, detail::kPktManyThreads)
                                                              : detail::kGpuTeamSize;
}

}  // namespace kspmv
