// Every format against the host reference: generated and real matrices,
// both precisions, the alpha/beta cases, and the edge shapes. Formats are
// taken from known_formats(), so a new format is covered as soon as it is
// registered.
#include <KokkosSparse_CrsMatrix.hpp>
#include <cstring>
#include <fstream>
#include <map>

#include "test_support.hpp"

using namespace kspmv;
using kspmv_test::format_matches_reference;
using kspmv_test::from_triplets;

namespace {

bool square_only(Format f) {
  for (const auto& d : known_formats())
    if (d.format == f) return d.square_only;
  return false;
}

// (alpha, beta) pairs every format must get right.
const std::vector<std::pair<double, double>> kAlphaBeta = {
    {1.0, 0.0}, {2.5, 0.0}, {1.0, 1.0}, {-0.5, 2.0}, {0.0, 3.0}, {0.0, 0.0}, {1.0, -1.0}};

}  // namespace

class FormatTest : public ::testing::TestWithParam<kspmv_test::FormatCase> {
 protected:
  Format format() const { return GetParam().format; }
  ConvertOptions options() const { return kspmv_test::test_options(GetParam().kernel); }

  // Converts once, then checks every (alpha, beta) case. A format that only
  // takes square matrices must refuse a rectangular one with a typed error.
  template <class Scalar>
  void check_all_cases(const HostCsr<Scalar>& a, const std::string& what) {
    if (square_only(format()) && a.nrows != a.ncols) {
      EXPECT_THROW(Matrix<Scalar>::convert(a, format(), options()), FormatCannotHoldError) << what;
      return;
    }
    if (kspmv_test::padded_fill(format(), a) > kspmv_test::kTestMaxFill) {
      EXPECT_THROW(Matrix<Scalar>::convert(a, format(), options()), FormatCannotHoldError) << what;
      return;
    }
    const auto m = Matrix<Scalar>::convert(a, format(), options());
    for (const auto& [al, be] : kAlphaBeta)
      EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, static_cast<Scalar>(al), static_cast<Scalar>(be)))
          << what;
  }
};

TEST_P(FormatTest, GeneratedMatricesBothPrecisions) {
  for (const char* spec : {"lap1d:100", "lap2d:20", "lap2d9:17", "lap3d:9", "lap3d27:6", "uniform:700:0:40:seed=2",
                           "normal:500:33:9", "powerlaw:3000:8", "rmat:11:8", "dense:40:33", "banded:300:17",
                           "blockdiag:100:9", "uniform:300:1:5:cols=2000", "uniform:80:30:60:cols=60",
                           "lap3d:40", "powerlaw:20000:12:seed=3"}) {
    check_all_cases(generate<double>(spec), spec);
    check_all_cases(generate<float>(spec), spec);
  }
}

// Unstructured FEM matrices (a gmsh mesh, P1 and P2, scrambled and RCM).
TEST_P(FormatTest, FemMatricesFromAGmshMesh) {
  const std::string mesh = kspmv_test::data_dir() + "/cube_sphere_hole_coarse.msh";
  for (const char* tail : {":p1:order=scrambled", ":p2:order=rcm", ":p1:refine=1:order=rcm"}) {
    const std::string spec = "fem:" + mesh + tail;
    check_all_cases(generate<double>(spec), spec);
  }
  check_all_cases(generate<float>("fem:" + mesh + ":p2:order=scrambled"), "fem p2 float");
}

