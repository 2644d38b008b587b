// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <vector>

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

inline std::string data_dir() { return KSPMV_TEST_DATA_DIR; }

template <class Scalar>
std::vector<Scalar> random_vector(std::size_t n, std::uint64_t seed) {
  kspmv::Rng rng(seed);
  std::vector<Scalar> v(n);
  for (auto& x : v) x = static_cast<Scalar>(2 * rng.uniform() - 1);
  return v;
}

// Applies format `f` through kspmv::Matrix and checks y against the host
// reference. y is poisoned with NaN first when beta == 0 (so an unwritten
// row or a leaked old value fails), random otherwise.
template <class Scalar>
::testing::AssertionResult format_matches_reference(const kspmv::HostCsr<Scalar>& a, kspmv::Format f, Scalar alpha,
                                                    Scalar beta, std::uint64_t seed = 7,
                                                    const kspmv::ConvertOptions& opt = {}) {
  using M = kspmv::Matrix<Scalar>;
  const auto x = random_vector<Scalar>(static_cast<std::size_t>(a.ncols), seed);
  auto y0 = random_vector<Scalar>(static_cast<std::size_t>(a.nrows), seed + 1);
  if (beta == Scalar(0))
    for (auto& v : y0) v = std::numeric_limits<Scalar>::quiet_NaN();
  M m = M::convert(a, f, opt);
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
  return ::testing::AssertionFailure() << kspmv::format_name(f) << " (" << (sizeof(Scalar) == 4 ? "float" : "double")
                                       << ", alpha=" << alpha << ", beta=" << beta << "): " << c.message;
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

}  // namespace kspmv_test
