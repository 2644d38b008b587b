// csr-merge beyond the format-wide tests (test_formats.cpp, which run it
// on every generated and real matrix): the shapes merge-path splitting is
// for (one row holding most entries, mostly empty rows), units from one
// item to more than the matrix, rows crossing many units, the alpha/beta
// cases on all of them, both precisions and both kernel paths, and
// bit-identical repeats.
#include <cstring>

#include "kspmv/model/model.hpp"
#include "kspmv/spmv.hpp"
#include "test_support.hpp"

using namespace kspmv;

namespace {

const std::vector<std::pair<double, double>> kAlphaBeta = {
    {1.0, 0.0}, {-1.5, 0.0}, {1.0, 1.0}, {0.5, 2.0}, {2.0, -1.0}, {0.0, 3.0}, {0.0, 0.0}};

ConvertOptions merge_options(KernelPath k, std::int64_t unit_items = 0, int panels = 0) {
  ConvertOptions o;
  o.kernel = k;
  o.merge_unit_items = unit_items;
  o.merge_column_panels = panels;
  return o;
}

using kspmv_test::property;

// `rows` rows of which `big_row` holds `big` entries (columns spread over
// `cols`); every other row has one entry, except every `empty_every`-th
// row (when > 0), which is empty.
template <class Scalar>
HostCsr<Scalar> one_big_row(ordinal_t rows, ordinal_t cols, ordinal_t big_row, std::int64_t big, int empty_every) {
  HostCsr<Scalar> a(rows, cols);
  Rng rng(11);
  for (ordinal_t i = 0; i < rows; ++i) {
    if (i == big_row) {
      for (std::int64_t j = 0; j < big; ++j) {
        a.col_idx.push_back(static_cast<ordinal_t>(j * cols / big));
        a.values.push_back(static_cast<Scalar>(0.5 + rng.uniform()));
      }
    } else if (empty_every <= 0 || i % empty_every != 0) {
      a.col_idx.push_back(static_cast<ordinal_t>((std::int64_t(i) * 7919) % cols));
      a.values.push_back(static_cast<Scalar>(rng.uniform() - 0.5));
    }
    a.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<offset_t>(a.col_idx.size());
  }
  a.validate();
  return a;
}

// 90% of the rows empty; the others 1 to 40 entries, a few 3000.
template <class Scalar>
HostCsr<Scalar> mostly_empty(ordinal_t rows) {
  HostCsr<Scalar> a(rows, rows);
  Rng rng(5);
  for (ordinal_t i = 0; i < rows; ++i) {
    if (i % 10 == 3) {
      const std::int64_t len = i % 1000 == 3 ? 3000 : 1 + static_cast<std::int64_t>(rng.uniform() * 40);
      std::vector<ordinal_t> c;
      for (std::int64_t j = 0; j < len; ++j) c.push_back(static_cast<ordinal_t>(rng.uniform() * rows));
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      for (ordinal_t j : c) {
        a.col_idx.push_back(j);
        a.values.push_back(static_cast<Scalar>(rng.uniform() * 2 - 1));
      }
    }
    a.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<offset_t>(a.col_idx.size());
  }
  a.validate();
  return a;
}

class CsrMergeTest : public ::testing::TestWithParam<KernelPath> {
 protected:
  // Every (alpha, beta) case on one conversion (y poisoned with NaN where
  // beta == 0: a row left unwritten or a y read fails).
  template <class Scalar>
  void check_all(const HostCsr<Scalar>& a, const std::string& what, std::int64_t unit_items = 0, int panels = 0) {
    const auto m = Matrix<Scalar>::convert(a, Format::CsrMerge, merge_options(GetParam(), unit_items, panels));
    ASSERT_EQ(m.format(), Format::CsrMerge);
    for (const auto& [al, be] : kAlphaBeta)
      EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, static_cast<Scalar>(al), static_cast<Scalar>(be)))
          << what << " unit_items=" << unit_items << " panels=" << panels;
  }
};

}  // namespace

