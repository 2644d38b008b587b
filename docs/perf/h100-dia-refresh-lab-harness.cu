// dia refresh lab: a scatter through a slot map (what kspmv's refresh does) against
// a tile of rows staged in shared memory and written a diagonal at a time;
// output and what each column means in h100-dia-refresh-lab-2026-11-26.txt.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void scatter(const int* slot, const double* v, double* data, long nnz) {
  long k = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (k < nnz) data[slot[k]] = v[k];
}
constexpr int T = 32;  // rows a tile in the "tile" column
constexpr int BUF = 5632;  // doubles of shared memory (44 KB)
__global__ void tile_refresh(const int* rp, const int* slot, const double* v, double* data, int n, int pitch, int TT, int* fallback) {
  __shared__ double buf[BUF];
  __shared__ int lo, hi;
  const int r0 = blockIdx.x * TT;
  const int r1 = min(n, r0 + TT);
  const long k0 = rp[r0], k1 = rp[r1];
  if (threadIdx.x == 0) { lo = 1 << 30; hi = -1; }
  __syncthreads();
  for (int t = threadIdx.x; t < r1 - r0; t += blockDim.x) {
    const int r = r0 + t;
    if (rp[r + 1] > rp[r]) {
      atomicMin(&lo, slot[rp[r]] / pitch);
      atomicMax(&hi, slot[rp[r + 1] - 1] / pitch);
    }
  }
  __syncthreads();
  const int nd = hi - lo + 1;
  if (nd <= 0) return;
  if (nd * TT > BUF) {
    for (long k = k0 + threadIdx.x; k < k1; k += blockDim.x) data[slot[k]] = v[k];
    if (threadIdx.x == 0) atomicAdd(fallback, 1);
    return;
  }
  for (int i = threadIdx.x; i < nd * TT; i += blockDim.x) buf[i] = 0.0;
  __syncthreads();
  for (long k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
    const int s = slot[k];
    const int d = s / pitch, r = s - d * pitch;
    buf[(d - lo) * TT + (r - r0)] = v[k];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < nd * TT; i += blockDim.x) {
    const int d = lo + i / TT, r = r0 + i % TT;
    if (r < n) data[(long)d * pitch + r] = buf[i];
  }
}
__global__ void dia_spmv(const double* data, const int* off, int nd, int n, int pitch, const double* x, double* y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  double s = 0;
  for (int d = 0; d < nd; ++d) { int c = r + off[d]; if (c >= 0 && c < n) s += data[(long)d * pitch + r] * x[c]; }
  y[r] = s;
}
__global__ void copyk(const double* a, double* b, long n) { long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }

template <class F> float timeit(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < 21; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1e3f); }
  std::sort(t.begin(), t.end()); return t[10];
}

