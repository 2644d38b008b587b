// The model's pattern figures taken from a device CSR (kernels on its
// execution space, a sample of rows fetched) and from a sample of warps:
// exact where the budget covers the matrix, the same on host and device
// for the same sample, and a sample that stands for the whole.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "kspmv/model/device_pattern_stats.hpp"
#include "test_support.hpp"

using namespace kspmv;
using kspmv_test::test_options;

namespace {
using Exec = Kokkos::DefaultExecutionSpace;

void expect_same(const PatternStats& a, const PatternStats& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.rows.nrows, b.rows.nrows);
  EXPECT_EQ(a.rows.nnz, b.rows.nnz);
  EXPECT_EQ(a.caller_warps.n_iter, b.caller_warps.n_iter);
  EXPECT_EQ(a.caller_warps.n_p, b.caller_warps.n_p);
  EXPECT_EQ(a.rows.counts, b.rows.counts);
  EXPECT_DOUBLE_EQ(a.alpha, b.alpha);
  EXPECT_DOUBLE_EQ(a.alpha_ascending, b.alpha_ascending);
  EXPECT_DOUBLE_EQ(a.sorted_row_sector_bytes, b.sorted_row_sector_bytes);
  EXPECT_EQ(a.diagonals, b.diagonals);
  EXPECT_EQ(a.ehyb_window, b.ehyb_window);
  EXPECT_DOUBLE_EQ(a.ehyb_in_part, b.ehyb_in_part);
  EXPECT_DOUBLE_EQ(a.pkt_in_packet, b.pkt_in_packet);
  EXPECT_EQ(a.pkt_longest_in_packet, b.pkt_longest_in_packet);
  EXPECT_DOUBLE_EQ(a.scalar_lines, b.scalar_lines);
  EXPECT_DOUBLE_EQ(a.adaptive_lines, b.adaptive_lines);
}

HostCsr<double> with_empty_rows() {
  HostCoo<double> c(70, 30);
  for (int i = 0; i < 70; i += 3)
    for (int j = 0; j < (i % 7) * 4 && j < 30; ++j) c.add(i, (j * 7 + i) % 30, 1.0);
  return to_csr(c);
}

// A diagonal with row and column 0 full: a row longer than a ball wave
// reads (kBallRowScan).
HostCsr<double> arrow(ordinal_t n) {
  HostCoo<double> c(n, n);
  for (ordinal_t i = 0; i < n; ++i) {
    c.add(i, i, 1.0);
    if (i > 0) c.add(0, i, 1.0), c.add(i, 0, 1.0);
  }
  return to_csr(c);
}

// A source over a HostCsr, written apart from the library's own, that
// counts the entries it is asked to fetch.
PatternSource counting_source(const HostCsr<double>& a, const PatternStats& exact, std::int64_t& fetched) {
  PatternSource src;
  src.nrows = a.nrows;
  src.ncols = a.ncols;
  const std::vector<std::int64_t> len = row_lengths(a);
  src.length_counts.assign(static_cast<std::size_t>(*std::max_element(len.begin(), len.end())) + 1, 0);
  for (const auto l : len) ++src.length_counts[static_cast<std::size_t>(l)];
  src.caller_warps = warp_iterations(len);
  src.warp_entries.assign((len.size() + 31) / 32, 0.0);
  for (std::size_t p = 0; p < len.size(); ++p) src.warp_entries[p / 32] += double(len[p]);
  src.counts.diagonals = exact.diagonals;
  std::vector<ordinal_t> ascending(len.size());
  std::iota(ascending.begin(), ascending.end(), 0);
  std::stable_sort(ascending.begin(), ascending.end(), [&](ordinal_t x, ordinal_t y) { return len[x] < len[y]; });
  src.fetch_rows = [&a, &fetched, ascending](const std::vector<std::int64_t>& positions, std::size_t first_ascending,
                                             SampledRows& out) {
    out = SampledRows{};
    out.local.push_back(0);
    for (std::size_t q = 0; q < positions.size(); ++q) {
      const ordinal_t r =
          q < first_ascending ? static_cast<ordinal_t>(positions[q]) : ascending[static_cast<std::size_t>(positions[q])];
      out.ids.push_back(r);
      out.begins.push_back(a.row_ptr[r]);
      out.cols.insert(out.cols.end(), a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1]);
      out.local.push_back(static_cast<std::int64_t>(out.cols.size()));
      fetched += a.row_ptr[r + 1] - a.row_ptr[r];
    }
  };
  return src;
}
}  // namespace