TEST_P(CsrMergeTest, OneRowHoldsMostEntries) {
  // 200k of 210k entries in one row: that row crosses most units, every
  // other row is one item.
  for (ordinal_t big_row : {0, 4999, 9999}) {
    const auto a = one_big_row<double>(10000, 250000, big_row, 200000, 0);
    ASSERT_EQ(a.nnz(), 209999);
    check_all(a, "big row " + std::to_string(big_row));
    const auto m = Matrix<double>::convert(a, Format::CsrMerge, merge_options(GetParam()));
    const int units = std::stoi(property(m.properties(), "units"));
    EXPECT_GT(units, 10);
    EXPECT_GE(std::stoi(property(m.properties(), "rows_spanning_units")), 1);
  }
  check_all(one_big_row<float>(10000, 250000, 5000, 200000, 0), "big row, float");
  // The same with a third of the other rows empty.
  check_all(one_big_row<double>(12000, 250000, 6001, 200000, 3), "big row among empty ones");
}

TEST_P(CsrMergeTest, NinetyPercentEmptyRows) {
  check_all(mostly_empty<double>(50000), "90% empty");
  check_all(mostly_empty<float>(50000), "90% empty, float");
  // Units of a few items: runs of empty rows fill whole units.
  check_all(mostly_empty<double>(3000), "90% empty, small units", 5);
  // Nothing but empty rows.
  check_all(HostCsr<double>(5000, 300), "no entries at all");
  check_all(HostCsr<double>(5000, 300), "no entries at all, units of 3", 3);
}

TEST_P(CsrMergeTest, SmallerThanOneUnit) {
  const auto a = kspmv_test::from_triplets<double>(3, 4, {{0, 0, 1.0}, {0, 3, 2.0}, {2, 1, -1.0}});
  check_all(a, "3x4");
  check_all(kspmv_test::from_triplets<float>(3, 4, {{0, 0, 1.0}, {0, 3, 2.0}, {2, 1, -1.0}}), "3x4 float");
  const auto m = Matrix<double>::convert(a, Format::CsrMerge, merge_options(GetParam()));
  EXPECT_EQ(property(m.properties(), "units"), "1");
  EXPECT_EQ(property(m.properties(), "rows_spanning_units"), "0");
  // A unit larger than the whole path: one unit as well.
  check_all(generate<double>("powerlaw:500:6"), "unit beyond the matrix", 1 << 20);
}

// Units from one item upwards on matrices with long and empty rows: every
// way a unit boundary can fall (before a row's first entry, inside it, on
// its end, inside a run of empty rows), and rows crossing many units.
TEST_P(CsrMergeTest, RowsSpanningSeveralUnits) {
  HostCoo<double> c(40, 700);
  for (int j = 0; j < 700; ++j) c.add(3, j, 1.0 + j % 3);     // 700 entries
  for (int j = 0; j < 65; ++j) c.add(4, j * 10, -0.25 * j);  // 65 entries right after
  for (int i = 10; i < 30; i += 2) c.add(i, i, 2.0);         // short rows between empty ones
  for (int j = 0; j < 300; ++j) c.add(39, 699 - j, 0.5);     // the last row long
  const auto a = to_csr(c);
  // On a GPU, 400 and 600 give units of 2 and 3 items a thread (the tuned
  // kernel is built for 1 to 4); 1000 and 5000 give 4.
  for (std::int64_t items : {1, 2, 3, 7, 16, 31, 64, 256, 400, 600, 1000, 5000}) {
    check_all(a, "long rows", items);
    const auto af = convert_scalar<float>(a);
    check_all(af, "long rows, float", items);
  }
  for (const char* spec : {"rmat:12:8", "powerlaw:4000:10:seed=4", "lap2d:40", "uniform:300:0:80:cols=900"})
    for (std::int64_t items : {1, 5, 100, 0}) check_all(generate<double>(spec), spec, items);
  // Row 3 crosses about 700 / 7 units at 7 items a unit (on a GPU units
  // are whole items a thread: 256 at least).
  const auto m = Matrix<double>::convert(a, Format::CsrMerge, merge_options(GetParam(), 7));
  if (property(m.properties(), "items_per_unit") == "7") {
    EXPECT_EQ(std::stoi(property(m.properties(), "units")), (a.nrows + a.nnz() + 6) / 7);
    EXPECT_GE(std::stoi(property(m.properties(), "rows_spanning_units")), 3);
  }
}

