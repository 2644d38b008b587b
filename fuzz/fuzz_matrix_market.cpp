// libFuzzer target: the Matrix Market reader, then every format's
// conversion and SpMV on what it parsed, checked against the reference.
//
// Any input may be rejected with a typed kspmv::Error; anything else (a
// crash, a sanitizer report, an untyped exception, a wrong y) is a bug and
// aborts. Sizes are capped (reader limits) so the fuzzer explores
// structure, not allocation sizes.
//
//   fuzz_matrix_market fuzz/corpus/matrix_market -max_total_time=60
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kspmv/kspmv.hpp"

namespace {

template <class Scalar>
void every_format(const kspmv::HostCsr<Scalar>& a) {
  const auto x = [&] {
    std::vector<Scalar> v(static_cast<std::size_t>(a.ncols));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<Scalar>(1.0 + 0.25 * double(i % 7));
    return v;
  }();
  const auto oracle = kspmv::make_oracle(a, Scalar(1), x, Scalar(0), std::vector<Scalar>(static_cast<std::size_t>(a.nrows)));
  using M = kspmv::Matrix<Scalar>;
  typename M::vector_type dx("x", x.size()), dy("y", static_cast<std::size_t>(a.nrows));
  {
    auto hx = Kokkos::create_mirror_view(dx);
    for (std::size_t i = 0; i < x.size(); ++i) hx(i) = x[i];
    Kokkos::deep_copy(dx, hx);
  }
  for (const auto& d : kspmv::known_formats()) {
    for (kspmv::KernelPath k : {kspmv::KernelPath::Auto, kspmv::KernelPath::Portable}) {
      kspmv::ConvertOptions o;
      o.kernel = k;
      o.ehyb_shared_bytes = 1024;  // small windows: several parts and extra rows
      M m;
      try {
        m = M::convert(a, d.format, o);
      } catch (const kspmv::FormatCannotHoldError&) {
        continue;  // a documented refusal
      }
      Kokkos::deep_copy(dy, std::numeric_limits<Scalar>::quiet_NaN());
      m.apply(Scalar(1), dx, Scalar(0), dy);
      auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
      std::vector<Scalar> y(hy.data(), hy.data() + hy.extent(0));
      const auto c = kspmv::check_spmv(oracle, y);
      if (!c.ok) {
        std::fprintf(stderr, "WRONG y from %s (%s): %s\n", d.name,
                     k == kspmv::KernelPath::Auto ? "auto" : "portable", c.message.c_str());
        std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Kokkos::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kspmv::MatrixMarketReadOptions o;
  o.max_dimension = 4096;
  o.max_entries = 20000;
  try {
    const auto a = kspmv::parse_matrix_market<double>(text, "fuzz", o);
    every_format(a);
    const auto f = kspmv::parse_matrix_market<float>(text, "fuzz", o);
    if (f.nnz() <= 2000) every_format(f);
  } catch (const kspmv::Error&) {
    // rejected with a typed error: fine
  }
  return 0;
}