void run(const char* name, int n, const std::vector<int>& offsets, double keep, unsigned seed) {
  // rows: entries on each offset in range, kept with probability keep
  srand(seed);
  std::vector<int> rp(n + 1, 0), col; std::vector<double> val;
  for (int r = 0; r < n; ++r) {
    for (int o : offsets) { int c = r + o; if (c >= 0 && c < n && (keep >= 1 || rand() < keep * RAND_MAX)) { col.push_back(c); val.push_back(1.0 + (rand() % 1000) * 1e-3); } }
    rp[r + 1] = col.size();
  }
  long nnz = col.size(); int nd = offsets.size(); int pitch = (n + 31) / 32 * 32;
  std::vector<int> slot(nnz);
  for (int r = 0; r < n; ++r) for (long k = rp[r]; k < rp[r + 1]; ++k) {
    int o = col[k] - r; int d = std::lower_bound(offsets.begin(), offsets.end(), o) - offsets.begin(); slot[k] = d * pitch + r; }
  int *d_rp, *d_slot, *d_off, *d_fb; double *d_v, *d_data, *d_ref, *d_x, *d_y;
  CK(cudaMalloc(&d_rp, (n + 1) * 4)); CK(cudaMalloc(&d_slot, nnz * 4)); CK(cudaMalloc(&d_off, nd * 4)); CK(cudaMalloc(&d_fb, 4));
  CK(cudaMalloc(&d_v, nnz * 8)); CK(cudaMalloc(&d_data, (long)nd * pitch * 8)); CK(cudaMalloc(&d_ref, (long)nd * pitch * 8));
  CK(cudaMalloc(&d_x, n * 8)); CK(cudaMalloc(&d_y, n * 8));
  cudaMemcpy(d_rp, rp.data(), (n + 1) * 4, cudaMemcpyHostToDevice); cudaMemcpy(d_slot, slot.data(), nnz * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_off, offsets.data(), nd * 4, cudaMemcpyHostToDevice); cudaMemcpy(d_v, val.data(), nnz * 8, cudaMemcpyHostToDevice);
  std::vector<double> ones(n, 1.0); cudaMemcpy(d_x, ones.data(), n * 8, cudaMemcpyHostToDevice);
  cudaMemset(d_ref, 0, (long)nd * pitch * 8); cudaMemset(d_data, 0, (long)nd * pitch * 8); cudaMemset(d_fb, 0, 4);
  scatter<<<(nnz + 255) / 256, 256>>>(d_slot, d_v, d_ref, nnz);
  tile_refresh<<<(n + T - 1) / T, 256>>>(d_rp, d_slot, d_v, d_data, n, pitch, T, d_fb);
  CK(cudaDeviceSynchronize());
  std::vector<double> a((long)nd * pitch), b((long)nd * pitch);
  cudaMemcpy(a.data(), d_ref, a.size() * 8, cudaMemcpyDeviceToHost); cudaMemcpy(b.data(), d_data, b.size() * 8, cudaMemcpyDeviceToHost);
  long bad = 0; for (size_t i = 0; i < a.size(); ++i) bad += a[i] != b[i];
  int fb; cudaMemcpy(&fb, d_fb, 4, cudaMemcpyDeviceToHost);
  float t_spmv = timeit([&] { dia_spmv<<<(n + 127) / 128, 128>>>(d_data, d_off, nd, n, pitch, d_x, d_y); });
  float t_scat = timeit([&] { scatter<<<(nnz + 255) / 256, 256>>>(d_slot, d_v, d_data, nnz); });
  float t_tile = timeit([&] { tile_refresh<<<(n + T - 1) / T, 256>>>(d_rp, d_slot, d_v, d_data, n, pitch, T, d_fb); });
  int TT = 32 * std::max(1, std::min(16, 176 / nd));
  cudaMemset(d_data, 0, (long)nd * pitch * 8);
  tile_refresh<<<(n + TT - 1) / TT, 256>>>(d_rp, d_slot, d_v, d_data, n, pitch, TT, d_fb);
  cudaMemcpy(b.data(), d_data, b.size() * 8, cudaMemcpyDeviceToHost); long bad2 = 0; for (size_t i = 0; i < a.size(); ++i) bad2 += a[i] != b[i];
  float t_tt = timeit([&] { tile_refresh<<<(n + TT - 1) / TT, 256>>>(d_rp, d_slot, d_v, d_data, n, pitch, TT, d_fb); });
  float t_copy = timeit([&] { copyk<<<(nnz + 255) / 256, 256>>>(d_v, d_ref, nnz); });
  printf("%-22s n %8d nnz %9ld diags %4d | spmv %8.1f us | scatter %8.1f (%.2f spmv) | tile %8.1f (%.2f spmv) | tile of %d rows %8.1f (%.2f spmv) | copy of values %7.1f | mismatches %ld %ld, fallback tiles %d\n",
         name, n, nnz, nd, t_spmv, t_scat, t_scat / t_spmv, t_tile, t_tile / t_spmv, TT, t_tt, t_tt / t_spmv, t_copy, bad, bad2, fb);
  fflush(stdout);
  cudaFree(d_rp); cudaFree(d_slot); cudaFree(d_off); cudaFree(d_fb); cudaFree(d_v); cudaFree(d_data); cudaFree(d_ref); cudaFree(d_x); cudaFree(d_y);
}
int main() {
  auto band = [](int h) { std::vector<int> o; for (int i = -h; i <= h; ++i) o.push_back(i); return o; };
  run("banded-300k-h64", 300000, band(64), 1.0, 1);
  run("banded-1M-h8", 1000000, band(8), 1.0, 2);
  run("banded-1M-h8-70%", 1000000, band(8), 0.7, 3);
  std::vector<int> lap9 = {-1501, -1500, -1499, -1, 0, 1, 1499, 1500, 1501};
  run("lap2d9-1500", 1500 * 1500, lap9, 1.0, 4);
  std::vector<int> lap7 = {-40000, -200, -1, 0, 1, 200, 40000};
  run("lap3d-200", 8000000, lap7, 1.0, 5);
  std::vector<int> wide; for (int i = -150; i <= 150; i += 1) wide.push_back(i * 7);
  run("wide-301-diags", 200000, wide, 1.0, 6);
}
