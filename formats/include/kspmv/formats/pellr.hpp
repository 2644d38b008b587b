// PELLR (pellr §3): rows sorted by length (stable, longest first) and
// stored as ELLPACK-R in that order (ConvertOptions::pellr_sort: by default
// only where that cuts the warp iterations N_iter by 5% or more; otherwise
// the caller's order is kept and no permutation is applied), each 32-row slice (one warp) with only
// its own width: column-major inside the slice, no padding to the global
// maximum. Because a slice's rows have nearly equal lengths, the per-warp
// maximum (rl of size N_w) replaces the per-row lengths; the few padding
// slots hold index -1 and are skipped without loading x. Only rows are
// permuted, so x stays in the caller's order; y comes back in the caller's
// order (written through `new_to_old`) or, on request, in the sorted order.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <numeric>
#include <tuple>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/config.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/block_util.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/row_stats.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/pellr_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct PellrDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "pellr";
  static constexpr int slice = 32;

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  int nslices = 0;
  std::int64_t longest = 0;  // the longest row
  bool sorted = true;  // rows sorted by length (else new_to_old is the identity)
  OutputOrder order = OutputOrder::Caller;
  Kokkos::View<int*, memory_space> new_to_old;    // sorted row -> caller row
  Kokkos::View<int*, memory_space> slice_width;   // rl: the longest row of each slice
  Kokkos::View<int*, memory_space> slice_offset;  // first slot of each slice, size nslices + 1
  Kokkos::View<int*, memory_space> indices;       // -1: padding
  Kokkos::View<Scalar*, memory_space> values;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
  WarpIterations ellr_iterations, pellr_iterations;  // pellr eqs. (1), (2)
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return (new_to_old.span() + slice_width.span() + slice_offset.span() + indices.span()) * sizeof(int) +
           values.span() * sizeof(Scalar);
  }
};

// On the device: rows sorted longest first (a device sort) where that cuts
// N_iter by 5% (RowSort::Auto), each 32-row slice as wide as its longest
// row (offsets by a scan), then a thread a row places its entries.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
PellrDevice<Scalar, ExecSpace> to_pellr(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using P = PellrDevice<Scalar, ExecSpace>;
  ExecSpace space;
  P p;
  p.nrows = a.nrows;
  p.ncols = a.ncols;
  p.nnz = a.nnz();
  p.order = opt.output_order;
  p.kernel = opt.kernel;
  detail::ScratchSet<ExecSpace> temps(space);
  detail::FormatArrays<ExecSpace> arrays(space);
  const auto len = detail::row_lengths(space, a.row_ptr, "kspmv::pellr::lengths", &temps);
  const std::int64_t longest = longest_row(space, a.row_ptr);
  p.longest = longest;
  auto perm = detail::rows_by_length(space, len, longest, true, "kspmv::pellr::new_to_old", &arrays);
  p.ellr_iterations = detail::warp_iterations(space, len, detail::device_ints<ExecSpace>());
  p.pellr_iterations = detail::warp_iterations(space, len, perm);
  p.sorted = opt.pellr_sort == RowSort::Always ||
             (opt.pellr_sort == RowSort::Auto && pellr_should_sort(p.ellr_iterations, p.pellr_iterations));
  if (!p.sorted) {
    Kokkos::parallel_for(
        "kspmv::pellr::identity", Kokkos::RangePolicy<ExecSpace>(space, 0, a.nrows),
        KOKKOS_LAMBDA(const int r) { perm(r) = r; });
    p.pellr_iterations = p.ellr_iterations;
  }
  constexpr int slice = P::slice;
  p.nslices = static_cast<int>((static_cast<std::int64_t>(a.nrows) + slice - 1) / slice);
  p.slice_width = arrays.template take<int>("kspmv::pellr::slice_width", p.nslices);
  p.slice_offset = arrays.template take<int>("kspmv::pellr::slice_offset", p.nslices + 1);
  const auto width = p.slice_width;
  const auto offset = p.slice_offset;
  const int nrows = a.nrows, nslices = p.nslices;
  Kokkos::parallel_for(
      "kspmv::pellr::slice_width", Kokkos::RangePolicy<ExecSpace>(space, 0, nslices), KOKKOS_LAMBDA(const int s) {
        int w = 0;
        for (int r = s * slice; r < (s + 1) * slice && r < nrows; ++r) w = len(perm(r)) > w ? len(perm(r)) : w;
        width(s) = w;
      });
  std::int64_t total = 0;
  kspmv::detail::scan(
      "kspmv::pellr::slice_offset", Kokkos::RangePolicy<ExecSpace>(space, 0, nslices + 1),
      KOKKOS_LAMBDA(const int s, std::int64_t& sum, const bool final) {
        if (final) offset(s) = sum <= 0x7fffffff ? static_cast<int>(sum) : -1;
        if (s < nslices) sum += std::int64_t(width(s)) * slice;
      },
      total, &temps);
  if (total > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("pellr: " + std::to_string(total) + " slots exceed its 32-bit index");
  p.indices = arrays.template take_filled<int>("kspmv::pellr::indices", total, -1);
  p.values = arrays.template take_filled<Scalar>("kspmv::pellr::values", total, Scalar(0));
  const auto idx = p.indices;
  const auto val = p.values;
  const auto rp = a.row_ptr;
  const auto col = detail::read_only(a.col_idx);
  const auto src = detail::read_only(a.values);
  // Position r holds CSR row perm(r): its j-th entry goes to column j of
  // r's lane in r's slice.
  detail::for_each_row_segment(
      space, "kspmv::pellr::fill", nrows, longest, KOKKOS_LAMBDA(const std::int64_t r) { return rp(perm(r)); },
      KOKKOS_LAMBDA(const std::int64_t r) { return rp(perm(r) + 1); },
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t k0, const std::int64_t k1) {
        const std::int64_t first = rp(perm(r)), base = offset(r / slice) + r % slice;
        for (std::int64_t k = k0; k < k1; ++k) {
          idx(base + (k - first) * slice) = col(k);
          val(base + (k - first) * slice) = src(k);
        }
      });
  p.new_to_old = perm;
  p.storage = arrays.kept();
  space.fence();
  p.conversion_seconds = timer.seconds();
  return p;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
PellrDevice<Scalar, ExecSpace> to_pellr(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_pellr(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const PellrDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "pellr", A.nrows, A.ncols, alpha, x, beta, y)) return;
  const bool caller = A.order == OutputOrder::Caller;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && detail::contiguous(x, y))
      return cuda_tuned::pellr_spmv(space.cuda_stream(), A.nrows, A.nslices, A.slice_width.data(), A.slice_offset.data(),
                              A.indices.data(), A.values.data(), caller && A.sorted ? A.new_to_old.data() : nullptr, alpha,
                              x.data(), beta, y.data());
  }
