// Matrix::update_values: for every format and kernel path, new values
// written through the value map give the same bits as a fresh conversion
// of the new matrix; refresh after refresh; typed errors with nothing
// changed; what the map costs.
#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

#include "test_support.hpp"

using namespace kspmv;

namespace {

// The same pattern with other values (seeded), none zero: a slot left
// stale or written twice shows.
template <class Scalar>
HostCsr<Scalar> with_new_values(HostCsr<Scalar> a, std::uint64_t seed) {
  const auto v = kspmv_test::random_vector<Scalar>(a.values.size(), seed);
  for (std::size_t k = 0; k < v.size(); ++k) a.values[k] = v[k] + (v[k] >= 0 ? Scalar(0.5) : Scalar(-0.5));
  return a;
}

template <class Scalar>
typename Matrix<Scalar>::vector_type device_values(const HostCsr<Scalar>& a) {
  return detail::upload<Scalar, typename Matrix<Scalar>::memory_space>(a.values, "values");
}

// y = A x (and, with beta, y = 2 A x - 0.5 y0) on the host, bit for bit.
template <class Scalar>
std::vector<Scalar> product(const Matrix<Scalar>& m, std::uint64_t seed) {
  using M = Matrix<Scalar>;
  const auto x = kspmv_test::random_vector<Scalar>(static_cast<std::size_t>(m.ncols()), seed);
  const auto y0 = kspmv_test::random_vector<Scalar>(static_cast<std::size_t>(m.nrows()), seed + 1);
  auto dx = detail::upload<Scalar, typename M::memory_space>(x, "x");
  auto dy = detail::upload<Scalar, typename M::memory_space>(y0, "y");
  typename M::vector_type dz("z", m.nrows());
  m.apply(Scalar(1), dx, Scalar(0), dz);
  m.apply(Scalar(2), dx, Scalar(-0.5), dy);
  Kokkos::fence();
  auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dz);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dy);
  std::vector<Scalar> out(hz.data(), hz.data() + hz.extent(0));
  out.insert(out.end(), hy.data(), hy.data() + hy.extent(0));
  return out;
}

using kspmv_test::same_bits;

}  // namespace

class RefreshTest : public ::testing::TestWithParam<kspmv_test::FormatCase> {
 protected:
  Format format() const { return GetParam().format; }
  ConvertOptions options() const { return kspmv_test::test_options(GetParam().kernel); }
  bool holds(const HostCsr<double>& a) const { return kspmv_test::format_holds(format(), a); }

  template <class Scalar>
  void check_refresh(const HostCsr<Scalar>& a, const std::string& what) {
    using M = Matrix<Scalar>;
    M m = M::convert(a, format(), options());
    ASSERT_TRUE(m.refreshable()) << what;
    // Refresh after refresh, each compared with a fresh conversion of the
    // same values.
    for (std::uint64_t seed : {11u, 12u}) {
      const HostCsr<Scalar> b = with_new_values(a, seed);
      m.update_values(device_values(b));
      const M fresh = M::convert(b, format(), options());
      EXPECT_TRUE(same_bits(product(m, seed), product(fresh, seed))) << what << " refresh " << seed;
    }
    // Back to the first values: the same bits as the first conversion.
    m.update_values(device_values(a));
    EXPECT_TRUE(same_bits(product(m, 3), product(M::convert(a, format(), options()), 3))) << what << " back";
  }
};

TEST_P(RefreshTest, NewValuesGiveTheBitsOfAFreshConversion) {
  for (const char* spec : {"lap3d:9", "powerlaw:3000:8", "rmat:10:8", "banded:300:17", "uniform:500:0:40:seed=4",
                           "blockdiag:240:6"}) {
    const auto a = generate<double>(spec);
    if (!holds(a)) continue;
    check_refresh(a, spec);
    check_refresh(convert_scalar<float>(a), std::string(spec) + " (float)");
  }
}

