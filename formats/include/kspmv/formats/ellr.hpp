// ELLPACK-R (pellr §2): ELL plus the row-length array rl; each thread stops
// at its own row's length, so padding slots are never loaded. ELL's storage
// (column-major within 256-row slices), coalesced.
#pragma once

#include <tuple>

#include "kspmv/core/properties.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/row_stats.hpp"
#include "kspmv/formats/ell.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/ellr_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct EllrDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "ellr";

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  EllDevice<Scalar, ExecSpace> ell;
  Kokkos::View<int*, memory_space> rl;  // entries per row
  detail::KeptBlocks<memory_space> storage;  // what rl is taken from (FormatArrays)
  WarpIterations iterations;            // pellr eqs. (1), (2) in this order
  double conversion_seconds = 0;

  std::size_t storage_bytes() const { return ell.storage_bytes() + rl.span() * sizeof(int); }
};

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EllrDevice<Scalar, ExecSpace> to_ellr(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  ExecSpace space;
  EllrDevice<Scalar, ExecSpace> e;
  e.nrows = a.nrows;
  e.ncols = a.ncols;
  e.nnz = a.nnz();
  const std::int64_t K = detail::ell_width_within_fill(a.nrows, a.nnz(), longest_row(space, a.row_ptr), opt, "ellr",
                                                       "use pellr or jad");
  e.ell = detail::build_ell<Scalar, ExecSpace>(a, K, opt);
  detail::FormatArrays<ExecSpace> arrays(space);
  e.rl = detail::row_lengths(space, a.row_ptr, "kspmv::ellr::rl", &arrays);
  e.storage = arrays.kept();
  e.iterations = detail::warp_iterations(space, e.rl, detail::device_ints<ExecSpace>());
  space.fence();
  e.conversion_seconds = timer.seconds();
  return e;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EllrDevice<Scalar, ExecSpace> to_ellr(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_ellr(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const EllrDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "ellr", A.nrows, A.ncols, alpha, x, beta, y)) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.ell.kernel == KernelPath::Auto && detail::contiguous(x, y))
      return cuda_tuned::ellr_spmv(space.cuda_stream(), A.nrows, A.ell.width, A.rl.data(), A.ell.indices.data(),
                             A.ell.values.data(), alpha, x.data(), beta, y.data());
  }
#endif
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int team = detail::default_team_size<ExecSpace>();
  const int rpt = detail::is_host_space<ExecSpace>() ? 1024 : team;
  const int nrows = A.nrows, width = A.ell.width;
  const auto rl = A.rl;
  const auto indices = A.ell.indices;
  const auto values = A.ell.values;
  Kokkos::parallel_for(
      "kspmv::ellr", policy(space, (nrows + rpt - 1) / rpt, team), KOKKOS_LAMBDA(const member& t) {
        const int first = t.league_rank() * rpt;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int r) {
          const int row = first + r;
          if (row >= nrows) return;
          Scalar sum = 0;
          const int len = rl(row);
          const std::int64_t base = detail::ell_row_base(row, width);
          for (int n = 0; n < len; ++n) {
            const std::int64_t k = base + static_cast<std::int64_t>(n) * detail::kEllSliceRows;
            sum += values(k) * x(indices(k));
          }
          detail::combine_y(y, row, alpha, sum, beta);
        });
      });
}

// Several columns: its ELL's fused kernel (the ELL stops at a row's
// first padding slot, where ELLR stops at the row's length: the same
// entries in the same order).
template <class Scalar, class ExecSpace, class XView, class YView>
void spmv_block(const ExecSpace& space, Scalar alpha, const EllrDevice<Scalar, ExecSpace>& A, const XView& X,
                Scalar beta, const YView& Y) {
  spmv_block(space, alpha, A.ell, X, beta, Y);
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(EllrDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.ell.values);
}
// Its slot walk: its ELL's.
template <class Scalar, class ExecSpace>
EllSlotWalk<Scalar, ExecSpace> slot_walk(const EllrDevice<Scalar, ExecSpace>& f,
                                         const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  return slot_walk(f.ell, rp);
}
// Its refresh: its ELL's (has_tuned_refresh, tuned_refresh in ell.hpp).
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const EllrDevice<Scalar, ExecSpace>& f) {
  return has_tuned_refresh(f.ell);
}
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const EllrDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
  return tuned_refresh(space, f.ell, rp, values);
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const EllrDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.ell.kernel, on_cuda<ExecSpace>())},
          {"width", std::to_string(f.ell.width)},
          {"n_iter", std::to_string(f.iterations.n_iter)},
          {"n_p", std::to_string(f.iterations.n_p)}};
}
}  // namespace detail

}  // namespace kspmv
