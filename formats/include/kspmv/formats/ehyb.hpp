// EHYB (ehyb §3-4): the matrix's graph (A + A^T) is partitioned into
// K * P parts, P the device's processors (SMs) and K the smallest integer
// whose parts' x windows fit one team's shared memory (eqs. 1-2, figures
// read at run time). Rows (and columns alike) are renumbered part by part,
// rows inside a part by descending count of in-part entries (Algorithm 1).
//
//  - In-part entries form a sliced ELL (32-row slices = one warp, each its
//    own width, column-major inside the slice) whose column indices are
//    16-bit offsets into the part's x window (§3.4): 2 bytes instead of 4.
//  - The other entries ("extra rows", ER), with 32-bit columns: by default
//    inline, beside each slice and summed by the row's lane before it
//    writes y once. A slice keeps them column-major, padded to its widest
//    row, where at least ConvertOptions::ehyb_padded_fill (0.75) of those
//    slots hold entries (coalesced loads); elsewhere they are packed row
//    after row with a 16-bit count a row, and a lane finds its first
//    through a warp scan of the counts. Or, as the paper stores them
//    (ehyb_er, ErLayout), sliced separately over the rows that have any,
//    sorted by their count, with the map er_y back to y (yIdxER) and a
//    second pass adding into y. Matrix bytes a nonzero on 264 METIS parts,
//    all-padded inline -> per slice: bracket P1 10.96 -> 10.44,
//    pipe P2 12.11 -> 10.51 (CSR 12.28 and 12.14).
//
// The kernel loads a part's x window into team scratch once; the part's
// slices then read x from scratch only (inline ER entries read x from
// global memory in the same pass). Separate ER runs as a second launch
// that adds into y. Either way no two threads write one row, every call
// recomputes ER (the original skips it after the first call), and the
// result is the same bits on every run. Padding is marked (0xFFFF / -1)
// and skipped, so Inf or NaN in x never meets a padding zero.
// Rows inside a part keep Algorithm 1's order in both layouts. (Choosing,
// per part, among four orders the one that padded inline segments least
// bought less than packing the slices that would pad much.)
//
// x and y: in the caller's order by default (the window load gathers x
// through the permutation, y is written through it), or both in the
// internal order (OutputOrder::Internal) for solvers that stay permuted.
// Square matrices only: rows and columns are renumbered alike.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/config.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_info.hpp"
#include "kspmv/core/device_partition.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/partition.hpp"
#include "kspmv/core/permutation.hpp"
#include "kspmv/formats/csr_adaptive.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/ehyb_cuda.hpp"
#endif

namespace kspmv {

struct EhybReport {
  std::string partitioner;
  std::string partition_note;  // RowPartition::note: why, and what the other partitioner gave
  std::string built;           // how the layout was made: "kernels on <execution space>" or "host loops"
  int processors = 1;       // P
  int k = 1;                // K of eq. (1)
  int parts = 0;            // K * P (fewer for tiny matrices: >= 32 rows a part)
  int window_rows = 0;      // the largest part: the x window of eq. (2)
  int parts_per_sm = 1;     // parts an SM holds at once (the window's share of its scratch)
  std::int64_t shared_bytes = 0;  // the scratch a part's window may take
  std::int64_t ell_nnz = 0, er_nnz = 0, ell_slots = 0, er_slots = 0;
  std::int64_t er_rows = 0;
  std::int64_t er_padded_slices = 0;  // inline: slices whose extra rows stay column-major (ehyb_padded_fill)
  std::int64_t long_rows = 0, long_nnz = 0;
  double er_inline_bytes = 0, er_separate_bytes = 0;  // the extra rows' bytes in each layout
  double partition_seconds = 0, reorder_seconds = 0;
  double bytes_per_nonzero = 0;      // matrix bytes moved per nonzero
  double csr_bytes_per_nonzero = 0;  // the same for CSR with 32-bit indices
};

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct EhybDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "ehyb";
  static constexpr std::uint16_t padding = 0xFFFF;

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  OutputOrder order = OutputOrder::Caller;
  Kokkos::View<int*, memory_space> new_to_old;  // internal row -> caller row
  Kokkos::View<int*, memory_space> part_start;  // size parts + 1, internal rows
  Kokkos::View<int*, memory_space> part_slice;  // first slice of each part, size parts + 1
  Kokkos::View<int*, memory_space> slice_width, slice_offset;
  Kokkos::View<std::uint16_t*, memory_space> ell_col;  // offset in the part's window
  Kokkos::View<Scalar*, memory_space> ell_val;
  // Extra rows. Inline: each ELL slice's entries in [er_start(s),
  // er_start(s + 1)) of er_col / er_val, column-major and padded to
  // er_width(s) where that is above 0, else packed row after row, the
  // counts in er_count (one per internal row); no er_y, no second pass.
  // Separate: er_slices padded slices (er_width, er_offset,
  // er_col) over the ER rows, er_y their rows.
  bool er_inline = true;
  int er_slices = 0;
  Kokkos::View<int*, memory_space> er_start;
  Kokkos::View<std::uint16_t*, memory_space> er_count;
  Kokkos::View<int*, memory_space> er_width, er_offset, er_col, er_y;
  Kokkos::View<int*, memory_space> er_row_of;  // separate: each internal row's ER row, -1 for none
  Kokkos::View<Scalar*, memory_space> er_val;
  // Bit k (word k / 32, bit k % 32) of the CSR it was built from: entry k
  // went to an extra slot (1) or to its slice (0). What its slot walk
  // reads: a bit a nonzero.
  Kokkos::View<std::uint32_t*, memory_space> extra_bits;
  // Long rows (more than ehyb_long_row entries), whole, as CSR sorted by
  // length with adaptive lanes per row (a warp up to a block): a lane of
  // the sliced parts would walk them alone.
  std::int64_t long_row = 0;  // ConvertOptions::ehyb_long_row it was built with
  std::int64_t longest_sliced = 0;  // the longest row that is not long
  std::int64_t rows_in_order = 0;   // positions whose row follows the previous position's in the CSR
  std::vector<TprRange> long_host_ranges;
  int long_blocks = 0;
  Kokkos::View<int*, memory_space> long_ranges, long_row_ptr, long_col, long_y;
  Kokkos::View<Scalar*, memory_space> long_val;
  EhybReport report;
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;
  detail::KeptBlocks<memory_space> storage;  // what the device build's views are taken from (FormatArrays)

  std::size_t storage_bytes() const {
    return (new_to_old.span() + part_start.span() + part_slice.span() + slice_width.span() + slice_offset.span() +
            er_start.span() + er_width.span() + er_offset.span() + er_col.span() + er_y.span() + er_row_of.span() +
            extra_bits.span()) *
               sizeof(int) +
           (long_ranges.span() + long_row_ptr.span() + long_col.span() + long_y.span()) * sizeof(int) +
           (ell_col.span() + er_count.span()) * sizeof(std::uint16_t) + (ell_val.span() + er_val.span() + long_val.span()) * sizeof(Scalar);
  }
};

namespace detail {
// Sliced ELL of `rows` (their entries given by `entries(row, emit)`), 32
// rows a slice, each slice as wide as its longest row, column-major.
template <class Index, class Scalar, class Rows, class Entries>
void build_slices(const Rows& rows, const Entries& entries, Index pad, std::vector<int>& width,
                  std::vector<int>& offset, std::vector<Index>& col, std::vector<Scalar>& val, const char* what) {
  const std::size_t n = rows.size();
  std::int64_t total = offset.empty() ? 0 : offset.back();
  if (offset.empty()) offset.push_back(0);
  std::vector<std::pair<Index, Scalar>> e;
  for (std::size_t s = 0; s < n; s += 32) {
    int w = 0;
    for (std::size_t i = s; i < std::min(n, s + 32); ++i) w = std::max(w, static_cast<int>(rows[i].second));
    const std::int64_t base = total;
    total += static_cast<std::int64_t>(w) * 32;
    if (total > std::numeric_limits<int>::max())
      throw FormatCannotHoldError(std::string("ehyb: the ") + what + " part needs more than 2^31 slots");
    width.push_back(w);
    offset.push_back(static_cast<int>(total));
    col.resize(static_cast<std::size_t>(total), pad);
    val.resize(static_cast<std::size_t>(total), Scalar(0));
    for (std::size_t i = s; i < std::min(n, s + 32); ++i) {
      e.clear();
      entries(rows[i].first, e);
      for (std::size_t k = 0; k < e.size(); ++k) {
        const std::size_t pos = static_cast<std::size_t>(base) + k * 32 + (i - s);
        col[pos] = e[k].first;
        val[pos] = e[k].second;
      }
    }
  }
}
}  // namespace detail

// Whether the extra rows go inline (ErLayout): Auto takes inline up to
// kEhybInlineMaxNnz nonzeros where every row's extra entries fit its
// 16-bit count; Inline asked for past that count is an error.
inline bool ehyb_er_inline(ErLayout want, std::int64_t most_extra_in_a_row, std::int64_t nnz) {
  const bool countable = most_extra_in_a_row <= kEhybInlineMaxRowExtra;
  if (want == ErLayout::Inline && !countable)
    throw FormatCannotHoldError("ehyb: inline extra rows count each row's entries outside its part in 16 bits, so at "
                                "most " + std::to_string(kEhybInlineMaxRowExtra) + "; a row here has " +
                                std::to_string(most_extra_in_a_row) +
                                " (use ehyb_er = separate or auto, or a smaller ehyb_long_row)");
  return want == ErLayout::Inline || (want == ErLayout::Auto && countable && nnz <= kEhybInlineMaxNnz);
}

