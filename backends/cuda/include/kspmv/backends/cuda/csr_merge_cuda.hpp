// Hand-tuned CUDA csr-merge (merge-path CSR, formats/csr_merge.hpp): a
// block of kMergeBlockThreads threads per unit of the merge path.
//
//  1. The unit's products val * x[col] and row ends are staged in shared
//     memory with coalesced loads (columns and values streamed, x through
//     the read-only path). A thread's items are a template argument, so
//     every column, value and row-end load of the unit is issued before
//     the x loads that wait on the columns: two rounds of memory latency a
//     unit. (Four at a time in a runtime loop took 1.4-2.1x longer on
//     power-law and R-MAT graphs, where x is gathered from L2.)
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
//  4. A fix-up launch (common.hpp, fix_up_spanning_rows) adds each row
//     crossing units, tail[first] and head[first + 1 .. last] in a fixed
//     order, and writes alpha * sum + beta * y once.
// No atomics: the same bits on every run. Finishing crossing rows in the
// same launch (the unit a row ends in waiting for its earlier units'
// pieces, or the last of them to arrive adding them) took 11-40% longer
// on an H100 than the second launch: every unit then fences its pieces,
// and a unit that waits holds its place on the SM.
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

template <class Scalar, int IPT>
__global__ void __launch_bounds__(kMergeBlockThreads)
    csr_merge_unit_kernel(MergeUnits<Scalar> a, Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                          Scalar* __restrict__ y) {
  constexpr int BLOCK = kMergeBlockThreads;
  constexpr int WARPS = BLOCK / 32;
  constexpr int ipu = IPT * BLOCK;
  extern __shared__ __align__(16) unsigned char merge_shared[];
  __shared__ int warp_key[WARPS];
  __shared__ Scalar warp_carry[WARPS];
  Scalar* prod = reinterpret_cast<Scalar*>(merge_shared);  // ipu
  Scalar* scanned = prod + ipu;                            // BLOCK
  int* row_end = reinterpret_cast<int*>(scanned + BLOCK);  // ipu + 1, from the unit's first entry
  const int u = blockIdx.x;
  const int tid = threadIdx.x;
  const int r0 = ldg(a.unit_row + u), r1 = ldg(a.unit_row + u + 1);
  const int k0 = ldg(a.unit_nz + u), k1 = ldg(a.unit_nz + u + 1);
  const int rows = r1 - r0, entries = k1 - k0, items = rows + entries;
  const bool continues = k0 > ldg(a.row_ptr + r0);

  // 1. Stage the unit (a unit holds at most ipu entries and ipu row ends).
  {
    int c[IPT], end[IPT];
    Scalar v[IPT];
#pragma unroll
    for (int q = 0; q < IPT; ++q) {
      const int e = tid + q * BLOCK;
      c[q] = e < entries ? ld_stream(a.col + k0 + e) : -1;
    }
#pragma unroll
    for (int q = 0; q < IPT; ++q) {
      const int e = tid + q * BLOCK;
      v[q] = e < entries ? ld_stream(a.val + k0 + e) : Scalar(0);
    }
#pragma unroll
    for (int q = 0; q < IPT; ++q) {
      const int i = tid + q * BLOCK;
      end[q] = i < rows ? ld_stream(a.row_ptr + r0 + 1 + i) : 0;
    }
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (c[q] >= 0) prod[tid + q * BLOCK] = v[q] * ldg(x + c[q]);
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (tid + q * BLOCK < rows) row_end[tid + q * BLOCK] = end[q] - k0;
  }
  if (tid == 0) row_end[rows] = INT_MAX;  // the row the unit ends in does not end here
  __syncthreads();

  // 2. This thread's share of the path.
  const int d0 = min(tid * IPT, items);
  int lo = max(0, d0 - entries), hi = min(d0, rows);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (row_end[mid] <= d0 - mid - 1)
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
  int next_end = row_end[i];
#pragma unroll
  for (int q = 0; q < IPT; ++q) {
    if (d0 + q < items) {
      if (next_end <= k) {  // the sentinel never ends
        if (ended)
          finish(i, sum);
        else
          first = sum;
        ended = true;
        sum = 0;
        ++i;
        next_end = row_end[i];
      } else {
        sum += prod[k];
        ++k;
      }
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

template <class Scalar>
void csr_merge_spmv(cudaStream_t stream, const MergeUnits<Scalar>& m, int nspan, const int* span_row,
                    const int* span_first, const int* span_last, Scalar alpha, const Scalar* x, Scalar beta,
                    Scalar* y) {
  static_assert(kMergeMaxItemsPerThread == 4, "csr_merge_spmv instantiates the unit kernel for 1 to 4 items a thread");
  if (m.units == 0) return;
  if (m.unit_items % kMergeBlockThreads != 0 || m.unit_items > kMergeBlockThreads * kMergeMaxItemsPerThread)
    throw InvalidArgumentError("csr-merge: the CUDA kernel takes units of whole items per thread, at most " +
                               std::to_string(kMergeBlockThreads * kMergeMaxItemsPerThread) + " items, got " +
                               std::to_string(m.unit_items));
  const std::size_t shared = merge_shared_bytes<Scalar>(m.unit_items);
  switch (m.unit_items / kMergeBlockThreads) {
    case 1: csr_merge_unit_kernel<Scalar, 1><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, x, beta, y); break;
    case 2: csr_merge_unit_kernel<Scalar, 2><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, x, beta, y); break;
    case 3: csr_merge_unit_kernel<Scalar, 3><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, x, beta, y); break;
    default: csr_merge_unit_kernel<Scalar, 4><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, x, beta, y); break;
  }
  check_launch("kspmv::cuda_tuned::csr_merge_unit_kernel");
  fix_up_spanning_rows(stream, nspan, span_row, span_first, span_last, m.head, m.tail, alpha, beta, y);
}

}  // namespace cuda_tuned
}  // namespace kspmv