TEST_P(RefreshTest, EdgeShapes) {
  using kspmv_test::from_triplets;
  // One row holding most entries among many empty ones, a rectangular
  // matrix, 1x1, and no entries at all.
  std::vector<std::tuple<int, int, double>> huge;
  for (int j = 0; j < 3000; ++j) huge.emplace_back(5, j, 1.0 + j % 7);
  huge.emplace_back(2999, 0, 2.0);
  const std::pair<const char*, HostCsr<double>> shapes[] = {
      {"one huge row", from_triplets<double>(3000, 3000, huge)},
      {"rectangular", from_triplets<double>(40, 70, {{0, 69, 1.0}, {3, 0, 2.0}, {39, 35, 3.0}, {20, 20, 4.0}})},
      {"1x1", from_triplets<double>(1, 1, {{0, 0, 5.0}})},
  };
  for (const auto& [what, a] : shapes)
    if (holds(a)) check_refresh(a, what);
  // No entries: nothing to refresh, an empty view accepted.
  const HostCsr<double> empty(30, 30);
  if (holds(empty)) {
    auto m = Matrix<double>::convert(empty, format(), options());
    EXPECT_NO_THROW(m.update_values(Matrix<double>::vector_type("none", 0)));
  }
}

TEST_P(RefreshTest, WrongLengthIsRejectedWithNothingChanged) {
  using M = Matrix<double>;
  const auto a = generate<double>("lap2d:20");
  if (!holds(a)) GTEST_SKIP();
  M m = M::convert(a, format(), options());
  const auto before = product(m, 5);
  for (std::int64_t n : {a.nnz() - 1, a.nnz() + 1, std::int64_t(0)}) {
    M::vector_type v("v", static_cast<std::size_t>(n));
    Kokkos::deep_copy(v, 7.0);
    EXPECT_THROW(m.update_values(v), InvalidArgumentError) << n;
  }
  EXPECT_TRUE(same_bits(before, product(m, 5)));
}

TEST_P(RefreshTest, MapCostsAtMostFourBytesANonzero) {
  const auto a = generate<double>("banded:2000:5");
  if (!holds(a)) GTEST_SKIP();
  const auto m = Matrix<double>::convert(a, format(), options());
  EXPECT_LE(m.value_map_bytes(), 4 * static_cast<std::size_t>(a.nnz()));
}

TEST_P(RefreshTest, WithoutAValueMapRefreshIsUnsupported) {
  const auto a = generate<double>("lap2d:12");
  if (!holds(a)) GTEST_SKIP();
  auto opt = options();
  opt.value_map = false;
  auto m = Matrix<double>::convert(a, format(), opt);
  EXPECT_FALSE(m.refreshable());
  EXPECT_EQ(m.value_map_bytes(), 0u);
  EXPECT_THROW(m.update_values(device_values(a)), UnsupportedError);
  // It still computes the right product.
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.5));
}

INSTANTIATE_TEST_SUITE_P(AllFormats, RefreshTest, ::testing::ValuesIn(kspmv_test::format_cases()),
                         kspmv_test::format_case_name);

// The CSR formats keep the CSR order: their refresh is a copy, no map.
TEST(Refresh, CsrOrderKeepsNoMap) {
  const auto a = generate<double>("powerlaw:2000:6");
  for (Format f : {Format::Csr, Format::CsrScalar, Format::CsrVector, Format::CsrAdaptive, Format::CsrMerge,
                   Format::KkCrs, Format::Coo}) {
    const auto m = Matrix<double>::convert(a, f);
    EXPECT_EQ(m.value_map_bytes(), 0u) << format_name(f);
    EXPECT_EQ(kspmv_test::property(m.properties(), "refresh"), "copy") << format_name(f);
  }
  // pkt visits its slots: the map keeps the row offsets (8 bytes a row).
  const auto pkt = Matrix<double>::convert(a, Format::Pkt);
  EXPECT_EQ(pkt.value_map_bytes(), 8 * static_cast<std::size_t>(a.nrows + 1));
  EXPECT_EQ(kspmv_test::property(pkt.properties(), "refresh"), "slot visit");
  // Without a map there is nothing to refresh through.
  auto no_map = kspmv_test::test_options();
  no_map.value_map = false;
  EXPECT_EQ(kspmv_test::property(Matrix<double>::convert(a, Format::Csr, no_map).properties(), "refresh"), "none");
}

