// Hand-tuned CUDA EVC-HYB (evc-hyb Algorithm 1, Listings 1 and 2): one
// launch of 256-thread blocks. The first csr_teams blocks run the adaptive
// vector-CSR part, longest rows first (adaptive_cuda.hpp: warp shuffles,
// read-only loads of x); the others run the sub-ELL part (each thread its
// rows of one block, or 2-32 lanes a row on small matrices; column-major,
// four slots' loads in flight, stopping at the row's padding). The paper
// puts sub-ELL first; see evc_hyb_kernel for why this order.
#pragma once

#include "kspmv/backends/cuda/adaptive_cuda.hpp"
#include "kspmv/core/device_util.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar, int P>
__device__ __forceinline__ void evc_ell_block(int nblocks, const int* __restrict__ blocks,
                                              const int* __restrict__ col, const Scalar* __restrict__ val,
                                              const int* __restrict__ new_to_old, Scalar alpha,
                                              const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y,
                                              int team) {
  constexpr int B = detail::kEvcBlockInts;
  // The team's block: the last whose first team is at most `team`. Each
  // lane reads one block's first team, 32 blocks a round, and a ballot
  // counts them: one round trip where the blocks are at most 32 (the
  // distinct widths up to the split, 128 at most). A binary search cost
  // log2(blocks) dependent round trips before the first slot (5 on cage11).
  const int lane32 = static_cast<int>(threadIdx.x & 31);
  int lo = -1;
  for (int base = 0; base < nblocks; base += 32) {
    const int q = base + lane32;
    const unsigned below = __ballot_sync(0xffffffffu, q < nblocks && ldg(blocks + B * q + 4) <= team);
    lo += __popc(below);
    if (below != 0xffffffffu) break;  // first teams increase: no later block starts at or below
  }
  const int row_begin = ldg(blocks + B * lo), rows = ldg(blocks + B * lo + 1), width = ldg(blocks + B * lo + 2);
  const int offset = ldg(blocks + B * lo + 3), first = ldg(blocks + B * lo + 4), teams = ldg(blocks + B * lo + 5);
  const int lanes = ldg(blocks + B * lo + 6);
  if (lanes == 1) {
    const int stride = teams * blockDim.x;
    for (int r = (team - first) * blockDim.x + threadIdx.x; r < rows; r += stride) {
      const int* cp = col + offset + r;
      const Scalar* vp = val + offset + r;
      Scalar sum = 0;
      if constexpr (P == 0) {
        sum = padded_row_dot(width, rows, cp, vp, x);
      } else {
        // Profile modes (adaptive_cuda.hpp): every slot of the row's block,
        // padding included where the columns are not read (value 0 there).
        for (int k = 0; k < width; ++k) sum += profiled_term<P>(cp, vp, x, static_cast<long>(k) * rows);
      }
      const int sr = row_begin + r;
      store_y(y, new_to_old ? ld_stream(new_to_old + sr) : sr, alpha, sum, beta);
    }
    return;
  }
  // `lanes` threads a row: lane j takes slots j, j + lanes, ... (a lane
  // meets the row's padding at its end, as a whole row does); the block
  // steps together so that every lane reaches the shuffle.
  const int step = static_cast<int>(blockDim.x) / lanes;
  const int j = threadIdx.x & (lanes - 1);
  const long pitch = static_cast<long>(lanes) * rows;
  const int my_width = width > j ? (width - j + lanes - 1) / lanes : 0;
  for (int base = (team - first) * step; base < rows; base += teams * step) {
    const int r = base + static_cast<int>(threadIdx.x) / lanes;
    Scalar sum = 0;
    if (r < rows) {
      const int* cp = col + offset + static_cast<long>(j) * rows + r;
      const Scalar* vp = val + offset + static_cast<long>(j) * rows + r;
      if constexpr (P == 0) {
        sum = padded_row_dot(my_width, pitch, cp, vp, x);
      } else {
        for (int k = 0; k < my_width; ++k) sum += profiled_term<P>(cp, vp, x, k * pitch);
      }
    }
    for (int off = lanes / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, lanes);
    if (r < rows && j == 0) {
      const int sr = row_begin + r;
      store_y(y, new_to_old ? ld_stream(new_to_old + sr) : sr, alpha, sum, beta);
    }
  }
}

template <class Scalar, int P>
__global__ void __launch_bounds__(256)
    evc_hyb_kernel(int nblocks, const int* __restrict__ blocks, const int* __restrict__ col,
                   const Scalar* __restrict__ val, int csr_teams, AdaptiveRows<Scalar> csr,
                   const int* __restrict__ new_to_old, Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                   Scalar* __restrict__ y) {
  // The vector-CSR part runs first, its longest rows first (blocks are
  // dispatched about in index order): a 57K-entry row takes one team tens
  // of microseconds, a tail when it started last, as in the paper's order
  // (sub-ELL below the boundary). Measured on powerlaw-2M and rmat-20.
  const int b = static_cast<int>(blockIdx.x);
  if (b >= csr_teams)
    evc_ell_block<Scalar, P>(nblocks, blocks, col, val, new_to_old, alpha, x, beta, y, b - csr_teams);
  else
    adaptive_rows_block<Scalar, 256, P>(csr, csr_teams - 1 - b, alpha, x, beta, y);
}

// profile: 0 the product; 1-3 the §3.3 profile modes (adaptive_cuda.hpp).
template <class Scalar>
void evc_hyb_spmv(cudaStream_t stream, int nblocks, const int* blocks, const int* col, const Scalar* val,
                  int ell_teams, const AdaptiveRows<Scalar>& csr, int csr_teams, const int* new_to_old, Scalar alpha,
                  const Scalar* x, Scalar beta, Scalar* y, int profile = 0) {
  const int grid = ell_teams + csr_teams;
  if (grid == 0) return;
  auto kernel = profile == 1   ? evc_hyb_kernel<Scalar, 1>
                : profile == 2 ? evc_hyb_kernel<Scalar, 2>
                : profile == 3 ? evc_hyb_kernel<Scalar, 3>
                               : evc_hyb_kernel<Scalar, 0>;
  kernel<<<grid, 256, 0, stream>>>(nblocks, blocks, col, val, csr_teams, csr, new_to_old, alpha, x, beta, y);
  check_launch("kspmv::cuda_tuned::evc_hyb_kernel");
}

// y(j) = alpha * sorted(old_to_new(j)) + beta * y(j): the caller's order
// read from the sorted results (in L2 just after the product), written
// whole sectors at a time.
template <class Scalar>
__global__ void gather_y_kernel(int n, const int* __restrict__ old_to_new, const Scalar* __restrict__ sorted,
                                Scalar alpha, Scalar beta, Scalar* __restrict__ y) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) store_y(y, j, alpha, ldg(sorted + ld_stream(old_to_new + j)), beta);
}

template <class Scalar>
void gather_y(cudaStream_t stream, int n, const int* old_to_new, const Scalar* sorted, Scalar alpha, Scalar beta,
              Scalar* y) {
  if (n == 0) return;
  gather_y_kernel<Scalar><<<blocks_for(n, 256), 256, 0, stream>>>(n, old_to_new, sorted, alpha, beta, y);
  check_launch("kspmv::cuda_tuned::gather_y_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
