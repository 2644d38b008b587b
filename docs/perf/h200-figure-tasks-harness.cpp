// The host's part of auto's pattern figures on a device CSR (the picks, the
// sampled rows handed over, the per-warp figures), timed alone: a PatternSource
// over a HostCsr, pattern_stats(src, 8, budget) 15 times, the best and first
// printed with the figures. Built against the host build's libraries:
//   g++ -O2 -std=c++17 -Icore/include -Ibuild/generated -Icore/model/include \
//     -Icore/inputs/include -isystem /usr/include/trilinos THIS.cpp -o ps3 \
//     build/core/libkspmv_{model,inputs,core}.a -ltrilinos_kokkoscore -ldl -lz -lpthread -lmetis
// Run: ps3 CALIBRATION BUDGET MATRIX... (docs/PERFORMANCE.md, h200-figure-tasks-*).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include "kspmv/model/model.hpp"
#include "kspmv/inputs/matrix_market.hpp"
#include "kspmv/inputs/generators.hpp"
using namespace kspmv;
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    ModelHardware hw = read_calibration(argv[1]);
    std::int64_t budget = atoll(argv[2]);
    for (int i = 3; i < argc; ++i) {
      std::string p = argv[i];
      HostCsr<double> a = p.find(".mtx") != std::string::npos ? read_matrix_market<double>(p) : generate<double>(p);
      const PatternStats exact = pattern_stats(a, 8, hw, budget);
      PatternSource src;
      src.nrows = a.nrows; src.ncols = a.ncols;
      const std::vector<std::int64_t> len = row_lengths(a);
      src.length_counts.assign(static_cast<std::size_t>(*std::max_element(len.begin(), len.end())) + 1, 0);
      for (const auto l : len) ++src.length_counts[static_cast<std::size_t>(l)];
      src.caller_warps = warp_iterations(len);
      src.warp_entries.assign((len.size() + 31) / 32, 0.0);
      for (std::size_t q = 0; q < len.size(); ++q) src.warp_entries[q / 32] += double(len[q]);
      std::vector<ordinal_t> asc(len.size());
      std::iota(asc.begin(), asc.end(), 0);
      std::stable_sort(asc.begin(), asc.end(), [&](ordinal_t x, ordinal_t y) { return len[x] < len[y]; });
      std::int64_t fetched = 0; std::size_t rowsf = 0;
      src.fetch_rows = [&](const std::vector<std::int64_t>& positions, std::size_t first_ascending, SampledRows& out) {
        out = SampledRows{};
        out.local.push_back(0);
        rowsf = positions.size(); fetched = 0;
        for (std::size_t q = 0; q < positions.size(); ++q) {
          const ordinal_t r = q < first_ascending ? static_cast<ordinal_t>(positions[q]) : asc[static_cast<std::size_t>(positions[q])];
          out.ids.push_back(r);
          out.begins.push_back(a.row_ptr[r]);
          out.cols.insert(out.cols.end(), a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1]);
          out.local.push_back(static_cast<std::int64_t>(out.cols.size()));
          fetched += a.row_ptr[r + 1] - a.row_ptr[r];
        }
      };
      double best = 1e9, first = 0;
      PatternStats s;
      for (int r = 0; r < 15; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        s = pattern_stats(src, 8, budget);
        double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r == 0) first = dt;
        best = std::min(best, dt);
      }
      std::printf("%-28s nnz %9lld rows-read %8zu entries-read %9lld  first %7.3f best %7.3f ms  alpha %.6f %.6f al %.6f\n",
                  p.substr(p.rfind('/') + 1).c_str(), (long long)a.nnz(), rowsf, (long long)fetched, first, best, s.alpha,
                  s.alpha_ascending, s.adaptive_lines);
    }
  }
  Kokkos::finalize();
}
