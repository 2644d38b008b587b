// Hand-tuned CUDA PKT kernel (Bell & Garland §4.6): a block per packet.
// Fused where the portable path takes separate passes: the block gathers
// its x window straight from the caller's x (through new_to_old), adds the
// remainder's product `t` computed before it, and writes y in the caller's
// order, so one SpMV is the remainder COO plus this one launch.
#pragma once

#include <cstdint>

#include "kspmv/backends/cuda/common.hpp"
#include "kspmv/core/device_util.hpp"

namespace kspmv {
namespace cuda_tuned {

template <class Scalar>
__global__ void __launch_bounds__(detail::kPktManyThreads)
    pkt_kernel(const int* __restrict__ start, const std::int64_t* __restrict__ offset,
               const std::uint32_t* __restrict__ index, const Scalar* __restrict__ value,
               const int* __restrict__ new_to_old, const Scalar* __restrict__ t, Scalar alpha,
               const Scalar* __restrict__ x, Scalar beta, Scalar* __restrict__ y) {
  extern __shared__ unsigned char pkt_shared[];
  const int q = blockIdx.x, T = blockDim.x, tid = threadIdx.x;
  const int s = ldg(start + q), n = ldg(start + q + 1) - s;
  Scalar* xl = reinterpret_cast<Scalar*>(pkt_shared);
  Scalar* yl = xl + n;
  for (int i = tid; i < n; i += T) {
    xl[i] = ldg(x + (new_to_old ? ld_stream(new_to_old + s + i) : s + i));
    yl[i] = 0;
  }
  __syncthreads();
  const std::int64_t base = ldg(offset + q);
  const int W = static_cast<int>((ldg(offset + q + 1) - base) / T);
  const std::uint32_t* ip = index + base + tid;
  const Scalar* vp = value + base + tid;
  // Each thread owns whole rows of the packet: no two threads add to the
  // same yl entry. Four slots' loads in flight, values beside their packed
  // indices (not after them); padding (all ones) last.
  for (int k = 0; k < W; k += 4) {
    std::uint32_t c[4];
    Scalar v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) c[u] = k + u < W ? ld_stream(ip + static_cast<long>(k + u) * T) : 0xFFFFFFFFu;
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = k + u < W ? ld_stream(vp + static_cast<long>(k + u) * T) : Scalar(0);
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (c[u] != 0xFFFFFFFFu) yl[c[u] >> 16] += v[u] * xl[c[u] & 0xFFFFu];
  }
  __syncthreads();
  for (int i = tid; i < n; i += T) {
    const int r = s + i;
    store_y(y, new_to_old ? ld_stream(new_to_old + r) : r, alpha, yl[i] + (t ? ld_stream(t + r) : Scalar(0)), beta);
  }
}

// packet_rows: the most rows of any packet (sizes the shared memory).
template <class Scalar>
void pkt_spmv(cudaStream_t stream, int packets, int threads, int packet_rows, const int* start,
              const std::int64_t* offset, const std::uint32_t* index, const Scalar* value, const int* new_to_old,
              const Scalar* t, Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) {
  const std::size_t shared = 2 * sizeof(Scalar) * static_cast<std::size_t>(packet_rows);
  pkt_kernel<Scalar><<<packets, threads, shared, stream>>>(start, offset, index, value, new_to_old, t, alpha, x, beta,
                                                           y);
  check_launch("kspmv::cuda_tuned::pkt_kernel");
}

}  // namespace cuda_tuned
}  // namespace kspmv
