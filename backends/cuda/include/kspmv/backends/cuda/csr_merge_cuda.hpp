// Hand-tuned CUDA csr-merge (merge-path CSR, formats/csr_merge.hpp): a
// block of kMergeBlockThreads threads per unit of the merge path.
//
//  1. The unit's products val * x[col] and row ends are staged in shared
//     memory with coalesced loads (columns and values streamed, x through
//     the read-only path), several loads in flight a thread.
//  2. Each thread finds its own start on the unit's path (a binary search
//     in shared memory) and walks its items_per_thread items: a row it
//     begins and ends is written to y at once; the sum before its first
//     row end and its trailing sum (its carry, keyed by the row it ends in)
//     wait for step 3.
//  3. A segmented inclusive scan of the threads' carries (warp shuffles,
//     then the warps' totals in shared memory, both in a fixed order) gives
//     each thread the sum of its first row so far; it writes that row. The
//     unit's first row, if an earlier unit began it, goes to head[u]; the
//     sum of the row the unit ends in, if it began it, to tail[u].
//  4. A fix-up launch, a warp per row crossing units, adds tail[first] and
//     head[first + 1 .. last] (lane-strided, then a shuffle tree: a fixed
//     order) and writes alpha * sum + beta * y once.
// No atomics: the same bits on every run.
#pragma once

#include <climits>

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/core/adaptive.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar>
struct MergeUnits {
  int nrows;
  int units;
  int unit_items;  // a multiple of kMergeBlockThreads, at most kMergeMaxItemsPerThread of them
  const int* unit_row;
  const int* unit_nz;
  const int* row_ptr;
  const int* col;
  const Scalar* val;
  Scalar* head;
  Scalar* tail;
};

// Bytes of dynamic shared memory a unit of `unit_items` items takes: the
// products (at most unit_items), the threads' scanned carries, the row
// ends (at most unit_items, and a sentinel).
template <class Scalar>
inline std::size_t merge_shared_bytes(int unit_items) {
  return (static_cast<std::size_t>(unit_items) + kMergeBlockThreads) * sizeof(Scalar) +
         (static_cast<std::size_t>(unit_items) + 1) * sizeof(int);
}

template <class Scalar>
__global__ void __launch_bounds__(kMergeBlockThreads)
    csr_merge_unit_kernel(MergeUnits<Scalar> a, Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                          Scalar* __restrict__ y) {
  constexpr int BLOCK = kMergeBlockThreads;
  constexpr int WARPS = BLOCK / 32;
  extern __shared__ __align__(16) unsigned char merge_shared[];
  __shared__ int warp_key[WARPS];
  __shared__ Scalar warp_carry[WARPS];
  const int ipu = a.unit_items;
  const int ipt = ipu / BLOCK;
  Scalar* prod = reinterpret_cast<Scalar*>(merge_shared);  // ipu
  Scalar* scanned = prod + ipu;                            // BLOCK
  int* row_end = reinterpret_cast<int*>(scanned + BLOCK);  // ipu + 1
  const int u = blockIdx.x;
  const int tid = threadIdx.x;
  const int r0 = ldg(a.unit_row + u), r1 = ldg(a.unit_row + u + 1);
  const int k0 = ldg(a.unit_nz + u), k1 = ldg(a.unit_nz + u + 1);
  const int rows = r1 - r0, entries = k1 - k0, items = rows + entries;
  const bool continues = k0 > ldg(a.row_ptr + r0);

  // 1. Stage the unit: four entries a thread at a time, their column and
  // value loads issued before the x loads that wait on the columns.
  for (int j0 = 0; j0 < ipt; j0 += 4) {
    int c[4];
    Scalar v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int e = tid + (j0 + q) * BLOCK;
      c[q] = e < entries ? ld_stream(a.col + k0 + e) : -1;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int e = tid + (j0 + q) * BLOCK;
      v[q] = e < entries ? ld_stream(a.val + k0 + e) : Scalar(0);
    }
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (c[q] >= 0) prod[tid + (j0 + q) * BLOCK] = v[q] * ldg(x + c[q]);
  }
  for (int i = tid; i < rows; i += BLOCK) row_end[i] = ld_stream(a.row_ptr + r0 + 1 + i);
  if (tid == 0) row_end[rows] = INT_MAX;  // the row the unit ends in does not end here
  __syncthreads();

  // 2. This thread's share of the path.
  const int d0 = min(tid * ipt, items), d1 = min(d0 + ipt, items);
  int lo = max(0, d0 - entries), hi = min(d0, rows);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (row_end[mid] <= k0 + d0 - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  const int i0 = lo;
  int i = lo, k = d0 - lo;  // k: the unit's entry
  Scalar sum = 0, first = 0;
  bool ended = false;
  auto finish = [&](int row, Scalar s) {
    if (row == 0 && continues)
      a.head[u] = s;
    else
      store_y(y, r0 + row, alpha, s, beta);
  };
  for (int d = d0; d < d1; ++d) {
    if (row_end[i] <= k0 + k) {  // the sentinel never ends
      if (ended)
        finish(i, sum);
      else
        first = sum;
      ended = true;
      sum = 0;
      ++i;
    } else {
      sum += prod[k];
      ++k;
    }
  }

  // 3. Segmented inclusive scan of the carries, keyed by the row each
  // thread ends in (keys ascend with the thread).
  const int lane = tid & 31, warp = tid >> 5;
  Scalar carry = sum;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const Scalar c = __shfl_up_sync(0xffffffffu, carry, off);
    const int ki = __shfl_up_sync(0xffffffffu, i, off);
    if (lane >= off && ki == i) carry += c;
  }
  if (lane == 31) {
    warp_key[warp] = i;
    warp_carry[warp] = carry;
  }
  __syncthreads();
  // Earlier warps whose last thread ends in this thread's row: a run just
  // before this warp (keys ascend), added first to last.
  int w0 = warp;
  while (w0 > 0 && warp_key[w0 - 1] == i) --w0;
  if (w0 < warp) {
    Scalar before = 0;
    for (int w = w0; w < warp; ++w) before += warp_carry[w];
    carry = before + carry;
  }
  scanned[tid] = carry;
  __syncthreads();
  // The thread before ends in the row this thread's first row end closes.
  if (ended) finish(i0, (tid > 0 ? scanned[tid - 1] : Scalar(0)) + first);
  if (tid == BLOCK - 1 && r1 < a.nrows) {
    if (rows == 0 && continues)
      a.head[u] = carry;  // a unit inside one row
    else if (k1 > ldg(a.row_ptr + r1))
      a.tail[u] = carry;  // the row it ends in began here
  }
}