namespace detail {
// The x window a part may cache and the first K of eq. (1), from the
// device's figures and the options (checked: InvalidArgumentError); fills
// the report's processors, parts_per_sm and shared_bytes. Both builds.
struct EhybWindow {
  std::int64_t cap = 0;  // rows a part's window holds
  std::int64_t k = 1;
};
template <class Scalar, class ExecSpace>
EhybWindow ehyb_window(std::int64_t n, const ConvertOptions& opt, EhybReport& rep) {
  constexpr int tau = static_cast<int>(sizeof(Scalar));
  // Device figures: the tuned CUDA kernel may opt in to all of an SM's
  // shared memory, the portable one has Kokkos' team scratch limit.
  const DeviceFigures fig = device_figures<ExecSpace>();
#if KSPMV_ENABLE_CUDA
  const bool tuned = std::is_same<ExecSpace, Kokkos::Cuda>::value && opt.kernel == KernelPath::Auto;
#else
  const bool tuned = false;
#endif
  const std::int64_t limit = tuned ? fig.shared_optin - 64 : fig.team_scratch_max - 64;
  if (!(opt.ehyb_padded_fill >= 0 && opt.ehyb_padded_fill <= 2))
    throw InvalidArgumentError("ehyb: ehyb_padded_fill = " + std::to_string(opt.ehyb_padded_fill) +
                               " is outside [0, 2]");
  check_partition_budget(opt.partition_budget_seconds, "ehyb");
  if (opt.ehyb_shared_bytes < 0 || opt.ehyb_shared_bytes > limit)
    throw InvalidArgumentError("ehyb: ehyb_shared_bytes = " + std::to_string(opt.ehyb_shared_bytes) +
                               " is outside [0, " + std::to_string(limit) + "], the scratch one team may use here");
  // Default window: the scratch one team may use, divided among the parts
  // that should share an SM (ehyb_min_parts_per_sm) so their blocks are
  // resident together.
  const int per_sm = detail::is_host_space<ExecSpace>() ? 1 : std::max(1, opt.ehyb_min_parts_per_sm);
  rep.parts_per_sm = per_sm;
  rep.shared_bytes = opt.ehyb_shared_bytes > 0 ? opt.ehyb_shared_bytes : limit / per_sm;
  const std::int64_t cap = std::min<std::int64_t>(rep.shared_bytes / tau, 65535);  // 0xFFFF marks padding
  if (cap < 32) throw InvalidArgumentError("ehyb: the x window must hold at least 32 values");
  rep.processors = std::max(1, fig.processors);
  // Eq. (1): the smallest K with n * tau / (K * P) below the scratch size,
  // with METIS' 3% imbalance allowed for; no part smaller than a slice.
  // On the device K is at least ehyb_min_parts_per_sm. The default, 1, is
  // the paper's K: one part per SM, whose block of 1024 threads has 64
  // registers a lane and walks its slots eight a step. On the H100 that
  // measured 1.02-1.12x over two parts of 1024 threads at 32 registers
  // (which had beaten four of 512 by 2-7% and eight of 256). The larger
  // windows keep more entries in-part too.
  EhybWindow w;
  w.cap = cap;
  std::int64_t K = std::max<std::int64_t>(1, (n * 103 / 100 + cap * rep.processors - 1) / (cap * rep.processors));
  w.k = std::max<std::int64_t>(K, per_sm);
  return w;
}
// Eq. (1)'s parts: K * P of them (at most one a slice), K raised until
// `partition(parts)`, which returns its largest part's rows, fits the
// window (a partitioner's imbalance can pass it); the report's k and
// window_rows. Both builds.
template <class Partition>
void ehyb_parts_in_window(const EhybWindow& w, std::int64_t n, EhybReport& rep, const Partition& partition) {
  const std::int64_t most_parts = std::max<std::int64_t>(1, (n + 31) / 32);
  for (std::int64_t K = w.k, attempt = 0;; ++K, ++attempt) {
    const std::int64_t parts = std::min(K * rep.processors, most_parts);
    if (parts > std::numeric_limits<int>::max()) throw FormatCannotHoldError("ehyb: too many parts");
    const std::int64_t biggest = partition(static_cast<int>(parts));
    if (biggest <= w.cap) {
      rep.k = static_cast<int>(K);
      rep.window_rows = static_cast<int>(biggest);
      return;
    }
    if (attempt == 8)
      throw FormatCannotHoldError("ehyb: the partitioner keeps parts larger than the " + std::to_string(w.cap) +
                                  "-value window");
  }
}
// The parts of a host partitioner (opt.partitioner: METIS, BFS, RCM,
// contiguous, or Auto's choice on a host CSR), as many as the window
// needs, within one budget for every attempt; the report gets who made
// them, why, and how long it took.
template <class Scalar>
RowPartition ehyb_host_partition(const HostCsr<Scalar>& a, const EhybWindow& window, const ConvertOptions& opt,
                                 EhybReport& rep) {
  RowPartition part;
  Kokkos::Timer partitioning;
  ehyb_parts_in_window(window, a.nrows, rep, [&](int parts) {
    const double budget = opt.partition_budget_seconds > 0
                              ? std::max(1e-3, opt.partition_budget_seconds - partitioning.seconds())
                              : 0.0;
    part = partition_rows_into(a, parts, opt.partitioner, budget, opt.progress);
    std::int64_t biggest = 0;
    for (std::size_t q = 0; q + 1 < part.part_start.size(); ++q)
      biggest = std::max<std::int64_t>(biggest, part.part_start[q + 1] - part.part_start[q]);
    return biggest;
  });
  rep.parts = static_cast<int>(part.part_start.size()) - 1;
  rep.partitioner = part.method;
  rep.partition_note = part.note;
  rep.partition_seconds = partitioning.seconds();
  return part;
}

// What both builds start with: the matrix's shape, the options it keeps,
// and the window (checked: square, the window's options).
template <class Scalar, class ExecSpace>
EhybWindow ehyb_start(EhybDevice<Scalar, ExecSpace>& d, std::int64_t nrows, std::int64_t ncols, std::int64_t nnz,
                      const ConvertOptions& opt) {
  require_square(nrows, ncols, "ehyb");
  d.nrows = static_cast<ordinal_t>(nrows);
  d.ncols = static_cast<ordinal_t>(ncols);
  d.nnz = nnz;
  d.order = opt.output_order;
  d.kernel = opt.kernel;
  d.long_row = opt.ehyb_long_row;
  return ehyb_window<Scalar, ExecSpace>(nrows, opt, d.report);
}
}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EhybDevice<Scalar, ExecSpace> to_ehyb(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using D = EhybDevice<Scalar, ExecSpace>;
  using M = typename D::memory_space;
  constexpr int tau = static_cast<int>(sizeof(Scalar));
  D d;
  const detail::EhybWindow window = detail::ehyb_start(d, a.nrows, a.ncols, a.nnz(), opt);
  EhybReport& rep = d.report;
  const std::int64_t n = a.nrows;
  rep.built = "host loops";
  const RowPartition part = detail::ehyb_host_partition(a, window, opt, rep);
  Kokkos::Timer reorder;
  if (opt.progress) opt.progress("reordering", 0.0);
  // Part of each caller row, and in-part entry counts.
  std::vector<int> part_of(static_cast<std::size_t>(n));
  for (int q = 0; q < rep.parts; ++q)
    for (ordinal_t r = part.part_start[q]; r < part.part_start[q + 1]; ++r) part_of[part.new_to_old[r]] = q;
  std::vector<std::int64_t> in_part(static_cast<std::size_t>(n), 0);
  std::vector<char> is_long(static_cast<std::size_t>(n), 0);
  // Each extra entry's bit (the slot walk's), set where it is counted.
  std::vector<std::uint32_t> extra_bits(static_cast<std::size_t>((a.nnz() + 31) / 32), 0u);
  for (ordinal_t i = 0; i < n; ++i) {
    if (opt.ehyb_long_row > 0 && a.row_length(i) > opt.ehyb_long_row) {
      is_long[i] = 1;  // stays in its part with no sliced entries
      continue;
    }
    d.longest_sliced = std::max<std::int64_t>(d.longest_sliced, a.row_length(i));
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (part_of[a.col_idx[k]] == part_of[i])
        ++in_part[i];
      else
        extra_bits[k / 32] |= std::uint32_t(1) << (k % 32);
    }
  }
  // Inside each part: descending in-part count (Algorithm 1), then
  // descending count outside the part; ties keep the part's order. Inline
  // extra rows that would pad much are packed, so this order, which pads
  // the sliced ELL least, serves both layouts.
  auto outside = [&](ordinal_t o) { return is_long[o] ? std::int64_t(0) : a.row_length(o) - in_part[o]; };
  std::vector<ordinal_t> new_to_old = part.new_to_old;
  for (int q = 0; q < rep.parts; ++q)
    std::stable_sort(new_to_old.data() + part.part_start[q], new_to_old.data() + part.part_start[q + 1],
                     [&](ordinal_t u, ordinal_t v) {
                       return std::make_pair(in_part[u], outside(u)) > std::make_pair(in_part[v], outside(v));
                     });
  // ER rows: those with entries outside their part, most such entries
  // first (the order the paper's separate layout slices them in).
  std::vector<std::pair<ordinal_t, std::int64_t>> er_rows;
  std::int64_t er_nnz = 0;
  for (ordinal_t r = 0; r < n; ++r) {
    const ordinal_t o = new_to_old[r];
    if (outside(o) > 0) er_rows.emplace_back(o, outside(o));
    er_nnz += outside(o);
  }
  std::stable_sort(er_rows.begin(), er_rows.end(), [](const auto& u, const auto& v) { return u.second > v.second; });
  // Extra-row layout. Inline (er_inline_bytes: all slices packed) needs a
  // 16-bit count a row. Separate pads each ER slice to its longest row and
  // adds er_y and a second pass that reads and writes y again.
  {
    std::int64_t separate_slots = 0, slices = 0;
    for (std::size_t s = 0; s < er_rows.size(); s += 32) separate_slots += 32 * er_rows[s].second;
    for (int q = 0; q < rep.parts; ++q) slices += (part.part_start[q + 1] - part.part_start[q] + 31) / 32;
    rep.er_inline_bytes = double(er_nnz) * (tau + 4) + 4.0 * double(slices + 1) + 2.0 * double(n);
    rep.er_separate_bytes = double(separate_slots) * (tau + 4) + double(er_rows.size()) * (4 + 2 * tau);
    d.er_inline = ehyb_er_inline(opt.ehyb_er, er_rows.empty() ? 0 : er_rows.front().second, a.nnz());
  }
  const auto old_to_new = inverse_permutation(new_to_old);
  for (ordinal_t p = 1; p < n; ++p) d.rows_in_order += new_to_old[p] == new_to_old[p - 1] + 1;
  const bool caller = d.order == OutputOrder::Caller;
  // Sliced ELL of the in-part entries, part by part; inline ER entries
  // beside each slice, column-major or packed (ehyb_padded_fill).
  std::vector<int> width, offset, part_slice(1, 0);
  std::vector<std::uint16_t> ecol, er_count;
  std::vector<Scalar> eval;
  std::vector<int> er_width, er_offset, er_col, er_y, er_start;
  std::vector<Scalar> er_val;
  auto er_entries = [&](ordinal_t orow, std::vector<std::pair<int, Scalar>>& e) {
    if (is_long[orow]) return;
    for (offset_t k = a.row_ptr[orow]; k < a.row_ptr[orow + 1]; ++k)
      if (part_of[a.col_idx[k]] != part_of[orow])
        e.emplace_back(caller ? a.col_idx[k] : old_to_new[a.col_idx[k]], a.values[k]);
  };
  for (int q = 0; q < rep.parts; ++q) {
    const ordinal_t ps = part.part_start[q], pe = part.part_start[q + 1];
    std::vector<std::pair<ordinal_t, std::int64_t>> rows;
    for (ordinal_t r = ps; r < pe; ++r) rows.emplace_back(new_to_old[r], in_part[new_to_old[r]]);
    if (d.er_inline) {
      // A slice whose rows' outside counts are even keeps them column-major
      // and padded to its widest row (coalesced, no count scan); the
      // others are packed row after row.
      // er_start doubles as build_slices' offsets: its last entry is
      // always er_col's size.
      if (er_start.empty()) er_start.push_back(0);
      std::vector<std::pair<int, Scalar>> e;
      std::vector<std::pair<ordinal_t, std::int64_t>> slice;
      for (ordinal_t r0 = ps; r0 < pe; r0 += 32) {
        slice.clear();
        std::int64_t widest = 0, sum = 0;
        for (ordinal_t r = r0; r < std::min<ordinal_t>(pe, r0 + 32); ++r) {
          slice.emplace_back(new_to_old[r], outside(new_to_old[r]));
          widest = std::max(widest, slice.back().second);
          sum += slice.back().second;
          er_count.push_back(static_cast<std::uint16_t>(slice.back().second));  // ehyb_er_inline checked the bound
        }
        const bool padded = widest > 0 && double(sum) >= opt.ehyb_padded_fill * 32.0 * double(widest);
        rep.er_padded_slices += padded;
        if (padded) {
          detail::build_slices<int, Scalar>(slice, er_entries, -1, er_width, er_start, er_col, er_val, "extra-rows");
          continue;
        }
        for (const auto& row : slice) {
          e.clear();
          er_entries(row.first, e);
          for (const auto& [c, v] : e) {
            er_col.push_back(c);
            er_val.push_back(v);
          }
        }
        if (er_col.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
          throw FormatCannotHoldError("ehyb: the extra-rows part holds more than 2^31 slots");
        er_width.push_back(0);
        er_start.push_back(static_cast<int>(er_col.size()));
      }
    }
    detail::build_slices<std::uint16_t, Scalar>(
        rows,
        [&](ordinal_t orow, std::vector<std::pair<std::uint16_t, Scalar>>& e) {
          if (is_long[orow]) return;
          for (offset_t k = a.row_ptr[orow]; k < a.row_ptr[orow + 1]; ++k)
            if (part_of[a.col_idx[k]] == q)
              e.emplace_back(static_cast<std::uint16_t>(old_to_new[a.col_idx[k]] - ps), a.values[k]);
        },
        D::padding, width, offset, ecol, eval, "sliced-ELL");
    part_slice.push_back(static_cast<int>(width.size()));
    if (opt.progress && (q & 255) == 0) opt.progress("reordering", 0.8 * q / rep.parts);
  }
  // Separate ER (the paper's layout): the ER rows sliced on their own, with
  // er_y.
  if (!d.er_inline) {
    detail::build_slices<int, Scalar>(er_rows, er_entries, -1, er_width, er_offset, er_col, er_val, "extra-rows");
    for (const auto& [o, c] : er_rows) er_y.push_back(caller ? o : old_to_new[o]);
  }
  // The slot walk's: each separate ER row's index.
  std::vector<int> er_row_of;
  if (!d.er_inline) {
    er_row_of.assign(static_cast<std::size_t>(n), -1);
    for (std::size_t j = 0; j < er_rows.size(); ++j) er_row_of[old_to_new[er_rows[j].first]] = static_cast<int>(j);
  }
  // Long rows, shortest first (TPR ranges need ascending lengths).
  std::vector<ordinal_t> longs;
  for (ordinal_t i = 0; i < n; ++i)
    if (is_long[i]) longs.push_back(i);
  std::stable_sort(longs.begin(), longs.end(), [&](ordinal_t u, ordinal_t v) { return a.row_length(u) < a.row_length(v); });
  std::vector<std::int64_t> lptr(1, 0), llen;
  std::vector<int> lcol, ly;
  std::vector<Scalar> lval;
  for (ordinal_t o : longs) {
    for (offset_t k = a.row_ptr[o]; k < a.row_ptr[o + 1]; ++k) {
      lcol.push_back(caller ? a.col_idx[k] : old_to_new[a.col_idx[k]]);
      lval.push_back(a.values[k]);
    }
    lptr.push_back(static_cast<std::int64_t>(lcol.size()));
    llen.push_back(a.row_length(o));
    ly.push_back(caller ? o : old_to_new[o]);
  }
  d.long_host_ranges = tpr_ranges(llen, 256, 32);
  d.long_blocks = d.long_host_ranges.empty() ? 0 : d.long_host_ranges.back().first_block + d.long_host_ranges.back().blocks;
  rep.long_rows = static_cast<std::int64_t>(longs.size());
  rep.long_nnz = static_cast<std::int64_t>(lcol.size());
  if (opt.progress) opt.progress("reordering", 1.0);
  // Report.
  rep.ell_slots = static_cast<std::int64_t>(ecol.size());
  rep.er_slots = static_cast<std::int64_t>(er_col.size());
  rep.er_rows = static_cast<std::int64_t>(er_rows.size());
  rep.er_nnz = er_nnz;
  rep.ell_nnz = a.nnz() - rep.er_nnz - rep.long_nnz;
  if (a.nnz() > 0) {
    rep.bytes_per_nonzero = (double(rep.ell_slots) * (tau + 2) + double(rep.er_slots + rep.long_nnz) * (tau + 4) +
                             4.0 * double(er_y.size() + width.size() + er_width.size() + er_start.size()) + 2.0 * double(er_count.size())) /
                            double(a.nnz());
    rep.csr_bytes_per_nonzero = (double(a.nnz()) * (tau + 4) + 4.0 * double(n + 1)) / double(a.nnz());
  }
  // Upload.
  d.er_slices = d.er_inline ? 0 : static_cast<int>(er_width.size());
  d.new_to_old = detail::upload<int, M>(new_to_old, "kspmv::ehyb::new_to_old");
  d.part_start = detail::upload<int, M>(part.part_start, "kspmv::ehyb::part_start");
  d.part_slice = detail::upload<int, M>(part_slice, "kspmv::ehyb::part_slice");
  d.slice_width = detail::upload<int, M>(width, "kspmv::ehyb::slice_width");
  d.slice_offset = detail::upload<int, M>(offset.empty() ? std::vector<int>{0} : offset, "kspmv::ehyb::slice_offset");
  d.ell_col = detail::upload<std::uint16_t, M>(ecol, "kspmv::ehyb::ell_col");
  d.ell_val = detail::upload<Scalar, M>(eval, "kspmv::ehyb::ell_val");
  d.er_width = detail::upload<int, M>(er_width, "kspmv::ehyb::er_width");
  d.er_offset = detail::upload<int, M>(er_offset.empty() ? std::vector<int>{0} : er_offset, "kspmv::ehyb::er_offset");
  d.er_col = detail::upload<int, M>(er_col, "kspmv::ehyb::er_col");
  d.er_start = detail::upload<int, M>(er_start, "kspmv::ehyb::er_start");
  d.er_count = detail::upload<std::uint16_t, M>(er_count, "kspmv::ehyb::er_count");
  d.er_val = detail::upload<Scalar, M>(er_val, "kspmv::ehyb::er_val");
  d.er_y = detail::upload<int, M>(er_y, "kspmv::ehyb::er_y");
  d.er_row_of = detail::upload<int, M>(er_row_of, "kspmv::ehyb::er_row_of");
  d.extra_bits = detail::upload<std::uint32_t, M>(extra_bits, "kspmv::ehyb::extra_bits");
  d.long_ranges = detail::upload_ranges<M>(d.long_host_ranges, "kspmv::ehyb::long_ranges");
  d.long_row_ptr = detail::upload<int, M>(lptr, "kspmv::ehyb::long_row_ptr");
  d.long_col = detail::upload<int, M>(lcol, "kspmv::ehyb::long_col");
  d.long_val = detail::upload<Scalar, M>(lval, "kspmv::ehyb::long_val");
  d.long_y = detail::upload<int, M>(ly, "kspmv::ehyb::long_y");
  ExecSpace().fence();
  rep.reorder_seconds = reorder.seconds();
  d.conversion_seconds = timer.seconds();
  return d;
}

