// Device CSR (Bell & Garland §3.4, §4.3) and its kernels.
//
// One storage (32-bit row offsets, 32-bit column indices, values), three
// formats that differ in how threads map to rows:
//   csr         the portable TeamPolicy kernel only: a team per block of
//               rows, a vector of `vector_length` lanes per row (1 on host);
//               the length defaults from the mean row length as CUSP does.
//   csr-scalar  one thread per row (Bell & Garland's scalar kernel).
//   csr-vector  a group of 2..32 lanes per row (their vector kernel),
//               with a warp-shuffle CUDA path.
// The tuned CUDA kernels (backends/cuda/csr_cuda.hpp) replace the portable
// one for csr-scalar and csr-vector when Kokkos runs on CUDA.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <tuple>

#include "kspmv/core/properties.hpp"
#include "kspmv/config.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/block_util.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/csr_cuda.hpp"
#endif

namespace kspmv {

enum class CsrKernel { Portable, Scalar, Vector };

template <class Scalar, class ExecSpace, CsrKernel Kind>
struct CsrDeviceT {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name =
      Kind == CsrKernel::Portable ? "csr" : (Kind == CsrKernel::Scalar ? "csr-scalar" : "csr-vector");

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  Kokkos::View<int*, memory_space> row_ptr;
  Kokkos::View<int*, memory_space> col_idx;
  Kokkos::View<Scalar*, memory_space> values;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
  int vector_length = 1;  // lanes per row
  int rows_per_team = 1;
  // CUDA: each lane walks at most a few entries of its row (see
  // cuda_tuned::ld_walk), so the row's lines are worth keeping in L1.
  bool short_walks = false;
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return row_ptr.span() * sizeof(int) + col_idx.span() * sizeof(int) + values.span() * sizeof(Scalar);
  }
};

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
using CsrDevice = CsrDeviceT<Scalar, ExecSpace, CsrKernel::Portable>;

