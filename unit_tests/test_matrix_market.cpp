#include <cstdio>
#include <fstream>

#include "test_support.hpp"

using namespace kspmv;

namespace {

HostCsr<double> parse(const std::string& text, MatrixMarketReadOptions o = {}) {
  return parse_matrix_market<double>(text, "test.mtx", o);
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "kspmv_" + name;
}

}  // namespace

TEST(MatrixMarket, GeneralRealWithCommentsAndBlankLines) {
  auto a = parse(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "%\n"
      "3 4 4\n"
      "1 1 1.5\n"
      "3 4 -2e3\n"
      "\n"
      "2 2 +0.25\n"
      "1 1 0.5\n");  // duplicate: summed
  a.validate();
  EXPECT_EQ(a.nrows, 3);
  EXPECT_EQ(a.ncols, 4);
  EXPECT_EQ(a.nnz(), 3);
  EXPECT_EQ(a.values, (std::vector<double>{2.0, 0.25, -2000.0}));
}

TEST(MatrixMarket, IntegerAndPatternFields) {
  auto a = parse("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 7\n2 1 -3\n");
  EXPECT_EQ(a.values, (std::vector<double>{7.0, -3.0}));
  auto p = parse("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n");
  EXPECT_EQ(p.col_idx, (std::vector<ordinal_t>{2, 0}));
  EXPECT_EQ(p.values, (std::vector<double>{1.0, 1.0}));
}

