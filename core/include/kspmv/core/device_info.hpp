// The figures of the device a format is built for, read at run time (never
// hard-coded for one GPU): processors (SMs on CUDA, the concurrency of a
// host space), the scratch (shared) memory one team may use, warp size,
// clocks and bus width for the performance model.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "kspmv/config.hpp"
#include "kspmv/core/device_util.hpp"
#if KSPMV_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

namespace kspmv {

struct DeviceFigures {
  std::string name = "host";
  int processors = 1;                  // SMs, or host threads
  std::int64_t team_scratch_max = 0;   // bytes one team may use (portable kernels)
  std::int64_t shared_optin = 0;       // bytes one CUDA block may opt in to (tuned kernels)
  int warp = 1;
  int max_threads_per_processor = 1;
  double clock_ghz = 0;                // core clock
  double memory_clock_ghz = 0;
  int bus_width_bits = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
};

// Read once per CUDA device and kept: conversions (csr-merge's panels,
// evc-hyb, ehyb, pkt) and auto ask for them every time, and
// cudaGetDeviceProperties reads every property of the device.
template <class ExecSpace>
DeviceFigures device_figures() {
  DeviceFigures f;
  f.team_scratch_max = Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0);
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    int dev = 0;
    cudaGetDevice(&dev);
    static std::mutex lock;
    static std::map<int, DeviceFigures> known;
    std::lock_guard<std::mutex> hold(lock);
    const auto it = known.find(dev);
    if (it != known.end()) return it->second;
    cudaDeviceProp p;
    const bool read = cudaGetDeviceProperties(&p, dev) == cudaSuccess;
    if (read) {
      f.name = p.name;
      f.processors = p.multiProcessorCount;
      f.shared_optin = static_cast<std::int64_t>(p.sharedMemPerBlockOptin);
      f.warp = p.warpSize;
      f.max_threads_per_processor = p.maxThreadsPerMultiProcessor;
      f.bus_width_bits = p.memoryBusWidth;
      f.l2_bytes = p.l2CacheSize;
      f.memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
      int khz = 0;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess) f.clock_ghz = khz * 1e-6;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess) f.memory_clock_ghz = khz * 1e-6;
    }
    cudaGetLastError();  // a missing attribute is not an error for the caller
    if (read) known.emplace(dev, f);  // a failed read is tried again next time
    return f;
  }
#endif
  f.processors = static_cast<int>(ExecSpace().concurrency());
  if (f.processors < 1) f.processors = 1;
  f.shared_optin = f.team_scratch_max;
  return f;
}

}  // namespace kspmv
