// Hand-tuned CUDA ELL kernel: a thread per row over the column-major slots,
// read-only loads, stopping at the row's first padding slot.
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
  int n = 0;
  // Two slots per step: both index loads are in flight before either x load.
  for (; n + 1 < width; n += 2) {
    const int c0 = ldg(ip + static_cast<long>(n) * pitch);
    const int c1 = ldg(ip + static_cast<long>(n + 1) * pitch);
    if (c0 < 0) break;
    const Scalar v0 = ldg(vp + static_cast<long>(n) * pitch);
    if (c1 < 0) {
      sum += v0 * ldg(x + c0);
      n = width;
      break;
    }
    const Scalar v1 = ldg(vp + static_cast<long>(n + 1) * pitch);
    sum += v0 * ldg(x + c0);
    sum += v1 * ldg(x + c1);
  }
  if (n < width) {
    const int c = ldg(ip + static_cast<long>(n) * pitch);
    if (c >= 0) sum += ldg(vp + static_cast<long>(n) * pitch) * ldg(x + c);
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
