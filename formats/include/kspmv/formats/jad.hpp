// JAD, jagged diagonals (pellr §2.3.5): rows sorted by length as PELLR;
// the d-th jagged diagonal holds the d-th entry of every row longer than d
// (the first n_d sorted rows), stored one after another from jd_ptr[d]. No
// padding at all; entry d of sorted row r is at jd_ptr[d] + r, so a thread
// per row reads each diagonal coalesced. x stays in the caller's order; y
// in the caller's order by default, in the sorted order on request. Its
// SpMV is the portable kernel (compiled for CUDA by Kokkos); on CUDA's
// tuned path its refresh has a kernel of its own (jad_cuda.hpp).
#pragma once

#include <tuple>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/formats/pellr.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/jad_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct JadDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "jad";

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  int ndiag = 0;  // the longest row
  OutputOrder order = OutputOrder::Caller;
  Kokkos::View<int*, memory_space> new_to_old;  // sorted row -> caller row
  Kokkos::View<int*, memory_space> rl;          // sorted rows' lengths
  Kokkos::View<int*, memory_space> jd_ptr;      // size ndiag + 1
  Kokkos::View<int*, memory_space> indices;
  Kokkos::View<Scalar*, memory_space> values;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
  KernelPath kernel = KernelPath::Auto;      // Auto: CUDA's refresh kernel (its SpMV is portable)
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return (new_to_old.span() + rl.span() + jd_ptr.span() + indices.span()) * sizeof(int) +
           values.span() * sizeof(Scalar);
  }
};

// On the device: rows sorted longest first (a device sort); n_d, the rows
// longer than d, by a binary search of the sorted lengths for each d, and
// jd_ptr by a scan of them; then a thread a row places its entries.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
JadDevice<Scalar, ExecSpace> to_jad(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using J = JadDevice<Scalar, ExecSpace>;
  ExecSpace space;
  J j;
  j.nrows = a.nrows;
  j.ncols = a.ncols;
  j.nnz = a.nnz();
  j.order = opt.output_order;
  j.kernel = opt.kernel;
  if (a.nnz() > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("jad: " + std::to_string(a.nnz()) + " entries exceed its 32-bit index");
  detail::ScratchSet<ExecSpace> temps(space);
  detail::FormatArrays<ExecSpace> arrays(space);
  const auto len = detail::row_lengths(space, a.row_ptr, "kspmv::jad::lengths", &temps);
  const std::int64_t longest = longest_row(space, a.row_ptr);
  const auto perm = detail::rows_by_length(space, len, longest, true, "kspmv::jad::new_to_old", &arrays);
  const int nrows = a.nrows;
  j.ndiag = nrows > 0 ? static_cast<int>(longest) : 0;
  j.rl = arrays.template take<int>("kspmv::jad::rl", nrows);
  const auto rl = j.rl;
  Kokkos::parallel_for(
      "kspmv::jad::rl", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows),
      KOKKOS_LAMBDA(const int r) { rl(r) = len(perm(r)); });
  j.jd_ptr = arrays.template take<int>("kspmv::jad::jd_ptr", j.ndiag + 1);
  const auto jd_ptr = j.jd_ptr;
  const int ndiag = j.ndiag;
  kspmv::detail::scan(
      "kspmv::jad::jd_ptr", Kokkos::RangePolicy<ExecSpace>(space, 0, ndiag + 1),
      KOKKOS_LAMBDA(const int d, std::int64_t& sum, const bool final) {
        if (final) jd_ptr(d) = static_cast<int>(sum);
        if (d < ndiag) {
          // Rows longer than d: the sorted lengths descend, so the first
          // position whose length is <= d.
          int lo = 0, hi = nrows;
          while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (rl(mid) > d) lo = mid + 1;
            else hi = mid;
          }
          sum += lo;
        }
      }, &temps);
  j.indices = arrays.template take<int>("kspmv::jad::indices", a.nnz());
  j.values = arrays.template take<Scalar>("kspmv::jad::values", a.nnz());
  const auto idx = j.indices;
  const auto val = j.values;
  const auto rp = a.row_ptr;
  const auto col = detail::read_only(a.col_idx);
  const auto src = detail::read_only(a.values);
  // Position r holds CSR row perm(r): its j-th entry goes to jagged
  // diagonal j at r.
  detail::for_each_row_segment(
      space, "kspmv::jad::fill", nrows, longest, KOKKOS_LAMBDA(const std::int64_t r) { return rp(perm(r)); },
      KOKKOS_LAMBDA(const std::int64_t r) { return rp(perm(r) + 1); },
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t k0, const std::int64_t k1) {
        const std::int64_t first = rp(perm(r));
        for (std::int64_t k = k0; k < k1; ++k) {
          idx(jd_ptr(k - first) + r) = col(k);
          val(jd_ptr(k - first) + r) = src(k);
        }
      });
  j.new_to_old = perm;
  j.storage = arrays.kept();
  space.fence();
  j.conversion_seconds = timer.seconds();
  return j;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
