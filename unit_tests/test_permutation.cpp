#include "test_support.hpp"

using namespace kspmv;

TEST(Permutation, RoundTripsOnHost) {
  const std::vector<ordinal_t> p = {3, 0, 4, 1, 2};
  const std::vector<int> v = {10, 11, 12, 13, 14};
  const auto g = gather(v, p);
  EXPECT_EQ(g, (std::vector<int>{13, 10, 14, 11, 12}));
  EXPECT_EQ(scatter(g, p), v);
  const auto inv = inverse_permutation(p);
  EXPECT_EQ(gather(g, inv), v);
}

TEST(Permutation, InvalidPermutationsAreRejected) {
  EXPECT_THROW(validate_permutation({0, 0, 1}, 3), InvalidArgumentError);
  EXPECT_THROW(validate_permutation({0, 3, 1}, 3), InvalidArgumentError);
  EXPECT_THROW(validate_permutation({0, 1}, 3), InvalidArgumentError);
  EXPECT_NO_THROW(validate_permutation({2, 0, 1}, 3));
}

TEST(Permutation, PermutedRowsGivePermutedProduct) {
  auto a = generate<double>("normal:40:6:3:seed=5");
  std::vector<ordinal_t> p(40);
  for (int i = 0; i < 40; ++i) p[i] = (i * 7) % 40;
  auto b = permute_rows(a, p);
  b.validate();
  const auto x = kspmv_test::random_vector<double>(40, 1);
  std::vector<double> ya(40), yb(40);
  reference_spmv(1.0, a, x, 0.0, ya);
  reference_spmv(1.0, b, x, 0.0, yb);
  EXPECT_EQ(scatter(yb, p), ya);
}

TEST(Permutation, DeviceGatherScatterAndCombine) {
  using Space = Kokkos::DefaultExecutionSpace;
  const int n = 1000;
  std::vector<ordinal_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = (i * 337) % n;  // 337 coprime with 1000
  auto dp = detail::upload<int, Space::memory_space>(p, "p");
  const auto v = kspmv_test::random_vector<double>(n, 3);
  auto dv = detail::upload<double, Space::memory_space>(v, "v");
  Kokkos::View<double*, Space::memory_space> g("g", n), s("s", n);
  device_gather(Space(), dp, dv, g);
  device_scatter(Space(), dp, g, s);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
  auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(hs(i), v[i]);
    ASSERT_EQ(hg(i), v[p[i]]);
  }
  // y(p(i)) = 2 * t(i) + 0 * y: beta = 0 must overwrite NaN.
  Kokkos::View<double*, Space::memory_space> y("y", n);
  Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
  device_scatter_combine(Space(), dp, 2.0, g, 0.0, y);
  auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
  for (int i = 0; i < n; ++i) ASSERT_EQ(hy(i), 2.0 * v[i]);
}
