// EHYB: the part count and window of eqs. (1)-(2), the split into cached
// sliced ELL and extra rows on patterns where nothing / everything is
// in-part, non-symmetric patterns, a very long in-part row, repeated calls
// with changing x and y (ER recomputed every call), the internal order, the
// partitioner fallbacks and the option errors.
#include <map>
#include <numeric>

#include "test_support.hpp"

using namespace kspmv;

namespace {

using Space = Kokkos::DefaultExecutionSpace;

std::map<std::string, std::string> props(const Matrix<double>& m) {
  const auto p = m.properties();
  return {p.begin(), p.end()};
}

ConvertOptions small_windows(std::int64_t bytes, KernelPath k = KernelPath::Auto,
                             Partitioner how = Partitioner::Contiguous) {
  ConvertOptions o;
  o.ehyb_shared_bytes = bytes;
  o.kernel = k;
  o.partitioner = how;
  return o;
}

void expect_matches(const HostCsr<double>& a, const ConvertOptions& o, const std::string& what) {
  const auto m = Matrix<double>::convert(a, Format::Ehyb, o);
  for (auto [al, be] : std::vector<std::pair<double, double>>{{1, 0}, {-2, 0.5}, {1, 1}})
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, al, be)) << what;
}

// Internal order (o.output_order must say so): x given and y returned in
// the format's row order new_to_old.
void expect_internal_order_matches(const HostCsr<double>& a, const ConvertOptions& o, const std::string& what) {
  const auto f = to_ehyb<double, Space>(a, o);
  auto perm_d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
  std::vector<ordinal_t> perm(perm_d.data(), perm_d.data() + a.nrows);
  validate_permutation(perm, a.nrows);
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 5);
  std::vector<double> yref(static_cast<std::size_t>(a.nrows));
  reference_spmv(1.0, a, x, 0.0, yref);
  std::vector<double> xi(x.size());
  for (ordinal_t i = 0; i < a.nrows; ++i) xi[i] = x[perm[i]];
  auto dx = detail::upload<double, Space::memory_space>(xi, "x");
  Kokkos::View<double*, Space::memory_space> dy("y", a.nrows);
  Kokkos::deep_copy(dy, std::nan(""));
  spmv(Space(), 1.0, f, dx, 0.0, dy);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
  for (ordinal_t i = 0; i < a.nrows; ++i)
    ASSERT_NEAR(hy(i), yref[perm[i]], 1e-12 * (1 + std::fabs(yref[perm[i]]))) << what << ", row " << i;
}

}  // namespace

TEST(Ehyb, PartsAndWindowFromEquationsOneAndTwo) {
  const auto a = generate<double>("lap2d:100");  // 10,000 rows
  const auto fig = device_figures<Space>();
  for (std::int64_t bytes : {2048, 8192, 32000}) {
    const auto m = Matrix<double>::convert(a, Format::Ehyb, small_windows(bytes, KernelPath::Portable));
    auto p = props(m);
    const std::int64_t cap = bytes / 8, P = fig.processors, n = a.nrows;
    // On a device K is at least ehyb_min_parts_per_sm (1 by default).
    const std::int64_t per_sm = detail::is_host_space<Space>() ? 1 : ConvertOptions{}.ehyb_min_parts_per_sm;
    const std::int64_t K = std::max<std::int64_t>(per_sm, (n * 103 / 100 + cap * P - 1) / (cap * P));
    const std::int64_t parts = std::min(K * P, (n + 31) / 32);
    EXPECT_EQ(p["parts"], std::to_string(parts)) << bytes;
    EXPECT_EQ(p["window_rows"], std::to_string((n + parts - 1) / parts)) << bytes;
    EXPECT_LE(std::stoll(p["window_rows"]) * 8, bytes);
    EXPECT_EQ(p["partitioner"], "contiguous");
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.0));
  }
}

// Parts per SM set the window and, on the CUDA path, the threads a part
// gets (1024 for one or two, 512 for four, 256 for eight): every block
// size, with and without extra rows, in both orders.
TEST(Ehyb, EveryPartsPerSmAndBlockSize) {
  const auto a = generate<double>("lap3d:24");
  const auto irregular = generate<double>("uniform:9000:2:40");
  for (int per_sm : {1, 2, 4, 8})
    for (auto order : {OutputOrder::Caller, OutputOrder::Internal}) {
      ConvertOptions o;
      o.ehyb_min_parts_per_sm = per_sm;
      o.output_order = order;
      o.partitioner = Partitioner::Contiguous;
      const auto m = Matrix<double>::convert(a, Format::Ehyb, o);
      if (!detail::is_host_space<Space>()) EXPECT_EQ(props(m)["parts_per_sm"], std::to_string(per_sm));
      const std::string what = "parts per SM " + std::to_string(per_sm);
      if (order == OutputOrder::Caller) {
        expect_matches(a, o, what);
        expect_matches(irregular, o, what + " (irregular)");
      } else {
        expect_internal_order_matches(a, o, what);
        expect_internal_order_matches(irregular, o, what + " (irregular)");
      }
    }
}

