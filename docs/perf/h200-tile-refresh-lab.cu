// Tile-refresh lab (not part of the library): where the time of the CUDA
// refresh kernel of dia and ell (tile_refresh_cuda.hpp) goes, and variants
// of it, each timed beside a device copy of the same bytes on dia and ELL
// layouts made here from generated patterns. Every variant's output is
// compared, bit for bit, with the library kernel's.
// Build (from the repository root; needs only the CUDA toolkit):
//   nvcc -O3 -std=c++17 -arch=sm_90 -Icore/include -Ibackends/cuda/include -Idocs/perf \
//        docs/perf/h200-tile-refresh-lab.cu -o lab
// Run: ./lab  (the library kernel on each matrix, its time and % of copy);
// LAB_VARIANTS=1 ./lab  (then each variant: us, % of copy, x the library kernel).
// Built a second time with -I<dir> first, dir holding an earlier
// tile_refresh_cuda.hpp, it times that kernel: an A/B in one device call.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kspmv/backends/cuda/tile_refresh_cuda.hpp"
#include "h100-lab-util.cuh"  // CK, up, median_batch_us

using namespace kspmv::cuda_tuned;

// A matrix's CSR offsets, the refresh's input values and its layout.
struct Case {
  std::string name;
  int nrows = 0;
  std::vector<std::int64_t> rp;
  std::vector<std::uint64_t> mask;  // dia: each row's diagonals, `words` a row
  int words = 0, ndiag = 0;
  TileLayout layout;
  long out_slots = 0;
  bool dia = true;
};

// A pattern given as diagonal offsets (a band or a stencil): row i holds
// column i + off[d] where that column exists.
Case dia_case(const std::string& name, int n, const std::vector<long>& off) {
  Case c;
  c.name = name;
  c.nrows = n;
  c.ndiag = int(off.size());
  c.words = (c.ndiag + 63) / 64;
  c.rp.assign(n + 1, 0);
  c.mask.assign(long(n) * c.words, 0);
  for (int i = 0; i < n; ++i) {
    int len = 0;
    for (int d = 0; d < c.ndiag; ++d) {
      const long j = i + off[d];
      if (j >= 0 && j < n) {
        ++len;
        c.mask[long(i) * c.words + d / 64] |= std::uint64_t(1) << (d % 64);
      }
    }
    c.rp[i + 1] = c.rp[i] + len;
  }
  const long pitch = (n + 31) / 32 * 32;
  c.layout.width = c.ndiag;
  c.layout.stride = pitch;
  c.layout.slice_rows = 0;
  c.out_slots = pitch * c.ndiag;
  return c;
}
std::vector<long> band(int h) {
  std::vector<long> o;
  for (int d = -h; d <= h; ++d) o.push_back(d);
  return o;
}
std::vector<long> stencil(int m, bool full27) {
  std::vector<long> o;
  const long s[3] = {1, m, long(m) * m};
  if (full27) {
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int d = -1; d <= 1; ++d) o.push_back(a * s[2] + b * s[1] + d);
  } else {
    o = {-s[2], -s[1], -1, 0, 1, s[1], s[2]};
  }
  std::sort(o.begin(), o.end());
  return o;
}
// ELL rows of random lengths lo..hi, 256-row slices width hi deep.
Case ell_case(const std::string& name, int n, int lo, int hi) {
  Case c;
  c.name = name;
  c.nrows = n;
  c.dia = false;
  c.rp.assign(n + 1, 0);
  std::mt19937 g(7);
  std::uniform_int_distribution<int> len(lo, hi);
  for (int i = 0; i < n; ++i) c.rp[i + 1] = c.rp[i] + len(g);
  c.layout.width = hi;
  c.layout.stride = 256;
  c.layout.slice_rows = 256;
  c.out_slots = long((n + 255) / 256) * 256 * hi;
  return c;
}

// ---- variants ---------------------------------------------------------
// Flags of a variant kernel.
enum : unsigned {
  kDivide = 1,      // a tile whose rows all fill `width`: row = offset / width (no search)
  kStreamIn = 2,    // values read evict-first (__ldcs)
  kStreamOut = 4,   // slots written evict-first (__stcs)
  kNoWrite = 8,     // diagnosis: the tile is not written out
  kNoRead = 16,     // diagnosis: no value is read (the tile's slots get the offset)
  kPersistent = 32  // a block walks tiles (grid of resident blocks), the next tile's offsets read before the write
};

template <class Columns>
struct VariantArgs {
  int nrows;
  std::int64_t nnz;
  const std::int64_t* rp;
  const double* values;
  double* out;
  TileLayout layout;
  Columns columns;
  bool whole_rows;
};