TEST_P(CsrMergeTest, AlphaZeroOnlyScalesAndBetaZeroNeverReadsY) {
  const auto a = one_big_row<double>(3000, 9000, 100, 8000, 4);
  const auto m = Matrix<double>::convert(a, Format::CsrMerge, merge_options(GetParam(), 64));
  using M = Matrix<double>;
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 3);
  auto dx = detail::upload<double, M::memory_space>(x, "x");
  // beta == 0: y full of NaN, every row overwritten (empty ones with 0).
  std::vector<double> nan(static_cast<std::size_t>(a.nrows), std::numeric_limits<double>::quiet_NaN());
  auto dy = detail::upload<double, M::memory_space>(nan, "y");
  m.apply(2.0, dx, 0.0, dy);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
  std::vector<double> y(hy.data(), hy.data() + a.nrows);
  const std::vector<double> zero(y.size(), 0.0);
  EXPECT_TRUE(check_spmv(a, 2.0, x, 0.0, zero, y).ok);
  for (ordinal_t i = 0; i < a.nrows; ++i)
    if (a.row_length(i) == 0) EXPECT_EQ(y[i], 0.0) << i;
  // alpha == 0: y = beta * y.
  const auto y0 = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.nrows), 4);
  dy = detail::upload<double, M::memory_space>(y0, "y");
  m.apply(0.0, dx, -3.0, dy);
  Kokkos::deep_copy(hy, dy);
  for (ordinal_t i = 0; i < a.nrows; ++i) EXPECT_EQ(hy(i), -3.0 * y0[i]) << i;
  // beta != 0: empty rows get exactly beta * y.
  dy = detail::upload<double, M::memory_space>(y0, "y");
  m.apply(1.0, dx, 0.5, dy);
  Kokkos::deep_copy(hy, dy);
  for (ordinal_t i = 0; i < a.nrows; ++i)
    if (a.row_length(i) == 0) EXPECT_EQ(hy(i), 0.5 * y0[i]) << i;
}

// The same product twice, and through a handle's own scratch, gives the
// same bits: no atomics, the fix-up in a fixed order.
TEST_P(CsrMergeTest, RepeatsGiveIdenticalBits) {
  using M = Matrix<double>;
  const auto a = one_big_row<double>(20000, 300000, 777, 250000, 5);
  for (std::int64_t items : {0, 33}) {
    const auto m = M::convert(a, Format::CsrMerge, merge_options(GetParam(), items));
    const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 21);
    const auto y0 = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.nrows), 22);
    auto dx = detail::upload<double, M::memory_space>(x, "x");
    auto y1 = detail::upload<double, M::memory_space>(y0, "y1");
    auto y2 = detail::upload<double, M::memory_space>(y0, "y2");
    auto y3 = detail::upload<double, M::memory_space>(y0, "y3");
    m.apply(1.25, dx, 0.75, y1);
    m.apply(1.25, dx, 0.75, y2);
    SpmvHandle<double> h;
    kspmv::spmv(M::execution_space(), h, "N", 1.25, m, dx, 0.75, y3);
    EXPECT_GT(h.scratch_bytes(), 0u);
    auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
    auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y2);
    auto h3 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y3);
    EXPECT_EQ(0, std::memcmp(h1.data(), h2.data(), sizeof(double) * a.nrows)) << items;
    EXPECT_EQ(0, std::memcmp(h1.data(), h3.data(), sizeof(double) * a.nrows)) << items;
    EXPECT_TRUE(check_spmv(a, 1.25, x, 0.75, y0, std::vector<double>(h1.data(), h1.data() + a.nrows)).ok);
  }
}