TEST(Ehyb, NothingInPartAndEverythingInPart) {
  const int n = 2000;
  // Each row's only entry lies half the matrix away: never in its part.
  HostCoo<double> far(n, n), diag(n, n);
  for (int i = 0; i < n; ++i) {
    far.add(i, (i + n / 2) % n, 1.0 + i % 3);
    diag.add(i, i, 2.0 - i % 5);
  }
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
    const auto o = small_windows(512, k);
    auto pf = props(Matrix<double>::convert(to_csr(far), Format::Ehyb, o));
    EXPECT_EQ(pf["pct_cached"], "0.00%");
    EXPECT_EQ(pf["er_rows"], std::to_string(n));
    expect_matches(to_csr(far), o, "nothing in part");
    auto pd = props(Matrix<double>::convert(to_csr(diag), Format::Ehyb, o));
    EXPECT_EQ(pd["pct_cached"], "100.00%");
    EXPECT_EQ(pd["er_rows"], "0");
    expect_matches(to_csr(diag), o, "everything in part");
  }
}

TEST(Ehyb, NonSymmetricPatternsAndPartitioners) {
  const auto a = generate<double>("uniform:3000:0:25:seed=9");  // square, non-symmetric
  const auto b = generate<double>("powerlaw:4000:7:seed=2");
  for (Partitioner how :
       {Partitioner::Contiguous, Partitioner::Rcm, Partitioner::Bfs, Partitioner::Cells, Partitioner::Auto}) {
    for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
      const auto o = small_windows(4096, k, how);
      expect_matches(a, o, "uniform");
      expect_matches(b, o, "powerlaw");
    }
    auto p = props(Matrix<double>::convert(a, Format::Ehyb, small_windows(4096, KernelPath::Auto, how)));
    const std::string expect = how == Partitioner::Contiguous ? "contiguous"
                               : how == Partitioner::Rcm      ? "rcm-contiguous"
                               : how == Partitioner::Bfs      ? "bfs"
                                                              : "cells";  // Auto: the device build's
    EXPECT_EQ(p["partitioner"], expect);
  }
  // RCM gathers a randomly scrambled 3D stencil back into bands: many more
  // in-part entries than contiguous blocks of the scrambled order.
  auto lap = generate<double>("lap3d:40");
  std::vector<ordinal_t> scramble(static_cast<std::size_t>(lap.nrows));
  std::iota(scramble.begin(), scramble.end(), 0);
  Rng rng(3);
  for (std::size_t i = scramble.size() - 1; i > 0; --i)
    std::swap(scramble[i], scramble[static_cast<std::size_t>(rng.uniform() * double(i + 1)) % (i + 1)]);
  const auto old_to_new = inverse_permutation(scramble);
  HostCoo<double> sc(lap.nrows, lap.ncols);
  for (ordinal_t i = 0; i < lap.nrows; ++i)
    for (auto k = lap.row_ptr[i]; k < lap.row_ptr[i + 1]; ++k) sc.add(old_to_new[i], old_to_new[lap.col_idx[k]], lap.values[k]);
  const auto scrambled = to_csr(sc);
  auto pc = props(Matrix<double>::convert(scrambled, Format::Ehyb, small_windows(4096)));
  auto pr = props(Matrix<double>::convert(scrambled, Format::Ehyb, small_windows(4096, KernelPath::Auto, Partitioner::Rcm)));
  auto pb = props(Matrix<double>::convert(scrambled, Format::Ehyb, small_windows(4096, KernelPath::Auto, Partitioner::Bfs)));
  EXPECT_GT(std::stod(pr["pct_cached"]), std::stod(pc["pct_cached"]));
  EXPECT_GT(std::stod(pb["pct_cached"]), std::stod(pr["pct_cached"]) + 20);
  auto pcells = props(Matrix<double>::convert(scrambled, Format::Ehyb, small_windows(4096, KernelPath::Auto, Partitioner::Cells)));
  EXPECT_GT(std::stod(pcells["pct_cached"]), std::stod(pr["pct_cached"]) + 20);
  expect_matches(scrambled, small_windows(4096, KernelPath::Auto, Partitioner::Cells), "scrambled lap3d, cells");
  expect_matches(scrambled, small_windows(4096, KernelPath::Auto, Partitioner::Bfs), "scrambled lap3d, bfs");
  if (!have_metis())
    EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, small_windows(4096, KernelPath::Auto, Partitioner::Metis)),
                 UnsupportedError);
}

