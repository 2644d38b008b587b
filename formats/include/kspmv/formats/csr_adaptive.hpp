// csr-adaptive (evc-hyb §1, the adaptive-TPR CSR EVC-HYB builds on): the
// CSR storage is kept as it is (caller's row order, no conversion of the
// arrays); a list of rows sorted by length (ascending) is cut into ranges,
// each range gets threads-per-row 1, 2, 4, ... by its longest row (<= 8
// entries -> 1 lane, <= 16 -> 2, ...), up to the team size (256 lanes), and
// its own teams. Rows of very different lengths no longer share a warp, so
// short rows do not idle 31 lanes and long rows do not serialize a lane.
//
// Portable: one TeamPolicy launch per range (the vector length is fixed per
// launch). CUDA: one launch for all ranges (backends/cuda/adaptive_cuda.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <numeric>
#include <tuple>

#include "kspmv/core/properties.hpp"
#include "kspmv/config.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/row_stats.hpp"
#include "kspmv/formats/csr.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/adaptive_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct CsrAdaptiveDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "csr-adaptive";
  static constexpr int block_threads = kCsrAdaptiveBlockThreads;  // lanes per team, the largest TPR

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  CsrDevice<Scalar, ExecSpace> csr;              // the caller's CSR, unchanged
  Kokkos::View<int*, memory_space> sorted_rows;  // rows by length, ascending
  Kokkos::View<int*, memory_space> ranges;       // 4 ints per range: begin, end, tpr, first team
  detail::KeptBlocks<memory_space> storage;      // what the two above are taken from (FormatArrays)
  std::vector<TprRange> host_ranges;
  int blocks = 0;  // teams of the single CUDA launch
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return csr.storage_bytes() + (sorted_rows.span() + ranges.span()) * sizeof(int);
  }
};

namespace detail {
// The ranges as the kernels read them: 4 ints a range.
inline std::vector<int> flat_ranges(const std::vector<TprRange>& r, const std::string& label) {
  // The CUDA kernel finds a block's range with one warp ballot (a lane a
  // range). tpr_ranges on lengths sorted ascending gives one range per
  // TPR, a power of two up to the block: at most 9 for 256.
  if (r.size() > 32)
    throw UnsupportedError(label + ": " + std::to_string(r.size()) + " TPR ranges, more than the 32 a warp finds");
  std::vector<int> flat;
  for (const auto& x : r) flat.insert(flat.end(), {x.begin, x.end, x.tpr, x.first_block});
  if (flat.empty()) flat.assign(4, 0);
  return flat;
}
template <class MemSpace>
Kokkos::View<int*, MemSpace> upload_ranges(const std::vector<TprRange>& r, const std::string& label) {
  return upload<int, MemSpace>(flat_ranges(r, label), label);
}
// The same into a format's kept arrays (FormatArrays).
template <class Arrays>
auto upload_ranges(Arrays& arrays, const std::vector<TprRange>& r, const std::string& label) {
  return arrays.upload(flat_ranges(r, label), label);
}

// Rows [begin, end) of `order` (sorted positions) with `tpr` lanes per row
// on a portable TeamPolicy: rows of a range <= 32 lanes share a team, a
// wider row gets a whole team of tpr lanes. Sum: what a row's lanes add
// up (a scalar; ColumnSums for several columns).
template <class ExecSpace, class Sum, class RowOf, class Body>
void adaptive_range_portable(const ExecSpace& space, const char* label, int begin, int end, int tpr,
                             const RowOf& row_of, const Body& body) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const bool host = is_host_space<ExecSpace>();
  const int n = end - begin;
  if (n <= 0) return;
  if (host || tpr <= 32) {
    const int vl = host ? 1 : tpr;
    const int rows_per_team = host ? 256 : 256 / tpr;
    const int team = host ? 1 : rows_per_team;
    Kokkos::parallel_for(
        label, policy(space, (n + rows_per_team - 1) / rows_per_team, team, vl), KOKKOS_LAMBDA(const member& t) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rows_per_team), [&](const int r) {
            const int i = begin + t.league_rank() * rows_per_team + r;
            if (i >= end) return;
            int kb, ke;
            row_of(i, kb, ke);
            Sum sum{};
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(t, kb, ke), [&](const int k, Sum& s) { body(k, s); }, sum);
            Kokkos::single(Kokkos::PerThread(t), [&]() { row_of.store(i, sum); });
          });
        });
  } else {
    Kokkos::parallel_for(
        label, policy(space, n, tpr / 32, 32), KOKKOS_LAMBDA(const member& t) {
          const int i = begin + t.league_rank();
          int kb, ke;
          row_of(i, kb, ke);
          Sum sum{};
          Kokkos::parallel_reduce(
              Kokkos::TeamVectorRange(t, kb, ke), [&](const int k, Sum& s) { body(k, s); }, sum);
          Kokkos::single(Kokkos::PerTeam(t), [&]() { row_of.store(i, sum); });
        });
  }
}
}  // namespace detail