// Entry e of a tile's run into its slot: by division where `divide` (every
// row of the tile fills every column), by a binary search over the tile's
// offsets and the format's column rule elsewhere.
template <class Columns>
__device__ __forceinline__ void place_in_tile(double* tile, int pitch, const std::int64_t* rp, int rows, int width,
                                              int r0, bool divide, const Columns& columns, std::int64_t e, double v) {
  int lo, n;
  if (divide) {
    const int o = int(e - rp[0]);
    lo = o / width;
    n = o - lo * width;
  } else {
    lo = 0;
    int hi = rows - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (rp[mid] <= e) lo = mid;
      else hi = mid - 1;
    }
    n = int(e - rp[lo]);
  }
  const int c = divide ? n : columns(r0 + lo, n, int(rp[lo + 1] - rp[lo]));
  if (c < width) tile[c * pitch + lo] = v;
}

// A tile's offsets into shared memory (this thread's, `next`, read ahead)
// and its slots zeroed unless every row fills every column; true then.
template <int Rows, int Threads, class Columns>
__device__ __forceinline__ bool begin_tile(const VariantArgs<Columns>& a, double* tile, std::int64_t* rp, int r0,
                                           int rows, std::int64_t next) {
  const int width = a.layout.width;
  if (threadIdx.x <= rows) rp[threadIdx.x] = next;
  for (int i = threadIdx.x + Threads; i <= rows; i += Threads) rp[i] = __ldg(a.rp + r0 + i);
  __syncthreads();
  const bool full = a.whole_rows && rows == Rows && rp[rows] - rp[0] == std::int64_t(Rows) * width;
  if (!full)
    for (int s = threadIdx.x; s < width * (Rows + 1); s += Threads) tile[s] = 0.0;
  __syncthreads();
  return full;
}

template <int Rows, int Threads, int Ilp, unsigned F, class Columns>
__global__ void __launch_bounds__(Threads) variant_kernel(VariantArgs<Columns> a) {
  constexpr int pitch = Rows + 1;
  extern __shared__ __align__(16) unsigned char tile_bytes[];
  __shared__ std::int64_t rp[Rows + 1];
  double* tile = reinterpret_cast<double*>(tile_bytes);
  const int width = a.layout.width;
  const int tiles = (a.nrows + Rows - 1) / Rows;
  int t = blockIdx.x;
  if (t >= tiles) return;
  std::int64_t next = 0;  // kPersistent: this thread's offset of the next tile
  if (threadIdx.x <= Rows && t * Rows + int(threadIdx.x) <= a.nrows) next = __ldg(a.rp + t * Rows + threadIdx.x);
  for (; t < tiles; t += (F & kPersistent) ? gridDim.x : tiles) {
    const int r0 = t * Rows;
    const int rows = min(Rows, a.nrows - r0);
    const bool full = begin_tile<Rows, Threads>(a, tile, rp, r0, rows, next);
    const std::int64_t first = rp[0], last = rp[rows];
    for (std::int64_t e0 = first + threadIdx.x; e0 < last; e0 += std::int64_t(Ilp) * Threads) {
      double v[Ilp];
#pragma unroll
      for (int k = 0; k < Ilp; ++k) {
        const std::int64_t e = e0 + std::int64_t(k) * Threads;
        if (F & kNoRead)
          v[k] = double(e);
        else if (e < last)
          v[k] = (F & kStreamIn) ? __ldcs(a.values + e) : __ldg(a.values + e);
      }
#pragma unroll
      for (int k = 0; k < Ilp; ++k) {
        const std::int64_t e = e0 + std::int64_t(k) * Threads;
        if (e >= last) break;
        place_in_tile(tile, pitch, rp, rows, width, r0, (F & kDivide) && full, a.columns, e, v[k]);
      }
    }
    __syncthreads();
    if ((F & kPersistent) && t + int(gridDim.x) < tiles) {
      const int nr0 = (t + gridDim.x) * Rows;
      if (threadIdx.x <= Rows && nr0 + int(threadIdx.x) <= a.nrows) next = __ldg(a.rp + nr0 + threadIdx.x);
    }
    if (!(F & kNoWrite)) {
      const long base = a.layout.base(r0);
      for (int s = threadIdx.x; s < width * Rows; s += Threads) {
        const int c = s / Rows, i = s % Rows;
        if (i < rows) {
          double* p = a.out + base + c * a.layout.stride + i;
          if (F & kStreamOut) __stcs(p, tile[c * pitch + i]);
          else *p = tile[c * pitch + i];
        }
      }
    }
    __syncthreads();
  }
}

