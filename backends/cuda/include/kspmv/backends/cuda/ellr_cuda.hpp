// Hand-tuned CUDA ELLPACK-R kernel: a thread per row up to its own length,
// four slots' loads in flight.
#pragma once

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/core/device_util.hpp"

namespace kspmv {
namespace cuda_tuned {

// One row of a column-major slab, `len` slots `pitch` apart (ELLR: ELL's
// 256-row slices; PELLR: one 32-row slice).
template <class Scalar>
__device__ __forceinline__ Scalar row_dot(int len, long pitch, const int* __restrict__ ip,
                                          const Scalar* __restrict__ vp, const Scalar* __restrict__ x) {
  Scalar sum = 0;
  int n = 0;
  for (; n + 3 < len; n += 4) {
    int c[4];
    Scalar v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      c[u] = ld_stream(ip + (n + u) * pitch);
      v[u] = ld_stream(vp + (n + u) * pitch);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) sum += v[u] * ldg(x + c[u]);
  }
  for (; n < len; ++n) sum += ld_stream(vp + n * pitch) * ldg(x + ld_stream(ip + n * pitch));
  return sum;
}

template <class Scalar>
__global__ void __launch_bounds__(256) ellr_kernel(int nrows, int width, const int* __restrict__ rl,
                                                   const int* __restrict__ indices, const Scalar* __restrict__ values,
                                                   Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                                                   Scalar* __restrict__ y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= nrows) return;
  const long base = detail::ell_row_base(row, width);
  const Scalar sum = row_dot(ld_stream(rl + row), detail::kEllSliceRows, indices + base, values + base, x);
  store_y(y, row, alpha, sum, beta);
}

template <class Scalar>
void ellr_spmv(cudaStream_t stream, int nrows, int width, const int* rl, const int* indices, const Scalar* values,
               Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  ellr_kernel<Scalar><<<blocks_for(nrows, 256), 256, 0, stream>>>(nrows, width, rl, indices, values, alpha, x, beta,
                                                                  y);
  check_launch("kspmv::cuda_tuned::ellr_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