TEST(DevicePatternStats, EqualHostFiguresWhenEveryWarpIsRead) {
  const auto& hw = default_model();
  std::vector<std::pair<std::string, HostCsr<double>>> cases = {
      {"lap3d:12", generate<double>("lap3d:12")},
      {"powerlaw:5000:8", generate<double>("powerlaw:5000:8")},
      {"rmat:11", generate<double>("rmat:11")},
      {"banded:3000:9", generate<double>("banded:3000:9")},
      {"lap3d:12 scrambled", kspmv_test::scrambled_symmetric(generate<double>("lap3d:12"), 7)},
      {"arrow of 3000 rows", arrow(3000)},
      {"empty rows, 70 x 30", with_empty_rows()},
      {"1 x 1", generate<double>("lap1d:1")},
      {"0 x 0", HostCsr<double>(0, 0)},
  };
  for (const auto& [name, a] : cases) {
    const auto d = upload_csr<double, Exec>(a);
    for (const int tau : {4, 8}) {
      const PatternStats host = pattern_stats(a, tau, hw);
      expect_same(host, pattern_stats(Exec(), d, tau, hw, 0), name + " device, every warp");
      // A budget the matrix fits in reads every warp too: four times its
      // entries, as a matrix of regular rows reads a quarter of the budget.
      expect_same(host, pattern_stats(Exec(), d, tau, hw, 8 * a.nnz() + 256), name + " device, budget above nnz");
      expect_same(host, pattern_stats(a, tau, hw, 8 * a.nnz() + 256), name + " host, budget above nnz");
    }
  }
}

TEST(DevicePatternStats, DeviceSampleIsTheHostSample) {
  const auto& hw = default_model();
  for (const char* spec : {"powerlaw:20000:10", "lap3d:24"}) {
    const auto a = generate<double>(spec);
    const auto d = upload_csr<double, Exec>(a);
    expect_same(pattern_stats(a, 8, hw, 20000), pattern_stats(Exec(), d, 8, hw, 20000), spec);
  }
}

// The per-warp figures run on host workers kept between calls, one caller
// at a time (the others run their tasks on their own threads): callers on
// several threads at once get the figures a lone caller gets.
TEST(PatternSample, CallersOnSeveralThreadsAtOnceGetTheLoneCallersFigures) {
  const auto& hw = default_model();
  const auto a = generate<double>("powerlaw:20000:10");
  const PatternStats alone = pattern_stats(a, 8, hw, 40000);
  constexpr int kCallers = 4, kRounds = 3;
  std::vector<PatternStats> got(kCallers * kRounds);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) got[static_cast<std::size_t>(c * kRounds + r)] = pattern_stats(a, 8, hw, 40000);
    });
  for (auto& t : callers) t.join();
  for (std::size_t q = 0; q < got.size(); ++q) expect_same(alone, got[q], "caller " + std::to_string(q / kRounds));
}

