#include "test_support.hpp"

using namespace kspmv;
using kspmv_test::from_triplets;

TEST(HostMatrix, TripletsAreSortedAndDuplicatesSummed) {
  auto a = from_triplets<double>(3, 4, {{2, 1, 1.0}, {0, 3, 2.0}, {0, 0, 3.0}, {2, 1, 4.0}, {0, 3, -1.0}});
  a.validate();
  EXPECT_EQ(a.nnz(), 3);
  EXPECT_EQ(a.row_ptr, (std::vector<offset_t>{0, 2, 2, 3}));
  EXPECT_EQ(a.col_idx, (std::vector<ordinal_t>{0, 3, 1}));
  EXPECT_EQ(a.values, (std::vector<double>{3.0, 1.0, 5.0}));
}

TEST(HostMatrix, ExplicitZerosAreKept) {
  auto a = from_triplets<float>(2, 2, {{0, 1, 0.0}, {1, 0, 1.0}, {1, 0, -1.0}});
  EXPECT_EQ(a.nnz(), 2);  // a stored zero and a duplicate pair summing to zero both stay
  EXPECT_EQ(a.values[0], 0.0f);
  EXPECT_EQ(a.values[1], 0.0f);
}

TEST(HostMatrix, EmptyRowsRectangularAndEmpty) {
  auto a = from_triplets<double>(5, 2, {{4, 1, 1.0}});
  a.validate();
  EXPECT_EQ(a.nrows, 5);
  EXPECT_EQ(a.ncols, 2);
  EXPECT_EQ(row_lengths(a), (std::vector<std::int64_t>{0, 0, 0, 0, 1}));
  HostCsr<double> e(0, 0);
  e.validate();
  EXPECT_EQ(e.nnz(), 0);
}

TEST(HostMatrix, OutOfRangeAndOverflowAreErrors) {
  HostCoo<double> c(2, 2);
  EXPECT_THROW(c.add(2, 0, 1.0), InvalidArgumentError);
  EXPECT_THROW(c.add(0, -1, 1.0), InvalidArgumentError);
  EXPECT_THROW(HostCoo<double>(std::int64_t(1) << 31, 1), OverflowError);
  EXPECT_THROW(HostCsr<double>(1, std::int64_t(3) << 31), OverflowError);
  try {
    HostCsr<double>(std::int64_t(1) << 32, 1);
    FAIL() << "no overflow reported";
  } catch (const OverflowError& e) {
    EXPECT_NE(std::string(e.what()).find("32-bit"), std::string::npos) << e.what();
  }
  EXPECT_THROW(checked_cast<std::int32_t>(std::int64_t(1) << 40, "x"), OverflowError);
  EXPECT_THROW(checked_cast<std::uint32_t>(-1, "x"), OverflowError);
  EXPECT_EQ(checked_cast<std::int32_t>(std::int64_t(123), "x"), 123);
}

TEST(HostMatrix, ValidateCatchesBrokenCsr) {
  auto a = from_triplets<double>(2, 3, {{0, 0, 1.0}, {0, 2, 1.0}, {1, 1, 1.0}});
  auto b = a;
  std::swap(b.col_idx[0], b.col_idx[1]);
  EXPECT_THROW(b.validate(), InvalidArgumentError);
  b = a;
  b.col_idx[2] = 3;
  EXPECT_THROW(b.validate(), InvalidArgumentError);
  b = a;
  b.row_ptr[1] = 3;
  b.row_ptr[2] = 2;
  EXPECT_THROW(b.validate(), InvalidArgumentError);
}

// A conversion checks the offsets (O(rows)) before it reads the arrays: a
// row_ptr with a leading 0 too many (nrows + 2 entries), one that
// decreases, or one whose end is not the entry count is refused, for every
// format, with nothing built.
TEST(HostMatrix, ConversionRefusesBrokenOffsets) {
  const auto a = from_triplets<double>(3, 3, {{0, 0, 1.0}, {0, 2, 1.0}, {1, 1, 1.0}, {2, 2, 2.0}});
  std::vector<HostCsr<double>> broken(3, a);
  broken[0].row_ptr.insert(broken[0].row_ptr.begin(), 0);
  broken[1].row_ptr[1] = 3;
  broken[1].row_ptr[2] = 2;
  broken[2].row_ptr.back() = 3;
  for (const auto& b : broken) {
    EXPECT_THROW(b.validate_offsets(), InvalidArgumentError);
    for (const auto& c : kspmv_test::format_cases())
      EXPECT_THROW(Matrix<double>::convert(b, c.format, kspmv_test::test_options(c.kernel)), InvalidArgumentError)
          << format_name(c.format);
  }
  EXPECT_NO_THROW(a.validate_offsets());
}

TEST(HostMatrix, TransposeAndCooRoundTrip) {
  auto a = kspmv::generate<double>("uniform:50:0:9:cols=37:seed=3");
  auto t = transpose(a);
  t.validate();
  EXPECT_EQ(t.nrows, 37);
  EXPECT_EQ(t.ncols, 50);
  auto tt = transpose(t);
  EXPECT_EQ(tt.row_ptr, a.row_ptr);
  EXPECT_EQ(tt.col_idx, a.col_idx);
  EXPECT_EQ(tt.values, a.values);
  auto back = to_csr(to_coo(a));
  EXPECT_EQ(back.col_idx, a.col_idx);
  EXPECT_EQ(back.values, a.values);
  auto f = convert_scalar<float>(a);
  EXPECT_EQ(f.col_idx, a.col_idx);
  EXPECT_FLOAT_EQ(f.values[3], static_cast<float>(a.values[3]));
}

TEST(HostMatrix, Csr32MinimumBytes) {
  auto a = from_triplets<double>(3, 4, {{0, 0, 1.0}, {2, 3, 1.0}});
  // 2 entries * (8 + 4) + 4 row offsets * 4 + x 4 * 8 + y 3 * 8
  EXPECT_DOUBLE_EQ(csr32_min_bytes(a), 24.0 + 16.0 + 32.0 + 24.0);
}
