// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>
#include <set>

#include "kspmv/kspmv.hpp"

namespace kspmv_test {

// Where the shared real matrices live: $KSPMV_SHARED_MATRICES, else the
// checkout's ../shared/matrices. Empty when absent (tests then skip).
inline std::string shared_matrices_dir() {
  const char* env = std::getenv("KSPMV_SHARED_MATRICES");
  std::string d = env ? env : KSPMV_SHARED_MATRICES_DIR;
  struct stat st;
  return (::stat((d + "/MANIFEST.tsv").c_str(), &st) == 0) ? d : std::string();
}

// A folder of the checkout the tests read: $ENV_NAME where set (a binary
// run away from the checkout it was built in, e.g. on a GPU node), else
// the path compiled in.
inline std::string checkout_dir(const char* env_name, const char* built_in) {
  const char* env = std::getenv(env_name);
  return env && *env ? env : built_in;
}

// The tests' own data files: $KSPMV_TEST_DATA, else unit_tests/data.
inline std::string data_dir() { return checkout_dir("KSPMV_TEST_DATA", KSPMV_TEST_DATA_DIR); }
// The shipped calibration files: $KSPMV_CALIBRATION_DIR, else
// perf_tests/calibration.
inline std::string calibration_dir() { return checkout_dir("KSPMV_CALIBRATION_DIR", KSPMV_CALIBRATION_DIR); }
// The Matrix Market fuzzing seeds: $KSPMV_FUZZ_CORPUS, else
// fuzz/corpus/matrix_market.
inline std::string fuzz_corpus_dir() { return checkout_dir("KSPMV_FUZZ_CORPUS", KSPMV_FUZZ_CORPUS_DIR); }

template <class Scalar>
std::vector<Scalar> random_vector(std::size_t n, std::uint64_t seed) {
  kspmv::Rng rng(seed);
  std::vector<Scalar> v(n);
  for (auto& x : v) x = static_cast<Scalar>(2 * rng.uniform() - 1);
  return v;
}

// Every format of the list on both kernel paths: the parameters of the
// format-wide tests, named like "csr_adaptive_portable".
struct FormatCase {
  kspmv::Format format;
  kspmv::KernelPath kernel;
};
inline std::vector<FormatCase> format_cases() {
  std::vector<FormatCase> c;
  for (const auto& d : kspmv::known_formats())
    for (kspmv::KernelPath k : {kspmv::KernelPath::Auto, kspmv::KernelPath::Portable}) c.push_back({d.format, k});
  return c;
}
inline std::string format_case_name(const ::testing::TestParamInfo<FormatCase>& i) {
  std::string n = kspmv::format_name(i.param.format);
  for (auto& c : n)
    if (c == '-') c = '_';
  return n + (i.param.kernel == kspmv::KernelPath::Portable ? "_portable" : "");
}

// A property a format reports (kspmv::Properties), "" where it has none.
inline std::string property(const kspmv::Properties& p, const std::string& key) {
  for (const auto& [k, v] : p)
    if (k == key) return v;
  return "";
}

// Options for correctness tests: DIA and ELL take up to 64x padding (so
// they are exercised on irregular matrices too, within test memory), the
// kernel path as asked, and auto's pick by the model alone (measured, two
// conversions of one matrix may pick different formats by timing noise,
// and the tests compare conversions bit for bit; test_auto.cpp tests the
// measurement).
constexpr double kTestMaxFill = 64;
inline kspmv::ConvertOptions test_options(kspmv::KernelPath k = kspmv::KernelPath::Auto) {
  kspmv::ConvertOptions o;
  o.max_fill = kTestMaxFill;
  o.kernel = k;
  o.auto_measure = false;
  return o;
}

// The most entries any row of a holds (0 for no rows).
template <class Scalar>
std::int64_t longest_row(const kspmv::HostCsr<Scalar>& a) {
  std::int64_t w = 0;
  for (kspmv::ordinal_t i = 0; i < a.nrows; ++i) w = std::max(w, a.row_length(i));
  return w;
}

// Padded slots per nonzero of DIA and ELL, computed here independently of
// the formats, to know when their conversion must refuse a matrix.
template <class Scalar>
double padded_fill(kspmv::Format f, const kspmv::HostCsr<Scalar>& a) {
  const double pitch = double((a.nrows + 31) / 32 * 32);
  double slots = 0;
  if (f == kspmv::Format::Dia) {
    std::set<std::int64_t> diags;
    for (kspmv::ordinal_t i = 0; i < a.nrows; ++i)
      for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) diags.insert(std::int64_t(a.col_idx[k]) - i);
    slots = pitch * double(diags.size());
  } else if (f == kspmv::Format::Ell || f == kspmv::Format::Ellr) {
    slots = pitch * double(longest_row(a));
  }
  return slots / double(std::max<std::int64_t>(a.nnz(), 1));
}