namespace detail {
// offset(s) = the slots of the 32-row slices before s, each 32 x width(s)
// (offset has one more entry: the total, which it returns).
template <class ExecSpace, class Ints>
std::int64_t ehyb_slice_offsets(const ExecSpace& space, const char* label, const Ints& width, const Ints& offset,
                                ScratchSet<ExecSpace>& temps) {
  const std::int64_t slices = width.extent(0);
  std::int64_t total = 0;
  kspmv::detail::scan(
      label, Kokkos::RangePolicy<ExecSpace>(space, 0, slices),
      KOKKOS_LAMBDA(const std::int64_t s, std::int64_t& sum, const bool final) {
        if (final) offset(s) = static_cast<int>(sum);
        sum += 32 * std::int64_t(width(s));
        if (final && s + 1 == slices) offset(slices) = static_cast<int>(sum);
      },
      total, &temps);
  if (slices == 0) Kokkos::deep_copy(space, offset, 0);
  return total;
}
}  // namespace detail

// EHYB built on the device from a CSR there: the parts by cell_partition
// (device_partition.hpp; the default partitioner, or Partitioner::Cells),
// then each row's in-part and extra counts, the rows sorted into Algorithm
// 1's order (part, in-part count descending, extra count descending, row)
// by stable radix passes, the slices' widths and offsets by scans, and one
// thread a row filling its slots, inline extra rows or the separate
// layout's. The host sees the partition's cell graph, a few scalars and
// the long rows' lengths. The other partitioners (METIS, BFS, RCM,
// contiguous) are host algorithms: they partition a copy of the CSR
// there, and the rest is built here from their parts. Only an empty
// matrix, and a host space without a radix sort where the sort's keys
// would not fit 64 bits, take the host build above.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EhybDevice<Scalar, ExecSpace> to_ehyb(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  using D = EhybDevice<Scalar, ExecSpace>;
  using M = typename D::memory_space;
  using ints = Kokkos::View<int*, M>;
  constexpr int tau = static_cast<int>(sizeof(Scalar));
  detail::require_square(a.nrows, a.ncols, "ehyb");
  const bool cells = opt.partitioner == Partitioner::Auto || opt.partitioner == Partitioner::Cells;
  if (a.nrows == 0) return to_ehyb<Scalar, ExecSpace>(download_csr(a), opt);
  Kokkos::Timer timer;
  ExecSpace space;
  D d;
  const detail::EhybWindow window = detail::ehyb_start(d, a.nrows, a.ncols, a.nnz(), opt);
  EhybReport& rep = d.report;
  rep.built = std::string("kernels on ") + ExecSpace::name();
  const std::int64_t n = a.nrows;
  detail::ProfilingPhases phase;
  phase.enter("kspmv::ehyb::partition");
  DevicePartition<ExecSpace> part;
  if (cells) {
    if (opt.progress) opt.progress("partitioning (cells, on the device)", 0.0);
    detail::ehyb_parts_in_window(window, n, rep, [&](int parts) {
      part = cell_partition(space, a.row_ptr, a.col_idx, n, parts, window.cap);
      return *std::max_element(part.part_rows.begin(), part.part_rows.end());
    });
    rep.partitioner = "cells";
    rep.partition_note = part.note();
    rep.partition_seconds = part.seconds;
  } else {
    // A host partitioner reads a copy of the CSR; only its parts come
    // back, and the format is built here as the cells' is.
    const RowPartition host = detail::ehyb_host_partition(download_csr(a), window, opt, rep);
    part = device_partition_of<ExecSpace>(space, host, "kspmv::ehyb::part_of");
  }
  const int nparts = static_cast<int>(part.part_rows.size());
  rep.parts = nparts;
  Kokkos::Timer reorder;
  if (opt.progress) opt.progress("reordering (on the device)", 0.0);
  phase.enter("kspmv::ehyb::order");
  const auto part_of = part.part_of;
  const auto row_ptr = a.row_ptr;
  const auto col_idx = detail::read_only(a.col_idx);
  const auto values = detail::read_only(a.values);
  const std::int64_t long_row = opt.ehyb_long_row;
  // Each row's entries in its part and outside it (none for a long row,
  // whose entries all go to the long-row CSR).
  detail::ScratchSet<ExecSpace> temps(space);
  detail::FormatArrays<ExecSpace> arrays(space);
  auto in_count = temps.template take<int>("kspmv::ehyb::in_part", n);
  auto out_count = temps.template take<int>("kspmv::ehyb::outside", n);
  std::int64_t most_in = 0, most_out = 0, er_nnz = 0, rows_flagged = 0;
  Kokkos::parallel_reduce(
      "kspmv::ehyb::counts", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& mi) {
        const std::int64_t len = row_ptr(i + 1) - row_ptr(i);
        std::int64_t in = 0;
        if (long_row > 0 && len > long_row) {
          in_count(i) = -1;  // long: none sliced
          out_count(i) = 0;
          return;
        }
        for (auto k = row_ptr(i); k < row_ptr(i + 1); ++k) in += part_of(col_idx(k)) == part_of(i) ? 1 : 0;
        in_count(i) = static_cast<int>(in);
        out_count(i) = static_cast<int>(len - in);
        mi = in > mi ? in : mi;
      },
      Kokkos::Max<std::int64_t>(most_in));
  Kokkos::parallel_reduce(
      "kspmv::ehyb::most_outside", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& mo) { mo = out_count(i) > mo ? out_count(i) : mo; },
      Kokkos::Max<std::int64_t>(most_out));
  Kokkos::parallel_reduce(
      "kspmv::ehyb::longest_sliced", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& most) {
        const std::int64_t len = in_count(i) + out_count(i);
        most = len > most ? len : most;
      },
      Kokkos::Max<std::int64_t>(d.longest_sliced));
  Kokkos::parallel_reduce(
      "kspmv::ehyb::outside", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& s) { s += out_count(i); }, er_nnz);
  // Rows with extra entries (high 32 bits) and long rows (low): one sum.
  Kokkos::parallel_reduce(
      "kspmv::ehyb::flagged_rows", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& s) {
        s += (out_count(i) > 0 ? std::int64_t(1) << 32 : 0) + (in_count(i) < 0 ? 1 : 0);
      },
      rows_flagged);
  const std::int64_t er_rows = rows_flagged >> 32, long_rows = rows_flagged & 0xFFFFFFFF;
  most_in = std::max<std::int64_t>(most_in, 0);  // every row long: the max of nothing
  Kokkos::parallel_for(
      "kspmv::ehyb::long_in_part", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { in_count(i) = in_count(i) < 0 ? 0 : in_count(i); });
  d.er_inline = ehyb_er_inline(opt.ehyb_er, most_out, a.nnz());
  const bool inline_er = d.er_inline;
  // Algorithm 1's order: by part, in-part count descending, extra count
  // descending, then the order the rows came in: the caller's for the
  // cells, the partitioner's for a host partitioner (its rows part by part,
  // as the host build keeps them).
  const ints new_to_old = arrays.template take<int>("kspmv::ehyb::new_to_old", n);
  const auto first_order = part.order;
  const bool by_partitioner = first_order.extent(0) == static_cast<std::size_t>(n);
  if constexpr (detail::has_radix_sort<ExecSpace>()) {
    // Each pass sorts by one key, stably: rows keep the order of the
    // passes before it.
    auto pairs = detail::take_radix_pairs(temps, n, "kspmv::ehyb::key", "kspmv::ehyb::row");
    {
      const auto key = pairs.key;
      const auto row = pairs.value;
      Kokkos::parallel_for(
          "kspmv::ehyb::key_outside", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t t) {
            const int i = by_partitioner ? first_order(t) : static_cast<int>(t);
            row(t) = i;
            key(t) = static_cast<unsigned>(most_out - out_count(i));
          });
      pairs.sort(space, detail::key_bits_below(most_out + 1), &temps);
    }
    {
      const auto key = pairs.key;
      const auto row = pairs.value;
      Kokkos::parallel_for(
          "kspmv::ehyb::key_in_part", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t p) {
            key(p) = static_cast<unsigned>(most_in - in_count(row(p)));
          });
      pairs.sort(space, detail::key_bits_below(most_in + 1), &temps);
    }
    {
      const auto key = pairs.key;
      const auto row = pairs.value;
      Kokkos::parallel_for(
          "kspmv::ehyb::key_part", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
          KOKKOS_LAMBDA(const std::int64_t p) { key(p) = static_cast<unsigned>(part_of(row(p))); });
      pairs.sort(space, detail::key_bits_below(nparts), &temps);
    }
    Kokkos::deep_copy(space, new_to_old, pairs.value);
  } else {
    // One sort of unique 64-bit keys where they fit.
    const double range = double(nparts) * double(most_in + 1) * double(most_out + 1) * double(n);
    if (!(range < 9.2e18)) return to_ehyb<Scalar, ExecSpace>(download_csr(a), opt);
    auto key = temps.template take<std::uint64_t>("kspmv::ehyb::key", n);
    Kokkos::parallel_for(
        "kspmv::ehyb::keys", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t t) {
          const int i = by_partitioner ? first_order(t) : static_cast<int>(t);
          const std::uint64_t q = static_cast<std::uint64_t>(part_of(i));
          const std::uint64_t in = static_cast<std::uint64_t>(most_in - in_count(i));
          const std::uint64_t out = static_cast<std::uint64_t>(most_out - out_count(i));
          key(t) = ((q * std::uint64_t(most_in + 1) + in) * std::uint64_t(most_out + 1) + out) * std::uint64_t(n) +
                   std::uint64_t(t);
        });
    space.fence();
    Kokkos::sort(key);
    Kokkos::fence();
    Kokkos::parallel_for(
        "kspmv::ehyb::order", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t p) {
          const auto t = static_cast<std::int64_t>(key(p) % std::uint64_t(n));
          new_to_old(p) = by_partitioner ? first_order(t) : static_cast<int>(t);
        });
  }
  auto old_to_new = temps.template take<int>("kspmv::ehyb::old_to_new", n);
  Kokkos::parallel_reduce(
      "kspmv::ehyb::rows_in_order", Kokkos::RangePolicy<ExecSpace>(space, 1, n),
      KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& in_order) { in_order += new_to_old(p) == new_to_old(p - 1) + 1; },
      d.rows_in_order);
  Kokkos::parallel_for(
      "kspmv::ehyb::inverse", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t p) { old_to_new(new_to_old(p)) = static_cast<int>(p); });
  phase.enter("kspmv::ehyb::slices");
  // Parts and their slices, on the host: parts are few.
  std::vector<int> part_start(static_cast<std::size_t>(nparts) + 1, 0), part_slice(static_cast<std::size_t>(nparts) + 1, 0);
  for (int q = 0; q < nparts; ++q) {
    part_start[q + 1] = part_start[q] + static_cast<int>(part.part_rows[q]);
    part_slice[q + 1] = part_slice[q] + static_cast<int>((part.part_rows[q] + 31) / 32);
  }
  const int nslices = part_slice[nparts];
  std::vector<int> slice_part_h(static_cast<std::size_t>(nslices));
  for (int q = 0; q < nparts; ++q)
    for (int s = part_slice[q]; s < part_slice[q + 1]; ++s) slice_part_h[s] = q;
  d.part_start = arrays.upload(part_start, "kspmv::ehyb::part_start");
  d.part_slice = arrays.upload(part_slice, "kspmv::ehyb::part_slice");
  const auto slice_part = temps.upload(std::move(slice_part_h), "kspmv::ehyb::slice_part");
  const auto pstart = d.part_start;
  const auto pslice = d.part_slice;
  // Each slice: its sliced-ELL width (its first row's in-part count: the
  // rows are in descending order) and, inline, its extra rows,
  // column-major padded to the widest where ehyb_padded_fill of the slots
  // hold entries, else packed.
  d.slice_width = arrays.template take<int>("kspmv::ehyb::slice_width", nslices);
  d.slice_offset = arrays.template take<int>("kspmv::ehyb::slice_offset", nslices + 1);
  d.er_width = arrays.template take<int>("kspmv::ehyb::er_width", inline_er ? nslices : 0);
  d.er_start = arrays.template take<int>("kspmv::ehyb::er_start", inline_er ? nslices + 1 : 0);
  d.er_count = arrays.template take<std::uint16_t>("kspmv::ehyb::er_count", inline_er ? n : 0);
  const auto width = d.slice_width;
  const auto offset = d.slice_offset;
  const auto er_width = d.er_width;
  const auto er_start = d.er_start;
  const auto er_count = d.er_count;
  const double fill = opt.ehyb_padded_fill;
  auto er_slots_of = temps.template take<std::int64_t>("kspmv::ehyb::er_slots", nslices);
  std::int64_t padded_slices = 0;
  Kokkos::parallel_reduce(
      "kspmv::ehyb::slices", Kokkos::RangePolicy<ExecSpace>(space, 0, nslices),
      KOKKOS_LAMBDA(const std::int64_t s, std::int64_t& padded) {
        const int q = slice_part(s);
        const int r0 = pstart(q) + 32 * static_cast<int>(s - pslice(q));
        const int r1 = r0 + 32 < pstart(q + 1) ? r0 + 32 : pstart(q + 1);
        width(s) = in_count(new_to_old(r0));
        if (!inline_er) return;
        std::int64_t widest = 0, sum = 0;
        for (int p = r0; p < r1; ++p) {
          const int o = new_to_old(p);
          widest = out_count(o) > widest ? out_count(o) : widest;
          sum += out_count(o);
          er_count(p) = static_cast<std::uint16_t>(out_count(o));
        }
        const bool pad = widest > 0 && double(sum) >= fill * 32.0 * double(widest);
        er_width(s) = pad ? static_cast<int>(widest) : 0;
        er_slots_of(s) = pad ? 32 * widest : sum;
        padded += pad ? 1 : 0;
      },
      padded_slices);
  rep.er_padded_slices = padded_slices;
  const std::int64_t ell_slots = detail::ehyb_slice_offsets(space, "kspmv::ehyb::slice_offsets", width, offset, temps);
  std::int64_t er_slots = 0;
  if (inline_er) {
    kspmv::detail::scan(
        "kspmv::ehyb::er_offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, nslices),
        KOKKOS_LAMBDA(const std::int64_t s, std::int64_t& sum, const bool final) {
          if (final) er_start(s) = static_cast<int>(sum);
          sum += er_slots_of(s);
          if (final && s + 1 == nslices) er_start(nslices) = static_cast<int>(sum);
        },
        er_slots, &temps);
  } else {
    // Separate (the paper's layout): the rows with extra entries sliced on
    // their own, 32 a slice, by extra count descending, then by internal
    // position (the host build's order); each slice as wide as its first
    // row; er_y each one's row of y, er_row_of each internal row's.
    const auto unsorted = detail::rows_where(
        space, n, KOKKOS_LAMBDA(const std::int64_t p) { return out_count(new_to_old(p)) > 0; },
        "kspmv::ehyb::er_rows", &temps);
    const std::int64_t m = unsorted.extent(0);
    ints er_list = unsorted;  // none, or sorted below
    if (m > 0) {
      if constexpr (detail::has_radix_sort<ExecSpace>()) {
        auto pairs = detail::take_radix_pairs(temps, m, "kspmv::ehyb::er_key", "kspmv::ehyb::er_row");
        const auto key = pairs.key;
        const auto row = pairs.value;
        Kokkos::parallel_for(
            "kspmv::ehyb::er_key", Kokkos::RangePolicy<ExecSpace>(space, 0, m), KOKKOS_LAMBDA(const std::int64_t j) {
              row(j) = unsorted(j);
              key(j) = static_cast<unsigned>(most_out - out_count(new_to_old(unsorted(j))));
            });
        pairs.sort(space, detail::key_bits_below(most_out + 1), &temps);
        er_list = pairs.value;
      } else {
        auto key = temps.template take<std::uint64_t>("kspmv::ehyb::er_key", m);
        Kokkos::parallel_for(
            "kspmv::ehyb::er_keys", Kokkos::RangePolicy<ExecSpace>(space, 0, m), KOKKOS_LAMBDA(const std::int64_t j) {
              const int p = unsorted(j);
              key(j) = std::uint64_t(most_out - out_count(new_to_old(p))) * std::uint64_t(n) + std::uint64_t(p);
            });
        space.fence();
        Kokkos::sort(key);
        Kokkos::fence();
        er_list = temps.template take<int>("kspmv::ehyb::er_list", m);
        const auto list = er_list;
        Kokkos::parallel_for(
            "kspmv::ehyb::er_order", Kokkos::RangePolicy<ExecSpace>(space, 0, m),
            KOKKOS_LAMBDA(const std::int64_t j) { list(j) = static_cast<int>(key(j) % std::uint64_t(n)); });
      }
    }
    const std::int64_t er_nslices = (m + 31) / 32;
    d.er_slices = static_cast<int>(er_nslices);
    d.er_width = arrays.template take<int>("kspmv::ehyb::er_width", er_nslices);
    d.er_offset = arrays.template take<int>("kspmv::ehyb::er_offset", er_nslices + 1);
    d.er_y = arrays.template take<int>("kspmv::ehyb::er_y", m);
    d.er_row_of = arrays.template take_filled<int>("kspmv::ehyb::er_row_of", n, -1);
    const auto ew = d.er_width;
    const auto eo = d.er_offset;
    const auto ey = d.er_y;
    const auto row_of = d.er_row_of;
    const auto list = er_list;
    const bool caller = d.order == OutputOrder::Caller;
    Kokkos::parallel_for(
        "kspmv::ehyb::er_rows_of", Kokkos::RangePolicy<ExecSpace>(space, 0, m), KOKKOS_LAMBDA(const std::int64_t j) {
          const int p = list(j);
          row_of(p) = static_cast<int>(j);
          ey(j) = caller ? new_to_old(p) : p;
          if (j % 32 == 0) ew(j / 32) = out_count(new_to_old(p));
        });
    er_slots = detail::ehyb_slice_offsets(space, "kspmv::ehyb::er_slice_offsets", ew, eo, temps);
  }
  if (ell_slots > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("ehyb: the sliced-ELL part needs more than 2^31 slots");
  if (er_slots > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("ehyb: the extra-rows part holds more than 2^31 slots");
  detail::check_allocation<ExecSpace>(ell_slots * (tau + 2) + er_slots * (tau + 4), "ehyb's slices",
                                      opt.memory_budget_bytes);
  d.ell_col = arrays.template take_filled<std::uint16_t>("kspmv::ehyb::ell_col", ell_slots, D::padding);
  d.ell_val = arrays.template take_filled<Scalar>("kspmv::ehyb::ell_val", ell_slots, Scalar(0));
  d.er_col = arrays.template take_filled<int>("kspmv::ehyb::er_col", er_slots, -1);
  d.er_val = arrays.template take_filled<Scalar>("kspmv::ehyb::er_val", er_slots, Scalar(0));
  d.extra_bits = arrays.template take_filled<std::uint32_t>("kspmv::ehyb::extra_bits", (a.nnz() + 31) / 32, 0u);
  // The fill: a thread a row, its entries in CSR order; each extra
  // entry's bit, or-ed in a word at a time (two rows may share a word).
  {
    const auto ell_col = d.ell_col;
    const auto ell_val = d.ell_val;
    const auto er_col = d.er_col;
    const auto er_val = d.er_val;
    const auto bits = d.extra_bits;
    const auto er_offset = d.er_offset;
    const auto er_row_of = d.er_row_of;
    const bool caller = d.order == OutputOrder::Caller;
    Kokkos::parallel_for(
        "kspmv::ehyb::fill", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t p) {
          const int o = new_to_old(p);
          const std::int64_t len = row_ptr(o + 1) - row_ptr(o);
          if (long_row > 0 && len > long_row) return;
          const int q = part_of(o);
          const int local = static_cast<int>(p) - pstart(q);
          const int s = pslice(q) + local / 32, lane = local % 32;
          const int r0 = static_cast<int>(p) - lane;
          // Where this row's extra entries start, and their stride.
          std::int64_t er_first = 0, er_step = 1;
          if (!inline_er) {
            const int j = er_row_of(p);
            er_first = j < 0 ? 0 : er_offset(j / 32) + j % 32;
            er_step = 32;
          } else if (er_width(s) > 0) {
            er_first = er_start(s) + lane;
            er_step = 32;
          } else {
            er_first = er_start(s);
            for (int r = r0; r < p; ++r) er_first += er_count(r);
          }
          std::int64_t kin = 0, kout = 0;
          std::uint32_t word = 0;
          for (std::int64_t k = row_ptr(o); k < row_ptr(o + 1); ++k) {
            const int c = col_idx(k);
            if (part_of(c) == q) {
              const std::int64_t slot = offset(s) + kin * 32 + lane;
              ell_col(slot) = static_cast<std::uint16_t>(old_to_new(c) - pstart(q));
              ell_val(slot) = values(k);
              ++kin;
            } else {
              const std::int64_t slot = er_first + kout * er_step;
              er_col(slot) = caller ? c : old_to_new(c);
              er_val(slot) = values(k);
              ++kout;
              word |= std::uint32_t(1) << (k % 32);
            }
            if (word != 0 && (k % 32 == 31 || k + 1 == row_ptr(o + 1))) {
              Kokkos::atomic_fetch_or(&bits(k / 32), word);
              word = 0;
            }
          }
        });
  }
  phase.enter("kspmv::ehyb::long_rows");
  // Long rows: whole, as CSR, shortest first (TPR ranges need ascending
  // lengths). Few: their rows and lengths come to the host.
  std::vector<std::int64_t> lptr(1, 0), llen;
  std::vector<int> long_list;
  if (long_rows > 0) {
    const auto rows = detail::rows_where(
        space, n, KOKKOS_LAMBDA(const std::int64_t i) { return row_ptr(i + 1) - row_ptr(i) > long_row; },
        "kspmv::ehyb::long_list");
    long_list.resize(rows.extent(0));
    Kokkos::deep_copy(space, detail::unmanaged_host<int>(long_list.data(), long_list.size()), rows);
    std::vector<offset_t> rp(long_list.size() * 2);
    auto rp_d = temps.template take<offset_t>("kspmv::ehyb::long_ptr", rp.size());
    const auto rows_c = rows;
    Kokkos::parallel_for(
        "kspmv::ehyb::long_extents", Kokkos::RangePolicy<ExecSpace>(space, 0, rows.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t r) {
          rp_d(2 * r) = row_ptr(rows_c(r));
          rp_d(2 * r + 1) = row_ptr(rows_c(r) + 1);
        });
    Kokkos::deep_copy(space, detail::unmanaged_host<offset_t>(rp.data(), rp.size()),
                      Kokkos::subview(rp_d, Kokkos::make_pair(std::size_t(0), rp.size())));
    space.fence();
    std::vector<std::size_t> by_len(long_list.size());
    std::iota(by_len.begin(), by_len.end(), std::size_t(0));
    std::stable_sort(by_len.begin(), by_len.end(),
                     [&](std::size_t u, std::size_t v) { return rp[2 * u + 1] - rp[2 * u] < rp[2 * v + 1] - rp[2 * v]; });
    std::vector<int> sorted_rows;
    for (std::size_t u : by_len) {
      sorted_rows.push_back(long_list[u]);
      llen.push_back(rp[2 * u + 1] - rp[2 * u]);
      lptr.push_back(lptr.back() + llen.back());
    }
    long_list = sorted_rows;
    if (lptr.back() > std::numeric_limits<int>::max())
      throw FormatCannotHoldError("ehyb: the long rows hold more than 2^31 entries");
  }
  rep.long_rows = long_rows;
  rep.long_nnz = lptr.back();
  d.long_host_ranges = tpr_ranges(llen, 256, 32);
  d.long_blocks = d.long_host_ranges.empty() ? 0 : d.long_host_ranges.back().first_block + d.long_host_ranges.back().blocks;
  d.long_ranges = detail::upload_ranges(arrays, d.long_host_ranges, "kspmv::ehyb::long_ranges");
  d.long_row_ptr = arrays.upload(std::vector<int>(lptr.begin(), lptr.end()), "kspmv::ehyb::long_row_ptr");
  const auto long_src = temps.upload(std::vector<int>(long_list), "kspmv::ehyb::long_src");
  d.long_col = arrays.template take<int>("kspmv::ehyb::long_col", lptr.back());
  d.long_val = arrays.template take<Scalar>("kspmv::ehyb::long_val", lptr.back());
  d.long_y = arrays.template take<int>("kspmv::ehyb::long_y", long_list.size());
  if (!long_list.empty()) {
    const auto lrp = d.long_row_ptr;
    const auto lcol = d.long_col;
    const auto lval = d.long_val;
    const auto ly = d.long_y;
    const bool caller = d.order == OutputOrder::Caller;
    using team_policy = Kokkos::TeamPolicy<ExecSpace>;
    Kokkos::parallel_for(
        "kspmv::ehyb::long_fill", team_policy(space, static_cast<int>(long_list.size()), Kokkos::AUTO),
        KOKKOS_LAMBDA(const typename team_policy::member_type& t) {
          const int r = t.league_rank();
          const int o = long_src(r);
          const auto b = row_ptr(o);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, lrp(r + 1) - lrp(r)), [&](const int j) {
            const int c = col_idx(b + j);
            lcol(lrp(r) + j) = caller ? c : old_to_new(c);
            lval(lrp(r) + j) = values(b + j);
          });
          Kokkos::single(Kokkos::PerTeam(t), [&] { ly(r) = caller ? o : old_to_new(o); });
        });
  }
  // The caller-order map and, inline, the separate layout's (empty) arrays.
  d.new_to_old = new_to_old;
  if (inline_er) {
    d.er_slices = 0;
    d.er_offset = arrays.upload(std::vector<int>{0}, "kspmv::ehyb::er_offset");
    d.er_y = arrays.template take<int>("kspmv::ehyb::er_y", 0);
  }
  // Report, as the host build's.
  rep.ell_slots = ell_slots;
  rep.er_slots = er_slots;
  rep.er_rows = er_rows;
  rep.er_nnz = er_nnz;
  rep.ell_nnz = a.nnz() - er_nnz - rep.long_nnz;
  {
    // The separate layout's slots: ER rows by count, descending, padded
    // to each 32's first; from a histogram of the counts.
    std::vector<std::int64_t> by_count(static_cast<std::size_t>(most_out) + 1, 0);
    if (most_out > 0) {
      auto hist = temps.template take<std::int64_t>("kspmv::ehyb::count_histogram", by_count.size());
      Kokkos::deep_copy(space, hist, std::int64_t(0));
      Kokkos::parallel_for(
          "kspmv::ehyb::count_histogram", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
          KOKKOS_LAMBDA(const std::int64_t i) {
            if (out_count(i) > 0) Kokkos::atomic_add(&hist(out_count(i)), std::int64_t(1));
          });
      Kokkos::deep_copy(space, detail::unmanaged_host<std::int64_t>(by_count.data(), by_count.size()), hist);
      space.fence();
    }
    std::int64_t separate_slots = 0, seen = 0;
    for (std::int64_t c = most_out; c >= 1; --c) {
      // Rows at positions seen .. seen + by_count[c]: each multiple of 32 among them starts a slice of width c.
      const std::int64_t first = (seen + 31) / 32 * 32;
      if (first < seen + by_count[c]) separate_slots += 32 * c * ((seen + by_count[c] - 1 - first) / 32 + 1);
      seen += by_count[c];
    }
    rep.er_inline_bytes = double(er_nnz) * (tau + 4) + 4.0 * double(nslices + 1) + 2.0 * double(n);
    rep.er_separate_bytes = double(separate_slots) * (tau + 4) + double(er_rows) * (4 + 2 * tau);
  }
  if (a.nnz() > 0) {
    const double er_arrays = inline_er ? 4.0 * double(nslices + nslices + 1) + 2.0 * double(n)
                                       : 4.0 * double(er_rows + d.er_slices);
    rep.bytes_per_nonzero = (double(rep.ell_slots) * (tau + 2) + double(rep.er_slots + rep.long_nnz) * (tau + 4) +
                             4.0 * double(nslices) + er_arrays) /
                            double(a.nnz());
    rep.csr_bytes_per_nonzero = (double(a.nnz()) * (tau + 4) + 4.0 * double(n + 1)) / double(a.nnz());
  }
  d.storage = arrays.kept();
  space.fence();
  if (opt.progress) opt.progress("reordering (on the device)", 1.0);
  rep.reorder_seconds = reorder.seconds();
  d.conversion_seconds = timer.seconds();
  return d;
}

