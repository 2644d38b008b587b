// Device CSR with a portable TeamPolicy kernel.
//
// Storage: 32-bit row offsets, 32-bit column indices, values. Kernel: each
// team takes `rows_per_team` consecutive rows; each row is reduced by a
// vector of `vector_length` lanes (1 on host backends). The vector length
// defaults from the mean row length as CUSP's CSR-vector does.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct CsrDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "csr";

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  Kokkos::View<int*, memory_space> row_ptr;
  Kokkos::View<int*, memory_space> col_idx;
  Kokkos::View<Scalar*, memory_space> values;
  int vector_length = 1;  // lanes per row
  int rows_per_team = 1;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return row_ptr.span() * sizeof(int) + col_idx.span() * sizeof(int) + values.span() * sizeof(Scalar);
  }
};

namespace detail {
// CUSP's rule: the smallest power of two >= the mean row length, 2..32.
inline int csr_vector_length_for_mean(double mean) {
  int v = 2;
  while (v < 32 && v < mean) v *= 2;
  return v;
}
}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrDevice<Scalar, ExecSpace> to_csr_device(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using M = CsrDevice<Scalar, ExecSpace>;
  M d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  if (a.nnz() > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("csr: " + std::to_string(a.nnz()) +
                                " entries exceed its 32-bit row offsets (max 2^31-1)");
  d.row_ptr = detail::upload<int, typename M::memory_space>(a.row_ptr, "kspmv::csr::row_ptr");
  d.col_idx = detail::upload<int, typename M::memory_space>(a.col_idx, "kspmv::csr::col_idx");
  d.values = detail::upload<Scalar, typename M::memory_space>(a.values, "kspmv::csr::values");
  if (detail::is_host_space<ExecSpace>()) {
    d.vector_length = 1;
    d.rows_per_team = 1;
  } else {
    const double mean = a.nrows ? double(a.nnz()) / a.nrows : 0.0;
    d.vector_length = opt.vector_length > 0 ? opt.vector_length : detail::csr_vector_length_for_mean(mean);
    if (d.vector_length > 32 || (d.vector_length & (d.vector_length - 1)))
      throw InvalidArgumentError("csr: vector_length must be a power of two <= 32, got " +
                                 std::to_string(d.vector_length));
    d.rows_per_team = 128 / d.vector_length;
  }
  ExecSpace().fence();
  d.conversion_seconds = timer.seconds();
  return d;
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const CsrDevice<Scalar, ExecSpace>& A, const XView& x,
          Scalar beta, const YView& y) {
  detail::check_spmv_args(A.nrows, A.ncols, x, y, "csr");
  if (A.nrows == 0) return;
  if (alpha == Scalar(0)) return detail::scale_y(space, beta, y);
  const int nrows = A.nrows, rpt = A.rows_per_team;
  const auto row_ptr = A.row_ptr;
  const auto col_idx = A.col_idx;
  const auto values = A.values;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int league = (nrows + rpt - 1) / rpt;
  Kokkos::parallel_for(
      "kspmv::csr", policy(space, league, rpt, A.vector_length), KOKKOS_LAMBDA(const member& t) {
        const int first = t.league_rank() * rpt;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int r) {
          const int row = first + r;
          if (row >= nrows) return;
          Scalar sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(t, row_ptr(row), row_ptr(row + 1)),
              [&](const int k, Scalar& s) { s += values(k) * x(col_idx(k)); }, sum);
          Kokkos::single(Kokkos::PerThread(t), [&]() { detail::combine_y(y, row, alpha, sum, beta); });
        });
      });
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(Scalar alpha, const CsrDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta, const YView& y) {
  spmv(ExecSpace(), alpha, A, x, beta, y);
}

}  // namespace kspmv
