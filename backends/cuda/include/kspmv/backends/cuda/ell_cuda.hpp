// Hand-tuned CUDA ELL kernel: a thread per row over its slots (column-major
// within 256-row slices, ell.hpp), streaming loads of the matrix, read-only
// loads of x, four slots in flight, stopping at the row's padding.
#pragma once

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/core/device_util.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar>
__global__ void __launch_bounds__(256) ell_kernel(int nrows, int width, const int* __restrict__ indices,
                                                  const Scalar* __restrict__ values, Scalar alpha,
                                                  const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= nrows) return;
  const long base = detail::ell_row_base(row, width);
  const Scalar sum = padded_row_dot(width, detail::kEllSliceRows, indices + base, values + base, x);
  store_y(y, row, alpha, sum, beta);
}

template <class Scalar>
void ell_spmv(cudaStream_t stream, int nrows, int width, const int* indices, const Scalar* values,
              Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  constexpr int block = 256;
  ell_kernel<Scalar><<<blocks_for(nrows, block), block, 0, stream>>>(nrows, width, indices, values, alpha, x, beta,
                                                                     y);
  check_launch("kspmv::cuda_tuned::ell_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
