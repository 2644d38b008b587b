// Matrices given on the device: a caller's views or a Kokkos Kernels
// CrsMatrix, canonical or with unsorted columns and duplicate entries, and
// the typed errors for what cannot be mended.
#include <KokkosSparse_CrsMatrix.hpp>
#include <cstring>
#include <algorithm>
#include <random>

#include "test_support.hpp"

using namespace kspmv;

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;
using M = Matrix<double>;

template <class T, class U>
Kokkos::View<T*, Mem> to_device(const std::vector<U>& v) {
  return detail::upload<T, Mem>(v, "v");
}

std::vector<double> apply_host(const M& m, const std::vector<double>& x) {
  auto dx = to_device<double>(x);
  M::vector_type y("y", m.nrows());
  m.apply(1.0, dx, 0.0, y);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

bool holds(Format f, const HostCsr<double>& a) {
  for (const auto& d : known_formats())
    if (d.format == f && d.square_only && a.nrows != a.ncols) return false;
  return kspmv_test::padded_fill(f, a) <= kspmv_test::kTestMaxFill;
}

}  // namespace

// Canonical views give the same bits as the host matrix's conversion, for
// every format, whatever integer type the offsets come in.
TEST(DeviceInput, CanonicalViewsMatchTheHostConversion) {
  for (const char* spec : {"powerlaw:2000:8:seed=3", "lap3d:8", "banded:400:9"}) {
    const auto a = generate<double>(spec);
    const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 4);
    const auto rp64 = to_device<std::int64_t>(a.row_ptr);
    const auto rp_size = to_device<std::size_t>(a.row_ptr);
    const auto ci = to_device<int>(a.col_idx);
    const auto va = to_device<double>(a.values);
    for (const auto& d : known_formats()) {
      if (!holds(d.format, a)) continue;
      const auto opt = kspmv_test::test_options();
      const auto from_host = apply_host(M::convert(a, d.format, opt), x);
      EXPECT_EQ(from_host, apply_host(M::from_device_views(a.nrows, a.ncols, rp64, ci, va, d.format, opt), x))
          << spec << " " << d.name;
      EXPECT_EQ(from_host, apply_host(M::from_device_views(a.nrows, a.ncols, rp_size, ci, va, d.format, opt), x))
          << spec << " " << d.name << " (size_t offsets)";
    }
  }
}

// Unsorted columns and duplicates are sorted and summed; a refresh takes
// values in the input's order and sums the duplicates again.
TEST(DeviceInput, UnsortedAndDuplicateEntriesAreMergedAndRefreshedInInputOrder) {
  // Row 0: columns 3, 0, 3 (a duplicate), row 1 empty, row 2: 2, 1, 0.
  const std::vector<int> rp = {0, 3, 3, 6};
  const std::vector<int> ci = {3, 0, 3, 2, 1, 0};
  const std::vector<double> v1 = {1, 2, 4, 8, 16, 32}, v2 = {-1, 3, 5, 7, 11, 13};
  auto canonical = [](const std::vector<double>& v) {
    return kspmv_test::from_triplets<double>(3, 4, {{0, 0, v[1]}, {0, 3, v[0] + v[2]}, {2, 0, v[5]}, {2, 1, v[4]},
                                                    {2, 2, v[3]}});
  };
  const std::vector<double> x = {1, 10, 100, 1000};
  for (const auto& d : known_formats()) {
    const auto a1 = canonical(v1);
    if (!holds(d.format, a1)) continue;
    const auto opt = kspmv_test::test_options();
    M m = M::from_device_views(3, 4, to_device<int>(rp), to_device<int>(ci), to_device<double>(v1), d.format, opt);
    EXPECT_EQ(m.nnz(), 5) << d.name;
    EXPECT_EQ(apply_host(m, x), apply_host(M::convert(a1, d.format, opt), x)) << d.name;
    m.update_values(to_device<double>(v2));
    EXPECT_EQ(apply_host(m, x), apply_host(M::convert(canonical(v2), d.format, opt), x)) << d.name;
    // The input's entry count, not the merged one.
    EXPECT_THROW(m.update_values(to_device<double>(std::vector<double>(5, 1.0))), InvalidArgumentError) << d.name;
  }
}