// On the device: the rows stably sorted by ascending length, counted by
// their TPR (one pass, a few integer atomics on 16 counters); the host
// turns the counts into the ranges.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrAdaptiveDevice<Scalar, ExecSpace> to_csr_adaptive(const DeviceCsr<Scalar, ExecSpace>& a,
                                                     const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using D = CsrAdaptiveDevice<Scalar, ExecSpace>;
  ExecSpace space;
  D d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  d.kernel = opt.kernel;
  if (a.nnz() > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("csr-adaptive: " + std::to_string(a.nnz()) +
                                " entries exceed its 32-bit row offsets (max 2^31-1)");
  detail::ScratchSet<ExecSpace> temps(space);
  detail::FormatArrays<ExecSpace> arrays(space);
  const auto len = detail::row_lengths(space, a.row_ptr, "kspmv::csr_adaptive::lengths", &temps);
  const std::int64_t longest = longest_row(space, a.row_ptr);
  d.sorted_rows = detail::rows_by_length(space, len, longest, false, "kspmv::csr_adaptive::sorted_rows", &arrays);
  constexpr int block = D::block_threads;
  // Rows a class of threads per row, from the rows a length.
  std::vector<std::int64_t> count(kTprClasses, 0);
  const std::vector<std::int64_t> of_length = detail::length_histogram(space, a.row_ptr, longest);
  for (std::size_t l = 0; l < of_length.size(); ++l)
    if (of_length[l]) count[static_cast<std::size_t>(tpr_class(tpr_of_row(std::int64_t(l), block, 1)))] += of_length[l];
  d.host_ranges = tpr_ranges_from_counts(count, block);
  d.blocks = d.host_ranges.empty() ? 0 : d.host_ranges.back().first_block + d.host_ranges.back().blocks;
  d.csr = detail::build_csr<Scalar, ExecSpace, CsrKernel::Portable>(a, opt);
  d.ranges = detail::upload_ranges(arrays, d.host_ranges, "kspmv::csr_adaptive::ranges");
  d.storage = arrays.kept();
  space.fence();
  d.conversion_seconds = timer.seconds();
  return d;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrAdaptiveDevice<Scalar, ExecSpace> to_csr_adaptive(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_csr_adaptive(upload_csr<Scalar, ExecSpace>(a), opt);
}

namespace detail {
// Sorted position -> the row's entries in the caller's CSR.
template <class MemSpace>
struct SortedRowEntries {
  Kokkos::View<int*, MemSpace> sorted_rows, row_ptr;
  KOKKOS_INLINE_FUNCTION void operator()(int i, int& kb, int& ke) const {
    const int r = sorted_rows(i);
    kb = row_ptr(r);
    ke = row_ptr(r + 1);
  }
};
// ... and where the row's sum goes: its y.
template <class Scalar, class MemSpace, class YView>
struct CsrAdaptiveRowOf : SortedRowEntries<MemSpace> {
  YView y;
  Scalar alpha, beta;
  KOKKOS_INLINE_FUNCTION void store(int i, Scalar sum) const { combine_y(y, this->sorted_rows(i), alpha, sum, beta); }
};
}  // namespace detail

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const CsrAdaptiveDevice<Scalar, ExecSpace>& A, const XView& x,
          Scalar beta, const YView& y) {
  if (detail::spmv_prologue(space, "csr-adaptive", A.nrows, A.ncols, alpha, x, beta, y)) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && detail::contiguous(x, y)) {
      const cuda_tuned::AdaptiveRows<Scalar> rows{static_cast<int>(A.host_ranges.size()),
                                            reinterpret_cast<const int4*>(A.ranges.data()),
                                            A.sorted_rows.data(),
                                            A.csr.row_ptr.data(),
                                            A.csr.col_idx.data(),
                                            A.csr.values.data(),
                                            nullptr,
                                            0};
      return cuda_tuned::adaptive_rows_spmv(space.cuda_stream(), rows, A.blocks, alpha, x.data(), beta, y.data());
    }
  }
