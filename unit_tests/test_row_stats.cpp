#include "test_support.hpp"

using namespace kspmv;

TEST(RowStats, HandComputedPmfAndMoments) {
  // Lengths {0, 1, 1, 2, 6}: N = 5, nnz = 10, mean 2.
  auto s = row_length_stats({0, 1, 1, 2, 6}, 10, 4);
  EXPECT_EQ(s.nnz, 10);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 6);
  EXPECT_EQ(s.empty_rows, 1);
  EXPECT_DOUBLE_EQ(s.mean, 2.0);
  // deviations -2,-1,-1,0,4: var = (4+1+1+0+16)/5 = 4.4, m3 = (-8-1-1+0+64)/5 = 10.8
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(4.4));
  EXPECT_NEAR(s.skewness, 10.8 / std::pow(4.4, 1.5), 1e-12);
  EXPECT_DOUBLE_EQ(s.pmf(1), 0.4);
  EXPECT_DOUBLE_EQ(s.pmf(3), 0.0);
  EXPECT_DOUBLE_EQ(s.prob_le(1), 0.6);
  EXPECT_DOUBLE_EQ(s.prob_gt(1), 0.4);
  EXPECT_DOUBLE_EQ(s.mean_le(1), 2.0 / 3.0);  // eq. 7
  EXPECT_DOUBLE_EQ(s.mean_gt(1), 4.0);        // eq. 8: (2 + 6) / 2
  EXPECT_DOUBLE_EQ(s.nnz_le(1), 2.0);         // eq. 13
  EXPECT_DOUBLE_EQ(s.nnz_gt(1), 8.0);         // eq. 14
  EXPECT_DOUBLE_EQ(s.nnz_le(1) + s.nnz_gt(1), double(s.nnz));
  // 4-fractiles: smallest k with P(X <= k) >= i/4: P(<=0)=.2, P(<=1)=.6, P(<=2)=.8, P(<=6)=1
  EXPECT_EQ(s.fractiles, (std::vector<std::int64_t>{1, 1, 2, 6}));
  EXPECT_DOUBLE_EQ(s.fractile_mean(), 2.5);
}

TEST(RowStats, ConstantLengthsHaveZeroSpread) {
  auto s = row_length_stats({3, 3, 3}, 3, 2);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.skewness, 0.0);
  EXPECT_EQ(s.fractiles, (std::vector<std::int64_t>{3, 3}));
}

TEST(RowStats, EmptyMatrixAndMatrixOverload) {
  auto e = row_length_stats(std::vector<std::int64_t>{}, 0);
  EXPECT_EQ(e.nrows, 0);
  EXPECT_EQ(e.mean, 0.0);
  EXPECT_EQ(row_length_histogram(e), "  (no rows)\n");
  auto a = generate<double>("lap2d:4");
  auto s = row_length_stats(a, 8);
  EXPECT_EQ(s.nnz, a.nnz());
  EXPECT_EQ(s.counts[3], 4);   // corners
  EXPECT_EQ(s.counts[4], 8);   // edges
  EXPECT_EQ(s.counts[5], 4);   // interior
  EXPECT_THROW(row_length_stats(a, 0), InvalidArgumentError);
}

TEST(RowStats, HistogramShowsEveryLength) {
  auto s = row_length_stats({1, 2, 2, 4}, 4);
  const auto h = row_length_histogram(s);
  EXPECT_NE(h.find("50.0%"), std::string::npos) << h;
  EXPECT_NE(h.find("25.0%"), std::string::npos) << h;
  auto wide = row_length_stats({0, 1, 1000}, 2000);
  const auto hw = row_length_histogram(wide);
  EXPECT_NE(hw.find("512-1000"), std::string::npos) << hw;
}
