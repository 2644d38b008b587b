// csr-merge: CSR with merge-path load balancing (Merrill & Garland, "Merge-
// based parallel sparse matrix-vector multiplication", SC'16; the scheme of
// cuSPARSE's CSR ALG1, Kokkos Kernels' merge path and Ginkgo's
// load_balance).
//
// The rows' ends (row_ptr[1..nrows]) and the nonzeros' indices (0..nnz-1)
// are merged into one path of nrows + nnz items: at a tie the row end comes
// first, so coordinate (i, k) of the path means "rows 0..i-1 finished, k
// entries consumed", with row_ptr[i] <= k <= row_ptr[i + 1]. The path is
// cut into units of `unit_items` items (a team, a CUDA block); where unit u
// starts is found at conversion by a binary search on diagonal
// u * unit_items (unit_row, unit_nz). Every unit then does the same work
// whatever the row lengths: a row of a million entries is shared by many
// units, a run of empty rows costs one item each.
//
// A unit writes y for the rows it holds whole (combine_y: beta == 0 never
// reads y). A row that crosses units leaves one partial sum in each: `tail`
// of the unit holding its first item, `head` of every later unit up to the
// one holding its end. Which rows cross units is known at conversion
// (item i + row_ptr[i] and item i + row_ptr[i + 1] in different units);
// a fix-up pass adds each such row's pieces in unit order and writes
// alpha * sum + beta * y once. No atomics: the same bits on every run.
//
// Storage: the caller's CSR unchanged (the value map is the identity, a
// refresh is one copy), the partition (2 ints a unit), the crossing rows
// (3 ints each) and the per-unit partial sums (scratch, 2 scalars a unit).
// Portable kernel: a team per unit, each thread a contiguous share of its
// items read from global memory, a segmented scan of the threads' carries
// in team scratch. CUDA (backends/cuda/csr_merge_cuda.hpp): a block of 256
// threads per unit, products and row ends staged in shared memory, a warp-
// shuffle segmented scan of the carries.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <climits>
#include <tuple>

#include "kspmv/config.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/block_util.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_info.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/formats/csr.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/csr_merge_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct CsrMergeDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "csr-merge";

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  CsrDevice<Scalar, ExecSpace> csr;  // the caller's CSR, unchanged
  std::int64_t unit_items = 0;       // merge-path items (row ends + entries) per unit
  int units = 0;
  // Where unit u starts on the path: row unit_row(u), entry unit_nz(u);
  // units + 1 of each (the last is (nrows, nnz)).
  Kokkos::View<int*, memory_space> unit_row, unit_nz;
  // Rows whose items lie in more than one unit: the row, its first and
  // its last unit.
  int nspan = 0;
  Kokkos::View<int*, memory_space> span_row, span_first, span_last;
  // Per-unit partial sums of rows crossing units: scratch of each apply (a
  // kspmv::SpmvHandle holds its own: with_own_scratch). On CUDA a unit
  // keeps one a column of the fused kernel (kBlockColumns), column j's at
  // j * units.
  Kokkos::View<Scalar*, memory_space> head, tail;
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return csr.storage_bytes() +
           (unit_row.span() + unit_nz.span() + span_row.span() + span_first.span() + span_last.span()) * sizeof(int) +
           (head.span() + tail.span()) * sizeof(Scalar);
  }
};