namespace detail {
template <class Scalar, class ExecSpace, class XView, class YView>
void ehyb_sliced(const ExecSpace& space, Scalar alpha, const EhybDevice<Scalar, ExecSpace>& A, const XView& x,
                 Scalar beta, const YView& y);
template <class Scalar, class ExecSpace, class XView, class YView>
void ehyb_long_rows(const ExecSpace& space, Scalar alpha, const EhybDevice<Scalar, ExecSpace>& A, const XView& x,
                    const YView& y);
// Sorted long row -> its entries and its y (added into).
template <class Scalar, class MemSpace, class YView>
struct EhybLongRowOf {
  Kokkos::View<int*, MemSpace> row_ptr, out;
  YView y;
  Scalar alpha;
  KOKKOS_INLINE_FUNCTION void operator()(int i, int& kb, int& ke) const {
    kb = row_ptr(i);
    ke = row_ptr(i + 1);
  }
  KOKKOS_INLINE_FUNCTION void store(int i, Scalar sum) const { y(out(i)) += alpha * sum; }
};
}  // namespace detail

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const EhybDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "ehyb", A.nrows, A.ncols, alpha, x, beta, y)) return;
  detail::ehyb_sliced(space, alpha, A, x, beta, y);
  detail::ehyb_long_rows(space, alpha, A, x, y);
}