JadDevice<Scalar, ExecSpace> to_jad(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_jad(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const JadDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "jad", A.nrows, A.ncols, alpha, x, beta, y)) return;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int team = detail::default_team_size<ExecSpace>();
  const int rpt = detail::is_host_space<ExecSpace>() ? 1024 : team;
  const int nrows = A.nrows;
  const bool caller = A.order == OutputOrder::Caller;
  const auto rl = A.rl;
  const auto jd_ptr = A.jd_ptr;
  const auto indices = A.indices;
  const auto values = A.values;
  const auto perm = A.new_to_old;
  Kokkos::parallel_for(
      "kspmv::jad", policy(space, (nrows + rpt - 1) / rpt, team), KOKKOS_LAMBDA(const member& t) {
        const int first = t.league_rank() * rpt;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int i) {
          const int r = first + i;
          if (r >= nrows) return;
          Scalar sum = 0;
          const int len = rl(r);
          for (int d = 0; d < len; ++d) {
            const int k = jd_ptr(d) + r;
            sum += values(k) * x(indices(k));
          }
          detail::combine_y(y, caller ? perm(r) : r, alpha, sum, beta);
        });
      });
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(JadDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.values);
}
// Its slot walk (row_segments.hpp, walk_slots): position r holds CSR row
// new_to_old(r), its n-th entry in jagged diagonal n at r.
template <class Scalar, class ExecSpace>
struct JadSlotWalk : PermutedRows<ExecSpace> {
  Kokkos::View<const int*, typename ExecSpace::memory_space> jd_ptr;
  template <class Op>
  KOKKOS_INLINE_FUNCTION void walk(const std::int64_t r, const std::int64_t k0, const std::int64_t k1, const Op& op) const {
    const std::int64_t first = this->begin(r);
    for (std::int64_t k = k0; k < k1; ++k) op(k, std::int64_t(jd_ptr(k - first)) + r);
  }
};
template <class Scalar, class ExecSpace>
JadSlotWalk<Scalar, ExecSpace> slot_walk(const JadDevice<Scalar, ExecSpace>& f,
                                         const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  return {{rp, f.new_to_old, f.nrows, f.ndiag}, f.jd_ptr};
}
// Refreshed by walking its rows, which it sorts (matrix.hpp); on CUDA's
// tuned path by a kernel of its own (jad_cuda.hpp, jad_refresh: a warp 32
// rows read as one run into a tile written out a diagonal at a time)
// where no row is longer than kWarpRowsRefreshLongest and rows hold
// kWarpRowsRefreshMeanEntries entries or more on average.
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const JadDevice<Scalar, ExecSpace>&) {
  return true;
}
template <class Scalar, class ExecSpace>
bool has_tuned_refresh(const JadDevice<Scalar, ExecSpace>& f) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value)
    return f.kernel == KernelPath::Auto && cuda_tuned::warp_rows_refresh_pays(f.ndiag, f.nnz, f.nrows, true);
#endif
  (void)f;
  return false;
}
// True where it wrote the values (has_tuned_refresh), false where the
// slot walk is to.
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const JadDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (!has_tuned_refresh(f)) return false;
    cuda_tuned::jad_refresh(space.cuda_stream(), f.nrows, f.new_to_old.data(), f.rl.data(), f.jd_ptr.data(),
                            rp.data(), values.data(), f.values.data(), static_cast<long>(f.ndiag));
    return true;
  }
#endif
  (void)space, (void)f, (void)rp, (void)values;
  return false;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const JadDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", "portable"},
          {"jagged_diagonals", std::to_string(f.ndiag)},
          {"order", f.order == OutputOrder::Caller ? "caller" : "internal"}};
}
}  // namespace detail

}  // namespace kspmv
