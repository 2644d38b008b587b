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
// Column panels: where x outgrows a GPU's L2, its gathers go to memory
// (on an H100, a power-law graph of 8M rows took 1.9x the time in one
// panel that it took in three). The columns are then split into panels of consecutive columns
// whose slice of x fits (merge_column_panels, kspmv/core/adaptive.hpp),
// each panel a merge-path CSR of its own over all rows, applied one after
// another: the first with the caller's beta, the rest adding to y. A panel
// costs one more pass over y and the offsets.
//
// Storage: the caller's CSR unchanged where there is one panel (the value
// map is the identity, a refresh is one copy), else the panels' CSRs one
// after another (a value map of 4 bytes a nonzero); the partition (2 ints
// a unit), the crossing rows (3 ints each) and the per-unit partial sums
// (scratch, 2 scalars a unit of the largest panel).
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
#include <vector>

#include "kspmv/config.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/block_util.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_info.hpp"
#include "kspmv/core/device_scan.hpp"
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
  // The caller's CSR, unchanged, where there is one panel; else panel p's
  // offsets at p * (nrows + 1) of csr.row_ptr, indices into csr.col_idx
  // and csr.values, which hold panel 0's entries, then panel 1's, ...
  CsrDevice<Scalar, ExecSpace> csr;
  int panels = 1;
  std::int64_t unit_items = 0;  // merge-path items (row ends + entries) per unit
  int units = 0;                // of all panels
  // Panel p's units: unit_row and unit_nz from `unit0` (units + 1 of them,
  // the last its (nrows, its end)); its crossing rows from `span0`.
  struct Panel {
    int units = 0, unit0 = 0, nspan = 0, span0 = 0;
  };
  std::vector<Panel> panel;
  // Where unit u starts on its panel's path: row unit_row(u), entry
  // unit_nz(u) (an index into csr.col_idx).
  Kokkos::View<int*, memory_space> unit_row, unit_nz;
  // Rows whose items lie in more than one unit of a panel: the row, its
  // first and its last unit (numbered in the panel).
  int nspan = 0;  // of all panels
  Kokkos::View<int*, memory_space> span_row, span_first, span_last;
  // Per-unit partial sums of rows crossing units: scratch of each apply (a
  // kspmv::SpmvHandle holds its own: with_own_scratch), as many as the
  // largest panel's units, each panel's pass using them in turn. On CUDA a
  // unit keeps one a column of the fused kernel (kBlockColumns), column
  // j's at j * (that panel's units).
  Kokkos::View<Scalar*, memory_space> head, tail;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
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

// Panel p's first column (p == panels: ncols) and the panel column c
// falls in: the largest p with ncols * p / panels <= c, i.e. the largest
// p < (c + 1) * panels / ncols.
KOKKOS_INLINE_FUNCTION std::int64_t merge_panel_first_column(std::int64_t ncols, int panels, int p) {
  return ncols * p / panels;
}
KOKKOS_INLINE_FUNCTION int merge_panel_of_column(std::int64_t ncols, int panels, std::int64_t c) {
  return static_cast<int>(((c + 1) * panels + ncols - 1) / ncols - 1);
}