#endif
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  constexpr int S = PellrDevice<Scalar, ExecSpace>::slice;
  const int spt = detail::is_host_space<ExecSpace>() ? 1 : 4;  // slices per team
  const int team = detail::is_host_space<ExecSpace>() ? 1 : S * spt;
  const int nrows = A.nrows, nslices = A.nslices;
  const auto width = A.slice_width;
  const auto offset = A.slice_offset;
  const auto indices = A.indices;
  const auto values = A.values;
  const auto perm = A.new_to_old;
  const bool permute = caller && A.sorted;
  Kokkos::parallel_for(
      "kspmv::pellr", policy(space, (nslices + spt - 1) / spt, team), KOKKOS_LAMBDA(const member& t) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, S * spt), [&](const int i) {
          const int s = t.league_rank() * spt + i / S, lane = i % S;
          const int row = s * S + lane;
          if (s >= nslices || row >= nrows) return;
          const int w = width(s), base = offset(s) + lane;
          Scalar sum = 0;
          for (int n = 0; n < w; ++n) {
            const int c = indices(base + n * S);
            if (c < 0) break;  // this row's padding: the rest is padding too
            sum += values(base + n * S) * x(c);
          }
          detail::combine_y(y, permute ? perm(row) : row, alpha, sum, beta);
        });
      });
}

// Rows sorted by length (their lengths vary) fuse badly: a thread's
// serial walk over a long row with kBlockColumns loads an entry measured
// 1.16x (FEM P2) and 1.38x (power-law) slower a vector than the tuned
// one-vector kernel column by column; in the caller's order (rows of
// nearly equal lengths) it is 0.27-0.34x.
template <class Scalar, class ExecSpace>
bool block_pays(const PellrDevice<Scalar, ExecSpace>& A) {
  return !A.sorted;
}

