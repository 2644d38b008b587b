// kspmv::spmv, the Kokkos Kernels-style call: modes N/T/C/H, rank-1 and
// rank-2 views in both layouts, alpha/beta cases, for every format and
// kernel path, against the host reference; A^T built on the device is
// deterministic and refreshed by update_values; bad calls are typed errors
// that change nothing.
#include <algorithm>
#include <cstring>

#include "kspmv/core/transpose.hpp"
#include "kspmv/spmv.hpp"
#include "test_support.hpp"

using namespace kspmv;

namespace {

template <class Scalar, class Layout>
using block = Kokkos::View<Scalar**, Layout, typename Matrix<Scalar>::memory_space>;

template <class Scalar, class Layout>
block<Scalar, Layout> to_device(const std::vector<std::vector<Scalar>>& cols, std::int64_t rows) {
  block<Scalar, Layout> v("v", rows, cols.size());
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t j = 0; j < cols.size(); ++j)
    for (std::int64_t i = 0; i < rows; ++i) h(i, j) = cols[j][i];
  Kokkos::deep_copy(v, h);
  return v;
}

template <class V>
std::vector<typename V::non_const_value_type> column_of(const V& v, std::size_t j) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<typename V::non_const_value_type> c(v.extent(0));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = h(i, j);
  return c;
}

template <class Scalar>
std::vector<std::vector<Scalar>> random_columns(std::int64_t rows, int k, std::uint64_t seed, bool nan = false) {
  std::vector<std::vector<Scalar>> c;
  for (int j = 0; j < k; ++j) {
    c.push_back(kspmv_test::random_vector<Scalar>(static_cast<std::size_t>(rows), seed + 17 * j));
    if (nan)
      for (auto& v : c.back()) v = std::numeric_limits<Scalar>::quiet_NaN();
  }
  return c;
}

// Y = alpha op(A) X + beta Y through kspmv::spmv, each column checked
// against the reference on A or its host transpose.
template <class Scalar, class Layout>
::testing::AssertionResult mode_matches_reference(const HostCsr<Scalar>& a, const HostCsr<Scalar>& at,
                                                  const Matrix<Scalar>& m, const char* mode, int k, Scalar alpha,
                                                  Scalar beta) {
  const bool t = mode[0] == 'T' || mode[0] == 'H';
  const HostCsr<Scalar>& op = t ? at : a;
  const auto xs = random_columns<Scalar>(op.ncols, k, 5);
  const auto y0 = random_columns<Scalar>(op.nrows, k, 9, beta == Scalar(0));
  const auto x = to_device<Scalar, Layout>(xs, op.ncols);
  const auto y = to_device<Scalar, Layout>(y0, op.nrows);
  if (k == 1) {
    // Rank 1: the first column as its own view.
    auto x1 = Kokkos::subview(x, Kokkos::ALL, 0);
    auto y1 = Kokkos::subview(y, Kokkos::ALL, 0);
    kspmv::spmv(mode, alpha, m, x1, beta, y1);
  } else {
    typename block<Scalar, Layout>::const_type xc = x;
    kspmv::spmv(mode, alpha, m, xc, beta, y);
  }
  Kokkos::fence();
  for (int j = 0; j < k; ++j) {
    const auto c = check_spmv(op, alpha, xs[j], beta, y0[j], column_of(y, j));
    if (!c.ok)
      return ::testing::AssertionFailure() << m.name() << " mode " << mode << " k=" << k << " column " << j
                                           << " alpha=" << alpha << " beta=" << beta << ": " << c.message;
  }
  return ::testing::AssertionSuccess();
}

template <class Scalar>
std::vector<Scalar> transpose_product(const Matrix<Scalar>& m, std::uint64_t seed) {
  using V = typename Matrix<Scalar>::vector_type;
  const auto x = kspmv_test::random_vector<Scalar>(static_cast<std::size_t>(m.nrows()), seed);
  V dx = detail::upload<Scalar, typename Matrix<Scalar>::memory_space>(x, "x");
  V dy("y", m.ncols());
  kspmv::spmv("T", Scalar(1), m, dx, Scalar(0), dy);
  Kokkos::fence();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
  return std::vector<Scalar>(h.data(), h.data() + h.extent(0));
}

using kspmv_test::same_bits;

}  // namespace

class SpmvOperatorTest : public ::testing::TestWithParam<kspmv_test::FormatCase> {
 protected:
  Format format() const { return GetParam().format; }
  ConvertOptions options() const { return kspmv_test::test_options(GetParam().kernel); }
  bool holds(const HostCsr<double>& a) const { return kspmv_test::format_holds(format(), a); }