namespace detail {
// Built on the device from a canonical device CSR: offsets narrowed to 32
// bits, columns and values copied, the lanes per row from the mean row
// length and the longest row (one reduction).
template <class Scalar, class ExecSpace, CsrKernel Kind>
CsrDeviceT<Scalar, ExecSpace, Kind> build_csr(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt) {
  Kokkos::Timer timer;
  using M = CsrDeviceT<Scalar, ExecSpace, Kind>;
  ExecSpace space;
  M d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  d.kernel = opt.kernel;
  if (a.nnz() > std::numeric_limits<int>::max())
    throw FormatCannotHoldError(std::string(M::format_name) + ": " + std::to_string(a.nnz()) +
                                " entries exceed its 32-bit row offsets (max 2^31-1)");
  FormatArrays<ExecSpace> arrays(space);
  const auto row_ptr = arrays.template take<int>("kspmv::csr::row_ptr", a.row_ptr.extent(0));
  const auto src = a.row_ptr;
  Kokkos::parallel_for(
      "kspmv::csr::narrow_offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, row_ptr.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { row_ptr(i) = static_cast<int>(src(i)); });
  d.row_ptr = row_ptr;
  d.col_idx = arrays.template take<int>("kspmv::csr::col_idx", a.nnz());
  Kokkos::deep_copy(space, d.col_idx, a.col_idx);
  d.values = arrays.template take<Scalar>("kspmv::csr::values", a.nnz());
  Kokkos::deep_copy(space, d.values, a.values);
  d.storage = arrays.kept();
  if (is_host_space<ExecSpace>()) {
    d.vector_length = 1;
    d.rows_per_team = 1024;
  } else {
    const double mean = a.nrows ? double(a.nnz()) / a.nrows : 0.0;
    d.vector_length = Kind == CsrKernel::Scalar ? 1
                      : opt.vector_length > 0   ? opt.vector_length
                                                : csr_vector_length_for_mean(mean);
    if (d.vector_length > 32 || (d.vector_length & (d.vector_length - 1)))
      throw InvalidArgumentError(std::string(M::format_name) + ": vector_length must be a power of two <= 32, got " +
                                 std::to_string(d.vector_length));
    d.rows_per_team = 128 / d.vector_length;
    d.short_walks = csr_walks_rows(mean, longest_row(space, a.row_ptr), d.vector_length);
  }
  space.fence();
  d.conversion_seconds = timer.seconds();
  return d;
}

// The portable kernel: a team of rows_per_team threads, vector_length lanes
// each, one row per (thread, vector).
template <class Scalar, class ExecSpace, CsrKernel Kind, class XView, class YView>
void csr_portable(const ExecSpace& space, Scalar alpha, const CsrDeviceT<Scalar, ExecSpace, Kind>& A, const XView& x,
                  Scalar beta, const YView& y) {
  const int nrows = A.nrows, rpt = A.rows_per_team;
  const auto row_ptr = A.row_ptr;
  const auto col_idx = A.col_idx;
  const auto values = A.values;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int team = is_host_space<ExecSpace>() ? 1 : rpt;
  const int league = (nrows + rpt - 1) / rpt;
  Kokkos::parallel_for(
      "kspmv::csr", policy(space, league, team, A.vector_length), KOKKOS_LAMBDA(const member& t) {
        const int first = t.league_rank() * rpt;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int r) {
          const int row = first + r;
          if (row >= nrows) return;
          Scalar sum = 0;
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(t, row_ptr(row), row_ptr(row + 1)),
              [&](const int k, Scalar& s) { s += values(k) * x(col_idx(k)); }, sum);
          Kokkos::single(Kokkos::PerThread(t), [&]() { combine_y(y, row, alpha, sum, beta); });
        });
      });
}
}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrDevice<Scalar, ExecSpace> to_csr_device(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  return detail::build_csr<Scalar, ExecSpace, CsrKernel::Portable>(a, opt);
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrDevice<Scalar, ExecSpace> to_csr_device(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_csr_device(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, CsrKernel Kind, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const CsrDeviceT<Scalar, ExecSpace, Kind>& A, const XView& x,
          Scalar beta, const YView& y) {
  using M = CsrDeviceT<Scalar, ExecSpace, Kind>;
  if (detail::spmv_prologue(space, M::format_name, A.nrows, A.ncols, alpha, x, beta, y)) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value && Kind != CsrKernel::Portable) {
    if (A.kernel == KernelPath::Auto && detail::contiguous(x, y))
      return cuda_tuned::csr_spmv(space.cuda_stream(), A.nrows, A.vector_length, A.short_walks, A.row_ptr.data(),
                            A.col_idx.data(), A.values.data(), alpha, x.data(), beta, y.data());
  }
#endif
  detail::csr_portable(space, alpha, A, x, beta, y);
}

template <class Scalar, class ExecSpace, CsrKernel Kind, class XView, class YView>
void spmv(Scalar alpha, const CsrDeviceT<Scalar, ExecSpace, Kind>& A, const XView& x, Scalar beta, const YView& y) {
  spmv(ExecSpace(), alpha, A, x, beta, y);
}

// The fused kernel is the portable one: on CUDA the tuned one-vector
// kernels of csr-scalar and csr-vector applied column by column are as
// fast a vector or faster (lap3d:150, csr-vector: 1.02x; a power-law
// graph: 2.3x slower fused), so only csr's portable path fuses there.
template <class Scalar, class ExecSpace, CsrKernel Kind>
bool block_pays(const CsrDeviceT<Scalar, ExecSpace, Kind>& A) {
  return Kind == CsrKernel::Portable || A.kernel == KernelPath::Portable || detail::is_host_space<ExecSpace>();
}

// Y = alpha * A * X + beta * Y for k columns (kspmv/core/block_util.hpp):
// the same rows per team and lanes per row as the one-vector kernel, each
// lane's entries read once for up to kBlockColumns columns, its partial
// sums then added across the row's lanes column by column. X and Y may
// have any strides (LayoutLeft, LayoutRight).
template <class Scalar, class ExecSpace, CsrKernel Kind, class XView, class YView>
void spmv_block(const ExecSpace& space, Scalar alpha, const CsrDeviceT<Scalar, ExecSpace, Kind>& A, const XView& X,
                Scalar beta, const YView& Y) {
  if (detail::block_prologue(space, A.nrows, alpha, beta, Y)) return;
  const int nrows = A.nrows, rpt = A.rows_per_team;
  // Host spaces run a team's vector range in one thread: one share a row.
  const int lanes = detail::is_host_space<ExecSpace>() ? 1 : A.vector_length;
  const auto row_ptr = A.row_ptr;
  const auto col_idx = A.col_idx;
  const auto values = A.values;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int team = detail::is_host_space<ExecSpace>() ? 1 : rpt;
  const int league = (nrows + rpt - 1) / rpt;
  detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
    Kokkos::parallel_for(
        "kspmv::csr::block", policy(space, league, team, A.vector_length), KOKKOS_LAMBDA(const member& t) {
          const int first = t.league_rank() * rpt;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int r) {
            const int row = first + r;
            if (row >= nrows) return;
            Scalar part[kBlockColumns] = {};  // this lane's share of the row
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, row_ptr(row), row_ptr(row + 1)), [&](const int k) {
              const Scalar v = values(k);
              const int c = col_idx(k);
              for (int j = 0; j < kBlockColumns; ++j)
                if (j < cols) part[j] += v * X(c, j0 + j);
            });
            Scalar sum[kBlockColumns];
            for (int j = 0; j < kBlockColumns; ++j) {
              Scalar s = 0;
              if (j < cols)
                Kokkos::parallel_reduce(
                    Kokkos::ThreadVectorRange(t, lanes), [&](const int, Scalar& acc) { acc += part[j]; }, s);
              sum[j] = s;
            }
            Kokkos::single(Kokkos::PerThread(t), [&]() { detail::combine_y_block(Y, row, j0, cols, alpha, sum, beta); });
          });
        });
  });
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace, CsrKernel Kind>
auto value_members(CsrDeviceT<Scalar, ExecSpace, Kind>& f) {
  return std::tie(f.values);
}
// It keeps the CSR's entries in their order (matrix.hpp: has_csr_order).
template <class Scalar, class ExecSpace, CsrKernel Kind>
bool keeps_csr_order(const CsrDeviceT<Scalar, ExecSpace, Kind>*, const DeviceCsr<Scalar, ExecSpace>&, const ConvertOptions&) {
  return true;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace, CsrKernel Kind>
Properties format_properties(const CsrDeviceT<Scalar, ExecSpace, Kind>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>() && Kind != CsrKernel::Portable)},
          {"vector_length", std::to_string(f.vector_length)},
          {"rows_per_team", std::to_string(f.rows_per_team)}};
}
}  // namespace detail

}  // namespace kspmv