TEST(Ehyb, VeryLongRowInsideItsPart) {
  // An arrow matrix in one part: row 5 holds every column.
  const int n = 3000;
  HostCoo<double> c(n, n);
  for (int i = 0; i < n; ++i) {
    c.add(i, i, 4.0);
    c.add(5, i, 0.001 * (i + 1));
    if (i > 0) c.add(i, 0, -1.0);
  }
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
    expect_matches(to_csr(c), small_windows(30000, k), "arrow, one part");
    expect_matches(to_csr(c), small_windows(1024, k), "arrow, many parts");
    // By default the long row goes whole to the long-row part (lanes per
    // row by length); with ehyb_long_row = 0 one lane walks it.
    auto o = small_windows(1024, k);
    EXPECT_EQ(props(Matrix<double>::convert(to_csr(c), Format::Ehyb, o))["long_rows"], "1");
    o.ehyb_long_row = 0;
    EXPECT_EQ(props(Matrix<double>::convert(to_csr(c), Format::Ehyb, o))["long_rows"], "0");
    expect_matches(to_csr(c), o, "arrow, lane path");
  }
}

// A row with more entries outside its part than inline extra rows count
// in 16 bits: Auto takes the separate layout, built by kernels from a
// device CSR, with the row walked by one lane (ehyb_long_row = 0).
TEST(Ehyb, MoreExtraEntriesInARowThanSixteenBitsCount) {
  const int n = kEhybInlineMaxRowExtra + 5000;
  HostCoo<double> c(n, n);
  for (int i = 0; i < n; ++i) {
    c.add(i, i, 4.0);
    if (i + 1 < n) c.add(i, i + 1, -1.0);
    if (i != 7) c.add(7, i, 0.001 * (i % 97 + 1));
  }
  const auto a = to_csr(c);
  auto o = small_windows(4096, KernelPath::Auto, Partitioner::Contiguous);
  o.ehyb_long_row = 0;
  const auto m = Matrix<double>::convert(upload_csr<double, Space>(a), Format::Ehyb, o);
  auto p = props(m);
  EXPECT_EQ(p["er"], "separate");
  EXPECT_EQ(p["built"], std::string("kernels on ") + Space::name());
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.0));
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, -0.5, 2.0));
  o.ehyb_er = ErLayout::Inline;
  EXPECT_THROW(Matrix<double>::convert(upload_csr<double, Space>(a), Format::Ehyb, o), FormatCannotHoldError);
}

TEST(Ehyb, RepeatedCallsRecomputeExtraRows) {
  const auto a = generate<double>("lap3d:12");
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
    const auto m = Matrix<double>::convert(a, Format::Ehyb, small_windows(2048, k));
    ASSERT_NE(props(m)["er_rows"], "0");
    for (std::uint64_t seed = 1; seed <= 4; ++seed)
      EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0 + seed, seed % 2 ? 0.0 : 0.5, seed * 11));
  }
}

TEST(Ehyb, InternalOrderKeepsXAndYPermuted) {
  const auto a = generate<double>("lap2d9:40");
  ConvertOptions o = small_windows(4096, KernelPath::Portable, Partitioner::Rcm);
  o.output_order = OutputOrder::Internal;
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
    o.kernel = k;
    expect_internal_order_matches(a, o, "kernel path " + std::to_string(int(k)));
  }
}