// A Kokkos Kernels matrix is read from its own views.
TEST(DeviceInput, KokkosKernelsMatrixKeepsItsValuesOnTheDevice) {
  using Device = Kokkos::Device<Space, Mem>;
  using Crs = KokkosSparse::CrsMatrix<double, int, Device, void, int>;
  const auto a = generate<double>("lap2d:30");
  Crs A("kk", a.nrows, a.ncols, static_cast<int>(a.nnz()), to_device<double>(a.values), to_device<int>(a.row_ptr),
        to_device<int>(a.col_idx));
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 8);
  for (Format f : {Format::Csr, Format::CsrVector, Format::Ell, Format::Pellr}) {
    M m = M::from_kokkos_kernels(A, f);
    EXPECT_EQ(apply_host(m, x), apply_host(M::convert(a, f), x)) << format_name(f);
    // Refreshed from the CrsMatrix's values after the caller changed them.
    Kokkos::deep_copy(A.values, 2.0);
    m.update_values(A.values);
    auto b = a;
    for (auto& v : b.values) v = 2.0;
    EXPECT_EQ(apply_host(m, x), apply_host(M::convert(b, f), x)) << format_name(f);
    Kokkos::deep_copy(A.values, to_device<double>(a.values));
  }
}

TEST(DeviceInput, WhatCannotBeMendedIsATypedError) {
  const auto ci = to_device<int>(std::vector<int>{0, 1, 1});
  const auto va = to_device<double>(std::vector<double>{1, 2, 3});
  // Offsets that go backwards, past the entries, or do not end at nnz.
  for (const std::vector<int>& rp : {std::vector<int>{0, 2, 1, 3}, std::vector<int>{0, 2, 4, 3},
                                     std::vector<int>{1, 2, 3, 3}, std::vector<int>{0, 1, 2, 2}})
    EXPECT_THROW(M::from_device_views(3, 3, to_device<int>(rp), ci, va, Format::Csr), InvalidArgumentError);
  const auto rp = to_device<int>(std::vector<int>{0, 1, 2, 3});
  // A column out of range, a negative one, the wrong number of offsets or
  // values.
  EXPECT_THROW(M::from_device_views(3, 1, rp, ci, va, Format::Csr), InvalidArgumentError);
  EXPECT_THROW(M::from_device_views(3, 3, rp, to_device<int>(std::vector<int>{0, -1, 1}), va, Format::Ell),
               InvalidArgumentError);
  EXPECT_THROW(M::from_device_views(2, 3, rp, ci, va, Format::Csr), InvalidArgumentError);
  EXPECT_THROW(M::from_device_views(3, 3, rp, ci, to_device<double>(std::vector<double>{1, 2}), Format::Csr),
               InvalidArgumentError);
  try {
    M::from_device_views(3, 3, rp, to_device<int>(std::vector<int>{0, 7, 1}), va, Format::Coo);
    FAIL() << "a column past ncols was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("row 1"), std::string::npos) << e.what();
  }
}

