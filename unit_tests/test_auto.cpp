// Format::Auto: what a solve loop pays decides (set-up + refresh +
// expected_applies SpMVs); on a device the shortlist is converted and
// timed, on a host space the model's first choice stands; bad options are
// typed errors.
#include <cmath>
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
  // Defaults where the file is silent: the partitioning formats (ehyb,
  // pkt: their partition included) cost more than a CSR's copy.
  for (Format f : {Format::Ehyb, Format::Pkt}) {
    EXPECT_GT(setup_defaults(f).ns_per_nnz, setup_defaults(Format::Csr).ns_per_nnz);
    EXPECT_GT(setup_defaults(f).fixed_us, setup_defaults(Format::Csr).fixed_us);
  }
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
    opt.auto_quick = false;  // ranked (Auto.KeepsCsrVectorUnrankedWhereRankingCannotPay: not)
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
    // csr-merge, whose fused kernel serves any pattern, is on the
    // shortlist of a several-column pick whatever the model's rank: timed,
    // or named with what timing it might have saved.
    if (!on_host) EXPECT_NE(wide_how.find("csr-merge"), std::string::npos) << wide_how;
  }
}

// Which formats have a fused kernel for several columns, as auto's trial
// rule reads it before a candidate is built; every matrix whose fused
// kernel pays once built is of such a format.
TEST(Auto, FusedKernelsAreKnownBeforeConversion) {
  using M = Matrix<double>;
  for (Format f : {Format::Csr, Format::CsrScalar, Format::CsrVector, Format::CsrAdaptive, Format::CsrMerge,
                   Format::Dia, Format::Ell, Format::Ellr, Format::Pellr})
    EXPECT_TRUE(M::has_fused_kernel(f)) << format_name(f);
  for (Format f : {Format::Coo, Format::Hyb, Format::Jad, Format::EvcHyb, Format::Ehyb, Format::Pkt, Format::KkCrs,
                   Format::Auto})
    EXPECT_FALSE(M::has_fused_kernel(f)) << format_name(f);
  const auto a = generate<double>("lap2d:30");
  for (const auto& d : known_formats()) {
    if (d.format == Format::Auto) continue;
    const auto m = M::convert(a, d.format);
    if (m.has_fused_block_kernel()) EXPECT_TRUE(M::has_fused_kernel(d.format)) << d.name;
  }
}

// The expected saving of timing one more candidate: the spread's share of
// the best time where the estimate equals it, about the estimated gain
// where the estimate is far below it, next to nothing far above, and
// falling as the estimate rises.
TEST(Auto, TrialSavingFollowsTheEstimate) {
  const double best = 1e-4, applies = 1000;
  EXPECT_NEAR(expected_trial_saving(applies, best, best), applies * best * kModelSpread * 0.3989423, 1e-9);
  EXPECT_NEAR(expected_trial_saving(applies, best, best / 2), applies * best * std::log(2.0), applies * best * 0.01);
  EXPECT_LT(expected_trial_saving(applies, best, best * 4), applies * best * 1e-3);
  double before = 1e300;
  for (double r = 0.25; r < 4; r *= 1.1) {
    const double s = expected_trial_saving(applies, best, best * r);
    EXPECT_LT(s, before) << r;
    before = s;
  }
  EXPECT_EQ(expected_trial_saving(0, best, best), 0.0);
}

// Candidates auto has converted are weighed by what they cost from then on
// (measured_pick keeps the least): a refresh and expected_applies SpMVs,
// not the conversions made already. The figures are ehyb and pellr on an
// RCM-ordered mesh (H200): counting the conversions, 7.0 ms against 0.74,
// would drop ehyb for pellr.
TEST(Auto, ConvertedCandidatesAreWeighedWithoutTheirConversion) {
  const double applies = 1000;
  const double pellr = loop_once_converted(applies, 32.0e-6, 128.0e-6);
  const double ehyb = loop_once_converted(applies, 29.5e-6, 79.8e-6);
  EXPECT_DOUBLE_EQ(pellr, 128.0e-6 + 1000 * 32.0e-6);
  EXPECT_LT(ehyb, pellr);
  EXPECT_GT(7.0e-3 + ehyb, 0.74e-3 + pellr);  // what counting the conversions chose
  // With few SpMVs a refresh, the cheaper refresh decides; with none, it alone.
  EXPECT_LT(loop_once_converted(0, 1.0, 79.8e-6), loop_once_converted(0, 1e-9, 128.0e-6));
  EXPECT_DOUBLE_EQ(loop_once_converted(0, 5e-6, 0), 0.0);
}

