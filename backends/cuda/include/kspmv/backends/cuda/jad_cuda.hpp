// JAD's refresh on CUDA (its SpMV is the portable kernel): a warp 32
// sorted rows, warp_rows_refresh (tile_refresh_cuda.hpp) reading them as
// one run into a tile that goes out a jagged diagonal at a time.
#pragma once

#include <cstdint>

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/backends/cuda/tile_refresh_cuda.hpp"

namespace kspmv {
namespace cuda_tuned {

// Rows p0 .. p0 + 31 of the sorted order, p0 = 32 x the warp: entry c of
// row p lies at jd_ptr[c] + p, so a diagonal's slots of the warp's rows
// are consecutive; rows are sorted longest first, so the first row's
// length (rl[p0]) is the warp's width, and a diagonal a row does not
// reach holds nothing (no padding).
template <class Scalar, int Warps>
__global__ void __launch_bounds__(Warps * 32)
    jad_refresh_kernel(int nrows, const int* __restrict__ new_to_old, const int* __restrict__ rl,
                       const int* __restrict__ jd_ptr, const std::int64_t* __restrict__ row_ptr,
                       const Scalar* __restrict__ values, Scalar* __restrict__ out, int tile_columns) {
  extern __shared__ __align__(16) unsigned char jad_refresh_shared[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long p0 = (static_cast<long long>(blockIdx.x) * Warps + warp) * 32;
  if (p0 >= nrows) return;
  Scalar* tile = warp_tile<Scalar>(jad_refresh_shared, warp, tile_columns);
  const int p = static_cast<int>(p0) + lane;
  long long b = 0;
  int len = 0;
  if (p < nrows) {
    const int r = ldg(new_to_old + p);
    b = ldg(row_ptr + r);
    len = static_cast<int>(ldg(row_ptr + r + 1) - b);
  }
  warp_rows_refresh<Scalar, 8>(
      tile, tile_columns, ldg(rl + p0), b, len, values, out,
      [=](const int c) { return static_cast<long long>(ldg(jd_ptr + c)) + p; }, false);
}

template <class Scalar>
void jad_refresh(cudaStream_t stream, int nrows, const int* new_to_old, const int* rl, const int* jd_ptr,
                 const std::int64_t* row_ptr, const Scalar* values, Scalar* out, long longest) {
  constexpr int warps = 4;
  if (nrows == 0 || longest <= 0) return;
  const int columns = warp_rows_tile_columns<Scalar>(warps, longest);
  const unsigned shared = warp_tiles_bytes<Scalar>(warps, columns);
  jad_refresh_kernel<Scalar, warps><<<blocks_for(nrows, 32 * warps), warps * 32, shared, stream>>>(
      nrows, new_to_old, rl, jd_ptr, row_ptr, values, out, columns);
  check_launch("kspmv::cuda_tuned::jad_refresh_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