// Inline extra rows (default) and the paper's separate ER slices, both
// checked against the reference (their roundings differ: inline adds the
// ER entries to the row's sum, separate adds alpha times their sum to y),
// in both orders and kernel paths, on matrices with few, many and only
// extra-row entries.
TEST(Ehyb, InlineAndSeparateExtraRows) {
  const int n = 2000;
  HostCoo<double> far(n, n);
  for (int i = 0; i < n; ++i) far.add(i, (i + n / 2) % n, 1.0 + i % 3);
  const std::vector<std::pair<std::string, HostCsr<double>>> mats = {
      {"lap3d:14", generate<double>("lap3d:14")},
      {"uniform", generate<double>("uniform:3000:0:25:seed=9")},
      {"nothing in part", to_csr(far)},
      {"a row with 200 extra entries", [] {
         HostCoo<double> c(3000, 3000);
         for (int i = 0; i < 3000; ++i) {  // a chain, so the long row's columns lie in many parts
           c.add(i, i, 2.0);
           if (i > 0) c.add(i, i - 1, -1.0);
         }
         for (int k = 0; k < 200; ++k) c.add(1500, (7 * k + 11) % 3000, 1.0 / (k + 1));
         return to_csr(c);
       }()}};
  for (const auto& [name, a] : mats)
    for (ErLayout layout : {ErLayout::Inline, ErLayout::Separate})
      for (OutputOrder order : {OutputOrder::Caller, OutputOrder::Internal})
        for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
          ConvertOptions o = small_windows(2048, k, Partitioner::Bfs);
          o.ehyb_er = layout;
          const bool in = layout == ErLayout::Inline;
          o.output_order = order;
          const auto m = Matrix<double>::convert(a, Format::Ehyb, o);
          auto p = props(m);
          EXPECT_EQ(p["er"], in ? "inline" : "separate");
          ASSERT_NE(p["er_rows"], "0") << name;
          if (order == OutputOrder::Caller) {
            expect_matches(a, o, name + (in ? " inline" : " separate"));
            continue;
          }
          const auto perm = m.internal_order();
          const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 5);
          std::vector<double> yref(static_cast<std::size_t>(a.nrows)), xi(x.size());
          reference_spmv(1.0, a, x, 0.0, yref);
          for (ordinal_t i = 0; i < a.nrows; ++i) xi[i] = x[perm[i]];
          Matrix<double>::vector_type dx("x", x.size()), dy("y", yref.size());
          auto hx = Kokkos::create_mirror_view(dx);
          for (std::size_t i = 0; i < xi.size(); ++i) hx(i) = xi[i];
          Kokkos::deep_copy(dx, hx);
          Kokkos::deep_copy(dy, std::numeric_limits<double>::quiet_NaN());
          m.apply(1.0, dx, 0.0, dy);
          auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
          for (ordinal_t i = 0; i < a.nrows; ++i)
            ASSERT_NEAR(hy(i), yref[perm[i]], 1e-12 * (1 + std::fabs(yref[perm[i]]))) << name << " row " << i;
        }
}

// ErLayout::Auto: inline (packed, so never padded) up to kEhybInlineMaxNnz
// nonzeros and while every row's outside count fits 16 bits, separate
// beyond; Inline past that count is an error that says why.
TEST(Ehyb, ExtraRowLayoutChoice) {
  EXPECT_TRUE(ehyb_er_inline(ErLayout::Auto, 1000, 5000));
  EXPECT_TRUE(ehyb_er_inline(ErLayout::Auto, kEhybInlineMaxRowExtra, kEhybInlineMaxNnz));
  EXPECT_FALSE(ehyb_er_inline(ErLayout::Auto, kEhybInlineMaxRowExtra + 1, 5000));
  EXPECT_FALSE(ehyb_er_inline(ErLayout::Auto, 1000, kEhybInlineMaxNnz + 1));
  EXPECT_TRUE(ehyb_er_inline(ErLayout::Inline, kEhybInlineMaxRowExtra, kEhybInlineMaxNnz + 1));
  EXPECT_FALSE(ehyb_er_inline(ErLayout::Separate, 1000, 5000));
  try {
    ehyb_er_inline(ErLayout::Inline, 70000, 5000);
    ADD_FAILURE() << "inline extra rows with 70000 in a row accepted";
  } catch (const FormatCannotHoldError& e) {
    EXPECT_NE(std::string(e.what()).find("70000"), std::string::npos) << e.what();
  }
}

