#include "test_support.hpp"

using namespace kspmv;

namespace {
template <class Scalar>
bool is_symmetric(const HostCsr<Scalar>& a) {
  auto t = transpose(a);
  return t.row_ptr == a.row_ptr && t.col_idx == a.col_idx && t.values == a.values;
}
}  // namespace

TEST(Generators, LaplacianCountsMatchClosedForms) {
  // n-point stencils on a side-N grid: interior rows have n entries.
  EXPECT_EQ(generate<double>("lap1d:10").nnz(), 3 * 10 - 2);
  EXPECT_EQ(generate<double>("lap2d:10").nnz(), 5 * 100 - 4 * 10);
  EXPECT_EQ(generate<double>("lap2d5:10").nnz(), 5 * 100 - 4 * 10);
  EXPECT_EQ(generate<double>("lap2d9:10").nnz(), 9 * 100 - 12 * 10 + 4);
  EXPECT_EQ(generate<double>("lap3d:10").nnz(), 7 * 1000 - 6 * 100);
  EXPECT_EQ(generate<double>("lap3d27:5").nnz(), 13 * 13 * 13);  // (3N-2)^3
}

TEST(Generators, BellGarlandTable3Sizes) {
  // The paper's Table 3: rows and nonzeros of the structured set.
  auto l7 = laplacian<float>(Stencil::Lap3d7, 100);
  EXPECT_EQ(l7.nrows, 1000000);
  EXPECT_EQ(l7.nnz(), 6940000);
  auto l5 = laplacian<float>(Stencil::Lap2d5, 1000);
  EXPECT_EQ(l5.nnz(), 4996000);
  auto l9 = laplacian<float>(Stencil::Lap2d9, 1000);
  EXPECT_EQ(l9.nnz(), 8988004);
  auto l3 = laplacian<float>(Stencil::Lap1d3, 1000000);
  EXPECT_EQ(l3.nnz(), 2999998);
}

TEST(Generators, LaplaciansAreSymmetricWithZeroRowSumsInside) {
  for (const char* s : {"lap1d:9", "lap2d:7", "lap2d9:7", "lap3d:5", "lap3d27:4"}) {
    auto a = generate<double>(s);
    a.validate();
    EXPECT_TRUE(is_symmetric(a)) << s;
    // Interior rows (the full stencil) sum to zero; boundary rows do not.
    const auto st = row_length_stats(a);
    int interior = 0;
    for (ordinal_t i = 0; i < a.nrows; ++i) {
      if (a.row_length(i) != st.max) continue;
      double sum = 0;
      for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += a.values[k];
      EXPECT_EQ(sum, 0.0) << s << " row " << i;
      ++interior;
    }
    EXPECT_GT(interior, 0) << s;
  }
}

TEST(Generators, SeededAndReproducible) {
  for (const char* s : {"uniform:500:0:20:seed=4", "normal:500:10:4", "powerlaw:500:8", "rmat:9:8",
                        "dense:7:5", "banded:50:3", "blockdiag:50:7"}) {
    auto a = generate<double>(s), b = generate<double>(s);
    a.validate();
    EXPECT_EQ(a.col_idx, b.col_idx) << s;
    EXPECT_EQ(a.values, b.values) << s;
  }
  EXPECT_NE(generate<double>("rmat:9:8:seed=1").col_idx, generate<double>("rmat:9:8:seed=2").col_idx);
}

TEST(Generators, RowLengthDistributions) {
  auto u = generate<double>("uniform:20000:3:7:cols=1000");
  auto su = row_length_stats(u);
  EXPECT_EQ(su.min, 3);
  EXPECT_EQ(su.max, 7);
  EXPECT_NEAR(su.mean, 5.0, 0.05);
  EXPECT_EQ(u.ncols, 1000);

  auto n = generate<double>("normal:20000:30:5");
  auto sn = row_length_stats(n);
  EXPECT_NEAR(sn.mean, 30.0, 0.2);
  EXPECT_NEAR(sn.stddev, 5.0, 0.2);

  auto p = generate<double>("powerlaw:200000:8");
  auto sp = row_length_stats(p);
  EXPECT_NEAR(sp.mean, 8.0, 0.8);
  EXPECT_GT(sp.skewness, 5.0);  // a heavy right tail
  EXPECT_GT(sp.max, 100 * sp.fractiles[15]);

  // Rows never exceed the number of columns, and columns are distinct.
  auto d = generate<double>("uniform:50:10:10:cols=10");
  EXPECT_EQ(d.nnz(), 500);
  d.validate();
}

TEST(Generators, RmatIsPowerLawLikeWithDuplicatesSummed) {
  auto a = generate<double>("rmat:12:16");
  a.validate();
  EXPECT_EQ(a.nrows, 4096);
  EXPECT_LT(a.nnz(), 16 * 4096);  // duplicates were merged
  EXPECT_GT(a.nnz(), 8 * 4096);
  auto s = row_length_stats(a);
  EXPECT_GT(s.max, 20 * s.mean);
  auto flat = generate<double>("rmat:10:4:a=0.25:b=0.25:c=0.25:scramble=0");
  EXPECT_LT(row_length_stats(flat).max, 20);
}

TEST(Generators, DenseBandedBlockDiagonal) {
  auto d = generate<float>("dense:6:9");
  EXPECT_EQ(d.nnz(), 54);
  auto b = generate<double>("banded:10:2");
  EXPECT_EQ(b.nnz(), 10 * 5 - 2 - 4);
  auto k = generate<double>("blockdiag:10:4");
  EXPECT_EQ(k.nnz(), 16 + 16 + 4);
}

TEST(Generators, BadSpecsAreErrors) {
  EXPECT_THROW(generate<double>("nosuch:5"), InvalidArgumentError);
  EXPECT_THROW(generate<double>("lap3d"), ParseError);  // a generator, but no size
  EXPECT_THROW(generate<double>("lap3d:"), ParseError);
  EXPECT_THROW(generate<double>("lap3d:x"), ParseError);
  EXPECT_THROW(generate<double>("lap3d:-4"), ParseError);
  EXPECT_THROW(generate<double>("lap3d:4:5"), ParseError);
  EXPECT_THROW(generate<double>("lap3d:4.5"), ParseError);
  EXPECT_THROW(generate<double>("uniform:10:5:2"), ParseError);
  EXPECT_THROW(generate<double>("powerlaw:10:5:1.5"), ParseError);
  EXPECT_THROW(generate<double>("rmat:10:seed=1:colour=3"), ParseError);
  EXPECT_THROW(generate<double>("rmat:10:a=0.9:b=0.9"), InvalidArgumentError);
  EXPECT_THROW(generate<double>("lap3d:2000"), OverflowError);  // 8e9 rows
  EXPECT_TRUE(is_generator_spec("lap3d:4"));
  EXPECT_FALSE(is_generator_spec("lap3d"));
  EXPECT_FALSE(is_generator_spec("foo:4"));
}
