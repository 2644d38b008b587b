// Hand-tuned CUDA ELL kernel: a thread per row over the column-major slots,
// read-only loads, four slots in flight, stopping at the row's padding.
#pragma once

#include "kspmv/backends/cuda/common.hpp"

namespace kspmv {
namespace cuda {

template <class Scalar>
__global__ void __launch_bounds__(256) ell_kernel(int nrows, int width, int pitch, const int* __restrict__ indices,
                                                  const Scalar* __restrict__ values, Scalar alpha,
                                                  const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= nrows) return;
  Scalar sum = 0;
  const int* ip = indices + row;
  const Scalar* vp = values + row;
  // Four slots per step: all four index and value loads are issued before
  // the x loads (memory-level parallelism); a row's padding is contiguous
  // at its end, so a step that starts on padding ends the row.
  for (int n = 0; n < width; n += 4) {
    int c[4];
    Scalar v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) c[u] = n + u < width ? ldg(ip + static_cast<long>(n + u) * pitch) : -1;
    if (c[0] < 0) break;
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = c[u] >= 0 ? ldg(vp + static_cast<long>(n + u) * pitch) : Scalar(0);
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (c[u] >= 0) sum += v[u] * ldg(x + c[u]);
  }
  store_y(y, row, alpha, sum, beta);
}

template <class Scalar>
void ell_spmv(cudaStream_t stream, int nrows, int width, int pitch, const int* indices, const Scalar* values,
              Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  constexpr int block = 256;
  ell_kernel<Scalar><<<blocks_for(nrows, block), block, 0, stream>>>(nrows, width, pitch, indices, values, alpha, x,
                                                                     beta, y);
  check_launch("kspmv::cuda::ell_kernel");
}

}  // namespace cuda
}  // namespace kspmv
