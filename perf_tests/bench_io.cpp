// Host benchmark: Matrix Market reading speed on one core.
// The target: a 10-million-entry file in under 3 s (plain and gzip).
//
//   build/perf_tests/kspmv_bench_io [--entries=N] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kspmv/kspmv.hpp"

namespace {

std::string g_dir;
std::int64_t g_entries = 10000000;

// A 27-point Laplacian with about g_entries entries, written once per run.
const std::string& test_file(bool gz) {
  static std::string plain, packed;
  std::string& p = gz ? packed : plain;
  if (p.empty()) {
    std::int64_t n = 2;
    while ((3 * (n + 1) - 2) * (3 * (n + 1) - 2) * (3 * (n + 1) - 2) <= g_entries) ++n;
    auto a = kspmv::laplacian<double>(kspmv::Stencil::Lap3d27, n);
    // Random values so the parser sees realistic numbers, not "-1".
    kspmv::Rng rng(1);
    for (auto& v : a.values) v = rng.uniform() * 2 - 1;
    p = g_dir + (gz ? "/bench.mtx.gz" : "/bench.mtx");
    kspmv::write_matrix_market(p, a);
  }
  return p;
}

void BM_ReadMatrixMarket(benchmark::State& state) {
  const bool gz = state.range(0) != 0;
  const std::string& path = test_file(gz);
  std::int64_t nnz = 0;
  for (auto _ : state) {
    auto a = kspmv::read_matrix_market<double>(path);
    nnz = a.nnz();
    benchmark::DoNotOptimize(a.values.data());
  }
  state.counters["entries"] = static_cast<double>(nnz);
  state.counters["entries_per_s"] =
      benchmark::Counter(static_cast<double>(nnz), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(gz ? "gzip" : "plain");
}
BENCHMARK(BM_ReadMatrixMarket)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--entries=", 0) == 0) g_entries = std::atoll(a.c_str() + 10);
  }
  char tmpl[] = "/tmp/kspmv_bench_io_XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  g_dir = tmpl;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::remove((g_dir + "/bench.mtx").c_str());
  std::remove((g_dir + "/bench.mtx.gz").c_str());
  std::remove(g_dir.c_str());
  return 0;
}