  template <class Scalar>
  void check_modes(const HostCsr<Scalar>& a, const std::string& what) {
    const auto m = Matrix<Scalar>::convert(a, format(), options());
    const auto at = transpose(a);
    const std::pair<Scalar, Scalar> ab[] = {{Scalar(1), Scalar(0)}, {Scalar(2), Scalar(-0.5)}, {Scalar(0), Scalar(3)}};
    for (const char* mode : {"N", "T", "C", "H"})
      for (int k : {1, 2, 3, 8, 17})
        for (const auto& [alpha, beta] : ab) {
          EXPECT_TRUE((mode_matches_reference<Scalar, Kokkos::LayoutLeft>(a, at, m, mode, k, alpha, beta))) << what;
          EXPECT_TRUE((mode_matches_reference<Scalar, Kokkos::LayoutRight>(a, at, m, mode, k, alpha, beta)))
              << what << " (LayoutRight)";
        }
  }
};

TEST_P(SpmvOperatorTest, ModesLayoutsAndColumnsMatchTheReference) {
  std::vector<std::tuple<int, int, double>> rect;
  Rng rng(3);
  for (int e = 0; e < 400; ++e)
    rect.emplace_back(static_cast<int>(rng.uniform() * 60), static_cast<int>(rng.uniform() * 97), rng.uniform() - 0.5);
  const std::pair<std::string, HostCsr<double>> cases[] = {
      {"lap3d:6", generate<double>("lap3d:6")},
      {"powerlaw:700:6", generate<double>("powerlaw:700:6")},
      {"rectangular 60x97", kspmv_test::from_triplets<double>(60, 97, rect)},
  };
  for (const auto& [what, a] : cases) {
    if (!holds(a)) continue;
    check_modes(a, what);
    check_modes(convert_scalar<float>(a), what + " (float)");
  }
}

// A^T is built with a fixed order: two conversions, the same bits; after
// update_values, the bits of a fresh conversion of the new values.
TEST_P(SpmvOperatorTest, TransposeIsDeterministicAndRefreshed) {
  const auto a = generate<double>("rmat:9:6");
  if (!holds(a)) GTEST_SKIP();
  auto m = Matrix<double>::convert(a, format(), options());
  EXPECT_FALSE(m.transpose_built());
  const auto first = transpose_product(m, 4);
  EXPECT_TRUE(m.transpose_built());
  EXPECT_GT(m.transpose_bytes(), 0u);
  EXPECT_TRUE(same_bits(first, transpose_product(Matrix<double>::convert(a, format(), options()), 4)));
  HostCsr<double> b = a;
  for (std::size_t k = 0; k < b.values.size(); ++k) b.values[k] = 1.0 + double(k % 13) / 7;
  m.update_values(detail::upload<double, Matrix<double>::memory_space>(b.values, "b"));
  EXPECT_TRUE(same_bits(transpose_product(m, 6), transpose_product(Matrix<double>::convert(b, format(), options()), 6)));
  // Built at conversion: the same bits as built on first use.
  auto opt = options();
  opt.transpose = TransposeBuild::AtConversion;
  const auto eager = Matrix<double>::convert(b, format(), opt);
  EXPECT_TRUE(eager.transpose_built());
  EXPECT_TRUE(same_bits(transpose_product(eager, 6), transpose_product(m, 6)));
}