// On a device auto times a further candidate only where that can pay: a
// run of one SpMV times the first alone and names the others it left; a
// run of 10^12 times the whole shortlist. On a host space nothing is timed.
TEST(Auto, TimesAnotherCandidateOnlyWhereItCanPay) {
  using M = Matrix<double>;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, M::memory_space>::accessible;
  const auto a = generate<double>("lap3d:24");
  ConvertOptions opt;
  opt.auto_quick = false;  // the ranking itself (a small matrix: csr-vector kept unranked otherwise)
  opt.expected_applies = 1;
  const auto short_run = M::convert(a, Format::Auto, opt);
  const std::string few = short_run.properties().front().second;
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, short_run, 1.0, 0.0));
  opt.expected_applies = 1e12;
  const auto long_run = M::convert(a, Format::Auto, opt);
  const std::string all = long_run.properties().front().second;
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, long_run, 1.0, 0.0));
  if (on_host) {
    EXPECT_EQ(few.rfind("model", 0), 0u) << few;
    return;
  }
  EXPECT_NE(few.find("not timed: "), std::string::npos) << few;
  EXPECT_EQ(all.find("not timed"), std::string::npos) << all;
  int timed = 0;
  for (std::size_t at = all.find(", set-up "); at != std::string::npos; at = all.find(", set-up ", at + 1)) ++timed;
  EXPECT_EQ(timed, 3) << all;
}

// On a device auto times a candidate's refresh only where it can move the
// loop: at one SpMV a refresh every candidate's refresh is timed, at a
// million SpMVs a refresh none is, and the note marks each figure the
// model gave ("(model)"). On a host space nothing is timed.
TEST(Auto, TimesTheRefreshOnlyWhereItWeighs) {
  using M = Matrix<double>;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, M::memory_space>::accessible;
  const auto a = generate<double>("lap3d:24");
  const auto refreshes = [](const std::string& how, bool modelled) {
    int n = 0;
    for (std::size_t at = how.find(", refresh "); at != std::string::npos; at = how.find(", refresh ", at + 1)) {
      const std::size_t end = how.find_first_of(";)", at + 10);
      const bool marked = end != std::string::npos && how.compare(end - 6, 6, "(model") == 0;
      n += marked == modelled ? 1 : 0;
    }
    return n;
  };
  ConvertOptions opt;
  opt.auto_quick = false;
  opt.expected_applies = 1;
  const auto often = M::convert(a, Format::Auto, opt);
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, often, 1.0, 0.0));
  opt.expected_applies = 1e6;
  const auto seldom = M::convert(a, Format::Auto, opt);
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, seldom, 1.0, 0.0));
  const std::string timed = often.properties().front().second, modelled = seldom.properties().front().second;
  if (on_host) {
    EXPECT_EQ(timed.rfind("model", 0), 0u) << timed;
    return;
  }
  EXPECT_GE(refreshes(timed, false), 1) << timed;
  EXPECT_EQ(refreshes(timed, true), 0) << timed;
  EXPECT_GE(refreshes(modelled, true), 1) << modelled;
  EXPECT_EQ(refreshes(modelled, false), 0) << modelled;
}

// The floor under every SpMV: the least over the formats of each one's
// tiny-matrix figure or host queueing cost, whichever is larger; without
// figures, a launch. Ranking pays only where the measured SpMV stands far
// enough above that floor, over enough SpMVs, to beat what the figures
// and one more trial cost.
TEST(Auto, RankingPaysOnlyPastTheFloor) {
  ModelHardware hw;
  hw.launch_us = 4;
  EXPECT_NEAR(least_spmv_seconds(hw), 4e-6, 1e-12);  // one launch (csr-merge's two are not the least)
  for (const auto& d : known_formats()) {
    hw.fixed_us[d.name] = 5;
    hw.host_us[d.name] = 6;
  }
  hw.fixed_us["ell"] = 2.5;
  hw.host_us["ell"] = 3.5;   // ell: 3.5 (host)
  hw.fixed_us["dia"] = 3;
  hw.host_us["dia"] = 1;     // dia: 3 (device), the least
  hw.fixed_us["kk-crs"] = 0.5;
  hw.host_us["kk-crs"] = 0.5;  // the baseline: never auto's pick, not a floor
  EXPECT_NEAR(least_spmv_seconds(hw), 3e-6, 1e-12);
  double saving = -1, cost = -1;
  // At the floor, nothing to save, however many SpMVs.
  EXPECT_FALSE(ranking_can_pay(1e12, 3e-6, 3e-6, 0, &saving, &cost));
  EXPECT_EQ(saving, 0.0);
  EXPECT_NEAR(cost, kLeastFiguresSeconds, 1e-15);
  // 1 us above it: 1000 SpMVs save at most 1 ms, less than the figures and
  // a 0.2 ms trial; 10,000 save 10 ms, more.
  EXPECT_FALSE(ranking_can_pay(1000, 4e-6, 3e-6, 0.2e-3, &saving, &cost));
  EXPECT_NEAR(saving, 1e-3, 1e-12);
  EXPECT_NEAR(cost, kLeastFiguresSeconds + 0.2e-3, 1e-12);
  EXPECT_TRUE(ranking_can_pay(10000, 4e-6, 3e-6, 0.2e-3));
  EXPECT_FALSE(ranking_can_pay(0, 1.0, 3e-6, 0));
  // The estimate from the CSR's size alone: at least the host's cost and
  // the fixed figure, growing with the entries, and slower where the
  // bytes leave L2.
  hw.l2_bytes = 50'000'000;
  hw.bandwidth_gbs = 1000;
  hw.l2_gain = 2;
  const double tiny = bytes_only_estimate(hw, Format::CsrVector, 10, 10, 30, 8);
  EXPECT_GE(tiny, 6e-6);
  EXPECT_LT(tiny, 6.1e-6);
  const double in_l2 = bytes_only_estimate(hw, Format::CsrVector, 100'000, 100'000, 2'000'000, 8);
  const double past = bytes_only_estimate(hw, Format::CsrVector, 1'000'000, 1'000'000, 20'000'000, 8);
  const double in_l2_bytes = 12.0 * 2'000'000 + 4.0 * 100'001 + 16.0 * 100'000;
  EXPECT_NEAR(in_l2, 5e-6 + in_l2_bytes / (1000e9 * 2 * 0.8), 1e-9);
  const double past_bytes = 12.0 * 20'000'000 + 4.0 * 1'000'001 + 16.0 * 1'000'000;
  EXPECT_NEAR(past, 5e-6 + past_bytes / (1000e9 * 0.8), 1e-9);  // past L2: without l2_gain
}

