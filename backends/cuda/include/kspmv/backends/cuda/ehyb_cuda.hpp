// Hand-tuned CUDA EHYB (ehyb Algorithm 3): a block per part loads the
// part's x window into shared memory (gathered through the permutation when
// x is in the caller's order), then its warps take the part's 32-row slices
// through a counter in shared memory (set up anew by every block of every
// call), one row per lane, x read from shared memory through 16-bit
// offsets, then (inline ER, the default) its own entries outside the part
// with x from global memory: column-major in slices whose rows' counts are
// even, else packed row after row (a lane finds its first through a warp
// scan of the rows' counts); each lane writes y once. With separate ER the extra
// rows follow as a second launch, a warp per ER slice, adding into y. No
// atomics touch y, so results are the same bits on every run.
#pragma once

#include <type_traits>

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/core/adaptive.hpp"

namespace kspmv {
namespace cuda_tuned {

// MinBlocks: the blocks an SM holds (2048 / Block threads), so 65536 /
// (MinBlocks * Block) registers a thread. With one block of 1024 threads
// (one part per SM, the default) a lane has 64 and loads eight slots a
// step instead of four: twice the bytes in flight per round trip for the
// latency-bound walk (FEM suite: 1.03-1.09x in the internal
// order, 1.02-1.12x in the caller's).
template <class Scalar, int Block, int MinBlocks>
__global__ void __launch_bounds__(Block, MinBlocks)
    ehyb_ell_kernel(const int* __restrict__ part_start, const int* __restrict__ part_slice,
                    const int* __restrict__ width, const int* __restrict__ offset,
                    const unsigned short* __restrict__ col, const Scalar* __restrict__ val,
                    const int* __restrict__ er_start, const int* __restrict__ er_width,
                    const unsigned short* __restrict__ er_count, const int* __restrict__ er_col,
                    const Scalar* __restrict__ er_val, const int* __restrict__ new_to_old, Scalar alpha,
                    const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  extern __shared__ __align__(16) unsigned char ehyb_shared[];
  Scalar* xw = reinterpret_cast<Scalar*>(ehyb_shared);
  __shared__ int next_slice;
  const int q = blockIdx.x;
  const int ps = ldg(part_start + q), pe = ldg(part_start + q + 1);
  for (int i = threadIdx.x; i < pe - ps; i += Block) xw[i] = ldg(x + (new_to_old ? ld_stream(new_to_old + ps + i) : ps + i));
  const int s0 = ldg(part_slice + q), s1 = ldg(part_slice + q + 1);
  constexpr int warps = Block / 32;
  if (threadIdx.x == 0) next_slice = s0 + warps;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  int s = s0 + static_cast<int>(threadIdx.x) / 32;
  while (s < s1) {  // s is the same on all the warp's lanes
    const int r = ps + (s - s0) * 32 + lane;
    const bool row = r < pe;
    // The slice's offsets at once; the extra-row part's do not wait for
    // the in-part loop.
    const int w = ldg(width + s), off = ldg(offset + s);
    const int eb = er_start ? ldg(er_start + s) : 0, ee = er_start ? ldg(er_start + s + 1) : 0;
    const int out = row ? (new_to_old ? ld_stream(new_to_old + r) : r) : 0;
    const int ew = er_start ? ldg(er_width + s) : 0;  // > 0: column-major, padded to ew
    const int extra = ew == 0 && ee > eb && row ? ld_stream(er_count + r) : 0;
    // Values load beside their columns (x comes from shared memory, so a
    // step costs one DRAM latency); rows in a slice are sorted by length,
    // so the padding fetched is small.
    constexpr int Step = ehyb_slots_per_step(MinBlocks);  // MinBlocks: the parts an SM holds
    Scalar sum = row ? padded_slots_dot<true, Step>(w, 32, col + off + lane, val + off + lane,
                                              static_cast<unsigned short>(0xFFFF), [xw](unsigned short c) { return xw[c]; })
                     : Scalar(0);
    if (ew > 0) {
      if (row) sum += padded_row_dot<false, Step>(ew, 32, er_col + eb + lane, er_val + eb + lane, x);
    } else if (ee > eb) {  // the same on all the warp's lanes
      // The slice's extra entries are packed lane after lane: a lane's
      // first is the slice's start plus the counts of the lanes before it.
      int before = extra;
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int t = __shfl_up_sync(0xffffffffu, before, d);
        if (lane >= d) before += t;
      }
      sum += walked_row_dot<Step>(extra, er_col + eb + before - extra, er_val + eb + before - extra, x);
    }
    if (row) store_y(y, out, alpha, sum, beta);
    int n = 0;
    if (lane == 0) n = atomicAdd(&next_slice, 1);
    s = __shfl_sync(0xffffffffu, n, 0);
  }
}

template <class Scalar>
__global__ void __launch_bounds__(256)
    ehyb_er_kernel(int nslices, int nrows, const int* __restrict__ width, const int* __restrict__ offset,
                   const int* __restrict__ col, const Scalar* __restrict__ val, const int* __restrict__ er_y,
                   Scalar alpha, const Scalar* __restrict__ x, Scalar* __restrict__ y) {
  const int s = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int e = (blockIdx.x * blockDim.x + threadIdx.x);
  if (s >= nslices || e >= nrows) return;
  const int lane = threadIdx.x & 31;
  const int base = ldg(offset + s) + lane;
  const Scalar sum = padded_row_dot(ldg(width + s), 32, col + base, val + base, x);
  y[ld_stream(er_y + e)] += alpha * sum;
}

// er_start, er_inline_width and er_count: the inline extra rows (null when
// separate), with er_col and er_val; er_slices > 0: the separate ones.
template <class Scalar>
void ehyb_spmv(cudaStream_t stream, int parts, int parts_per_sm, int window_rows, const int* part_start, const int* part_slice,
               const int* width, const int* offset, const unsigned short* col, const Scalar* val, const int* er_start,
               const int* er_inline_width, const unsigned short* er_count, int er_slices, int er_rows,
               const int* er_width, const int* er_offset, const int* er_col, const Scalar* er_val, const int* er_y,
               const int* new_to_old, Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  const int shared = window_rows * static_cast<int>(sizeof(Scalar));
  // One opt-in record per block size: each is its own kernel.
  auto launch = [&](auto threads, auto min_blocks) {
    constexpr int B = decltype(threads)::value;
    constexpr int MB = decltype(min_blocks)::value;
    // Above 48 KB a kernel must opt in to its dynamic shared memory.
    static int opted = 48 * 1024;
    if (shared > opted) {
      check(cudaFuncSetAttribute(ehyb_ell_kernel<Scalar, B, MB>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared),
            "kspmv::cuda_tuned::ehyb_ell_kernel shared memory");
      opted = shared;
    }
    ehyb_ell_kernel<Scalar, B, MB><<<parts, B, shared, stream>>>(part_start, part_slice, width, offset, col, val,
                                                             er_start, er_inline_width, er_count, er_col, er_val,
                                                             new_to_old, alpha, x, beta, y);
    check_launch("kspmv::cuda_tuned::ehyb_ell_kernel");
  };
  // (threads, blocks an SM holds) per part: one part per SM runs 1024
  // threads of 64 registers; two or more fill the SM's 2048 threads with
  // 32 registers a thread, in blocks of 2048 / parts (1024 to 256).
  if (parts > 0) {
    using std::integral_constant;
    if (parts_per_sm <= 1) launch(integral_constant<int, 1024>{}, integral_constant<int, 1>{});
    else if (parts_per_sm == 2) launch(integral_constant<int, 1024>{}, integral_constant<int, 2>{});
    else if (parts_per_sm <= 4) launch(integral_constant<int, 512>{}, integral_constant<int, 4>{});
    else launch(integral_constant<int, 256>{}, integral_constant<int, 8>{});
  }
  if (er_slices > 0) {
    ehyb_er_kernel<Scalar><<<blocks_for(static_cast<long>(er_slices) * 32, 256), 256, 0, stream>>>(
        er_slices, er_rows, er_width, er_offset, er_col, er_val, er_y, alpha, x, y);
    check_launch("kspmv::cuda_tuned::ehyb_er_kernel");
  }
}

}  // namespace cuda_tuned
}  // namespace kspmv
