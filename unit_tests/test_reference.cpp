#include "test_support.hpp"

using namespace kspmv;
using kspmv_test::from_triplets;

TEST(Reference, HandComputedProduct) {
  auto a = from_triplets<double>(3, 2, {{0, 0, 2.0}, {0, 1, 3.0}, {2, 1, -1.0}});
  std::vector<double> x = {1.0, 10.0}, y = {1.0, 1.0, 1.0};
  reference_spmv(2.0, a, x, 0.5, y);
  EXPECT_EQ(y, (std::vector<double>{64.5, 0.5, -19.5}));
}

TEST(Reference, BetaZeroIgnoresNaNAndAlphaZeroOnlyScales) {
  auto a = from_triplets<double>(2, 2, {{0, 0, 1.0}, {1, 1, std::numeric_limits<double>::infinity()}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = {3.0, 1.0}, y = {nan, nan};
  reference_spmv(1.0, a, x, 0.0, y);
  EXPECT_EQ(y[0], 3.0);
  EXPECT_TRUE(std::isinf(y[1]));
  std::vector<double> z = {2.0, 4.0};
  reference_spmv(0.0, a, x, 0.5, z);  // Inf in A is not read
  EXPECT_EQ(z, (std::vector<double>{1.0, 2.0}));
  std::vector<double> w = {nan, 4.0};
  reference_spmv(0.0, a, x, 0.0, w);
  EXPECT_EQ(w, (std::vector<double>{0.0, 0.0}));
}

TEST(Reference, CheckerAcceptsRoundingAndRejectsWrongValues) {
  auto a = generate<float>("normal:200:20:5:seed=3");
  const auto x = kspmv_test::random_vector<float>(200, 1);
  const std::vector<float> y0(200, 0.f);
  // A float kernel summing in another order: within the bound.
  std::vector<float> y(200);
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    float s = 0;
    for (offset_t k = a.row_ptr[i + 1] - 1; k >= a.row_ptr[i]; --k) s += a.values[k] * x[a.col_idx[k]];
    y[i] = s;
  }
  auto c = check_spmv(a, 1.f, x, 0.f, y0, y);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_LE(c.worst_ratio, 1.0);
  // One wrong column index in one row is caught.
  auto bad = y;
  const offset_t k = a.row_ptr[17];
  bad[17] += a.values[k] * (x[(a.col_idx[k] + 1) % 200] - x[a.col_idx[k]]);
  c = check_spmv(a, 1.f, x, 0.f, y0, bad);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.first_bad, 17);
  EXPECT_EQ(c.bad_rows, 1);
  // NaN where a number is expected, and a missed NaN, are both caught.
  bad = y;
  bad[3] = std::nanf("");
  EXPECT_FALSE(check_spmv(a, 1.f, x, 0.f, y0, bad).ok);
  auto xn = x;
  xn[a.col_idx[a.row_ptr[5]]] = std::nanf("");
  std::vector<float> yn(200);
  reference_spmv(1.f, a, xn, 0.f, yn);
  EXPECT_TRUE(check_spmv(a, 1.f, xn, 0.f, y0, yn).ok);
  auto yn2 = yn;
  for (auto& v : yn2)
    if (std::isnan(v)) v = 0.f;
  EXPECT_FALSE(check_spmv(a, 1.f, xn, 0.f, y0, yn2).ok);
}

TEST(Reference, WrongLengthsAreErrors) {
  auto a = from_triplets<double>(2, 3, {{0, 0, 1.0}});
  std::vector<double> x(2), y(2);
  EXPECT_THROW(reference_spmv(1.0, a, x, 0.0, y), InvalidArgumentError);
}
