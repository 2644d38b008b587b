// Shared pieces of the hand-tuned CUDA kernels (compiled only when
// KSPMV_ENABLE_CUDA, by nvcc through Kokkos' nvcc_wrapper).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {
namespace cuda_tuned {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(ErrorCode::InvalidArgument, std::string(what) + ": " + cudaGetErrorString(e));
}
// After a launch: configuration errors surface here, not at the next sync.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

// Read-only cached load (LDG): x and the matrix arrays are never written
// during an SpMV.
template <class T>
__device__ __forceinline__ T ldg(const T* p) {
  return __ldg(p);
}

// Streaming load (LD.CS, evict-first in L1 and L2) for the matrix arrays,
// which one SpMV reads exactly once. When matrix + vectors exceed L2, plain
// loads let the matrix stream push x and y out (an LRU cache under a cyclic
// sweep larger than itself misses everything); marked evict-first, the
// matrix passes through and x (reused within the SpMV) and y (written back,
// or read again by the next solver step) stay.
template <class T>
__device__ __forceinline__ T ld_stream(const T* p) {
  return __ldcs(p);
}

// Load for a lane that walks its own row (CSR with few lanes per row): the
// row's next entries share the line just fetched, so the line stays in L1
// (evict-last) for the lane's next loads, while L2 still marks it
// evict-first (as ld_stream) to keep x and y there. Plain ld_stream drops
// the line from L1 at once, so each of a row's entries refetched it from
// L2 or DRAM: csr-scalar took 2.8-3.2x longer on lap3d:120 than on
// lap3d:100 for 1.73x the data.
__device__ __forceinline__ unsigned long long l2_evict_first_policy() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ int ld_walk(const int* p, unsigned long long pol) {
  int v;
  asm volatile("ld.global.nc.L1::evict_last.L2::cache_hint.s32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ double ld_walk(const double* p, unsigned long long pol) {
  double v;
  asm volatile("ld.global.nc.L1::evict_last.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ float ld_walk(const float* p, unsigned long long pol) {
  float v;
  asm volatile("ld.global.nc.L1::evict_last.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(pol));
  return v;
}

// What a slot loop walks: a padded slab, streamed (evict-first: each slot
// is read once) with a row's padding at its end; or a lane's own
// contiguous entries, exactly len of them, walked (ld_walk). The walk
// never tests for padding: that test alone spilled 24 bytes a thread in
// EHYB's 32-register kernels (ptxas).
struct PaddedSlab {
  static constexpr bool padded = true;
  template <class T>
  __device__ __forceinline__ T operator()(const T* p) const {
    return ld_stream(p);
  }
};
struct WalkedRow {
  static constexpr bool padded = false;
  unsigned long long policy = l2_evict_first_policy();
  template <class T>
  __device__ __forceinline__ T operator()(const T* p) const {
    return ld_walk(p, policy);
  }
};

// One row of a column-major padded slab (ELL, PELLR and EVC-HYB slices,
// EHYB's slices and extra rows): slot k at cp/vp + k * pitch, column `pad`
// marks the row's padding, which is contiguous at its end; x_at(c) reads
// x (global memory, or EHYB's window in shared memory). Step slots per
// step, all index and value loads issued before the x loads (memory-level
// parallelism); a step that starts on padding ends the row.
// ValuesAhead: the value loads do not wait for the columns (their only
// dependency is the slot count), so a step costs one DRAM latency and the
// x gather instead of two DRAM latencies; padding values are then fetched
// too. Measured on the H100: PELLR 1.03-1.24x on small
// matrices and even on large ones, EHYB 1.00-1.08x; EVC-HYB 2-8% slower on
// the FEM matrices, so it keeps the default; ELL's one width for all rows
// would fetch all its padding.
template <bool ValuesAhead, int Step = 4, class Index, class Scalar, class XAt, class Slab = PaddedSlab>
__device__ __forceinline__ Scalar padded_slots_dot(int width, long pitch, const Index* __restrict__ cp,
                                                   const Scalar* __restrict__ vp, Index pad, const XAt& x_at,
                                                   const Slab& load = {}) {
  Scalar sum = 0;
  for (int k = 0; k < width; k += Step) {
    Index c[Step];
    Scalar v[Step];
#pragma unroll
    for (int u = 0; u < Step; ++u) c[u] = k + u < width ? load(cp + (k + u) * pitch) : pad;
    if constexpr (ValuesAhead) {
#pragma unroll
      for (int u = 0; u < Step; ++u) v[u] = k + u < width ? load(vp + (k + u) * pitch) : Scalar(0);
    }
    if constexpr (Slab::padded)
      if (c[0] == pad) break;
    if constexpr (!ValuesAhead) {
#pragma unroll
      for (int u = 0; u < Step; ++u) v[u] = c[u] != pad ? load(vp + (k + u) * pitch) : Scalar(0);
    }
#pragma unroll
    for (int u = 0; u < Step; ++u)
      if (c[u] != pad) sum += v[u] * x_at(c[u]);
  }
  return sum;
}

// A lane's own len contiguous entries (32-bit columns, x in global
// memory): the slot loop with pitch 1 and no padding. Neighbouring lanes'
// entries follow one another, so the lines stay in L1 for the lanes' next
// steps (ld_walk).
template <int Step = 4, class Scalar>
__device__ __forceinline__ Scalar walked_row_dot(int len, const int* __restrict__ cp, const Scalar* __restrict__ vp,
                                                 const Scalar* __restrict__ x) {
  return padded_slots_dot<true, Step>(len, 1, cp, vp, -1, [x](int c) { return ldg(x + c); }, WalkedRow{});
}

// The same with 32-bit columns, -1 as padding and x in global memory.
template <bool ValuesAhead = false, int Step = 4, class Scalar>
__device__ __forceinline__ Scalar padded_row_dot(int width, long pitch, const int* __restrict__ cp,
                                                 const Scalar* __restrict__ vp, const Scalar* __restrict__ x) {
  return padded_slots_dot<ValuesAhead, Step>(width, pitch, cp, vp, -1, [x](int c) { return ldg(x + c); });
}

// Several columns (the fused kernels): X(c, j) = x[c * x_row + j * x_col]
// and Y(r, j) = y[r * y_row + j * y_col], cols of them (at most
// kBlockColumns, kspmv/core/block_util.hpp).
template <class Scalar>
struct ColumnBlock {
  const Scalar* x;
  long x_row, x_col;
  Scalar* y;
  long y_row, y_col;
  int cols;
};

// Columns j0 .. j0 + cols - 1 of rank-2 views X and Y (any layout).
template <class Scalar, class XView, class YView>
ColumnBlock<Scalar> column_block(const XView& X, const YView& Y, int j0, int cols) {
  return {X.data() + j0 * static_cast<long>(X.stride(1)), static_cast<long>(X.stride(0)),
          static_cast<long>(X.stride(1)),                 Y.data() + j0 * static_cast<long>(Y.stride(1)),
          static_cast<long>(Y.stride(0)),                 static_cast<long>(Y.stride(1)),
          cols};
}

// y(i) = alpha * sum + beta * y(i); beta == 0 never reads y.
template <class Scalar>
__device__ __forceinline__ void store_y(Scalar* y, long i, Scalar alpha, Scalar sum, Scalar beta) {
  y[i] = (beta == Scalar(0)) ? alpha * sum : alpha * sum + beta * y[i];
}

template <class Scalar>
__device__ __forceinline__ Scalar warp_sum(Scalar v, int width = 32) {
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off, width);
  return v;
}

// The warp-level steps of the refresh kernels that read a slice's rows as
// one run of entries (ehyb_cuda.hpp, evc_hyb_cuda.hpp). All 32 lanes take
// part in each.

// v summed over this lane and the lanes below it.
__device__ __forceinline__ int warp_inclusive_sum(int v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int t = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += t;
  }
  return v;
}

// The first lane whose `end` passes `at`: with each lane's `end` the end
// of its row in a run of rows laid one after another (nondecreasing over
// the lanes), the lane whose row holds entry `at` of the run. Five
// shuffles, a halving of the lanes each.
__device__ __forceinline__ int warp_lane_holding(int end, int at) {
  int l = 0;
#pragma unroll
  for (int d = 16; d > 0; d /= 2) {
    const int e = __shfl_sync(0xffffffffu, end, l + d - 1);
    if (e <= at) l += d;
  }
  return l;
}

// The last i in [lo, hi) with keys[i] <= key, keys nondecreasing and
// keys[lo] <= key taken as given. The warp probes 32 places at once, so
// a round narrows the range 32 times: a search of a million keys is four
// rounds of one load each, where a search by halves waits on twenty loads
// in a row.
template <class T, class K>
__device__ __forceinline__ int warp_last_at_or_before(const T* keys, int lo, int hi, K key) {
  constexpr unsigned all = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  while (hi - lo > 1) {
    const int at = lo + static_cast<int>(static_cast<long long>(lane) * (hi - lo) / 32);
    const unsigned le = __ballot_sync(all, lane == 0 || ldg(keys + at) <= key);
    const int t = 31 - __clz(le);  // the last probe at or before key; the next is past it
    const int next = __shfl_sync(all, at, (t + 1) & 31);
    lo = __shfl_sync(all, at, t);
    if (t < 31) hi = next;
  }
  return lo;
}

inline unsigned blocks_for(long n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

// Rows split across work units (coo's chunks, csr-merge's units): row
// span_row[s] has a partial sum in tail[first] and in head[u] for each later
// unit up to last; y = alpha * (their sum) + beta * y, once. A thread a row
// where the row crosses at most kSpanThreadUnits units, the warp together
// for longer rows; both add in a fixed order, so the same bits every run.
// A warp a row left 31 lanes idle and took several waves where units are
// many (rmat:22:16 in csr-merge, about 69,000 rows crossing units: about
// 16 us against 9 for this kernel on an H100).
constexpr int kSpanThreadUnits = 8;

// Where the fix-up writes: one contiguous y (its partial sums head[u] and
// tail[u]), or column blockIdx.y of a block (Y(row, j) = y[row * y_row +
// j * y_col], its partial sums at j * units).
template <class Scalar>
struct OneColumnOut {
  Scalar* y;
  __device__ __forceinline__ int column() const { return 0; }
  __device__ __forceinline__ long partials(int) const { return 0; }
  __device__ __forceinline__ void store(int, long row, Scalar alpha, Scalar sum, Scalar beta) const {
    store_y(y, row, alpha, sum, beta);
  }
};
template <class Scalar>
struct ColumnsOut {
  Scalar* y;
  long y_row, y_col;
  int units;
  __device__ __forceinline__ int column() const { return blockIdx.y; }
  __device__ __forceinline__ long partials(int j) const { return static_cast<long>(j) * units; }
  __device__ __forceinline__ void store(int j, long row, Scalar alpha, Scalar sum, Scalar beta) const {
    store_y(y + j * y_col, row * y_row, alpha, sum, beta);
  }
};

template <class Scalar, class Out>
__global__ void __launch_bounds__(256)
    spanning_rows_kernel(int nspan, const int* __restrict__ span_row, const int* __restrict__ span_first,
                         const int* __restrict__ span_last, const Scalar* __restrict__ head,
                         const Scalar* __restrict__ tail, Scalar alpha, Scalar beta, Out out) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int j = out.column();
  head += out.partials(j);
  tail += out.partials(j);
  const bool valid = s < nspan;  // no early return: the warp's wide rows are shared
  const int u0 = valid ? ldg(span_first + s) : 0, u1 = valid ? ldg(span_last + s) : 0;
  const int row = valid ? ldg(span_row + s) : 0;
  const bool wide = valid && u1 - u0 > kSpanThreadUnits;
  if (valid && !wide) {
    Scalar sum = ldg(tail + u0);
    for (int u = u0 + 1; u <= u1; ++u) sum += ldg(head + u);
    out.store(j, row, alpha, sum, beta);
  }
  for (unsigned todo = __ballot_sync(0xffffffffu, wide); todo != 0; todo &= todo - 1) {
    const int src = __ffs(todo) - 1;
    const int w0 = __shfl_sync(0xffffffffu, u0, src), w1 = __shfl_sync(0xffffffffu, u1, src);
    const int wrow = __shfl_sync(0xffffffffu, row, src);
    Scalar sum = 0;
    for (int u = w0 + 1 + lane; u <= w1; u += 32) sum += ldg(head + u);
    sum = warp_sum(sum);
    if (lane == 0) out.store(j, wrow, alpha, ldg(tail + w0) + sum, beta);
  }
}
// Columns: `columns` of them, a grid row each (Out: ColumnsOut).
template <class Scalar, class Out>
void fix_up_spanning_rows(cudaStream_t stream, int nspan, const int* span_row, const int* span_first,
                          const int* span_last, const Scalar* head, const Scalar* tail, Scalar alpha, Scalar beta,
                          const Out& out, int columns) {
  if (nspan <= 0 || columns <= 0) return;
  const dim3 grid(blocks_for(nspan, 256), columns);
  spanning_rows_kernel<Scalar, Out>
      <<<grid, 256, 0, stream>>>(nspan, span_row, span_first, span_last, head, tail, alpha, beta, out);
  check_launch("kspmv::cuda_tuned::spanning_rows_kernel");
}
template <class Scalar>
void fix_up_spanning_rows(cudaStream_t stream, int nspan, const int* span_row, const int* span_first,
                          const int* span_last, const Scalar* head, const Scalar* tail, Scalar alpha, Scalar beta,
                          Scalar* y) {
  fix_up_spanning_rows(stream, nspan, span_row, span_first, span_last, head, tail, alpha, beta,
                       OneColumnOut<Scalar>{y}, 1);
}

}  // namespace cuda_tuned
}  // namespace kspmv
