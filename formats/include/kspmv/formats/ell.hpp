// ELL (Bell & Garland §3.2, §4.2): K = max entries per row, padded
// `indices` and `values`, column-major within slices of S = 256 rows
// (kEllSliceRows): slot n of row i is at (i / S) * S * K + n * S + i % S
// (detail::ell_row_base). With one slice as tall as the matrix this would
// be the paper's layout; 256-row slices keep each thread block's K columns in one contiguous
// region (measured on the H100: 5-10% faster on the 1M-8M-row stencils
// than K streams a whole matrix height apart). Padding slots hold index -1
// and value 0; rows are packed to the left, so a thread stops at its first
// padding slot and never loads x for it (an explicit zero entry is still
// computed: 0 * Inf must give NaN).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <tuple>

#include "kspmv/core/properties.hpp"
#include "kspmv/config.hpp"
#include "kspmv/core/block_util.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/ell_cuda.hpp"
#include "kspmv/backends/cuda/tile_refresh_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct EllDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "ell";

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;  // entries stored in this ELL (not counting padding)
  int width = 0;         // K
  int padded_rows = 0;   // rows rounded up to whole slices of kEllSliceRows
  Kokkos::View<int*, memory_space> indices;
  Kokkos::View<Scalar*, memory_space> values;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const { return indices.span() * sizeof(int) + values.span() * sizeof(Scalar); }
};

namespace detail {
// The first min(len, K) entries of every row into an ELL of width K; the
// caller decides what happens to the rest (HYB puts them into COO). On
// the device: padding (-1, 0) written first, then a thread a row places
// its entries.
template <class Scalar, class ExecSpace>
EllDevice<Scalar, ExecSpace> build_ell(const DeviceCsr<Scalar, ExecSpace>& a, std::int64_t K, const ConvertOptions& opt) {
  using E = EllDevice<Scalar, ExecSpace>;
  ExecSpace space;
  E e;
  e.nrows = a.nrows;
  e.ncols = a.ncols;
  e.kernel = opt.kernel;
  constexpr int slice = kEllSliceRows;
  const std::int64_t rows = (static_cast<std::int64_t>(a.nrows) + slice - 1) / slice * slice;
  if (static_cast<long double>(rows) * K > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("ell: " + std::to_string(rows) + " padded rows x width " + std::to_string(K) +
                                " exceed its 32-bit index");
  check_allocation<ExecSpace>(rows * K * static_cast<std::int64_t>(sizeof(Scalar) + sizeof(int)),
                              "ell: " + std::to_string(rows) + " padded rows x width " + std::to_string(K),
                              opt.memory_budget_bytes);
  e.width = static_cast<int>(K);
  e.padded_rows = static_cast<int>(rows);
  FormatArrays<ExecSpace> arrays(space);
  e.indices = arrays.template take_filled<int>("kspmv::ell::indices", rows * K, -1);
  e.values = arrays.template take_filled<Scalar>("kspmv::ell::values", rows * K, Scalar(0));
  e.storage = arrays.kept();
  const auto idx = e.indices;
  const auto val = e.values;
  const auto row_ptr = a.row_ptr;
  const auto col = detail::read_only(a.col_idx);
  const auto src = detail::read_only(a.values);
  const int width = e.width;
  Kokkos::parallel_reduce(
      "kspmv::ell::fill", Kokkos::RangePolicy<ExecSpace>(space, 0, a.nrows),
      KOKKOS_LAMBDA(const int i, std::int64_t& stored) {
        const std::int64_t b = row_ptr(i);
        const std::int64_t len = row_ptr(i + 1) - b < width ? row_ptr(i + 1) - b : width;
        const std::int64_t base = ell_row_base(i, width);
        for (std::int64_t n = 0; n < len; ++n) {
          idx(base + n * kEllSliceRows) = col(b + n);
          val(base + n * kEllSliceRows) = src(b + n);
        }
        stored += len;
      },
      e.nnz);
  return e;
}

template <class Scalar, class ExecSpace, class XView, class YView>
void ell_portable(const ExecSpace& space, Scalar alpha, const EllDevice<Scalar, ExecSpace>& A, const XView& x,
                  Scalar beta, const YView& y) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int team = default_team_size<ExecSpace>();
  const int rpt = is_host_space<ExecSpace>() ? 1024 : team;
  const int nrows = A.nrows, width = A.width;
  const auto indices = A.indices;
  const auto values = A.values;
  Kokkos::parallel_for(
      "kspmv::ell", policy(space, (nrows + rpt - 1) / rpt, team), KOKKOS_LAMBDA(const member& t) {
        const int first = t.league_rank() * rpt;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int r) {
          const int row = first + r;
          if (row >= nrows) return;
          const std::int64_t base = ell_row_base(row, width);
          Scalar sum = 0;
          for (int n = 0; n < width; ++n) {
            const int c = indices(base + static_cast<std::int64_t>(n) * kEllSliceRows);
            if (c < 0) break;  // padding: the rest of the row is padding too
            sum += values(base + static_cast<std::int64_t>(n) * kEllSliceRows) * x(c);
          }
          combine_y(y, row, alpha, sum, beta);
        });
      });
}