// Inline extra rows, slice by slice: column-major and padded to the widest
// row where at least ehyb_padded_fill of those slots hold entries, else
// packed row after row (a few rows with 150 outside entries beside rows
// with none to six, and a last run of rows with exactly three each); rows
// in Algorithm 1's order inside each part; results right in both kernel
// paths and orders.
TEST(Ehyb, InlineExtraRowsPaddedOnlyWhereFull) {
  const int n = 4100;  // the last part ends in a partial slice
  HostCoo<double> c(n, n);
  for (int i = 0; i < n; ++i) {
    const int part_begin = i / 256 * 256;  // the contiguous parts of 2048-byte windows
    if (i >= 3072) {  // whatever the parts: the diagonal in, three entries out
      c.add(i, i, 4.0);
      for (int k = 0; k < 3; ++k) c.add(i, (i + 1000 + 31 * k) % n, 0.5 - k);
      continue;
    }
    for (int k = 0; k <= (i * 7) % 20; ++k) c.add(i, std::min(n - 1, part_begin + (i + k) % 256), 1.0 + k);
    for (int k = 0; k < (i * 5) % 7; ++k) c.add(i, (i + 1000 + 31 * k) % n, 0.5 - k);
    if (i % 97 == 0)
      for (int k = 0; k < 150; ++k) c.add(i, (part_begin + 1024 + 13 * k) % n, 0.25 * k);
  }
  const auto a = to_csr(c);
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable})
    for (double fill : {ConvertOptions{}.ehyb_padded_fill, 0.0, 2.0}) {
      auto o = small_windows(2048, k, Partitioner::Contiguous);
      o.ehyb_padded_fill = fill;
      const auto f = to_ehyb<double, Space>(a, o);
      ASSERT_TRUE(f.er_inline);
      EXPECT_GT(f.report.er_nnz, 150 * (3072 / 97));
      const auto start = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.er_start);
      const auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.er_count);
      const auto ew = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.er_width);
      const auto ecol = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.er_col);
      ASSERT_EQ(start.extent(0), f.slice_width.extent(0) + 1);
      ASSERT_EQ(count.extent(0), std::size_t(n));
      EXPECT_EQ(start(start.extent(0) - 1), f.report.er_slots);
      int padded = 0, packed = 0;
      const auto perm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
      const auto ps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.part_start);
      const auto pslice = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.part_slice);
      for (int q = 0; q < f.report.parts; ++q)  // a slice: 32 rows of its part (fewer at the part's end)
        for (int s = pslice(q); s < pslice(q + 1); ++s) {
          int sum = 0, widest = 0;
          for (int r = ps(q) + (s - pslice(q)) * 32; r < std::min(ps(q + 1), ps(q) + (s - pslice(q) + 1) * 32); ++r) {
            sum += count(r);
            widest = std::max<int>(widest, count(r));
          }
          const bool full = widest > 0 && sum >= o.ehyb_padded_fill * 32 * widest;
          ASSERT_EQ(ew(s), full ? widest : 0) << "slice " << s;
          ASSERT_EQ(start(s + 1) - start(s), full ? 32 * widest : sum) << "slice " << s;
          if (full) {
            ++padded;
            ASSERT_EQ(std::count(ecol.data() + start(s), ecol.data() + start(s + 1), -1), 32 * widest - sum) << s;
          } else {
            packed += sum > 0;
          }
        }
      auto in_part = [&](ordinal_t o, int q) {
        int m = 0;
        for (offset_t e = a.row_ptr[o]; e < a.row_ptr[o + 1]; ++e) {
          const int col = a.col_idx[e];
          m += std::find(perm.data() + ps(q), perm.data() + ps(q + 1), col) != perm.data() + ps(q + 1);
        }
        return m;
      };
      EXPECT_EQ(f.report.er_padded_slices, padded);
      EXPECT_EQ(padded > 0, fill < 1) << fill;  // 0: every slice with extra rows padded; 2: none
      EXPECT_EQ(packed > 0, fill > 0) << fill;
      for (int q = 0; q < f.report.parts; ++q)
        for (int r = ps(q); r + 1 < ps(q + 1); ++r) ASSERT_GE(in_part(perm(r), q), in_part(perm(r + 1), q)) << r;
      const std::string what = "fill " + std::to_string(fill) + ", kernel " + std::to_string(int(k));
      expect_matches(a, o, what);
      o.output_order = OutputOrder::Internal;
      expect_internal_order_matches(a, o, what + ", internal order");
    }
}

TEST(Ehyb, OptionErrors) {
  const auto a = generate<double>("lap2d:10");
  EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, small_windows(-1)), InvalidArgumentError);
  EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, small_windows(std::int64_t(1) << 40)), InvalidArgumentError);
  EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, small_windows(100)), InvalidArgumentError);  // < 32 values
  for (double fill : {-0.5, 2.5, std::nan("")}) {
    ConvertOptions o;
    o.ehyb_padded_fill = fill;
    EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, o), InvalidArgumentError) << fill;
  }
  EXPECT_THROW(Matrix<double>::convert(generate<double>("uniform:30:1:3:cols=40"), Format::Ehyb), FormatCannotHoldError);
}

