// The performance model (pmf-model §4-5, extended to every kspmv format).
//
// Two estimators over the same inputs, the PMF of row lengths (row_stats)
// plus a few pattern figures that cost one pass over the matrix:
//
//  - paper_*: the paper's time model, eqs. (21)-(50), term for term: data
//    transfer time DTT (optional, off by default: matrices stay on the
//    device), memory access AM and core time CTC from the stream-processor
//    count C, warp size W, block size BS, memory clock CR and bus width BW.
//    It was made for a 2012 laptop GPU; kept as the paper states it.
//
//  - estimate(): a traffic model for a bandwidth-bound GPU. Each format's
//    storage model (eqs. 15-20 and the same for DIA, ELLR/PELLR, JAD,
//    EVC-HYB, EHYB, SELL-style slices) gives the bytes it moves; x traffic
//    uses evc-hyb §3.2's alpha (from the pattern), padding its beta, and
//    thread-per-row formats pay for the longest row of each warp (pellr's
//    N_iter, eq. 1), CSR's lane groups for their whole groups, and the
//    formats whose lanes walk rows of their own (csr-scalar,
//    csr-adaptive) for the cache lines their warps' loads touch (an SM
//    looks each up: line_ns). Time = fixed cost + max(bytes / (bandwidth *
//    efficiency), the longest serial chain), the fixed cost being the
//    format's measured time on a tiny matrix (its launches, its passes over
//    the vectors' few cache lines) or, uncalibrated, launches * t_launch;
//    bandwidth is the measured
//    copy bandwidth, raised by l2_gain while the working set fits L2 (or,
//    calibrated, each format's own efficiency measured within L2; just
//    past L2, its efficiency on a stencil of that size). The
//    per-format efficiencies come from a quick empirical calibration on
//    the device (calibrate(), kspmv calibrate) or default to 0.8.
//
// pick() is Algorithm 1 over every format; hyb_k() is Algorithm 2.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kspmv/core/format.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/row_stats.hpp"