#endif
  const detail::CsrAdaptiveRowOf<Scalar, typename ExecSpace::memory_space, YView> row_of{
      {A.sorted_rows, A.csr.row_ptr}, y, alpha, beta};
  const auto col = A.csr.col_idx;
  const auto val = A.csr.values;
  const auto body = KOKKOS_LAMBDA(const int k, Scalar& s) { s += val(k) * x(col(k)); };
  for (const auto& r : A.host_ranges)
    detail::adaptive_range_portable<ExecSpace, Scalar>(space, "kspmv::csr_adaptive", r.begin, r.end, r.tpr, row_of,
                                                       body);
}

namespace detail {
// Sorted position -> the row's entries, and its sums into Y's columns
// j0 .. j0 + cols - 1 (spmv_block).
template <class Scalar, class MemSpace, class YView>
struct CsrAdaptiveBlockRowOf : SortedRowEntries<MemSpace> {
  YView y;
  Scalar alpha, beta;
  int j0, cols;
  KOKKOS_INLINE_FUNCTION void store(int i, const ColumnSums<Scalar>& sum) const {
    combine_y_block(y, this->sorted_rows(i), j0, cols, alpha, sum.v, beta);
  }
};
}  // namespace detail

// Each lane loads X(c, 0..7) for its entry: on CUDA kspmv::spmv stages a
// column-major X row-major first (one or two sectors an entry, where
// column-major X costs 8; a scrambled FEM P2 mesh was slower fused than
// column by column that way).
template <class Scalar, class ExecSpace>
constexpr bool block_gathers_rows(const CsrAdaptiveDevice<Scalar, ExecSpace>&) {
  return detail::on_cuda<ExecSpace>();
}

// Y = alpha * A * X + beta * Y for k columns (kspmv/core/block_util.hpp):
// the one-vector portable kernel's ranges, lanes per row and teams, each
// lane's entries read once for up to kBlockColumns columns, the row's
// lanes then reduced for all of them together. X and Y may have any
// strides. Every space, CUDA included, runs this portable kernel.
template <class Scalar, class ExecSpace, class XView, class YView>
void spmv_block(const ExecSpace& space, Scalar alpha, const CsrAdaptiveDevice<Scalar, ExecSpace>& A, const XView& X,
                Scalar beta, const YView& Y) {
  if (detail::block_prologue(space, A.nrows, alpha, beta, Y)) return;
  const auto col = A.csr.col_idx;
  const auto val = A.csr.values;
  detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
    const detail::CsrAdaptiveBlockRowOf<Scalar, typename ExecSpace::memory_space, YView> row_of{
        {A.sorted_rows, A.csr.row_ptr}, Y, alpha, beta, j0, cols};
    const auto body = KOKKOS_LAMBDA(const int k, detail::ColumnSums<Scalar>& s) {
      const Scalar v = val(k);
      const int c = col(k);
      for (int j = 0; j < kBlockColumns; ++j)
        if (j < cols) s.v[j] += v * X(c, j0 + j);
    };
    for (const auto& r : A.host_ranges)
      detail::adaptive_range_portable<ExecSpace, detail::ColumnSums<Scalar>>(
          space, "kspmv::csr_adaptive::block", r.begin, r.end, r.tpr, row_of, body);
  });
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(CsrAdaptiveDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.csr.values);
}
// It keeps the CSR's entries in their order (matrix.hpp: has_csr_order).
template <class Scalar, class ExecSpace>
bool keeps_csr_order(const CsrAdaptiveDevice<Scalar, ExecSpace>*, const DeviceCsr<Scalar, ExecSpace>&, const ConvertOptions&) {
  return true;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const CsrAdaptiveDevice<Scalar, ExecSpace>& f) {
  std::string tpr;
  for (const auto& r : f.host_ranges) tpr += (tpr.empty() ? "" : ",") + std::to_string(r.tpr) + ":" + std::to_string(r.end - r.begin);
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())}, {"ranges (tpr:rows)", tpr}};
}
}  // namespace detail

}  // namespace kspmv
