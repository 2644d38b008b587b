// Hand-tuned CUDA PELLR kernel: a warp per 32-row slice, each lane one row,
// four slots' loads in flight, stopping at the row's padding; y written
// through the permutation when it goes back in the caller's order.
#pragma once

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/backends/cuda/tile_refresh_cuda.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar>
__global__ void __launch_bounds__(128) pellr_kernel(int nrows, int nslices, const int* __restrict__ width,
                                                    const int* __restrict__ offset, const int* __restrict__ indices,
                                                    const Scalar* __restrict__ values,
                                                    const int* __restrict__ new_to_old, Scalar alpha,
                                                    const Scalar* __restrict__ x, Scalar beta,
                                                    Scalar* __restrict__ y) {
  const int s = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  const int row = s * 32 + lane;
  if (s >= nslices || row >= nrows) return;
  // The output row first: its load overlaps the slice's, not the sum's tail
  // (small matrices are latency-bound).
  const int out = new_to_old ? ld_stream(new_to_old + row) : row;
  const int w = ldg(width + s);
  const int base = ldg(offset + s) + lane;
  const Scalar sum = padded_row_dot<true>(w, 32, indices + base, values + base, x);
  store_y(y, out, alpha, sum, beta);
}

template <class Scalar>
void pellr_spmv(cudaStream_t stream, int nrows, int nslices, const int* width, const int* offset, const int* indices,
                const Scalar* values, const int* new_to_old, Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  pellr_kernel<Scalar><<<blocks_for(static_cast<long>(nslices) * 32, 128), 128, 0, stream>>>(
      nrows, nslices, width, offset, indices, values, new_to_old, alpha, x, beta, y);
  check_launch("kspmv::cuda_tuned::pellr_kernel");
}

// Its refresh (update_values), a warp a slice (warp_rows_refresh,
// tile_refresh_cuda.hpp): the slice's rows, sorted or in the caller's
// order (new_to_old null), read as one run into a tile that goes out a
// column of 32 slots at a time, padding's 0 included. The rows of
// `longest` entries at most set the tile's width.
template <class Scalar, int Warps>
__global__ void __launch_bounds__(Warps * 32)
    pellr_refresh_kernel(int nrows, int nslices, const int* __restrict__ width, const int* __restrict__ offset,
                         const int* __restrict__ new_to_old, const std::int64_t* __restrict__ row_ptr,
                         const Scalar* __restrict__ values, Scalar* __restrict__ out, int tile_columns) {
  extern __shared__ __align__(16) unsigned char pellr_refresh_shared[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int s = static_cast<int>(blockIdx.x) * Warps + warp;
  if (s >= nslices) return;
  Scalar* tile = warp_tile<Scalar>(pellr_refresh_shared, warp, tile_columns);
  const int p = s * 32 + lane;
  long long b = 0;
  int len = 0;  // a lane past the last row has no entries: its slots stay padding
  if (p < nrows) {
    const int r = new_to_old ? ldg(new_to_old + p) : p;
    b = ldg(row_ptr + r);
    len = static_cast<int>(ldg(row_ptr + r + 1) - b);
  }
  const long long slot0 = static_cast<long long>(ldg(offset + s)) + lane;
  warp_rows_refresh<Scalar, 8>(
      tile, tile_columns, ldg(width + s), b, len, values, out,
      [=](const int c) { return slot0 + 32LL * c; }, true);
}

template <class Scalar>
void pellr_refresh(cudaStream_t stream, int nrows, int nslices, const int* width, const int* offset,
                   const int* new_to_old, const std::int64_t* row_ptr, const Scalar* values, Scalar* out,
                   long longest) {
  constexpr int warps = 4;
  if (nslices == 0 || longest <= 0) return;
  const int columns = warp_rows_tile_columns<Scalar>(warps, longest);
  const unsigned shared = warp_tiles_bytes<Scalar>(warps, columns);
  pellr_refresh_kernel<Scalar, warps><<<blocks_for(nslices, warps), warps * 32, shared, stream>>>(
      nrows, nslices, width, offset, new_to_old, row_ptr, values, out, columns);
  check_launch("kspmv::cuda_tuned::pellr_refresh_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
