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

// A block a tile of Rows rows; each thread takes every blockDim-th entry
// of the tile's run, four loads in flight. (Tried: tiles of 256 rows, and
// eight loads issued before the tile's row offsets were read; on the
// H200 dia's refreshes took 1.1-1.3x longer on stencils and bands of 7-27
// diagonals.)
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
  // A slot no entry fills is zero (padding): the tile starts at zero
  // unless every row fills every column.
  if (!(whole_rows && rows == Rows && rp[rows] - rp[0] == static_cast<std::int64_t>(Rows) * width))
    for (int s = threadIdx.x; s < width * pitch; s += blockDim.x) tile[s] = Scalar(0);
  __syncthreads();
  const std::int64_t last = rp[rows];
#pragma unroll 4
  for (std::int64_t e = rp[0] + threadIdx.x; e < last; e += blockDim.x) {
    const Scalar v = ldg(values + e);
    int lo = 0, hi = rows - 1;  // the last row starting at or before e
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (rp[mid] <= e) lo = mid;
      else hi = mid - 1;
    }
    const int n = static_cast<int>(e - rp[lo]);
    const int c = columns(r0 + lo, n, static_cast<int>(rp[lo + 1] - rp[lo]));
    if (c < width) tile[c * pitch + lo] = v;
    else tail(r0 + lo, n, v);
  }
  __syncthreads();
  const long base = layout.base(r0);
  for (int s = threadIdx.x; s < width * Rows; s += blockDim.x) {
    const int c = s / Rows, i = s % Rows;
    if (i < rows) out[base + c * layout.stride + i] = tile[c * pitch + i];
  }
}

// The most rows a tile takes for `width` columns within 48 KB of shared
// memory (128, 64 or 32: each divides ELL's 256-row slices), 0 where not
// even 32 rows fit (the caller refreshes another way).
template <class Scalar>
constexpr int tile_refresh_rows(long width) {
  for (int rows = 128; rows >= 32; rows /= 2)
    if (width * (rows + 1) * static_cast<long>(sizeof(Scalar)) <= 48 * 1024) return rows;
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