namespace {
// A caller's CSR made from a canonical one: each row's entries shuffled,
// some split into two or three duplicates whose values sum to the
// original. Values are small integers, so any order of summing gives the
// same bits.
struct ScrambledCsr {
  HostCsr<double> canonical;
  std::vector<std::int64_t> row_ptr;
  std::vector<int> col;
  std::vector<double> val;
};

ScrambledCsr scrambled(const std::string& spec, unsigned seed) {
  ScrambledCsr s;
  s.canonical = generate<double>(spec);
  std::mt19937 rng(seed);
  for (auto& v : s.canonical.values) v = double(int(rng() % 17) - 8);
  s.row_ptr.push_back(0);
  std::vector<std::pair<int, double>> row;
  for (ordinal_t i = 0; i < s.canonical.nrows; ++i) {
    row.clear();
    for (offset_t k = s.canonical.row_ptr[i]; k < s.canonical.row_ptr[i + 1]; ++k) {
      const int parts = 1 + int(rng() % 4 == 0) + int(rng() % 8 == 0);
      double left = s.canonical.values[k];
      for (int p = 1; p < parts; ++p) {
        const double piece = double(int(rng() % 5) - 2);
        row.emplace_back(s.canonical.col_idx[k], piece);
        left -= piece;
      }
      row.emplace_back(s.canonical.col_idx[k], left);
    }
    std::shuffle(row.begin(), row.end(), rng);
    for (const auto& [c, v] : row) {
      s.col.push_back(c);
      s.val.push_back(v);
    }
    s.row_ptr.push_back(static_cast<std::int64_t>(s.col.size()));
  }
  return s;
}

template <class T>
std::vector<T> to_host(const Kokkos::View<const T*, Mem>& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<T>(h.data(), h.data() + h.extent(0));
}
}  // namespace

// The device sorts and sums what the caller gave: the canonical matrix
// exactly, and merge lists that name, for each canonical entry, its input
// entries in input order; the same when the sort runs in batches of rows.
TEST(DeviceInput, UnsortedRowsAreSortedAndSummedOnTheDevice) {
  for (const char* spec : {"powerlaw:3000:8:seed=5", "lap2d:20", "uniform:700:0:9:cols=60:seed=2", "dense:40:70"}) {
    const auto s = scrambled(spec, 11);
    const auto& a = s.canonical;
    const auto d = device_csr_from_views<double, Space>(a.nrows, a.ncols, to_device<std::int64_t>(s.row_ptr),
                                                        to_device<int>(s.col), to_device<double>(s.val));
    const auto c = canonical_csr(Space(), d, "test");
    ASSERT_TRUE(c.merged()) << spec;
    EXPECT_EQ(c.input_nnz, static_cast<std::int64_t>(s.col.size()));
    EXPECT_EQ(to_host(c.csr.row_ptr), a.row_ptr) << spec;
    EXPECT_EQ(to_host(c.csr.col_idx), a.col_idx) << spec;
    EXPECT_EQ(to_host(c.csr.values), a.values) << spec;
    const auto off = to_host<int>(c.merge_offsets), from = to_host<int>(c.merge_entries);
    ASSERT_EQ(off.size(), a.col_idx.size() + 1);
    ASSERT_EQ(from.size(), s.col.size());
    EXPECT_EQ(off.back(), static_cast<int>(s.col.size()));
    std::vector<char> used(s.col.size(), 0);
    for (ordinal_t i = 0; i < a.nrows; ++i)
      for (offset_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
        ASSERT_LT(off[e], off[e + 1]) << spec << " entry " << e;
        for (int p = off[e]; p < off[e + 1]; ++p) {
          const int k = from[p];
          ASSERT_TRUE(k >= s.row_ptr[i] && k < s.row_ptr[i + 1]) << spec << ": entry " << k << " is not row " << i << "'s";
          EXPECT_EQ(s.col[k], a.col_idx[e]) << spec;
          if (p > off[e]) EXPECT_LT(from[p - 1], k) << spec << ": duplicates out of input order";
          EXPECT_FALSE(used[k]) << spec;
          used[k] = 1;
        }
      }
    // Sorted one bad row at a time (the batches a 64-bit key overflow asks
    // for): the same arrays.
    const auto one = detail::canonical_csr_on_device(Space(), d, 1);
    EXPECT_EQ(to_host(one.csr.col_idx), a.col_idx) << spec;
    EXPECT_EQ(to_host(one.csr.values), a.values) << spec;
    EXPECT_EQ(to_host<int>(one.merge_offsets), off) << spec;
    EXPECT_EQ(to_host<int>(one.merge_entries), from) << spec;
  }
}