namespace detail {
// Long rows: adaptive lanes per row, added into y (beta = 1) after the
// sliced parts wrote it.
template <class Scalar, class ExecSpace, class XView, class YView>
void ehyb_long_rows(const ExecSpace& space, Scalar alpha, const EhybDevice<Scalar, ExecSpace>& A, const XView& x,
                    const YView& y) {
  if (A.long_blocks == 0) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && contiguous(x, y)) {
      const cuda_tuned::AdaptiveRows<Scalar> rows{static_cast<int>(A.long_host_ranges.size()),
                                            reinterpret_cast<const int4*>(A.long_ranges.data()),
                                            nullptr,
                                            A.long_row_ptr.data(),
                                            A.long_col.data(),
                                            A.long_val.data(),
                                            A.long_y.data(),
                                            0};
      return cuda_tuned::adaptive_rows_spmv(space.cuda_stream(), rows, A.long_blocks, alpha, x.data(), Scalar(1), y.data());
    }
  }
#endif
  const EhybLongRowOf<Scalar, typename ExecSpace::memory_space, YView> row_of{A.long_row_ptr, A.long_y, y, alpha};
  const auto col = A.long_col;
  const auto val = A.long_val;
  const auto body = KOKKOS_LAMBDA(const int k, Scalar& s) { s += val(k) * x(col(k)); };
  for (const auto& r : A.long_host_ranges)
    adaptive_range_portable<ExecSpace, Scalar>(space, "kspmv::ehyb_long", r.begin, r.end, r.tpr, row_of, body);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void ehyb_sliced(const ExecSpace& space, Scalar alpha, const EhybDevice<Scalar, ExecSpace>& A, const XView& x,
                 Scalar beta, const YView& y) {
  const bool caller = A.order == OutputOrder::Caller;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && contiguous(x, y))
      return cuda_tuned::ehyb_spmv(space.cuda_stream(), A.report.parts, A.report.parts_per_sm,
                             A.report.window_rows, A.part_start.data(),
                             A.part_slice.data(), A.slice_width.data(), A.slice_offset.data(), A.ell_col.data(),
                             A.ell_val.data(), A.er_inline ? A.er_start.data() : nullptr,
                             A.er_inline ? A.er_width.data() : nullptr,
                             A.er_inline ? A.er_count.data() : nullptr, A.er_slices, static_cast<int>(A.report.er_rows),
                             A.er_width.data(), A.er_offset.data(), A.er_col.data(), A.er_val.data(), A.er_y.data(),
                             caller ? A.new_to_old.data() : nullptr, alpha, x.data(), beta, y.data());
  }