// A structurally symmetric A whose values are not: A^T keeps A's format
// and shares its layout (values and a map of its own), and is right
// against the host transpose, in both precisions, after refreshes too: on
// a stencil, on a power-law graph made symmetric, on an arrow (a row of
// more than kMirrorRowMax entries), and from a device CSR with duplicates
// (summed at build and again on refresh). One entry short of symmetric,
// A^T is built from its own CSR and is right as well.
TEST_P(SpmvOperatorTest, SymmetricPatternTransposeSharesALayout) {
  using M = Matrix<double>;
  using mem = M::memory_space;
  Rng rng(11);
  auto with_new_values = [&](HostCsr<double> a) {
    for (auto& v : a.values) v = rng.uniform() - 0.5;
    return a;
  };
  const auto graph = generate<double>("powerlaw:2000:8:seed=2");
  std::vector<std::tuple<int, int, double>> both_ways;
  for (ordinal_t i = 0; i < graph.nrows; ++i)
    for (offset_t k = graph.row_ptr[i]; k < graph.row_ptr[i + 1]; ++k) {
      both_ways.emplace_back(i, graph.col_idx[k], 1.0);
      both_ways.emplace_back(graph.col_idx[k], i, 1.0);
    }
  // An arrow: row and column 0 full, longer than kMirrorRowMax (the
  // partner search a thread an entry), and the diagonal.
  std::vector<std::tuple<int, int, double>> arrow;
  const int n = static_cast<int>(kMirrorRowMax) + 500;
  for (int j = 0; j < n; ++j) {
    arrow.emplace_back(0, j, 1.0);
    if (j > 0) arrow.emplace_back(j, 0, 1.0), arrow.emplace_back(j, j, 1.0);
  }
  const std::pair<std::string, HostCsr<double>> cases[] = {
      {"lap3d:5", with_new_values(generate<double>("lap3d:5"))},
      {"powerlaw:2000:8 + its transpose", with_new_values(kspmv_test::from_triplets<double>(2000, 2000, both_ways))},
      {"arrow", with_new_values(kspmv_test::from_triplets<double>(n, n, arrow))},
  };
  for (const auto& [what, a] : cases) {
    if (!holds(a)) continue;
    auto m = M::convert(a, format(), options());
    EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(a, transpose(a), m, "T", 1, 1.0, 0.0))) << what;
    ASSERT_TRUE(m.transpose_shares_pattern()) << what;
    EXPECT_EQ(m.transposed(Kokkos::DefaultExecutionSpace()).format(), m.format()) << what;
    // Its values and a map of 4 bytes a nonzero: less than a second copy
    // of the format and a map.
    EXPECT_LT(m.transpose_bytes(), m.storage_bytes() + 4 * a.nnz()) << what;
    for (int refresh = 0; refresh < 2; ++refresh) {
      const auto b = with_new_values(a);
      m.update_values(detail::upload<double, mem>(b.values, "b"));
      EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutRight>(b, transpose(b), m, "T", 3, 2.0, -0.5)))
          << what << ", refresh " << refresh;
      EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(b, transpose(b), m, "N", 1, 1.0, 0.0)))
          << what << ", refresh " << refresh;
    }
    const auto f = convert_scalar<float>(a);
    const auto mf = Matrix<float>::convert(f, format(), options());
    EXPECT_TRUE((mode_matches_reference<float, Kokkos::LayoutLeft>(f, transpose(f), mf, "T", 2, 1.0f, 0.5f))) << what;
    EXPECT_TRUE(mf.transpose_shares_pattern()) << what;
  }
  // A device CSR with a duplicate and unsorted columns, its pattern
  // symmetric once merged: {0, 2}, {1}, {0, 2}.
  const std::vector<offset_t> rp = {0, 3, 4, 6};
  const std::vector<ordinal_t> ci = {2, 0, 2, 1, 2, 0};
  const std::vector<double> v1 = {1, 2, 3, 4, 5, 6}, v2 = {10, -20, 30, 40, 50, 60};
  const auto merged_csr = [&](const std::vector<double>& v) {
    HostCoo<double> c(3, 3);
    for (int i = 0; i < 3; ++i)
      for (offset_t k = rp[i]; k < rp[i + 1]; ++k) c.add(i, ci[k], v[k]);
    return to_csr(c);
  };
  if (holds(merged_csr(v1))) {
    auto m = M::from_device_views(3, 3, detail::upload<offset_t, mem>(rp, "rp"), detail::upload<ordinal_t, mem>(ci, "ci"),
                                  detail::upload<double, mem>(v1, "v"), format(), options());
    const auto a = merged_csr(v1);
    EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(a, transpose(a), m, "T", 1, 1.0, 0.0)));
    EXPECT_TRUE(m.transpose_shares_pattern());
    m.update_values(detail::upload<double, mem>(v2, "v2"));
    const auto b = merged_csr(v2);
    EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(b, transpose(b), m, "T", 2, 1.0, 0.5)));
  }
  // One entry short of symmetric: A^T from its own CSR.
  auto lap = generate<double>("lap3d:5");
  std::vector<std::tuple<int, int, double>> t;
  for (ordinal_t i = 0; i < lap.nrows; ++i)
    for (offset_t k = lap.row_ptr[i]; k < lap.row_ptr[i + 1]; ++k)
      if (!(i == 7 && lap.col_idx[k] == 8)) t.emplace_back(i, lap.col_idx[k], rng.uniform() - 0.5);
  const auto lopsided = kspmv_test::from_triplets<double>(lap.nrows, lap.ncols, t);
  if (holds(lopsided)) {
    const auto m = M::convert(lopsided, format(), options());
    EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(lopsided, transpose(lopsided), m, "T", 1, 1.0, 0.0)));
    EXPECT_FALSE(m.transpose_shares_pattern());
  }
  // Symmetric in its first 2^17 entries (more than the look before A^T's
  // arrays are allocated reads) and one entry short near its end: the
  // shared-pattern copy is begun and dropped, A^T built from its CSR, and
  // a refresh reaches it.
  auto big = generate<double>("lap3d:30");
  ASSERT_GT(big.nnz(), offset_t(1) << 17);
  const ordinal_t last = big.nrows - 5;
  std::vector<std::tuple<int, int, double>> tb;
  for (ordinal_t i = 0; i < big.nrows; ++i)
    for (offset_t k = big.row_ptr[i]; k < big.row_ptr[i + 1]; ++k)
      if (!(i == last && big.col_idx[k] == last + 1)) tb.emplace_back(i, big.col_idx[k], rng.uniform() - 0.5);
  const auto late = kspmv_test::from_triplets<double>(big.nrows, big.ncols, tb);
  if (holds(late)) {
    auto m = M::convert(late, format(), options());
    EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(late, transpose(late), m, "T", 1, 1.0, 0.0)));
    EXPECT_FALSE(m.transpose_shares_pattern());
    const auto b = with_new_values(late);
    m.update_values(detail::upload<double, mem>(b.values, "b"));
    EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(b, transpose(b), m, "T", 2, 1.0, 0.5)));
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, SpmvOperatorTest, ::testing::ValuesIn(kspmv_test::format_cases()),
                         kspmv_test::format_case_name);

