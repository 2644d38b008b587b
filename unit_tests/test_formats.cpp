// Every format against the host reference: generated and real matrices,
// both precisions, the alpha/beta cases, and the edge shapes. Formats are
// taken from known_formats(), so a new format is covered as soon as it is
// registered.
#include <KokkosSparse_CrsMatrix.hpp>
#include <fstream>

#include "test_support.hpp"

using namespace kspmv;
using kspmv_test::format_matches_reference;
using kspmv_test::from_triplets;

namespace {

std::vector<Format> all_formats() {
  std::vector<Format> f;
  for (const auto& d : known_formats()) f.push_back(d.format);
  return f;
}

std::string format_param_name(const ::testing::TestParamInfo<Format>& i) {
  std::string n = format_name(i.param);
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
}

// (alpha, beta) pairs every format must get right.
const std::vector<std::pair<double, double>> kAlphaBeta = {
    {1.0, 0.0}, {2.5, 0.0}, {1.0, 1.0}, {-0.5, 2.0}, {0.0, 3.0}, {0.0, 0.0}, {1.0, -1.0}};

template <class Scalar>
void check_all_cases(const HostCsr<Scalar>& a, Format f, const std::string& what) {
  for (const auto& [al, be] : kAlphaBeta)
    EXPECT_TRUE(format_matches_reference(a, f, static_cast<Scalar>(al), static_cast<Scalar>(be)))
        << what;
}

}  // namespace

class FormatTest : public ::testing::TestWithParam<Format> {};

TEST_P(FormatTest, GeneratedMatricesBothPrecisions) {
  for (const char* spec : {"lap1d:100", "lap2d:20", "lap2d9:17", "lap3d:9", "lap3d27:6", "uniform:700:0:40:seed=2",
                           "normal:500:33:9", "powerlaw:3000:8", "rmat:11:8", "dense:40:33", "banded:300:17",
                           "blockdiag:100:9", "uniform:300:1:5:cols=2000", "uniform:80:30:60:cols=60"}) {
    check_all_cases(generate<double>(spec), GetParam(), spec);
    check_all_cases(generate<float>(spec), GetParam(), spec);
  }
}

TEST_P(FormatTest, EdgeShapes) {
  const Format f = GetParam();
  check_all_cases(HostCsr<double>(0, 0), f, "empty 0x0");
  check_all_cases(HostCsr<double>(7, 5), f, "7x5 with no entries");
  check_all_cases(HostCsr<double>(0, 5), f, "0x5");
  check_all_cases(HostCsr<double>(4, 0), f, "4x0");
  check_all_cases(from_triplets<double>(1, 1, {{0, 0, 3.0}}), f, "1x1");
  check_all_cases(from_triplets<float>(1, 1, {{0, 0, -2.0}}), f, "1x1 float");
  // Rectangular both ways, with empty rows.
  check_all_cases(generate<double>("uniform:50:0:12:cols=300"), f, "50x300");
  check_all_cases(generate<double>("uniform:400:0:3:cols=20"), f, "400x20");
  // Everything in one row; one long row among empty ones.
  HostCoo<double> one(64, 5000);
  for (int j = 0; j < 5000; ++j) one.add(17, j, 1.0 / (j + 1));
  check_all_cases(to_csr(one), f, "all in one row");
  // Every row a different length.
  HostCoo<double> tri(300, 300);
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j <= i; ++j) tri.add(i, (j * 7 + i) % 300, 0.5 + j);
  check_all_cases(to_csr(tri), f, "every row a different length");
}

TEST_P(FormatTest, ExplicitZerosAndNonFiniteValuesAreComputedThrough) {
  const double inf = std::numeric_limits<double>::infinity();
  auto a = from_triplets<double>(4, 4, {{0, 0, 0.0}, {0, 1, 1.0}, {1, 1, inf}, {2, 2, std::nan("")}, {3, 3, -inf}});
  EXPECT_TRUE(format_matches_reference(a, GetParam(), 1.0, 0.0));
  EXPECT_TRUE(format_matches_reference(a, GetParam(), 1.0, 1.0));
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
    EXPECT_TRUE(format_matches_reference(a, GetParam(), 1.0, 0.0)) << name;
    EXPECT_TRUE(format_matches_reference(a, GetParam(), -1.5, 0.5)) << name;
    EXPECT_TRUE(format_matches_reference(convert_scalar<float>(a), GetParam(), 1.0f, 0.0f)) << name;
    ++n;
  }
  EXPECT_GE(n, 10) << "MANIFEST.tsv lists too few matrices";
}

TEST_P(FormatTest, BadVectorsAreTypedErrors) {
  using M = Matrix<double>;
  auto a = generate<double>("uniform:30:1:5:cols=20");
  M m = M::convert(a, GetParam());
  M::vector_type x("x", 20), y("y", 30), shortx("x", 19), shorty("y", 31);
  EXPECT_NO_THROW(m.apply(1.0, x, 0.0, y));
  EXPECT_THROW(m.apply(1.0, shortx, 0.0, y), InvalidArgumentError);
  EXPECT_THROW(m.apply(1.0, x, 0.0, shorty), InvalidArgumentError);
  // Aliasing: x and y share memory.
  auto sq = generate<double>("lap1d:20");
  M ms = M::convert(sq, GetParam());
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
  auto a = generate<double>("powerlaw:2000:10:seed=11");
  M m = M::convert(a, GetParam());
  for (int rep = 0; rep < 3; ++rep) {
    const auto x = kspmv_test::random_vector<double>(2000, 100 + rep);
    const auto y0 = kspmv_test::random_vector<double>(2000, 200 + rep);
    auto dx = detail::upload<double, M::memory_space>(x, "x");
    auto dy = detail::upload<double, M::memory_space>(y0, "y");
    m.apply(1.0, dx, 0.75, dy);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
    std::vector<double> y(hy.data(), hy.data() + 2000);
    auto c = check_spmv(a, 1.0, x, 0.75, y0, y);
    EXPECT_TRUE(c.ok) << "call " << rep << ": " << c.message;
  }
}

TEST_P(FormatTest, ReportsNameStorageAndConversionTime) {
  auto a = generate<double>("lap2d:30");
  auto m = Matrix<double>::convert(a, GetParam());
  EXPECT_STREQ(m.name(), format_name(GetParam()));
  EXPECT_EQ(m.nnz(), a.nnz());
  EXPECT_GE(m.storage_bytes(), static_cast<std::size_t>(a.nnz()) * (sizeof(double) + 4));
  EXPECT_GE(m.conversion_seconds(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, FormatTest, ::testing::ValuesIn(all_formats()), format_param_name);

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
  EXPECT_EQ(detail::csr_vector_length_for_mean(1.0), 2);
  EXPECT_EQ(detail::csr_vector_length_for_mean(5.0), 8);
  EXPECT_EQ(detail::csr_vector_length_for_mean(16.0), 16);
  EXPECT_EQ(detail::csr_vector_length_for_mean(500.0), 32);
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
    auto m = Matrix<double>::from_kokkos_kernels(A, d.format);
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
