// The harness of host-partition-budget-b630b98-2026-11-24.txt. Built with
// g++ -O2 -std=c++17 against kspmv's core and inputs libraries and Debian's Kokkos 3.4 (Serial) and METIS;
// run: KSPMV_MESH_DIR=... host-partition-budget SPEC...
// partition_rows_into(a, 132, ...) seconds and in-part share: BFS, METIS in
// this process (budget 0), and Auto under the default budget (METIS in a
// child, BFS grown meanwhile).
#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include "kspmv/core/partition.hpp"
#include "kspmv/inputs/generators.hpp"
using namespace kspmv;
int main(int argc, char** argv) {
  Kokkos::ScopeGuard g(argc, argv);
  const int nparts = 132;
  const double budget = ConvertOptions{}.partition_budget_seconds;
  for (int i = 1; i < argc; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto a = generate<double>(argv[i]);
    double gen = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s rows %d nnz %lld gen %.2fs\n", argv[i], a.nrows, (long long)a.nnz(), gen);
    const bool slow_metis = std::strncmp(argv[i], "uniform", 7) == 0;
    struct Run { const char* label; Partitioner how; double budget; };
    for (Run run : {Run{"bfs", Partitioner::Bfs, 0.0}, Run{"metis in-process", Partitioner::Metis, 0.0},
                    Run{"auto (default budget)", Partitioner::Auto, budget}}) {
      if (slow_metis && run.how == Partitioner::Metis) {
        std::printf("  %-22s (skipped: 402 s measured before)\n", run.label);
        continue;
      }
      auto p = partition_rows_into(a, nparts, run.how, run.budget);
      std::vector<int> part_of(a.nrows);
      for (int q = 0; q + 1 < (int)p.part_start.size(); ++q)
        for (int r = p.part_start[q]; r < p.part_start[q + 1]; ++r) part_of[p.new_to_old[r]] = q;
      long long in = 0;
      for (int i2 = 0; i2 < a.nrows; ++i2)
        for (auto k = a.row_ptr[i2]; k < a.row_ptr[i2 + 1]; ++k) in += part_of[a.col_idx[k]] == part_of[i2];
      std::printf("  %-22s -> %-6s %8.3f s  in-part %.1f%%  %s\n", run.label, p.method.c_str(), p.seconds,
                  100.0 * in / a.nnz(), p.note.c_str());
      std::fflush(stdout);
    }
  }
}