// Duplicates in a device CSR are summed at build; a refresh with input
// values sums them again, in A^T as in A.
TEST(SpmvOperator, TransposeOfMergedInputSumsDuplicatesOnRefresh) {
  using M = Matrix<double>;
  using mem = M::memory_space;
  // Row 0 holds column 2 twice and unsorted columns.
  const std::vector<offset_t> rp = {0, 3, 4, 6};
  const std::vector<ordinal_t> ci = {2, 0, 2, 1, 2, 0};
  const std::vector<double> v1 = {1, 2, 3, 4, 5, 6}, v2 = {10, 20, 30, 40, 50, 60};
  auto m = M::from_device_views(3, 3, detail::upload<offset_t, mem>(rp, "rp"), detail::upload<ordinal_t, mem>(ci, "ci"),
                                detail::upload<double, mem>(v1, "v"), Format::Pellr);
  HostCoo<double> c(3, 3);
  for (int i = 0; i < 3; ++i)
    for (offset_t k = rp[i]; k < rp[i + 1]; ++k) c.add(i, ci[k], v2[k]);
  const auto b = to_csr(c);  // sums the duplicates
  m.update_values(detail::upload<double, mem>(v2, "v2"));
  const auto bt = transpose(b);
  const std::vector<double> x = {1, -2, 0.5};
  M::vector_type dx = detail::upload<double, mem>(x, "x"), dy("y", 3);
  kspmv::spmv("T", 1.0, m, dx, 0.0, dy);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
  std::vector<double> y(hy.data(), hy.data() + 3), y0(3, 0.0);
  EXPECT_TRUE(check_spmv(bt, 1.0, x, 0.0, y0, y).ok);
}

// What a kernel that gathers whole rows of X gets: a row-major X itself,
// a column-major one copied row-major into the kept block, which grows
// to fit and is reused when it is large enough.
TEST(SpmvOperator, AdjacentRowsCopiesOnlyWhereRowsAreNotAdjacent) {
  using Mem = Matrix<double>::memory_space;
  using Rows = Kokkos::View<double**, Kokkos::LayoutRight, Mem>;
  const int n = 37, k = 5;
  const auto cols = random_columns<double>(n, k, 61);
  Rows rows;
  const auto right = to_device<double, Kokkos::LayoutRight>(cols, n);
  const auto same = detail::adjacent_rows(Kokkos::DefaultExecutionSpace(), ConstBlockView<double, Mem>(right), rows);
  EXPECT_EQ(same.data(), right.data());
  EXPECT_EQ(rows.span(), 0u);
  const auto left = to_device<double, Kokkos::LayoutLeft>(cols, n);
  const auto copied = detail::adjacent_rows(Kokkos::DefaultExecutionSpace(), ConstBlockView<double, Mem>(left), rows);
  ASSERT_EQ(copied.data(), rows.data());
  EXPECT_EQ(copied.stride(1), 1u);
  EXPECT_EQ(copied.stride(0), static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) EXPECT_TRUE(kspmv_test::same_bits(column_of(copied, j), cols[j])) << j;
  // Fewer columns: the same block, no new allocation.
  const double* kept = rows.data();
  const auto narrow = Kokkos::subview(left, Kokkos::ALL, std::make_pair(0, 2));
  const auto again = detail::adjacent_rows(Kokkos::DefaultExecutionSpace(), ConstBlockView<double, Mem>(narrow), rows);
  EXPECT_EQ(rows.data(), kept);
  for (int j = 0; j < 2; ++j) EXPECT_TRUE(kspmv_test::same_bits(column_of(again, j), cols[j])) << j;
}

