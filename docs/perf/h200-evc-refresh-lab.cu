// evc-hyb's CUDA refresh (evc_hyb_cuda.hpp) against a device copy of the
// same bytes, and the sub-ELL kernel's launch shapes side by side: warps a
// block, loads in flight, tile columns (fewer columns leave room for more
// warps an SM). Each spec is generated (kspmv::generate: fem:... reads
// $KSPMV_MESH_DIR), converted to evc-hyb on the device, then refreshed
// with other values; every variant's value arrays are compared bit for bit
// with the library's. Times: CUDA events around 20 launches after 3, the
// median of 5 such rounds.
//
// Build (CUDA tree of kspmv in $B, sources in $S):
//   nvcc_wrapper -arch=sm_90 -O3 -std=c++17 -extended-lambda -I$S/formats/include -I$S/formats/runtime/include
//     -I$S/backends/cuda/include -I$S/core/include -I$B/generated -I$B/generated-formats -I$S/core/model/include
//     -I$S/core/inputs/include -isystem $KOKKOS/include docs/perf/h200-evc-refresh-lab.cu -o evc-lab
//     $B/core/libkspmv_inputs.a $B/core/libkspmv_core.a $KOKKOS/lib/libkokkoscore.a -ldl -lcuda -lz -lmetis
// Run: evc-lab SPEC...
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kspmv/formats/evc_hyb.hpp"
#include "kspmv/inputs/generators.hpp"

using Space = Kokkos::Cuda;
using Scalar = double;

namespace {

template <class F>
double median_us(F&& launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch();
  std::vector<double> t;
  for (int round = 0; round < 5; ++round) {
    cudaEventRecord(a);
    for (int i = 0; i < 20; ++i) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1e3 / 20);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<Scalar> host_values(const Kokkos::View<Scalar*, Space::memory_space>& v) {
  std::vector<Scalar> h(v.extent(0));
  if (!h.empty()) cudaMemcpy(h.data(), v.data(), h.size() * sizeof(Scalar), cudaMemcpyDeviceToHost);
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    for (int i = 1; i < argc; ++i) {
      auto h = kspmv::generate<Scalar>(argv[i]);
      const auto d = kspmv::upload_csr<Scalar, Space>(h);
      auto f = kspmv::to_evc_hyb<Scalar, Space>(d);
      // Other values, none zero, in the CSR's order.
      for (std::size_t k = 0; k < h.values.size(); ++k) h.values[k] = 1.0 + 0.001 * static_cast<double>(k % 977);
      const auto nd = kspmv::upload_csr<Scalar, Space>(h);
      const auto a = kspmv::detail::refresh_arguments(f, nd.row_ptr.data(), nd.values.data());
      const int widest = a.widest;
      const long long nnz = h.nnz(), rows = h.nrows;
      const double bytes = 16.0 * nnz + 12.0 * rows;
      // A device copy of the bytes a refresh moves (nnz values read and written).
      Kokkos::View<Scalar*, Space::memory_space> src("src", nnz + 1), dst("dst", nnz + 1);
      const double copy_us = median_us([&] {
        cudaMemcpyAsync(dst.data(), src.data(), nnz * sizeof(Scalar), cudaMemcpyDeviceToDevice, 0);
      });
      const double lib_us = median_us([&] { kspmv::cuda_tuned::evc_hyb_refresh<Scalar>(0, a); });
      cudaDeviceSynchronize();
      const auto ell_ref = host_values(f.ell_val), csr_ref = host_values(f.csr_val);
      std::printf("%s: rows %lld nnz %lld sub-ELL rows %d widest %d vCSR rows %d slots %lld\n", argv[i], rows, nnz,
                  a.isplit, widest, a.csr_rows, a.csr_slots);
      std::printf("  copy of the bytes %.1f us (%.0f GB/s); library %.1f us (%.2f of copy)\n", copy_us,
                  16.0 * nnz / copy_us * 1e-3, lib_us, bytes / lib_us * 1e-3 / (16.0 * nnz / copy_us * 1e-3));
      // The sub-ELL kernel alone in several shapes.
      struct Shape {
        const char* name;
        int columns;
        void (*launch)(const kspmv::cuda_tuned::EvcHybRefresh<Scalar>&, int);
      };
      using kspmv::cuda_tuned::blocks_for;
      using kspmv::cuda_tuned::evc_hyb_refresh_ell_kernel;
#define SHAPE(W, U, C)                                                                                    \
  Shape {                                                                                                 \
    "warps " #W " loads " #U " columns " #C, C, [](const kspmv::cuda_tuned::EvcHybRefresh<Scalar>& r, int c) { \
      evc_hyb_refresh_ell_kernel<Scalar, W, U><<<blocks_for(r.slices, W), W * 32, W * c * 33 * 8>>>(r, c); \
    }                                                                                                     \
  }
      const Shape shapes[] = {SHAPE(4, 8, 32), SHAPE(4, 4, 32), SHAPE(4, 8, 16), SHAPE(4, 4, 16),
                              SHAPE(8, 4, 16), SHAPE(4, 4, 8),  SHAPE(8, 8, 8)};
#undef SHAPE
      for (const Shape& s : shapes) {
        if (a.slices == 0 || widest == 0) break;
        const int c = std::min(s.columns, widest);
        Kokkos::deep_copy(f.ell_val, 0.0);
        s.launch(a, c);
        cudaDeviceSynchronize();
        const bool same = host_values(f.ell_val) == ell_ref;
        const double us = median_us([&] { s.launch(a, c); });
        // 16 bytes a slot (padding is written, not read) and 12 a row.
        const double ell_bytes = 16.0 * f.ell_val.extent(0) + 12.0 * a.isplit;
        std::printf("  sub-ELL %-28s %8.1f us %6.0f GB/s %s\n", s.name, us, ell_bytes / us * 1e-3,
                    same ? "same bits" : "DIFFERENT");
      }
      std::printf("  vector CSR the same bits: %s\n", host_values(f.csr_val) == csr_ref ? "yes" : "NO");
    }
  }
  Kokkos::finalize();
  return 0;
}