namespace kspmv {

// Device figures the models need. from_device() reads them at run time;
// a calibration file ("key = value" lines) can hold or override them.
struct ModelHardware {
  std::string name = "unknown";
  // Where these figures came from (default_model(): the file and how it
  // was found, or "uncalibrated defaults"); not part of a calibration file.
  std::string source = "uncalibrated defaults";
  double bandwidth_gbs = 1000;  // copy bandwidth, bytes read + written per second / 1e9
  std::int64_t l2_bytes = 50'000'000;
  int processors = 132;         // SMs
  int cores = 132 * 64;         // C: stream processors (paper)
  int warp = 32;                // W
  int block = 256;              // BS
  double memory_clock_ghz = 1.6;  // CR (paper)
  int bus_width_bits = 5120;      // BW (paper)
  double core_clock_ghz = 1.98;
  double pcie_gbs = 25;           // B (paper's DTT, off by default)
  // Traffic-model constants, set by calibrate() (defaults: uncalibrated).
  double launch_us = 4.0;       // one kernel launch, back to back
  double l2_gain = 1.8;         // bandwidth multiple while the working set fits L2
  double serial_ns = 25;        // one element of a lane's serial chain
  // Per format name: one SpMV of a tiny matrix, us (launches and fixed
  // passes), on the device alone where calibrate() could time it so;
  // launches * launch_us where absent.
  std::map<std::string, double> fixed_us;
  // Per format name: the host's cost to queue one SpMV, us. SpMVs run back
  // to back take at least this long each (the device waits on the host);
  // no floor where absent (host spaces, older calibration files, whose
  // fixed_us were timed on the host and hold it already).
  std::map<std::string, double> host_us;
  // Per format name: bandwidth efficiency on regular matrices (row-length
  // coefficient of variation <= 0.3) and on irregular ones (>= 1), log-
  // interpolated between; 0.8 where absent.
  std::map<std::string, double> efficiency, efficiency_irregular;
  // Per format name: the same while the working set fits L2, against the
  // copy bandwidth (measured on a stencil and a power-law graph of about
  // a fifth of L2); where absent, l2_gain x efficiency.
  std::map<std::string, double> efficiency_l2, efficiency_l2_irregular;
  // Per format name: the bandwidth efficiency on a 3D stencil just past
  // L2 (CSR bytes near_bytes), where the formats whose lanes walk their
  // own rows (csr-scalar, csr-adaptive) find the lines L1 dropped still
  // in L2: 1.4-1.8x faster per byte than on the stencil behind
  // `efficiency` (CSR bytes far_bytes), whose refetches come from DRAM.
  // Between the two sizes a matrix's DRAM efficiency moves
  // from near to far (log-linear in its CSR bytes), as a factor
  // efficiency_near / efficiency on its own; none where absent.
  std::map<std::string, double> efficiency_near;
  double near_bytes = 0, far_bytes = 0;  // CSR bytes of those two stencils
  // Per format name: ns per element of a lane's serial chain while the
  // matrix fits L2 and past it (measured with one lane walking a long row
  // alone; past L2 each step is a DRAM round trip for the formats whose
  // lane strides through a column-major layout); serial_ns where absent.
  std::map<std::string, double> chain_ns, chain_dram_ns;
  // Per format name: ns an SM spends on each 128-byte line its warps'
  // loads touch, one load at a time (a warp's load whose lanes fall in k
  // lines costs the SM k line lookups). Only csr-scalar, whose 32 lanes
  // each walk a row of their own, touches up to 32 lines a load: its SMs'
  // line time (PatternStats::scalar_lines) adds to its longest row's
  // chain. Measured on rows of 27 columns in a band within L2, 16 warps an
  // SM (calibrate()); absent, no line term. A crowd chain (crowd_ns) that
  // priced every warp's longest row at the crowd's per-row time whatever
  // the number of warps was 1.3-2.2x high on the small real matrices.
  std::map<std::string, double> line_ns;
  // Per format name: its conversion's fixed cost (us) and cost per
  // nonzero (ns), and a refresh (update_values) in SpMVs of the format;
  // where absent, setup_defaults() (measured on the H100 node).
  std::map<std::string, double> setup_us, setup_ns_per_nnz, refresh_spmvs;
  bool calibrated = false;
};

// Figures of a matrix beyond the PMF, one pass each.
struct PatternStats {
  RowLengthStats rows;              // the PMF and its moments
  double alpha = 1;                 // evc-hyb §3.2 x reuse, rows in the caller's order
  double alpha_ascending = 1;       // the same, rows stably sorted by ascending length (csr-adaptive, EVC-HYB)
  double sorted_row_sector_bytes = 0;  // csr-adaptive's row_ptr, column, value and y bytes in whole sectors, that order
  std::int64_t diagonals = 0;       // distinct j - i
  WarpIterations caller_warps;      // pellr eqs. 1-2 over 32-row warps in the caller's order
  std::int64_t ehyb_window = 0;     // rows per EHYB part assumed
  double ehyb_in_part = 0;          // fraction of entries inside balls of about that many rows (part_balls.hpp)
  double pkt_in_packet = 0;         // the same for PKT's default packets (pkt_default_rows)
  std::int64_t pkt_longest_in_packet = 0;  // most in-packet entries of one row (a PKT thread owns whole rows)
  // csr-scalar's warps (32 consecutive rows, a lane each): the 128-byte
  // lines of column indices, values and x each load step touches, summed
  // over steps and warps.
  double scalar_lines = 0;
  // The same for csr-adaptive's warps: rows sorted by ascending length, a
  // range's threads per row each (tpr_ranges).
  double adaptive_lines = 0;
};
// max_entries > 0: the per-warp figures (alpha, alpha_ascending,
// sorted_row_sector_bytes, scalar_lines, adaptive_lines) read a sample of
// warps holding about that many entries times the square of the row
// lengths' coefficient of variation, kept within [1/4, 1] (regular rows
// need fewer for the same error), weighted to stand for the rest (every
// warp where the matrix holds no more); 0 reads every warp. The row
// lengths and the figures counted over entries are always exact.
template <class Scalar>
PatternStats pattern_stats(const HostCsr<Scalar>& a, int scalar_bytes, std::int64_t ehyb_window = 7000,
                           std::int64_t max_entries = 0);

// The rows per EHYB part the model assumes on `hw`: ehyb_min_parts_per_sm
// parts per processor, at least a slice.
std::int64_t model_ehyb_window(std::int64_t nrows, const ModelHardware& hw);
template <class Scalar>
PatternStats pattern_stats(const HostCsr<Scalar>& a, int scalar_bytes, const ModelHardware& hw,
                           std::int64_t max_entries = 0) {
  return pattern_stats(a, scalar_bytes, model_ehyb_window(a.nrows, hw), max_entries);
}

// A matrix pattern_stats reads without holding it: one on a device
// (device_pattern_stats.hpp fills this in with kernels there). What the
// host gets is a few figures per 32-row warp at most, never one per row or
// entry: the histogram of row lengths, the entries of each warp, the
// figures counted over every entry, and a way to fetch the few rows the
// per-warp figures sample.
// The figures a PatternSource counts over every entry.
struct EntryCounts {
  std::int64_t diagonals = 0;          // distinct j - i
  std::int64_t in_ball = 0;            // entries whose row and column share a ball of ehyb_window rows (part_balls.hpp)
  std::int64_t in_packet = 0;          // the same for pkt_default_rows
  std::int64_t longest_in_packet = 0;  // most in-packet entries of one row
};
struct PatternSource {
  std::int64_t nrows = 0, ncols = 0;
  std::vector<std::int64_t> length_counts;  // [l]: rows of exactly l entries
  WarpIterations caller_warps;              // pellr eqs. 1-2, 32-row warps in the caller's order
  std::vector<double> warp_entries;         // entries of each 32-row warp, the caller's order
  std::int64_t ehyb_window = 1;             // rows per EHYB part assumed (model_ehyb_window)
  EntryCounts counts;
  // The rows at `positions`, in that order: positions[q] for q <
  // first_ascending in the caller's order, the rest in the ascending-length
  // order (rows of one length in their own order, as rows_by_length).
  std::function<void(const std::vector<std::int64_t>& positions, std::size_t first_ascending, SampledRows& out)>
      fetch_rows;
  // Where set, the counts come from here instead of `counts`, asked for
  // once the per-warp figures are taken: a source that counts
  // asynchronously (a device's kernels, launched after fetch_rows) does so
  // while the host takes them, and waits here.
  std::function<EntryCounts()> await_counts;
};
PatternStats pattern_stats(const PatternSource& src, int scalar_bytes, std::int64_t max_entries);
namespace detail {
// pattern_stats(src, ...) with each per-warp figure of a pick cut into
// host tasks of about run_positions positions (pattern_stats: 1,024). The
// figures are the same to the bit whatever the cut; the tests check it.
PatternStats pattern_stats_in_runs(const PatternSource& src, int scalar_bytes, std::int64_t max_entries,
                                   std::size_t run_positions);
}  // namespace detail

struct FormatEstimate {
  Format format;
  double seconds = 0;        // traffic model
  double bytes = 0;          // bytes moved per SpMV (model)
  double chain_seconds = 0;  // the longest serial chain of one lane (csr-scalar: plus its SM's line time)
  double chain_elements = 0; // its length in elements (the format's own steps)
  double fixed_seconds = 0;  // the part of `seconds` that does not scale with the matrix
  double host_seconds = 0;   // the host's cost to queue it: a floor under `seconds`
  double storage_bytes = 0;  // the format's storage (model)
  double padding = 0;        // stored slots / nnz - 1
  int launches = 1;
  double setup_seconds = 0;    // the conversion from a device CSR (model)
  double refresh_seconds = 0;  // one update_values (model)
  bool feasible = true;      // false: the conversion would refuse (fill, shape)
  std::string note;
};

// Traffic-model estimate of one format (hyb_k < 0: the 1/3 rule).
FormatEstimate estimate(Format f, const PatternStats& s, int scalar_bytes, const ModelHardware& hw,
                        double max_fill = 3.0, std::int64_t hyb_k = -1);
// The fixed part of an estimate: the format's calibrated tiny-matrix time
// (plus a launch for each launch the tiny matrix did not need), else
// launches * launch_us.
double fixed_seconds(const ModelHardware& hw, Format f, int launches);
// The host's cost to queue one SpMV of format f with `launches` launches:
// its calibrated host_us (plus csr-vector's for each launch the tiny matrix
// did not need), else 0.
double host_seconds(const ModelHardware& hw, Format f, int launches);
// Every format of known_formats(), fastest first.
std::vector<FormatEstimate> estimate_all(const PatternStats& s, int scalar_bytes, const ModelHardware& hw,
                                         double max_fill = 3.0);
// Algorithm 1: the format with the smallest estimate (feasible ones only).
Format pick(const PatternStats& s, int scalar_bytes, const ModelHardware& hw, double max_fill = 3.0);

// What a solve loop pays per value refresh with format e: its set-up once,
// a refresh, and expected_applies SpMVs (set-up counted whole: a matrix
// refreshed many times amortises it further, and a larger
// expected_applies says so).
double loop_seconds(const FormatEstimate& e, double expected_applies);
// Every format, cheapest loop first (infeasible last; kk-crs, the
// baseline, left out): the candidates `auto` converts and times.
std::vector<FormatEstimate> rank_for_loop(const PatternStats& s, int scalar_bytes, const ModelHardware& hw,
                                          double max_fill, double expected_applies);

// The spread auto allows the model when it decides whether timing one more
// candidate can pay: the standard deviation of ln(measured / estimated)
// SpMV time of one format against another on one matrix, after the
// estimates are scaled by the first candidate's measured/estimated ratio.
// (On matrices the model never saw, 62-88% of its estimates fall within
// 20%: docs/PERFORMANCE.md.)
inline constexpr double kModelSpread = 0.3;

// What timing a candidate is expected to save over `applies` SpMVs: best
// the fastest SpMV measured so far, estimate the candidate's (scaled as
// above), the ratio of its true time to the estimate lognormal with the
// given spread. The saving of a product is best - true time where that is
// positive; with d = ln(estimate / best), its expectation is about
// best x (spread x phi(d / spread) - d x Phi(-d / spread)). Auto times a
// candidate only where this exceeds the candidate's conversion and trial.
double expected_trial_saving(double applies, double best_seconds, double estimate_seconds,
                             double spread = kModelSpread);

// What keeping a candidate auto has converted and timed costs from then
// on: a refresh and `applies` SpMVs. Its conversion is left out: once made
// it is paid whichever candidate is kept, so counting it would drop a
// faster format for one that was only cheaper to build (ehyb's 29.5 us
// SpMV for pellr's 32.0 on an RCM-ordered mesh, docs/PERFORMANCE.md). A
// conversion counts before it is made, in whether to make it:
// expected_trial_saving against the conversion and the trial.
inline double loop_once_converted(double applies, double spmv_seconds, double refresh_seconds) {
  return refresh_seconds + applies * spmv_seconds;
}

// The least time any format's SpMV takes on this device, whatever the
// matrix: over every format of known_formats() (kk-crs, the baseline, left
// out), its tiny-matrix figure or the host's cost to queue it, whichever is
// larger (estimate() prices no SpMV below either).
double least_spmv_seconds(const ModelHardware& hw);

// Format f's SpMV from the CSR's size alone, before any pattern figure:
// its tiny-matrix figure plus the CSR's bytes (values, column indices,
// offsets, x and y) at its efficiency on regular rows (in L2 where they
// fit), and no less than the host's cost to queue it. For deciding
// whether a trial is worth making, not for ranking.
double bytes_only_estimate(const ModelHardware& hw, Format f, std::int64_t nrows, std::int64_t ncols,
                           std::int64_t nnz, int scalar_bytes);

// The least the pattern figures cost auto on a device: the 17 small real
// matrices of perf_tests/suites/small-real.txt (under 1.2M nonzeros) took
// 1.0-2.7 ms each on an H200 (the device's waits and the host's per-warp
// figures; more on larger matrices).
inline constexpr double kLeastFiguresSeconds = 1.0e-3;

// Whether ranking can pay where one format was converted and timed
// already: SpMVs of `measured` seconds, expected_applies of them, against
// the least any format takes (least_spmv_seconds) can save at most
// applies x (measured - least); ranking costs at least the pattern
// figures (kLeastFiguresSeconds) and one more conversion and trial like
// the one just made (`converted` seconds). `saving` and `cost` get both
// sides. Where saving <= cost auto keeps the measured format unranked.
bool ranking_can_pay(double applies, double measured, double least, double converted, double* saving = nullptr,
                     double* cost = nullptr);

// The conversion's cost where no calibration gives it: fixed us, ns per
// nonzero, and a refresh in SpMVs (H100 node, device conversions,
// kspmv_perf set-up runs on the FEM and large suites).
struct SetupDefaults {
  double fixed_us, ns_per_nnz, refresh_spmvs;
};
SetupDefaults setup_defaults(Format f);

// The paper's equations (seconds). transfer: add DTT (eqs. 25, 31, 38, 45).
struct PaperEstimate {
  double coo = 0, csr = 0, ell = 0, hyb = 0;
  std::int64_t hyb_k = 0;
};
double paper_coo(const RowLengthStats& s, int scalar_bytes, const ModelHardware& hw, bool transfer = false);
double paper_csr(const RowLengthStats& s, int scalar_bytes, const ModelHardware& hw, bool transfer = false);
double paper_ell(const RowLengthStats& s, int scalar_bytes, const ModelHardware& hw, bool transfer = false);
double paper_hyb(const RowLengthStats& s, std::int64_t K, int scalar_bytes, const ModelHardware& hw,
                 bool transfer = false);
// Algorithm 2: K in [E(X), max row length] minimising eq. (50).
std::int64_t paper_hyb_k(const RowLengthStats& s, int scalar_bytes, const ModelHardware& hw, bool transfer = false);
// The same search over the traffic model's HYB estimate, from K = 0 (a
// mean inflated by a few long rows would put the best K below E(X)).
std::int64_t model_hyb_k(const PatternStats& s, int scalar_bytes, const ModelHardware& hw);

// ns per chain element of format f (working set within L2 or past it).
double chain_ns_of(const ModelHardware& hw, Format f, bool in_l2);
// ns an SM spends per line its warps' loads touch, format f (0: no figure).
double line_ns_of(const ModelHardware& hw, Format f);

// Calibration files: "key = value" lines, '#' comments; fixed_us.FORMAT,
// host_us.FORMAT,
// efficiency.FORMAT, efficiency_irregular.FORMAT, efficiency_l2.FORMAT,
// efficiency_l2_irregular.FORMAT, chain_ns.FORMAT, chain_dram_ns.FORMAT and
// line_ns.FORMAT. crowd_ns.FORMAT and crowd_scattered_ns.FORMAT, which
// older files hold, are read and ignored (no longer part of the model).
ModelHardware read_calibration(const std::string& path, ModelHardware base = {});
void write_calibration(const std::string& path, const ModelHardware& hw);
// The calibration Format::Auto and hyb_k = auto use: set_default_model(),
// else the file find_calibration() finds for the default execution space's
// device ($KSPMV_CALIBRATION, the user's cache, an installed one), else the
// uncalibrated defaults. ModelHardware::source says which.
const ModelHardware& default_model();
void set_default_model(const ModelHardware& hw);

}  // namespace kspmv