// Column panels (what a GPU whose L2 x outgrows gets; asked for here):
// panels with no entries, rows with none in some panels, a long row
// crossing every panel and many units, fewer columns than panels,
// rectangular shapes, units of a few items, both precisions.
TEST_P(CsrMergeTest, ColumnPanels) {
  for (int panels : {2, 3, 7}) {
    const std::string in = " in " + std::to_string(panels) + " panels";
    for (const char* spec : {"rmat:12:8", "powerlaw:4000:10:seed=4", "lap2d:40", "uniform:300:0:80:cols=900",
                             "uniform:900:0:30:cols=200"})
      for (std::int64_t items : {0, 5}) check_all(generate<double>(spec), spec + in, items, panels);
    check_all(convert_scalar<float>(generate<double>("rmat:12:8")), "rmat float" + in, 0, panels);
    check_all(one_big_row<double>(12000, 250000, 6001, 200000, 3), "big row" + in, 0, panels);
    check_all(one_big_row<double>(3000, 9000, 100, 8000, 4), "big row, small units" + in, 64, panels);
    check_all(mostly_empty<double>(20000), "90% empty" + in, 0, panels);
    check_all(HostCsr<double>(500, 300), "no entries" + in, 0, panels);
    // Entries only in the first fifth of the columns: the later panels empty.
    HostCoo<double> c(400, 1000);
    for (int i = 0; i < 400; ++i)
      for (int j = 0; j < 5; ++j) c.add(i, (i * 7 + j * 31) % 200, 1.0 + j);
    check_all(to_csr(c), "later panels empty" + in, 0, panels);
  }
  const auto a = kspmv_test::from_triplets<double>(3, 4, {{0, 0, 1.0}, {0, 3, 2.0}, {2, 1, -1.0}});
  check_all(a, "3x4 in at most 4 panels", 0, 7);
  const auto m = Matrix<double>::convert(a, Format::CsrMerge, merge_options(GetParam(), 0, 7));
  EXPECT_EQ(property(m.properties(), "column_panels"), "4");
  const auto g = generate<double>("powerlaw:4000:10:seed=4");
  const auto m3 = Matrix<double>::convert(g, Format::CsrMerge, merge_options(GetParam(), 0, 3));
  EXPECT_EQ(property(m3.properties(), "column_panels"), "3");
  EXPECT_GT(std::stoi(property(m3.properties(), "units")), 2);
}