// Panel p's arrays: its offsets, its units' starts, its crossing rows.
template <class Scalar, class ExecSpace>
struct MergePanelArrays {
  using ints = Kokkos::View<int*, typename ExecSpace::memory_space>;
  int units = 0, nspan = 0;
  ints row_ptr, unit_row, unit_nz, span_row, span_first, span_last;
};
template <class Scalar, class ExecSpace>
MergePanelArrays<Scalar, ExecSpace> merge_panel(const CsrMergeDevice<Scalar, ExecSpace>& A, int p) {
  using range = Kokkos::pair<std::int64_t, std::int64_t>;
  const auto& q = A.panel[static_cast<std::size_t>(p)];
  const std::int64_t stride = std::int64_t(A.nrows) + 1;
  MergePanelArrays<Scalar, ExecSpace> m;
  m.units = q.units;
  m.nspan = q.nspan;
  m.row_ptr = Kokkos::subview(A.csr.row_ptr, range(p * stride, (p + 1) * stride));
  m.unit_row = Kokkos::subview(A.unit_row, range(q.unit0, q.unit0 + q.units + 1));
  m.unit_nz = Kokkos::subview(A.unit_nz, range(q.unit0, q.unit0 + q.units + 1));
  m.span_row = Kokkos::subview(A.span_row, range(q.span0, q.span0 + q.nspan));
  m.span_first = Kokkos::subview(A.span_first, range(q.span0, q.span0 + q.nspan));
  m.span_last = Kokkos::subview(A.span_last, range(q.span0, q.span0 + q.nspan));
  return m;
}

// The beta of panel p's pass: the caller's for the first, which writes
// every row; the others add to it.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar merge_panel_beta(int p, Scalar beta) {
  return p == 0 ? beta : Scalar(1);
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
                              const MergePanelArrays<Scalar, ExecSpace>& P, const XView& x, Scalar beta,
                              const YView& y) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using sS = Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using sI = Kokkos::View<int*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int T = default_team_size<ExecSpace>();
  const int ipt = static_cast<int>((A.unit_items + T - 1) / T);
  const int nrows = A.nrows;
  const auto row_ptr = P.row_ptr;
  const auto col_idx = A.csr.col_idx;
  const auto values = A.csr.values;
  const auto unit_row = P.unit_row;
  const auto unit_nz = P.unit_nz;
  const auto head = A.head;
  const auto tail = A.tail;
  const std::size_t shmem = sS::shmem_size(T) + sI::shmem_size(T);
  Kokkos::parallel_for(
      "kspmv::csr_merge", policy(space, P.units, T).set_scratch_size(0, Kokkos::PerTeam(shmem)),
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
                              const MergePanelArrays<Scalar, ExecSpace>& P, Scalar beta, const YView& y) {
  fix_up_spanning_rows(space, "kspmv::csr_merge_fixup", P.nspan, P.span_row, P.span_first, P.span_last, A.head,
                       A.tail, alpha, beta, y);
}

#if KSPMV_ENABLE_CUDA
// Panel p as the tuned kernel's units.
template <class Scalar, class ExecSpace>
cuda_tuned::MergeUnits<Scalar> merge_units_of(const CsrMergeDevice<Scalar, ExecSpace>& A,
                                              const MergePanelArrays<Scalar, ExecSpace>& P) {
  return {A.nrows,          P.units,           static_cast<int>(A.unit_items), P.unit_row.data(), P.unit_nz.data(),
          P.row_ptr.data(), A.csr.col_idx.data(), A.csr.values.data(), A.head.data(), A.tail.data()};
}
#endif

// The mean over a's non-empty rows of the window of x each gathers from,
// centred on its diagonal: 2 x (the farthest of its first and last
// column from column i x ncols / nrows) + 1 (0 where every row is
// empty). A stencil's or a well-ordered mesh's rows, and the rows a GPU
// works on at once, stay within it; a graph's reach across x.
template <class Scalar, class ExecSpace>
double mean_row_window(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a) {
  const auto rp = a.row_ptr;
  const auto col = a.col_idx;
  const double per_row = a.nrows > 0 ? double(a.ncols) / double(a.nrows) : 1.0;
  double total = 0;
  std::int64_t rows = 0;
  Kokkos::parallel_reduce(
      "kspmv::csr_merge::row_windows", Kokkos::RangePolicy<ExecSpace>(space, 0, a.nrows),
      KOKKOS_LAMBDA(const std::int64_t i, double& sum) {
        const std::int64_t b = rp(i), e = rp(i + 1);
        if (e > b) {
          const double diagonal = double(i) * per_row;
          const double before = diagonal - double(col(b)), after = double(col(e - 1)) - diagonal;
          sum += 2 * (before > after ? before : after) + 1;
        }
      },
      total);
  Kokkos::parallel_reduce(
      "kspmv::csr_merge::nonempty_rows", Kokkos::RangePolicy<ExecSpace>(space, 0, a.nrows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& count) { count += rp(i + 1) > rp(i) ? 1 : 0; }, rows);
  return rows > 0 ? total / double(rows) : 0.0;
}