// Rows crossing units: a warp a row.
template <class Scalar>
__global__ void __launch_bounds__(128)
    csr_merge_fixup_kernel(int nspan, const int* __restrict__ span_row, const int* __restrict__ span_first,
                           const int* __restrict__ span_last, const Scalar* __restrict__ head,
                           const Scalar* __restrict__ tail, Scalar alpha, Scalar beta, Scalar* __restrict__ y) {
  const int s = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (s >= nspan) return;  // whole warps leave together
  const int u0 = ldg(span_first + s), u1 = ldg(span_last + s);
  Scalar sum = 0;
  for (int u = u0 + 1 + lane; u <= u1; u += 32) sum += head[u];
  sum = warp_sum(sum);
  if (lane == 0) store_y(y, ldg(span_row + s), alpha, tail[u0] + sum, beta);
}

template <class Scalar>
void csr_merge_spmv(cudaStream_t stream, const MergeUnits<Scalar>& m, int nspan, const int* span_row,
                    const int* span_first, const int* span_last, Scalar alpha, const Scalar* x, Scalar beta,
                    Scalar* y) {
  if (m.units == 0) return;
  if (m.unit_items % kMergeBlockThreads != 0 || m.unit_items > kMergeBlockThreads * kMergeMaxItemsPerThread)
    throw InvalidArgumentError("csr-merge: the CUDA kernel takes units of whole items per thread, at most " +
                               std::to_string(kMergeBlockThreads * kMergeMaxItemsPerThread) + " items, got " +
                               std::to_string(m.unit_items));
  csr_merge_unit_kernel<Scalar><<<m.units, kMergeBlockThreads, merge_shared_bytes<Scalar>(m.unit_items), stream>>>(
      m, alpha, x, beta, y);
  check_launch("kspmv::cuda_tuned::csr_merge_unit_kernel");
  if (nspan > 0) {
    csr_merge_fixup_kernel<Scalar><<<blocks_for(static_cast<long>(nspan) * 32, 128), 128, 0, stream>>>(
        nspan, span_row, span_first, span_last, m.head, m.tail, alpha, beta, y);
    check_launch("kspmv::cuda_tuned::csr_merge_fixup_kernel");
  }
}

}  // namespace cuda_tuned
}  // namespace kspmv