TEST(SpmvOperator, BadCallsAreTypedErrorsThatChangeNothing) {
  using M = Matrix<double>;
  const auto a = generate<double>("uniform:50:2:6:seed=3");
  const auto m = M::convert(a, Format::Csr);
  M::vector_type x("x", 50), y("y", 50);
  Kokkos::deep_copy(y, 4.0);
  for (const char* mode : {"", "n", "X", "NT", "t"}) EXPECT_THROW(kspmv::spmv(mode, 1.0, m, x, 0.0, y), InvalidArgumentError) << mode;
  M::vector_type shorter("s", 49);
  EXPECT_THROW(kspmv::spmv("N", 1.0, m, shorter, 0.0, y), InvalidArgumentError);
  EXPECT_THROW(kspmv::spmv("T", 1.0, m, x, 0.0, shorter), InvalidArgumentError);
  // X and Y in one allocation.
  Kokkos::View<double**, Kokkos::LayoutLeft, M::memory_space> both("both", 50, 2);
  EXPECT_THROW(kspmv::spmv("N", 1.0, m, both, 0.0, both), InvalidArgumentError);
  Kokkos::View<double**, Kokkos::LayoutLeft, M::memory_space> x2("x2", 50, 2), y3("y3", 50, 3);
  EXPECT_THROW(kspmv::spmv("N", 1.0, m, x2, 0.0, y3), InvalidArgumentError);
  EXPECT_THROW(kspmv::spmv("N", 1.0, M(), x, 0.0, y), InvalidArgumentError);
  // No transpose kept.
  ConvertOptions never;
  never.transpose = TransposeBuild::Never;
  EXPECT_THROW(kspmv::spmv("T", 1.0, M::convert(a, Format::Ell, never), x, 0.0, y), UnsupportedError);
  EXPECT_EQ(M::convert(a, Format::Ell, never).transpose_bytes(), 0u);
  // Rows renumbered for the caller: no transpose of that.
  ConvertOptions internal;
  internal.output_order = OutputOrder::Internal;
  internal.pellr_sort = RowSort::Always;
  EXPECT_THROW(kspmv::spmv("T", 1.0, M::convert(a, Format::Pellr, internal), x, 0.0, y), UnsupportedError);
  // Without a value map, A^T only at conversion.
  ConvertOptions no_map;
  no_map.value_map = false;
  EXPECT_THROW(kspmv::spmv("T", 1.0, M::convert(a, Format::Pellr, no_map), x, 0.0, y), UnsupportedError);
  no_map.transpose = TransposeBuild::AtConversion;
  EXPECT_NO_THROW(kspmv::spmv("T", 1.0, M::convert(a, Format::Pellr, no_map), x, 0.0, y));
  Kokkos::deep_copy(y, 4.0);
  EXPECT_THROW(kspmv::spmv("Q", 1.0, m, x, 0.0, y), InvalidArgumentError);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  for (std::size_t i = 0; i < hy.extent(0); ++i) ASSERT_EQ(hy(i), 4.0);
}

// The transposed CSR itself: the host transpose's pattern and values, and
// source() naming A's entries.
TEST(SpmvOperator, DeviceTransposeMatchesTheHostTranspose) {
  for (const char* spec : {"rmat:8:5", "uniform:300:0:9:seed=2", "lap2d:7"}) {
    const auto a = generate<double>(spec);
    using Exec = Kokkos::DefaultExecutionSpace;
    const auto d = upload_csr<double, Exec>(a);
    const auto t = transpose_csr(Exec(), d);
    const auto h = download_csr(t.csr);
    const auto ref = transpose(a);
    EXPECT_EQ(h.row_ptr, ref.row_ptr) << spec;
    EXPECT_EQ(h.col_idx, ref.col_idx) << spec;
    EXPECT_EQ(h.values, ref.values) << spec;
    auto src = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.source);
    for (std::size_t p = 0; p < src.extent(0); ++p) ASSERT_EQ(a.values[src(p)], h.values[p]) << spec;
  }
  // No entries, and empty rows and columns.
  const HostCsr<double> empty(4, 6);
  const auto t = transpose_csr(Kokkos::DefaultExecutionSpace(), upload_csr<double, Kokkos::DefaultExecutionSpace>(empty));
  const auto h = download_csr(t.csr);
  EXPECT_EQ(h.nrows, 6);
  EXPECT_EQ(h.row_ptr, std::vector<offset_t>(7, 0));
}