namespace {
using kspmv_test::host_copy;
// Every array of two EHYB builds, bit for bit (values compared as bits).
template <class S>
void expect_same_ehyb(const EhybDevice<S, Space>& d, const EhybDevice<S, Space>& h, const std::string& what) {
  EXPECT_EQ(d.report.parts, h.report.parts) << what;
  EXPECT_EQ(d.report.window_rows, h.report.window_rows) << what;
  EXPECT_EQ(d.er_inline, h.er_inline) << what;
  EXPECT_EQ(host_copy<int>(d.new_to_old), host_copy<int>(h.new_to_old)) << what;
  EXPECT_EQ(host_copy<int>(d.part_start), host_copy<int>(h.part_start)) << what;
  EXPECT_EQ(host_copy<int>(d.part_slice), host_copy<int>(h.part_slice)) << what;
  EXPECT_EQ(host_copy<int>(d.slice_width), host_copy<int>(h.slice_width)) << what;
  EXPECT_EQ(host_copy<int>(d.slice_offset), host_copy<int>(h.slice_offset)) << what;
  EXPECT_EQ(host_copy<std::uint16_t>(d.ell_col), host_copy<std::uint16_t>(h.ell_col)) << what;
  EXPECT_EQ(host_copy<S>(d.ell_val), host_copy<S>(h.ell_val)) << what;
  EXPECT_EQ(host_copy<int>(d.er_start), host_copy<int>(h.er_start)) << what;
  EXPECT_EQ(host_copy<std::uint16_t>(d.er_count), host_copy<std::uint16_t>(h.er_count)) << what;
  EXPECT_EQ(host_copy<int>(d.er_width), host_copy<int>(h.er_width)) << what;
  EXPECT_EQ(host_copy<int>(d.er_col), host_copy<int>(h.er_col)) << what;
  EXPECT_EQ(host_copy<S>(d.er_val), host_copy<S>(h.er_val)) << what;
  EXPECT_EQ(d.er_slices, h.er_slices) << what;
  EXPECT_EQ(host_copy<int>(d.er_offset), host_copy<int>(h.er_offset)) << what;
  EXPECT_EQ(host_copy<int>(d.er_y), host_copy<int>(h.er_y)) << what;
  EXPECT_EQ(host_copy<int>(d.er_row_of), host_copy<int>(h.er_row_of)) << what;
  EXPECT_EQ(host_copy<int>(d.long_row_ptr), host_copy<int>(h.long_row_ptr)) << what;
  EXPECT_EQ(host_copy<int>(d.long_col), host_copy<int>(h.long_col)) << what;
  EXPECT_EQ(host_copy<S>(d.long_val), host_copy<S>(h.long_val)) << what;
  EXPECT_EQ(host_copy<int>(d.long_y), host_copy<int>(h.long_y)) << what;
  EXPECT_EQ(d.long_blocks, h.long_blocks) << what;
  EXPECT_EQ(host_copy<std::uint32_t>(d.extra_bits), host_copy<std::uint32_t>(h.extra_bits)) << what;
  EXPECT_EQ(d.longest_sliced, h.longest_sliced) << what;
  EXPECT_EQ(d.rows_in_order, h.rows_in_order) << what;
  EXPECT_EQ(d.report.ell_nnz, h.report.ell_nnz) << what;
  EXPECT_EQ(d.report.er_nnz, h.report.er_nnz) << what;
  EXPECT_EQ(d.report.er_rows, h.report.er_rows) << what;
  EXPECT_EQ(d.report.er_padded_slices, h.report.er_padded_slices) << what;
  EXPECT_EQ(d.report.long_rows, h.report.long_rows) << what;
  EXPECT_DOUBLE_EQ(d.report.er_separate_bytes, h.report.er_separate_bytes) << what;
  EXPECT_DOUBLE_EQ(d.report.bytes_per_nonzero, h.report.bytes_per_nonzero) << what;
}
// The build from a device CSR against the host build from the same
// matrix and options (o.partitioner: the cells, or a host partitioner whose
// parts the device build takes in).
template <class S>
void device_build_matches_host_build(const std::string& spec, const ConvertOptions& o) {
  const auto a = generate<S>(spec);
  const auto d = to_ehyb<S, Space>(upload_csr<S, Space>(a), o);
  const std::string what = spec + ", " + d.report.partitioner + (d.er_inline ? ", inline" : ", separate");
  EXPECT_EQ(d.report.built, std::string("kernels on ") + Space::name()) << what;
  if (o.partitioner == Partitioner::Cells)
    EXPECT_NE(d.report.partition_note.find("on the device"), std::string::npos) << d.report.partition_note;
  const auto h = to_ehyb<S, Space>(a, o);
  EXPECT_EQ(h.report.built, "host loops") << what;
  EXPECT_EQ(h.report.partitioner, d.report.partitioner) << what;
  if (o.partitioner != Partitioner::Cells) EXPECT_EQ(h.report.partition_note, d.report.partition_note) << what;
  expect_same_ehyb(d, h, what);
}
}  // namespace

