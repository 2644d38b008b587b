// A lab (not part of the build): evc-hyb's vector-CSR fill patterns on banded rows of 129
// entries padded to 160 slots, timed by CUDA events beside a copy of the same bytes.
// Build: nvcc -O3 -arch=sm_90 -o fill_lab h200-evc-fill-lab.cu; run: fill_lab ROWS HALF_BAND.
#include <cstdio>
#include <vector>
#include <cstdint>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__device__ __forceinline__ long long find_row(const long long* starts, long long n, long long t) {
  long long lo = 0, hi = n;
  while (hi - lo > 1) { long long mid = (lo + hi) / 2; if (starts[mid] <= t) lo = mid; else hi = mid; }
  return lo;
}
// the current pattern: a thread a 32-entry segment found by a binary search of the task
// starts; seg_fill with plain pointers, seg_fill_r with restrict ones (no aliasing assumed)
#define SEGMENT_FILL(NAME, R)                                                                                   \
  __global__ void NAME(const long long* R starts, long long n, long long tasks, const long long* R rp,            \
                       const int* R perm, const int* R cptr, const int* R col, const double* R val, int* R ccol,  \
                       double* R cval) {                                                                          \
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                              \
    if (t >= tasks) return;                                                                                      \
    long long r = find_row(starts, n, t);                                                                        \
    long long b = rp[perm[r]], e = rp[perm[r] + 1];                                                              \
    long long k0 = b + (t - starts[r]) * 32, k1 = k0 + 32 < e ? k0 + 32 : e;                                     \
    long long base = cptr[r] - b;                                                                                \
    for (long long k = k0; k < k1; ++k) { ccol[base + k] = col[k]; cval[base + k] = val[k]; }                    \
  }
SEGMENT_FILL(seg_fill, )
SEGMENT_FILL(seg_fill_r, __restrict__)
// a warp a row, lanes 32 entries apart (coalesced), padding written too
__global__ void warp_fill(long long n, const long long* __restrict__ rp, const int* __restrict__ perm, const int* __restrict__ cptr,
                          const int* __restrict__ col, const double* __restrict__ val, int* __restrict__ ccol, double* __restrict__ cval) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long r = t / 32; int lane = t % 32;
  if (r >= n) return;
  long long b = rp[perm[r]], e = rp[perm[r] + 1];
  long long s0 = cptr[r], s1 = cptr[r + 1];
  for (long long s = s0 + lane; s < s1; s += 32) {
    long long k = b + (s - s0);
    ccol[s] = k < e ? col[k] : -1;
    cval[s] = k < e ? val[k] : 0.0;
  }
}
__global__ void copy_k(long long m, const int* __restrict__ col, const double* __restrict__ val, int* __restrict__ ccol, double* __restrict__ cval) {
  long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (k < m) { ccol[k] = col[k]; cval[k] = val[k]; }
}
int main(int argc, char** argv) {
  const long long n = argc > 1 ? atoll(argv[1]) : 300000; const int half = argc > 2 ? atoi(argv[2]) : 64;
  std::vector<long long> rp(n + 1, 0); std::vector<int> col; std::vector<double> val;
  for (long long i = 0; i < n; ++i) {
    for (long long j = i - half; j <= i + half; ++j) { long long c = (j + n) % n; col.push_back((int)c); val.push_back(1.0 + (i % 7)); }
    rp[i + 1] = col.size();
  }
  const long long nnz = col.size();
  std::vector<int> perm(n), cptr(n + 1, 0); std::vector<long long> starts(n + 1, 0);
  for (long long i = 0; i < n; ++i) { perm[i] = (int)i; long long l = rp[i + 1] - rp[i];
    cptr[i + 1] = cptr[i] + (int)((l + 31) / 32 * 32); starts[i + 1] = starts[i] + (l + 31) / 32; }
  const long long slots = cptr[n], tasks = starts[n];
  long long *d_rp, *d_starts; int *d_perm, *d_cptr, *d_col, *d_ccol; double *d_val, *d_cval;
  CK(cudaMalloc(&d_rp, 8 * (n + 1))); CK(cudaMalloc(&d_starts, 8 * (n + 1))); CK(cudaMalloc(&d_perm, 4 * n));
  CK(cudaMalloc(&d_cptr, 4 * (n + 1))); CK(cudaMalloc(&d_col, 4 * nnz)); CK(cudaMalloc(&d_val, 8 * nnz));
  CK(cudaMalloc(&d_ccol, 4 * slots)); CK(cudaMalloc(&d_cval, 8 * slots));
  cudaMemcpy(d_rp, rp.data(), 8 * (n + 1), cudaMemcpyHostToDevice); cudaMemcpy(d_starts, starts.data(), 8 * (n + 1), cudaMemcpyHostToDevice);
  cudaMemcpy(d_perm, perm.data(), 4 * n, cudaMemcpyHostToDevice); cudaMemcpy(d_cptr, cptr.data(), 4 * (n + 1), cudaMemcpyHostToDevice);
  cudaMemcpy(d_col, col.data(), 4 * nnz, cudaMemcpyHostToDevice); cudaMemcpy(d_val, val.data(), 8 * nnz, cudaMemcpyHostToDevice);
  cudaMemset(d_ccol, 0xff, 4 * slots); cudaMemset(d_cval, 0, 8 * slots);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  printf("n %lld nnz %lld slots %lld tasks %lld\n", n, nnz, slots, tasks);
  for (int rep = 0; rep < 3; ++rep) {
    float ms;
    cudaEventRecord(a); copy_k<<<(nnz + 255) / 256, 256>>>(nnz, d_col, d_val, d_ccol, d_cval); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); printf("copy (same bytes)   %.3f ms\n", ms);
    cudaEventRecord(a); seg_fill<<<(tasks + 255) / 256, 256>>>(d_starts, n, tasks, d_rp, d_perm, d_cptr, d_col, d_val, d_ccol, d_cval); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); printf("segment fill        %.3f ms\n", ms);
    cudaEventRecord(a); seg_fill_r<<<(tasks + 255) / 256, 256>>>(d_starts, n, tasks, d_rp, d_perm, d_cptr, d_col, d_val, d_ccol, d_cval); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); printf("segment fill restrict %.3f ms\n", ms);
    cudaEventRecord(a); warp_fill<<<(n * 32 + 255) / 256, 256>>>(n, d_rp, d_perm, d_cptr, d_col, d_val, d_ccol, d_cval); cudaEventRecord(b); cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b); printf("warp a row fill     %.3f ms\n", ms);
  }
  CK(cudaGetLastError());
  return 0;
}