TEST(PatternSample, StandsForTheWholeMatrix) {
  const auto& hw = default_model();
  for (const char* spec :
       {"lap3d:40", "lap2d:300", "powerlaw:60000:8", "rmat:15", "normal:50000:12:4", "uniform:40000:0:40", "banded:40000:12"}) {
    SCOPED_TRACE(spec);
    const auto a = generate<double>(spec);
    const PatternStats exact = pattern_stats(a, 8, hw);
    const std::int64_t budget = 96000;
    ASSERT_GT(a.nnz(), 4 * budget);
    std::int64_t fetched = 0;
    PatternSource src = counting_source(a, exact, fetched);
    const PatternStats sample = pattern_stats(src, 8, budget);
    // About the matrix's share of the budget is read (the square of its row
    // lengths' coefficient of variation, within [1/4, 1]; up to 4x that
    // where a few warps hold most entries, and a systematic sample can take
    // a few warps more), not the matrix.
    const double cv = exact.rows.stddev / exact.rows.mean;
    const double share = std::clamp(cv * cv, 0.25, 1.0) * double(budget);
    EXPECT_LE(double(fetched), 4 * share + share / 4);
    EXPECT_GT(double(fetched), share / 4);
    auto near = [](double got, double want, const char* what) {
      EXPECT_NEAR(got, want, 0.06 * std::abs(want)) << what;
    };
    near(sample.alpha, exact.alpha, "alpha");
    near(sample.alpha_ascending, exact.alpha_ascending, "alpha_ascending");
    near(sample.sorted_row_sector_bytes, exact.sorted_row_sector_bytes, "sorted_row_sector_bytes");
    near(sample.scalar_lines, exact.scalar_lines, "scalar_lines");
    near(sample.adaptive_lines, exact.adaptive_lines, "adaptive_lines");
    EXPECT_EQ(sample.rows.counts, exact.rows.counts);
    EXPECT_EQ(sample.caller_warps.n_iter, exact.caller_warps.n_iter);
  }
}

// The per-warp figures are sums over warps of whole numbers, so cutting
// a pick into host tasks (pattern_stats: 1,024 positions) gives them to
// the bit: where every warp is read (one pick an order, the case the cut
// is for) and where a sample is read. Rows of lengths 0-300 in the
// ascending order change csr-adaptive's threads per row at positions no
// multiple of 32, where its warps begin off the 32-row grid.
TEST(PatternSample, FiguresAreTheSameWhateverTheTasksCut) {
  const auto& hw = default_model();
  std::vector<std::pair<std::string, HostCsr<double>>> cases;
  for (const char* spec : {"uniform:6000:0:300", "powerlaw:20000:8", "lap2d:70"}) cases.emplace_back(spec, generate<double>(spec));
  cases.emplace_back("empty rows", with_empty_rows());
  for (const auto& [name, a] : cases) {
    const PatternStats exact = pattern_stats(a, 8, hw);
    for (const std::int64_t budget : {std::int64_t(0), std::int64_t(30000)}) {
      std::int64_t fetched = 0;
      const PatternSource src = counting_source(a, exact, fetched);
      const PatternStats whole = detail::pattern_stats_in_runs(src, 8, budget, std::size_t(1) << 40);
      for (const std::size_t run : {std::size_t(1), std::size_t(32), std::size_t(64), std::size_t(100), std::size_t(1024)}) {
        SCOPED_TRACE(name + ", budget " + std::to_string(budget) + ", run " + std::to_string(run));
        const PatternStats cut = detail::pattern_stats_in_runs(src, 8, budget, run);
        EXPECT_EQ(cut.alpha, whole.alpha);
        EXPECT_EQ(cut.alpha_ascending, whole.alpha_ascending);
        EXPECT_EQ(cut.sorted_row_sector_bytes, whole.sorted_row_sector_bytes);
        EXPECT_EQ(cut.scalar_lines, whole.scalar_lines);
        EXPECT_EQ(cut.adaptive_lines, whole.adaptive_lines);
      }
      if (budget == 0) {  // and pattern_stats's own cut
        EXPECT_EQ(pattern_stats(src, 8, 0).adaptive_lines, whole.adaptive_lines);
        EXPECT_EQ(exact.adaptive_lines, whole.adaptive_lines);
      }
    }
  }
}