// The device build lays out every slot as the host build does from the
// same parts: the same order, widths, padding, packed and padded inline
// extra rows, the separate extra-row layout, long rows, in both orders;
// from the cells (the default from a device CSR) and from the host
// partitioners' parts (METIS where the build has it, BFS, RCM,
// contiguous).
TEST(Ehyb, DeviceBuildMatchesHostBuildOfTheSameParts) {
  for (const char* spec : {"lap3d:16", "uniform:3000:0:25:seed=9", "powerlaw:4000:7:seed=2", "blockdiag:3000:7",
                           "banded:2500:20"}) {
    for (double fill : {0.0, 0.75, 2.0}) {
      for (OutputOrder order : {OutputOrder::Caller, OutputOrder::Internal}) {
        ConvertOptions o = small_windows(4096, KernelPath::Auto, Partitioner::Cells);
        o.ehyb_padded_fill = fill;
        o.output_order = order;
        o.ehyb_long_row = 24;  // long rows on the power-law and uniform rows
        device_build_matches_host_build<double>(spec, o);
        if (fill == 0.75 && order == OutputOrder::Caller) device_build_matches_host_build<float>(spec, o);
        if (fill != 0.75) continue;
        o.ehyb_er = ErLayout::Separate;
        device_build_matches_host_build<double>(spec, o);
        o.ehyb_er = ErLayout::Auto;
        std::vector<Partitioner> host_partitioners{Partitioner::Bfs, Partitioner::Rcm, Partitioner::Contiguous};
        if (KSPMV_HAVE_METIS) host_partitioners.push_back(Partitioner::Metis);
        for (Partitioner how : host_partitioners) {
          o.partitioner = how;
          device_build_matches_host_build<double>(spec, o);
          o.ehyb_er = ErLayout::Separate;
          device_build_matches_host_build<double>(spec, o);
          o.ehyb_er = ErLayout::Auto;
        }
      }
    }
  }
}

namespace {
// Values written along the slot walk into a build of other values give a
// build of these values, array for array, and read back along it they are
// the values again.
template <class S>
void walk_refreshes(const std::string& spec, const ConvertOptions& o, bool on_device, const std::string& what) {
  const auto a = generate<S>(spec);
  auto b = a;
  const auto v = kspmv_test::random_vector<S>(b.values.size(), 21);
  for (std::size_t k = 0; k < v.size(); ++k) b.values[k] = v[k] + (v[k] >= 0 ? S(0.5) : S(-0.5));
  const auto build = [&](const HostCsr<S>& m) {
    return on_device ? to_ehyb<S, Space>(upload_csr<S, Space>(m), o) : to_ehyb<S, Space>(m, o);
  };
  auto fa = build(a);
  const auto fb = build(b);
  const auto db = upload_csr<S, Space>(b);
  const auto walk = detail::slot_walk(fa, db.row_ptr);
  const auto plan = detail::walk_plan(Space(), walk);
  using Slots = typename ValueMap<S, Space>::Slots;
  const Slots slots = detail::concatenated_slots<S, Space>(detail::value_views(fa));
  detail::walk_slots(Space(), "test::refresh", plan, walk, detail::StoreAtSlot<Slots, decltype(db.values)>{slots, db.values});
  Kokkos::View<S*, Space::memory_space> back("back", b.values.size());
  detail::walk_slots(Space(), "test::read_back", plan, walk, detail::LoadFromSlot<Slots, decltype(back)>{slots, back});
  Space().fence();
  EXPECT_EQ(host_copy<S>(fa.ell_val), host_copy<S>(fb.ell_val)) << what;
  EXPECT_EQ(host_copy<S>(fa.er_val), host_copy<S>(fb.er_val)) << what;
  EXPECT_EQ(host_copy<S>(fa.long_val), host_copy<S>(fb.long_val)) << what;
  EXPECT_EQ(host_copy<S>(back), b.values) << what;
  EXPECT_EQ(plan.whole_rows, fa.report.long_rows == 0 && fa.longest_sliced <= detail::kRowSegment) << what;
  // The format's own refresh kernel (CUDA's tuned path, Auto) writes the
  // same bits into every slot; elsewhere it says it did nothing.
  auto fc = build(a);
  const Kokkos::View<const S*, Kokkos::LayoutLeft, Space::memory_space> new_values = db.values;
  const bool tuned = detail::tuned_refresh(Space(), fc, db.row_ptr, new_values);
  Space().fence();
  EXPECT_EQ(tuned, detail::on_cuda<Space>() && o.kernel == KernelPath::Auto) << what;
  if (tuned) {
    EXPECT_EQ(host_copy<S>(fc.ell_val), host_copy<S>(fb.ell_val)) << what << " (tuned)";
    EXPECT_EQ(host_copy<S>(fc.er_val), host_copy<S>(fb.er_val)) << what << " (tuned)";
    EXPECT_EQ(host_copy<S>(fc.long_val), host_copy<S>(fb.long_val)) << what << " (tuned)";
  } else {
    EXPECT_EQ(host_copy<S>(fc.ell_val), host_copy<S>(build(a).ell_val)) << what << " (untouched)";
  }
}
}  // namespace

