// Hand-tuned CUDA EHYB (ehyb Algorithm 3): a block per part loads the
// part's x window into shared memory (gathered through the permutation when
// x is in the caller's order), then its warps take the part's 32-row slices
// through a counter in shared memory (set up anew by every block of every
// call), one row per lane, x read from shared memory through 16-bit
// offsets, then (inline ER, the default) its own entries outside the part
// with x from global memory: column-major in slices whose rows' counts are
// even, else packed row after row (a lane finds its first through a warp
// scan of the rows' counts); each lane writes y once. With separate ER the extra
// rows follow as a second launch, a warp per ER slice, adding into y. No
// atomics touch y, so results are the same bits on every run.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/backends/cuda/tile_refresh_cuda.hpp"
#include "kspmv/core/adaptive.hpp"

namespace kspmv {
namespace cuda_tuned {

// MinBlocks: the blocks an SM holds (2048 / Block threads), so 65536 /
// (MinBlocks * Block) registers a thread. With one block of 1024 threads
// (one part per SM, the default) a lane has 64 and loads eight slots a
// step instead of four: twice the bytes in flight per round trip for the
// latency-bound walk (FEM suite: 1.03-1.09x in the internal
// order, 1.02-1.12x in the caller's).
template <class Scalar, int Block, int MinBlocks>
__global__ void __launch_bounds__(Block, MinBlocks)
    ehyb_ell_kernel(const int* __restrict__ part_start, const int* __restrict__ part_slice,
                    const int* __restrict__ width, const int* __restrict__ offset,
                    const unsigned short* __restrict__ col, const Scalar* __restrict__ val,
                    const int* __restrict__ er_start, const int* __restrict__ er_width,
                    const unsigned short* __restrict__ er_count, const int* __restrict__ er_col,
                    const Scalar* __restrict__ er_val, const int* __restrict__ new_to_old, Scalar alpha,
                    const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  extern __shared__ __align__(16) unsigned char ehyb_shared[];
  Scalar* xw = reinterpret_cast<Scalar*>(ehyb_shared);
  __shared__ int next_slice;
  const int q = blockIdx.x;
  const int ps = ldg(part_start + q), pe = ldg(part_start + q + 1);
  for (int i = threadIdx.x; i < pe - ps; i += Block) xw[i] = ldg(x + (new_to_old ? ld_stream(new_to_old + ps + i) : ps + i));
  const int s0 = ldg(part_slice + q), s1 = ldg(part_slice + q + 1);
  constexpr int warps = Block / 32;
  if (threadIdx.x == 0) next_slice = s0 + warps;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  int s = s0 + static_cast<int>(threadIdx.x) / 32;
  while (s < s1) {  // s is the same on all the warp's lanes
    const int r = ps + (s - s0) * 32 + lane;
    const bool row = r < pe;
    // The slice's offsets at once; the extra-row part's do not wait for
    // the in-part loop.
    const int w = ldg(width + s), off = ldg(offset + s);
    const int eb = er_start ? ldg(er_start + s) : 0, ee = er_start ? ldg(er_start + s + 1) : 0;
    const int out = row ? (new_to_old ? ld_stream(new_to_old + r) : r) : 0;
    const int ew = er_start ? ldg(er_width + s) : 0;  // > 0: column-major, padded to ew
    const int extra = ew == 0 && ee > eb && row ? ld_stream(er_count + r) : 0;
    // Values load beside their columns (x comes from shared memory, so a
    // step costs one DRAM latency); rows in a slice are sorted by length,
    // so the padding fetched is small.
    constexpr int Step = ehyb_slots_per_step(MinBlocks);  // MinBlocks: the parts an SM holds
    Scalar sum = row ? padded_slots_dot<true, Step>(w, 32, col + off + lane, val + off + lane,
                                              static_cast<unsigned short>(0xFFFF), [xw](unsigned short c) { return xw[c]; })
                     : Scalar(0);
    if (ew > 0) {
      if (row) sum += padded_row_dot<false, Step>(ew, 32, er_col + eb + lane, er_val + eb + lane, x);
    } else if (ee > eb) {  // the same on all the warp's lanes
      // The slice's extra entries are packed lane after lane: a lane's
      // first is the slice's start plus the counts of the lanes before it.
      const int before = warp_inclusive_sum(extra);
      sum += walked_row_dot<Step>(extra, er_col + eb + before - extra, er_val + eb + before - extra, x);
    }
    if (row) store_y(y, out, alpha, sum, beta);
    int n = 0;
    if (lane == 0) n = atomicAdd(&next_slice, 1);
    s = __shfl_sync(0xffffffffu, n, 0);
  }
}

template <class Scalar>
__global__ void __launch_bounds__(256)
    ehyb_er_kernel(int nslices, int nrows, const int* __restrict__ width, const int* __restrict__ offset,
                   const int* __restrict__ col, const Scalar* __restrict__ val, const int* __restrict__ er_y,
                   Scalar alpha, const Scalar* __restrict__ x, Scalar* __restrict__ y) {
  const int s = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int e = (blockIdx.x * blockDim.x + threadIdx.x);
  if (s >= nslices || e >= nrows) return;
  const int lane = threadIdx.x & 31;
  const int base = ldg(offset + s) + lane;
  const Scalar sum = padded_row_dot(ldg(width + s), 32, col + base, val + base, x);
  y[ld_stream(er_y + e)] += alpha * sum;
}

// er_start, er_inline_width and er_count: the inline extra rows (null when
// separate), with er_col and er_val; er_slices > 0: the separate ones.
template <class Scalar>
void ehyb_spmv(cudaStream_t stream, int parts, int parts_per_sm, int window_rows, const int* part_start, const int* part_slice,
               const int* width, const int* offset, const unsigned short* col, const Scalar* val, const int* er_start,
               const int* er_inline_width, const unsigned short* er_count, int er_slices, int er_rows,
               const int* er_width, const int* er_offset, const int* er_col, const Scalar* er_val, const int* er_y,
               const int* new_to_old, Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  const int shared = window_rows * static_cast<int>(sizeof(Scalar));
  // One opt-in record per block size: each is its own kernel.
  auto launch = [&](auto threads, auto min_blocks) {
    constexpr int B = decltype(threads)::value;
    constexpr int MB = decltype(min_blocks)::value;
    // Above 48 KB a kernel must opt in to its dynamic shared memory.
    static int opted = 48 * 1024;
    if (shared > opted) {
      check(cudaFuncSetAttribute(ehyb_ell_kernel<Scalar, B, MB>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared),
            "kspmv::cuda_tuned::ehyb_ell_kernel shared memory");
      opted = shared;
    }
    ehyb_ell_kernel<Scalar, B, MB><<<parts, B, shared, stream>>>(part_start, part_slice, width, offset, col, val,
                                                             er_start, er_inline_width, er_count, er_col, er_val,
                                                             new_to_old, alpha, x, beta, y);
    check_launch("kspmv::cuda_tuned::ehyb_ell_kernel");
  };
  // (threads, blocks an SM holds) per part: one part per SM runs 1024
  // threads of 64 registers; two or more fill the SM's 2048 threads with
  // 32 registers a thread, in blocks of 2048 / parts (1024 to 256).
  if (parts > 0) {
    using std::integral_constant;
    if (parts_per_sm <= 1) launch(integral_constant<int, 1024>{}, integral_constant<int, 1>{});
    else if (parts_per_sm == 2) launch(integral_constant<int, 1024>{}, integral_constant<int, 2>{});
    else if (parts_per_sm <= 4) launch(integral_constant<int, 512>{}, integral_constant<int, 4>{});
    else launch(integral_constant<int, 256>{}, integral_constant<int, 8>{});
  }
  if (er_slices > 0) {
    ehyb_er_kernel<Scalar><<<blocks_for(static_cast<long>(er_slices) * 32, 256), 256, 0, stream>>>(
        er_slices, er_rows, er_width, er_offset, er_col, er_val, er_y, alpha, x, y);
    check_launch("kspmv::cuda_tuned::ehyb_er_kernel");
  }
}

// What a refresh (update_values) of EHYB writes and reads: the format's
// layout (ehyb.hpp, EhybDevice) and the CSR it was built from.
template <class Scalar>
struct EhybRefresh {
  int slices = 0, parts = 0, long_rows = 0;
  long long long_row = 0;  // rows longer than this (above 0) are long: empty at their sliced position
  bool caller = true, er_inline = true;
  const int *part_start = nullptr, *part_slice = nullptr, *slice_offset = nullptr, *new_to_old = nullptr;
  const std::int64_t* row_ptr = nullptr;
  const unsigned* extra_bits = nullptr;
  const int *er_start = nullptr, *er_width = nullptr, *er_row_of = nullptr, *er_offset = nullptr;
  const unsigned short* er_count = nullptr;
  const int *long_row_ptr = nullptr, *long_y = nullptr;
  const Scalar* values = nullptr;
  Scalar *ell_val = nullptr, *er_val = nullptr, *long_val = nullptr;
};

// A warp a slice. The lanes read the slice's rows as one run of entries
// (row after row, 32 entries a load, whatever the rows' lengths), where
// the portable slot walk has each lane read its own row 8 bytes at a time
// from across the CSR (19-33% of copy bandwidth on FEM meshes), and where
// a load a row would leave most lanes idle on short rows. A lane finds
// its entry's row by a search of the rows' ends (shuffles) and tells a
// slice entry from an extra one by extra_bits; ballots rank each among
// its row's entries (the row's counts so far held by the row's own
// lane). Slice entries go into a tile of shared memory at their slot
// (column j, lane l), which then goes out as whole columns of 32 slots;
// extra entries, and slice slots past the tile, are written directly
// (tiling padded extra rows too, in a second pass over the rows, took
// normal rows of random columns from 2.9 SpMVs to 1.7 but the FEM meshes
// from 2.3-2.8 to 2.9-3.4 on the H200).
// Unroll loads are issued before any is used, so a warp keeps that many
// round trips in flight (H200, refresh in SpMVs, 8 against 4: FEM P1
// meshes 2.25-2.58 against 2.55-2.68, P2 meshes and stencils within 3%,
// uniform rows 1.23 against 1.59; without the tile, writing each slot
// where it lies, the P2 meshes took 5-7). Tile columns: the dynamic
// shared memory's (tile_columns at launch).
template <class Scalar, int Warps, int Unroll>
__global__ void __launch_bounds__(Warps * 32) ehyb_refresh_kernel(const EhybRefresh<Scalar> a, const int tile_columns) {
  extern __shared__ __align__(16) unsigned char ehyb_refresh_shared[];
  constexpr unsigned all = 0xffffffffu;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long g = static_cast<long long>(blockIdx.x) * Warps + warp;
  if (g >= a.slices) return;
  Scalar* tile = warp_tile<Scalar>(ehyb_refresh_shared, warp, tile_columns);
  const int s = static_cast<int>(g);
  // The part holding slice s: the last one starting at or before it (a
  // part may be empty). One or two rounds of 32 probes.
  const int lo = warp_last_at_or_before(a.part_slice, 0, a.parts, s);
  const int p0 = ldg(a.part_start + lo) + (s - ldg(a.part_slice + lo)) * 32;
  const int rows = min(32, ldg(a.part_start + lo + 1) - p0);
  const int p = p0 + lane;
  long long b = 0;
  int len = 0;
  if (lane < rows) {
    const int r = ldg(a.new_to_old + p);
    b = ldg(a.row_ptr + r);
    const long long e = ldg(a.row_ptr + r + 1);
    if (a.long_row <= 0 || e - b <= a.long_row) len = static_cast<int>(e - b);  // a long row: none here
  }
  // This lane's row's first extra slot, and the step to its next.
  long long er = 0;
  int step = 32;
  if (!a.er_inline) {
    const int j = lane < rows ? ldg(a.er_row_of + p) : -1;
    er = j >= 0 ? ldg(a.er_offset + j / 32) + j % 32 : 0;
  } else if (ldg(a.er_width + s) > 0) {
    er = ldg(a.er_start + s) + lane;
  } else {  // packed lane after lane
    const int count = lane < rows ? ldg(a.er_count + p) : 0;
    er = ldg(a.er_start + s) + warp_inclusive_sum(count) - count;
    step = 1;
  }
  // The rows' ends in the slice's run of entries.
  const int end = warp_inclusive_sum(len);
  const int begin = end - len, total = __shfl_sync(all, end, 31);
  const long long slot0 = ldg(a.slice_offset + s);
  const unsigned below = (1u << lane) - 1u;
  const auto lanes_below = [](int n) { return n >= 32 ? all : (1u << (n < 0 ? 0 : n)) - 1u; };
  int in = 0, out = 0;  // this lane's row's slice and extra entries so far
  for (int base = 0; base < total; base += 32 * Unroll) {
    int row[Unroll];
    Scalar v[Unroll];
    unsigned w[Unroll];
    long long k[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const int at = base + 32 * u + lane;
      const int l = warp_lane_holding(end, at);
      row[u] = l;
      const long long from = __shfl_sync(all, b, l);
      const int first = __shfl_sync(all, begin, l);
      k[u] = from + (at - first);
      const bool on = at < total;
      v[u] = on ? ldg(a.values + k[u]) : Scalar(0);
      w[u] = on ? ldg(a.extra_bits + (k[u] >> 5)) : 0u;
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const int chunk = base + 32 * u;
      if (chunk >= total) break;  // the same on all lanes
      const bool on = chunk + lane < total;
      const bool extra = on && ((w[u] >> (k[u] & 31)) & 1u);
      const bool sliced = on && !extra;
      const unsigned m_in = __ballot_sync(all, sliced), m_out = __ballot_sync(all, extra);
      const int l = row[u];
      // Lanes of this chunk before this one in the same row.
      const unsigned same = below & ~lanes_below(__shfl_sync(all, begin, l) - chunk);
      const int in_l = __shfl_sync(all, in, l), out_l = __shfl_sync(all, out, l);
      const long long er_l = __shfl_sync(all, er, l);
      const int step_l = __shfl_sync(all, step, l);
      if (sliced) {
        const int j = in_l + __popc(m_in & same);
        if (j < tile_columns) tile[j * kWarpTilePitch + l] = v[u];
        else a.ell_val[slot0 + static_cast<long long>(j) * 32 + l] = v[u];
      }
      if (extra) a.er_val[er_l + static_cast<long long>(step_l) * (out_l + __popc(m_out & same))] = v[u];
      // This lane's row's share of the chunk.
      const unsigned mine = lanes_below(end - chunk) & ~lanes_below(begin - chunk);
      in += __popc(m_in & mine);
      out += __popc(m_out & mine);
    }
  }
  __syncwarp();
  for (int j = 0; j < tile_columns; ++j) {
    if (!__any_sync(all, j < in)) break;
    if (j < in) a.ell_val[slot0 + static_cast<long long>(j) * 32 + lane] = tile[j * kWarpTilePitch + lane];
  }
}

// Long rows lie whole and in order in long_val: a thread an entry, its
// row found by a binary search of long_row_ptr (a hub's row is spread over
// many threads, where a warp a row would walk it alone).
template <class Scalar>
__global__ void __launch_bounds__(256) ehyb_refresh_long_kernel(const EhybRefresh<Scalar> a, long long long_nnz) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= long_nnz) return;
  int lo = 0, hi = a.long_rows;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (ldg(a.long_row_ptr + mid) <= t) lo = mid; else hi = mid;
  }
  const int y = ldg(a.long_y + lo);
  const long long from = ldg(a.row_ptr + (a.caller ? y : ldg(a.new_to_old + y)));
  a.long_val[t] = ld_stream(a.values + from + (t - ldg(a.long_row_ptr + lo)));
}