// Rows of regular lengths read a quarter of the budget; rows whose
// lengths spread as widely as their mean read all of it (a sample's error
// grows with that spread).
TEST(PatternSample, RegularRowsReadAQuarterOfTheBudget) {
  const auto& hw = default_model();
  const std::int64_t budget = 96000;
  const auto fetched_by = [&](const HostCsr<double>& a) {
    const PatternStats exact = pattern_stats(a, 8, hw);
    std::int64_t fetched = 0;
    PatternSource src = counting_source(a, exact, fetched);
    pattern_stats(src, 8, budget);
    return std::make_pair(fetched, exact.rows.stddev / exact.rows.mean);
  };
  const auto [stencil, stencil_cv] = fetched_by(generate<double>("lap3d:40"));
  const auto [graph, graph_cv] = fetched_by(generate<double>("powerlaw:60000:8"));
  ASSERT_LT(stencil_cv, 0.5);
  ASSERT_GE(graph_cv, 1.0);
  EXPECT_LE(stencil, budget / 4 + budget / 16);
  EXPECT_GT(stencil, budget / 16);
  EXPECT_GT(graph, budget / 2);
}

TEST(PatternSample, ABadSourceIsATypedError) {
  const auto a = generate<double>("lap2d:40");
  const PatternStats exact = pattern_stats(a, 8, default_model());
  std::int64_t fetched = 0;
  EXPECT_NO_THROW(pattern_stats(counting_source(a, exact, fetched), 8, 0));
  PatternSource short_histogram = counting_source(a, exact, fetched);
  --short_histogram.length_counts.back();
  EXPECT_THROW(pattern_stats(short_histogram, 8, 0), InvalidArgumentError);
  PatternSource negative_count = counting_source(a, exact, fetched);
  negative_count.length_counts.push_back(-1);
  negative_count.length_counts.push_back(1);
  EXPECT_THROW(pattern_stats(negative_count, 8, 0), InvalidArgumentError);
  PatternSource short_warps = counting_source(a, exact, fetched);
  short_warps.warp_entries.pop_back();
  EXPECT_THROW(pattern_stats(short_warps, 8, 0), InvalidArgumentError);
  PatternSource no_fetch = counting_source(a, exact, fetched);
  no_fetch.fetch_rows = nullptr;
  EXPECT_THROW(pattern_stats(no_fetch, 8, 0), InvalidArgumentError);
  PatternSource drops_a_row = counting_source(a, exact, fetched);
  const auto whole = drops_a_row.fetch_rows;
  drops_a_row.fetch_rows = [whole](const std::vector<std::int64_t>& positions, std::size_t first, SampledRows& out) {
    whole(positions, first, out);
    out.ids.pop_back();
  };
  EXPECT_THROW(pattern_stats(drops_a_row, 8, 0), InvalidArgumentError);
  PatternSource row_out_of_range = counting_source(a, exact, fetched);
  row_out_of_range.fetch_rows = [whole](const std::vector<std::int64_t>& positions, std::size_t first, SampledRows& out) {
    whole(positions, first, out);
    out.ids[0] = 1 << 30;
  };
  EXPECT_THROW(pattern_stats(row_out_of_range, 8, 0), InvalidArgumentError);
  PatternSource short_columns = counting_source(a, exact, fetched);
  short_columns.fetch_rows = [whole](const std::vector<std::int64_t>& positions, std::size_t first, SampledRows& out) {
    whole(positions, first, out);
    out.cols.pop_back();
  };
  EXPECT_THROW(pattern_stats(short_columns, 8, 0), InvalidArgumentError);
}

TEST(PatternSample, AutoRefusesANegativeBudget) {
  ConvertOptions opt = test_options();
  opt.auto_sample_entries = -1;
  EXPECT_THROW(Matrix<double>::convert(generate<double>("lap2d:10"), Format::Auto, opt), InvalidArgumentError);
}

TEST(RowsByLength, IsAStableSortByLength) {
  std::vector<std::int64_t> len(5000);
  std::uint64_t x = 12345;
  for (auto& l : len) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    l = static_cast<std::int64_t>((x >> 33) % 37);
  }
  for (const bool descending : {false, true}) {
    std::vector<ordinal_t> want(len.size());
    std::iota(want.begin(), want.end(), 0);
    std::stable_sort(want.begin(), want.end(), [&](ordinal_t a, ordinal_t b) {
      return descending ? len[a] > len[b] : len[a] < len[b];
    });
    EXPECT_EQ(rows_by_length(len, descending), want);
  }
  EXPECT_TRUE(rows_by_length({}, false).empty());
  EXPECT_THROW(rows_by_length({3, -1}, false), InvalidArgumentError);
}

