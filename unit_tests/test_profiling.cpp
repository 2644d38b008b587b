// Kokkos Tools see kspmv's work: regions around conversion, refresh, apply
// and the transpose, and a name on every kernel kspmv launches (a kernel
// without one shows in a profile as a mangled functor type).
#include <string>
#include <vector>

#include "kspmv/core/device_partition.hpp"
#include "kspmv/core/profiling.hpp"
#include "kspmv/spmv.hpp"
#include "test_support.hpp"

using namespace kspmv;

namespace {
std::vector<std::string> g_regions, g_kernels;
int g_open = 0;  // regions pushed and not popped
void on_push(const char* name) {
  g_regions.emplace_back(name);
  ++g_open;
}
void on_pop() { --g_open; }
void on_kernel(const char* name, const std::uint32_t, std::uint64_t* id) {
  g_kernels.emplace_back(name);
  *id = 0;
}
void on_kernel_end(const std::uint64_t) {}

// Records regions and kernels while it lives (the callbacks stay set only
// for this test).
struct Recorder {
  Recorder() {
    g_regions.clear();
    g_kernels.clear();
    g_open = 0;
    namespace T = Kokkos::Tools::Experimental;
    T::set_push_region_callback(on_push);
    T::set_pop_region_callback(on_pop);
    T::set_begin_parallel_for_callback(on_kernel);
    T::set_begin_parallel_reduce_callback(on_kernel);
    T::set_begin_parallel_scan_callback(on_kernel);
    T::set_end_parallel_for_callback(on_kernel_end);
    T::set_end_parallel_reduce_callback(on_kernel_end);
    T::set_end_parallel_scan_callback(on_kernel_end);
  }
  ~Recorder() {
    namespace T = Kokkos::Tools::Experimental;
    T::set_push_region_callback(nullptr);
    T::set_pop_region_callback(nullptr);
    T::set_begin_parallel_for_callback(nullptr);
    T::set_begin_parallel_reduce_callback(nullptr);
    T::set_begin_parallel_scan_callback(nullptr);
    T::set_end_parallel_for_callback(nullptr);
    T::set_end_parallel_reduce_callback(nullptr);
    T::set_end_parallel_scan_callback(nullptr);
  }
};

// The regions recorded whose names start with `prefix`, in order.
std::vector<std::string> regions_named(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& r : g_regions)
    if (r.rfind(prefix, 0) == 0) out.push_back(r);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}
}  // namespace

TEST(Profiling, RegionsAndKernelNamesForEveryFormat) {
  using M = Matrix<double>;
  const auto a = generate<double>("uniform:2000:3:9:seed=2");
  int seen = 0;
  for (const auto& d : known_formats()) {
    if (d.format == Format::Auto || d.format == Format::Dia) continue;  // (dia refuses random columns)
    Recorder rec;
    auto m = M::convert(a, d.format, kspmv_test::test_options());
    ++seen;
    M::vector_type x("x", a.ncols), y("y", a.nrows);
    Kokkos::deep_copy(x, 1.0);
    m.apply(1.0, x, 0.0, y);
    m.update_values(detail::upload<double, M::memory_space>(a.values, "values"));
    kspmv::spmv("T", 1.0, m, x, 0.0, y);
    Kokkos::fence();
    const std::string name = d.name;
    EXPECT_TRUE(has(g_regions, "kspmv::convert " + name)) << name;
    EXPECT_TRUE(has(g_regions, "kspmv::apply " + name)) << name;
    EXPECT_TRUE(has(g_regions, "kspmv::update_values")) << name;
    EXPECT_TRUE(has(g_regions, "kspmv::transpose")) << name;
    // Every kernel has a name of its own: kspmv's, Kokkos' or Kokkos
    // Kernels' (an unnamed one is reported by its functor's type name).
    for (const auto& k : g_kernels)
      EXPECT_TRUE(k.rfind("kspmv", 0) == 0 || k.rfind("Kokkos", 0) == 0 || k.rfind("KokkosSparse", 0) == 0 ||
                  k.rfind("KokkosKernels", 0) == 0)
          << name << ": kernel '" << k << "'";
  }
  EXPECT_EQ(seen, static_cast<int>(known_formats().size()) - 2);
}

// A scope's phases: each enter() ends the phase before it, and the scope's
// end ends the last, also when a phase throws.
TEST(Profiling, PhasesStayBalancedWhenAPhaseThrows) {
  Recorder rec;
  try {
    detail::ProfilingPhases phase;
    phase.enter("first");
    EXPECT_EQ(g_open, 1);
    phase.enter("second");
    EXPECT_EQ(g_open, 1);
    throw InvalidArgumentError("in the second phase");
  } catch (const InvalidArgumentError&) {
  }
  EXPECT_EQ(g_open, 0);
  EXPECT_EQ(g_regions, (std::vector<std::string>{"first", "second"}));
}

// EHYB's device build and the cells name their phases, in order.
TEST(Profiling, EhybAndCellsNameTheirPhases) {
  using E = Kokkos::DefaultExecutionSpace;
  const auto a = generate<double>("lap2d:40");
  {
    Recorder rec;
    const auto d = upload_csr<double, E>(a);
    const auto p = cell_partition(E(), d.row_ptr, d.col_idx, a.nrows, 4, a.nrows);
    EXPECT_EQ(g_open, 0);
    EXPECT_EQ(regions_named("kspmv::cells::"),
              (std::vector<std::string>{"kspmv::cells::waves", "kspmv::cells::graph", "kspmv::cells::group",
                                        "kspmv::cells::part_of"}));
    EXPECT_EQ(static_cast<int>(p.part_rows.size()), 4);
  }
  {
    Recorder rec;
    const auto m = Matrix<double>::convert(a, Format::Ehyb, kspmv_test::test_options());
    EXPECT_EQ(g_open, 0);
    EXPECT_EQ(regions_named("kspmv::ehyb::"),
              (std::vector<std::string>{"kspmv::ehyb::partition", "kspmv::ehyb::order", "kspmv::ehyb::slices",
                                        "kspmv::ehyb::long_rows"}));
  }
}
