// Shared pieces of the hand-tuned CUDA kernels (compiled only when
// KSPMV_ENABLE_CUDA, by nvcc through Kokkos' nvcc_wrapper).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {
namespace cuda {

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

inline unsigned blocks_for(long n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

}  // namespace cuda
}  // namespace kspmv