// The caller's CSR split into `panels` column panels, one after another:
// panel p's offsets at p * (nrows + 1) of row_ptr, indices into col_idx
// and values, where its entries follow those of the panels before it,
// each row's in their order. A thread a row counts its entries in each
// panel (binary searches of the panels' first columns in its sorted
// columns); one scan over all panels' counts gives every offset; a thread
// an entry (its row by a binary search of the offsets, so a hub is not one
// thread's walk) moves it to its slot.
template <class Scalar, class ExecSpace>
CsrDevice<Scalar, ExecSpace> csr_column_panels(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a,
                                               int panels) {
  CsrDevice<Scalar, ExecSpace> c;
  FormatArrays<ExecSpace> arrays(space);
  c.nrows = a.nrows;
  c.ncols = a.ncols;
  c.nnz = a.nnz();
  const int n = a.nrows;
  const std::int64_t ncols = a.ncols, stride = std::int64_t(n) + 1, nnz = a.nnz();
  c.row_ptr = arrays.template take<int>("kspmv::csr_merge::panel_row_ptr", stride * panels);
  c.col_idx = arrays.template take<int>("kspmv::csr::col_idx", nnz);
  c.values = arrays.template take<Scalar>("kspmv::csr::values", nnz);
  c.storage = arrays.kept();
  const auto rp = c.row_ptr;
  const auto col = c.col_idx;
  const auto val = c.values;
  const auto src_rp = a.row_ptr;
  const auto src_col = detail::read_only(a.col_idx);
  const auto src_val = detail::read_only(a.values);
  Kokkos::parallel_for(
      "kspmv::csr_merge::panel_counts", Kokkos::RangePolicy<ExecSpace>(space, 0, stride),
      KOKKOS_LAMBDA(const std::int64_t i) {
        if (i == n) {
          for (int p = 0; p < panels; ++p) rp(p * stride + n) = 0;
          return;
        }
        const std::int64_t end = src_rp(i + 1);
        std::int64_t begin = src_rp(i);
        for (int p = 0; p < panels; ++p) {
          // The first entry of the row at or past panel p + 1's first column.
          std::int64_t lo = begin, hi = end;
          if (p + 1 < panels) {
            const std::int64_t first = merge_panel_first_column(ncols, panels, p + 1);
            while (lo < hi) {
              const std::int64_t mid = lo + (hi - lo) / 2;
              if (src_col(mid) < first)
                lo = mid + 1;
              else
                hi = mid;
            }
          } else {
            lo = end;
          }
          rp(p * stride + i) = static_cast<int>(lo - begin);
          begin = lo;
        }
      });
  kspmv::detail::scan(
      "kspmv::csr_merge::panel_offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, stride * panels),
      KOKKOS_LAMBDA(const std::int64_t j, std::int64_t& run, const bool final) {
        const int count = rp(j);
        if (final) rp(j) = static_cast<int>(run);
        run += count;
      });
  Kokkos::parallel_for(
      "kspmv::csr_merge::panel_fill", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz), KOKKOS_LAMBDA(const std::int64_t k) {
        int lo = 0, hi = n;  // the row holding entry k: the first whose end passes k
        while (lo < hi) {
          const int mid = lo + (hi - lo) / 2;
          if (src_rp(mid + 1) <= k)
            lo = mid + 1;
          else
            hi = mid;
        }
        const int p = merge_panel_of_column(ncols, panels, src_col(k));
        std::int64_t first = src_rp(lo);  // the row's first entry in panel p
        for (int q = 0; q < p; ++q) first += rp(q * stride + lo + 1) - rp(q * stride + lo);
        const std::int64_t slot = rp(p * stride + lo) + (k - first);
        col(slot) = src_col(k);
        val(slot) = src_val(k);
      });
  return c;
}

}  // namespace detail