TEST_P(FormatTest, EdgeShapes) {
  check_all_cases(HostCsr<double>(0, 0), "empty 0x0");
  check_all_cases(HostCsr<double>(7, 5), "7x5 with no entries");
  check_all_cases(HostCsr<double>(6, 6), "6x6 with no entries");
  check_all_cases(HostCsr<double>(0, 5), "0x5");
  check_all_cases(HostCsr<double>(4, 0), "4x0");
  check_all_cases(from_triplets<double>(1, 1, {{0, 0, 3.0}}), "1x1");
  check_all_cases(from_triplets<float>(1, 1, {{0, 0, -2.0}}), "1x1 float");
  // Rectangular both ways, with empty rows.
  check_all_cases(generate<double>("uniform:50:0:12:cols=300"), "50x300");
  check_all_cases(generate<double>("uniform:400:0:3:cols=20"), "400x20");
  // Everything in one row, of a wide and of a square matrix.
  HostCoo<double> one(64, 5000);
  for (int j = 0; j < 5000; ++j) one.add(17, j, 1.0 / (j + 1));
  check_all_cases(to_csr(one), "all in one row");
  HostCoo<double> sq(3000, 3000);
  for (int j = 0; j < 3000; ++j) sq.add(2999, j, 0.5 + j % 7);
  check_all_cases(to_csr(sq), "all in the last row, square");
  // Every row a different length.
  HostCoo<double> tri(300, 300);
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j <= i; ++j) tri.add(i, (j * 7 + i) % 300, 0.5 + j);
  check_all_cases(to_csr(tri), "every row a different length");
}

TEST_P(FormatTest, OneHugeRowAmongManyEmptyOnes) {
  // A row with 300k entries in a 200k-row matrix whose other rows are
  // empty: both extremes of the row-length distribution at once.
  HostCsr<double> a(200000, 300000);
  a.col_idx.resize(300000);
  a.values.resize(300000);
  for (int j = 0; j < 300000; ++j) {
    a.col_idx[j] = j;
    a.values[j] = 1.0 + (j % 5);
  }
  for (ordinal_t i = 77; i < a.nrows; ++i) a.row_ptr[i + 1] = 300000;
  a.validate();
  check_all_cases(a, "one huge row");
}

TEST_P(FormatTest, ExplicitZerosAndNonFiniteValuesAreComputedThrough) {
  const double inf = std::numeric_limits<double>::infinity();
  auto a = from_triplets<double>(4, 4, {{0, 0, 0.0}, {0, 1, 1.0}, {1, 1, inf}, {2, 2, std::nan("")}, {3, 3, -inf}});
  EXPECT_TRUE(format_matches_reference(a, format(), 1.0, 0.0));
  EXPECT_TRUE(format_matches_reference(a, format(), 1.0, 1.0));
}

TEST_P(FormatTest, RealMatricesFromShared) {
  const std::string d = kspmv_test::shared_matrices_dir();
  if (d.empty()) GTEST_SKIP() << "shared matrices not found (set KSPMV_SHARED_MATRICES)";
  std::ifstream manifest(d + "/MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  int n = 0;
  while (std::getline(manifest, line)) {
    const std::string name = line.substr(0, line.find('\t'));
    // All shared matrices are <= 1.2M entries: fine for the CI budget.
    const auto a = read_matrix_market<double>(d + "/" + name + ".mtx.gz");
    ++n;
    if (kspmv_test::padded_fill(format(), a) > kspmv_test::kTestMaxFill) {
      EXPECT_THROW(Matrix<double>::convert(a, format(), options()), FormatCannotHoldError) << name;
      continue;
    }
    const auto m = Matrix<double>::convert(a, format(), options());
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.0)) << name;
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, -1.5, 0.5)) << name;
    const auto af = convert_scalar<float>(a);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(af, Matrix<float>::convert(af, format(), options()), 1.0f, 0.0f))
        << name;
  }
  EXPECT_GE(n, 10) << "MANIFEST.tsv lists too few matrices";
}

TEST_P(FormatTest, BadVectorsAreTypedErrors) {
  using M = Matrix<double>;
  const int cols = square_only(format()) ? 30 : 20;
  auto a = generate<double>("uniform:30:1:5:cols=" + std::to_string(cols));
  M m = M::convert(a, format(), options());
  M::vector_type x("x", cols), y("y", 30), shortx("x", cols - 1), shorty("y", 31);
  EXPECT_NO_THROW(m.apply(1.0, x, 0.0, y));
  EXPECT_THROW(m.apply(1.0, shortx, 0.0, y), InvalidArgumentError);
  EXPECT_THROW(m.apply(1.0, x, 0.0, shorty), InvalidArgumentError);
  // Aliasing: x and y share memory.
  auto sq = generate<double>("lap1d:20");
  M ms = M::convert(sq, format(), options());
  M::vector_type v("v", 20);
  EXPECT_THROW(ms.apply(1.0, v, 0.0, v), InvalidArgumentError);
  M::vector_type big("big", 40);
  auto lo = Kokkos::subview(big, Kokkos::make_pair(0, 20));
  auto hi = Kokkos::subview(big, Kokkos::make_pair(10, 30));
  EXPECT_THROW(ms.apply(1.0, lo, 0.0, hi), InvalidArgumentError);
  auto hi2 = Kokkos::subview(big, Kokkos::make_pair(20, 40));
  EXPECT_NO_THROW(ms.apply(1.0, lo, 0.0, hi2));
  Kokkos::fence();
}

