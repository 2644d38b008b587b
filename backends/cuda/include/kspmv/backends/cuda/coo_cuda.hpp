// Hand-tuned CUDA COO chunk kernel: a warp per chunk, 32 entries per step,
// a segmented inclusive scan by warp shuffles (rows are sorted, so equal
// rows at distance d mean one segment), the carry kept in registers.
// Same head/tail contract as the portable kernel (formats/coo.hpp).
#pragma once

#include "kspmv/backends/cuda/common.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar>
__global__ void __launch_bounds__(128) coo_kernel(long nnz, int S, int nchunks, const int* __restrict__ row,
                                                  const int* __restrict__ col, const Scalar* __restrict__ val,
                                                  Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                                                  Scalar* __restrict__ y, Scalar* __restrict__ head,
                                                  Scalar* __restrict__ tail) {
  const int c = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (c >= nchunks) return;  // whole warps leave together
  const long cs = static_cast<long>(c) * S;
  const long ce = cs + S < nnz ? cs + S : nnz;
  const int first_row = ldg(row + cs);
  const bool starts_before = cs > 0 && ldg(row + cs - 1) == first_row;
  const bool continues = ce < nnz && ldg(row + ce) == ldg(row + ce - 1);
  auto finish = [&](int r, Scalar s, bool chunk_last) {
    if (r == first_row && starts_before)
      head[c] = s;
    else if (chunk_last && continues)
      tail[c] = s;
    else
      store_y(y, r, alpha, s, beta);
  };
  int carry_row = -1;
  Scalar carry = 0;
  for (long base = cs; base < ce; base += 32) {
    const long e = base + lane;
    const bool valid = e < ce;
    const int r = valid ? ld_stream(row + e) : -2;
    Scalar p = valid ? ld_stream(val + e) * ldg(x + ld_stream(col + e)) : Scalar(0);
    if (lane == 0 && carry_row >= 0) {
      if (carry_row == r)
        p += carry;
      else
        finish(carry_row, carry, false);
    }
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
      const Scalar pv = __shfl_up_sync(0xffffffffu, p, off);
      const int rv = __shfl_up_sync(0xffffffffu, r, off);
      if (lane >= off && rv == r) p += pv;
    }
    const int rnext = __shfl_down_sync(0xffffffffu, r, 1);
    const bool last_lane = lane == 31 || e + 1 == ce;
    if (valid && (last_lane || rnext != r)) {
      if (e + 1 == ce)
        finish(r, p, true);
      else if (!last_lane)
        finish(r, p, false);
    }
    carry = __shfl_sync(0xffffffffu, p, 31);
    carry_row = base + 32 < ce ? __shfl_sync(0xffffffffu, r, 31) : -1;
  }
}

template <class Scalar>
void coo_chunks(cudaStream_t stream, long nnz, int chunk, int nchunks, const int* row, const int* col, const Scalar* val,
                Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, Scalar* head, Scalar* tail) {
  constexpr int block = 128;
  coo_kernel<Scalar><<<blocks_for(static_cast<long>(nchunks) * 32, block), block, 0, stream>>>(
      nnz, chunk, nchunks, row, col, val, alpha, x, beta, y, head, tail);
  check_launch("kspmv::cuda_tuned::coo_kernel");
}

// Rows without entries: y = beta * y (zero when beta == 0).
template <class Scalar>
__global__ void coo_empty_kernel(int nempty, const int* __restrict__ rows, Scalar beta, Scalar* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nempty) return;
  const int r = rows[i];
  y[r] = beta == Scalar(0) ? Scalar(0) : beta * y[r];
}

template <class Scalar>
void coo_fixup(cudaStream_t stream, int nspan, const int* span_row, const int* span_first, const int* span_last,
               const Scalar* head, const Scalar* tail, int nempty, const int* empty_rows, Scalar alpha, Scalar beta,
               Scalar* y) {
  fix_up_spanning_rows(stream, nspan, span_row, span_first, span_last, head, tail, alpha, beta, y);
  if (nempty > 0 && beta != Scalar(1)) {
    coo_empty_kernel<Scalar><<<blocks_for(nempty, 256), 256, 0, stream>>>(nempty, empty_rows, beta, y);
    check_launch("kspmv::cuda_tuned::coo_empty_kernel");
  }
}

}  // namespace cuda_tuned
}  // namespace kspmv
