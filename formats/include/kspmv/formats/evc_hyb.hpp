// EVC-HYB (evc-hyb §2): rows sorted by length (ascending; equal lengths by
// the column of their first entry, so neighbouring rows load neighbouring
// x). The sorted rows are cut into 32-row slices; rows of at most `split`
// (128) entries form the sub-ELL part: consecutive slices of equal width
// are one sub-ELL block, column-major over the block's rows (a slice whose
// rows are shorter than its longest pads them, at most 31 rows per length
// step, as the paper's merge into the next length does). The remaining
// rows, including the last < 32 short rows, form a vector-CSR part, each
// row padded to a multiple of 32 entries. (By default the split is lowered
// from 128 towards 32 when the matrix has fewer rows than the GPU has
// lanes: ConvertOptions::evc_split.)
//
// Threads adapt in both parts: in sub-ELL a thread takes 1 row of the
// longest blocks (width in (LRmax/2, LRmax]), 2 rows of the next, 4 ...
// (capped so that the part still fills the device). When the part has
// fewer rows than the device has lanes (small matrices), the opposite:
// 2, 4, ... 32 lanes share a row (about four slots each), each walking
// every lanes-th slot, and a warp shuffle adds them. vector-CSR rows get
// 32, 64, ... lanes by length (core/adaptive.hpp). One launch serves both:
// teams below `ell_teams` run sub-ELL, the others vector CSR (the paper's
// Algorithm 1); the CUDA kernel swaps the two so that the longest rows
// start first. Padding holds column -1 and is skipped without loading x.
//
// y comes back in the caller's order (written through the permutation) or,
// with OutputOrder::Internal, in the sorted order; x is never permuted.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <memory>
#include <mutex>
#include <numeric>
#include <tuple>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/config.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_info.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/distinct_count.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/permutation.hpp"
#include "kspmv/core/profiling.hpp"
#include "kspmv/core/roofline.hpp"
#include "kspmv/formats/csr_adaptive.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/evc_hyb_cuda.hpp"
#endif

namespace kspmv {

// One sub-ELL block: `rows` sorted rows from `row_begin`, `width` slots
// each, column-major at `offset`; teams [first_team, first_team + teams).
// `lanes` threads share a row (a power of two <= 32); with one lane, a
// thread may take several rows, the teams' stride apart.
struct EvcEllBlock {
  int row_begin, rows, width, offset, first_team, teams, lanes;
};

// The paper's Table 3 columns. Its roofline of §3.2 is evc_hyb_roofline,
// made when first asked for.
struct EvcHybReport {
  std::int64_t isplit = 0;        // rows in the sub-ELL part
  std::int64_t ell_slots = 0;     // NNZ_ELL (with padding)
  std::int64_t vcsr_slots = 0;    // NNZ_vCSR (with padding)
  std::int64_t padding = 0;       // slots - nnz
  int ell_blocks = 0, csr_ranges = 0;
  int ell_max_lanes = 1;          // the most lanes sharing a sub-ELL row
};

namespace detail {
// The roofline once made, shared by a format's copies (they share its
// pattern): kspmv info and the benchmark ask for it, a solver never does,
// so no conversion pays for it (on an H200, making it at conversion took
// conversions about 1.9x as long on real matrices of up to 1.2M entries,
// 1.3-1.6x on the FEM and validation suites).
struct EvcRooflineOnce {
  std::once_flag made;
  CodeBalance value;
};
}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct EvcHybDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "evc-hyb";
  static constexpr int team_lanes = 256;  // lanes per team (the paper's block size)

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  int split = 128;
  OutputOrder order = OutputOrder::Caller;
  Kokkos::View<int*, memory_space> new_to_old;  // sorted row -> caller row
  std::int64_t longest = 0;                      // the longest row
  // Caller order through a gather pass (CallerY::Gather, CUDA path only):
  // caller row -> sorted row, and the sorted results' workspace.
  bool gather_y = false;
  Kokkos::View<int*, memory_space> old_to_new;
  Kokkos::View<Scalar*, memory_space> y_sorted;
  // sub-ELL part
  std::vector<EvcEllBlock> host_blocks;
  Kokkos::View<int*, memory_space> ell_blocks;  // detail::kEvcBlockInts per block, as EvcEllBlock
  Kokkos::View<int*, memory_space> slice_block;  // each 32-row sub-ELL slice's block (the slot walk's)
  Kokkos::View<int*, memory_space> ell_col;     // -1: padding
  Kokkos::View<Scalar*, memory_space> ell_val;
  int ell_teams = 0;
  // vector-CSR part: sorted rows [isplit, nrows)
  std::vector<TprRange> host_ranges;
  Kokkos::View<int*, memory_space> csr_ranges;  // 4 ints per range, first_block from 0
  Kokkos::View<int*, memory_space> csr_row_ptr, csr_col;
  Kokkos::View<Scalar*, memory_space> csr_val;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
  int csr_teams = 0;
  EvcHybReport report;
  std::shared_ptr<detail::EvcRooflineOnce> roofline = std::make_shared<detail::EvcRooflineOnce>();
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return (new_to_old.span() + old_to_new.span() + ell_blocks.span() + slice_block.span() + ell_col.span() +
            csr_ranges.span() + csr_row_ptr.span() + csr_col.span()) *
               sizeof(int) +
           (ell_val.span() + csr_val.span() + y_sorted.span()) * sizeof(Scalar);
  }
};