TEST_P(FormatTest, RepeatedCallsWithChangingVectors) {
  using M = Matrix<double>;
  // Irregular rows for most formats; a 9-point stencil for DIA, which
  // refuses irregular matrices.
  auto a = generate<double>(format() == Format::Dia ? "lap2d9:45" : "powerlaw:2000:10:seed=11");
  M m = M::convert(a, format(), options());
  for (int rep = 0; rep < 3; ++rep) {
    const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 100 + rep);
    const auto y0 = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.nrows), 200 + rep);
    auto dx = detail::upload<double, M::memory_space>(x, "x");
    auto dy = detail::upload<double, M::memory_space>(y0, "y");
    m.apply(1.0, dx, 0.75, dy);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
    std::vector<double> y(hy.data(), hy.data() + a.nrows);
    auto c = check_spmv(a, 1.0, x, 0.75, y0, y);
    EXPECT_TRUE(c.ok) << "call " << rep << ": " << c.message;
  }
}

TEST_P(FormatTest, ReportsNameStorageAndConversionTime) {
  auto a = generate<double>("lap2d:30");
  auto m = Matrix<double>::convert(a, format(), options());
  if (format() == Format::Auto) {
    // The model's pick: a real format, reported as picked.
    EXPECT_TRUE(m.auto_picked());
    EXPECT_NE(m.format(), Format::Auto);
    EXPECT_STREQ(m.name(), format_name(m.format()));
    EXPECT_EQ(m.properties().front().first, "picked_by");
  } else {
    EXPECT_STREQ(m.name(), format_name(format()));
    EXPECT_FALSE(m.auto_picked());
  }
  EXPECT_EQ(m.nnz(), a.nnz());
  EXPECT_GE(m.storage_bytes(), static_cast<std::size_t>(a.nnz()) * sizeof(double));
  EXPECT_GE(m.conversion_seconds(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, FormatTest, ::testing::ValuesIn(kspmv_test::format_cases()),
                         kspmv_test::format_case_name);

TEST(FormatNames, UnknownNameListsKnownOnes) {
  try {
    parse_format("no-such-format");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("csr"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("kk-crs"), std::string::npos);
  }
  for (const auto& d : known_formats()) EXPECT_EQ(parse_format(d.name), d.format);
}

TEST(Csr, VectorLengthOption) {
  auto a = generate<double>("normal:300:40:10");
  for (int v : {1, 2, 4, 8, 16, 32}) {
    ConvertOptions o;
    o.vector_length = v;
    EXPECT_TRUE(format_matches_reference(a, Format::Csr, 1.0, 0.5, 3, o)) << v;
  }
  EXPECT_EQ(csr_vector_length_for_mean(1.0), 2);
  EXPECT_EQ(csr_vector_length_for_mean(5.0), 8);
  EXPECT_EQ(csr_vector_length_for_mean(16.0), 16);
  EXPECT_EQ(csr_vector_length_for_mean(500.0), 32);
}

// Interop with Kokkos Kernels both ways.
TEST(KokkosKernelsInterop, FromCrsMatrixAndOnItsVectors) {
  using Space = Kokkos::DefaultExecutionSpace;
  using Device = Kokkos::Device<Space, Space::memory_space>;
  using Crs = KokkosSparse::CrsMatrix<double, int, Device, void, int>;
  // A KK user's matrix with unsorted rows and a duplicate.
  const std::vector<int> rm = {0, 3, 3, 5};
  const std::vector<int> en = {2, 0, 2, 1, 0};
  const std::vector<double> va = {1.0, 2.0, 3.0, 4.0, 5.0};
  auto drm = detail::upload<int, Space::memory_space>(rm, "rm");
  auto den = detail::upload<int, Space::memory_space>(en, "en");
  auto dva = detail::upload<double, Space::memory_space>(va, "va");
  Crs A("user", 3, 3, 5, dva, drm, den);
  auto h = host_csr_from_kokkos_kernels(A);
  h.validate();
  EXPECT_EQ(h.col_idx, (std::vector<ordinal_t>{0, 2, 0, 1}));
  EXPECT_EQ(h.values, (std::vector<double>{2.0, 4.0, 5.0, 4.0}));
  for (const auto& d : known_formats()) {
    auto m = Matrix<double>::from_kokkos_kernels(A, d.format, kspmv_test::test_options());
    // The KK user's own LayoutLeft vectors.
    Kokkos::View<double*, Kokkos::LayoutLeft, Device> x("x", 3), y("y", 3);
    auto hx = Kokkos::create_mirror_view(x);
    hx(0) = 1;
    hx(1) = 10;
    hx(2) = 100;
    Kokkos::deep_copy(x, hx);
    m.apply(1.0, x, 0.0, y);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    EXPECT_EQ(hy(0), 402.0) << d.name;
    EXPECT_EQ(hy(1), 0.0) << d.name;
    EXPECT_EQ(hy(2), 45.0) << d.name;
    // And the direct, templated path on the same vectors.
    auto c = to_csr_device<double, Space>(h);
    spmv(2.0, c, x, 0.0, y);
    Kokkos::deep_copy(hy, y);
    EXPECT_EQ(hy(0), 804.0);
  }
}

// Conversions that cannot hold a matrix say so with a typed error.
TEST(FormatLimits, DiaAndEllRefuseTooMuchPadding) {
  auto p = generate<double>("powerlaw:3000:8");
  try {
    Matrix<double>::convert(p, Format::Dia);
    FAIL() << "dia accepted a power-law matrix";
  } catch (const FormatCannotHoldError& e) {
    EXPECT_NE(std::string(e.what()).find("max_fill"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Matrix<double>::convert(p, Format::Ell), FormatCannotHoldError);
  // Stencils fit both with the default limit; HYB takes anything.
  auto l = generate<double>("lap2d:50");
  EXPECT_NO_THROW(Matrix<double>::convert(l, Format::Dia));
  EXPECT_NO_THROW(Matrix<double>::convert(l, Format::Ell));
  EXPECT_TRUE(format_matches_reference(p, Format::Hyb, 1.0, 0.0, 3, ConvertOptions{}));
  // A looser limit is the caller's call.
  ConvertOptions loose;
  loose.max_fill = 1000;
  EXPECT_TRUE(format_matches_reference(p, Format::Ell, 1.0, 0.0, 3, loose));
  // DIA past its 32-bit storage index: 100k diagonals of a 100k-row matrix.
  HostCoo<double> anti(100000, 100000);
  for (int i = 0; i < 100000; ++i) anti.add(i, 99999 - i, 1.0);
  ConvertOptions huge;
  huge.max_fill = 1e12;
  try {
    Matrix<double>::convert(to_csr(anti), Format::Dia, huge);
    FAIL() << "dia accepted 10^10 slots";
  } catch (const FormatCannotHoldError& e) {
    EXPECT_NE(std::string(e.what()).find("32-bit"), std::string::npos) << e.what();
  }
  // More diagonals than team scratch caches: still correct (offsets read
  // from device memory).
  HostCoo<double> wide(9000, 9000);
  for (int i = 0; i < 9000; ++i) {
    wide.add(i, 8999 - i, 1.0 + i % 3);
    wide.add(i, i, 2.0);
  }
  EXPECT_TRUE(format_matches_reference(to_csr(wide), Format::Dia, 1.0, 0.0, 3, huge));
}

TEST(FormatLimits, PktRefusesRectangular) {
  auto r = generate<double>("uniform:50:1:5:cols=60");
  EXPECT_THROW(Matrix<double>::convert(r, Format::Pkt), FormatCannotHoldError);
}

TEST(Hyb, OneThirdRuleAndExplicitK) {
  // 9 rows: lengths 1,1,1,2,2,2,3,3,9 -> #(>=2) = 6 >= 3, #(>=3) = 3 >= 3, #(>=4) = 1 < 3: K = 3.
  EXPECT_EQ(hyb_k_one_third_rule({1, 1, 1, 2, 2, 2, 3, 3, 9}), 3);
  EXPECT_EQ(hyb_k_one_third_rule({5, 5, 5}), 5);
  EXPECT_EQ(hyb_k_one_third_rule({0, 0, 0, 7}), 0);
  EXPECT_EQ(hyb_k_one_third_rule({}), 0);
  auto a = generate<double>("powerlaw:5000:10:seed=4");
  for (std::int64_t k : {0, 1, 5, 40, 100000}) {
    ConvertOptions o;
    o.hyb_k = k;
    auto m = Matrix<double>::convert(a, Format::Hyb, o);
    const std::int64_t maxlen = row_length_stats(a).max;
    EXPECT_EQ(m.properties()[1].second, std::to_string(std::min(k, maxlen))) << "reported K (clamped to the longest row)";
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.5)) << "K = " << k;
  }
}

TEST(Pkt, PartitionersAndInternalOrder) {
  auto a = generate<double>("lap3d:20");
  for (Partitioner how : {Partitioner::Contiguous, Partitioner::Auto}) {
    ConvertOptions o;
    o.partitioner = how;
    o.pkt_rows = 500;
    auto m = Matrix<double>::convert(a, Format::Pkt, o);
    std::string method;
    for (const auto& p : m.properties())
      if (p.first == "partitioner") method = p.second;
    // Auto partitions on the device (cells); METIS only when asked.
    EXPECT_EQ(method, how == Partitioner::Contiguous ? "contiguous" : "cells");
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 2.0, -1.0));
  }
  if (have_metis()) {
    ConvertOptions o;
    o.partitioner = Partitioner::Metis;
    o.pkt_rows = 500;
    const auto m = Matrix<double>::convert(a, Format::Pkt, o);
    EXPECT_EQ(m.properties()[1], (std::pair<std::string, std::string>("partitioner", "metis")));
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 2.0, -1.0));
  }
  if (!have_metis()) {
    ConvertOptions o;
    o.partitioner = Partitioner::Metis;
    EXPECT_THROW(Matrix<double>::convert(a, Format::Pkt, o), UnsupportedError);
  }
  // Internal order: x and y both in the order of new_to_old (both kernel
  // paths; 300-row packets leave a remainder, which then reads x in the
  // internal order too).
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
    ConvertOptions o;
    o.output_order = OutputOrder::Internal;
    o.pkt_rows = 300;
    o.kernel = k;
    using Space = Kokkos::DefaultExecutionSpace;
    auto p = to_pkt<double, Space>(a, o);
    ASSERT_GT(p.remainder.nnz, 0);
    auto perm_d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.new_to_old);
    std::vector<ordinal_t> perm(perm_d.data(), perm_d.data() + a.nrows);
    validate_permutation(perm, a.nrows);
    const auto x = kspmv_test::random_vector<double>(a.nrows, 5);
    const auto y0 = kspmv_test::random_vector<double>(a.nrows, 6);
    auto dx = detail::upload<double, Space::memory_space>(gather(x, perm), "x");
    auto dy = detail::upload<double, Space::memory_space>(gather(y0, perm), "y");
    spmv(Space(), 2.0, p, dx, -0.5, dy);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
    std::vector<double> y(hy.data(), hy.data() + a.nrows), yref = y0;
    reference_spmv(2.0, a, x, -0.5, yref);
    const auto y_caller = scatter(y, perm);
    for (ordinal_t i = 0; i < a.nrows; ++i) ASSERT_NEAR(y_caller[i], yref[i], 1e-12) << i;
  }
}

