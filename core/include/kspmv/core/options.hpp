// Options shared by every format's conversion.
#pragma once

#include <cstdint>

#include "kspmv/core/format.hpp"
#include "kspmv/core/progress.hpp"

namespace kspmv {

// Formats that reorder rows compute y in their internal order. By default
// they hand y back in the caller's order; solvers that stay permuted for a
// whole solve ask for Internal and use the format's permutation themselves.
enum class OutputOrder { Caller, Internal };

// Which kernel a format runs: the hand-tuned CUDA one where it exists and
// the execution space is CUDA (Auto), or always the portable TeamPolicy
// kernel (Portable: what the tests compare the tuned kernels against).
enum class KernelPath { Auto, Portable };

// How PKT and EHYB partition rows.
// Auto: for their builds from a device CSR (what kspmv::Matrix does),
// Cells; for a HostCsr given to to_ehyb or to_pkt, METIS
// when kspmv was built with it and it finishes within
// ConvertOptions::partition_budget_seconds, else parts grown breadth-first
// (EHYB; PKT without METIS: contiguous). Reported in the format's
// properties (partitioner, partition_note), never silent.
// Rcm: reverse Cuthill-McKee order, then contiguous blocks. Bfs: parts
// grown breadth-first over the graph, each from the last one's frontier.
// Cells: small balls of rows grown on the matrix's execution space, joined
// into parts (kspmv/core/device_partition.hpp): milliseconds on a GPU where
// METIS takes seconds, for a few points of the in-part share.
enum class Partitioner { Auto, Metis, Contiguous, Rcm, Bfs, Cells };

// Whether PELLR sorts its rows by length. Auto: only where sorting cuts the
// warp iterations N_iter (pellr eq. 1) by at least 5% (pellr_should_sort);
// elsewhere (stencils, FEM meshes: nearly equal rows) the sort buys nothing
// and costs x locality and a permuted y.
enum class RowSort { Auto, Always, Never };

// EHYB's extra-row entries. Inline: beside each 32-row slice, column-major
// and padded to its widest row where ehyb_padded_fill of those slots hold
// entries, else packed row after row; every row keeps a 16-bit count (so
// at most kEhybInlineMaxRowExtra a row); the row's lane sums them before it
// writes y once. Separate: the paper's ER slices sorted by count, a second pass
// adding into y through yIdxER. Auto: inline up to kEhybInlineMaxNnz
// nonzeros where the counts fit, separate beyond. (Measured on
// the H100 with a padded inline layout: inline 4-13% faster on
// all seven FEM and stencil matrices of 5M-56M nonzeros, separate 5% and
// 18% faster on the two of 104M and 116M.)
enum class ErLayout { Auto, Inline, Separate };
constexpr std::int64_t kEhybInlineMaxNnz = 64'000'000;
constexpr std::int64_t kEhybInlineMaxRowExtra = 65535;

// How a row-sorting format's CUDA kernel returns y in the caller's order
// (EVC-HYB): Scatter writes each row's result through the permutation;
// Gather writes the sorted results to a workspace of nrows scalars held by
// the matrix, then a second pass reads them through the inverse
// permutation and writes y in order. Scattered 8-byte stores leave L2
// sectors partly written; while y is small next to L2 they are completed
// there, on a large y they go back to DRAM half-filled. Auto: Gather when y
// takes at least a quarter of L2 and most sorted neighbours land in
// different sectors (H100: powerlaw-2M's 16 MB y 0.87 -> 0.90x cuSPARSE;
// rmat-20's 8 MB y lost 6% with it, so it scatters). Two SpMVs with one
// such matrix at once on two streams each need a kspmv::SpmvHandle (the
// handle holds a workspace of its own).
enum class CallerY { Auto, Scatter, Gather };

// When a Matrix builds A^T, the matrix that mode "T" of kspmv::spmv applies
// (built on the device from A's pattern: docs/ARCHITECTURE.md).
// OnFirstUse: at the first "T" apply; the matrix keeps A's pattern on the
// device until then (the caller's views where it came from device views,
// else a copy: 4 bytes a nonzero and 8 a row). AtConversion: at once, in
// convert(). Never: keeps nothing; "T" is an UnsupportedError.
enum class TransposeBuild { OnFirstUse, AtConversion, Never };

constexpr std::int64_t kHybKOneThird = -1, kHybKModel = -2, kHybKPaper = -3;

struct ConvertOptions {
  OutputOrder output_order = OutputOrder::Caller;
  KernelPath kernel = KernelPath::Auto;
  // Lanes (threads) per row for CSR-like kernels; 0 chooses from the mean
  // row length. Must be a power of two <= 32 on CUDA.
  int vector_length = 0;
  // DIA and ELL refuse a matrix when their padded storage would exceed
  // max_fill times the number of nonzeros.
  double max_fill = 3.0;
  // HYB's ELL width K >= 0, or how to choose it: kHybKOneThird (Bell &
  // Garland's rule: add column K while at least a third of the rows have K
  // or more entries), kHybKModel (pmf-model Algorithm 2 over the traffic
  // model), kHybKPaper (Algorithm 2 over the paper's eq. 50).
  std::int64_t hyb_k = -1;
  // PKT: partitioner, and rows per packet (0 = as many as team scratch
  // holds for x and y).
  Partitioner partitioner = Partitioner::Auto;
  int pkt_rows = 0;
  // The most seconds METIS may take (wall clock, host). Measured on a
  // 2-core host: 0.65-3.1 s on FEM meshes of 5-25M entries, 402 s on a 3M-
  // row matrix with random columns. Past it Auto keeps BFS parts (grown
  // meanwhile) and an explicit Metis is a LimitError. 0: no limit, METIS
  // in this process (no fork: docs/ARCHITECTURE.md "Partitioning").
  double partition_budget_seconds = 30;
  // EVC-HYB: rows of at most evc_split entries go to the sub-ELL part (a
  // thread per row), the longer ones to vector CSR (a warp or more per
  // row). 0 = auto: the paper's 128, lowered to 32 x rows / lanes when the
  // matrix has fewer rows than the device has lanes (thread-per-row
  // chains of 128 entries would then leave the device idle).
  int evc_split = 0;
  // EVC-HYB: the most rows one thread takes in the sub-ELL part (0: auto,
  // the paper's 1, 2, 4... by width, capped so the device stays full).
  int evc_rows_per_thread = 0;
  // EVC-HYB: lanes sharing one sub-ELL row (a power of two <= 32; 0: auto,
  // 1 unless the part has fewer rows than the device has lanes, then up
  // to a lane per four slots). The CUDA kernel splits rows; the portable
  // kernel keeps a lane per row and only follows the team layout.
  int evc_ell_lanes = 0;
  // EVC-HYB, caller order, CUDA path: see CallerY.
  CallerY evc_caller_y = CallerY::Auto;
  // csr-merge: merge-path items (row ends + nonzeros) per unit; 0 = auto
  // (merge_unit_items in kspmv/core/adaptive.hpp: enough units to fill the
  // GPU, at most 4 items a thread). On a GPU it is rounded up to whole
  // items per thread of the tuned kernel's 256-thread block, at most 1024.
  std::int64_t merge_unit_items = 0;
  // csr-merge: column panels (merge_column_panels in kspmv/core/adaptive.hpp).
  // Where x outgrows the GPU's L2 its gathers go to memory; split into
  // panels of consecutive columns, each applied as a merge-path CSR of its
  // own (y accumulated panel after panel), a panel's slice of x stays in
  // L2. 0 = auto: panels only on a GPU whose L2 x outgrows, on rows that
  // gather from across x, and not where expected_vectors > 1 (several
  // columns pay a pass over all of Y a panel); 1 = none; N: N panels (at
  // most the column count and kMergeMaxColumnPanels). Products of several
  // columns on a matrix with panels go panel by panel too.
  int merge_column_panels = 0;
  // PELLR: sort rows by length (see RowSort).
  RowSort pellr_sort = RowSort::Auto;
  // EHYB: team scratch (shared memory) per partition for the cached x
  // window, in bytes; 0 = the most one team may use on the device (eqs. 1-2
  // of the paper then give the partition count).
  std::int64_t ehyb_shared_bytes = 0;
  // EHYB on a GPU: at least this many parts per SM (K of eq. 1 raised to
  // it); 1 gives the paper's K. The CUDA kernel gives each part 2048 / N
  // threads (256 to 1024); one part runs 1024 threads with 64 registers
  // each, which walk eight slots a step (the fastest on the H100).
  int ehyb_min_parts_per_sm = 1;
  // EHYB: rows longer than this go whole to a part with a warp or more per
  // row instead of one lane (0: never).
  std::int64_t ehyb_long_row = 256;
  // EHYB: where a row's entries outside its part ("extra rows") go (see
  // ErLayout).
  ErLayout ehyb_er = ErLayout::Auto;
  // EHYB, inline extra rows: a slice keeps them column-major, padded to its
  // widest row (coalesced loads, no count scan), where at least this share
  // of those slots hold entries, else packed row after row. 0: padded
  // wherever a slice has any; above 1: always packed. In [0, 2].
  double ehyb_padded_fill = 0.75;
  // Padded formats (DIA, ELL, ELLR, HYB's ELL) check their storage against
  // the memory available before building it; a budget > 0 caps it further.
  std::int64_t memory_budget_bytes = 0;
  // Keep the value map that Matrix::update_values refreshes through (4
  // bytes a nonzero on the device, none for formats that keep the CSR
  // order). Off: no map, no refresh.
  bool value_map = true;
  // A^T for mode "T" (see TransposeBuild), in transpose_format: Auto takes
  // A's format where A's pattern is symmetric and A's format is built on
  // the device, else lets the model pick among the formats built there, so
  // building A^T never means a host conversion.
  TransposeBuild transpose = TransposeBuild::OnFirstUse;
  Format transpose_format = Format::Auto;
  // Format::Auto: the SpMVs the conversion serves. Auto minimises set-up
  // + refresh + expected_applies x SpMV, so a short solve does not pay
  // for a costly partition. A matrix never refreshed: its whole run; one
  // whose values are refreshed between solves: the SpMVs of all the
  // solves one conversion serves (5 Newton steps of about 100 CG
  // iterations: 500), not one solve's, else a partition that pays over
  // the run looks too dear (docs/PERFORMANCE.md, "The solver example
  // with --applies").
  double expected_applies = 1000;
  // Format::Auto on a device (not on host spaces): convert the model's
  // auto_candidates cheapest formats, time a few SpMVs of each on the
  // matrix itself (and a refresh where it weighs in the loop), keep the
  // cheapest, free the others. Off,
  // or on a host space: the model's first choice.
  bool auto_measure = true;
  int auto_candidates = 3;
  // Format::Auto where it measures, for single vectors: convert csr-vector
  // first (its conversion reads nothing but the CSR) and time it; keep it,
  // ranking nothing, where expected_applies SpMVs at its measured time
  // less the least time any format's SpMV takes on this device (the
  // calibration's per-format floors) save no more than ranking would cost
  // (the pattern figures and one more conversion and trial:
  // ranking_can_pay). That is the small matrices, whose every format runs
  // near the floor. Elsewhere the ranking goes on, csr-vector one of its
  // measured candidates. Off: always rank.
  bool auto_quick = true;
  // Format::Auto: the columns the caller's products take (kspmv::spmv with
  // a rank-2 X of this many columns; 1: single vectors), in [1, 64]. Where
  // auto measures, each candidate is timed on products of that many
  // columns (its fused kernel where the format has one, else column by
  // column), so the pick is the fastest for that width; the model's
  // shortlist is ranked for one vector, and expected_applies counts
  // products of that many columns.
  int expected_vectors = 1;
  // Format::Auto and mode "T"'s pick: the pattern figures that read whole
  // warps (x reuse, the cache lines a warp's loads touch) read a sample of
  // warps holding about this many entries where the row lengths spread
  // widely (their coefficient of variation 1 or more), down to a quarter
  // of it where they are regular (pattern_stats), and weight it to stand
  // for the rest; row lengths and the other figures stay exact.
  // On a device only the sample's rows and 4 bytes a row leave it. 0:
  // read every warp (exact; costs seconds on tens of millions of entries).
  std::int64_t auto_sample_entries = std::int64_t(1) << 18;
  // Format::Auto on a device for which no calibration is found
  // (find_calibration(): $KSPMV_CALIBRATION, the user's cache, an
  // installed one): calibrate the model there first, once, within about
  // this many seconds, and cache it for the next run (progress on a
  // terminal). 0: use the uncalibrated defaults instead.
  double auto_calibrate_seconds = 30;
  ProgressFn progress;  // long conversions report here
};

}  // namespace kspmv