// The slot walk (extra_bits telling a row's slice entries from its extra
// ones) refreshes every layout of both builds: inline extra rows padded
// and packed, the separate layout, both orders, long rows, and rows
// longer than a segment walked in segments.
TEST(Ehyb, SlotWalkRefreshesEveryLayout) {
  for (const char* spec : {"lap3d:12", "powerlaw:3000:9:seed=3", "uniform:2000:0:70:seed=5", "banded:1500:40"}) {
    for (bool on_device : {true, false}) {
      for (double fill : {0.0, 0.75, 2.0}) {
        for (OutputOrder order : {OutputOrder::Caller, OutputOrder::Internal}) {
          for (std::int64_t long_row : {std::int64_t(0), std::int64_t(24), std::int64_t(256)}) {
            ConvertOptions o = small_windows(4096, KernelPath::Auto, Partitioner::Cells);
            o.ehyb_padded_fill = fill;
            o.output_order = order;
            o.ehyb_long_row = long_row;
            const std::string what = std::string(spec) + (on_device ? " device" : " host") + " fill " +
                                     std::to_string(fill) + (order == OutputOrder::Caller ? " caller" : " internal") +
                                     " long_row " + std::to_string(long_row);
            walk_refreshes<double>(spec, o, on_device, what);
            if (fill == 0.75 && long_row == 24) {
              walk_refreshes<float>(spec, o, on_device, what + " (float)");
              o.ehyb_er = ErLayout::Separate;
              walk_refreshes<double>(spec, o, on_device, what + " separate");
            }
          }
        }
      }
    }
  }
}

// Through kspmv::Matrix from a device CSR: products and refreshes right,
// the cells said, and what the device build hands to the host build.
TEST(Ehyb, DeviceBuildProductsRefreshAndFallbacks) {
  const auto a = generate<double>("fem:box=6x6x6:p2:order=scrambled");
  const auto d = upload_csr<double, Space>(a);
  ConvertOptions o = small_windows(4096);
  o.partitioner = Partitioner::Auto;
  auto m = Matrix<double>::convert(d, Format::Ehyb, o);
  EXPECT_EQ(props(m)["partitioner"], "cells");
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.5, -0.5));
  auto b = a;
  for (auto& v : b.values) v = v * 0.5 + 1.0;
  m.update_values(Space(), upload_csr<double, Space>(b).values);
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(b, m, 1.0, 0.0));
  // The separate extra-row layout and a host partitioner's parts: built by
  // kernels too, products and refreshes right.
  const std::string kernels = std::string("kernels on ") + Space::name();
  for (auto [er, how] : {std::pair{ErLayout::Separate, Partitioner::Auto}, std::pair{ErLayout::Auto, Partitioner::Bfs},
                         std::pair{ErLayout::Separate, Partitioner::Rcm}}) {
    o.ehyb_er = er;
    o.partitioner = how;
    auto ms = Matrix<double>::convert(d, Format::Ehyb, o);
    const auto p = props(ms);
    EXPECT_EQ(p.at("er"), er == ErLayout::Separate ? "separate" : "inline");
    EXPECT_EQ(p.at("partitioner"), how == Partitioner::Bfs ? "bfs" : how == Partitioner::Rcm ? "rcm-contiguous" : "cells");
    EXPECT_EQ(p.at("built"), kernels);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, ms, 1.5, -0.5)) << p.at("er") << " " << p.at("partitioner");
    ms.update_values(Space(), upload_csr<double, Space>(b).values);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(b, ms, 1.0, 0.0)) << p.at("er") << " " << p.at("partitioner");
  }
  o.ehyb_er = ErLayout::Auto;
  // 1x1 matrices, one with no entries at all, and every row long.
  HostCoo<double> none(1, 1), empty(300, 300);
  HostCoo<double> all_long(64, 64);
  for (ordinal_t i = 0; i < 64; ++i)
    for (ordinal_t j = 0; j < 64; ++j) all_long.add(i, j, 1.0 + i + 0.01 * j);
  o.partitioner = Partitioner::Cells;
  for (const auto& t : {generate<double>("lap1d:1"), generate<double>("dense:1"), to_csr(none), to_csr(empty), to_csr(all_long)}) {
    ConvertOptions ol = o;
    ol.ehyb_long_row = 16;
    const auto m = Matrix<double>::convert(upload_csr<double, Space>(t), Format::Ehyb, ol);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(t, m, 1.0, 0.0)) << t.nrows << " rows, " << t.nnz();
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(t, m, -1.0, 2.0)) << t.nrows << " rows, " << t.nnz();
  }
}

