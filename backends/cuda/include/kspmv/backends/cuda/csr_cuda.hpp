// Hand-tuned CUDA CSR kernels: VL lanes per row (VL = 1 is the scalar
// kernel), strided loads of the row by the lanes, read-only loads, and a
// warp-shuffle reduction within each group of VL lanes.
#pragma once

#include "kspmv/backends/cuda/common.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar, int VL>
__global__ void __launch_bounds__(128) csr_kernel(int nrows, bool short_walks, const int* __restrict__ row_ptr,
                                                  const int* __restrict__ col_idx, const Scalar* __restrict__ values,
                                                  Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                                                  Scalar* __restrict__ y) {
  const long tid = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long row = tid / VL;
  const int lane = threadIdx.x & (VL - 1);
  // Whole groups leave together, so the shuffles below see full groups.
  if (row >= nrows) return;
  const int begin = ld_stream(row_ptr + row), end = ld_stream(row_ptr + row + 1);
  Scalar sum = 0;
  auto row_sum = [&](const auto& load) {
    for (int k = begin + lane; k < end; k += VL) sum += load(values + k) * ldg(x + load(col_idx + k));
  };
  if (VL < 8 && short_walks) {  // a group reads under a sector a step, a few steps a row: lines kept in L1
    const unsigned long long pol = l2_evict_first_policy();
    row_sum([pol](const auto* p) { return ld_walk(p, pol); });
  } else {
    row_sum([](const auto* p) { return ld_stream(p); });
  }
  if (VL > 1) {
    const unsigned mask = VL == 32 ? 0xffffffffu : (((1u << VL) - 1u) << (threadIdx.x & 31 & ~(VL - 1)));
#pragma unroll
    for (int off = VL / 2; off > 0; off /= 2) sum += __shfl_down_sync(mask, sum, off, VL);
  }
  if (lane == 0) store_y(y, row, alpha, sum, beta);
}

template <class Scalar>
void csr_spmv(cudaStream_t stream, int nrows, int vector_length, bool short_walks, const int* row_ptr,
              const int* col_idx,
              const Scalar* values, Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  constexpr int block = 128;
  const unsigned grid = blocks_for(static_cast<long>(nrows) * vector_length, block);
#define KSPMV_CSR_CASE(VL)                                                                                    \
  case VL:                                                                                                    \
    csr_kernel<Scalar, VL><<<grid, block, 0, stream>>>(nrows, short_walks, row_ptr, col_idx, values, alpha, x, beta, \
                                                       y);                                                    \
    break;
  switch (vector_length) {
    KSPMV_CSR_CASE(1)
    KSPMV_CSR_CASE(2)
    KSPMV_CSR_CASE(4)
    KSPMV_CSR_CASE(8)
    KSPMV_CSR_CASE(16)
    KSPMV_CSR_CASE(32)
    default: throw InvalidArgumentError("csr: vector_length must be a power of two <= 32");
  }
#undef KSPMV_CSR_CASE
  check_launch("kspmv::cuda_tuned::csr_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