namespace detail {

// Partial sums a unit keeps: one a column where the fused kernel runs
// (the tuned CUDA path), else one.
template <class ExecSpace>
constexpr int merge_partial_columns() {
  return on_cuda<ExecSpace>() ? kBlockColumns : 1;
}

// The merge-path search on diagonal d of rows [row0, row0 + rows) and
// entries [k0, k0 + entries): the rows whose end comes among the first d
// items, i.e. the largest i with row_end(i - 1) <= k0 + d - i (a row end
// before an entry at a tie). row_end(i) is the global index at which row
// row0 + i ends. The path coordinate is (i, d - i).
template <class RowEnd>
KOKKOS_INLINE_FUNCTION int merge_path_search(const int d, const int rows, const int entries, const int k0,
                                             const RowEnd& row_end) {
  int lo = d > entries ? d - entries : 0;
  int hi = d < rows ? d : rows;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (row_end(mid) <= k0 + d - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// The portable kernel: a team per unit, team thread t walks items
// [t * ipt, (t + 1) * ipt) of the unit (ipt = its share, rounded up) from
// global memory. A thread writes y for the rows it both starts and ends;
// its first row end (a row it may have begun in earlier threads) and its
// trailing partial sum (its "carry", keyed by the row it ends in) go
// through a segmented inclusive scan of the team's carries in scratch, in
// thread order. The unit's first row, if an earlier unit began it, goes to
// head(u); the partial sum of the row it ends in, if it began it, to
// tail(u).
template <class Scalar, class ExecSpace, class XView, class YView>
void csr_merge_units_portable(const ExecSpace& space, Scalar alpha, const CsrMergeDevice<Scalar, ExecSpace>& A,
                              const XView& x, Scalar beta, const YView& y) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using sS = Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using sI = Kokkos::View<int*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int T = default_team_size<ExecSpace>();
  const int ipt = static_cast<int>((A.unit_items + T - 1) / T);
  const int nrows = A.nrows;
  const auto row_ptr = A.csr.row_ptr;
  const auto col_idx = A.csr.col_idx;
  const auto values = A.csr.values;
  const auto unit_row = A.unit_row;
  const auto unit_nz = A.unit_nz;
  const auto head = A.head;
  const auto tail = A.tail;
  const std::size_t shmem = sS::shmem_size(T) + sI::shmem_size(T);
  Kokkos::parallel_for(
      "kspmv::csr_merge", policy(space, A.units, T).set_scratch_size(0, Kokkos::PerTeam(shmem)),
      KOKKOS_LAMBDA(const member& t) {
        sS carry(t.team_scratch(0), T);
        sI key(t.team_scratch(0), T);
        const int u = t.league_rank();
        const int tt = t.team_rank();
        const int r0 = unit_row(u), k0 = unit_nz(u);
        const int r1 = unit_row(u + 1), k1 = unit_nz(u + 1);
        const int rows = r1 - r0, entries = k1 - k0, items = rows + entries;
        // The unit's first row was begun by an earlier unit.
        const bool continues = k0 > row_ptr(r0);
        auto row_end = [&](const int i) { return row_ptr(r0 + 1 + i); };
        auto finish = [&](const int i, const Scalar sum) {
          if (i == 0 && continues)
            head(u) = sum;
          else
            combine_y(y, r0 + i, alpha, sum, beta);
        };
        const int d0 = tt * ipt < items ? tt * ipt : items;
        const int d1 = d0 + ipt < items ? d0 + ipt : items;
        const int i0 = merge_path_search(d0, rows, entries, k0, row_end);
        int i = i0, k = k0 + d0 - i0;
        Scalar sum = 0, first = 0;
        bool ended = false;
        for (int d = d0; d < d1; ++d) {
          if (i < rows && row_end(i) <= k) {
            if (ended)
              finish(i, sum);  // a row this thread began
            else
              first = sum;  // maybe begun by earlier threads: after the scan
            ended = true;
            sum = 0;
            ++i;
          } else {
            sum += values(k) * x(col_idx(k));
            ++k;
          }
        }
        // Segmented inclusive scan of the carries (keys ascend with the
        // thread), Hillis-Steele: a fixed order of additions.
        key(tt) = i;
        carry(tt) = sum;
        t.team_barrier();
        for (int off = 1; off < T; off *= 2) {
          const Scalar add = (tt >= off && key(tt - off) == i) ? carry(tt - off) : Scalar(0);
          t.team_barrier();
          carry(tt) += add;
          t.team_barrier();
        }
        // The thread before ends in the row this thread's first row end
        // closes: its scanned carry is that row's sum so far.
        if (ended) finish(i0, (tt > 0 ? carry(tt - 1) : Scalar(0)) + first);
        if (tt == T - 1 && r1 < nrows) {
          if (rows == 0 && continues)
            head(u) = carry(tt);  // a unit inside one row
          else if (k1 > row_ptr(r1))
            tail(u) = carry(tt);  // the row it ends in began here
        }
      });
}

// Rows crossing units: tail of the first unit, then head of each later
// unit, in unit order (one team a row; on a host space one thread adds
// them in order, on a GPU the team's reduction has a fixed order too).
template <class Scalar, class ExecSpace, class YView>
void csr_merge_fixup_portable(const ExecSpace& space, Scalar alpha, const CsrMergeDevice<Scalar, ExecSpace>& A,
                              Scalar beta, const YView& y) {
  fix_up_spanning_rows(space, "kspmv::csr_merge_fixup", A.nspan, A.span_row, A.span_first, A.span_last, A.head,
                       A.tail, alpha, beta, y);
}

}  // namespace detail

// On the device: the CSR arrays copied (offsets narrowed to 32 bits), each
// unit's start by a binary search on its diagonal (a thread a unit), the
// rows crossing units by a compaction.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrMergeDevice<Scalar, ExecSpace> to_csr_merge(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using D = CsrMergeDevice<Scalar, ExecSpace>;
  using M = typename D::memory_space;
  ExecSpace space;
  D d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  d.kernel = opt.kernel;
  if (opt.merge_unit_items < 0)
    throw InvalidArgumentError("csr-merge: merge_unit_items must be >= 0 (0: auto), got " +
                               std::to_string(opt.merge_unit_items));
  const std::int64_t items = std::int64_t(a.nrows) + a.nnz();
  if (a.nnz() > std::numeric_limits<int>::max() || items > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("csr-merge: " + std::to_string(a.nrows) + " rows + " + std::to_string(a.nnz()) +
                                " entries exceed its 32-bit merge-path coordinates (max 2^31-1)");
  d.csr = detail::build_csr<Scalar, ExecSpace, CsrKernel::Portable>(a, opt);
  const bool host = detail::is_host_space<ExecSpace>();
  d.unit_items = merge_unit_items(items, device_figures<ExecSpace>().processors, !host, opt.merge_unit_items);
  // A host unit need not be longer than the path (a GPU's stays whole
  // items a thread of the tuned kernel).
  if (host) d.unit_items = std::min<std::int64_t>(d.unit_items, std::max<std::int64_t>(items, 1));
  d.units = static_cast<int>(merge_units(items, d.unit_items));
  const int units = d.units, nrows = d.nrows, nnz = static_cast<int>(d.nnz);
  const std::int64_t per_unit = d.unit_items;
  const auto rp = d.csr.row_ptr;
  d.unit_row = Kokkos::View<int*, M>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::csr_merge::unit_row"), units + 1);
  d.unit_nz = Kokkos::View<int*, M>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::csr_merge::unit_nz"), units + 1);
  const auto unit_row = d.unit_row, unit_nz = d.unit_nz;
  Kokkos::parallel_for(
      "kspmv::csr_merge::partition", Kokkos::RangePolicy<ExecSpace>(space, 0, units + 1), KOKKOS_LAMBDA(const int u) {
        const std::int64_t du = std::int64_t(u) * per_unit;
        const int diag = static_cast<int>(du < items ? du : items);
        const int i = detail::merge_path_search(diag, nrows, nnz, 0, [&](const int r) { return rp(r + 1); });
        unit_row(u) = i;
        unit_nz(u) = diag - i;
      });
  // Row i's items are i + row_ptr(i) (its first entry, or its end when it
  // is empty) to i + row_ptr(i + 1) (its end).
  d.span_row = detail::rows_where(
      space, nrows,
      KOKKOS_LAMBDA(const std::int64_t i) {
        return (i + rp(i)) / per_unit != (i + rp(i + 1)) / per_unit;
      },
      "kspmv::csr_merge::span_row");
  d.nspan = static_cast<int>(d.span_row.extent(0));
  d.span_first = Kokkos::View<int*, M>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::csr_merge::span_first"), d.nspan);
  d.span_last = Kokkos::View<int*, M>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::csr_merge::span_last"), d.nspan);
  const auto span_row = d.span_row, span_first = d.span_first, span_last = d.span_last;
  Kokkos::parallel_for(
      "kspmv::csr_merge::span_units", Kokkos::RangePolicy<ExecSpace>(space, 0, d.nspan), KOKKOS_LAMBDA(const int s) {
        const int i = span_row(s);
        span_first(s) = static_cast<int>((std::int64_t(i) + rp(i)) / per_unit);
        span_last(s) = static_cast<int>((std::int64_t(i) + rp(i + 1)) / per_unit);
      });
  const std::int64_t partials = std::int64_t(units) * detail::merge_partial_columns<ExecSpace>();
  d.head = Kokkos::View<Scalar*, M>(Kokkos::view_alloc(space, "kspmv::csr_merge::head"), partials);
  d.tail = Kokkos::View<Scalar*, M>(Kokkos::view_alloc(space, "kspmv::csr_merge::tail"), partials);
  space.fence();
  d.conversion_seconds = timer.seconds();
  return d;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrMergeDevice<Scalar, ExecSpace> to_csr_merge(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_csr_merge(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const CsrMergeDevice<Scalar, ExecSpace>& A, const XView& x,
          Scalar beta, const YView& y) {
  if (detail::spmv_prologue(space, "csr-merge", A.nrows, A.ncols, alpha, x, beta, y)) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && detail::contiguous(x, y)) {
      const cuda_tuned::MergeUnits<Scalar> m{A.nrows,          A.units,           static_cast<int>(A.unit_items),
                                             A.unit_row.data(), A.unit_nz.data(),  A.csr.row_ptr.data(),
                                             A.csr.col_idx.data(), A.csr.values.data(), A.head.data(),
                                             A.tail.data()};
      cuda_tuned::csr_merge_spmv(space.cuda_stream(), m, A.nspan, A.span_row.data(), A.span_first.data(),
                                 A.span_last.data(), alpha, x.data(), beta, y.data());
      return;
    }
  }
#endif
  detail::csr_merge_units_portable(space, alpha, A, x, beta, y);
  detail::csr_merge_fixup_portable(space, alpha, A, beta, y);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(Scalar alpha, const CsrMergeDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta, const YView& y) {
  spmv(ExecSpace(), alpha, A, x, beta, y);
}

// Several columns fuse on the tuned CUDA kernel only: each unit reads its
// entries once and gathers X(c, :) once for up to kBlockColumns columns
// (csr_merge_block_kernel). The portable kernel has no fused form: its
// columns go one at a time (kspmv::spmv).
template <class Scalar, class ExecSpace>
bool block_pays(const CsrMergeDevice<Scalar, ExecSpace>& A) {
  return detail::on_cuda<ExecSpace>() && A.kernel == KernelPath::Auto;
}
// Its fused kernel gathers X(c, :) for each entry: where X's rows are
// contiguous (row-major) that is one or two sectors, where its columns
// are, kBlockColumns of them; kspmv::spmv stages a column-major X into a
// row-major block first (SpmvHandle::x_rows).
template <class Scalar, class ExecSpace>
constexpr bool block_gathers_rows(const CsrMergeDevice<Scalar, ExecSpace>&) {
  return true;
}

// Y = alpha * A * X + beta * Y for k columns, kBlockColumns at a time (the
// tuned CUDA kernel); elsewhere a column at a time.
template <class Scalar, class ExecSpace, class XView, class YView>
void spmv_block(const ExecSpace& space, Scalar alpha, const CsrMergeDevice<Scalar, ExecSpace>& A, const XView& X,
                Scalar beta, const YView& Y) {
  if (detail::block_prologue(space, A.nrows, alpha, beta, Y)) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto) {
      const cuda_tuned::MergeUnits<Scalar> m{A.nrows,          A.units,           static_cast<int>(A.unit_items),
                                             A.unit_row.data(), A.unit_nz.data(),  A.csr.row_ptr.data(),
                                             A.csr.col_idx.data(), A.csr.values.data(), A.head.data(),
                                             A.tail.data()};
      detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
        const auto b = cuda_tuned::column_block<Scalar>(X, Y, j0, cols);
        cuda_tuned::csr_merge_spmv_block(space.cuda_stream(), m, A.nspan, A.span_row.data(), A.span_first.data(),
                                         A.span_last.data(), alpha, b, beta);
      });
      return;
    }
  }
