// Hand-tuned CUDA EVC-HYB (evc-hyb Algorithm 1, Listings 1 and 2): one
// launch of 256-thread blocks; blocks below ell_teams run the sub-ELL part
// (each thread its rows of one block, column-major, four slots' loads in
// flight, stopping at the row's padding), the rest run the adaptive vector
// CSR part (adaptive_cuda.hpp: warp shuffles, read-only loads of x).
#pragma once

#include "kspmv/backends/cuda/adaptive_cuda.hpp"

namespace kspmv {
namespace cuda {

template <class Scalar, int P>
__device__ __forceinline__ void evc_ell_block(int nblocks, const int* __restrict__ blocks,
                                              const int* __restrict__ col, const Scalar* __restrict__ val,
                                              const int* __restrict__ new_to_old, Scalar alpha,
                                              const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  const int team = blockIdx.x;
  int lo = 0, hi = nblocks - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (ldg(blocks + 6 * mid + 4) <= team) lo = mid;
    else hi = mid - 1;
  }
  const int row_begin = ldg(blocks + 6 * lo), rows = ldg(blocks + 6 * lo + 1), width = ldg(blocks + 6 * lo + 2);
  const int offset = ldg(blocks + 6 * lo + 3), first = ldg(blocks + 6 * lo + 4), teams = ldg(blocks + 6 * lo + 5);
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
}

template <class Scalar, int P>
__global__ void __launch_bounds__(256)
    evc_hyb_kernel(int nblocks, const int* __restrict__ blocks, const int* __restrict__ col,
                   const Scalar* __restrict__ val, int ell_teams, AdaptiveRows<Scalar> csr,
                   const int* __restrict__ new_to_old, Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                   Scalar* __restrict__ y) {
  if (static_cast<int>(blockIdx.x) < ell_teams)
    evc_ell_block<Scalar, P>(nblocks, blocks, col, val, new_to_old, alpha, x, beta, y);
  else
    adaptive_rows_block<Scalar, 256, P>(csr, blockIdx.x - ell_teams, alpha, x, beta, y);
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
  kernel<<<grid, 256, 0, stream>>>(nblocks, blocks, col, val, ell_teams, csr, new_to_old, alpha, x, beta, y);
  check_launch("kspmv::cuda::evc_hyb_kernel");
}

}  // namespace cuda
}  // namespace kspmv