// The device's order of rows by length (a radix sort of the lengths on
// CUDA, sorted keys elsewhere) and its histogram of lengths are the host's:
// runs of one length (a histogram adds a run with one atomic), empty rows,
// one long row, lengths past a byte (a second radix pass).
TEST(RowsByLength, OnTheDeviceIsTheHostOrder) {
  std::vector<std::int64_t> len;
  std::uint64_t x = 777;
  for (int i = 0; i < 9000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::int64_t r = static_cast<std::int64_t>((x >> 33) % 1000);
    if (i < 3000)
      len.push_back(7);  // one run
    else if (i < 6000)
      len.push_back(r < 100 ? 0 : r % 13);
    else
      len.push_back(r % 300);  // lengths past 255
  }
  len[4321] = 70000;  // one long row
  std::vector<offset_t> row_ptr(len.size() + 1, 0);
  for (std::size_t i = 0; i < len.size(); ++i) row_ptr[i + 1] = row_ptr[i] + len[i];
  const auto ptr = detail::upload<offset_t, Exec::memory_space>(row_ptr, "row_ptr");
  Exec space;
  const auto dlen = detail::row_lengths(space, ptr, "len");
  const std::int64_t longest = *std::max_element(len.begin(), len.end());
  for (const bool descending : {false, true}) {
    SCOPED_TRACE(descending ? "descending" : "ascending");
    const auto order = detail::rows_by_length(space, dlen, longest, descending, "order");
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), order);
    EXPECT_EQ(std::vector<ordinal_t>(h.data(), h.data() + h.extent(0)), rows_by_length(len, descending));
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(longest) + 1, 0);
  for (const auto l : len) ++counts[static_cast<std::size_t>(l)];
  EXPECT_EQ(detail::length_histogram(space, ptr, longest), counts);
  const auto none = detail::upload<offset_t, Exec::memory_space>(std::vector<offset_t>{0}, "empty");
  EXPECT_EQ(detail::length_histogram(space, none, 0), std::vector<std::int64_t>{0});
}

TEST(RowLengthStats, FromTheHistogramEqualsFromTheLengths) {
  std::vector<std::int64_t> len(3000);
  std::uint64_t x = 99;
  for (auto& l : len) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    l = static_cast<std::int64_t>((x >> 33) % 23) + 2;  // no empty rows, no rows of one entry
  }
  const RowLengthStats want = row_length_stats(len, 4000);
  std::vector<std::int64_t> counts(40, 0);  // trailing zeros, dropped
  for (const auto l : len) ++counts[static_cast<std::size_t>(l)];
  const RowLengthStats got = row_length_stats_from_counts(counts, 4000);
  EXPECT_EQ(got.nrows, want.nrows);
  EXPECT_EQ(got.nnz, want.nnz);
  EXPECT_EQ(got.min, want.min);
  EXPECT_EQ(got.min, 2);
  EXPECT_EQ(got.max, want.max);
  EXPECT_EQ(got.counts, want.counts);
  EXPECT_EQ(got.cum_rows, want.cum_rows);
  EXPECT_EQ(got.fractiles, want.fractiles);
  EXPECT_DOUBLE_EQ(got.skewness, want.skewness);
  // The cumulative entries, to the bit, against a plain sum of doubles.
  double entries = 0;
  for (std::size_t l = 0; l < got.counts.size(); ++l) {
    entries += double(l) * double(got.counts[l]);
    ASSERT_EQ(got.cum_nnz[l], entries) << "length " << l;
  }
  EXPECT_EQ(got.cum_rows.back(), std::int64_t(len.size()));
  EXPECT_EQ(got.cum_nnz.back(), double(got.nnz));
  EXPECT_EQ(row_length_stats_from_counts({}, 5).nrows, 0);
  EXPECT_EQ(row_length_stats_from_counts({0, 0}, 5).counts.size(), 0u);
  EXPECT_THROW(row_length_stats_from_counts({3, -1, 2}, 5), InvalidArgumentError);
}
