// Hand-tuned CUDA DIA kernel: a thread per row, the block's offsets in
// shared memory, read-only loads of data and x, unrolled so several loads
// are in flight per thread.
#pragma once

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/core/block_util.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar>
__global__ void __launch_bounds__(256) dia_kernel(int nrows, int ncols, int ndiag, int pitch, bool cached,
                                                  const int* __restrict__ offsets, const Scalar* __restrict__ data,
                                                  Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                                                  Scalar* __restrict__ y) {
  extern __shared__ int shared_offsets[];
  // Offsets in shared memory when they fit (cached), else read directly.
  const int* offs = offsets;
  if (cached) {
    for (int d = threadIdx.x; d < ndiag; d += blockDim.x) shared_offsets[d] = offsets[d];
    __syncthreads();
    offs = shared_offsets;
  }
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= nrows) return;
  Scalar sum = 0;
  const Scalar* dp = data + row;
#pragma unroll 4
  for (int d = 0; d < ndiag; ++d) {
    const int col = row + offs[d];
    const Scalar v = ld_stream(dp + static_cast<long>(d) * pitch);
    if (static_cast<unsigned>(col) < static_cast<unsigned>(ncols)) sum += v * ldg(x + col);
  }
  store_y(y, row, alpha, sum, beta);
}

template <class Scalar>
void dia_spmv(cudaStream_t stream, int nrows, int ncols, int ndiag, int pitch, const int* offsets, const Scalar* data,
              Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  constexpr int block = 256;
  const bool cached = ndiag <= 8192;  // 32 KB of shared memory
  dia_kernel<Scalar><<<blocks_for(nrows, block), block, cached ? ndiag * sizeof(int) : 0, stream>>>(
      nrows, ncols, ndiag, pitch, cached, offsets, data, alpha, x, beta, y);
  check_launch("kspmv::cuda_tuned::dia_kernel");
}

// Several columns: the same thread a row, each diagonal's entry read once
// (streamed) for up to kBlockColumns columns of X, its sums in registers.
template <class Scalar>
__global__ void __launch_bounds__(256)
    dia_block_kernel(int nrows, int ncols, int ndiag, int pitch, bool cached, const int* __restrict__ offsets,
                     const Scalar* __restrict__ data, Scalar alpha, ColumnBlock<Scalar> b, Scalar beta) {
  extern __shared__ int shared_offsets[];
  const int* offs = offsets;
  if (cached) {
    for (int d = threadIdx.x; d < ndiag; d += blockDim.x) shared_offsets[d] = offsets[d];
    __syncthreads();
    offs = shared_offsets;
  }
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= nrows) return;
  const int cols = b.cols;
  Scalar sum[kBlockColumns] = {};
  const Scalar* dp = data + row;
#pragma unroll 2
  for (int d = 0; d < ndiag; ++d) {
    const int col = row + offs[d];
    const Scalar v = ld_stream(dp + static_cast<long>(d) * pitch);
    if (static_cast<unsigned>(col) < static_cast<unsigned>(ncols)) {
      const Scalar* xc = b.x + col * b.x_row;
#pragma unroll
      for (int j = 0; j < kBlockColumns; ++j)
        if (j < cols) sum[j] += v * ldg(xc + j * b.x_col);
    }
  }
#pragma unroll
  for (int j = 0; j < kBlockColumns; ++j)
    if (j < cols) store_y(b.y + j * b.y_col, row * b.y_row, alpha, sum[j], beta);
}

template <class Scalar>
void dia_spmv_block(cudaStream_t stream, int nrows, int ncols, int ndiag, int pitch, const int* offsets,
                    const Scalar* data, Scalar alpha, const ColumnBlock<Scalar>& b, Scalar beta) {
  constexpr int block = 256;
  if (b.cols <= 0 || nrows <= 0) return;
  if (b.cols > kBlockColumns)
    throw InvalidArgumentError("dia: the CUDA block kernel takes at most " + std::to_string(kBlockColumns) +
                               " columns, got " + std::to_string(b.cols));
  const bool cached = ndiag <= 8192;
  dia_block_kernel<Scalar><<<blocks_for(nrows, block), block, cached ? ndiag * sizeof(int) : 0, stream>>>(
      nrows, ncols, ndiag, pitch, cached, offsets, data, alpha, b, beta);
  check_launch("kspmv::cuda_tuned::dia_block_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
