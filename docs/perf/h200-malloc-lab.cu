// cudaMalloc's host time by size, fresh and after frees, idle and behind a kernel.
// Build: nvcc -O2 -arch=sm_90 -o malloc_lab h200-malloc-lab.cu; its output on an H200: h200-malloc-lab-2026-11-30.txt
#include <cstdio>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }
__global__ void spin(long long cycles) { long long t0 = clock64(); while (clock64() - t0 < cycles) {} }
__global__ void touch(char* p, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; for (; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = 1; }
int main() {
  cudaFree(0);
  size_t sizes[] = {1 << 20, 5 << 20, 32 << 20, 200 << 20, 1000 << 20};
  for (int round = 0; round < 3; ++round) {
    std::vector<void*> ps;
    for (size_t s : sizes) {
      for (int r = 0; r < 3; ++r) {
        void* p; auto t = clk::now(); cudaMalloc(&p, s); double a = ms(t);
        t = clk::now(); touch<<<1024, 256>>>((char*)p, s); cudaDeviceSynchronize(); double b = ms(t);
        printf("round %d malloc %6zu MB: %.3f ms (first touch %.3f ms)\n", round, s >> 20, a, b);
        ps.push_back(p);
      }
    }
    for (void* p : ps) { auto t = clk::now(); cudaFree(p); double a = ms(t); if (a > 0.05) printf("  free %.3f ms\n", a); }
  }
  // behind a 2 ms kernel
  for (size_t s : sizes) {
    spin<<<1, 1>>>(2000000LL * 2);  // ~2 ms at ~2 GHz
    void* p; auto t = clk::now(); cudaMalloc(&p, s); double a = ms(t);
    t = clk::now(); cudaDeviceSynchronize(); double b = ms(t);
    printf("behind a kernel: malloc %6zu MB %.3f ms, then sync %.3f ms\n", s >> 20, a, b);
    cudaFree(p);
  }
  // malloc + header copy + stream sync (a Kokkos View), behind a kernel
  cudaStream_t st; cudaStreamCreate(&st);
  for (size_t s : sizes) {
    spin<<<1, 1, 0, st>>>(2000000LL * 2);
    char hdr[128] = {};
    void* p; auto t = clk::now(); cudaMalloc(&p, s); cudaMemcpyAsync(p, hdr, 128, cudaMemcpyHostToDevice, st); cudaStreamSynchronize(st); double a = ms(t);
    printf("view-like behind a kernel: %6zu MB %.3f ms\n", s >> 20, a);
    cudaFree(p);
  }
  return 0;
}