// No format combines partial sums with atomics, so the same product twice
// gives the same bits (documented in docs/ARCHITECTURE.md).
TEST_P(FormatTest, SameInputsGiveIdenticalBits) {
  using M = Matrix<double>;
  // Long irregular rows (many COO chunks, rows spanning them) where the
  // format takes them; a stencil for DIA and ELL.
  const bool padded = format() == Format::Dia || format() == Format::Ell || format() == Format::Ellr;
  auto a = generate<double>(padded ? "lap3d:30" : "powerlaw:30000:20:seed=5");
  M m = M::convert(a, format(), options());
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 9);
  auto dx = detail::upload<double, M::memory_space>(x, "x");
  M::vector_type y1("y1", a.nrows), y2("y2", a.nrows);
  m.apply(1.0, dx, 0.0, y1);
  m.apply(1.0, dx, 0.0, y2);
  auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y1);
  auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y2);
  ASSERT_EQ(0, std::memcmp(h1.data(), h2.data(), sizeof(double) * a.nrows));
}

TEST(RowLengthOrder, PellrPaperExampleIterations) {
  // pellr Figure 5, 8-thread warps, the b_i arrays as the paper lists them:
  // N_iter 18 for ELLR and 14 for PELLR. (The paper's two lists differ by
  // one row, 78 vs 77 entries, so their N_p differ by 2 here.)
  const std::vector<std::int64_t> ellr = {2, 3, 3, 4, 4, 4, 2, 4, 2, 3, 2, 3, 2, 3, 2, 2,
                                          2, 2, 7, 3, 3, 3, 3, 3, 4, 3};
  const std::vector<std::int64_t> pellr = {7, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
                                           2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  const auto e = warp_iterations(ellr, 8);
  const auto p = warp_iterations(pellr, 8);
  EXPECT_EQ(e.n_iter, 18);
  EXPECT_EQ(p.n_iter, 14);
  EXPECT_EQ(e.n_p, 2 * 78 - 32);  // eq. (2): sum of (2 b - 1) over 32 slots
  EXPECT_EQ(p.n_p, 2 * 77 - 32);
  // Sorting never raises N_iter and keeps N_p.
  const auto s = warp_iterations(sorted_descending(ellr), 8);
  EXPECT_LE(s.n_iter, e.n_iter);
  EXPECT_EQ(s.n_p, e.n_p);
  EXPECT_EQ(sorted_descending({1, 3, 2, 3}), (std::vector<std::int64_t>{3, 3, 2, 1}));
}

TEST(RowLengthOrder, PellrAndJadInternalOrderAndPermutation) {
  using Space = Kokkos::DefaultExecutionSpace;
  auto a = generate<double>("normal:3000:20:12:cols=2500:seed=8");
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 4);
  std::vector<double> yref(static_cast<std::size_t>(a.nrows));
  reference_spmv(1.0, a, x, 0.0, yref);
  ConvertOptions o;
  o.output_order = OutputOrder::Internal;
  auto dx = detail::upload<double, Space::memory_space>(x, "x");
  Kokkos::View<double*, Space::memory_space> dy("y", a.nrows);
  auto check = [&](const auto& f, const char* what) {
    auto perm_d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
    std::vector<ordinal_t> perm(perm_d.data(), perm_d.data() + a.nrows);
    validate_permutation(perm, a.nrows);
    // Sorted longest first, ties in the caller's order.
    for (ordinal_t r = 1; r < a.nrows; ++r) {
      ASSERT_GE(a.row_length(perm[r - 1]), a.row_length(perm[r])) << what;
      if (a.row_length(perm[r - 1]) == a.row_length(perm[r])) ASSERT_LT(perm[r - 1], perm[r]) << what;
    }
    spmv(Space(), 1.0, f, dx, 0.0, dy);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
    std::vector<double> y(hy.data(), hy.data() + a.nrows);
    const auto back = scatter(y, perm);  // internal -> caller order
    for (ordinal_t i = 0; i < a.nrows; ++i) ASSERT_NEAR(back[i], yref[i], 1e-11 * (1 + std::fabs(yref[i]))) << what;
  };
  check(to_pellr<double, Space>(a, o), "pellr");
  check(to_jad<double, Space>(a, o), "jad");
  // And the reported counts agree with warp_iterations.
  auto m = Matrix<double>::convert(a, Format::Pellr);
  const auto lens = row_lengths(a);
  const auto plist = m.properties();
  std::map<std::string, std::string> props(plist.begin(), plist.end());
  EXPECT_EQ(props["n_iter"], std::to_string(warp_iterations(sorted_descending(lens)).n_iter));
  EXPECT_EQ(props["n_iter_ellr"], std::to_string(warp_iterations(lens).n_iter));
  EXPECT_LT(std::stoll(props["n_iter"]), std::stoll(props["n_iter_ellr"]));
}

