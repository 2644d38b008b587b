// Times device work on an execution space's own stream: CUDA events where
// Kokkos runs on CUDA (a Kokkos fence alone would also time the host's
// launch and wait), a steady clock around a fence elsewhere.
//
// hold() parks the stream behind a kernel that spins for a while, so a
// batch the host queues meanwhile then runs back to back: events around
// it time the device alone, not the host's launch rate. A batch of tiny
// SpMVs timed without it measures whichever is slower, the device or the
// host queuing launches (3.3-4.4 us an SpMV on the H100 node, varying from
// one calibration to the next by 1 us).
#pragma once

#include <Kokkos_Core.hpp>
#include <chrono>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace kspmv {

template <class ExecSpace>
class DeviceTimer {
 public:
  // Host spaces run work as it is launched: there is no queue to park.
  static constexpr bool can_hold = false;
  explicit DeviceTimer(const ExecSpace& space) : space_(space) {}
  void hold(double /*seconds*/) {}
  void start() {
    space_.fence();
    t0_ = std::chrono::steady_clock::now();
  }
  double stop() {
    space_.fence();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  // Seconds the last hold() lasted on the device (0: none).
  double held() const { return 0; }

 private:
  ExecSpace space_;
  std::chrono::steady_clock::time_point t0_;
};

#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
namespace detail {
// One thread spinning on the global nanosecond timer. A template, so the
// headers that include it may be compiled into several objects.
template <int = 0>
__global__ void hold_stream_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(500);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
}  // namespace detail

template <>
class DeviceTimer<Kokkos::Cuda> {
 public:
  static constexpr bool can_hold = true;
  explicit DeviceTimer(const Kokkos::Cuda& space) : stream_(space.cuda_stream()) {
    cudaEventCreate(&a_);
    cudaEventCreate(&b_);
    cudaEventCreate(&h_);
  }
  ~DeviceTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
    cudaEventDestroy(h_);
  }
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  // Queue a spinning kernel of `seconds` on the stream; the next start()
  // then stamps its end. held() tells afterwards how long it spun.
  void hold(double seconds) {
    cudaEventRecord(h_, stream_);
    detail::hold_stream_kernel<<<1, 1, 0, stream_>>>(static_cast<unsigned long long>(seconds * 1e9));
    holding_ = true;
  }
  void start() { cudaEventRecord(a_, stream_); }
  double stop() {
    cudaEventRecord(b_, stream_);
    cudaEventSynchronize(b_);
    float ms = 0;
    cudaEventElapsedTime(&ms, a_, b_);
    held_ = 0;
    if (holding_) {
      float hm = 0;
      cudaEventElapsedTime(&hm, h_, a_);
      held_ = hm * 1e-3;
      holding_ = false;
    }
    return ms * 1e-3;
  }
  double held() const { return held_; }

 private:
  cudaStream_t stream_;
  cudaEvent_t a_, b_, h_;
  bool holding_ = false;
  double held_ = 0;
};
#endif

}  // namespace kspmv
