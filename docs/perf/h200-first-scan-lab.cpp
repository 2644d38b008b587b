// lab: what the first parallel_scan with a host total costs in a process
#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdio>
using Clock = std::chrono::steady_clock;
static double ms(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int n = 51620;
    Kokkos::View<long*> v("v", n), out("out", n + 1);
    auto t = Clock::now();
    Kokkos::parallel_for("fill", n, KOKKOS_LAMBDA(int i) { v(i) = i % 7; });
    Kokkos::fence();
    std::printf("first parallel_for %.3f ms\n", ms(t));
    for (int rep = 0; rep < 2; ++rep) {
      long s = 0;
      t = Clock::now();
      Kokkos::parallel_reduce("sum", n, KOKKOS_LAMBDA(int i, long& a) { a += v(i); }, s);
      std::printf("parallel_reduce (host result) #%d %.3f ms\n", rep, ms(t));
    }
    {
      using team = Kokkos::TeamPolicy<>::member_type;
      for (int rep = 0; rep < 2; ++rep) {
        t = Clock::now();
        const int chunk = 1024, teams = (n + chunk - 1) / chunk;
        Kokkos::parallel_for("team_scan", Kokkos::TeamPolicy<>(teams, 256), KOKKOS_LAMBDA(const team& m) {
          const int base = m.league_rank() * chunk;
          long carry = 0;
          for (int off = 0; off < chunk; off += 256) {
            const int i = base + off + m.team_rank();
            const long val = i < n ? v(i) : 0;
            long total = 0;
            const long before = m.team_scan(val, &total);
            if (i < n) out(i) = carry + before;
            carry += total;
          }
        });
        Kokkos::fence();
        std::printf("team_scan in a TeamPolicy parallel_for #%d %.3f ms\n", rep, ms(t));
      }
      for (int rep = 0; rep < 2; ++rep) {
        t = Clock::now();
        long s = 0;
        Kokkos::parallel_reduce("team_reduce", Kokkos::TeamPolicy<>(64, 128), KOKKOS_LAMBDA(const team& m, long& a) {
          long part = 0;
          Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, 0, 100), [&](int i, long& p) { p += v(i); }, part);
          if (m.team_rank() == 0) a += part;
        }, s);
        std::printf("TeamPolicy parallel_reduce (host result) #%d %.3f ms\n", rep, ms(t));
      }
    }
    for (int rep = 0; rep < 3; ++rep) {
      t = Clock::now();
      Kokkos::parallel_scan("scan_last", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(int i, long& sum, bool final) {
        if (final) {
          out(i) = sum;
          if (i + 1 == n) out(n) = sum + v(i);
        }
        sum += v(i);
      });
      long total = 0;
      Kokkos::deep_copy(total, Kokkos::subview(out, n));
      std::printf("parallel_scan, total read from its last element #%d %.3f ms (total %ld)\n", rep, ms(t), total);
    }
    for (int rep = 0; rep < 3; ++rep) {
      long total = 0;
      t = Clock::now();
      Kokkos::parallel_scan("scan", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(int i, long& sum, bool final) {
        if (final) out(i) = sum;
        sum += v(i);
      }, total);
      std::printf("parallel_scan (host total) #%d %.3f ms\n", rep, ms(t));
    }
    for (int rep = 0; rep < 2; ++rep) {
      t = Clock::now();
      Kokkos::parallel_scan("scan2", Kokkos::RangePolicy<>(0, n), KOKKOS_LAMBDA(int i, long& sum, bool final) {
        if (final) out(i) = 2 * sum;
        sum += v(i);
      });
      Kokkos::fence();
      std::printf("another parallel_scan (no total) #%d %.3f ms\n", rep, ms(t));
    }
  }
  Kokkos::finalize();
}