// One matrix, two handles, two execution space instances (two streams on
// CUDA): many applies queued on both without a fence between them, each
// stream's result right. Formats with scratch (coo, hyb, pkt, evc-hyb)
// give each handle its own.
TEST_P(SpmvOperatorTest, TwoHandlesOnTwoInstancesAreIndependent) {
  using M = Matrix<double>;
  using Exec = M::execution_space;
  // An irregular matrix where the format holds it, else a stencil.
  auto a = generate<double>("powerlaw:3000:8");
  if (!holds(a)) a = generate<double>("lap2d:60");
  const auto m = M::convert(a, format(), options());
#if KOKKOS_VERSION >= 40000
  const auto spaces = Kokkos::Experimental::partition_space(Exec(), 1, 1);
  const Exec s1 = spaces[0], s2 = spaces[1];
#else
  const Exec s1, s2;  // Kokkos 3: one instance twice (no concurrency to test)
#endif
  const auto x1 = kspmv_test::random_vector<double>(a.ncols, 1), x2 = kspmv_test::random_vector<double>(a.ncols, 2);
  M::vector_type dx1 = detail::upload<double, M::memory_space>(x1, "x1");
  M::vector_type dx2 = detail::upload<double, M::memory_space>(x2, "x2");
  M::vector_type y1("y1", a.nrows), y2("y2", a.nrows);
  SpmvHandle<double> h1, h2;
  for (int r = 0; r < 40; ++r) {
    kspmv::spmv(s1, h1, "N", 1.0, m, dx1, 0.0, y1);
    kspmv::spmv(s2, h2, "N", 1.0, m, dx2, 0.0, y2);
  }
  s1.fence();
  s2.fence();
  const std::vector<double> zero(a.nrows, 0.0);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
  EXPECT_TRUE(check_spmv(a, 1.0, x1, 0.0, zero, std::vector<double>(h.data(), h.data() + a.nrows)).ok);
  h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y2);
  EXPECT_TRUE(check_spmv(a, 1.0, x2, 0.0, zero, std::vector<double>(h.data(), h.data() + a.nrows)).ok);
  // Where the format keeps scratch, each handle holds a copy of its own.
  bool scratch = false;
  for (Format f : {Format::Coo, Format::Hyb, Format::Pkt, Format::CsrMerge}) scratch |= m.format() == f;
  if (scratch) {
    EXPECT_GT(h1.scratch_bytes(), 0u);
    EXPECT_EQ(h1.scratch_bytes(), h2.scratch_bytes());
  }
}

// The fused multivector kernels: which formats have one, and that one pass
// over the matrix gives each column what its own SpMV gives (three groups
// of kBlockColumns, LayoutRight so the columns are strided).
TEST_P(SpmvOperatorTest, FusedColumnsMatchColumnByColumn) {
  using M = Matrix<double>;
  auto a = generate<double>("powerlaw:2000:7");
  if (!holds(a)) a = generate<double>("lap2d:45");
  const auto m = M::convert(a, format(), options());
  // ell, ellr, dia and csr-adaptive always fuse; coo, hyb and the
  // partitioned formats never; csr-merge on its tuned CUDA kernel only;
  // the csr family and pellr where their block_pays says so.
  bool always = false, never = false;
  for (Format f : {Format::Ell, Format::Ellr, Format::Dia, Format::CsrAdaptive}) always |= m.format() == f;
  for (Format f : {Format::Coo, Format::Hyb, Format::Pkt, Format::Jad, Format::EvcHyb, Format::Ehyb, Format::KkCrs})
    never |= m.format() == f;
  if (m.format() == Format::CsrMerge) {
    const bool tuned = detail::on_cuda<M::execution_space>() && GetParam().kernel == KernelPath::Auto;
    (tuned ? always : never) = true;
    EXPECT_EQ(m.fused_block_wants_rows(), tuned);
  } else if (m.format() == Format::CsrAdaptive) {
    EXPECT_EQ(m.fused_block_wants_rows(), detail::on_cuda<M::execution_space>());
  } else {
    EXPECT_FALSE(m.fused_block_wants_rows()) << m.name();
  }
  if (always) EXPECT_TRUE(m.has_fused_block_kernel()) << m.name();
  if (never) EXPECT_FALSE(m.has_fused_block_kernel()) << m.name();
  const bool fused_expected = m.has_fused_block_kernel();
  const int k = 2 * kBlockColumns + 3;
  const auto xs = random_columns<double>(a.ncols, k, 41);
  const auto y0 = random_columns<double>(a.nrows, k, 43);
  const auto x = to_device<double, Kokkos::LayoutRight>(xs, a.ncols);
  const auto y = to_device<double, Kokkos::LayoutRight>(y0, a.nrows);
  const bool ran = m.apply_fused(M::execution_space(), 1.5, x, -0.25, y);
  EXPECT_EQ(ran, fused_expected);
  if (!ran) return;
  Kokkos::fence();
  for (int j = 0; j < k; ++j) {
    M::vector_type xj = detail::upload<double, M::memory_space>(xs[j], "xj");
    M::vector_type yj = detail::upload<double, M::memory_space>(y0[j], "yj");
    m.apply(1.5, xj, -0.25, yj);
    Kokkos::fence();
    auto one = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yj);
    const auto fused = column_of(y, j);
    for (std::int64_t i = 0; i < a.nrows; ++i)
      ASSERT_NEAR(fused[i], one(i), 1e-12 * (1 + std::abs(one(i)))) << m.name() << " column " << j << " row " << i;
  }
}