TEST(MatrixMarket, SymmetricAndSkewAreExpanded) {
  auto s = parse("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n2 1 -1\n3 2 -2\n");
  EXPECT_EQ(s.nnz(), 5);
  EXPECT_EQ(s.row_ptr, (std::vector<offset_t>{0, 2, 4, 5}));
  EXPECT_EQ(s.col_idx, (std::vector<ordinal_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ(s.values, (std::vector<double>{4, -1, -1, -2, -2}));
  // Upper-triangle-only files are accepted as well.
  auto u = parse("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 2 5\n2 3 6\n");
  EXPECT_EQ(u.nnz(), 4);
  auto k = parse("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n");
  EXPECT_EQ(k.col_idx, (std::vector<ordinal_t>{1, 0}));
  EXPECT_EQ(k.values, (std::vector<double>{-3, 3}));
  auto p = parse("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n");
  EXPECT_EQ(p.nnz(), 3);
}

TEST(MatrixMarket, BannerIsCaseInsensitiveAndCrlfWorks) {
  auto a = parse("%%MatrixMarket MATRIX Coordinate REAL General\r\n1 1 1\r\n1 1 2.0\r\n");
  EXPECT_EQ(a.values, (std::vector<double>{2.0}));
}

TEST(MatrixMarket, NonFiniteValuesKeptOrRejected) {
  const std::string t = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 nan\n2 2 -inf\n";
  auto a = parse(t);
  EXPECT_TRUE(std::isnan(a.values[0]));
  EXPECT_TRUE(std::isinf(a.values[1]) && a.values[1] < 0);
  MatrixMarketReadOptions o;
  o.nonfinite = NonFinitePolicy::Reject;
  try {
    parse(t, o);
    FAIL() << "NaN accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos);
  }
}

// Each malformed input must give a ParseError on the right line.
struct Malformed {
  const char* name;
  const char* text;
  std::int64_t line;
  const char* says;  // a fragment of the message
};

class MatrixMarketMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(MatrixMarketMalformed, IsAParseErrorNamingFileLineAndProblem) {
  const auto& m = GetParam();
  try {
    parse(m.text);
    FAIL() << m.name << ": accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), m.line) << m.name << ": " << e.what();
    EXPECT_EQ(e.source(), "test.mtx");
    EXPECT_NE(std::string(e.what()).find(m.says), std::string::npos) << m.name << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("test.mtx:" + std::to_string(m.line) + ": ", 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MatrixMarketMalformed,
    ::testing::Values(
        Malformed{"empty", "", 1, "empty file"},
        Malformed{"bad_banner", "%MatrixMarket matrix coordinate real general\n1 1 0\n", 1, "banner"},
        Malformed{"short_banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "must name"},
        Malformed{"unknown_field", "%%MatrixMarket matrix coordinate real4 general\n1 1 0\n", 1, "field"},
        Malformed{"unknown_symmetry", "%%MatrixMarket matrix coordinate real lower\n1 1 0\n", 1, "symmetry"},
        Malformed{"no_size_line", "%%MatrixMarket matrix coordinate real general\n% only a comment\n", 2,
                  "size line"},
        Malformed{"size_missing_count", "%%MatrixMarket matrix coordinate real general\n2 2\n", 2, "entry count"},
        Malformed{"size_not_numeric", "%%MatrixMarket matrix coordinate real general\n2 x 1\n", 2,
                  "not an integer"},
        Malformed{"size_too_many", "%%MatrixMarket matrix coordinate real general\n2 2 1 5\n1 1 1\n", 2,
                  "more than three"},
        Malformed{"truncated", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n", 4,
                  "truncated"},
        Malformed{"extra_entries", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n", 4,
                  "more entries"},
        Malformed{"row_out_of_range", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", 3,
                  "outside"},
        Malformed{"col_out_of_range", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 9 1\n", 3,
                  "outside"},
        Malformed{"zero_based", "%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", 3, "1-based"},
        Malformed{"negative_index", "%%MatrixMarket matrix coordinate real general\n2 2 1\n-1 1 1\n", 3,
                  "negative"},
        Malformed{"value_not_numeric", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n", 3,
                  "not a number"},
        Malformed{"value_trailing_junk", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0x\n", 3,
                  "not a number"},
        Malformed{"value_missing", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", 3,
                  "missing value"},
        Malformed{"pattern_extra_token", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1.0\n", 3,
                  "extra token"},
        Malformed{"integer_with_fraction", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
                  3, "not an integer"},
        Malformed{"value_overflow", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e400\n", 3,
                  "out of range"},
        Malformed{"symmetric_not_square", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", 2,
                  "square"},
        Malformed{"symmetric_both_triangles",
                  "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 3 1\n", 4, "both sides"},
        Malformed{"skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", 3,
                  "diagonal"},
        Malformed{"too_many_entries_announced", "%%MatrixMarket matrix coordinate real general\n2 2 5\n", 2,
                  "more than a 2 x 2"},
        Malformed{"index_too_large_for_int64",
                  "%%MatrixMarket matrix coordinate real general\n2 2 1\n99999999999999999999 1 1\n", 3,
                  "too large"}),
    [](const ::testing::TestParamInfo<Malformed>& i) { return std::string(i.param.name); });

TEST(MatrixMarket, UnsupportedKindsAreTypedErrors) {
  EXPECT_THROW(parse("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"), UnsupportedError);
  EXPECT_THROW(parse("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"), UnsupportedError);
  EXPECT_THROW(parse("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n"), UnsupportedError);
  EXPECT_THROW(parse("%%MatrixMarket matrix coordinate real general\n3000000000 1 0\n"), OverflowError);
}

TEST(MatrixMarket, MissingFileIsAnIoError) {
  EXPECT_THROW(read_matrix_market<double>("/nonexistent/kspmv/file.mtx"), IoError);
}

TEST(MatrixMarket, WriteReadRoundTripPlainAndGzip) {
  auto a = generate<double>("powerlaw:300:6:cols=250:seed=9");
  for (const char* name : {"rt.mtx", "rt.mtx.gz"}) {
    const auto p = temp_path(name);
    write_matrix_market(p, a, "round trip\nsecond comment line");
    auto b = read_matrix_market<double>(p);
    EXPECT_EQ(b.nrows, a.nrows);
    EXPECT_EQ(b.ncols, a.ncols);
    EXPECT_EQ(b.row_ptr, a.row_ptr);
    EXPECT_EQ(b.col_idx, a.col_idx);
    EXPECT_EQ(b.values, a.values) << "values must round-trip bit for bit";
    std::remove(p.c_str());
  }
  auto f = convert_scalar<float>(a);
  const auto p = temp_path("rtf.mtx");
  write_matrix_market(p, f);
  EXPECT_EQ(read_matrix_market<float>(p).values, f.values);
  std::remove(p.c_str());
}

TEST(MatrixMarket, GzipIsDetectedByContentAndTruncationIsAnError) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3 3 3\n";
  for (int i = 0; i < 2000; ++i) text += "% padding comment to make the stream longer " + std::to_string(i) + "\n";
  const auto gz = temp_path("content.bin");  // no .gz suffix on purpose
  write_file_maybe_gz(gz + ".gz", text);
  std::rename((gz + ".gz").c_str(), gz.c_str());
  EXPECT_EQ(read_matrix_market<double>(gz).nnz(), 3);
  // Cut the compressed file in half.
  std::ifstream in(gz, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const auto cut = temp_path("cut.mtx.gz");
  std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  EXPECT_THROW(read_matrix_market<double>(cut), ParseError);
  std::remove(gz.c_str());
  std::remove(cut.c_str());
}

TEST(MatrixMarket, HeaderIsReported) {
  MatrixMarketHeader h;
  parse_matrix_market<double>("%%MatrixMarket matrix coordinate pattern symmetric\n4 4 2\n2 1\n4 3\n", "h", {}, &h);
  EXPECT_EQ(h.field, "pattern");
  EXPECT_EQ(h.symmetry, "symmetric");
  EXPECT_EQ(h.rows, 4);
  EXPECT_EQ(h.entries, 2);
}

TEST(MatrixMarket, VectorsRoundTripAndAreChecked) {
  const std::vector<double> v = {1.0, -2.5, 1e-300, 0.1};
  const auto p = temp_path("v.mtx");
  write_matrix_market_vector(p, v);
  EXPECT_EQ(read_matrix_market_vector(p), v);
  write_file_maybe_gz(p, "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n");
  EXPECT_THROW(read_matrix_market_vector(p), ParseError);
  write_file_maybe_gz(p, "%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
  EXPECT_THROW(read_matrix_market_vector(p), ParseError);
  write_file_maybe_gz(p, "%%MatrixMarket matrix coordinate real general\n3 1 1\n1 1 1\n");
  EXPECT_THROW(read_matrix_market_vector(p), UnsupportedError);
  std::remove(p.c_str());
}

TEST(MatrixMarket, FilesInTheRepositoryParse) {
  const std::string d = kspmv_test::data_dir();
  auto a = read_matrix_market<double>(d + "/small_general.mtx");
  EXPECT_EQ(a.nrows, 5);
  EXPECT_EQ(a.nnz(), 8);
  auto s = read_matrix_market<double>(d + "/small_symmetric.mtx");
  EXPECT_EQ(s.nnz(), 7);
  auto t = transpose(s);
  EXPECT_EQ(t.values, s.values);  // expanded symmetric: A == A^T
  EXPECT_EQ(t.col_idx, s.col_idx);
}

TEST(MatrixMarket, SharedMatricesMatchTheManifest) {
  const std::string d = kspmv_test::shared_matrices_dir();
  if (d.empty()) GTEST_SKIP() << "shared matrices not found (set KSPMV_SHARED_MATRICES)";
  MatrixMarketHeader h;
  auto a = read_matrix_market<double>(d + "/bcsstk13.mtx.gz", {}, &h);
  EXPECT_EQ(h.symmetry, "symmetric");
  EXPECT_EQ(h.entries, 42943);
  EXPECT_EQ(a.nrows, 2003);
  EXPECT_EQ(a.nnz(), 2 * 42943 - 2003);  // every diagonal entry stored once
  auto m = read_matrix_market<double>(d + "/memplus.mtx.gz", {}, &h);
  EXPECT_EQ(h.symmetry, "general");
  EXPECT_EQ(m.nnz(), 126150);
}