namespace detail {
// Its slot walk (row_segments.hpp, walk_slots): sorted position p holds
// CSR row new_to_old(p); below isplit its n-th entry is column n of p's
// sub-ELL block (column-major over the block's rows), above it entry n of
// p's padded vector-CSR row, whose slots follow the sub-ELL part's. The
// conversion fills along it, and a refresh walks it again (the rows are
// sorted, so a slice's rows lie far apart in the CSR: a map of slots
// would write each sector of a slice at times far apart).
template <class Scalar, class ExecSpace>
struct EvcHybSlotWalk : PermutedRows<ExecSpace> {
  Kokkos::View<const int*, typename ExecSpace::memory_space> slice_block, blocks, csr_row_ptr;
  std::int64_t isplit = 0, ell_slots = 0;
  template <class Op>
  KOKKOS_INLINE_FUNCTION void walk(const std::int64_t p, const std::int64_t k0, const std::int64_t k1, const Op& op) const {
    const std::int64_t first = this->begin(p);
    if (p < isplit) {
      constexpr int B = kEvcBlockInts;
      const int q = slice_block(static_cast<int>(p / 32));
      const std::int64_t row_begin = blocks(q * B), brows = blocks(q * B + 1), offset = blocks(q * B + 3);
      const std::int64_t base = offset + (p - row_begin);
      for (std::int64_t k = k0; k < k1; ++k) op(k, base + (k - first) * brows);
    } else {
      const std::int64_t base = ell_slots + csr_row_ptr(p - isplit) - first;
      for (std::int64_t k = k0; k < k1; ++k) op(k, base + k);
    }
  }
};
template <class Scalar, class ExecSpace>
EvcHybSlotWalk<Scalar, ExecSpace> slot_walk(const EvcHybDevice<Scalar, ExecSpace>& f,
                                            const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  return {{rp, f.new_to_old, static_cast<std::int64_t>(f.nrows), f.longest},
          f.slice_block,
          f.ell_blocks,
          f.csr_row_ptr,
          f.report.isplit,
          static_cast<std::int64_t>(f.ell_val.extent(0))};
}
// Refreshed by walking its rows (matrix.hpp): they are sorted. On CUDA's
// tuned path by its own kernel (tuned_refresh), elsewhere by the slot walk.
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const EvcHybDevice<Scalar, ExecSpace>&) {
  return true;
}
#if KSPMV_ENABLE_CUDA
// What its CUDA refresh (evc_hyb_cuda.hpp, evc_hyb_refresh) reads and
// writes: f's layout, the CSR's row offsets rp and the new values.
template <class Scalar>
cuda_tuned::EvcHybRefresh<Scalar> refresh_arguments(const EvcHybDevice<Scalar, Kokkos::Cuda>& f, const offset_t* rp,
                                                    const Scalar* values) {
  cuda_tuned::EvcHybRefresh<Scalar> a;
  a.isplit = static_cast<int>(f.report.isplit);
  a.slices = a.isplit / 32;
  for (const auto& b : f.host_blocks) a.widest = std::max(a.widest, b.width);
  a.csr_rows = static_cast<int>(f.nrows - f.report.isplit);
  a.csr_slots = static_cast<long long>(f.csr_val.extent(0));
  a.blocks = f.ell_blocks.data();
  a.slice_block = f.slice_block.data();
  a.new_to_old = f.new_to_old.data();
  a.csr_row_ptr = f.csr_row_ptr.data();
  a.row_ptr = rp;
  a.values = values;
  a.ell_val = f.ell_val.data();
  a.csr_val = f.csr_val.data();
  return a;
}
#endif
// Its own refresh where CUDA's tuned path runs (evc_hyb_cuda.hpp,
// evc_hyb_refresh: a warp a sub-ELL slice, its lanes reading the slice's
// rows 32 entries a load into a tile that goes out a column at a time;
// the vector-CSR part a warp a few runs of 32 slots): true where it wrote
// the values, false where the slot walk is to.
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const EvcHybDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (f.kernel != KernelPath::Auto) return false;
    cuda_tuned::evc_hyb_refresh(space.cuda_stream(), refresh_arguments(f, rp.data(), values.data()));
    return true;
  }
#endif
  (void)space, (void)f, (void)rp, (void)values;
  return false;
}
// The sub-ELL fill's step (a slot walk over the sub-ELL rows). The CSR is
// read through the read-only path (read_only, device_util.hpp).
template <class Scalar, class ExecSpace>
struct EvcHybFill {
  using memory_space = typename ExecSpace::memory_space;
  using random_access = Kokkos::MemoryTraits<Kokkos::RandomAccess>;
  Kokkos::View<const int*, memory_space, random_access> col;
  Kokkos::View<const Scalar*, memory_space, random_access> src;
  Kokkos::View<int*, memory_space> ell_col;
  Kokkos::View<Scalar*, memory_space> ell_val;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, const std::int64_t s) const {
    ell_col(s) = col(k);
    ell_val(s) = src(k);
  }
};
// The vector-CSR part's slot visit (row_segments.hpp, visit_slots): its
// rows are padded to multiples of 32 slots, so a run of 32 lies in one
// row; the cursor is the part's row q, found once by a binary search of
// its offsets and walked on from there. Slot s of row q holds entry
// row_ptr(row) + (s - offsets(q)) of the CSR row perm(first + q), or
// padding past its end.
template <class ExecSpace>
struct EvcVcsrVisit {
  using memory_space = typename ExecSpace::memory_space;
  using random_access = Kokkos::MemoryTraits<Kokkos::RandomAccess>;
  Kokkos::View<const offset_t*, memory_space, random_access> row_ptr;  // the CSR's
  Kokkos::View<const int*, memory_space, random_access> offsets;       // the part's, padded
  Kokkos::View<const int*, memory_space> perm;
  std::int64_t rows = 0, all_slots = 0;
  int first = 0;  // the part's first sorted row
  KOKKOS_INLINE_FUNCTION std::int64_t slots() const { return all_slots; }
  KOKKOS_INLINE_FUNCTION std::int64_t seek(const std::int64_t s) const { return row_of_entry(offsets, rows, s); }
  KOKKOS_INLINE_FUNCTION bool entry(const std::int64_t s, std::int64_t& q, std::int64_t& k) const {
    while (std::int64_t(offsets(q + 1)) <= s) ++q;  // rows of no slots are stepped over
    const std::int64_t row = perm(first + q);
    k = std::int64_t(row_ptr(row)) + (s - offsets(q));
    return k < std::int64_t(row_ptr(row + 1));
  }
};
// The vector-CSR fill's steps: an entry's column and value, or padding's
// column -1 and value 0.
template <class Scalar, class ExecSpace>
struct EvcVcsrFill {
  using memory_space = typename ExecSpace::memory_space;
  using random_access = Kokkos::MemoryTraits<Kokkos::RandomAccess>;
  Kokkos::View<const int*, memory_space, random_access> col;
  Kokkos::View<const Scalar*, memory_space, random_access> src;
  Kokkos::View<int*, memory_space> csr_col;
  Kokkos::View<Scalar*, memory_space> csr_val;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, const std::int64_t s) const {
    csr_col(s) = col(k);
    csr_val(s) = src(k);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t s) const {
    csr_col(s) = -1;
    csr_val(s) = Scalar(0);
  }
};
}  // namespace detail

