// Limits at the API boundary: reader limits for untrusted input, a size
// line that lies, padded storage past 32-bit indices or past the memory
// available or budgeted, and the fuzzing seed corpus (every seed parses or
// fails with a typed error, and what parses converts correctly).
#include <dirent.h>

#include <fstream>
#include <sstream>

#include "test_support.hpp"

using namespace kspmv;

TEST(Limits, ReaderLimitsAreTypedErrorsBeforeAllocating) {
  const std::string big = "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1\n";
  MatrixMarketReadOptions o;
  o.max_dimension = 1 << 20;
  EXPECT_THROW(parse_matrix_market<double>(big, "big", o), LimitError);
  o = {};
  o.max_entries = 10;
  EXPECT_THROW(parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n5 5 11\n", "many", o),
               LimitError);
  // A size line announcing 10^12 entries in a tiny file: truncated, and
  // nothing sized by the claim is allocated first.
  EXPECT_THROW(
      parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n1000000 1000000 1000000000000\n1 1 1\n",
                                  "liar"),
      ParseError);
}

TEST(Limits, PaddedStoragePastIndicesOrMemory) {
  // One row of 40,000 entries among 70,000: ELL would need 70,016 x 40,000
  // slots, past its 32-bit index, even when the fill limit is lifted.
  HostCoo<double> c(70000, 70000);
  for (int j = 0; j < 40000; ++j) c.add(5, j, 1.0);
  for (int i = 0; i < 70000; ++i) c.add(i, i, 2.0);
  ConvertOptions lifted;
  lifted.max_fill = 1e12;
  EXPECT_THROW(Matrix<double>::convert(to_csr(c), Format::Ell, lifted), FormatCannotHoldError);
  // A memory budget: DIA of a 5-point Laplacian needs 5 x 1M x 8 bytes.
  ConvertOptions budget;
  budget.memory_budget_bytes = 1 << 20;
  const auto lap = generate<double>("lap2d:1000");
  EXPECT_THROW(Matrix<double>::convert(lap, Format::Dia, budget), OutOfMemoryError);
  EXPECT_THROW(Matrix<double>::convert(lap, Format::Ell, budget), OutOfMemoryError);
  budget.memory_budget_bytes = std::int64_t(1) << 30;
  EXPECT_NO_THROW(Matrix<double>::convert(lap, Format::Dia, budget));
  // The check itself.
  EXPECT_THROW(check_fits(std::int64_t(1) << 50, std::int64_t(1) << 30, "a petabyte", "the test"), OutOfMemoryError);
  EXPECT_NO_THROW(check_fits(100, -1, "unknown availability", "the test"));
  EXPECT_GT(host_available_bytes(), 0);
}

TEST(Limits, FuzzSeedCorpusParsesOrFailsTyped) {
  const std::string dir = kspmv_test::fuzz_corpus_dir();
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  int seeds = 0, parsed = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    ++seeds;
    try {
      MatrixMarketReadOptions o;
      o.max_dimension = 4096;
      const auto a = parse_matrix_market<double>(ss.str(), name, o);
      ++parsed;
      for (const auto& f : known_formats()) {
        if (f.square_only && a.nrows != a.ncols) continue;
        try {
          const auto m = Matrix<double>::convert(a, f.format, kspmv_test::test_options());
          EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.0)) << name << " " << f.name;
        } catch (const FormatCannotHoldError&) {
        }
      }
    } catch (const Error&) {
      // typed: fine
    }
  }
  closedir(d);
  EXPECT_GE(seeds, 15);
  EXPECT_GE(parsed, 8);
}