// Y = alpha * A * X + beta * Y for k columns (kspmv/core/block_util.hpp):
// a thread a row of its slice, each slot read once for up to
// kBlockColumns columns, y written in the order the matrix was built for.
template <class Scalar, class ExecSpace, class XView, class YView>
void spmv_block(const ExecSpace& space, Scalar alpha, const PellrDevice<Scalar, ExecSpace>& A, const XView& X,
                Scalar beta, const YView& Y) {
  if (detail::block_prologue(space, A.nrows, alpha, beta, Y)) return;
  constexpr int S = PellrDevice<Scalar, ExecSpace>::slice;
  const int nrows = A.nrows;
  const auto width = A.slice_width;
  const auto offset = A.slice_offset;
  const auto indices = A.indices;
  const auto values = A.values;
  const auto perm = A.new_to_old;
  const bool permute = A.order == OutputOrder::Caller && A.sorted;
  detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
    Kokkos::parallel_for(
        "kspmv::pellr::block", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows), KOKKOS_LAMBDA(const int row) {
          const int s = row / S;
          const int w = width(s), base = offset(s) + row % S;
          Scalar sum[kBlockColumns] = {};
          for (int n = 0; n < w; ++n) {
            const int c = indices(base + n * S);
            if (c < 0) break;  // this row's padding: the rest is padding too
            const Scalar v = values(base + n * S);
            for (int j = 0; j < kBlockColumns; ++j)
              if (j < cols) sum[j] += v * X(c, j0 + j);
          }
          detail::combine_y_block(Y, permute ? perm(row) : row, j0, cols, alpha, sum, beta);
        });
  });
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(PellrDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.values);
}
// Its slot walk (row_segments.hpp, walk_slots): position r holds CSR row
// new_to_old(r), its n-th entry in column n of r's lane of r's slice.
template <class Scalar, class ExecSpace>
struct PellrSlotWalk : PermutedRows<ExecSpace> {
  Kokkos::View<const int*, typename ExecSpace::memory_space> offset;
  template <class Op>
  KOKKOS_INLINE_FUNCTION void walk(const std::int64_t r, const std::int64_t k0, const std::int64_t k1, const Op& op) const {
    constexpr int S = PellrDevice<Scalar, ExecSpace>::slice;
    const std::int64_t first = this->begin(r), base = offset(r / S) + r % S;
    for (std::int64_t k = k0; k < k1; ++k) op(k, base + (k - first) * S);
  }
};
template <class Scalar, class ExecSpace>
PellrSlotWalk<Scalar, ExecSpace> slot_walk(const PellrDevice<Scalar, ExecSpace>& f,
                                           const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  return {{rp, f.new_to_old, f.nrows, f.longest}, f.slice_offset};
}
// Refreshed by a kernel of its own on CUDA's tuned path
// (pellr_cuda.hpp, pellr_refresh: a warp a slice, its rows read as one
// run into a tile written out a column at a time) where no row is longer
// than kWarpRowsRefreshLongest and rows hold, on average,
// kWarpRowsRefreshMeanEntries entries or more where sorted,
// kWarpRowsScatterMeanEntries where not; its map then keeps no slot a
// nonzero. Elsewhere by walking its rows where they are sorted, by a
// scatter where not (refresh_by_rows, matrix.hpp).
template <class Scalar, class ExecSpace>
bool has_tuned_refresh(const PellrDevice<Scalar, ExecSpace>& f) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    return f.kernel == KernelPath::Auto &&
           cuda_tuned::warp_rows_refresh_pays(static_cast<long>(f.longest), f.nnz, f.nrows, f.sorted);
  }
#endif
  (void)f;
  return false;
}
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const PellrDevice<Scalar, ExecSpace>& f) {
  return f.sorted || has_tuned_refresh(f);
}
// True where it wrote the values (has_tuned_refresh), false where the
// slot walk is to.
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const PellrDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (!has_tuned_refresh(f)) return false;
    cuda_tuned::pellr_refresh(space.cuda_stream(), f.nrows, f.nslices, f.slice_width.data(), f.slice_offset.data(),
                              f.sorted ? f.new_to_old.data() : nullptr, rp.data(), values.data(), f.values.data(),
                              static_cast<long>(f.longest));
    return true;
  }
#endif
  (void)space, (void)f, (void)rp, (void)values;
  return false;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const PellrDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"slices", std::to_string(f.nslices)},
          {"sorted", f.sorted ? "yes" : "no"},
          {"n_iter", std::to_string(f.pellr_iterations.n_iter)},
          {"n_iter_ellr", std::to_string(f.ellr_iterations.n_iter)},
          {"n_p", std::to_string(f.pellr_iterations.n_p)},
          {"order", f.order == OutputOrder::Caller ? "caller" : "internal"}};
}
}  // namespace detail

}  // namespace kspmv