// Pipelined: each block takes a contiguous run of tiles; before it writes
// a tile out it reads the next tile's offsets and the first Ilp x Threads
// values of the next tile (which starts where this one ends in the CSR).
template <int Rows, int Threads, int Ilp, bool Stream, class Columns>
__global__ void __launch_bounds__(Threads) pipelined_kernel(VariantArgs<Columns> a, std::int64_t nnz) {
  constexpr int pitch = Rows + 1;
  extern __shared__ __align__(16) unsigned char tile_bytes[];
  __shared__ std::int64_t rp[Rows + 1];
  double* tile = reinterpret_cast<double*>(tile_bytes);
  const int width = a.layout.width;
  const long tiles = (a.nrows + Rows - 1) / Rows;
  const long t_begin = long(blockIdx.x) * tiles / gridDim.x, t_end = long(blockIdx.x + 1) * tiles / gridDim.x;
  if (t_begin >= t_end) return;
  auto load = [&](std::int64_t e) { return Stream ? __ldcs(a.values + e) : __ldg(a.values + e); };
  std::int64_t next = 0;
  {
    const long r = t_begin * Rows + threadIdx.x;
    if (threadIdx.x <= Rows && r <= a.nrows) next = __ldg(a.rp + r);
  }
  double pre[Ilp];
  {
    const std::int64_t first = __ldg(a.rp + t_begin * Rows);
#pragma unroll
    for (int k = 0; k < Ilp; ++k) {
      const std::int64_t e = first + threadIdx.x + std::int64_t(k) * Threads;
      pre[k] = e < nnz ? load(e) : 0.0;
    }
  }
  for (long t = t_begin; t < t_end; ++t) {
    const int r0 = int(t * Rows);
    const int rows = min(Rows, a.nrows - r0);
    const bool full = begin_tile<Rows, Threads>(a, tile, rp, r0, rows, next);
    const std::int64_t first = rp[0], last = rp[rows];
    auto place = [&](std::int64_t e, double v) { place_in_tile(tile, pitch, rp, rows, width, r0, full, a.columns, e, v); };
#pragma unroll
    for (int k = 0; k < Ilp; ++k) {
      const std::int64_t e = first + threadIdx.x + std::int64_t(k) * Threads;
      if (e < last) place(e, pre[k]);
    }
    for (std::int64_t e0 = first + threadIdx.x + std::int64_t(Ilp) * Threads; e0 < last;
         e0 += std::int64_t(Ilp) * Threads) {
      double v[Ilp];
#pragma unroll
      for (int k = 0; k < Ilp; ++k) {
        const std::int64_t e = e0 + std::int64_t(k) * Threads;
        v[k] = e < last ? load(e) : 0.0;
      }
#pragma unroll
      for (int k = 0; k < Ilp; ++k) {
        const std::int64_t e = e0 + std::int64_t(k) * Threads;
        if (e < last) place(e, v[k]);
      }
    }
    __syncthreads();
    if (t + 1 < t_end) {
      const long r = (t + 1) * Rows + threadIdx.x;
      if (threadIdx.x <= Rows && r <= a.nrows) next = __ldg(a.rp + r);
#pragma unroll
      for (int k = 0; k < Ilp; ++k) {
        const std::int64_t e = last + threadIdx.x + std::int64_t(k) * Threads;
        pre[k] = e < nnz ? load(e) : 0.0;
      }
    }
    const long base = a.layout.base(r0);
    for (int s = threadIdx.x; s < width * Rows; s += Threads) {
      const int c = s / Rows, i = s % Rows;
      if (i < rows) {
        double* p = a.out + base + c * a.layout.stride + i;
        if (Stream) __stcs(p, tile[c * pitch + i]);
        else *p = tile[c * pitch + i];
      }
    }
    __syncthreads();
  }
}
constexpr unsigned kPipelined = 64;  // launch_variant: pipelined_kernel<..., Stream = F & kStreamIn>