// y = alpha * ELL * x + beta * y, tuned or portable.
template <class Scalar, class ExecSpace, class XView, class YView>
void ell_apply(const ExecSpace& space, Scalar alpha, const EllDevice<Scalar, ExecSpace>& A, const XView& x,
               Scalar beta, const YView& y) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && contiguous(x, y))
      return cuda_tuned::ell_spmv(space.cuda_stream(), A.nrows, A.width, A.indices.data(), A.values.data(), alpha,
                            x.data(), beta, y.data());
  }
#endif
  ell_portable(space, alpha, A, x, beta, y);
}
}  // namespace detail

namespace detail {
// The longest row (ELL's width), after checking that padding every row to
// it stays within max_fill; `advice` names the format to use instead.
// ELL's width, the longest row K, where its padded slots stay within
// max_fill x nnz; else FormatCannotHoldError with `advice`.
inline std::int64_t ell_width_within_fill(std::int64_t nrows, std::int64_t nnz_in, std::int64_t K,
                                          const ConvertOptions& opt, const char* name, const char* advice) {
  const long double slots = static_cast<long double>(nrows) * K;
  const std::int64_t nnz = std::max<std::int64_t>(nnz_in, 1);
  if (slots > opt.max_fill * nnz)
    throw FormatCannotHoldError(std::string(name) + ": longest row has " + std::to_string(K) + " entries, so " +
                                std::to_string((long long)slots) + " padded slots hold " + std::to_string(nnz_in) +
                                " nonzeros, fill " + std::to_string(double(slots / nnz)) + " > max_fill " +
                                std::to_string(opt.max_fill) + " (" + advice + ")");
  return K;
}
}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EllDevice<Scalar, ExecSpace> to_ell(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  const std::int64_t K = detail::ell_width_within_fill(a.nrows, a.nnz(), longest_row(ExecSpace(), a.row_ptr), opt,
                                                       "ell", "use hyb, which spills long rows to COO");
  auto e = detail::build_ell<Scalar, ExecSpace>(a, K, opt);
  ExecSpace().fence();
  e.conversion_seconds = timer.seconds();
  return e;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EllDevice<Scalar, ExecSpace> to_ell(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_ell(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const EllDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "ell", A.nrows, A.ncols, alpha, x, beta, y)) return;
  detail::ell_apply(space, alpha, A, x, beta, y);
}