// pkt keeps each slot's place in its row, 2 bytes a slot in the format (a
// slot a nonzero where each thread-column holds its rows without padding,
// as on a host backend's one thread a packet), and is refreshed by
// gathering through them: the bits of a fresh conversion. Where a row
// holds more than 65,536 entries it keeps none, and its map is a slot a
// nonzero read off tags.
TEST(Refresh, PktKeepsEachSlotsPlaceInItsRow) {
  using M = Matrix<double>;
  const auto a = generate<double>("powerlaw:3000:6:seed=5");
  auto opt = kspmv_test::test_options();
  auto m = M::convert(a, Format::Pkt, opt);
  opt.value_map = false;
  const auto plain = M::convert(a, Format::Pkt, opt);
  const std::size_t places = m.storage_bytes() - plain.storage_bytes();
  EXPECT_EQ(places % 2, 0u);
  if (kspmv_test::property(m.properties(), "threads_per_packet") == "1")
    EXPECT_EQ(places, 2 * static_cast<std::size_t>(a.nnz()));
  else
    EXPECT_GE(places, 2 * static_cast<std::size_t>(a.nnz()));
  const auto b = with_new_values(a, 77);
  m.update_values(device_values(b));
  EXPECT_TRUE(same_bits(product(m, 9), product(M::convert(b, Format::Pkt, kspmv_test::test_options()), 9)));
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(b, m, 1.0, 0.5));

  // A row of 70,000 entries (and a diagonal), past 16-bit places: no
  // places, a map of slots read off tags, the same bits.
  HostCsr<double> wide;
  const int n = 70001;
  wide.nrows = wide.ncols = n;
  for (int i = 0; i < n; ++i) {
    if (i == 0)
      for (int j = 0; j < n - 1; ++j) wide.col_idx.push_back(j);
    else
      wide.col_idx.push_back(i);
    wide.row_ptr.push_back(static_cast<offset_t>(wide.col_idx.size()));
  }
  wide.values.resize(wide.col_idx.size());
  for (std::size_t k = 0; k < wide.values.size(); ++k) wide.values[k] = 1.0 + double(k % 7);
  auto w = M::convert(wide, Format::Pkt, kspmv_test::test_options());
  EXPECT_EQ(w.value_map_bytes(), 4 * static_cast<std::size_t>(wide.nnz()));
  const auto wb = with_new_values(wide, 78);
  w.update_values(device_values(wb));
  EXPECT_TRUE(same_bits(product(w, 10), product(M::convert(wb, Format::Pkt, kspmv_test::test_options()), 10)));
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(wb, w, 1.0, 0.5));
}

