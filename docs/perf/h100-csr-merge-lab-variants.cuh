// Variants of the csr-merge unit kernel.
#pragma once
#include <type_traits>

__device__ __forceinline__ double ld_x_hint(const double* p, int abl, unsigned long long pol) {
  double r;
  if (abl & 32)
    asm volatile("ld.global.nc.L1::evict_last.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(r) : "l"(p), "l"(pol));
  else
    asm volatile("ld.global.nc.L1::evict_last.f64 %0, [%1];" : "=d"(r) : "l"(p));
  return r;
}
// V2: the library's algorithm (281f727's csr_merge_unit_kernel) with BLOCK
// threads a unit and options. With no option it is the kernel the rows
// "v1-BxI" of the first runs timed. SMALL: row ends kept as 16-bit offsets
// from the unit's first entry, and the scanned carries written over the
// products (dead after the walk): less shared memory a block, more L1 for
// x. STAGEY: y written from shared memory. abl (timing only, wrong results):
// 1 no y stores, 2 no search, 4 no cross-warp combination; 8 trigger the
// fix-up's programmatic launch; 16/32 x loads evict-last in L1 / L1 and L2.
template <class Scalar, int IPT, int BLOCK, bool SMALL, bool STAGEY = false>
__global__ void __launch_bounds__(BLOCK)
    merge_v2_kernel(MergeUnits<Scalar> a, Scalar alpha, const Scalar* __restrict__ x, Scalar beta,
                    Scalar* __restrict__ y, int abl) {
  constexpr int WARPS = BLOCK / 32;
  constexpr int ipu = IPT * BLOCK;
  using End = typename std::conditional<SMALL, unsigned short, int>::type;
  extern __shared__ __align__(16) unsigned char merge_shared[];
  __shared__ int warp_key[WARPS];
  __shared__ Scalar warp_carry[WARPS];
  Scalar* prod = reinterpret_cast<Scalar*>(merge_shared);           // ipu
  Scalar* scanned = SMALL ? prod : prod + ipu;                      // BLOCK
  Scalar* ysum = prod + ipu + (SMALL ? 0 : BLOCK);                 // ipu (STAGEY)
  End* row_end = reinterpret_cast<End*>(ysum + (STAGEY ? ipu : 0));  // ipu + 1
  if (abl & 8) cudaTriggerProgrammaticLaunchCompletion();
  unsigned long long pol = 0;
  if (abl & 32) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  const int u = blockIdx.x;
  const int tid = threadIdx.x;
  const int r0 = ldg(a.unit_row + u), r1 = ldg(a.unit_row + u + 1);
  const int k0 = ldg(a.unit_nz + u), k1 = ldg(a.unit_nz + u + 1);
  const int rows = r1 - r0, entries = k1 - k0, items = rows + entries;
  const bool continues = k0 > ldg(a.row_ptr + r0);
  {
    int c[IPT], re[IPT];
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
      re[q] = i < rows ? ld_stream(a.row_ptr + r0 + 1 + i) : 0;
    }
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (c[q] >= 0) prod[tid + q * BLOCK] = v[q] * ((abl & 48) ? ld_x_hint(x + c[q], abl, pol) : ldg(x + c[q]));
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (tid + q * BLOCK < rows) row_end[tid + q * BLOCK] = End(re[q] - k0);
  }
  if (tid == 0) row_end[rows] = End(SMALL ? 65535 : INT_MAX);
  __syncthreads();
  const int d0 = min(tid * IPT, items);
  int lo = max(0, d0 - entries), hi = min(d0, rows);
  if (!(abl & 2))
    while (lo < hi) {
      const int mid = (lo + hi) >> 1;
      if (int(row_end[mid]) <= d0 - mid - 1)
        lo = mid + 1;
      else
        hi = mid;
    }
  const int i0 = lo;
  int i = lo, k = d0 - lo;
  Scalar sum = 0, first = 0, sink = 0;
  bool ended = false;
  auto finish = [&](int row, Scalar s) {
    if (abl & 1) {
      sink += s;
      return;
    }
    if (STAGEY) {
      ysum[row] = s;
      return;
    }
    if (row == 0 && continues)
      a.head[u] = s;
    else
      store_y(y, r0 + row, alpha, s, beta);
  };
  int next_end = row_end[i];
#pragma unroll
  for (int q = 0; q < IPT; ++q) {
    if (d0 + q < items) {
      if (next_end <= k) {
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
  if (!(abl & 4)) {
    int w0 = warp;
    while (w0 > 0 && warp_key[w0 - 1] == i) --w0;
    if (w0 < warp) {
      Scalar before = 0;
      for (int w = w0; w < warp; ++w) before += warp_carry[w];
      carry = before + carry;
    }
  }
  scanned[tid] = carry;
  __syncthreads();
  if (ended) finish(i0, (tid > 0 ? scanned[tid - 1] : Scalar(0)) + first);
  if (tid == BLOCK - 1 && r1 < a.nrows) {
    if (rows == 0 && continues)
      a.head[u] = carry;
    else if (k1 > ldg(a.row_ptr + r1))
      a.tail[u] = carry;
  }
  if (STAGEY && !(abl & 1)) {
    __syncthreads();
    for (int r = tid; r < rows; r += BLOCK) {
      const Scalar s = ysum[r];
      if (r == 0 && continues)
        a.head[u] = s;
      else
        store_y(y, r0 + r, alpha, s, beta);
    }
  }
  if (abl & 1)
    if (sink == Scalar(-12345.678)) y[0] = sink;
}
using Launch2 = void (*)(const MergeUnits<double>&, const double*, double*, int);
template <int BLOCK, int IPT, bool SMALL, bool STAGEY>
void launch2(const MergeUnits<double>& m, const double* x, double* y, int abl) {
  size_t sh = SMALL ? size_t(IPT * BLOCK) * 8 + size_t(IPT * BLOCK + 1) * 2
                    : size_t(IPT * BLOCK + BLOCK) * 8 + size_t(IPT * BLOCK + 1) * 4;
  if (STAGEY) sh += size_t(IPT * BLOCK) * 8;
  merge_v2_kernel<double, IPT, BLOCK, SMALL, STAGEY><<<m.units, BLOCK, sh>>>(m, 1.0, x, 0.0, y, abl);
}
template <int BLOCK, bool SMALL, bool STAGEY>
Launch2 pick2_ipt(int ipt) {
  switch (ipt) {
    case 2: return launch2<BLOCK, 2, SMALL, STAGEY>;
    case 3: return launch2<BLOCK, 3, SMALL, STAGEY>;
    case 4: return launch2<BLOCK, 4, SMALL, STAGEY>;
    case 6: return launch2<BLOCK, 6, SMALL, STAGEY>;
    case 8: return launch2<BLOCK, 8, SMALL, STAGEY>;
  }
  return nullptr;
}
template <int BLOCK>
Launch2 pick2_b(int ipt, bool small, bool stagey) {
  if (stagey) return small ? pick2_ipt<BLOCK, true, true>(ipt) : pick2_ipt<BLOCK, false, true>(ipt);
  return small ? pick2_ipt<BLOCK, true, false>(ipt) : pick2_ipt<BLOCK, false, false>(ipt);
}
inline Launch2 pick2(int block, int ipt, bool small, bool stagey) {
  if (block == 128) return pick2_b<128>(ipt, small, stagey);
  if (block == 256) return pick2_b<256>(ipt, small, stagey);
  if (block == 512) return pick2_b<512>(ipt, small, stagey);
  return nullptr;
}

// V4: V2 (SMALL) with the rows crossing units finished in the same launch:
// each unit publishes its one partial sum (part[u], then flag[u]); the unit
// a crossing row ends in waits for its earlier units' flags (a warp, lanes
// strided), adds them in a fixed order and resets the flags.
__device__ __forceinline__ int ld_volatile_int(const int* p) { return *reinterpret_cast<const volatile int*>(p); }
template <class Scalar, int IPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    merge_v4_kernel(MergeUnits<Scalar> a, int* __restrict__ flag, Scalar alpha, const Scalar* __restrict__ x,
                    Scalar beta, Scalar* __restrict__ y) {
  constexpr int WARPS = BLOCK / 32;
  constexpr int ipu = IPT * BLOCK;
  extern __shared__ __align__(16) unsigned char merge_shared[];
  __shared__ int warp_key[WARPS];
  __shared__ Scalar warp_carry[WARPS];
  __shared__ Scalar row0_sum;
  Scalar* prod = reinterpret_cast<Scalar*>(merge_shared);  // ipu
  Scalar* scanned = prod;                                  // BLOCK, after the walk
  unsigned short* row_end = reinterpret_cast<unsigned short*>(prod + ipu);  // ipu + 1
  const int u = blockIdx.x;
  const int tid = threadIdx.x;
  const int r0 = ldg(a.unit_row + u), r1 = ldg(a.unit_row + u + 1);
  const int k0 = ldg(a.unit_nz + u), k1 = ldg(a.unit_nz + u + 1);
  const int rows = r1 - r0, entries = k1 - k0, items = rows + entries;
  const int row0_start = ldg(a.row_ptr + r0);
  const bool continues = k0 > row0_start;
  {
    int c[IPT], re[IPT];
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
      re[q] = i < rows ? ld_stream(a.row_ptr + r0 + 1 + i) : 0;
    }
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (c[q] >= 0) prod[tid + q * BLOCK] = v[q] * ldg(x + c[q]);
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (tid + q * BLOCK < rows) row_end[tid + q * BLOCK] = (unsigned short)(re[q] - k0);
  }
  if (tid == 0) row_end[rows] = 65535;
  __syncthreads();
  const int d0 = min(tid * IPT, items);
  int lo = max(0, d0 - entries), hi = min(d0, rows);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (int(row_end[mid]) <= d0 - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  const int i0 = lo;
  int i = lo, k = d0 - lo;
  Scalar sum = 0, first = 0;
  bool ended = false;
  auto finish = [&](int row, Scalar s) {
    if (row == 0 && continues)
      row0_sum = s;
    else
      store_y(y, r0 + row, alpha, s, beta);
  };
  int next_end = row_end[i];
#pragma unroll
  for (int q = 0; q < IPT; ++q) {
    if (d0 + q < items) {
      if (next_end <= k) {
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
  int w0 = warp;
  while (w0 > 0 && warp_key[w0 - 1] == i) --w0;
  if (w0 < warp) {
    Scalar before = 0;
    for (int w = w0; w < warp; ++w) before += warp_carry[w];
    carry = before + carry;
  }
  scanned[tid] = carry;
  __syncthreads();
  if (ended) finish(i0, (tid > 0 ? scanned[tid - 1] : Scalar(0)) + first);
  // Publish this unit's partial sum of a row that goes on past it.
  if (tid == BLOCK - 1 && r1 < a.nrows && ((rows == 0 && continues) || k1 > ldg(a.row_ptr + r1))) {
    a.head[u] = carry;
    __threadfence();
    *reinterpret_cast<volatile int*>(flag + u) = 1;
  }
  // The row this unit ends that earlier units began.
  if (continues && rows > 0) {
    __syncthreads();
    if (warp == 0) {
      const int ufirst = static_cast<int>((static_cast<long>(r0) + row0_start) / ipu);
      Scalar acc = 0;
      for (int j = ufirst + lane; j < u; j += 32) {
        while (ld_volatile_int(flag + j) == 0) {
        }
        __threadfence();
        acc += __ldcg(a.head + j);
        flag[j] = 0;
      }
      acc = warp_sum(acc);
      if (lane == 0) store_y(y, r0, alpha, acc + row0_sum, beta);
    }
  }
}
template <int BLOCK, int IPT>
void launch4(const MergeUnits<double>& m, int* flag, const double* x, double* y) {
  const size_t sh = size_t(IPT * BLOCK) * 8 + size_t(IPT * BLOCK + 1) * 2;
  merge_v4_kernel<double, IPT, BLOCK><<<m.units, BLOCK, sh>>>(m, flag, 1.0, x, 0.0, y);
}
using Launch4 = void (*)(const MergeUnits<double>&, int*, const double*, double*);
template <int BLOCK>
Launch4 pick4_ipt(int ipt) {
  switch (ipt) {
    case 2: return launch4<BLOCK, 2>;
    case 3: return launch4<BLOCK, 3>;
    case 4: return launch4<BLOCK, 4>;
    case 6: return launch4<BLOCK, 6>;
    case 8: return launch4<BLOCK, 8>;
  }
  return nullptr;
}
inline Launch4 pick4(int block, int ipt) {
  if (block == 128) return pick4_ipt<128>(ipt);
  if (block == 256) return pick4_ipt<256>(ipt);
  if (block == 512) return pick4_ipt<512>(ipt);
  return nullptr;
}

template <class Scalar, int IPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    merge_v5_kernel(MergeUnits<Scalar> a, int* __restrict__ cnt, Scalar alpha, const Scalar* __restrict__ x,
                    Scalar beta, Scalar* __restrict__ y) {
  constexpr int WARPS = BLOCK / 32;
  constexpr int ipu = IPT * BLOCK;
  extern __shared__ __align__(16) unsigned char merge_shared[];
  __shared__ int warp_key[WARPS];
  __shared__ Scalar warp_carry[WARPS];
  __shared__ Scalar row0_sum;
  Scalar* prod = reinterpret_cast<Scalar*>(merge_shared);  // ipu
  Scalar* scanned = prod;                                  // BLOCK, after the walk
  unsigned short* row_end = reinterpret_cast<unsigned short*>(prod + ipu);  // ipu + 1
  const int u = blockIdx.x;
  const int tid = threadIdx.x;
  const int r0 = ldg(a.unit_row + u), r1 = ldg(a.unit_row + u + 1);
  const int k0 = ldg(a.unit_nz + u), k1 = ldg(a.unit_nz + u + 1);
  const int rows = r1 - r0, entries = k1 - k0, items = rows + entries;
  const int row0_start = ldg(a.row_ptr + r0);
  const bool continues = k0 > row0_start;
  {
    int c[IPT], re[IPT];
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
      re[q] = i < rows ? ld_stream(a.row_ptr + r0 + 1 + i) : 0;
    }
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (c[q] >= 0) prod[tid + q * BLOCK] = v[q] * ldg(x + c[q]);
#pragma unroll
    for (int q = 0; q < IPT; ++q)
      if (tid + q * BLOCK < rows) row_end[tid + q * BLOCK] = (unsigned short)(re[q] - k0);
  }
  if (tid == 0) row_end[rows] = 65535;
  __syncthreads();
  const int d0 = min(tid * IPT, items);
  int lo = max(0, d0 - entries), hi = min(d0, rows);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (int(row_end[mid]) <= d0 - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  const int i0 = lo;
  int i = lo, k = d0 - lo;
  Scalar sum = 0, first = 0;
  bool ended = false;
  auto finish = [&](int row, Scalar s) {
    if (row == 0 && continues)
      row0_sum = s;
    else
      store_y(y, r0 + row, alpha, s, beta);
  };
  int next_end = row_end[i];
#pragma unroll
  for (int q = 0; q < IPT; ++q) {
    if (d0 + q < items) {
      if (next_end <= k) {
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
  int w0 = warp;
  while (w0 > 0 && warp_key[w0 - 1] == i) --w0;
  if (w0 < warp) {
    Scalar before = 0;
    for (int w = w0; w < warp; ++w) before += warp_carry[w];
    carry = before + carry;
  }
  scanned[tid] = carry;
  __syncthreads();
  if (ended) finish(i0, (tid > 0 ? scanned[tid - 1] : Scalar(0)) + first);
  // Rows crossing units: this unit's pieces. head[u]: the part of row r0
  // (begun earlier) in this unit; tail[u]: the part of the row it ends in,
  // begun here. Each piece is counted on the row's last unit (cnt[u1]);
  // the unit whose count completes the row adds its pieces in unit order.
  __syncthreads();
  if (warp == WARPS - 1) {
    const Scalar last_carry = __shfl_sync(0xffffffffu, carry, 31);
    const bool in_piece = continues;
    const bool out_piece = r1 < a.nrows && !(rows == 0 && continues) && k1 > ldg(a.row_ptr + r1);
#pragma unroll
    for (int side = 0; side < 2; ++side) {
      if (side == 0 ? !in_piece : !out_piece) continue;
      const int row = side == 0 ? r0 : r1;
      int last = 0, u0 = 0, u1 = 0;
      if (lane == 0) {
        if (side == 0)
          a.head[u] = rows > 0 ? row0_sum : last_carry;
        else
          a.tail[u] = last_carry;
        __threadfence();
        const long start = side == 0 ? row0_start : ldg(a.row_ptr + row);
        u0 = static_cast<int>((row + start) / ipu);
        u1 = static_cast<int>((row + static_cast<long>(ldg(a.row_ptr + row + 1))) / ipu);
        last = atomicAdd(cnt + u1, 1) == u1 - u0;
      }
      last = __shfl_sync(0xffffffffu, last, 0);
      if (last) {
        u0 = __shfl_sync(0xffffffffu, u0, 0);
        u1 = __shfl_sync(0xffffffffu, u1, 0);
        __threadfence();
        Scalar acc = 0;
        for (int j = u0 + lane; j <= u1; j += 32) acc += j == u0 ? __ldcg(a.tail + j) : __ldcg(a.head + j);
        acc = warp_sum(acc);
        if (lane == 0) {
          store_y(y, row, alpha, acc, beta);
          cnt[u1] = 0;
        }
      }
    }
  }
}
template <int BLOCK, int IPT>
void launch5(const MergeUnits<double>& m, int* flag, const double* x, double* y) {
  const size_t sh = size_t(IPT * BLOCK) * 8 + size_t(IPT * BLOCK + 1) * 2;
  merge_v5_kernel<double, IPT, BLOCK><<<m.units, BLOCK, sh>>>(m, flag, 1.0, x, 0.0, y);
}
template <int BLOCK>
Launch4 pick5_ipt(int ipt) {
  switch (ipt) {
    case 2: return launch5<BLOCK, 2>;
    case 3: return launch5<BLOCK, 3>;
    case 4: return launch5<BLOCK, 4>;
    case 6: return launch5<BLOCK, 6>;
    case 8: return launch5<BLOCK, 8>;
  }
  return nullptr;
}
inline Launch4 pick5(int block, int ipt) {
  if (block == 128) return pick5_ipt<128>(ipt);
  if (block == 256) return pick5_ipt<256>(ipt);
  if (block == 512) return pick5_ipt<512>(ipt);
  return nullptr;
}

template <class Scalar>
__global__ void __launch_bounds__(256)
    fixup_pdl_kernel(int nspan, const int* __restrict__ span_row, const int* __restrict__ span_first,
                     const int* __restrict__ span_last, const Scalar* __restrict__ head,
                     const Scalar* __restrict__ tail, Scalar alpha, Scalar beta, Scalar* __restrict__ y) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const bool valid = s < nspan;
  const int u0 = valid ? ldg(span_first + s) : 0, u1 = valid ? ldg(span_last + s) : 0;
  const int row = valid ? ldg(span_row + s) : 0;
  cudaGridDependencySynchronize();
  const bool wide = valid && u1 - u0 > 8;
  if (valid && !wide) {
    Scalar acc = __ldcg(tail + u0);
    for (int j = u0 + 1; j <= u1; ++j) acc += __ldcg(head + j);
    store_y(y, row, alpha, acc, beta);
  }
  unsigned todo = __ballot_sync(0xffffffffu, wide);
  while (todo) {
    const int src = __ffs(todo) - 1;
    todo &= todo - 1;
    const int a0 = __shfl_sync(0xffffffffu, u0, src), a1 = __shfl_sync(0xffffffffu, u1, src);
    const int wr = __shfl_sync(0xffffffffu, row, src);
    Scalar acc = 0;
    for (int j = a0 + 1 + lane; j <= a1; j += 32) acc += __ldcg(head + j);
    acc = warp_sum(acc);
    if (lane == 0) store_y(y, wr, alpha, __ldcg(tail + a0) + acc, beta);
  }
}
inline void launch_fixup_pdl(int nspan, const int* sr, const int* sf, const int* sl, const double* head,
                             const double* tail, double* y) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks_for(nspan, 256));
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = 0;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, fixup_pdl_kernel<double>, nspan, sr, sf, sl, head, tail, 1.0, 0.0, y));
}

template <class Check, class Report>
void run_variants(const std::string& spec, const MergeUnits<double>& mu, int nspan, const int* srow, const int* sf,
                  const int* sl, const double* x, double* y, int n, Check&& check, Report&& report) {
  {
    auto f = [&] { csr_merge_spmv<double>(0, mu, nspan, srow, sf, sl, 1.0, x, 0.0, y); };
    CK(cudaMemset(y, 0xff, n * 8));
    f();
    CK(cudaDeviceSynchronize());
    check("merge-v0");
    report("merge-v0", time_us(f));
  }
}
