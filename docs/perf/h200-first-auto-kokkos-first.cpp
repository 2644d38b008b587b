// First-call costs of Kokkos CUDA dispatch in a fresh process.
// Build (Kokkos 4.6.01 with CUDA, HOPPER90): nvcc_wrapper -O2 -std=c++17 -arch=sm_90 --expt-extended-lambda
//   -I$KOKKOS/include THIS.cpp -L$KOKKOS/lib -lkokkoscore -lcuda -ldl  (docs/PERFORMANCE.md, h200-first-auto-*)
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <chrono>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a) { return std::chrono::duration<double, std::milli>(clk::now() - a).count(); }
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    using E = Kokkos::DefaultExecutionSpace;
    E space;
    const int n = 100000;
    Kokkos::View<long*> a("a", n);
    space.fence();
    for (int rep = 0; rep < 3; ++rep) {
      auto t = clk::now();
      Kokkos::parallel_for("for" + std::to_string(rep), Kokkos::RangePolicy<E>(space, 0, n), KOKKOS_LAMBDA(int i) { a(i) = i; });
      space.fence();
      double f = ms(t);
      t = clk::now();
      long s = 0;
      Kokkos::parallel_reduce("reduce", Kokkos::RangePolicy<E>(space, 0, n), KOKKOS_LAMBDA(int i, long& v) { v += a(i); }, s);
      double r = ms(t);
      t = clk::now();
      long mx = 0;
      Kokkos::parallel_reduce("max", Kokkos::RangePolicy<E>(space, 0, n), KOKKOS_LAMBDA(int i, long& v) { if (a(i) > v) v = a(i); }, Kokkos::Max<long>(mx));
      double r2 = ms(t);
      t = clk::now();
      long tot = 0;
      Kokkos::parallel_scan("scan", Kokkos::RangePolicy<E>(space, 0, n), KOKKOS_LAMBDA(int i, long& v, bool fin) { if (fin) a(i) = v; v += 1; }, tot);
      double sc = ms(t);
      t = clk::now();
      Kokkos::View<long*> b("b", n);
      space.fence();
      double al = ms(t);
      t = clk::now();
      Kokkos::deep_copy(space, b, 0L);
      space.fence();
      double fi = ms(t);
      std::printf("rep %d: for %.3f  reduce %.3f  reduce-max %.3f  scan-total %.3f  alloc %.3f  fill %.3f ms\n", rep, f, r, r2, sc, al, fi);
    }
  }
  Kokkos::finalize();
}
