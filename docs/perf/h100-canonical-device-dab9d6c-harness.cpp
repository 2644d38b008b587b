// Times canonical_csr of a device CSR whose rows are shuffled (dup+: a
// quarter of the entries gain a duplicate; one+: one row out of order)
// against the former host round trip. old.inc is canonical_csr of
// `git show 5ab0c8f:core/include/kspmv/core/device_csr.hpp`, renamed
// old_canonical_csr. Built with nvcc_wrapper -std=c++17 -O3 -arch=sm_90
// -extended-lambda against kspmv's core and inputs libraries and Kokkos
// 4.6.01 (CUDA); run: canon SPEC... (output: h100-canonical-device-dab9d6c-2026-11-24.txt).
#include <cstdio>
#include <random>
#include <algorithm>
#include <Kokkos_Core.hpp>
#include "kspmv/inputs/generators.hpp"
#include "kspmv/core/device_csr.hpp"
namespace kspmv {
template <class Scalar, class ExecSpace>
#include "old.inc"
}
using namespace kspmv;
using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
template <class T, class U> Kokkos::View<T*, Mem> dev(const std::vector<U>& v) { return detail::upload<T, Mem>(v, "v"); }
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    Exec space;
    for (int ai = 1; ai < argc; ++ai) {
      std::string spec = argv[ai];
      bool dup = spec.rfind("dup+", 0) == 0;
      bool one = spec.rfind("one+", 0) == 0;
      if (dup || one) spec = spec.substr(4);
      const auto a = generate<double>(spec);
      std::mt19937 rng(7);
      std::vector<std::int64_t> rp{0};
      std::vector<int> col;
      std::vector<double> val;
      std::vector<std::pair<int, double>> row;
      for (int i = 0; i < a.nrows; ++i) {
        row.clear();
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
          if (dup && rng() % 4 == 0) row.emplace_back(a.col_idx[k], 0.5);
          row.emplace_back(a.col_idx[k], a.values[k]);
        }
        if (!one || i == a.nrows / 2) std::shuffle(row.begin(), row.end(), rng);
        if (one && i == a.nrows / 2 && row.size() > 1) std::swap(row[0], row[1]);
        for (auto& e : row) { col.push_back(e.first); val.push_back(e.second); }
        rp.push_back(col.size());
      }
      const auto d = device_csr_from_views<double, Exec>(a.nrows, a.ncols, dev<std::int64_t>(rp), dev<int>(col), dev<double>(val));
      space.fence();
      // copy bandwidth: values + cols, read and write
      Kokkos::View<double*, Mem> vc("vc", val.size());
      Kokkos::deep_copy(vc, d.values); Kokkos::fence();
      Kokkos::Timer tc;
      for (int r = 0; r < 10; ++r) Kokkos::deep_copy(vc, d.values);
      Kokkos::fence();
      const double copy_gbs = 2.0 * 8 * val.size() * 10 / tc.seconds() / 1e9;
      // one CSR SpMV's bytes at copy bandwidth (12 a nonzero + 8 a row of row_ptr + x + y)
      const double spmv_ms = (12.0 * a.nnz() + 8.0 * a.nrows + 16.0 * a.nrows) / (copy_gbs * 1e9) * 1e3;
      double best = 1e9, first = 0;
      std::int64_t out_nnz = 0;
      for (int rep = 0; rep < 6; ++rep) {
        Kokkos::Timer t;
        auto c = canonical_csr(space, d, "bench");
        space.fence();
        const double ms = t.seconds() * 1e3;
        out_nnz = c.csr.nnz();
        if (rep == 0) first = ms; else best = std::min(best, ms);
      }
      Kokkos::Timer to;
      auto o = old_canonical_csr(space, d, "bench");
      space.fence();
      const double old_ms = to.seconds() * 1e3;
      // same result?
      auto c = canonical_csr(space, d, "bench");
      auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.csr.values);
      auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.csr.values);
      auto e1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.merge_entries);
      auto e2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), o.merge_entries);
      bool same = h1.extent(0) == h2.extent(0) && e1.extent(0) == e2.extent(0);
      for (size_t i = 0; same && i < h1.extent(0); ++i) same = h1(i) == h2(i);
      for (size_t i = 0; same && i < e1.extent(0); ++i) same = e1(i) == e2(i);
      std::printf("%-40s rows %9d input nnz %10zu canonical %10lld  device first %8.2f ms best of 5 %8.2f ms (%6.0f SpMV-bytes at copy bw)  host round trip %9.1f ms  same bits %s  copy %.0f GB/s\n",
                  argv[ai], a.nrows, val.size(), (long long)out_nnz, first, best, best / spmv_ms, old_ms, same ? "yes" : "NO", copy_gbs);
      std::fflush(stdout);
    }
  }
  Kokkos::finalize();
}
