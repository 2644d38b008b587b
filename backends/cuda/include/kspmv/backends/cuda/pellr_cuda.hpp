// Hand-tuned CUDA PELLR kernel: a warp per 32-row slice, each lane one row,
// four slots' loads in flight, stopping at the row's padding; y written
// through the permutation when it goes back in the caller's order.
#pragma once

#include "kspmv/backends/cuda/common.hpp"

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

}  // namespace cuda_tuned
}  // namespace kspmv