// Applies `m` and checks y against the host reference. y is poisoned with
// NaN first when beta == 0 (so an unwritten row or a leaked old value
// fails), random otherwise.
template <class Scalar>
::testing::AssertionResult matrix_matches_reference(const kspmv::HostCsr<Scalar>& a, const kspmv::Matrix<Scalar>& m,
                                                    Scalar alpha, Scalar beta, std::uint64_t seed = 7) {
  using M = kspmv::Matrix<Scalar>;
  const auto x = random_vector<Scalar>(static_cast<std::size_t>(a.ncols), seed);
  auto y0 = random_vector<Scalar>(static_cast<std::size_t>(a.nrows), seed + 1);
  if (beta == Scalar(0))
    for (auto& v : y0) v = std::numeric_limits<Scalar>::quiet_NaN();
  typename M::vector_type dx("x", x.size()), dy("y", y0.size());
  auto hx = Kokkos::create_mirror_view(dx);
  auto hy = Kokkos::create_mirror_view(dy);
  for (std::size_t i = 0; i < x.size(); ++i) hx(i) = x[i];
  for (std::size_t i = 0; i < y0.size(); ++i) hy(i) = y0[i];
  Kokkos::deep_copy(dx, hx);
  Kokkos::deep_copy(dy, hy);
  m.apply(alpha, dx, beta, dy);
  Kokkos::fence();
  Kokkos::deep_copy(hy, dy);
  std::vector<Scalar> y(y0.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = hy(i);
  const auto c = kspmv::check_spmv(a, alpha, x, beta, y0, y);
  if (c.ok) return ::testing::AssertionSuccess();
  std::string props;
  for (const auto& p : m.properties()) props += " " + p.first + "=" + p.second;
  return ::testing::AssertionFailure() << m.name() << " (" << (sizeof(Scalar) == 4 ? "float" : "double")
                                       << ", alpha=" << alpha << ", beta=" << beta << ";" << props
                                       << "): " << c.message;
}

template <class Scalar>
::testing::AssertionResult format_matches_reference(const kspmv::HostCsr<Scalar>& a, kspmv::Format f, Scalar alpha,
                                                    Scalar beta, std::uint64_t seed = 7,
                                                    const kspmv::ConvertOptions& opt = test_options()) {
  return matrix_matches_reference(a, kspmv::Matrix<Scalar>::convert(a, f, opt), alpha, beta, seed);
}

// Whether two results are the same bits.
template <class Scalar>
bool same_bits(const std::vector<Scalar>& a, const std::vector<Scalar>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Scalar)) == 0);
}

// Whether format f holds `a` under test_options(): square-only formats a
// square matrix, padded ones within kTestMaxFill.
template <class Scalar>
bool format_holds(kspmv::Format f, const kspmv::HostCsr<Scalar>& a) {
  for (const auto& d : kspmv::known_formats())
    if (d.format == f && d.square_only && a.nrows != a.ncols) return false;
  return padded_fill(f, a) <= kTestMaxFill;
}

// Builds a HostCsr from dense rows (0 means no entry unless listed in
// `explicit_zeros`), for small hand-written cases.
template <class Scalar>
kspmv::HostCsr<Scalar> from_triplets(std::int64_t rows, std::int64_t cols,
                                     const std::vector<std::tuple<int, int, double>>& t) {
  kspmv::HostCoo<Scalar> c(rows, cols);
  for (const auto& [i, j, v] : t) c.add(i, j, static_cast<Scalar>(v));
  return kspmv::to_csr(c);
}

// A device view's elements, on the host.
template <class T, class V>
std::vector<T> host_copy(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<T>(h.data(), h.data() + h.extent(0));
}

// `a` under a random symmetric permutation drawn from `seed`: the same
// pattern in a scrambled order.
inline kspmv::HostCsr<double> scrambled_symmetric(const kspmv::HostCsr<double>& a, unsigned seed) {
  std::vector<kspmv::ordinal_t> p(static_cast<std::size_t>(a.nrows));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(p.begin(), p.end(), rng);
  return kspmv::permute_symmetric(a, p);
}

}  // namespace kspmv_test