#endif
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using scratch_view = Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const bool host = is_host_space<ExecSpace>();
  const int team = host ? 1 : 8, vl = host ? 1 : 32;
  const int window = A.report.window_rows;
  const auto perm = A.new_to_old;
  const auto start = A.part_start;
  const auto pslice = A.part_slice;
  const auto width = A.slice_width;
  const auto offset = A.slice_offset;
  const auto ecol = A.ell_col;
  const auto eval = A.ell_val;
  const bool er_inline = A.er_inline;
  const auto est = A.er_start;
  const auto iw = A.er_width;
  const auto ecount = A.er_count;
  const auto ic = A.er_col;
  const auto iv = A.er_val;
  // Sliced ELL: a team per part, x window in scratch, a slice per thread
  // (its 32 vector lanes one row each); inline ER entries from x itself.
  Kokkos::parallel_for(
      "kspmv::ehyb", policy(space, A.report.parts, team, vl).set_scratch_size(0, Kokkos::PerTeam(scratch_view::shmem_size(window))),
      KOKKOS_LAMBDA(const member& t) {
        const int q = t.league_rank();
        const int ps = start(q), pe = start(q + 1);
        scratch_view xw(t.team_scratch(0), window);
        Kokkos::parallel_for(Kokkos::TeamVectorRange(t, pe - ps),
                             [&](const int i) { xw(i) = x(caller ? perm(ps + i) : ps + i); });
        t.team_barrier();
        const int s0 = pslice(q);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, s0, pslice(q + 1)), [&](const int s) {
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, 32), [&](const int lane) {
            const int r = ps + (s - s0) * 32 + lane;
            if (r >= pe) return;
            const int w = width(s), base = offset(s) + lane;
            Scalar sum = 0;
            for (int k = 0; k < w; ++k) {
              const std::uint16_t c = ecol(base + k * 32);
              if (c == EhybDevice<Scalar, ExecSpace>::padding) break;
              sum += eval(base + k * 32) * xw(c);
            }
            if (er_inline && iw(s) > 0) {  // column-major, padded
              for (int k = est(s) + lane, end = est(s + 1); k < end; k += 32) {
                if (ic(k) < 0) break;
                sum += iv(k) * x(ic(k));
              }
            } else if (er_inline) {  // packed row after row: this row's follow the earlier lanes'
              int k = est(s);
              for (int i = ps + (s - s0) * 32; i < r; ++i) k += ecount(i);
              for (const int end = k + ecount(r); k < end; ++k) sum += iv(k) * x(ic(k));
            }
            combine_y(y, caller ? perm(r) : r, alpha, sum, beta);
          });
        });
      });
  if (A.er_slices == 0) return;
  // Extra rows: added into y after the sliced ELL has written it.
  const int nslices = A.er_slices, nrows = static_cast<int>(A.report.er_rows);
  const auto ew = A.er_width;
  const auto eo = A.er_offset;
  const auto ec = A.er_col;
  const auto ev = A.er_val;
  const auto ey = A.er_y;
  Kokkos::parallel_for(
      "kspmv::ehyb_er", policy(space, (nslices + team - 1) / team, team, vl), KOKKOS_LAMBDA(const member& t) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, team), [&](const int j) {
          const int s = t.league_rank() * team + j;
          if (s >= nslices) return;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, 32), [&](const int lane) {
            const int e = s * 32 + lane;
            if (e >= nrows) return;
            const int w = ew(s), base = eo(s) + lane;
            Scalar sum = 0;
            for (int k = 0; k < w; ++k) {
              const int c = ec(base + k * 32);
              if (c < 0) break;
              sum += ev(base + k * 32) * x(c);
            }
            y(ey(e)) += alpha * sum;
          });
        });
      });
}
}  // namespace detail

