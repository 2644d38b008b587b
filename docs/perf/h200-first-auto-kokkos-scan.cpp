// First-call costs of Kokkos CUDA scans in a fresh process: argv[1] picks what runs first.
// Build (Kokkos 4.6.01 with CUDA, HOPPER90): nvcc_wrapper -O2 -std=c++17 -arch=sm_90 --expt-extended-lambda
//   -I$KOKKOS/include THIS.cpp -L$KOKKOS/lib -lkokkoscore -lcuda -ldl  (docs/PERFORMANCE.md, h200-first-auto-*)
// Run: THIS total total | plain total | ... (each word a scan, in order; one process a line)
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstring>
#include <chrono>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a) { return std::chrono::duration<double, std::milli>(clk::now() - a).count(); }
using E = Kokkos::DefaultExecutionSpace;
struct ScanTotal {
  Kokkos::View<long*> a;
  KOKKOS_FUNCTION void operator()(int i, long& v, bool fin) const { if (fin) a(i) = v; v += 1; }
};
struct ScanPlain {
  Kokkos::View<long*> a;
  KOKKOS_FUNCTION void operator()(int i, long& v, bool fin) const { if (fin) a(i) = v; v += 2; }
};
struct ScanInt {
  Kokkos::View<int*> a;
  KOKKOS_FUNCTION void operator()(int i, int& v, bool fin) const { if (fin) a(i) = v; v += 1; }
};
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    E space;
    const int n = 100000;
    Kokkos::View<long*> a("a", n);
    Kokkos::View<int*> b("b", n);
    Kokkos::parallel_for("warm", Kokkos::RangePolicy<E>(space, 0, n), KOKKOS_LAMBDA(int i) { a(i) = i; });
    space.fence();
    for (int k = 1; k < argc; ++k) {
      auto t = clk::now();
      const char* w = argv[k];
      if (!strcmp(w, "total")) { long tot = 0; Kokkos::parallel_scan("total", Kokkos::RangePolicy<E>(space, 0, n), ScanTotal{a}, tot); }
      else if (!strcmp(w, "plain")) { Kokkos::parallel_scan("plain", Kokkos::RangePolicy<E>(space, 0, n), ScanPlain{a}); }
      else if (!strcmp(w, "int")) { int tot = 0; Kokkos::parallel_scan("int", Kokkos::RangePolicy<E>(space, 0, n), ScanInt{b}, tot); }
      space.fence();
      std::printf("%s %.3f ms  ", w, ms(t));
    }
    std::printf("\n");
  }
  Kokkos::finalize();
}
