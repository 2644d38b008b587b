// Matrices given on the device: a caller's views or a Kokkos Kernels
// CrsMatrix, canonical or with unsorted columns and duplicate entries, and
// the typed errors for what cannot be mended.
#include <KokkosSparse_CrsMatrix.hpp>
#include <cstring>

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