template <int Rows, int Threads, int Ilp, unsigned F, class Columns>
void launch_variant(const VariantArgs<Columns>& a, int grid_cap) {
  const unsigned shared = unsigned(a.layout.width * (Rows + 1) * sizeof(double));
  static bool configured = false;
  if (!configured) {
    if constexpr ((F & kPipelined) != 0)
      CK(cudaFuncSetAttribute(pipelined_kernel<Rows, Threads, Ilp, (F & kStreamIn) != 0, Columns>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    else
      CK(cudaFuncSetAttribute(variant_kernel<Rows, Threads, Ilp, F, Columns>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    configured = true;
  }
  int grid = (a.nrows + Rows - 1) / Rows;
  if ((F & (kPersistent | kPipelined)) && grid_cap > 0) grid = std::min(grid, grid_cap);
  if constexpr ((F & kPipelined) != 0)
    pipelined_kernel<Rows, Threads, Ilp, (F & kStreamIn) != 0, Columns><<<grid, Threads, shared>>>(a, a.nnz);
  else
    variant_kernel<Rows, Threads, Ilp, F, Columns><<<grid, Threads, shared>>>(a);
}

// Resident blocks of a variant on this device (for kPersistent grids).
template <int Rows, int Threads, int Ilp, unsigned F, class Columns>
int resident_grid(int width) {
  int per_sm = 0, sms = 0;
  const size_t shared = size_t(width) * (Rows + 1) * sizeof(double);
  if constexpr ((F & kPipelined) != 0)
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, pipelined_kernel<Rows, Threads, Ilp, (F & kStreamIn) != 0, Columns>, Threads, shared));
  else
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, variant_kernel<Rows, Threads, Ilp, F, Columns>, Threads,
                                                     shared));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  return per_sm * sms;
}

struct Result {
  double us;
  bool same;
};

template <class Columns>
struct Bench {
  const Case& c;
  VariantArgs<Columns> a;
  double* ref_out;
  double lib_us = 0, copy_us = 0, bytes = 0;
  std::vector<double> ref_host;

  template <int Rows, int Threads, int Ilp, unsigned F>
  void run(const char* label) {
    if (long(c.layout.width) * (Rows + 1) * 8 > 96 * 1024) return;
    const int cap = (F & (kPersistent | kPipelined)) ? resident_grid<Rows, Threads, Ilp, F, Columns>(c.layout.width) : 0;
    CK(cudaMemset(a.out, 0xff, c.out_slots * sizeof(double)));
    launch_variant<Rows, Threads, Ilp, F>(a, cap);
    CK(cudaDeviceSynchronize());
    bool same = true;
    if (!(F & (kNoWrite | kNoRead))) {
      std::vector<double> h(c.out_slots);
      CK(cudaMemcpy(h.data(), a.out, h.size() * 8, cudaMemcpyDeviceToHost));
      same = std::memcmp(h.data(), ref_host.data(), h.size() * 8) == 0;
    }
    const double us = median_batch_us([&] { launch_variant<Rows, Threads, Ilp, F>(a, cap); }, 11, 10);
    printf("%-22s %-34s %9.1f us %5.1f%% of copy %5.2fx lib %s\n", c.name.c_str(), label, us, 100 * copy_us / us,
           lib_us / us, same ? "same" : "DIFFERENT");
    fflush(stdout);
  }
};