// Where every format's SpMV runs near the floor, auto on a device keeps
// csr-vector, timed first, and ranks nothing; the note says what ranking
// could have saved and would have cost. Off (auto_quick), or over SpMVs
// enough to pay for ranking, it ranks, csr-vector one of its measured
// candidates. On a host space the model's choice stands.
TEST(Auto, KeepsCsrVectorUnrankedWhereRankingCannotPay) {
  using M = Matrix<double>;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, M::memory_space>::accessible;
  for (const char* spec : {"lap2d:30", "powerlaw:3000:6"}) {
    const auto a = generate<double>(spec);
    ConvertOptions opt;
    opt.expected_applies = 20;
    const auto quick = M::convert(a, Format::Auto, opt);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, quick, 1.0, 0.0)) << spec;
    const std::string how = quick.properties().front().second;
    EXPECT_TRUE(quick.auto_picked());
    if (on_host) {
      EXPECT_EQ(how.rfind("model", 0), 0u) << how;
      continue;
    }
    EXPECT_EQ(quick.format(), Format::CsrVector) << how;
    EXPECT_EQ(how.rfind("quick (csr-vector ", 0), 0u) << how;
    EXPECT_NE(how.find("ranking could save at most"), std::string::npos) << how;
    // It refreshes as any csr-vector does.
    auto b = a;
    for (auto& v : b.values) v = 2 * v + 1;
    auto refreshed = M::convert(a, Format::Auto, opt);
    refreshed.update_values(detail::upload<double, M::memory_space>(b.values, "values"));
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(b, refreshed, 1.0, 0.0)) << spec;
    opt.auto_quick = false;
    EXPECT_EQ(M::convert(a, Format::Auto, opt).properties().front().second.rfind("measured (", 0), 0u);
    // 10^12 SpMVs: the bytes alone say ranking can pay, csr-vector is not
    // tried first.
    opt.auto_quick = true;
    opt.expected_applies = 1e12;
    const std::string ranked = M::convert(a, Format::Auto, opt).properties().front().second;
    EXPECT_EQ(ranked.rfind("measured (", 0), 0u) << ranked;
    EXPECT_EQ(ranked.find("timed first"), std::string::npos) << ranked;
  }
}

// csr-vector timed first and then ranked: with a floor of nothing and the
// bytes moved at once (a model set for the test), the bytes alone cannot
// rule the quick pick out, but the SpMV measured can, so it ranks, and
// csr-vector's trial stands as one candidate (converted once, named in
// the note, "timed first" where the shortlist did not reach it).
TEST(Auto, RanksWithCsrVectorTimedFirst) {
  using M = Matrix<double>;
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, M::memory_space>::accessible;
  if (on_host) GTEST_SKIP() << "auto measures on a device only";
  struct Restore {
    ModelHardware saved = default_model();
    ~Restore() { set_default_model(saved); }
  } restore;
  ModelHardware hw = restore.saved;
  hw.calibrated = true;  // no first-use calibration
  hw.bandwidth_gbs = 1e9;
  hw.launch_us = 1e-3;
  hw.fixed_us.clear();
  hw.host_us.clear();
  set_default_model(hw);
  EXPECT_LT(least_spmv_seconds(default_model()), 1e-8);
  const auto a = generate<double>("lap2d:40");
  ConvertOptions opt;
  opt.expected_applies = 1e5;  // 1e5 x 1 ns < 1 ms, 1e5 x (a real SpMV of microseconds) > 1 ms
  const auto m = M::convert(a, Format::Auto, opt);
  const std::string how = m.properties().front().second;
  EXPECT_EQ(how.rfind("measured (", 0), 0u) << how;
  EXPECT_NE(how.find("csr-vector "), std::string::npos) << how;
  std::size_t named = 0;
  for (std::size_t at = how.find("csr-vector "); at != std::string::npos; at = how.find("csr-vector ", at + 1)) ++named;
  EXPECT_EQ(named, 1u) << how;  // converted and timed once
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.0));
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