// Y = alpha * A * X + beta * Y for k columns (kspmv/core/block_util.hpp):
// a thread a row as in the one-vector kernel, each slot read once for up
// to kBlockColumns columns.
template <class Scalar, class ExecSpace, class XView, class YView>
void spmv_block(const ExecSpace& space, Scalar alpha, const EllDevice<Scalar, ExecSpace>& A, const XView& X,
                Scalar beta, const YView& Y) {
  if (detail::block_prologue(space, A.nrows, alpha, beta, Y)) return;
  const int nrows = A.nrows, width = A.width;
  const auto indices = A.indices;
  const auto values = A.values;
  detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
    Kokkos::parallel_for(
        "kspmv::ell::block", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows), KOKKOS_LAMBDA(const int row) {
          const std::int64_t base = detail::ell_row_base(row, width);
          Scalar sum[kBlockColumns] = {};
          for (int n = 0; n < width; ++n) {
            const std::int64_t slot = base + static_cast<std::int64_t>(n) * detail::kEllSliceRows;
            const int c = indices(slot);
            if (c < 0) break;  // padding to the end of the row
            const Scalar v = values(slot);
            for (int j = 0; j < kBlockColumns; ++j)
              if (j < cols) sum[j] += v * X(c, j0 + j);
          }
          detail::combine_y_block(Y, row, j0, cols, alpha, sum, beta);
        });
  });
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(EllDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.values);
}
// Its slot walk (row_segments.hpp, walk_slots): row r's n-th entry (of
// its first `width`) at ell_row_base(r) + n slices' rows on.
template <class Scalar, class ExecSpace>
struct EllSlotWalk {
  Kokkos::View<const offset_t*, typename ExecSpace::memory_space> rp;
  int width = 0;
  std::int64_t positions = 0, longest = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t begin(const std::int64_t r) const { return rp(r); }
  KOKKOS_INLINE_FUNCTION std::int64_t end(const std::int64_t r) const {
    return rp(r + 1) - rp(r) < width ? rp(r + 1) : rp(r) + width;
  }
  template <class Op>
  KOKKOS_INLINE_FUNCTION void walk(const std::int64_t r, const std::int64_t k0, const std::int64_t k1, const Op& op) const {
    const std::int64_t first = rp(r), base = ell_row_base(static_cast<int>(r), width);
    for (std::int64_t k = k0; k < k1; ++k) op(k, base + (k - first) * kEllSliceRows);
  }
};
template <class Scalar, class ExecSpace>
EllSlotWalk<Scalar, ExecSpace> slot_walk(const EllDevice<Scalar, ExecSpace>& f,
                                         const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  return {rp, f.width, f.nrows, f.width};
}
// Refreshed by a kernel of its own on CUDA's tuned path (tile_refresh_cuda.hpp:
// a tile of rows read as one run of the CSR, written out a slot column at
// a time, padding included) where a tile of 32 rows of its width fits in
// shared memory; its map then keeps no slot a nonzero. Elsewhere a slot a
// nonzero, written by its walk, and a scatter through it
// (refresh_by_rows, matrix.hpp). H200, refresh in SpMVs, the tile / the
// scatter (ell): bands, the 27-point stencil, uniform and normal rows
// 0.7-1.6 / 2.0-4.4; the 7- and 9-point stencils and block-diagonal rows
// of 4, 1.1-1.4 / 1.4-1.6 (docs/PERFORMANCE.md, "Refreshing dia, ell, ellr
// and hyb"). ELLR and HYB take the same kernel (tile_layout).
template <class Scalar, class ExecSpace>
bool has_tuned_refresh(const EllDevice<Scalar, ExecSpace>& f) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value)
    return f.kernel == KernelPath::Auto && f.width > 0 && cuda_tuned::tile_refresh_rows<Scalar>(f.width) > 0;
#endif
  (void)f;
  return false;
}
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const EllDevice<Scalar, ExecSpace>& f) {
  return has_tuned_refresh(f);
}
#if KSPMV_ENABLE_CUDA
// Where its tile columns lie: slot n of a tile's rows, 256-row slices.
template <class Scalar, class ExecSpace>
cuda_tuned::TileLayout tile_layout(const EllDevice<Scalar, ExecSpace>& f) {
  cuda_tuned::TileLayout layout;
  layout.width = f.width;
  layout.stride = kEllSliceRows;
  layout.slice_rows = kEllSliceRows;
  return layout;
}
#endif
// True where it wrote the values (has_tuned_refresh), false where the
// slot walk is to.
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const EllDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (!has_tuned_refresh(f)) return false;
    return cuda_tuned::tile_refresh(space.cuda_stream(), f.nrows, rp.data(), values.data(), f.values.data(),
                                    tile_layout(f), cuda_tuned::EntryColumns{}, cuda_tuned::NoTail{}, true);
  }
#endif
  (void)space, (void)f, (void)rp, (void)values;
  return false;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const EllDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"width", std::to_string(f.width)},
          {"fill", std::to_string(f.nnz ? double(f.width) * f.padded_rows / double(f.nnz) : 0.0)}};
}
}  // namespace detail

}  // namespace kspmv