// The column panels to_csr_merge builds for `a` (merge_column_panels) on
// a device of figures `hw` (a host's have no L2 size: none): the rows'
// mean window of x (mean_row_window) is read on the device only where x
// outgrows the L2 and opt leaves the count to the rule (two reductions
// over the offsets and each row's first and last column). None by the
// rule where products are to take several columns
// (opt.expected_vectors > 1): each panel's pass reads and writes all k
// columns of Y, and a panel's slice of k columns of X outgrows L2 again;
// on an H100, 8 columns on graphs of 8M rows took 1.57-1.74x longer in 3
// panels than in one.
template <class Scalar, class ExecSpace>
int csr_merge_column_panels(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt,
                            const DeviceFigures& hw = device_figures<ExecSpace>()) {
  const std::int64_t l2 = opt.expected_vectors > 1 ? 0 : hw.l2_bytes;
  const bool x_outgrows_l2 = l2 > 0 && double(a.ncols) * sizeof(Scalar) > double(l2);
  const double window =
      opt.merge_column_panels == 0 && x_outgrows_l2 ? detail::mean_row_window(ExecSpace(), a) : -1.0;
  return merge_column_panels(a.ncols, sizeof(Scalar), l2, window, opt.merge_column_panels);
}

// On the device: the CSR arrays copied (offsets narrowed to 32 bits), or
// split into column panels; for each panel, each unit's start by a binary
// search on its diagonal (a thread a unit), the rows crossing units by a
// compaction.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrMergeDevice<Scalar, ExecSpace> to_csr_merge(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using D = CsrMergeDevice<Scalar, ExecSpace>;
  using range = Kokkos::pair<std::int64_t, std::int64_t>;
  ExecSpace space;
  D d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  d.kernel = opt.kernel;
  if (opt.merge_unit_items < 0)
    throw InvalidArgumentError("csr-merge: merge_unit_items must be >= 0 (0: auto), got " +
                               std::to_string(opt.merge_unit_items));
  if (opt.merge_column_panels < 0)
    throw InvalidArgumentError("csr-merge: merge_column_panels must be >= 0 (0: auto), got " +
                               std::to_string(opt.merge_column_panels));
  const std::int64_t items = std::int64_t(a.nrows) + a.nnz();
  if (a.nnz() > std::numeric_limits<int>::max() || items > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("csr-merge: " + std::to_string(a.nrows) + " rows + " + std::to_string(a.nnz()) +
                                " entries exceed its 32-bit merge-path coordinates (max 2^31-1)");
  const bool host = detail::is_host_space<ExecSpace>();
  const DeviceFigures hw = device_figures<ExecSpace>();
  d.panels = csr_merge_column_panels(a, opt, hw);
  const std::int64_t stride = std::int64_t(a.nrows) + 1;
  if (stride * d.panels > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("csr-merge: " + std::to_string(d.panels) + " column panels of " +
                                std::to_string(a.nrows) + " rows exceed its 32-bit offsets");
  // Each panel's first entry (the last: nnz), on the host.
  std::vector<std::int64_t> first(static_cast<std::size_t>(d.panels) + 1, 0);
  first.back() = d.nnz;
  detail::FormatArrays<ExecSpace> arrays(space);
  if (d.panels == 1) {
    d.csr = detail::build_csr<Scalar, ExecSpace, CsrKernel::Portable>(a, opt);
  } else {
    d.csr = detail::csr_column_panels(space, a, d.panels);
    detail::ScratchSet<ExecSpace> temps(space);
    const auto starts = temps.template take<int>("kspmv::csr_merge::panel_starts", d.panels);
    const auto rp = d.csr.row_ptr;
    Kokkos::parallel_for(
        "kspmv::csr_merge::panel_starts", Kokkos::RangePolicy<ExecSpace>(space, 0, d.panels),
        KOKKOS_LAMBDA(const int p) { starts(p) = rp(p * stride); });
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), starts);
    for (int p = 0; p < d.panels; ++p) first[static_cast<std::size_t>(p)] = h(p);
  }
  // One unit size for every panel, from the largest panel's path.
  std::int64_t most_items = 0;
  for (int p = 0; p < d.panels; ++p)
    most_items = std::max(most_items, std::int64_t(a.nrows) + first[p + 1] - first[p]);
  d.unit_items = merge_unit_items(most_items, hw.processors, !host, opt.merge_unit_items);
  // A host unit need not be longer than the path (a GPU's stays whole
  // items a thread of the tuned kernel).
  if (host) d.unit_items = std::min<std::int64_t>(d.unit_items, std::max<std::int64_t>(most_items, 1));
  const std::int64_t per_unit = d.unit_items;
  d.panel.resize(static_cast<std::size_t>(d.panels));
  int most_units = 0;
  for (int p = 0; p < d.panels; ++p) {
    auto& q = d.panel[static_cast<std::size_t>(p)];
    q.units = static_cast<int>(merge_units(std::int64_t(a.nrows) + first[p + 1] - first[p], per_unit));
    q.unit0 = d.units + p;  // units + 1 starts a panel
    d.units += q.units;
    most_units = std::max(most_units, q.units);
  }
  d.unit_row = arrays.template take<int>("kspmv::csr_merge::unit_row", d.units + d.panels);
  d.unit_nz = arrays.template take<int>("kspmv::csr_merge::unit_nz", d.units + d.panels);
  const int nrows = d.nrows;
  std::vector<detail::device_ints<ExecSpace>> spans(static_cast<std::size_t>(d.panels));
  for (int p = 0; p < d.panels; ++p) {
    const auto& q = d.panel[static_cast<std::size_t>(p)];
    const int base = static_cast<int>(first[p]), entries = static_cast<int>(first[p + 1] - first[p]);
    const std::int64_t panel_items = std::int64_t(nrows) + entries;
    const auto rp = Kokkos::subview(d.csr.row_ptr, range(p * stride, (p + 1) * stride));
    const auto unit_row = Kokkos::subview(d.unit_row, range(q.unit0, q.unit0 + q.units + 1));
    const auto unit_nz = Kokkos::subview(d.unit_nz, range(q.unit0, q.unit0 + q.units + 1));
    Kokkos::parallel_for(
        "kspmv::csr_merge::partition", Kokkos::RangePolicy<ExecSpace>(space, 0, q.units + 1),
        KOKKOS_LAMBDA(const int u) {
          const std::int64_t du = std::int64_t(u) * per_unit;
          const int diag = static_cast<int>(du < panel_items ? du : panel_items);
          const int i = detail::merge_path_search(diag, nrows, entries, base, [&](const int r) { return rp(r + 1); });
          unit_row(u) = i;
          unit_nz(u) = base + diag - i;
        });
    // Row i's items are i + its first entry (or its end, when it is
    // empty) to i + its end, counted from the panel's first entry.
    spans[static_cast<std::size_t>(p)] = detail::rows_where(
        space, nrows,
        KOKKOS_LAMBDA(const std::int64_t i) {
          return (i + rp(i) - base) / per_unit != (i + rp(i + 1) - base) / per_unit;
        },
        "kspmv::csr_merge::span_row", &arrays);
  }
  for (int p = 0; p < d.panels; ++p) {
    auto& q = d.panel[static_cast<std::size_t>(p)];
    q.nspan = static_cast<int>(spans[static_cast<std::size_t>(p)].extent(0));
    q.span0 = d.nspan;
    d.nspan += q.nspan;
  }
  if (d.panels == 1) {
    d.span_row = spans[0];
  } else {
    d.span_row = arrays.template take<int>("kspmv::csr_merge::span_row", d.nspan);
    for (int p = 0; p < d.panels; ++p) {
      const auto& q = d.panel[static_cast<std::size_t>(p)];
      Kokkos::deep_copy(space, Kokkos::subview(d.span_row, range(q.span0, q.span0 + q.nspan)),
                        spans[static_cast<std::size_t>(p)]);
    }
  }
  d.span_first = arrays.template take<int>("kspmv::csr_merge::span_first", d.nspan);
  d.span_last = arrays.template take<int>("kspmv::csr_merge::span_last", d.nspan);
  for (int p = 0; p < d.panels; ++p) {
    const auto P = detail::merge_panel(d, p);
    const std::int64_t base = first[p];
    const auto rp = P.row_ptr, span_row = P.span_row, span_first = P.span_first, span_last = P.span_last;
    Kokkos::parallel_for(
        "kspmv::csr_merge::span_units", Kokkos::RangePolicy<ExecSpace>(space, 0, P.nspan), KOKKOS_LAMBDA(const int s) {
          const int i = span_row(s);
          span_first(s) = static_cast<int>((std::int64_t(i) + rp(i) - base) / per_unit);
          span_last(s) = static_cast<int>((std::int64_t(i) + rp(i + 1) - base) / per_unit);
        });
  }
  const std::int64_t partials = std::int64_t(most_units) * detail::merge_partial_columns<ExecSpace>();
  d.head = arrays.template take_filled<Scalar>("kspmv::csr_merge::head", partials, Scalar(0));
  d.tail = arrays.template take_filled<Scalar>("kspmv::csr_merge::tail", partials, Scalar(0));
  d.storage = arrays.kept();
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
      for (int p = 0; p < A.panels; ++p) {
        const auto P = detail::merge_panel(A, p);
        cuda_tuned::csr_merge_spmv(space.cuda_stream(), detail::merge_units_of(A, P), P.nspan, P.span_row.data(),
                                   P.span_first.data(), P.span_last.data(), alpha, x.data(),
                                   detail::merge_panel_beta(p, beta), y.data());
      }
      return;
    }
  }