namespace detail {
// Its slot walk (row_segments.hpp, walk_slots): position p < nrows is
// internal row p, CSR row new_to_old(p); positions nrows and on are its
// long rows, shortest first (a long row's own position is empty). A
// sliced row's entries go, in CSR order, to its slice's ELL columns (those
// in its part) or to its extra slots (the others), and extra_bits says
// which: a segment starting inside a row counts the bits before it, and
// the walk visits the slice's slots first, then the extra ones. A
// long row's entries lie in order in the long-row CSR. A refresh writes a
// slice's rows from neighbouring threads, as evc-hyb's does, instead of
// scattering through a map of 4 bytes a nonzero; the conversion fills by
// its own kernel.
template <class Scalar, class ExecSpace>
struct EhybSlotWalk {
  using M = typename ExecSpace::memory_space;
  Kokkos::View<const offset_t*, M> rp;
  Kokkos::View<const int*, M> new_to_old, part_start, part_slice, slice_offset, er_start, er_width, er_offset,
      er_row_of, long_row_ptr, long_y;
  Kokkos::View<const std::uint16_t*, M> er_count;
  Kokkos::View<const std::uint32_t*, M> bits;
  std::int64_t rows = 0, positions = 0, longest = 0, long_row = 0, ell_slots = 0, er_slots = 0;
  int parts = 0;
  bool caller = true, er_inline = true;