// csr-merge's fused kernel: each column of Y as its one-vector kernel
// gives it (within rounding: a group of lanes sums more items than a
// thread), and the same bits on every run, on a matrix whose rows cross
// many units (units of 256 items, one row of 2,500 entries, a run of
// 1,000 empty rows), for k = 2, 8 and 11 (a group of kBlockColumns and
// one of 3), X column- or row-major (column-major X is staged row-major
// through the handle, and without one), alpha and beta cases with beta = 0
// ignoring NaN in Y.
TEST(SpmvOperator, CsrMergeFusedColumnsAreTheOneVectorKernelsAndDeterministic) {
  using M = Matrix<double>;
  std::vector<std::tuple<int, int, double>> t;
  Rng rng(77);
  const int n = 3000;
  for (int c = 0; c < 2500; ++c) t.emplace_back(7, (c * 37) % n, rng.uniform() - 0.5);
  for (int r = 0; r < n; ++r) {
    if (r == 7 || (r >= 100 && r < 1100)) continue;
    const int len = static_cast<int>(rng.uniform() * 6);
    for (int e = 0; e < len; ++e) t.emplace_back(r, static_cast<int>(rng.uniform() * n), rng.uniform() - 0.5);
  }
  const auto a = kspmv_test::from_triplets<double>(n, n, t);
  ConvertOptions opt;
  opt.merge_unit_items = 256;
  const auto m = M::convert(a, Format::CsrMerge, opt);
  int spanning = 0;
  for (const auto& [key, value] : m.properties())
    if (key == "rows_spanning_units") spanning = std::stoi(value);
  ASSERT_GT(spanning, 10);
  const std::pair<double, double> ab[] = {{1.0, 0.0}, {-1.5, 0.75}};
  for (int k : {2, kBlockColumns, kBlockColumns + 3})
    for (const auto& [alpha, beta] : ab) {
      const auto xs = random_columns<double>(n, k, 101);
      const auto y0 = random_columns<double>(n, k, 103, beta == 0.0);
      std::vector<std::vector<double>> want;
      for (int j = 0; j < k; ++j) {
        M::vector_type xj = detail::upload<double, M::memory_space>(xs[j], "xj");
        M::vector_type yj = detail::upload<double, M::memory_space>(y0[j], "yj");
        m.apply(alpha, xj, beta, yj);
        auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yj);
        want.emplace_back(h.data(), h.data() + n);
      }
      std::vector<std::vector<double>> first_run;
      const auto check = [&](const auto& y, const char* how) {
        Kokkos::fence();
        for (int j = 0; j < k; ++j) {
          const auto got = column_of(y, j);
          for (int i = 0; i < n; ++i)
            ASSERT_NEAR(got[i], want[j][i], 1e-12 * (1 + std::abs(want[j][i])))
                << how << " k=" << k << " column " << j << " row " << i;
          if (static_cast<int>(first_run.size()) < k)
            first_run.push_back(got);
          else
            EXPECT_TRUE(kspmv_test::same_bits(got, first_run[j])) << how << " k=" << k << " column " << j;
        }
      };
      SpmvHandle<double, M::execution_space> h;
      {
        const auto x = to_device<double, Kokkos::LayoutLeft>(xs, n);
        const auto y = to_device<double, Kokkos::LayoutLeft>(y0, n);
        kspmv::spmv(M::execution_space(), h, "N", alpha, m, x, beta, y);
        check(y, "column-major, handle");
      }
      {
        const auto x = to_device<double, Kokkos::LayoutLeft>(xs, n);
        const auto y = to_device<double, Kokkos::LayoutLeft>(y0, n);
        kspmv::spmv("N", alpha, m, x, beta, y);
        check(y, "column-major, no handle");
      }
      {
        const auto x = to_device<double, Kokkos::LayoutRight>(xs, n);
        const auto y = to_device<double, Kokkos::LayoutRight>(y0, n);
        kspmv::spmv(M::execution_space(), h, "N", alpha, m, x, beta, y);
        check(y, "row-major, handle");
      }
    }
}

// pellr fuses in the caller's order (rows of nearly equal lengths), not
// once sorted by length, where its fused kernel loses (pellr.hpp).
TEST(SpmvOperator, PellrFusesOnlyUnsorted) {
  using M = Matrix<double>;
  ConvertOptions never = kspmv_test::test_options(KernelPath::Auto), always = never;
  never.pellr_sort = RowSort::Never;
  always.pellr_sort = RowSort::Always;
  const auto a = generate<double>("powerlaw:3000:8");
  EXPECT_TRUE(M::convert(a, Format::Pellr, never).has_fused_block_kernel());
  EXPECT_FALSE(M::convert(a, Format::Pellr, always).has_fused_block_kernel());
}

