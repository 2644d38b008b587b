// Format::Auto: what a solve loop pays decides (set-up + refresh +
// expected_applies SpMVs); on a device the shortlist is converted and
// timed, on a host space the model's first choice stands; bad options are
// typed errors.
#include <fstream>

#include "test_support.hpp"

using namespace kspmv;

// A format whose SpMV the model puts first loses to the next one once its
// set-up costs more than expected_applies SpMVs save, and wins again when
// the loop is long enough.
TEST(Auto, ExpectedAppliesTradesSetUpAgainstSpmvTime) {
  const auto a = generate<double>("powerlaw:20000:12");
  ModelHardware hw;
  const auto stats = pattern_stats(a, 8, hw);
  const auto by_spmv = estimate_all(stats, 8, hw);
  Format fastest = Format::Csr;
  for (const auto& e : by_spmv)
    if (e.feasible && e.format != Format::KkCrs) {
      fastest = e.format;
      break;
    }
  // Without a costly set-up, a long loop ranks by SpMV time.
  EXPECT_EQ(rank_for_loop(stats, 8, hw, 3.0, 1e12).front().format, fastest);
  hw.setup_us[format_name(fastest)] = 1e9;  // 1000 s of set-up
  EXPECT_NE(rank_for_loop(stats, 8, hw, 3.0, 20).front().format, fastest);
  EXPECT_NE(rank_for_loop(stats, 8, hw, 3.0, 1000).front().format, fastest);
  EXPECT_EQ(rank_for_loop(stats, 8, hw, 3.0, 1e15).front().format, fastest);
  // kk-crs is the baseline: never a candidate.
  for (const auto& e : rank_for_loop(stats, 8, hw, 3.0, 1000)) EXPECT_NE(e.format, Format::KkCrs);
}

// Set-up and refresh estimates read from a calibration file override the
// defaults.
TEST(Auto, SetUpFiguresComeFromTheCalibrationFile) {
  const std::string path = ::testing::TempDir() + "/setup.cal";
  {
    std::ofstream out(path);
    out << "setup_us.pellr = 100\nsetup_ns_per_nnz.pellr = 2\nrefresh_spmvs.pellr = 7\n";
  }
  const auto hw = read_calibration(path);
  const auto a = generate<double>("lap2d:100");
  const auto e = estimate(Format::Pellr, pattern_stats(a, 8, hw), 8, hw);
  EXPECT_NEAR(e.setup_seconds, 100e-6 + 2e-9 * double(a.nnz()), 1e-12);
  EXPECT_NEAR(e.refresh_seconds, 7 * e.seconds, 1e-15);
  // Defaults where the file is silent: the formats built on the host cost
  // far more a nonzero than those built on the device.
  EXPECT_GT(setup_defaults(Format::Ehyb).ns_per_nnz, 100 * setup_defaults(Format::Csr).ns_per_nnz);
  const auto d = estimate(Format::Ehyb, pattern_stats(a, 8, hw), 8, hw);
  EXPECT_NEAR(d.setup_seconds,
              setup_defaults(Format::Ehyb).fixed_us * 1e-6 + setup_defaults(Format::Ehyb).ns_per_nnz * 1e-9 * a.nnz(),
              1e-12);
}

// Auto's pick computes the right product and says how it chose: measured
// on a device, the model on a host space.
TEST(Auto, PickIsCorrectAndSaysHowItChose) {
  using M = Matrix<double>;
  for (const char* spec : {"lap3d:12", "powerlaw:4000:10", "rmat:11:8"}) {
    const auto a = generate<double>(spec);
    ConvertOptions opt;
    const auto m = M::convert(a, Format::Auto, opt);
    EXPECT_TRUE(m.auto_picked());
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.0)) << spec;
    const std::string how = m.properties().front().second;
    constexpr bool on_host =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, M::memory_space>::accessible;
    EXPECT_EQ(how.rfind(on_host ? "model" : "measured", 0), 0u) << how;
    // Measuring off: the model's first choice, on any space.
    opt.auto_measure = false;
    const auto model_only = M::convert(a, Format::Auto, opt);
    EXPECT_EQ(model_only.properties().front().second.rfind("model", 0), 0u);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, model_only, 2.0, 0.5)) << spec;
    // It refreshes and transposes like any matrix.
    EXPECT_TRUE(m.refreshable());
    // Timed on products of 4 columns where it measures: the note says so.
    opt.auto_measure = true;
    opt.expected_vectors = 4;
    const auto wide = M::convert(a, Format::Auto, opt);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, wide, 1.0, 0.0)) << spec;
    const std::string wide_how = wide.properties().front().second;
    EXPECT_EQ(wide_how.find("(4 columns)") != std::string::npos, !on_host) << wide_how;
  }
}

TEST(Auto, BadOptionsAreTypedErrors) {
  const auto a = generate<double>("lap2d:10");
  ConvertOptions opt;
  opt.expected_applies = -1;
  EXPECT_THROW(Matrix<double>::convert(a, Format::Auto, opt), InvalidArgumentError);
  opt.expected_applies = std::numeric_limits<double>::infinity();
  EXPECT_THROW(Matrix<double>::convert(a, Format::Auto, opt), InvalidArgumentError);
  opt.expected_applies = 10;
  opt.auto_candidates = 0;
  EXPECT_THROW(Matrix<double>::convert(a, Format::Auto, opt), InvalidArgumentError);
  opt.auto_candidates = 3;
  for (const int k : {0, -2, 65}) {
    opt.expected_vectors = k;
    EXPECT_THROW(Matrix<double>::convert(a, Format::Auto, opt), InvalidArgumentError) << k;
  }
}