// Panels hold the entries in another order: a refresh goes through a
// map (4 bytes a nonzero) and gives what a fresh conversion does; mode T
// and several columns agree with the reference too.
TEST_P(CsrMergeTest, ColumnPanelsRefreshTransposeAndColumns) {
  using M = Matrix<double>;
  using mem = M::memory_space;
  const auto a = generate<double>("powerlaw:3000:8:seed=9");
  auto m = M::convert(a, Format::CsrMerge, merge_options(GetParam(), 0, 3));
  EXPECT_EQ(m.value_map_bytes(), 4u * static_cast<std::size_t>(a.nnz()));
  HostCsr<double> b = a;
  for (std::size_t k = 0; k < b.values.size(); ++k) b.values[k] = a.values[k] * 3 - 1;
  m.update_values(detail::upload<double, mem>(b.values, "v"));
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(b, m, 1.0, 0.5));
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(b, m, 2.0, 0.0));
  // Mode T.
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.nrows), 31);
  const auto y0 = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 32);
  M::vector_type dx = detail::upload<double, mem>(x, "x"), dy = detail::upload<double, mem>(y0, "y");
  kspmv::spmv("T", 1.5, m, dx, -0.5, dy);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
  EXPECT_TRUE(check_spmv(transpose(b), 1.5, x, -0.5, y0, std::vector<double>(hy.data(), hy.data() + a.ncols)).ok);
  // Three columns, column-major (the fused kernel's X staged row-major).
  const int k = 3;
  Kokkos::View<double**, Kokkos::LayoutLeft, mem> X("X", a.ncols, k), Y("Y", a.nrows, k);
  std::vector<std::vector<double>> xs, ys;
  for (int j = 0; j < k; ++j) {
    xs.push_back(kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 40 + j));
    ys.push_back(kspmv_test::random_vector<double>(static_cast<std::size_t>(a.nrows), 50 + j));
    Kokkos::deep_copy(Kokkos::subview(X, Kokkos::ALL, j), detail::upload<double, mem>(xs[j], "xj"));
    Kokkos::deep_copy(Kokkos::subview(Y, Kokkos::ALL, j), detail::upload<double, mem>(ys[j], "yj"));
  }
  kspmv::spmv("N", 0.75, m, X, 2.0, Y);
  for (int j = 0; j < k; ++j) {
    Kokkos::View<double*, mem> yj("yj", a.nrows);
    Kokkos::deep_copy(yj, Kokkos::subview(Y, Kokkos::ALL, j));
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yj);
    EXPECT_TRUE(check_spmv(b, 0.75, xs[j], 2.0, ys[j], std::vector<double>(h.data(), h.data() + a.nrows)).ok) << j;
  }
}

INSTANTIATE_TEST_SUITE_P(BothPaths, CsrMergeTest, ::testing::Values(KernelPath::Auto, KernelPath::Portable),
                         [](const ::testing::TestParamInfo<KernelPath>& i) {
                           return std::string(i.param == KernelPath::Auto ? "auto" : "portable");
                         });

TEST(CsrMerge, KeepsTheCsrOrderAndRefreshesByCopy) {
  const auto a = generate<double>("powerlaw:3000:8");
  auto m = Matrix<double>::convert(a, Format::CsrMerge);
  EXPECT_EQ(m.value_map_bytes(), 0u);
  std::vector<double> v(a.values.size());
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = a.values[k] * 3 - 1;
  m.update_values(detail::upload<double, Matrix<double>::memory_space>(v, "v"));
  HostCsr<double> b = a;
  b.values = v;
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(b, m, 1.0, 0.5));
}