  // The CSR row at position p.
  KOKKOS_INLINE_FUNCTION std::int64_t row(const std::int64_t p) const {
    if (p < rows) return new_to_old(p);
    const int y = long_y(p - rows);
    return caller ? y : new_to_old(y);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t begin(const std::int64_t p) const { return rp(row(p)); }
  KOKKOS_INLINE_FUNCTION std::int64_t end(const std::int64_t p) const {
    const std::int64_t o = row(p), b = rp(o), e = rp(o + 1);
    return p < rows && long_row > 0 && e - b > long_row ? b : e;  // a long row at its sliced position: none
  }
  template <class Op>
  KOKKOS_INLINE_FUNCTION void walk(const std::int64_t p, const std::int64_t k0, const std::int64_t k1, const Op& op) const {
    const std::int64_t first = begin(p);
    if (p >= rows) {
      const std::int64_t base = ell_slots + er_slots + long_row_ptr(p - rows) - first;
      for (std::int64_t k = k0; k < k1; ++k) op(k, base + k);
      return;
    }
    // The part holding p: the last one starting at or before it (a part
    // may be empty).
    int lo = 0, hi = parts;
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (part_start(mid) <= p) lo = mid; else hi = mid;
    }
    const std::int64_t local = p - part_start(lo);
    const int s = part_slice(lo) + static_cast<int>(local / 32);
    const int lane = static_cast<int>(local % 32);
    // This row's first extra slot and the step to its next.
    std::int64_t er = 0, step = 32;
    if (!er_inline) {
      const int j = er_row_of(p);
      er = j >= 0 ? er_offset(j / 32) + j % 32 : 0;
    } else if (er_width(s) > 0) {
      er = er_start(s) + lane;
    } else {
      er = er_start(s);
      for (std::int64_t r = p - lane; r < p; ++r) er += er_count(r);
      step = 1;
    }
    // Extra entries before k0 (a segment inside a row), a word at a time.
    std::int64_t out = 0;
    for (std::int64_t k = first; k < k0;) {
      const int b = static_cast<int>(k % 32);
      const std::int64_t take = k0 - k < 32 - b ? k0 - k : 32 - b;
      const std::uint32_t mask = take == 32 ? ~std::uint32_t(0) : ((std::uint32_t(1) << take) - 1) << b;
      out += set_bits(bits(k / 32) & mask);
      k += take;
    }
    std::int64_t in = (k0 - first) - out;
    // Slot by slot: the slice's entries, then the extra ones, so that a
    // warp's lanes (a slice's rows) write their j-th slots together, 32
    // neighbouring values, rather than each lane's j drifting with where
    // its row's extra entries fall (one step an entry measured 4.4-7.9
    // SpMVs a refresh on the FEM meshes).
    const std::int64_t ell = slice_offset(s) + lane;
    for (std::int64_t k = next_entry(k0, k1, false); k < k1; k = next_entry(k + 1, k1, false)) op(k, ell + 32 * in++);
    for (std::int64_t k = next_entry(k0, k1, true); k < k1; k = next_entry(k + 1, k1, true))
      op(k, ell_slots + er + step * out++);
  }
  // The first entry at or after k, before end, that is extra (or, with
  // extra false, in the slice); end where none is.
  KOKKOS_INLINE_FUNCTION std::int64_t next_entry(std::int64_t k, const std::int64_t end, const bool extra) const {
    while (k < end) {
      std::uint32_t w = bits(k / 32);
      if (!extra) w = ~w;
      w &= ~std::uint32_t(0) << (k % 32);
      if (w != 0) {
        const std::int64_t at = k / 32 * 32 + lowest_set_bit(w);
        return at < end ? at : end;
      }
      k = (k / 32 + 1) * 32;
    }
    return end;
  }
};
template <class Scalar, class ExecSpace>
EhybSlotWalk<Scalar, ExecSpace> slot_walk(const EhybDevice<Scalar, ExecSpace>& f,
                                          const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  EhybSlotWalk<Scalar, ExecSpace> w;
  w.rp = rp;
  w.new_to_old = f.new_to_old;
  w.part_start = f.part_start;
  w.part_slice = f.part_slice;
  w.slice_offset = f.slice_offset;
  w.er_start = f.er_start;
  w.er_width = f.er_width;
  w.er_offset = f.er_offset;
  w.er_row_of = f.er_row_of;
  w.long_row_ptr = f.long_row_ptr;
  w.long_y = f.long_y;
  w.er_count = f.er_count;
  w.bits = f.extra_bits;
  w.rows = f.nrows;
  const std::int64_t long_rows = static_cast<std::int64_t>(f.long_y.extent(0));
  w.positions = w.rows + long_rows;
  w.long_row = f.long_row;
  // Long rows are split into segments (their lengths are not kept).
  w.longest = long_rows > 0 ? std::numeric_limits<std::int64_t>::max() : f.longest_sliced;
  w.ell_slots = static_cast<std::int64_t>(f.ell_val.extent(0));
  w.er_slots = static_cast<std::int64_t>(f.er_val.extent(0));
  w.parts = f.part_start.extent(0) > 0 ? static_cast<int>(f.part_start.extent(0)) - 1 : 0;
  w.caller = f.order == OutputOrder::Caller;
  w.er_inline = f.er_inline;
  return w;
}
// Refreshed along its rows (matrix.hpp) where no row is long and either
// more than one row in eight does not follow its neighbour in the CSR (a
// scrambled or partitioned order, or a stencil's cells sorted by how many
// entries stay in the part) or, on CUDA's tuned path, rows hold 20-56
// entries (ehyb_walk_pays_in_order, ehyb_cuda.hpp): by its own kernel on
// CUDA's tuned path (tuned_refresh), else by its slot walk. Elsewhere
// through a map of slots the walk writes, a thread an entry: where nearly
// every row follows its neighbour the scatter reads in order and writes
// each slice's sectors close together in time. H200, double, refresh in
// SpMVs, the tuned kernel / the scatter: 3-D stencils with 57-73% of their
// rows in order 0.32-0.84x the scatter's time (27 points 1.6-2.4 /
// 4.7-6.9, 7 points 1.7-2.3 / 2.0-2.8); at 94-99.8% in order the scatter
// is the faster on 2-D stencils and block-diagonal rows of 4-16 entries
// (1.09-2.44x), on bands of 13 and 65-129 and blocks of 64 (1.12-2.12x); the kernel on
// bands and blocks of 20-49 (0.44-0.90x; docs/PERFORMANCE.md). Where rows
// are scrambled the two are within 1% on the FEM meshes and random rows.
// (H100, the walk / the scatter: FEM meshes 3.6-5.7 / 4.7-9.9.)
template <class Scalar, class ExecSpace>
constexpr bool has_tuned_refresh(const EhybDevice<Scalar, ExecSpace>& f) {
  return on_cuda<ExecSpace>() && f.kernel == KernelPath::Auto;
}
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const EhybDevice<Scalar, ExecSpace>& f) {
  if (f.report.long_rows != 0) return false;
  if (8 * f.rows_in_order < 7 * std::int64_t(f.nrows)) return true;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value)
    return has_tuned_refresh(f) && cuda_tuned::ehyb_walk_pays_in_order(f.longest_sliced, f.nnz, f.nrows);
#endif
  return false;
}
// Its own refresh where CUDA's tuned path runs (has_tuned_refresh;
// ehyb_cuda.hpp, ehyb_refresh: a warp a slice, its lanes reading the
// slice's rows 32 entries a load, and a thread a long row's entry), in
// every layout and row order: true where it wrote the values, false where
// the slot walk is to.
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const EhybDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (!has_tuned_refresh(f)) return false;
    cuda_tuned::EhybRefresh<Scalar> a;
    a.slices = static_cast<int>(f.slice_width.extent(0));
    a.parts = f.part_start.extent(0) > 0 ? static_cast<int>(f.part_start.extent(0)) - 1 : 0;
    a.long_rows = static_cast<int>(f.long_y.extent(0));
    a.long_row = f.long_row;
    a.caller = f.order == OutputOrder::Caller;
    a.er_inline = f.er_inline;
    a.part_start = f.part_start.data();
    a.part_slice = f.part_slice.data();
    a.slice_offset = f.slice_offset.data();
    a.new_to_old = f.new_to_old.data();
    a.row_ptr = rp.data();
    a.extra_bits = f.extra_bits.data();
    a.er_start = f.er_start.data();
    a.er_width = f.er_width.data();
    a.er_row_of = f.er_row_of.data();
    a.er_offset = f.er_offset.data();
    a.er_count = f.er_count.data();
    a.long_row_ptr = f.long_row_ptr.data();
    a.long_y = f.long_y.data();
    a.values = values.data();
    a.ell_val = f.ell_val.data();
    a.er_val = f.er_val.data();
    a.long_val = f.long_val.data();
    cuda_tuned::ehyb_refresh(space.cuda_stream(), a, f.longest_sliced, static_cast<long long>(f.long_val.extent(0)));
    return true;
  }
#endif
  (void)space, (void)f, (void)rp, (void)values;
  return false;
}

// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(EhybDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.ell_val, f.er_val, f.long_val);
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const EhybDevice<Scalar, ExecSpace>& f) {
  const auto& r = f.report;
  char b[64];
  std::snprintf(b, sizeof b, "%.2f (CSR: %.2f)", r.bytes_per_nonzero, r.csr_bytes_per_nonzero);
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"partitioner", r.partitioner},
          {"partition_note", r.partition_note},
          {"built", r.built},
          {"parts", std::to_string(r.parts)},
          {"k_times_p", std::to_string(r.k) + " x " + std::to_string(r.processors)},
          {"window_rows", std::to_string(r.window_rows)},
          {"parts_per_sm", std::to_string(r.parts_per_sm)},
          {"shared_bytes", std::to_string(r.shared_bytes)},
          {"pct_cached", percent(double(r.ell_nnz), double(f.nnz))},
          {"er_rows", std::to_string(r.er_rows)},
          {"er", f.er_inline ? "inline" : "separate"},
          {"er_padded_slices", std::to_string(r.er_padded_slices)},
          {"er_inline_vs_separate_bytes", std::to_string(r.er_separate_bytes > 0 ? r.er_inline_bytes / r.er_separate_bytes : 0.0)},
          {"long_rows", std::to_string(r.long_rows)},
          {"padding", percent(double(r.ell_slots + r.er_slots - f.nnz), double(f.nnz))},
          {"bytes_per_nonzero", b},
          {"partition_seconds", std::to_string(r.partition_seconds)},
          {"reorder_seconds", std::to_string(r.reorder_seconds)},
          {"rows_in_order", std::to_string(f.rows_in_order)},
          {"order", f.order == OutputOrder::Caller ? "caller" : "internal"}};
}
template <class S, class E>
struct permutes_x<EhybDevice<S, E>> : std::true_type {};
}  // namespace detail

}  // namespace kspmv
