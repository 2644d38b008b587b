// auto's set-up cold and warm: each spec generated, uploaded, converted to
// auto three times (the note of each), then pattern_stats alone 3 times and
// a few formats converted twice, on the device.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include "kspmv/kspmv.hpp"
#include "kspmv/inputs/generators.hpp"
#include "kspmv/model/device_pattern_stats.hpp"
using M = kspmv::Matrix<double, Kokkos::DefaultExecutionSpace>;
int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    for (int i = 1; i < argc; ++i) {
      const auto h = kspmv::generate<double>(argv[i]);
      auto d = kspmv::upload_csr<double, Kokkos::DefaultExecutionSpace>(h);
      Kokkos::fence();
      std::printf("=== %s rows %lld nnz %lld\n", argv[i], (long long)h.nrows, (long long)h.nnz());
      for (int r = 0; r < 3; ++r) {
        Kokkos::Timer t;
        M m = M::convert(d, kspmv::Format::Auto);
        Kokkos::fence();
        const double s = t.seconds();
        std::string note;
        for (auto& p : m.properties()) if (p.first == "picked_by") note = p.second;
        std::printf("auto %d: %s %.2f ms (wall %.2f): %s\n", r, m.name(), m.conversion_seconds() * 1e3, s * 1e3, note.c_str());
      }
      for (int r = 0; r < 3; ++r) {
        Kokkos::Timer t;
        const auto st = kspmv::pattern_stats(Kokkos::DefaultExecutionSpace(), d, 8, kspmv::default_model(), std::int64_t(1) << 18);
        Kokkos::fence();
        std::printf("pattern_stats %d: %.2f ms\n", r, t.seconds() * 1e3);
      }
      for (const char* f : {"csr-vector", "coo", "dia", "ell", "hyb", "pellr", "jad", "csr-adaptive", "csr-merge"}) {
        for (int r = 0; r < 2; ++r) {
          try {
            Kokkos::Timer t;
            M m = M::convert(d, kspmv::parse_format(f));
            Kokkos::fence();
            std::printf("%s %d: %.2f ms (wall %.2f)\n", f, r, m.conversion_seconds() * 1e3, t.seconds() * 1e3);
          } catch (const std::exception& e) {
            std::printf("%s: %s\n", f, e.what());
            break;
          }
        }
      }
      std::fflush(stdout);
    }
  }
  Kokkos::finalize();
}