TEST(CsrMerge, UnitItemsRule) {
  // GPU: whole items a thread, a full wave of 8 blocks an SM before a
  // thread takes two, at most 4; host: 256 to 4096 items.
  EXPECT_EQ(merge_unit_items(1000, 132, true), 256);
  EXPECT_EQ(merge_unit_items(256LL * 132 * 8, 132, true), 256);
  EXPECT_EQ(merge_unit_items(256LL * 132 * 8 + 1, 132, true), 512);
  EXPECT_EQ(merge_unit_items(60'000'000, 132, true), 1024);
  EXPECT_EQ(merge_unit_items(1000, 132, true, 7), 256);
  EXPECT_EQ(merge_unit_items(1000, 132, true, 300), 512);
  EXPECT_EQ(merge_unit_items(1000, 132, true, 1 << 20), 1024);
  EXPECT_EQ(merge_unit_items(1000, 1, false), 256);
  EXPECT_EQ(merge_unit_items(100'000, 1, false), 4096);
  EXPECT_EQ(merge_unit_items(100'000, 1, false, 7), 7);
  EXPECT_EQ(merge_units(0, 256), 0);
  EXPECT_EQ(merge_units(257, 256), 2);
  EXPECT_THROW(
      Matrix<double>::convert(generate<double>("lap1d:10"), Format::CsrMerge, merge_options(KernelPath::Auto, -1)),
      InvalidArgumentError);
}

TEST(CsrMerge, ColumnPanelsRule) {
  // None on a host, where L2 holds x, or where a row's window of x fits a
  // panel's share of L2; else slices of x of at most 45% of L2: a 64 MB x
  // on a 50 MB L2 in three.
  const std::int64_t l2 = 50 * 1024 * 1024;
  const double wide = 4e6, unknown = -1;
  EXPECT_EQ(merge_column_panels(8'000'000, 8, 0, wide), 1);
  EXPECT_EQ(merge_column_panels(3'000'000, 8, l2, wide), 1);
  EXPECT_EQ(merge_column_panels(8'000'000, 4, l2, wide), 1);
  EXPECT_EQ(merge_column_panels(8'000'000, 8, l2, wide), 3);
  EXPECT_EQ(merge_column_panels(8'000'000, 8, l2, unknown), 3);
  EXPECT_EQ(merge_column_panels(16'000'000, 8, l2, wide), 6);
  // A stencil's rows (lap3d:200: +-40,000 columns) gather from a narrow
  // window.
  EXPECT_EQ(merge_column_panels(8'000'000, 8, l2, 80'001), 1);
  EXPECT_EQ(merge_column_panels(8'000'000, 8, l2, 2'000'000), 1);
  EXPECT_EQ(merge_column_panels(8'000'000, 8, l2, 3'000'000), 3);
  // Asked for: at most one a column and kMergeMaxColumnPanels.
  EXPECT_EQ(merge_column_panels(8'000'000, 8, 0, wide, 5), 5);
  EXPECT_EQ(merge_column_panels(10, 8, l2, wide, 100), 10);
  EXPECT_EQ(merge_column_panels(1'000'000, 8, l2, wide, 1000), kMergeMaxColumnPanels);
  EXPECT_EQ(merge_column_panels(0, 8, l2, wide, 3), 1);
  // From a matrix: a host has no L2 figure (none); on a device of 4 KB of
  // L2, R-MAT's rows, reaching across x, want panels of x slices of at
  // most 1,843 bytes; a 2-D stencil's rows (a window of 201 columns) none;
  // rows of one entry each at random columns (a window of one entry's
  // reach from the diagonal) want panels too.
  using D = DeviceCsr<double, Kokkos::DefaultExecutionSpace>;
  const D rmat = upload_csr<double, Kokkos::DefaultExecutionSpace>(generate<double>("rmat:12:8"));
  const D lap = upload_csr<double, Kokkos::DefaultExecutionSpace>(generate<double>("lap2d:100"));
  DeviceFigures small;
  small.l2_bytes = 4096;
  EXPECT_EQ(csr_merge_column_panels(rmat, ConvertOptions{}, DeviceFigures{}), 1);
  EXPECT_EQ(csr_merge_column_panels(rmat, ConvertOptions{}, small), 18);
  EXPECT_EQ(csr_merge_column_panels(lap, ConvertOptions{}, small), 1);
  HostCoo<double> scattered(4096, 4096);
  for (int i = 0; i < 4096; ++i) scattered.add(i, (i * 2654435761u) % 4096, 1.0);
  const D one_each = upload_csr<double, Kokkos::DefaultExecutionSpace>(to_csr(scattered));
  EXPECT_EQ(csr_merge_column_panels(one_each, ConvertOptions{}, small), 18);
  ConvertOptions two;
  two.merge_column_panels = 2;
  EXPECT_EQ(csr_merge_column_panels(lap, two, DeviceFigures{}), 2);
  // Products of several columns expected: none by the rule, what is asked
  // for still.
  ConvertOptions columns;
  columns.expected_vectors = 8;
  EXPECT_EQ(csr_merge_column_panels(rmat, columns, small), 1);
  columns.merge_column_panels = 3;
  EXPECT_EQ(csr_merge_column_panels(rmat, columns, small), 3);
  ConvertOptions bad;
  bad.merge_column_panels = -1;
  EXPECT_THROW(Matrix<double>::convert(generate<double>("lap1d:10"), Format::CsrMerge, bad), InvalidArgumentError);
}

// Where csr-merge builds column panels (asked for here; on a device the
// rule's own count comes from its L2), auto takes it with no pattern
// figures and nothing else timed, and A^T of a pattern that is not
// symmetric is csr-merge by the same rule; on a host the model ranks as
// ever (no measuring there).
TEST(CsrMerge, AutoAndTransposeTakePanelledMergeUnranked) {
  using M = Matrix<double>;
  using mem = M::memory_space;
  const auto a = generate<double>("powerlaw:3000:8:seed=9");
  ConvertOptions o;
  o.merge_column_panels = 3;
  const M m = M::convert(a, Format::Auto, o);
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.5));
  const std::string why = property(m.properties(), "picked_by");
  const bool host = detail::is_host_space<M::execution_space>();
  if (!host) {
    EXPECT_EQ(m.format(), Format::CsrMerge);
    EXPECT_EQ(property(m.properties(), "column_panels"), "3");
    EXPECT_NE(why.find("3 column panels"), std::string::npos) << why;
    EXPECT_EQ(why.find("; pattern figures"), std::string::npos) << why;
  } else {
    EXPECT_NE(why.find("; pattern figures"), std::string::npos) << why;
  }
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.nrows), 61);
  const auto y0 = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 62);
  M::vector_type dx = detail::upload<double, mem>(x, "x"), dy = detail::upload<double, mem>(y0, "y");
  kspmv::spmv("T", -0.5, m, dx, 2.0, dy);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
  EXPECT_TRUE(check_spmv(transpose(a), -0.5, x, 2.0, y0, std::vector<double>(hy.data(), hy.data() + a.ncols)).ok);
  EXPECT_FALSE(m.transpose_shares_pattern());
  const M& t = m.transposed(M::execution_space());
  if (!host) {
    EXPECT_EQ(t.format(), Format::CsrMerge);
    EXPECT_EQ(property(t.properties(), "column_panels"), "3");
  }
  // Named formats keep their panels' option for A^T too.
  const M c = M::convert(a, Format::Csr, o);
  const M& ct = c.transposed(M::execution_space());
  if (!host) EXPECT_EQ(ct.format(), Format::CsrMerge);
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(transpose(a), ct, 1.0, 0.5));
}

