// Times device work on an execution space's own stream: CUDA events where
// Kokkos runs on CUDA (a Kokkos fence alone would also time the host's
// launch and wait), a steady clock around a fence elsewhere.
#pragma once

#include <Kokkos_Core.hpp>
#include <chrono>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace kspmv_perf {

template <class ExecSpace>
class DeviceTimer {
 public:
  explicit DeviceTimer(const ExecSpace& space) : space_(space) {}
  void start() {
    space_.fence();
    t0_ = std::chrono::steady_clock::now();
  }
  double stop() {
    space_.fence();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  ExecSpace space_;
  std::chrono::steady_clock::time_point t0_;
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
class DeviceTimer<Kokkos::Cuda> {
 public:
  explicit DeviceTimer(const Kokkos::Cuda& space) : stream_(space.cuda_stream()) {
    cudaEventCreate(&a_);
    cudaEventCreate(&b_);
  }
  ~DeviceTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  void start() { cudaEventRecord(a_, stream_); }
  double stop() {
    cudaEventRecord(b_, stream_);
    cudaEventSynchronize(b_);
    float ms = 0;
    cudaEventElapsedTime(&ms, a_, b_);
    return ms * 1e-3;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t a_, b_;
};
#endif

}  // namespace kspmv_perf