// Formats that reorder rows (jad, sorted pellr, evc-hyb, ehyb where it moves
// more than one row in eight) are refreshed by
// walking their rows and keep no slot a nonzero: the row offsets, and where a row
// is longer than one segment where each row's segments start, 8 bytes a
// row each. Those in the CSR's row order keep a slot a nonzero, written by
// their walk (no tags), but where CUDA's tuned path refreshes them by a
// kernel of their own (dia, ell, ellr, pellr).
TEST(Refresh, RowOrderDecidesWhatTheMapKeeps) {
  const auto a = generate<double>("powerlaw:2000:6");  // hubs: rows longer than a segment
  const std::size_t two_per_row = 16 * static_cast<std::size_t>(a.nrows + 1);
  const std::size_t per_entry = 4 * static_cast<std::size_t>(a.nnz());
  const auto opt = kspmv_test::test_options();
  const auto pellr = Matrix<double>::convert(a, Format::Pellr, opt);
  const auto props = pellr.properties();
  ASSERT_NE(std::find(props.begin(), props.end(), std::make_pair(std::string("sorted"), std::string("yes"))), props.end());
  EXPECT_EQ(pellr.value_map_bytes(), two_per_row);
  EXPECT_EQ(Matrix<double>::convert(a, Format::Jad, opt).value_map_bytes(), two_per_row);
  EXPECT_EQ(Matrix<double>::convert(a, Format::EvcHyb, opt).value_map_bytes(), two_per_row);
  // ehyb walks its rows where more than one row in eight lies apart from
  // the row before it in the CSR (a scrambled mesh) and no row is long; a power-law graph's hubs are
  // long rows, and it keeps a slot a nonzero.
  const auto hubs = Matrix<double>::convert(a, Format::Ehyb, opt);
  EXPECT_EQ(hubs.value_map_bytes(), per_entry);
  EXPECT_EQ(kspmv_test::property(hubs.properties(), "refresh"), "slot map");
  const auto mesh = generate<double>("fem:box=6x6x6:p2:order=scrambled");
  const auto ehyb = Matrix<double>::convert(mesh, Format::Ehyb, opt);
  EXPECT_GE(ehyb.value_map_bytes(), 8 * static_cast<std::size_t>(mesh.nrows + 1));
  EXPECT_LE(ehyb.value_map_bytes(), 16 * static_cast<std::size_t>(mesh.nrows + 1));
  // A 3-D stencil whose cells keep between a half and seven in eight of
  // its rows in the CSR's order (checked first; on a host backend's window,
  // a GPU's parts being larger): walked too, and the walk writes the bits
  // of a fresh conversion.
  const auto stencil = generate<double>("lap3d:30");
  auto walked = Matrix<double>::convert(stencil, Format::Ehyb, opt);
  const double in_order = std::stod(kspmv_test::property(walked.properties(), "rows_in_order"));
  const bool between = 2 * in_order > double(stencil.nrows) && 8 * in_order < 7.0 * double(stencil.nrows);
  if (!detail::on_cuda<Kokkos::DefaultExecutionSpace>()) ASSERT_TRUE(between) << in_order;
  if (between) {
    EXPECT_EQ(kspmv_test::property(walked.properties(), "refresh"), "row walk");
    EXPECT_LE(walked.value_map_bytes(), 16 * static_cast<std::size_t>(stencil.nrows + 1));
  }
  const auto renewed = with_new_values(stencil, 31);
  walked.update_values(device_values(renewed));
  EXPECT_TRUE(same_bits(product(walked, 4), product(Matrix<double>::convert(renewed, Format::Ehyb, opt), 4)));
  // Rows that stay in the CSR's order: ehyb walks them only on CUDA's tuned
  // path and only where they hold kEhybWalkInOrderMeanEntries (20) or more
  // on average, none past kEhybWalkInOrderLongest (56) (ehyb_cuda.hpp,
  // restated here); bands of 33 (walked there), 9 and 65 (scattered). The
  // band of 33 is long enough to stay in order in a GPU's parts (a part's
  // edge rows reach past it and may be sorted apart).
  for (const auto& [band, walks_on_cuda] : {std::pair<const char*, bool>{"banded:100000:16", true},
                                            {"banded:20000:4", false}, {"banded:20000:32", false}}) {
    const auto m = generate<double>(band);
    auto e = Matrix<double>::convert(m, Format::Ehyb, opt);
    const double rows_in_order = std::stod(kspmv_test::property(e.properties(), "rows_in_order"));
    const bool in_order = 8 * rows_in_order >= 7.0 * double(m.nrows);
    if (walks_on_cuda || !detail::on_cuda<Kokkos::DefaultExecutionSpace>())
      ASSERT_TRUE(in_order) << band << " " << rows_in_order;
    if (!in_order) continue;  // a GPU's small parts sort the band's rows: the first rule decides
    const bool walks = walks_on_cuda && detail::on_cuda<Kokkos::DefaultExecutionSpace>();
    EXPECT_EQ(kspmv_test::property(e.properties(), "refresh"), walks ? "row walk" : "slot map") << band;
    if (walks)
      EXPECT_LE(e.value_map_bytes(), 16 * static_cast<std::size_t>(m.nrows + 1)) << band;
    else
      EXPECT_EQ(e.value_map_bytes(), 4 * static_cast<std::size_t>(m.nnz())) << band;
    const auto fresh_values = with_new_values(m, 32);
    e.update_values(device_values(fresh_values));
    EXPECT_TRUE(same_bits(product(e, 5), product(Matrix<double>::convert(fresh_values, Format::Ehyb, opt), 5))) << band;
  }
  // hyb: its tile kernel on CUDA where no row passes 1,024 entries (the
  // map keeps the row offsets), a slot a nonzero elsewhere
  // (TileKernelWritesTheBitsOfAFreshBuild covers a longer hub row).
  const std::int64_t longest = kspmv_test::longest_row(a);
  ASSERT_GT(longest, 32);
  if (detail::on_cuda<Kokkos::DefaultExecutionSpace>() && longest <= 1024)
    EXPECT_EQ(Matrix<double>::convert(a, Format::Hyb, opt).value_map_bytes(), two_per_row);
  else
    EXPECT_EQ(Matrix<double>::convert(a, Format::Hyb, opt).value_map_bytes(), per_entry);
  const auto b = generate<double>("banded:500:7");  // equal rows: pellr keeps the CSR's order
  const std::size_t b_entry = 4 * static_cast<std::size_t>(b.nnz());
  for (Format f : {Format::Pellr, Format::Dia, Format::Ell, Format::Ellr, Format::Ehyb}) {
    const auto m = Matrix<double>::convert(b, f, opt);
    EXPECT_TRUE(m.refreshable()) << format_name(f);
    const bool tiled = detail::on_cuda<Kokkos::DefaultExecutionSpace>() && f != Format::Ehyb;
    // ehyb (15 a row) walks where more than one row in eight moved: on a
    // GPU, whose parts of a few rows sort this band's rows by what stays in
    // the part.
    bool walked = false;
    if (f == Format::Ehyb) {
      const double in_order = std::stod(kspmv_test::property(m.properties(), "rows_in_order"));
      walked = 8 * in_order < 7.0 * double(b.nrows);
      EXPECT_EQ(kspmv_test::property(m.properties(), "refresh"), walked ? "row walk" : "slot map");
    }
    if (tiled || walked)
      EXPECT_LE(m.value_map_bytes(), 16 * static_cast<std::size_t>(b.nrows + 1)) << format_name(f);
    else
      EXPECT_EQ(m.value_map_bytes(), b_entry) << format_name(f);
  }
}