// PELLR sorts only where it pays (RowSort::Auto: >= 5% fewer warp
// iterations); Always and Never override; every choice computes y right in
// both orders, and an unsorted PELLR's internal order is the caller's.
TEST(RowLengthOrder, PellrSortsOnlyWhereItCutsIterations) {
  auto sorted_prop = [](const Matrix<double>& m) {
    for (const auto& [k, v] : m.properties())
      if (k == "sorted") return v;
    return std::string("?");
  };
  const auto stencil = generate<double>("lap3d:20");  // 7, 6, 5, 4 entries: sorting saves < 1%
  const auto ragged = generate<double>("normal:3000:20:12:seed=8");
  EXPECT_FALSE(pellr_should_sort(warp_iterations(row_lengths(stencil)),
                                 warp_iterations(sorted_descending(row_lengths(stencil)))));
  EXPECT_TRUE(pellr_should_sort(warp_iterations(row_lengths(ragged)),
                                warp_iterations(sorted_descending(row_lengths(ragged)))));
  struct Case {
    const HostCsr<double>* a;
    RowSort sort;
    const char* expect;
  };
  for (const Case& c : {Case{&stencil, RowSort::Auto, "no"}, Case{&ragged, RowSort::Auto, "yes"},
                        Case{&stencil, RowSort::Always, "yes"}, Case{&ragged, RowSort::Never, "no"}}) {
    for (OutputOrder order : {OutputOrder::Caller, OutputOrder::Internal})
      for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
        ConvertOptions o = kspmv_test::test_options(k);
        o.pellr_sort = c.sort;
        o.output_order = order;
        const auto m = Matrix<double>::convert(*c.a, Format::Pellr, o);
        EXPECT_EQ(sorted_prop(m), c.expect);
        if (order == OutputOrder::Caller) {
          EXPECT_TRUE(kspmv_test::matrix_matches_reference(*c.a, m, 1.0, 0.0));
          EXPECT_TRUE(kspmv_test::matrix_matches_reference(*c.a, m, -2.0, 0.5));
          continue;
        }
        const auto perm = m.internal_order();
        if (std::string(c.expect) == "no")
          for (ordinal_t i = 0; i < c.a->nrows; ++i) ASSERT_EQ(perm[i], i);
        const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(c.a->ncols), 4);
        std::vector<double> yref(static_cast<std::size_t>(c.a->nrows));
        reference_spmv(1.0, *c.a, x, 0.0, yref);
        Matrix<double>::vector_type dx("x", x.size()), dy("y", yref.size());
        auto hx = Kokkos::create_mirror_view(dx);
        for (std::size_t i = 0; i < x.size(); ++i) hx(i) = x[i];
        Kokkos::deep_copy(dx, hx);
        m.apply(1.0, dx, 0.0, dy);
        auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
        for (ordinal_t i = 0; i < c.a->nrows; ++i)
          ASSERT_NEAR(hy(i), yref[perm[i]], 1e-11 * (1 + std::fabs(yref[perm[i]])));
      }
  }
}

// The type-erased apply takes plain rank-1 Views of the default layout
// (LayoutRight on host backends, LayoutLeft on CUDA) as well as Kokkos
// Kernels' LayoutLeft vectors.
TEST(MatrixApply, AcceptsDefaultLayoutViews) {
  auto a = generate<double>("lap2d:10");
  auto m = Matrix<double>::convert(a, Format::CsrVector);
  Kokkos::View<double*> x("x", a.ncols), y("y", a.nrows);
  Kokkos::deep_copy(x, 1.0);
  m.apply(1.0, x, 0.0, y);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  double sum = 0;
  for (ordinal_t i = 0; i < a.nrows; ++i) sum += hy(i);
  EXPECT_EQ(sum, 4.0 * 10);  // one missing neighbour per boundary link
}
