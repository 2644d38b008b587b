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

}  // namespace cuda_tuned
}  // namespace kspmv