namespace {
using Space = Kokkos::DefaultExecutionSpace;
using kspmv_test::host_copy;
using DeviceValues = Kokkos::View<const double*, Kokkos::LayoutLeft, Space::memory_space>;

// Whether a tile of 32 rows of `width` columns fits in 48 KB of shared
// memory, worked out here: where CUDA's tuned path refreshes dia, ell,
// ellr and hyb by its tile kernel.
template <class S>
bool tile_fits(std::int64_t width) {
  return detail::on_cuda<Space>() && width > 0 && width * 33 * std::int64_t(sizeof(S)) <= 48 * 1024;
}

// The longest row pellr's and jad's CUDA refresh kernels take, and the
// fewest entries a row holds on average where they do, sorted or in the
// caller's order (tile_refresh_cuda.hpp's kWarpRowsRefreshLongest,
// kWarpRowsRefreshMeanEntries and kWarpRowsScatterMeanEntries), worked
// out here.
constexpr std::int64_t kWarpRowsLongest = 4096;
constexpr std::int64_t kWarpRowsMeanEntries = 10;
constexpr std::int64_t kWarpRowsScatterMeanEntries = 6;

// a with row `hub` holding every column.
HostCsr<double> with_hub_row(const HostCsr<double>& a, ordinal_t hub) {
  HostCsr<double> b(a.nrows, a.ncols);
  b.row_ptr.assign(1, 0);
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    if (i == hub) {
      for (ordinal_t j = 0; j < a.ncols; ++j) {
        b.col_idx.push_back(j);
        b.values.push_back(1.0 + 0.001 * j);
      }
    } else {
      b.col_idx.insert(b.col_idx.end(), a.col_idx.begin() + a.row_ptr[i], a.col_idx.begin() + a.row_ptr[i + 1]);
      b.values.insert(b.values.end(), a.values.begin() + a.row_ptr[i], a.values.begin() + a.row_ptr[i + 1]);
    }
    b.row_ptr.push_back(static_cast<offset_t>(b.col_idx.size()));
  }
  return b;
}

// The format's own refresh (tuned_refresh) of a build of a's values with
// b's gives, value array for value array, a build of b; it says it wrote
// them exactly where `expected`, and elsewhere leaves the build alone. Its
// map is by rows where `expected`, or always where `walks_rows` (a format
// whose slot walk is the refresh elsewhere).
template <class S, class Build, class Arrays>
void tuned_refresh_builds(const HostCsr<S>& a, const Build& build, const Arrays& arrays, bool expected,
                          const std::string& what, bool walks_rows = false) {
  const HostCsr<S> b = with_new_values(a, 31);
  auto f = build(a);
  const auto db = upload_csr<S, Space>(b);
  const Kokkos::View<const S*, Kokkos::LayoutLeft, Space::memory_space> values = db.values;
  const bool wrote = detail::tuned_refresh(Space(), f, db.row_ptr, values);
  Space().fence();
  EXPECT_EQ(wrote, expected) << what;
  EXPECT_EQ(detail::refresh_by_rows(f), expected || walks_rows) << what;
  EXPECT_EQ(arrays(f), arrays(build(wrote ? b : a))) << what;
}

// The shapes a refresh kernel's test ends on: rows of 1-45 entries on
// every seventh row (empty rows between), 1x1, no entries.
template <class Check>
void check_edge_shapes(const Check& check, const std::string& mode) {
  std::vector<std::tuple<int, int, double>> sparse;
  for (int i = 0; i < 900; i += 7)
    for (int j = 0; j < 1 + i % 45; ++j) sparse.emplace_back(i, (i * 13 + j * 29) % 900, 1.0 + j);
  check(kspmv_test::from_triplets<double>(900, 900, sparse), "empty rows" + mode);
  check(kspmv_test::from_triplets<double>(1, 1, {{0, 0, 5.0}}), "1x1" + mode);
  check(HostCsr<double>(40, 40), "no entries" + mode);
}
}  // namespace

