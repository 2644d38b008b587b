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
// Several columns (csr_merge_block_kernel): the same units and fix-up,
// each entry read once for up to kBlockColumns columns, a group of lanes
// an X row (below). No atomics: the same bits on every run. Finishing crossing rows in the
// same launch (the unit a row ends in waiting for its earlier units'
// pieces, or the last of them to arrive adding them) took 11-40% longer
// on an H100 than the second launch: every unit then fences its pieces,
// and a unit that waits holds its place on the SM.
#pragma once

#include <climits>

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/block_util.hpp"

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

// Where thread tid's share of the unit's path starts (step 2): rows i0
// of the unit finished, entry k0 - (the unit's first entry) consumed. A
// binary search over the row ends staged in shared memory.
__device__ __forceinline__ void merge_thread_start(const int* row_end, int d0, int rows, int entries, int& i0,
                                                   int& k0) {
  int lo = max(0, d0 - entries), hi = min(d0, rows);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (row_end[mid] <= d0 - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  i0 = lo;
  k0 = d0 - lo;
}

// Row i ends on a walk: its sum is finished where the walk began the row,
// else it is the walk's first sum (the row began before, added after the
// carries' scan).
template <class Scalar, class Finish>
__device__ __forceinline__ void end_row(int& i, Scalar& sum, Scalar& first, bool& ended, const Finish& finish) {
  if (ended)
    finish(i, sum);
  else
    first = sum;
  ended = true;
  sum = 0;
  ++i;
}

// Steps 2 and 3 for one column of products staged in prod: the thread
// walks its IPT items from (i0, k0), calls finish(row, sum) for the rows
// it closes (the unit's rows, 0-based), and returns its scanned carry: the
// sum so far of the row it ends in, over this and earlier threads. Holds
// three __syncthreads, so every thread of the block calls it.
template <class Scalar, int IPT, class Finish>
__device__ __forceinline__ Scalar merge_reduce_unit(const Scalar* prod, const int* row_end, Scalar* scanned,
                                                    int* warp_key, Scalar* warp_carry, int d0, int items, int i0,
                                                    int k0, const Finish& finish) {
  constexpr int WARPS = kMergeBlockThreads / 32;
  const int tid = threadIdx.x;
  int i = i0, k = k0;
  Scalar sum = 0, first = 0;
  bool ended = false;
  int next_end = row_end[i];
#pragma unroll
  for (int q = 0; q < IPT; ++q) {
    if (d0 + q < items) {
      if (next_end <= k) {  // the sentinel never ends
        end_row(i, sum, first, ended, finish);
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
  static_assert(WARPS <= 32, "one warp's keys a block");
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
  return carry;
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

  // 2 and 3. This thread's share of the path, then the carries' scan.
  const int d0 = min(tid * IPT, items);
  int i0, kt;
  merge_thread_start(row_end, d0, rows, entries, i0, kt);
  const Scalar carry = merge_reduce_unit<Scalar, IPT>(
      prod, row_end, scanned, warp_key, warp_carry, d0, items, i0, kt, [&](int row, Scalar s) {
        if (row == 0 && continues)
          a.head[u] = s;
        else
          store_y(y, r0 + row, alpha, s, beta);
      });
  if (tid == BLOCK - 1 && r1 < a.nrows) {
    if (rows == 0 && continues)
      a.head[u] = carry;  // a unit inside one row
    else if (k1 > ldg(a.row_ptr + r1))
      a.tail[u] = carry;  // the row it ends in began here
  }
}

// Bytes of dynamic shared memory a unit takes in the kernel for several
// columns: its columns, values and row ends (and a sentinel), and the
// groups' scanned carries.
template <class Scalar>
inline std::size_t merge_block_shared_bytes(int unit_items) {
  return static_cast<std::size_t>(unit_items) * (sizeof(int) + sizeof(Scalar)) +
         (static_cast<std::size_t>(unit_items) + 1) * sizeof(int) + std::size_t(kMergeBlockThreads) * sizeof(Scalar);
}

// The unit kernel for several columns. The block's threads are groups of
// kBlockColumns lanes, lane j of a group holding column j: a group walks
// kBlockColumns times a thread's share of the path (the unit's columns,
// values and row ends staged in shared memory by the whole block), and
// for each entry its lanes gather X(c, 0..kBlockColumns-1) together, one
// 64-byte row where X is row-major: one L1 wavefront an entry, where a
// thread gathering its own row would take one a sector or one a column.
// A group's X loads are issued before its walk: it knows from the merge
// path where it starts and ends, so the q-th entry it consumes is its
// start plus q, a register index fixed at compile time. The carries'
// segmented scan runs over the groups, a lane a column (shuffles by whole
// groups, then the warps' last groups in shared memory), in a fixed order.
// Column j's partial sums go to head and tail at j * units.
template <class Scalar, int IPT>
__global__ void __launch_bounds__(kMergeBlockThreads)
    csr_merge_block_kernel(MergeUnits<Scalar> a, Scalar alpha, ColumnBlock<Scalar> b, Scalar beta) {
  constexpr int BLOCK = kMergeBlockThreads;
  constexpr int G = kBlockColumns;    // lanes a group
  constexpr int GROUPS = BLOCK / G;   // groups a block
  constexpr int GPW = 32 / G;         // groups a warp
  constexpr int WARPS = BLOCK / 32;
  constexpr int ipu = IPT * BLOCK;
  constexpr int IPG = ipu / GROUPS;   // items a group
  static_assert(32 % G == 0 && GROUPS * IPG == ipu, "groups of whole warps' lanes");
  extern __shared__ __align__(16) unsigned char merge_shared[];
  __shared__ int warp_key[WARPS];
  __shared__ Scalar warp_carry[WARPS][G];
  Scalar* val_s = reinterpret_cast<Scalar*>(merge_shared);  // ipu
  Scalar* scanned = val_s + ipu;                             // GROUPS x G
  int* col_s = reinterpret_cast<int*>(scanned + BLOCK);      // ipu
  int* row_end = col_s + ipu;                                // ipu + 1
  const int u = blockIdx.x;
  const int tid = threadIdx.x;
  const int r0 = ldg(a.unit_row + u), r1 = ldg(a.unit_row + u + 1);
  const int k0 = ldg(a.unit_nz + u), k1 = ldg(a.unit_nz + u + 1);
  const int rows = r1 - r0, entries = k1 - k0, items = rows + entries;
  const bool continues = k0 > ldg(a.row_ptr + r0);
  const bool ends_begun = r1 < a.nrows && k1 > ldg(a.row_ptr + r1);

  // The unit staged by the whole block, coalesced.
  {
    int c[IPT], end[IPT];
    Scalar v[IPT];
#pragma unroll
    for (int q = 0; q < IPT; ++q) {
      const int e = tid + q * BLOCK;
      c[q] = e < entries ? ld_stream(a.col + k0 + e) : 0;
      v[q] = e < entries ? ld_stream(a.val + k0 + e) : Scalar(0);
      end[q] = e < rows ? ld_stream(a.row_ptr + r0 + 1 + e) : 0;
    }
#pragma unroll
    for (int q = 0; q < IPT; ++q) {
      const int e = tid + q * BLOCK;
      if (e < entries) {
        col_s[e] = c[q];
        val_s[e] = v[q];
      }
      if (e < rows) row_end[e] = end[q] - k0;
    }
  }
  if (tid == 0) row_end[rows] = INT_MAX;  // the row the unit ends in does not end here
  __syncthreads();

  // The group's share of the path: from (i0, e0) to (i1, e1).
  const int g = tid / G, j = tid % G;
  const int d0 = min(g * IPG, items), d1 = min(d0 + IPG, items);
  int i0, e0, i1, e1;
  merge_thread_start(row_end, d0, rows, entries, i0, e0);
  merge_thread_start(row_end, d1, rows, entries, i1, e1);
  const bool lane_on = j < b.cols;
  Scalar xq[IPG];
#pragma unroll
  for (int q = 0; q < IPG; ++q) {
    const int e = e0 + q;
    xq[q] = (lane_on && e < e1) ? ldg(b.x + static_cast<long>(col_s[e]) * b.x_row + j * b.x_col) : Scalar(0);
  }

  Scalar* head = a.head + static_cast<long>(j) * a.units;
  Scalar* yj = b.y + j * b.y_col;
  auto finish = [&](int row, Scalar s) {
    if (!lane_on) return;
    if (row == 0 && continues)
      head[u] = s;
    else
      store_y(yj, (r0 + row) * b.y_row, alpha, s, beta);
  };
  // Rows end before an entry at a tie: before consuming entry e, close
  // the rows whose end is at most e.
  int i = i0;
  Scalar sum = 0, first = 0;
  bool ended = false;
  auto close_rows_to = [&](int e) {
    while (i < i1 && row_end[i] <= e) end_row(i, sum, first, ended, finish);
  };
#pragma unroll
  for (int q = 0; q < IPG; ++q) {
    const int e = e0 + q;
    if (e < e1) {
      close_rows_to(e);
      sum += val_s[e] * xq[q];
    }
  }
  close_rows_to(INT_MAX - 1);  // the rest of the group's row ends

  // Segmented inclusive scan of the groups' carries, a lane a column,
  // keyed by the row each group ends in (keys ascend with the group).
  const int lane = tid & 31, warp = tid >> 5, gw = lane / G;
  Scalar carry = sum;
#pragma unroll
  for (int off = 1; off < GPW; off *= 2) {
    const Scalar c = __shfl_up_sync(0xffffffffu, carry, off * G);
    const int ki = __shfl_up_sync(0xffffffffu, i, off * G);
    if (gw >= off && ki == i) carry += c;
  }
  if (gw == GPW - 1) {
    if (j == 0) warp_key[warp] = i;
    warp_carry[warp][j] = carry;
  }
  __syncthreads();
  int w0 = warp;
  while (w0 > 0 && warp_key[w0 - 1] == i) --w0;
  if (w0 < warp) {
    Scalar before = 0;
    for (int w = w0; w < warp; ++w) before += warp_carry[w][j];
    carry = before + carry;
  }
  scanned[g * G + j] = carry;
  __syncthreads();
  // The group before ends in the row this group's first row end closes.
  if (ended) finish(i0, (g > 0 ? scanned[(g - 1) * G + j] : Scalar(0)) + first);
  if (g == GROUPS - 1 && lane_on && r1 < a.nrows) {
    if (rows == 0 && continues)
      head[u] = carry;  // a unit inside one row
    else if (ends_begun)
      a.tail[static_cast<long>(j) * a.units + u] = carry;
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

// Y = alpha * A * X + beta * Y for b.cols <= kBlockColumns columns; head
// and tail hold kBlockColumns * units partial sums.
template <class Scalar>
void csr_merge_spmv_block(cudaStream_t stream, const MergeUnits<Scalar>& m, int nspan, const int* span_row,
                          const int* span_first, const int* span_last, Scalar alpha, const ColumnBlock<Scalar>& b,
                          Scalar beta) {
  if (m.units == 0 || b.cols <= 0) return;
  if (b.cols > kBlockColumns || m.unit_items % kMergeBlockThreads != 0 ||
      m.unit_items > kMergeBlockThreads * kMergeMaxItemsPerThread)
    throw InvalidArgumentError("csr-merge: the CUDA block kernel takes at most " + std::to_string(kBlockColumns) +
                               " columns and units of whole items per thread, got " + std::to_string(b.cols) +
                               " columns, " + std::to_string(m.unit_items) + " items");
  const std::size_t shared = merge_block_shared_bytes<Scalar>(m.unit_items);
  switch (m.unit_items / kMergeBlockThreads) {
    case 1: csr_merge_block_kernel<Scalar, 1><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, b, beta); break;
    case 2: csr_merge_block_kernel<Scalar, 2><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, b, beta); break;
    case 3: csr_merge_block_kernel<Scalar, 3><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, b, beta); break;
    default: csr_merge_block_kernel<Scalar, 4><<<m.units, kMergeBlockThreads, shared, stream>>>(m, alpha, b, beta); break;
  }
  check_launch("kspmv::cuda_tuned::csr_merge_block_kernel");
  fix_up_spanning_rows(stream, nspan, span_row, span_first, span_last, m.head, m.tail, alpha, beta,
                       ColumnsOut<Scalar>{b.y, b.y_row, b.y_col, m.units}, b.cols);
}

}  // namespace cuda_tuned
}  // namespace kspmv