// The model: its chain is a thread's share of a unit, not the longest row
// (csr-vector's grows with it).
TEST(CsrMerge, ModelChainIgnoresLongRows) {
  const ModelHardware hw;
  const auto flat = pattern_stats(generate<double>("powerlaw:100000:8"), 8, hw);
  const auto spiky = pattern_stats(one_big_row<double>(100000, 400000, 5, 300000, 0), 8, hw);
  const auto ef = estimate(Format::CsrMerge, flat, 8, hw), es = estimate(Format::CsrMerge, spiky, 8, hw);
  // A thread's items (at most 4), and the fix-up lane's share of the
  // units the long row crosses (300000 / 512 / 32: 19 on 132 SMs).
  EXPECT_LE(ef.chain_elements, 4 + 1);
  EXPECT_LE(es.chain_elements, 4 + 20);
  EXPECT_GT(estimate(Format::CsrVector, spiky, 8, hw).chain_elements, 1000);
  EXPECT_EQ(es.launches, 2);
  EXPECT_TRUE(es.feasible);
  // COO's bytes with row offsets for the row indices, plus each unit's
  // partition (2 ints), crossing rows (3 ints) and head and tail (written
  // and read back).
  const std::int64_t items = spiky.rows.nrows + spiky.rows.nnz;
  const double units = double(merge_units(items, merge_unit_items(items, hw.processors, true)));
  const double coo = estimate(Format::Coo, spiky, 8, hw).bytes;
  EXPECT_NEAR(es.bytes, coo - 4.0 * double(spiky.rows.nnz) + 4.0 * (100000 + 1) + units * (4 * 8 + 5 * 4), 1e-6 * coo);
}