// dia, ell, ellr and hyb on CUDA's tuned path refresh by a tile of rows in
// shared memory: rows with every diagonal and rows missing some (the
// stencil's faces, a band's corners), empty rows, row counts that leave a
// tile part full, widths on both sides of what a tile holds in double and
// float, short rows (block-diagonal rows of 5 on 9 diagonals), hyb's
// entries past the width, rows of 40 on hyb's width of 3; a hub row of
// more than 1,024 entries keeps hyb's scatter.
TEST(Refresh, TileKernelWritesTheBitsOfAFreshBuild) {
  for (const KernelPath path : {KernelPath::Auto, KernelPath::Portable}) {
    auto opt = kspmv_test::test_options(path);
    const bool tuned = path == KernelPath::Auto;
    const auto dia_values = [](const auto& f) { return host_copy<typename std::decay_t<decltype(f)>::scalar_type>(f.data); };
    const auto ell_values = [](const auto& f) { return host_copy<typename std::decay_t<decltype(f)>::scalar_type>(f.values); };
    for (const char* spec : {"lap3d:9", "lap2d9:37", "banded:1000:8", "banded:700:64", "banded:600:100",
                             "blockdiag:333:5", "uniform:1000:0:40:seed=4", "hub"}) {
      const auto a = std::string(spec) == "hub" ? with_hub_row(generate<double>("banded:1200:3"), 600)
                                                : generate<double>(spec);
      const auto af = convert_scalar<float>(a);
      const std::int64_t width = kspmv_test::longest_row(a);
      std::set<std::int64_t> diagonals;
      for (ordinal_t i = 0; i < a.nrows; ++i)
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) diagonals.insert(std::int64_t(a.col_idx[k]) - i);
      const std::int64_t ndiag = static_cast<std::int64_t>(diagonals.size());
      const std::string what = std::string(spec) + (tuned ? " auto" : " portable");
      if (kspmv_test::padded_fill(Format::Dia, a) <= opt.max_fill) {
        tuned_refresh_builds(a, [&](const HostCsr<double>& m) { return to_dia<double, Space>(upload_csr<double, Space>(m), opt); },
                             dia_values, tuned && tile_fits<double>(ndiag), what + " dia");
        tuned_refresh_builds(af, [&](const HostCsr<float>& m) { return to_dia<float, Space>(upload_csr<float, Space>(m), opt); },
                             dia_values, tuned && tile_fits<float>(ndiag), what + " dia (float)");
      }
      if (kspmv_test::padded_fill(Format::Ell, a) <= opt.max_fill) {
        tuned_refresh_builds(a, [&](const HostCsr<double>& m) { return to_ell<double, Space>(upload_csr<double, Space>(m), opt); },
                             ell_values, tuned && tile_fits<double>(width), what + " ell");
        tuned_refresh_builds(af, [&](const HostCsr<float>& m) { return to_ell<float, Space>(upload_csr<float, Space>(m), opt); },
                             ell_values, tuned && tile_fits<float>(width), what + " ell (float)");
        tuned_refresh_builds(a, [&](const HostCsr<double>& m) { return to_ellr<double, Space>(upload_csr<double, Space>(m), opt); },
                             [](const auto& f) { return host_copy<double>(f.ell.values); },
                             tuned && tile_fits<double>(width), what + " ellr");
      }
      for (const std::int64_t k : {std::int64_t(3), std::int64_t(12)}) {
        auto o = opt;
        o.hyb_k = k;
        const std::int64_t w = std::min(k, width);
        tuned_refresh_builds(a, [&](const HostCsr<double>& m) { return to_hyb<double, Space>(upload_csr<double, Space>(m), o); },
                             [](const auto& f) {
                               auto v = host_copy<double>(f.ell.values);
                               const auto c = host_copy<double>(f.coo.val);
                               v.insert(v.end(), c.begin(), c.end());
                               return v;
                             },
                             tuned && tile_fits<double>(w) && width <= 1024,
                             what + " hyb K " + std::to_string(k));
      }
    }
  }
}