#endif
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(X.extent(1)); ++j)
    spmv(space, alpha, A, Kokkos::subview(X, Kokkos::ALL(), j), beta, Kokkos::subview(Y, Kokkos::ALL(), j));
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp), the CSR's own: references to
// its members, read through detail::value_views; a copy given values of
// its own replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(CsrMergeDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.csr.values);
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const CsrMergeDevice<Scalar, ExecSpace>& f) {
  const bool tuned = on_cuda<ExecSpace>() && f.kernel == KernelPath::Auto;
  const int threads = is_host_space<ExecSpace>() ? 1 : tuned ? kMergeBlockThreads : default_team_size<ExecSpace>();
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"units", std::to_string(f.units)},
          {"items_per_unit", std::to_string(f.unit_items)},
          {"threads_per_unit", std::to_string(threads)},
          {"rows_spanning_units", std::to_string(f.nspan)}};
}

template <class S, class E>
struct has_scratch<CsrMergeDevice<S, E>> : std::true_type {};
}  // namespace detail

template <class S, class E>
std::size_t scratch_bytes(const CsrMergeDevice<S, E>& f) {
  return (f.head.span() + f.tail.span()) * sizeof(S);
}
template <class S, class E>
CsrMergeDevice<S, E> with_own_scratch(const CsrMergeDevice<S, E>& f) {
  CsrMergeDevice<S, E> c = f;
  c.head = Kokkos::View<S*, typename E::memory_space>("kspmv::csr_merge::head", f.head.extent(0));
  c.tail = Kokkos::View<S*, typename E::memory_space>("kspmv::csr_merge::tail", f.tail.extent(0));
  return c;
}

}  // namespace kspmv