// The warps of the sorted order whose x sectors the roofline's alpha
// counts on the host, at most, and the entries they may hold (by the mean
// row): the roofline's whole cost. alpha is a report figure, no kernel or
// choice reads it; 1024 warps whatever their length took 5-11 ms on the
// FEM meshes, and every row of a dense 2000 x 2000 (4M entries) about
// 17 ms (H100 node).
constexpr std::int64_t kEvcAlphaWarps = 128;
constexpr std::int64_t kEvcAlphaEntries = std::int64_t(1) << 17;

// On the device (a host input is uploaded first): the rows' lengths and
// their sorted order by a device sort of (length, first column, row) keys;
// the vector-CSR part's offsets and class ends by a scan there; the
// sub-ELL slices' widths and those ends read back in one copy (O(n / 32)
// numbers), from which the host plans the blocks, their threads and the
// vector-CSR ranges; then a thread a sorted row places its entries.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EvcHybDevice<Scalar, ExecSpace> to_evc_hyb(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using D = EvcHybDevice<Scalar, ExecSpace>;
  using M = typename D::memory_space;
  constexpr int L = D::team_lanes;
  if (opt.evc_split < 0) throw InvalidArgumentError("evc-hyb: evc_split must be >= 0 (0: auto)");
  if (opt.evc_ell_lanes < 0 || opt.evc_ell_lanes > 32 || (opt.evc_ell_lanes & (opt.evc_ell_lanes - 1)) != 0)
    throw InvalidArgumentError("evc-hyb: evc_ell_lanes must be 0 (auto) or a power of two <= 32, not " +
                               std::to_string(opt.evc_ell_lanes));
  if (opt.evc_rows_per_thread < 0)
    throw InvalidArgumentError("evc-hyb: evc_rows_per_thread must be >= 0 (0: auto)");
  ExecSpace space;
  D d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  const std::int64_t concurrency = std::max<std::int64_t>(1, ExecSpace().concurrency());
  if (opt.evc_split > 0) {
    d.split = opt.evc_split;
  } else {
    // Auto: 128, unless the rows are too few to keep the lanes busy.
    d.split = detail::is_host_space<ExecSpace>() ? 128 : evc_auto_split(a.nrows, concurrency);
  }
  d.order = opt.output_order;
  d.kernel = opt.kernel;
  const std::int64_t n = a.nrows;
  using policy = Kokkos::RangePolicy<ExecSpace>;
  detail::ScratchSet<ExecSpace> len_temps(space);
  detail::FormatArrays<ExecSpace> arrays(space);
  const auto len = detail::row_lengths(space, a.row_ptr, "kspmv::evc_hyb::lengths", &len_temps);
  // Sorted order: length ascending, then first column, then row. The keys
  // (length x (ncols + 1) + first column + 1) x rows + row are unique; where
  // they would pass 2^63, equal lengths keep the rows' order.
  const std::int64_t longest = n > 0 ? longest_row(space, a.row_ptr) : 0;
  const std::int64_t cols1 = std::int64_t(a.ncols) + 1, rows = std::max<std::int64_t>(n, 1);
  const bool by_first = longest + 1 <= std::numeric_limits<std::int64_t>::max() / cols1 / rows;
  const auto perm = arrays.template take<int>("kspmv::evc_hyb::new_to_old", n);
  bool sorted = false;
  if constexpr (detail::has_radix_sort<ExecSpace>()) {
    // The same order from two stable radix sorts of (key, row) pairs, by
    // the bits each key needs: by first column, then by length (a few
    // passes of 4-byte keys, against Kokkos::sort's eight over all the
    // bits of 8-byte ones and its allocation; these temporaries are kept
    // blocks).
    if (n > 1 && n <= 0x7FFFFFFF && cols1 <= 0x7FFFFFFF && longest <= 0x7FFFFFFF) {
      detail::ScratchSet<ExecSpace> temps(space);
      auto key = temps.template take<unsigned>("kspmv::evc_hyb::keys", n);
      auto spare_key = temps.template take<unsigned>("kspmv::evc_hyb::keys", n);
      auto row = temps.template take<int>("kspmv::evc_hyb::rows", n);
      auto spare_row = temps.template take<int>("kspmv::evc_hyb::rows", n);
      const auto rp = a.row_ptr;
      const auto col = a.col_idx;
      Kokkos::parallel_for(
          "kspmv::evc_hyb::first_keys", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
            key(i) = len(i) > 0 ? static_cast<unsigned>(col(rp(i))) + 1u : 0u;
            row(i) = static_cast<int>(i);
          });
      if (by_first)
        detail::radix_sort_pairs(space, key, spare_key, row, spare_row, detail::key_bits_below(cols1), &temps);
      Kokkos::parallel_for(
          "kspmv::evc_hyb::length_keys", policy(space, 0, n),
          KOKKOS_LAMBDA(const std::int64_t p) { key(p) = static_cast<unsigned>(len(row(p))); });
      detail::radix_sort_pairs(space, key, spare_key, row, spare_row, detail::key_bits_below(longest + 1), &temps);
      Kokkos::deep_copy(space, perm, row);
      sorted = true;
    }
  }
  if (!sorted) {
    Kokkos::View<std::int64_t*, M> key(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::evc_hyb::keys")), n);
    const auto rp = a.row_ptr;
    const auto col = a.col_idx;
    Kokkos::parallel_for(
        "kspmv::evc_hyb::sort_keys", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t l = len(i);
          const std::int64_t first = l > 0 ? std::int64_t(col(rp(i))) + 1 : 0;
          key(i) = (by_first ? l * cols1 + first : l) * rows + i;
        });
    space.fence();
    if (n > 0) Kokkos::sort(key);
    Kokkos::fence();
    Kokkos::parallel_for(
        "kspmv::evc_hyb::order", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { perm(i) = static_cast<int>(key(i) % rows); });
  }
  // The plan is made on the device and read back in one copy: how many
  // rows hold at most `split` entries (the sub-ELL part takes whole slices
  // of them; a reduction), each sub-ELL slice's width (its last, longest
  // row), and for the vector-CSR part its rows' offsets, each row padded to
  // a multiple of 32 (a scan that stays on the device), where each of its
  // threads-per-row classes ends and its total slots. So O(n / 32) numbers
  // come to the host and no loop over the vector-CSR rows runs there
  // (300,000 rows of 129 entries: 5 ms of host plan and a 1.7 ms upload of
  // their offsets on an H200 machine).
  const int split = d.split;
  std::int64_t short_rows = 0;
  Kokkos::parallel_reduce(
      "kspmv::evc_hyb::short_rows", policy(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& count) { count += len(i) <= split ? 1 : 0; }, short_rows);
  const int isplit = static_cast<int>(short_rows / 32 * 32);
  const std::int64_t nslices = isplit / 32, ncsr = n - isplit;
  const auto csr_row_ptr = arrays.template take<int>("kspmv::evc_hyb::csr_row_ptr", ncsr + 1);
  // plan: [slice widths (nslices) | class ends (kTprClasses, 0 where a class
  // has no rows) | vector-CSR slots, as their value over 2^31 and the rest];
  // 4-byte ints, as the lengths and the positions are.
  std::vector<int> plan(static_cast<std::size_t>(nslices + kTprClasses + 2));
  {
    detail::ScratchSet<ExecSpace> temps(space);
    const auto plan_d = temps.template take<int>("kspmv::evc_hyb::plan", plan.size());
    Kokkos::parallel_for(
        "kspmv::evc_hyb::slice_widths", policy(space, 0, nslices + kTprClasses), KOKKOS_LAMBDA(const std::int64_t q) {
          plan_d(q) = q < nslices ? static_cast<int>(len(perm(32 * q + 31))) : 0;
        });
    const int first = isplit;
    const std::int64_t ends = nslices;
    kspmv::detail::scan(
        "kspmv::evc_hyb::csr_plan", policy(space, 0, ncsr + 1),
        KOKKOS_LAMBDA(const std::int64_t q, std::int64_t& sum, const bool final) {
          const std::int64_t l = q < ncsr ? len(perm(first + q)) : 0;
          if (final) {
            // Offsets past 2^31 are refused below, before anything reads them.
            csr_row_ptr(q) = static_cast<int>(sum);
            if (q == ncsr) {
              plan_d(ends + kTprClasses) = static_cast<int>(sum >> 31);
              plan_d(ends + kTprClasses + 1) = static_cast<int>(sum & 0x7FFFFFFF);
            } else {
              // Lengths ascend, so a class ends where the next row's differs.
              const int c = tpr_class(tpr_of_row(l, L, 32));
              if (q + 1 == ncsr || tpr_class(tpr_of_row(len(perm(first + q + 1)), L, 32)) != c) plan_d(ends + c) = static_cast<int>(q + 1);
            }
          }
          sum += (l + 31) / 32 * 32;
        }, &temps);
    Kokkos::deep_copy(space, detail::unmanaged_host<int>(plan.data(), plan.size()), plan_d);
    space.fence();
  }
  const std::int64_t csr_slots = std::int64_t(plan[plan.size() - 2]) << 31 | plan.back();
  if (csr_slots > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("evc-hyb: the vector-CSR part needs " + std::to_string(csr_slots) +
                                " slots, more than its 32-bit offsets hold");
  // Each class's rows: its end less the end of the class before it.
  std::vector<std::int64_t> rows_of_class(kTprClasses, 0);
  for (std::int64_t c = 0, before = 0; c < kTprClasses; ++c) {
    const std::int64_t end = plan[static_cast<std::size_t>(nslices + c)];
    if (end == 0) continue;
    rows_of_class[static_cast<std::size_t>(c)] = end - before;
    before = end;
  }
  // sub-ELL blocks: runs of 32-row slices of equal width (the slice's last row).
  std::vector<EvcEllBlock> blocks;
  std::vector<int> slice_block;
  std::int64_t slots = 0;
  for (int s = 0; s < isplit; s += 32) {
    const int w = plan[static_cast<std::size_t>(s / 32)];
    if (!blocks.empty() && blocks.back().width == w) {
      blocks.back().rows += 32;
    } else {
      blocks.push_back({s, 32, w, 0, 0, 0, 1});
    }
    slice_block.push_back(static_cast<int>(blocks.size()) - 1);
  }
  int lr_max = 0;
  for (auto& b : blocks) {
    b.offset = static_cast<int>(slots);
    slots += static_cast<std::int64_t>(b.rows) * b.width;
    if (slots > std::numeric_limits<int>::max())
      throw FormatCannotHoldError("evc-hyb: the sub-ELL part needs " + std::to_string(slots) +
                                  "+ slots, more than its 32-bit offsets hold");
    lr_max = std::max(lr_max, b.width);
  }
  // Rows per thread: 1 for widths in (LRmax/2, LRmax], 2 for (LRmax/4,
  // LRmax/2], ...; capped so the part keeps about as many threads busy as
  // the device runs at once (the paper's K20X ran 30K, an H100 270K).
  const int cap = opt.evc_rows_per_thread > 0 ? opt.evc_rows_per_thread
                                              : static_cast<int>(std::max<std::int64_t>(1, isplit / concurrency));
  // Lanes per row: with fewer rows than lanes on the device, a row of w
  // slots gets up to w / 4 lanes (a power of two, at most the spare lanes
  // per row and a warp), so each lane's chain is a step of four slots.
  const int lane_cap = opt.evc_rows_per_thread == 0 ? evc_lane_cap(isplit, concurrency) : 1;
  int team = 0;
  for (auto& b : blocks) {
    int rpt = 1;
    const int lanes = opt.evc_ell_lanes > 0 ? opt.evc_ell_lanes : evc_lanes_for_width(b.width, lane_cap);
    if (lanes == 1)
      while (rpt < cap && static_cast<std::int64_t>(b.width) * rpt * 2 <= lr_max) rpt *= 2;
    b.lanes = lanes;
    b.first_team = team;
    const std::int64_t rows_per_team = static_cast<std::int64_t>(L / lanes) * rpt;
    b.teams = static_cast<int>((static_cast<std::int64_t>(b.rows) + rows_per_team - 1) / rows_per_team);
    team += b.teams;
    d.report.ell_max_lanes = std::max(d.report.ell_max_lanes, lanes);
  }
  d.ell_teams = team;
  // vector CSR: rows padded to a multiple of 32, a range a threads-per-row class.
  d.host_ranges = tpr_ranges_from_counts(rows_of_class, L);
  d.csr_teams = d.host_ranges.empty() ? 0 : d.host_ranges.back().first_block + d.host_ranges.back().blocks;
  if (static_cast<std::int64_t>(d.ell_teams) + d.csr_teams > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("evc-hyb: too many teams for one launch");
  d.host_blocks = blocks;
  std::vector<int> flat;
  for (const auto& b : blocks)
    flat.insert(flat.end(), {b.row_begin, b.rows, b.width, b.offset, b.first_team, b.teams, b.lanes});
  if (flat.empty()) flat.assign(detail::kEvcBlockInts, 0);
  if (slice_block.empty()) slice_block.push_back(0);
  d.new_to_old = perm;
  d.ell_blocks = arrays.upload(flat, "kspmv::evc_hyb::ell_blocks");
  d.csr_ranges = detail::upload_ranges(arrays, d.host_ranges, "kspmv::evc_hyb::csr_ranges");
  d.csr_row_ptr = csr_row_ptr;
  d.slice_block = arrays.upload(slice_block, "kspmv::evc_hyb::slice_block");
  d.ell_col = arrays.template take_filled<int>("kspmv::evc_hyb::ell_col", slots, -1);
  d.ell_val = arrays.template take_filled<Scalar>("kspmv::evc_hyb::ell_val", slots, Scalar(0));
  // The vector-CSR slots are all written by its fill below, padding included.
  d.csr_col = arrays.template take<int>("kspmv::evc_hyb::csr_col", csr_slots);
  d.csr_val = arrays.template take<Scalar>("kspmv::evc_hyb::csr_val", csr_slots);
  d.longest = longest;
  d.report.isplit = isplit;
  // The entries; padding holds column -1, value 0. The sub-ELL rows along
  // the slot walk, a thread a sorted row (a segment of a long one), so a
  // warp's stores go to neighbouring slots of a block's column.
  if (isplit > 0) {
    const auto walk = detail::slot_walk(d, a.row_ptr);  // lr_max: the widest sub-ELL block
    detail::for_each_row_segment(
        space, "kspmv::evc_hyb::fill", isplit, lr_max, detail::WalkBegin<decltype(walk)>{walk},
        detail::WalkEnd<decltype(walk)>{walk},
        detail::WalkSegment<decltype(walk), detail::EvcHybFill<Scalar, ExecSpace>>{
            walk, {a.col_idx, a.values, d.ell_col, d.ell_val}});
  }
  // The vector-CSR part by visiting its slots (visit_slots): 32 threads (a
  // warp on CUDA) take a run of 32 slots, reading 32 neighbouring entries
  // and writing 32 neighbouring slots, padding included (a thread a
  // 32-entry segment reads and writes 32 entries apart: 5.0 ms against 0.29
  // a warp a row on 300,000 rows of 129 entries in a lab on an H200,
  // docs/perf/h200-evc-fill-lab.cu); a long row is spread over many warps.
  if (csr_slots > 0) {
    const detail::EvcVcsrVisit<ExecSpace> visit{detail::read_only(a.row_ptr), detail::read_only(csr_row_ptr), perm,
                                                ncsr, csr_slots, isplit};
    const detail::EvcVcsrFill<Scalar, ExecSpace> fill{detail::read_only(a.col_idx), detail::read_only(a.values),
                                                      d.csr_col, d.csr_val};
    detail::visit_slots(space, "kspmv::evc_hyb::fill_vcsr", visit, fill, fill);
  }
  // Report: the paper's Table 3 (the roofline waits until asked for).
  d.report.ell_slots = slots;
  d.report.vcsr_slots = csr_slots;
  d.report.padding = slots + csr_slots - a.nnz();
  d.report.ell_blocks = static_cast<int>(blocks.size());
  d.report.csr_ranges = static_cast<int>(d.host_ranges.size());
  // Caller order on the CUDA path: scatter y, or gather it in a second pass
  // when y is large and sorted neighbours mostly sit in different sectors.
  if (d.order == OutputOrder::Caller && detail::on_cuda<ExecSpace>() && d.kernel == KernelPath::Auto) {
    bool gather = opt.evc_caller_y == CallerY::Gather;
    const std::int64_t l2 = device_figures<ExecSpace>().l2_bytes;
    if (opt.evc_caller_y == CallerY::Auto && l2 > 0 &&
        4 * static_cast<std::int64_t>(sizeof(Scalar)) * a.nrows >= l2) {
      std::int64_t apart = 0;
      Kokkos::parallel_reduce(
          "kspmv::evc_hyb::apart", policy(space, 1, n > 1 ? n : 1),
          KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& count) {
            const int step = perm(p) - perm(p - 1);
            count += (step > 4 || step < -4) ? 1 : 0;
          },
          apart);
      gather = 2 * apart > a.nrows;
    }
    if (gather) {
      d.gather_y = true;
      d.old_to_new = arrays.template take<int>("kspmv::evc_hyb::old_to_new", n);
      const auto old_to_new = d.old_to_new;
      Kokkos::parallel_for(
          "kspmv::evc_hyb::old_to_new", policy(space, 0, n),
          KOKKOS_LAMBDA(const std::int64_t p) { old_to_new(perm(p)) = static_cast<int>(p); });
      d.y_sorted = arrays.template take_filled<Scalar>("kspmv::evc_hyb::y_sorted", a.nrows, Scalar(0));
    }
  }
  d.storage = arrays.kept();
  space.fence();
  d.conversion_seconds = timer.seconds();
  return d;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
EvcHybDevice<Scalar, ExecSpace> to_evc_hyb(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_evc_hyb(upload_csr<Scalar, ExecSpace>(a), opt);
}

namespace detail {
// evc_hyb_roofline's figures, made at every call. Its kernels sit in a
// named function, not in call_once's lambda, where CUDA's extended lambdas
// may not be.
template <class Scalar, class ExecSpace>
CodeBalance make_evc_roofline(const EvcHybDevice<Scalar, ExecSpace>& f) {
  ProfilingRegion region("kspmv::evc_hyb::roofline");
  using M = typename ExecSpace::memory_space;
  using HostInts = Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  const std::int64_t n = f.nrows, isplit = f.report.isplit, ell_slots = f.report.ell_slots;
  const int tau = static_cast<int>(sizeof(Scalar));
  const std::int64_t mean = std::max<std::int64_t>(1, f.nnz / std::max<std::int64_t>(1, n));
  const std::int64_t sampled = std::clamp<std::int64_t>(kEvcAlphaEntries / (32 * mean), 1, kEvcAlphaWarps);
  const std::int64_t warps = (n + 31) / 32, stride = std::max<std::int64_t>(1, warps / sampled);
  ExecSpace space;
  // The sampled rows of the vector-CSR part (numbered from 0 there) and
  // their slot ranges, gathered on the device.
  std::vector<int> csr_rows;
  for (std::int64_t w = 0; w < warps; w += stride)
    for (std::int64_t p = std::max(32 * w, isplit); p < std::min(n, 32 * w + 32); ++p)
      csr_rows.push_back(static_cast<int>(p - isplit));
  std::vector<int> csr_range(2 * csr_rows.size());
  if (!csr_rows.empty()) {
    const auto rows_d = upload<int, M>(csr_rows, "kspmv::evc_hyb::roofline_rows");
    Kokkos::View<int*, M> range_d(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::evc_hyb::roofline_ranges")),
        csr_range.size());
    const auto rp = f.csr_row_ptr;
    Kokkos::parallel_for(
        "kspmv::evc_hyb::roofline_ranges", Kokkos::RangePolicy<ExecSpace>(space, 0, std::int64_t(csr_rows.size())),
        KOKKOS_LAMBDA(const std::int64_t q) {
          range_d(2 * q) = rp(rows_d(q));
          range_d(2 * q + 1) = rp(rows_d(q) + 1);
        });
    Kokkos::deep_copy(space, HostInts(csr_range.data(), csr_range.size()), range_d);
    space.fence();
  }
  // Every sampled row's slots in the row's order: column-major in its
  // sub-ELL block (the slot walk's), consecutive in the vector-CSR part
  // (after ell_slots). row_end closes each row, warp_end each warp.
  std::vector<std::int64_t> slots, row_end;
  std::vector<std::size_t> warp_end;
  std::size_t c = 0;
  for (std::int64_t w = 0; w < warps; w += stride) {
    for (std::int64_t p = 32 * w; p < std::min(n, 32 * w + 32); ++p) {
      if (p < isplit) {
        const auto b = std::prev(std::upper_bound(f.host_blocks.begin(), f.host_blocks.end(), p,
                                                  [](std::int64_t q, const EvcEllBlock& e) { return q < e.row_begin; }));
        for (std::int64_t j = 0; j < b->width; ++j) slots.push_back(b->offset + (p - b->row_begin) + j * b->rows);
      } else {
        for (std::int64_t s = csr_range[2 * c]; s < csr_range[2 * c + 1]; ++s) slots.push_back(ell_slots + s);
        ++c;
      }
      row_end.push_back(static_cast<std::int64_t>(slots.size()));
    }
    warp_end.push_back(row_end.size());
  }
  std::vector<int> cols(slots.size());
  if (!slots.empty()) {
    const auto slots_d = upload<std::int64_t, M>(slots, "kspmv::evc_hyb::roofline_slots");
    Kokkos::View<int*, M> cols_d(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::evc_hyb::roofline_cols")),
        slots.size());
    const auto ell_col = f.ell_col, csr_col = f.csr_col;
    Kokkos::parallel_for(
        "kspmv::evc_hyb::roofline_cols", Kokkos::RangePolicy<ExecSpace>(space, 0, std::int64_t(slots.size())),
        KOKKOS_LAMBDA(const std::int64_t q) {
          const std::int64_t s = slots_d(q);
          cols_d(q) = s < ell_slots ? ell_col(s) : csr_col(s - ell_slots);
        });
    Kokkos::deep_copy(space, HostInts(cols.data(), cols.size()), cols_d);
    space.fence();
  }
  // A warp's sectors counted by a hash set, a row's repeats left out as
  // they come (sorting each warp's list took 30-100 ms on 30 entries a
  // row); padding (column -1) is no entry.
  const std::int64_t per_sector = std::max(1, 32 / tau);
  std::int64_t sectors = 0, entries = 0, k = 0;
  std::size_t r = 0;
  std::vector<std::int64_t> sec;
  DistinctCounter distinct;
  for (const std::size_t end : warp_end) {
    sec.clear();
    for (; r < end; ++r) {
      std::int64_t last = -1;
      for (; k < row_end[r]; ++k) {
        const int col = cols[static_cast<std::size_t>(k)];
        if (col < 0) continue;
        const std::int64_t sector = col / per_sector;
        if (sector != last) sec.push_back(sector);
        last = sector;
        ++entries;
      }
    }
    sectors += distinct.count(sec);
  }
  const double alpha = entries > 0 ? double(sectors) * 32.0 / (double(tau) * double(entries)) : 0.0;
  return code_balance(f.nnz, f.report.ell_slots + f.report.vcsr_slots, f.nrows, tau, alpha);
}
}  // namespace detail

// evc-hyb §3.2's roofline of f. alpha comes from up to kEvcAlphaWarps warps
// of the sorted order (fewer where rows are long), spread evenly (every
// warp where there are fewer), their columns read from f's own slots, so
// no CSR is needed. Made at the first call (two small kernels, two copies,
// host work bounded by kEvcAlphaEntries) and kept for f and its copies.
template <class Scalar, class ExecSpace>
CodeBalance evc_hyb_roofline(const EvcHybDevice<Scalar, ExecSpace>& f) {
  std::call_once(f.roofline->made, [&f] { f.roofline->value = detail::make_evc_roofline(f); });
  return f.roofline->value;
}

// evc-hyb §3.3's time profile: the product run with x constant (neither x
// nor the column indices loaded; y = alpha·A·1), A constant (no values
// loaded; y = alpha·pattern(A)·x) or both (y = alpha·stored slots per row):
// T_A + T_Y, T_X + T_Y and T_Y. A measurement tool, not an SpMV.
enum class EvcProfile { Full = 0, ConstX = 1, ConstA = 2, ConstAX = 3 };

namespace detail {

// One stored slot's term in profile mode P (padding: column -1, value 0).
template <int P, class ColView, class ValView, class XView>
KOKKOS_INLINE_FUNCTION typename ValView::non_const_value_type evc_term(const ColView& col, const ValView& val,
                                                                      const XView& x, long k) {
  using S = typename ValView::non_const_value_type;
  if constexpr (P == 1) return val(k);
  if constexpr (P == 3) return S(1);
  const int c = col(k);
  if constexpr (P == 2) return c >= 0 ? S(x(c)) : S(0);
  return c >= 0 ? S(val(k) * x(c)) : S(0);
}

template <int P, class Scalar, class ExecSpace, class XView, class YView>
void evc_hyb_apply(const ExecSpace& space, Scalar alpha, const EvcHybDevice<Scalar, ExecSpace>& A, const XView& x,
                   Scalar beta, const YView& y) {
  if (detail::spmv_prologue(space, "evc-hyb", A.nrows, A.ncols, alpha, x, beta, y)) return;
  const bool caller = A.order == OutputOrder::Caller;
  const int isplit = static_cast<int>(A.report.isplit);
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && detail::contiguous(x, y)) {
      // Caller order: scattered through new_to_old by the product itself, or
      // (gather_y) the sorted results into y_sorted, then the gather pass.
      const bool gather = caller && A.gather_y, scatter = caller && !A.gather_y;
      const cuda_tuned::AdaptiveRows<Scalar> csr{static_cast<int>(A.host_ranges.size()),
                                           reinterpret_cast<const int4*>(A.csr_ranges.data()),
                                           nullptr,
                                           A.csr_row_ptr.data(),
                                           A.csr_col.data(),
                                           A.csr_val.data(),
                                           scatter ? A.new_to_old.data() + isplit : nullptr,
                                           isplit};
      cuda_tuned::evc_hyb_spmv(space.cuda_stream(), static_cast<int>(A.host_blocks.size()), A.ell_blocks.data(),
                         A.ell_col.data(), A.ell_val.data(), A.ell_teams, csr, A.csr_teams,
                         scatter ? A.new_to_old.data() : nullptr, gather ? Scalar(1) : alpha, x.data(),
                         gather ? Scalar(0) : beta, gather ? A.y_sorted.data() : y.data(), P);
      if (gather)
        cuda_tuned::gather_y(space.cuda_stream(), A.nrows, A.old_to_new.data(), A.y_sorted.data(), alpha, beta, y.data());
      return;
    }
  }
#endif
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  constexpr int L = EvcHybDevice<Scalar, ExecSpace>::team_lanes;
  const bool host = detail::is_host_space<ExecSpace>();
  const int team_size = host ? 1 : L / 32, vl = host ? 1 : 32;
  const int nblocks = static_cast<int>(A.host_blocks.size()), nranges = static_cast<int>(A.host_ranges.size());
  const int ell_teams = A.ell_teams;
  const auto blocks = A.ell_blocks;
  const auto ecol = A.ell_col;
  const auto eval = A.ell_val;
  const auto ranges = A.csr_ranges;
  const auto cptr = A.csr_row_ptr;
  const auto ccol = A.csr_col;
  const auto cval = A.csr_val;
  const auto perm = A.new_to_old;
  auto y_index = [=] KOKKOS_FUNCTION(int sorted_row) { return caller ? perm(sorted_row) : sorted_row; };
  Kokkos::parallel_for(
      "kspmv::evc_hyb", policy(space, ell_teams + A.csr_teams, team_size, vl), KOKKOS_LAMBDA(const member& t) {
        const int team = t.league_rank();
        if (team < ell_teams) {
          // sub-ELL: the block holding this team (binary search on first_team).
          constexpr int B = detail::kEvcBlockInts;
          int lo = 0, hi = nblocks - 1;
          while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (blocks(B * mid + 4) <= team) lo = mid;
            else hi = mid - 1;
          }
          const int row_begin = blocks(B * lo), rows = blocks(B * lo + 1), width = blocks(B * lo + 2);
          const int offset = blocks(B * lo + 3), first = blocks(B * lo + 4), teams = blocks(B * lo + 5);
          // A team covers L / lanes rows a step; here one lane takes each
          // whole row (the shared-row split is the CUDA path's).
          const int step = L / blocks(B * lo + 6);
          const int stride = teams * step;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, team_size), [&](const int tr) {
            Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, vl), [&](const int v) {
              // On host (1 x 1 teams) the team's lanes run one after another.
              for (int g = tr * vl + v; g < step; g += team_size * vl) {
                for (int r = (team - first) * step + g; r < rows; r += stride) {
                  Scalar sum = 0;
                  for (int k = 0; k < width; ++k) {
                    if (P == 0) {  // not constexpr: nvcc lambdas cannot first-capture there
                      const int c = ecol(offset + k * rows + r);
                      if (c < 0) break;
                      sum += eval(offset + k * rows + r) * x(c);
                    } else {
                      sum += evc_term<P>(ecol, eval, x, offset + long(k) * rows + r);
                    }
                  }
                  detail::combine_y(y, y_index(row_begin + r), alpha, sum, beta);
                }
              }
            });
          });
        } else {
          // vector CSR: the range holding this team, tpr lanes per row.
          const int block = team - ell_teams;
          int b = 0;
          while (b + 1 < nranges && block >= ranges(4 * (b + 1) + 3)) ++b;
          const int begin = ranges(4 * b), end = ranges(4 * b + 1), tpr = ranges(4 * b + 2);
          const int first_row = begin + (block - ranges(4 * b + 3)) * (L / tpr);
          const int last_row = first_row + L / tpr < end ? first_row + L / tpr : end;
          if (tpr <= 32) {
            Kokkos::parallel_for(Kokkos::TeamThreadRange(t, first_row, last_row), [&](const int i) {
              Scalar sum = 0;
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(t, cptr(i), cptr(i + 1)),
                  [&](const int k, Scalar& s) {
                    if (P == 0) {  // not constexpr: nvcc lambdas cannot first-capture there
                      const int c = ccol(k);
                      if (c >= 0) s += cval(k) * x(c);
                    } else {
                      s += evc_term<P>(ccol, cval, x, k);
                    }
                  },
                  sum);
              Kokkos::single(Kokkos::PerThread(t), [&]() { detail::combine_y(y, y_index(isplit + i), alpha, sum, beta); });
            });
          } else {
            for (int i = first_row; i < last_row; ++i) {
              Scalar sum = 0;
              Kokkos::parallel_reduce(
                  Kokkos::TeamVectorRange(t, cptr(i), cptr(i + 1)),
                  [&](const int k, Scalar& s) {
                    if (P == 0) {  // not constexpr: nvcc lambdas cannot first-capture there
                      const int c = ccol(k);
                      if (c >= 0) s += cval(k) * x(c);
                    } else {
                      s += evc_term<P>(ccol, cval, x, k);
                    }
                  },
                  sum);
              Kokkos::single(Kokkos::PerTeam(t), [&]() { detail::combine_y(y, y_index(isplit + i), alpha, sum, beta); });
              t.team_barrier();
            }
          }
        }
      });
}

}  // namespace detail

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const EvcHybDevice<Scalar, ExecSpace>& A, const XView& x,
          Scalar beta, const YView& y) {
  detail::evc_hyb_apply<0>(space, alpha, A, x, beta, y);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv_profile(EvcProfile mode, const ExecSpace& space, Scalar alpha, const EvcHybDevice<Scalar, ExecSpace>& A,
                  const XView& x, Scalar beta, const YView& y) {
  switch (mode) {
    case EvcProfile::ConstX: return detail::evc_hyb_apply<1>(space, alpha, A, x, beta, y);
    case EvcProfile::ConstA: return detail::evc_hyb_apply<2>(space, alpha, A, x, beta, y);
    case EvcProfile::ConstAX: return detail::evc_hyb_apply<3>(space, alpha, A, x, beta, y);
    default: return detail::evc_hyb_apply<0>(space, alpha, A, x, beta, y);
  }
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(EvcHybDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.ell_val, f.csr_val);
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const EvcHybDevice<Scalar, ExecSpace>& f) {
  const auto& r = f.report;
  const double slots = double(r.ell_slots + r.vcsr_slots);
  const CodeBalance roofline = evc_hyb_roofline(f);
  char bal[64];
  std::snprintf(bal, sizeof bal, "%.3f (alpha %.3f, beta %.4f)", roofline.balance(), roofline.alpha, roofline.beta);
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"split", std::to_string(f.split)},
          {"isplit", std::to_string(r.isplit)},
          {"nnz_ell", std::to_string(r.ell_slots)},
          {"pct_ell", percent(double(r.ell_slots), slots)},
          {"nnz_vcsr", std::to_string(r.vcsr_slots)},
          {"pct_vcsr", percent(double(r.vcsr_slots), slots)},
          {"pct_padding", percent(double(r.padding), double(f.nnz))},
          {"ell_blocks", std::to_string(r.ell_blocks)},
          {"ell_max_lanes", std::to_string(r.ell_max_lanes)},
          {"csr_ranges", std::to_string(r.csr_ranges)},
          {"code_balance_bytes_per_flop", bal},
          {"order", f.order == OutputOrder::Caller ? (f.gather_y ? "caller (gathered)" : "caller") : "internal"}};
}
}  // namespace detail

namespace detail {
template <class S, class E>
struct has_scratch<EvcHybDevice<S, E>> : std::true_type {};
}  // namespace detail
template <class S, class E>
std::size_t scratch_bytes(const EvcHybDevice<S, E>& f) {
  return f.y_sorted.span() * sizeof(S);
}
template <class S, class E>
EvcHybDevice<S, E> with_own_scratch(const EvcHybDevice<S, E>& f) {
  EvcHybDevice<S, E> c = f;
  c.y_sorted = Kokkos::View<S*, typename E::memory_space>("kspmv::evc_hyb::y_sorted", f.y_sorted.extent(0));
  return c;
}

}  // namespace kspmv
