// Adaptive threads-per-row CSR on CUDA (evc-hyb §1 and Listing 2), shared by
// csr-adaptive and evc-hyb's vector-CSR part. A block of BLOCK threads
// finds its row range (ranges[] = {begin, end, tpr, first_block}, a handful
// of entries), takes BLOCK / tpr consecutive rows of it, and reduces each
// row's products with warp shuffles; rows wider than a warp add the warps'
// partial sums through shared memory instead of a shared-memory tree.
#pragma once

#include <climits>

#include "kspmv/backends/cuda/common.hpp"

namespace kspmv {
namespace cuda_tuned {

// Rows of the sorted order: position i reads stored row s = rows ? rows[i]
// : i of (row_ptr, col, val); its result goes to y[out ? out[i] : s +
// y_offset]. Columns < 0 are padding (vector CSR pads rows to 32 entries).
template <class Scalar>
struct AdaptiveRows {
  int nranges;
  const int4* ranges;
  const int* rows;
  const int* row_ptr;
  const int* col;
  const Scalar* val;
  const int* out;
  int y_offset;
};

// Profile modes of evc-hyb §3.3 (time split into A, x and y): P = 0 the
// full product; 1 x constant (neither x nor the column index is loaded);
// 2 A constant (no value loads); 3 both constant (only y and the range map).
// Padding slots hold value 0, so mode 1 sums the row's values exactly.
template <int P, class Scalar>
__device__ __forceinline__ Scalar profiled_term(const int* __restrict__ col, const Scalar* __restrict__ val,
                                                const Scalar* __restrict__ x, long k) {
  if constexpr (P == 1) return ld_stream(val + k);
  if constexpr (P == 3) return Scalar(1);
  const int c = ld_stream(col + k);
  if constexpr (P == 2) return c >= 0 ? ldg(x + c) : Scalar(0);
  return c >= 0 ? ld_stream(val + k) * ldg(x + c) : Scalar(0);
}

template <class Scalar, int BLOCK, int P = 0>
__device__ __forceinline__ void adaptive_rows_block(const AdaptiveRows<Scalar>& a, int block, Scalar alpha,
                                                    const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  __shared__ Scalar partial[BLOCK / 32];
  // The block's range: the last whose first block is at most `block`.
  // Ranges are at most 32 (one per TPR, a power of two up to BLOCK;
  // checked at conversion), so each lane reads one range's first block and
  // a ballot counts them: one round trip. Walking the ranges one load
  // after another cost the last ranges' blocks, the longest rows, up to
  // eight dependent round trips before their first entry.
  const int lane32 = static_cast<int>(threadIdx.x & 31);
  const int first = lane32 < a.nranges ? ldg(&a.ranges[lane32].w) : INT_MAX;
  const int b = __popc(__ballot_sync(0xffffffffu, first <= block)) - 1;
  const int4 r = ldg(a.ranges + b);  // begin, end, tpr, first_block
  const int tpr = r.z;
  const int lane = threadIdx.x & (tpr - 1);
  const int i = r.x + (block - r.w) * (BLOCK / tpr) + static_cast<int>(threadIdx.x) / tpr;
  const bool active = i < r.y;
  int s = 0;
  Scalar sum = 0;
  if (active) {
    s = a.rows ? ld_stream(a.rows + i) : i;
    const int begin = ld_stream(a.row_ptr + s), end = ld_stream(a.row_ptr + s + 1);
    int k = begin + lane;
    if constexpr (P == 0) {
      // Lanes of ranges with tpr < 8 walk at most 8 entries of their own
      // row (ranges give tpr by length), so its lines stay in L1. Measured
      // on the H100: 1.08-1.47x on the stencils, 0.92-1.10x on
      // the small real matrices (within their run-to-run noise).
      if (tpr < 8) {
        const unsigned long long pol = l2_evict_first_policy();
        for (; k + 3 * tpr < end; k += 4 * tpr) {
          int c[4];
#pragma unroll
          for (int u = 0; u < 4; ++u) c[u] = ld_walk(a.col + k + u * tpr, pol);
#pragma unroll
          for (int u = 0; u < 4; ++u)
            if (c[u] >= 0) sum += ld_walk(a.val + k + u * tpr, pol) * ldg(x + c[u]);
        }
      }
      // Four entries' loads in flight per lane: long rows are latency-bound.
      for (; k + 3 * tpr < end; k += 4 * tpr) {
        int c[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) c[u] = ld_stream(a.col + k + u * tpr);
#pragma unroll
        for (int u = 0; u < 4; ++u)
          if (c[u] >= 0) sum += ld_stream(a.val + k + u * tpr) * ldg(x + c[u]);
      }
    } else {
      for (; k + 3 * tpr < end; k += 4 * tpr) {
        Scalar t[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) t[u] = profiled_term<P>(a.col, a.val, x, k + u * tpr);
        sum += (t[0] + t[1]) + (t[2] + t[3]);
      }
    }
    if constexpr (P == 0) {
      // The last 1-3 entries of the lane, loaded together: one round trip
      // instead of up to three (evc-hyb pads rows to 32, so a 32-lane row
      // of 96 entries is all tail).
      int c[3];
#pragma unroll
      for (int u = 0; u < 3; ++u) c[u] = k + u * tpr < end ? ld_stream(a.col + k + u * tpr) : -1;
#pragma unroll
      for (int u = 0; u < 3; ++u)
        if (c[u] >= 0) sum += ld_stream(a.val + k + u * tpr) * ldg(x + c[u]);
    } else {
      for (; k < end; k += tpr) sum += profiled_term<P>(a.col, a.val, x, k);
    }
  }
  if (tpr <= 32) {
    for (int off = tpr / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, tpr);
  } else {
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = sum;
    __syncthreads();
    if (lane == 0) {
      sum = 0;
      for (int w = 0; w < tpr / 32; ++w) sum += partial[threadIdx.x / 32 + w];
    }
  }
  if (active && lane == 0) store_y(y, a.out ? ld_stream(a.out + i) : s + a.y_offset, alpha, sum, beta);
}

template <class Scalar, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    adaptive_rows_kernel(AdaptiveRows<Scalar> a, Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                         Scalar* __restrict__ y) {
  adaptive_rows_block<Scalar, BLOCK>(a, blockIdx.x, alpha, x, beta, y);
}

template <class Scalar>
void adaptive_rows_spmv(cudaStream_t stream, const AdaptiveRows<Scalar>& a, int blocks, Scalar alpha,
                        const Scalar* x, Scalar beta, Scalar* y) {
  if (blocks == 0) return;
  adaptive_rows_kernel<Scalar, 256><<<blocks, 256, 0, stream>>>(a, alpha, x, beta, y);
  check_launch("kspmv::cuda_tuned::adaptive_rows_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