// evc-hyb on CUDA's tuned path refreshes by its own kernel (a warp a
// sub-ELL slice through a tile, a warp a few runs of the vector-CSR
// part's slots): value array for value array a build of the new values,
// padding included. Rows of 61 and 101 entries in the sub-ELL part (split
// 128) pass the tile's columns (16 in double, 32 in float) and go through
// it in runs; the graphs' and the hub's long rows
// and the last short rows are vector CSR; empty rows; an automatic split
// (lowered on small matrices on CUDA) and float.
TEST(Refresh, EvcHybKernelWritesTheBitsOfAFreshBuild) {
  for (const KernelPath path : {KernelPath::Auto, KernelPath::Portable}) {
    for (const int split : {0, 128}) {
      auto opt = kspmv_test::test_options(path);
      opt.evc_split = split;
      const bool expected = detail::on_cuda<Space>() && path == KernelPath::Auto;
      const auto check = [&](const auto& a, const std::string& what) {
        using S = typename std::decay_t<decltype(a)>::scalar_type;
        tuned_refresh_builds(
            a, [&](const HostCsr<S>& m) { return to_evc_hyb<S, Space>(upload_csr<S, Space>(m), opt); },
            [](const auto& f) {
              auto v = host_copy<S>(f.ell_val);
              const auto c = host_copy<S>(f.csr_val);
              v.insert(v.end(), c.begin(), c.end());
              return v;
            },
            expected, what, true);
      };
      const std::string mode = std::string(path == KernelPath::Auto ? " auto" : " portable") + " split " + std::to_string(split);
      for (const char* spec : {"lap3d:9", "powerlaw:3000:8", "rmat:10:8", "banded:700:30", "banded:500:50",
                               "uniform:1000:0:40:seed=4", "blockdiag:333:5", "hub"}) {
        const auto a = std::string(spec) == "hub" ? with_hub_row(generate<double>("banded:1200:3"), 600)
                                                  : generate<double>(spec);
        check(a, spec + mode);
        check(convert_scalar<float>(a), spec + mode + " (float)");
      }
      check_edge_shapes(check, mode);
    }
  }
}

// pellr (sorted and in the caller's order) and jad on CUDA's tuned path
// refresh by their own kernels (a warp 32 rows read as one run into a
// tile): value array for value array a build of the new values, padding
// included. Rows of 27, 41 and 65 entries pass the tile's columns (23 in
// double, 32 in float: one width, several runs); the graphs' rows of
// mixed lengths; a hub row of 1,200 entries goes through the tile, one of
// 5,000 takes the walk (sorted pellr, jad) or the scatter (pellr in the
// caller's order), and so do rows of fewer than 10 entries on average
// (sorted) or 6 (in the caller's order); empty rows, a last slice part
// full, 1x1, no entries, float.
TEST(Refresh, PellrAndJadKernelsWriteTheBitsOfAFreshBuild) {
  for (const KernelPath path : {KernelPath::Auto, KernelPath::Portable}) {
    for (const RowSort sort : {RowSort::Always, RowSort::Never}) {
      auto opt = kspmv_test::test_options(path);
      opt.pellr_sort = sort;
      const bool sorted = sort == RowSort::Always;
      const auto check = [&](const auto& a, const std::string& what) {
        using S = typename std::decay_t<decltype(a)>::scalar_type;
        // Sorted rows take the kernel only where they are long enough on
        // average; rows in the caller's order wherever it fits.
        const bool tuned = detail::on_cuda<Space>() && path == KernelPath::Auto &&
                           kspmv_test::longest_row(a) <= kWarpRowsLongest &&
                           a.nnz() >= (sorted ? kWarpRowsMeanEntries : kWarpRowsScatterMeanEntries) * std::int64_t(a.nrows);
        const auto values = [](const auto& f) { return host_copy<S>(f.values); };
        tuned_refresh_builds(
            a, [&](const HostCsr<S>& m) { return to_pellr<S, Space>(upload_csr<S, Space>(m), opt); }, values, tuned,
            what + " pellr", sorted);
        if (sorted)
          tuned_refresh_builds(
              a, [&](const HostCsr<S>& m) { return to_jad<S, Space>(upload_csr<S, Space>(m), opt); }, values, tuned,
              what + " jad", true);
      };
      const std::string mode = std::string(path == KernelPath::Auto ? " auto" : " portable") +
                               (sorted ? " sorted" : " caller's order");
      for (const char* spec : {"lap3d:9", "lap3d27:11", "banded:700:20", "banded:500:32", "uniform:1000:0:40:seed=4",
                               "powerlaw:3000:8", "powerlaw:3000:16", "rmat:10:8", "blockdiag:333:5", "hub", "long hub"}) {
        const std::string name = spec;
        const auto a = name == "hub"        ? with_hub_row(generate<double>("banded:1200:8"), 600)
                       : name == "long hub" ? with_hub_row(generate<double>("banded:5000:2"), 2500)
                                            : generate<double>(spec);
        check(a, spec + mode);
        check(convert_scalar<float>(a), spec + mode + " (float)");
      }
      check_edge_shapes(check, mode);
    }
  }
}

