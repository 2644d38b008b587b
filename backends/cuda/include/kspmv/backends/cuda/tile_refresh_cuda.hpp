// A refresh kernel for the formats that keep rows in the CSR's order and
// store them column-major (DIA's diagonals, ELL's slots, ELLR's and HYB's
// ELL): a block takes a tile of consecutive rows, reads their new values
// as one run of the CSR (coalesced, whatever the rows' lengths), puts each
// at its column of a tile in shared memory and writes the tile out a
// column at a time, the tile's rows side by side. A thread an entry
// writing its slot directly (the scatter through a map) puts each value
// in another column's sector: a row of d entries touches d sectors, and
// the sectors leave L2 part-written where d is large (dia 7.8-8.0 SpMVs a
// refresh on bands of 41 and 129 diagonals, H100). No column index and no
// map is read: a row's n-th entry goes to column n (ELL), or to the n-th
// diagonal its mask names (DIA; column n where the row has every one).
// Rows that lie far apart in the CSR (the sorted formats) go through the
// same kind of tile a warp of rows at a time (warp_rows_refresh, below).
#pragma once

#include <cstdint>

#include "kspmv/backends/cuda/common.hpp"

namespace kspmv {
namespace cuda_tuned {

// Where tile columns lie: rows r0 .. r0 + R - 1 of column c at
// out[base(r0) + c * stride + (r - r0)]. slice_rows > 0: the columns run
// within slices of that many rows, each slice `width` columns deep
// (ELL's layout); 0: each column runs the matrix's height (DIA's).
struct TileLayout {
  int width = 0;  // columns a row can fill
  long stride = 0;
  int slice_rows = 0;
  __device__ __forceinline__ long base(int r0) const {
    return slice_rows ? static_cast<long>(r0 / slice_rows) * slice_rows * width + r0 % slice_rows : r0;
  }
};

// Row r's n-th entry (of len) lands in column n: ELL, ELLR.
struct EntryColumns {
  __device__ __forceinline__ int operator()(int, int n, int) const { return n; }
};

// The position of the n-th set bit of x (n < popcount(x)).
__device__ __forceinline__ int nth_set_bit(std::uint64_t x, int n) {
  unsigned v = static_cast<unsigned>(x);
  int pos = 0, c = __popc(v);
  if (n >= c) {
    n -= c;
    v = static_cast<unsigned>(x >> 32);
    pos = 32;
  }
  for (int half = 16; half >= 4; half /= 2) {
    c = __popc(v & ((1u << half) - 1));
    if (n >= c) {
      n -= c;
      v >>= half;
      pos += half;
    }
  }
  for (; n > 0; --n) v &= v - 1;
  return pos + __ffs(v) - 1;
}

// DIA: a row with an entry on every diagonal puts its n-th on diagonal n;
// any other its n-th on the n-th diagonal its mask names (dia.hpp's
// row_diagonals, `words` 64-bit words a row).
struct DiagonalColumns {
  const std::uint64_t* __restrict__ mask = nullptr;
  int words = 0, ndiag = 0;
  __device__ __forceinline__ int operator()(int row, int n, int len) const {
    if (len == ndiag) return n;
    const std::uint64_t* m = mask + static_cast<long>(row) * words;
    for (int w = 0;; ++w) {
      const std::uint64_t bits = ldg(m + w);
      const int c = __popcll(bits);
      if (n < c) return 64 * w + nth_set_bit(bits, n);
      n -= c;
    }
  }
};

// Entries past a row's `width` (HYB): into the COO part, whose entries
// follow the CSR's order from coo_row_start[row].
template <class Scalar>
struct CooTail {
  Scalar* __restrict__ val = nullptr;
  const std::int64_t* __restrict__ row_start = nullptr;
  int width = 0;
  __device__ __forceinline__ void operator()(int row, int n, Scalar v) const {
    val[ldg(row_start + row) + (n - width)] = v;
  }
};
// None: every entry has its column (DIA, ELL).
struct NoTail {
  template <class Scalar>
  __device__ __forceinline__ void operator()(int, int, Scalar) const {}
};

// The row of a tile holding entry e: rows[lo] <= e < rows[lo + 1]. Rows
// of about equal length (a band's, a stencil's, an ELL's) put e near
// (e - first) x rows / entries: that guess, walked at most three rows,
// settles a full tile at once; a binary search (7-8 dependent shared
// loads) takes what the walk leaves.
// rows[0] <= e < rows[nrows] keeps the walk inside the tile.
__device__ __forceinline__ int tile_row_of(const std::int64_t* rows, int nrows, std::int64_t e, std::int64_t first,
                                           float rows_per_entry) {
  int lo = min(nrows - 1, static_cast<int>(static_cast<float>(e - first) * rows_per_entry));
  int steps = 0;
  while (rows[lo] > e && steps < 3) --lo, ++steps;
  while (rows[lo + 1] <= e && steps < 3) ++lo, ++steps;
  if (rows[lo] <= e && e < rows[lo + 1]) return lo;
  lo = 0;
  int hi = nrows - 1;  // the last row starting at or before e
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (rows[mid] <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// A block a tile of Rows rows; each thread takes every blockDim-th entry
// of the tile's run, four loads issued before any is placed. Values are
// read and slots written evict-first: each is touched once. H200, the
// bytes moved against a device copy of as many (docs/perf/h200-tile-refresh-lab.cu):
// bands of 17, 41 and 129 diagonals at 94%, 92% and 89% of the copy's
// speed, the 7- and 27-point stencils 91% and 85%, ELL rows 88-95%,
// against 66-81% for a binary search an entry, plain loads and stores
// and the largest tile that fits. (Tried there: a block walking tiles,
// the next tile's offsets read before it writes this one; blocks taking
// runs of tiles, the next tile's first values read ahead; eight loads in
// flight; 512 threads a block. None was faster across the patterns.)
template <class Scalar, int Rows, class Columns, class Tail>
__global__ void __launch_bounds__(256)
    tile_refresh_kernel(int nrows, const std::int64_t* __restrict__ row_ptr, const Scalar* __restrict__ values,
                        Scalar* __restrict__ out, TileLayout layout, Columns columns, Tail tail, bool whole_rows) {
  static_assert((Rows & (Rows - 1)) == 0, "a tile's rows are a power of two");
  constexpr int pitch = Rows + 1;  // odd: a row's neighbouring columns fall in other banks
  extern __shared__ __align__(16) unsigned char tile_bytes[];
  __shared__ std::int64_t rp[Rows + 1];
  Scalar* tile = reinterpret_cast<Scalar*>(tile_bytes);
  const int r0 = blockIdx.x * Rows;
  const int rows = min(Rows, nrows - r0);
  for (int i = threadIdx.x; i <= rows; i += blockDim.x) rp[i] = ldg(row_ptr + r0 + i);
  __syncthreads();
  const int width = layout.width;
  const std::int64_t first = rp[0], last = rp[rows];
  // Every row fills every column: entry o of the run is row o / width's
  // (o % width)-th, in column o % width (ELL's slot; DIA's row of every
  // diagonal), with no offset read. Otherwise a slot no entry fills is
  // zero (padding): the tile starts at zero.
  const bool full = whole_rows && rows == Rows && last - first == static_cast<std::int64_t>(Rows) * width;
  if (!full)
    for (int s = threadIdx.x; s < width * pitch; s += blockDim.x) tile[s] = Scalar(0);
  __syncthreads();
  const float rows_per_entry = last > first ? static_cast<float>(rows) / static_cast<float>(last - first) : 0.f;
  constexpr int loads = 4;  // in flight a thread, all issued before any is placed
  for (std::int64_t e0 = first + threadIdx.x; e0 < last; e0 += loads * blockDim.x) {
    Scalar v[loads];
#pragma unroll
    for (int k = 0; k < loads; ++k) {
      const std::int64_t e = e0 + static_cast<std::int64_t>(k) * blockDim.x;
      v[k] = e < last ? ld_stream(values + e) : Scalar(0);
    }
#pragma unroll
    for (int k = 0; k < loads; ++k) {
      const std::int64_t e = e0 + static_cast<std::int64_t>(k) * blockDim.x;
      if (e >= last) break;
      if (full) {
        const int o = static_cast<int>(e - first), lo = o / width;
        tile[(o - lo * width) * pitch + lo] = v[k];
        continue;
      }
      const int lo = tile_row_of(rp, rows, e, first, rows_per_entry);
      const int n = static_cast<int>(e - rp[lo]);
      const int c = columns(r0 + lo, n, static_cast<int>(rp[lo + 1] - rp[lo]));
      if (c < width) tile[c * pitch + lo] = v[k];
      else tail(r0 + lo, n, v[k]);
    }
  }
  __syncthreads();
  const long base = layout.base(r0);
  for (int s = threadIdx.x; s < width * Rows; s += blockDim.x) {
    const int c = s / Rows, i = s % Rows;
    if (i < rows) __stcs(out + base + c * layout.stride + i, tile[c * pitch + i]);
  }
}

// The rows of a tile for `width` columns: the most (256, 128, 64 or 32,
// each dividing ELL's 256-row slices) whose slots number at most 4,096,
// and 32 past that, within 48 KB of shared memory; 0 where not even 32
// rows fit (the caller refreshes another way). H200, the lab's variant
// that divides in a full tile and searches in others, % of copy by tile
// rows: 7 columns 57% at 64 rows, 76% at 128, 86% at 256, 83% at 512; 16
// columns 85%, 93% and 94% at 64, 128 and 256; 17 81%, 88%, 85%; 27 84%,
// 87%, 72%; 41 82%, 89%, 85% at 32, 64 and 128.
template <class Scalar>
constexpr int tile_refresh_rows(long width) {
  for (int rows = 256; rows >= 32; rows /= 2)
    if ((rows == 32 || width * rows <= 4096) && width * (rows + 1) * static_cast<long>(sizeof(Scalar)) <= 48 * 1024)
      return rows;
  return 0;
}

// out's slots from values (nnz of them in the CSR order of row_ptr);
// whole_rows: no row has more than layout.width entries (then a tile of
// full rows skips its zeroing). False where a tile does not fit.
template <class Scalar, class Columns, class Tail>
bool tile_refresh(cudaStream_t stream, int nrows, const std::int64_t* row_ptr, const Scalar* values, Scalar* out,
                  const TileLayout& layout, const Columns& columns, const Tail& tail, bool whole_rows) {
  const int rows = tile_refresh_rows<Scalar>(layout.width);
  if (rows == 0 || layout.width <= 0) return false;
  if (nrows == 0) return true;
  constexpr int block = 256;
  const unsigned shared = static_cast<unsigned>(layout.width * (rows + 1) * sizeof(Scalar));
  const unsigned grid = blocks_for(nrows, rows);
  switch (rows) {
    case 256:
      tile_refresh_kernel<Scalar, 256><<<grid, block, shared, stream>>>(nrows, row_ptr, values, out, layout, columns,
                                                                        tail, whole_rows);
      break;
    case 128:
      tile_refresh_kernel<Scalar, 128><<<grid, block, shared, stream>>>(nrows, row_ptr, values, out, layout, columns,
                                                                        tail, whole_rows);
      break;
    case 64:
      tile_refresh_kernel<Scalar, 64><<<grid, block, shared, stream>>>(nrows, row_ptr, values, out, layout, columns,
                                                                       tail, whole_rows);
      break;
    default:
      tile_refresh_kernel<Scalar, 32><<<grid, block, shared, stream>>>(nrows, row_ptr, values, out, layout, columns,
                                                                       tail, whole_rows);
  }
  check_launch("kspmv::cuda_tuned::tile_refresh_kernel");
  return true;
}

// A warp's tile in a block's shared memory: `columns` columns of
// kWarpTilePitch slots each, column j from j * kWarpTilePitch. 33 slots,
// not 32: the entries of one row (the same slot of each column) then fall
// in different banks.
constexpr int kWarpTilePitch = 33;
template <class Scalar>
__device__ __forceinline__ Scalar* warp_tile(unsigned char* shared, int warp, int columns) {
  return reinterpret_cast<Scalar*>(shared) + warp * columns * kWarpTilePitch;
}

// A warp refreshes 32 rows that lie far apart in the CSR (sorted pellr,
// jad, evc-hyb's sub-ELL slices; each lane's row is `len` entries from
// values + b, len 0 where the lane has none) whose slots go column-major:
// column c of the lane's row at slot(c), consecutive over the lanes. A
// lane reading its own row 8 bytes at a time writes each column a row
// apart, and on rows of 20-30 entries the warps' rows outgrow L1 between
// their columns (pellr and jad on the 27-point stencil 3.9 SpMVs a
// refresh, H200). Here the lanes read the rows as one run of entries, 32
// a load whatever the rows' lengths (a lane finds its entry's row by a
// search of the rows' ends, shuffles), put each entry in `tile` (warp_tile:
// tile_columns columns) at (its column, its row), and write the tile out a column at a time. Rows wider
// than the tile go through it in runs of tile_columns columns. pad: a
// lane with no entry in a column all of whose slots exist (pellr's and
// evc-hyb's padding) writes the 0 a build put there, so every sector
// written is whole; columns no lane reaches are padding already and are
// skipped. Unroll loads are issued before any is used; a warp skips those
// past its run (lap2d9's slices of 9 entries a row: 135.8 us with 8 loads
// and 120.1 with 4 before it did, H200).
template <class Scalar, int Unroll, class Slot>
__device__ __forceinline__ void warp_rows_refresh(Scalar* tile, int tile_columns, int width, long long b, int len,
                                                  const Scalar* __restrict__ values, Scalar* __restrict__ out,
                                                  const Slot& slot, bool pad) {
  constexpr unsigned all = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  for (int c0 = 0; c0 < width; c0 += tile_columns) {
    const int columns = min(tile_columns, width - c0);
    // This run's entries of each row (its columns c0 .. c0 + columns - 1),
    // and where each row's end lies in the warp's run of them.
    const int count = max(0, min(len - c0, columns));
    const int end = warp_inclusive_sum(count);
    const int begin = end - count, total = __shfl_sync(all, end, 31);
    if (total == 0) break;  // the same on all lanes: every row has ended
    for (int base = 0; base < total; base += 32 * Unroll) {
      int row[Unroll], column[Unroll];
      Scalar v[Unroll];
#pragma unroll
      for (int u = 0; u < Unroll; ++u) {
        const int at = base + 32 * u + lane;
        row[u] = column[u] = 0;
        v[u] = Scalar(0);
        if (base + 32 * u >= total) continue;  // the same on all lanes: no search for loads past the run
        const int l = warp_lane_holding(end, at);
        const long long from = __shfl_sync(all, b, l);
        row[u] = l;
        column[u] = at - __shfl_sync(all, begin, l);
        v[u] = at < total ? ld_stream(values + from + c0 + column[u]) : Scalar(0);
      }
#pragma unroll
      for (int u = 0; u < Unroll; ++u)
        if (base + 32 * u + lane < total) tile[column[u] * kWarpTilePitch + row[u]] = v[u];
    }
    // A lane's entries fill a prefix of the columns: past the last any
    // lane reaches, the columns hold padding only.
#if __CUDA_ARCH__ >= 800
    const int used = __reduce_max_sync(all, count);
#else
    int used = count;
#pragma unroll
    for (int d = 16; d > 0; d /= 2) used = max(used, __shfl_xor_sync(all, used, d));
#endif
    __syncwarp();
    for (int j = 0; j < used; ++j)  // one store a column (the padding's in the same instruction)
      if (pad || j < count) __stcs(out + slot(c0 + j), j < count ? tile[j * kWarpTilePitch + lane] : Scalar(0));
    __syncwarp();  // the tile's next run
  }
}

// The longest row a format refreshes with warp_rows_refresh: a warp takes
// its 32 rows' columns in runs of the tile, so a slice holding a
// power-law hub would be one warp's thousands of runs, where the portable
// walk spreads the hub over many threads (row_segments.hpp).
constexpr long kWarpRowsRefreshLongest = 4096;

// The fewest entries a row, on average, where warp_rows_refresh takes the
// place of a lane walking its own row (sorted pellr, jad): on short rows
// a lane's row stays in L1 between its columns, and the walk, with no
// search and no tile, was faster. H200, pellr sorted and jad, the tile /
// the walk: 1.17-1.19x on the 7-point stencil (7 a row), 1.08-1.29x on
// the 9-point (9), 1.18-1.19x on blocks of 4; 0.62-0.72x on rows of 12-17
// (uniform rows of 4-20, a band of 17, FEM P1 meshes), 0.47x on the
// 27-point stencil (docs/PERFORMANCE.md, "Refreshing pellr and jad a warp
// of rows at a time").
constexpr long kWarpRowsRefreshMeanEntries = 10;
// The same where the alternative is a scatter through a map of a slot a
// nonzero (pellr in the caller's order), which the tile also spares: the
// tile / the scatter 1.05-1.12x on blocks of 4, 0.99-1.01x on the 7-point
// stencil, 0.91-0.95x on the 9-point, 0.39-0.49x on FEM meshes.
constexpr long kWarpRowsScatterMeanEntries = 6;

// Whether warp_rows_refresh takes a format's refresh: no row longer than
// kWarpRowsRefreshLongest, and rows of at least the mean above which it
// beat the walk (rows sorted by length) or the scatter (not sorted).
constexpr bool warp_rows_refresh_pays(long longest, std::int64_t nnz, std::int64_t nrows, bool sorted) {
  return longest <= kWarpRowsRefreshLongest &&
         nnz >= (sorted ? kWarpRowsRefreshMeanEntries : kWarpRowsScatterMeanEntries) * nrows;
}

// The shared memory of `warps` tiles of `columns` columns (warp_tile), for
// a launch.
template <class Scalar>
constexpr unsigned warp_tiles_bytes(int warps, int columns) {
  return static_cast<unsigned>(warps * columns * kWarpTilePitch * sizeof(Scalar));
}

// warp_rows_refresh's tile width: as wide as the widest row where a
// block's `warps` tiles then fit in 24 KB (23 columns in double, 32 in
// float), else 128 bytes a row (16 columns in double): a row wider than
// the tile goes through it in runs, and the smaller tile leaves room for
// more warps an SM. H200, evc-hyb's sub-ELL refresh with 16 columns
// against the widest block's (up to 32): FEM meshes 1.06-1.21x faster
// (widths 26-95), rmat-21 1.28x (128); the band of 17 diagonals 0.90x, its
// rows then read in two runs (docs/perf/h200-evc-refresh-lab.cu).
template <class Scalar>
constexpr int warp_rows_tile_columns(int warps, long widest) {
  const int fit = 24 * 1024 / (warps * kWarpTilePitch * static_cast<int>(sizeof(Scalar)));
  return widest <= (fit < 32 ? fit : 32) ? static_cast<int>(widest) : 128 / static_cast<int>(sizeof(Scalar));
}

}  // namespace cuda_tuned
}  // namespace kspmv