template <class Columns>
void bench(const Case& c, const Columns& columns) {
  const long nnz = c.rp.back();
  std::vector<double> vals(nnz);
  for (long k = 0; k < nnz; ++k) vals[k] = 1.0 + double(k % 1013) / 1024.0;
  VariantArgs<Columns> a;
  a.nrows = c.nrows;
  a.nnz = nnz;
  a.rp = up(c.rp);
  a.values = up(vals);
  CK(cudaMalloc(&a.out, c.out_slots * sizeof(double)));
  a.layout = c.layout;
  a.columns = columns;
  a.whole_rows = true;
  Bench<Columns> b{c, a, nullptr};
  CK(cudaMalloc(&b.ref_out, c.out_slots * sizeof(double)));
  CK(cudaMemset(b.ref_out, 0xff, c.out_slots * sizeof(double)));
  tile_refresh(nullptr, c.nrows, a.rp, a.values, b.ref_out, c.layout, columns, NoTail{}, true);
  CK(cudaDeviceSynchronize());
  b.ref_host.resize(c.out_slots);
  CK(cudaMemcpy(b.ref_host.data(), b.ref_out, c.out_slots * 8, cudaMemcpyDeviceToHost));
  // The copy: the refresh's bytes (values in, slots out, offsets in) as one device copy each way.
  b.bytes = double(nnz) * 8 + double(c.out_slots) * 8 + double(c.nrows + 1) * 8;
  double* scratch;
  CK(cudaMalloc(&scratch, size_t(b.bytes / 2) + 64));
  double* scratch2;
  CK(cudaMalloc(&scratch2, size_t(b.bytes / 2) + 64));
  b.copy_us = median_batch_us([&] { cudaMemcpyAsync(scratch2, scratch, size_t(b.bytes / 2), cudaMemcpyDeviceToDevice); },
                              11, 10);
  b.lib_us = median_batch_us(
      [&] { tile_refresh(nullptr, c.nrows, a.rp, a.values, b.ref_out, c.layout, columns, NoTail{}, true); }, 11, 10);
  printf("%-22s nnz %ld, %d columns, %.0f MB moved: copy %.1f us (%.0f GB/s), library kernel %.1f us (%.1f%% of copy)\n",
         c.name.c_str(), nnz, c.layout.width, b.bytes / 1e6, b.copy_us, b.bytes / b.copy_us / 1e3, b.lib_us,
         100 * b.copy_us / b.lib_us);
  fflush(stdout);
  const int w = getenv("LAB_VARIANTS") ? c.layout.width : 1 << 20;  // unset: the library kernel alone
  constexpr unsigned D = kDivide, S = kStreamIn | kStreamOut, Q = kPersistent, P = kPipelined;
  // Each line's "x lib" is against the library kernel this lab was built with.
  if (w * 129 * 8 <= 48 * 1024) {
    b.template run<128, 256, 4, 0>("128x256 ilp4 search, ldg");
    b.template run<128, 256, 4, S>("128x256 ilp4 search, stream");
    b.template run<128, 256, 4, D | S>("128x256 ilp4 divide stream");
    b.template run<128, 256, 8, D | S>("128x256 ilp8 divide stream");
    b.template run<128, 512, 4, D | S>("128x512 ilp4 divide stream");
    b.template run<128, 256, 4, D | S | Q>("128x256 ilp4 divide stream persistent");
    b.template run<128, 256, 4, P | kStreamIn>("128x256 ilp4 pipelined stream");
  }
  if (w * 65 * 8 <= 48 * 1024) {
    b.template run<64, 256, 4, D | S>("64x256 ilp4 divide stream");
    b.template run<64, 256, 4, D | S | Q>("64x256 ilp4 divide stream persistent");
    b.template run<64, 128, 4, P | kStreamIn>("64x128 ilp4 pipelined stream");
  }
  if (w * 33 * 8 <= 48 * 1024) {
    b.template run<32, 256, 4, D | S>("32x256 ilp4 divide stream");
    b.template run<32, 256, 4, D | S | Q>("32x256 ilp4 divide stream persistent");
  }
  if (w * 257 * 8 <= 64 * 1024) {
    b.template run<256, 256, 4, D | S>("256x256 ilp4 divide stream");
    b.template run<256, 256, 4, D | S | Q>("256x256 ilp4 divide stream persistent");
    b.template run<256, 256, 4, P | kStreamIn>("256x256 ilp4 pipelined stream");
  }
  if (c.dia && w * 513 * 8 <= 64 * 1024)  // not on ELL: 512 rows cross its 256-row slices
    b.template run<512, 256, 4, D | S>("512x256 ilp4 divide stream");
  CK(cudaFree(scratch));
  CK(cudaFree(scratch2));
  CK(cudaFree(a.out));
  CK(cudaFree(b.ref_out));
  CK(cudaFree(const_cast<std::int64_t*>(a.rp)));
  CK(cudaFree(const_cast<double*>(a.values)));
}

int main() {
  std::vector<Case> cases;
  cases.push_back(dia_case("banded-1M-h8", 1 << 20, band(8)));
  cases.push_back(dia_case("banded-500k-h20", 500000, band(20)));
  cases.push_back(dia_case("banded-300k-h64", 300000, band(64)));
  cases.push_back(dia_case("laplace-7pt-8M", 200 * 200 * 200, stencil(200, false)));
  cases.push_back(dia_case("laplace-27pt-2M", 126 * 126 * 126, stencil(126, true)));
  cases.push_back(ell_case("uniform-2M-4-20", 2000000, 4, 20));
  cases.push_back(ell_case("ell-full-2M-16", 2000000, 16, 16));
  cases.push_back(ell_case("ell-4M-6-8", 4000000, 6, 8));
  cases.push_back(ell_case("ell-1M-15-27", 1000000, 15, 27));
  cases.push_back(dia_case("lap2d9-1500", 1500 * 1500, {-1501, -1500, -1499, -1, 0, 1, 1499, 1500, 1501}));
  for (const Case& c : cases) {
    if (c.dia) {
      std::uint64_t* mask = up(c.mask);
      DiagonalColumns cols;
      cols.mask = mask;
      cols.words = c.words;
      cols.ndiag = c.ndiag;
      bench(c, cols);
      CK(cudaFree(mask));
    } else {
      bench(c, EntryColumns{});
    }
  }
  return 0;
}