// Through Matrix::update_values: the tile kernel where it runs (rows of
// 19 entries), and what the map keeps then (no slot a nonzero).
TEST(Refresh, TileKernelKeepsNoSlotANonzero) {
  const auto a = generate<double>("banded:1200:9");
  const auto opt = kspmv_test::test_options();
  for (Format f : {Format::Dia, Format::Ell, Format::Ellr, Format::Hyb}) {
    auto m = Matrix<double>::convert(a, f, opt);
    const bool tiled = detail::on_cuda<Space>();
    if (tiled)
      EXPECT_LE(m.value_map_bytes(), 16 * static_cast<std::size_t>(a.nrows + 1)) << format_name(f);
    else
      EXPECT_EQ(m.value_map_bytes(), 4 * static_cast<std::size_t>(a.nnz())) << format_name(f);
    const auto b = with_new_values(a, 41);
    m.update_values(device_values(b));
    EXPECT_TRUE(same_bits(product(m, 7), product(Matrix<double>::convert(b, f, opt), 7))) << format_name(f);
  }
}

// The tags: entry k holds the bits k + 1, so no two entries share one.
TEST(Refresh, TaggedPatternKeepsThePatternAndNumbersTheEntries) {
  const auto a = generate<float>("lap2d:5");
  const auto t = tagged_pattern(a);
  EXPECT_EQ(t.row_ptr, a.row_ptr);
  EXPECT_EQ(t.col_idx, a.col_idx);
  for (std::size_t k = 0; k < t.values.size(); ++k) {
    std::uint32_t bits;
    std::memcpy(&bits, &t.values[k], sizeof bits);
    EXPECT_EQ(bits, k + 1);
  }
}

// A format's arrays taken from kept blocks (detail::FormatArrays), as a
// device build takes them, turned on here for the host: every format gives
// the bits of a build with Kokkos's own views, through a refresh, in a copy
// (which shares the format) outliving the matrix it was copied from, and in
// a build after others gave their blocks back (which reuses them: the pool
// holds fewer bytes while it lives).
TEST(Refresh, ArraysFromKeptBlocksGiveTheBitsOfKokkosViews) {
  using Pool = detail::ScratchPool<Space::memory_space>;
  struct FromBlocks {
    bool was = detail::host_arrays_from_blocks();
    FromBlocks() { detail::host_arrays_from_blocks() = true; }
    ~FromBlocks() { detail::host_arrays_from_blocks() = was; }
  };
  const auto opt = kspmv_test::test_options();
  for (const char* spec : {"powerlaw:2000:8", "banded:300:17", "lap2d:20"}) {
    const auto a = generate<double>(spec);
    const auto b = with_new_values(a, 51);
    for (const auto& d : known_formats()) {
      if (!kspmv_test::format_holds(d.format, a)) continue;
      const std::string what = std::string(spec) + " " + format_name(d.format);
      const auto plain = product(Matrix<double>::convert(a, d.format, opt), 5);
      const auto plain_b = product(Matrix<double>::convert(b, d.format, opt), 6);
      FromBlocks on;
      Pool::instance().release();  // so the blocks kept below are this build's
      std::optional<Matrix<double>> copy;
      {
        auto m = Matrix<double>::convert(a, d.format, opt);
        EXPECT_TRUE(same_bits(product(m, 5), plain)) << what;
        copy = m;
        m.update_values(device_values(b));
        EXPECT_TRUE(same_bits(product(m, 6), plain_b)) << what << " refreshed";
      }
      EXPECT_TRUE(same_bits(product(*copy, 6), plain_b)) << what << " copy";
      copy.reset();
      // kk-crs keeps Kokkos Kernels' matrix, pkt Kokkos's views (ehyb's
      // build from a device CSR, the one these take, keeps blocks).
      const std::size_t kept = Pool::instance().kept_bytes();
      const bool in_blocks = d.format != Format::KkCrs && d.format != Format::Pkt;
      if (in_blocks) EXPECT_GT(kept, 0u) << what << ": its blocks went back";
      {
        const auto again = Matrix<double>::convert(a, d.format, opt);
        if (in_blocks) EXPECT_LT(Pool::instance().kept_bytes(), kept) << what << ": a build takes kept blocks";
        EXPECT_TRUE(same_bits(product(again, 5), plain)) << what << " again";
      }
    }
  }
}