// transpose_csr against the host transpose, array for array. On CUDA every
// case is one radix sort of (column, entry) pairs (more than 16 column
// bits: three passes); elsewhere columns are counted, entries placed by
// atomic cursors and each row of A^T put back in A's row order (ranked a
// thread an entry in short rows, the key sort for rows of more than
// kTransposeThreadSortMax entries: the power-law hubs and a dense column;
// every entry sorted where most lie in long rows of A^T: a dense block).
// Empty rows and columns, rectangular shapes, an empty matrix.
TEST(Transpose, DeviceTransposeEqualsTheHostTranspose) {
  using Space = Kokkos::DefaultExecutionSpace;
  std::vector<std::tuple<int, int, double>> rect;
  Rng rng(11);
  for (int e = 0; e < 3000; ++e) {
    const int i = static_cast<int>(rng.uniform() * 300), j = static_cast<int>(rng.uniform() * 170);
    rect.emplace_back(i, j < 150 ? j : 7, rng.uniform() - 0.5);  // column 7 dense: a long row of A^T
  }
  std::vector<std::tuple<int, int, double>> dense;
  for (int i = 0; i < 50; ++i)
    for (int j = 0; j < 40; ++j) dense.emplace_back(i, j, rng.uniform() - 0.5);
  const std::pair<std::string, HostCsr<double>> cases[] = {
      {"powerlaw:4000:12", generate<double>("powerlaw:4000:12:seed=5")},
      {"its transpose (long columns)", transpose(generate<double>("powerlaw:4000:12:seed=5"))},
      {"lap3d:9", generate<double>("lap3d:9")},
      {"powerlaw:70000:3 (17 column bits)", generate<double>("powerlaw:70000:3:seed=3")},
      {"rectangular 300x171", kspmv_test::from_triplets<double>(300, 171, rect)},
      {"empty 5x3", kspmv_test::from_triplets<double>(5, 3, {})},
      {"dense 50x40: every column long, every entry sorted", kspmv_test::from_triplets<double>(50, 40, dense)},
  };
  for (const auto& [what, a] : cases) {
    const auto at = transpose(a);
    const auto t = transpose_csr(Space(), upload_csr<double, Space>(a));
    ASSERT_EQ(t.csr.nrows, a.ncols) << what;
    ASSERT_EQ(t.csr.ncols, a.nrows) << what;
    auto host = [](const auto& v) {
      auto h = Kokkos::create_mirror_view(v);
      Kokkos::deep_copy(h, v);
      return std::vector<typename std::decay_t<decltype(v)>::non_const_value_type>(h.data(), h.data() + h.extent(0));
    };
    EXPECT_EQ(host(t.csr.row_ptr), at.row_ptr) << what;
    EXPECT_EQ(host(t.csr.col_idx), at.col_idx) << what;
    EXPECT_EQ(host(t.csr.values), at.values) << what;
    // source names the entry of A each entry of A^T holds.
    const auto src = host(t.source);
    bool named = src.size() == at.values.size();
    for (std::size_t p = 0; named && p < src.size(); ++p)
      named = src[p] >= 0 && src[p] < a.nnz() && a.values[src[p]] == at.values[p] &&
              a.col_idx[src[p]] == static_cast<ordinal_t>(std::upper_bound(at.row_ptr.begin(), at.row_ptr.end(),
                                                                        static_cast<offset_t>(p)) -
                                                           at.row_ptr.begin() - 1);
    EXPECT_TRUE(named) << what;
    bool has_long = false;
    for (ordinal_t c = 0; c < at.nrows; ++c) has_long |= at.row_length(c) > kTransposeThreadSortMax;
    if (what.find("long") != std::string::npos || what.find("rectangular") != std::string::npos ||
        what.find("dense") != std::string::npos)
      EXPECT_TRUE(has_long) << what << ": the key-sort path is not exercised";
    bool has_long_row = false;  // of A: placed a thread an entry
    for (ordinal_t i = 0; i < a.nrows; ++i) has_long_row |= a.row_length(i) > kTransposeThreadRowMax;
    if (what == "powerlaw:4000:12" || what.find("long columns") != std::string::npos)
      EXPECT_EQ(has_long_row, what == "powerlaw:4000:12") << what;
  }
}

// Aᵀ of a structurally symmetric A takes A's format, whatever A's values
// (built on the host or the device: it is A's layout with other values);
// a non-symmetric pattern goes to the model's pick among device-built
// formats. Both give Aᵀx right, against the host transpose.
TEST(Transpose, SymmetricPatternKeepsAsFormat) {
  auto a = generate<double>("lap3d:8");
  Rng rng(5);
  for (auto& v : a.values) v = rng.uniform() - 0.5;  // the pattern symmetric, the values not
  const auto at = transpose(a);
  for (Format f : {Format::Pellr, Format::CsrVector, Format::Dia, Format::Ehyb}) {
    const auto m = Matrix<double>::convert(a, f);
    const auto& t = m.transposed(Kokkos::DefaultExecutionSpace());
    EXPECT_EQ(t.format(), f) << format_name(f);
    EXPECT_TRUE(m.transpose_shares_pattern()) << format_name(f);
    EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(a, at, m, "T", 1, 1.0, 0.0))) << format_name(f);
  }
  // A non-symmetric pattern: the model's pick, still right.
  const auto g = generate<double>("rmat:9:6");
  const auto gt = transpose(g);
  const auto m = Matrix<double>::convert(g, Format::Pellr);
  EXPECT_TRUE((mode_matches_reference<double, Kokkos::LayoutLeft>(g, gt, m, "T", 2, 2.0, 0.5)));
}