#endif
  for (int p = 0; p < A.panels; ++p) {
    const auto P = detail::merge_panel(A, p);
    detail::csr_merge_units_portable(space, alpha, A, P, x, detail::merge_panel_beta(p, beta), y);
    detail::csr_merge_fixup_portable(space, alpha, A, P, detail::merge_panel_beta(p, beta), y);
  }
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
      detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
        const auto b = cuda_tuned::column_block<Scalar>(X, Y, j0, cols);
        for (int p = 0; p < A.panels; ++p) {
          const auto P = detail::merge_panel(A, p);
          cuda_tuned::csr_merge_spmv_block(space.cuda_stream(), detail::merge_units_of(A, P), P.nspan,
                                           P.span_row.data(), P.span_first.data(), P.span_last.data(), alpha, b,
                                           detail::merge_panel_beta(p, beta));
        }
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
// In one column panel it keeps the CSR's entries in their order
// (matrix.hpp: has_csr_order); panels reorder them.
template <class Scalar, class ExecSpace>
bool keeps_csr_order(const CsrMergeDevice<Scalar, ExecSpace>*, const DeviceCsr<Scalar, ExecSpace>& a,
                     const ConvertOptions& opt) {
  return csr_merge_column_panels(a, opt) == 1;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const CsrMergeDevice<Scalar, ExecSpace>& f) {
  const bool tuned = on_cuda<ExecSpace>() && f.kernel == KernelPath::Auto;
  const int threads = is_host_space<ExecSpace>() ? 1 : tuned ? kMergeBlockThreads : default_team_size<ExecSpace>();
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"column_panels", std::to_string(f.panels)},
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