// Where nearly every row follows its neighbour in the CSR (ehyb.hpp,
// refresh_by_rows), whether ehyb_refresh beats the scatter through a map
// of slots: on rows of kEhybWalkInOrderMeanEntries entries or more on
// average, none past kEhybWalkInOrderLongest. A thread an entry puts each
// of a row's entries in another column's sector (that these leave L2
// part-written on longer rows is the likely cause, not measured); past
// two of the kernel's tiles (28 columns in double) more of the kernel's
// own writes go where they lie, a slot at a time.
// H200, double, refresh in SpMVs, the kernel / the scatter, bands of 1-4M
// rows: 0.97-1.04x at 17 a row, 1.24x at 13; 0.51-0.79x at 21-41, 0.90x
// at 49, 1.31x at 65; then, not read by the thresholds, blocks of 16-64
// on the diagonal (1.16x at 16, 0.49-0.81x at 20-48, 1.12x at 64) and a
// band of 19 (0.87x, scattered: the one miss in double). Float, the same
// thresholds: 0.44-0.60x on bands of 33 and blocks of 24, 1.33x on a band
// of 13; a band of 65 scattered where the kernel took 0.84x (the other
// miss). docs/PERFORMANCE.md, "ehyb's refresh on bands and blocks in
// order".
constexpr long kEhybWalkInOrderMeanEntries = 20;
constexpr long kEhybWalkInOrderLongest = 56;
constexpr bool ehyb_walk_pays_in_order(long long longest, std::int64_t nnz, std::int64_t nrows) {
  return longest <= kEhybWalkInOrderLongest && nrows > 0 && nnz >= kEhybWalkInOrderMeanEntries * nrows;
}