// A matrix built from the scrambled input is refreshed with values in the
// input's order, duplicates summed again.
TEST(DeviceInput, ScrambledInputRefreshesLikeAFreshConversion) {
  auto s = scrambled("powerlaw:2000:6:seed=9", 4);
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(s.canonical.ncols), 3);
  for (Format f : {Format::Csr, Format::Coo, Format::Pellr, Format::EvcHyb, Format::CsrMerge}) {
    const auto opt = kspmv_test::test_options();
    M m = M::from_device_views(s.canonical.nrows, s.canonical.ncols, to_device<std::int64_t>(s.row_ptr),
                               to_device<int>(s.col), to_device<double>(s.val), f, opt);
    EXPECT_EQ(apply_host(m, x), apply_host(M::convert(s.canonical, f, opt), x)) << format_name(f);
    // New values: each input entry doubled, so each canonical one doubles.
    std::vector<double> twice(s.val);
    for (auto& v : twice) v *= 2;
    auto b = s.canonical;
    for (auto& v : b.values) v *= 2;
    m.update_values(to_device<double>(twice));
    EXPECT_EQ(apply_host(m, x), apply_host(M::convert(b, f, opt), x)) << format_name(f);
  }
}

// for_each_row_segment over the rows of row_ptr, each entry's visits,
// row and segment length recorded (a free function: nvcc takes no device
// lambda in a test body, a private member).
void visit_segments(const Kokkos::View<offset_t*, Mem>& rp, std::int64_t longest, const Kokkos::View<int*, Mem>& visits,
                    const Kokkos::View<int*, Mem>& row, const Kokkos::View<int*, Mem>& span) {
  detail::for_each_row_segment(
      Space(), "test::segments", std::int64_t(rp.extent(0)) - 1, longest,
      KOKKOS_LAMBDA(const std::int64_t r) { return rp(r); }, KOKKOS_LAMBDA(const std::int64_t r) { return rp(r + 1); },
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t k0, const std::int64_t k1) {
        for (std::int64_t k = k0; k < k1; ++k) {
          Kokkos::atomic_add(&visits(k), 1);
          row(k) = static_cast<int>(r);
          span(k) = static_cast<int>(k1 - k0);
        }
      });
}

// The conversions' fills walk rows in segments of at most kRowSegment
// entries (a power-law hub spread over many threads): every entry is
// visited once, by its own row, in segments no longer than that, with
// empty rows, rows of one segment and rows of many; where no row is
// longer than a segment, a thread takes a row whole.
TEST(DeviceInput, RowSegmentsVisitEveryEntryOnce) {
  const std::vector<std::int64_t> lengths = {0, 3, 32, 33, 0, 0, 1000, 64, 65, 1, 0, 31, 7000, 2};
  std::vector<offset_t> row_ptr(1, 0);
  for (const auto l : lengths) row_ptr.push_back(row_ptr.back() + static_cast<offset_t>(l));
  const std::int64_t n = static_cast<std::int64_t>(lengths.size()), nnz = row_ptr.back();
  const auto rp = to_device<offset_t>(row_ptr);
  for (const std::int64_t longest : {std::int64_t(7000), std::int64_t(100000)}) {
    Kokkos::View<int*, Mem> visits("visits", nnz), row("row", nnz), span("span", nnz);
    visit_segments(rp, longest, visits, row, span);
    const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), visits);
    const auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), row);
    const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), span);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        ASSERT_EQ(v(k), 1) << "entry " << k;
        ASSERT_EQ(w(k), i) << "entry " << k;
        ASSERT_LE(s(k), detail::kRowSegment) << "entry " << k;
      }
  }
  const std::vector<offset_t> short_ptr = {0, 5, 5, 37, 40};
  Kokkos::View<int*, Mem> visits("visits", 40), row("row", 40), span("span", 40);
  visit_segments(to_device<offset_t>(short_ptr), 32, visits, row, span);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), span);
  for (std::int64_t k = 0; k < 40; ++k) EXPECT_EQ(h(k), k < 5 ? 5 : k < 37 ? 32 : 3) << k;
}