// longest: the longest row in the slices (the slots a row fills there at
// most); long_nnz: the long rows' entries (long_val's length).
template <class Scalar>
void ehyb_refresh(cudaStream_t stream, const EhybRefresh<Scalar>& a, long long longest, long long long_nnz) {
  constexpr int warps = 4;
  // A tile as wide as the widest slice, up to 28 columns in double (7.4 KB
  // a warp) and 32 in float; a row's slice entries past it are written
  // where they lie. A smaller tile leaves more of the SM's memory to L1,
  // which the values' and extra_bits' loads read through (80 registers a
  // thread hold an SM to 6 blocks whatever the tile; that L1 is the likely
  // gain, not measured). H200, double, refresh against a
  // tile of 32 columns: the P2 meshes 0.90-0.95x the time with 28,
  // 0.91-0.97x with 24, 0.96-1.04x with 20, 1.04-1.16x with 16 and
  // 1.04-1.45x with 40-64; the P1 meshes within 2%; normal rows of random
  // columns within 1% at 16-32, 0.71x at 64 (docs/PERFORMANCE.md).
  const long long cap = sizeof(Scalar) == 8 ? 28 : 32;
  const int columns = static_cast<int>(longest < 1 ? 1 : longest > cap ? cap : longest);
  if (a.slices > 0) {
    const unsigned shared = warp_tiles_bytes<Scalar>(warps, columns);
    ehyb_refresh_kernel<Scalar, warps, 8><<<blocks_for(a.slices, warps), warps * 32, shared, stream>>>(a, columns);
    check_launch("kspmv::cuda_tuned::ehyb_refresh_kernel");
  }
  if (a.long_rows > 0 && long_nnz > 0) {
    ehyb_refresh_long_kernel<Scalar><<<blocks_for(long_nnz, 256), 256, 0, stream>>>(a, long_nnz);
    check_launch("kspmv::cuda_tuned::ehyb_refresh_long_kernel");
  }
}

}  // namespace cuda_tuned
}  // namespace kspmv
