// kspmv_perf: every format beside Kokkos Kernels and cuSPARSE, against the
// memory roofline, in one Google Benchmark run.
//
//   kspmv_perf [--suite FILE] [--matrices SPEC,...] [--formats F[:opt=v...],...]
//              [--precision double|float|both] [--samples N] [--csv FILE]
//              [--matrix-dir DIR] [--calibrate SECONDS | --calibration FILE]
//              [--profile-split]
//              [google benchmark flags, e.g.
//              --benchmark_out=run.json --benchmark_out_format=json]
//
// Flags are parsed with CLI11: --flag=value and --flag value both work,
// numbers are checked, and an unknown flag is an error; only --benchmark_*
// flags go on to Google Benchmark (which checks them in turn).
//
// A format may carry option overrides, so one run can put variants side
// by side: --formats=evc-hyb,evc-hyb:order=internal,ehyb:ehyb_shared=60000
// (options: apply_option below; auto:expected_applies=100 weighs its
// set-up against 100 SpMVs). Unknown options and bad values are refused before
// anything is measured.
//
// Before the formats, the device's copy bandwidth is measured (a large
// device-to-device copy, bytes read + written): every "% of copy" is
// relative to it. Each benchmark converts the matrix (timed), checks y = Ax
// against the host reference with y poisoned by NaN first (a wrong result
// fails the benchmark and the run's exit code; it is never reported as a
// time), then times SpMVs with device events on the execution space's
// stream after a warm-up and reports the median. Effective bandwidth counts
// the minimum bytes of CSR with 32-bit indices (values, column indices, row
// offsets, x once, y once), whatever the format moves. A summary table
// comes last; --csv writes it (RFC 4180) for perf_tests/plot_results.py.
//
// --profile-split adds evc-hyb §3.3's time profile to every evc-hyb runner:
// the kernel timed again with x constant (T_A + T_Y), A constant (T_X +
// T_Y) and both (T_Y), printed as a table of T_A, T_X, T_Y and the ratio
// (T_A + T_X + T_Y) / T_SpMV, and as counters.

#include <benchmark/benchmark.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "kspmv/core/device_timer.hpp"
#include "kspmv/kspmv.hpp"
#if KSPMV_ENABLE_CUSPARSE
#include "cusparse_peer.hpp"
#endif

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;

// A suite entry: name, source, and optional conversion options
// (partitioner=metis|contiguous|rcm|bfs|cells|auto, hyb_k=N, max_fill=F).
struct Entry {
  std::string name, source;
  // The model is the one kspmv_perf chose (--calibration, --calibrate, or
  // what default_model() found): auto never calibrates inside a benchmark.
  kspmv::ConvertOptions options = [] {
    kspmv::ConvertOptions o;
    o.auto_calibrate_seconds = 0;
    return o;
  }();
  std::string options_text;
};

struct Result {
  std::string matrix, group, runner, precision, status, message;
  bool peer = false;
  kspmv::Properties properties;  // the format's own report (width, N_iter, ...)
  double seconds = 0, gflops = 0, gbs = 0, frac = 0, storage_mb = 0, convert_s = 0;
  // A value refresh (Matrix::update_values; the peers' own way), and the
  // solve loop: convert once, then kLoopRefreshes x (refresh + kLoopSpmvs
  // SpMVs). 0: not measured.
  double refresh_s = 0, loop_s = 0;
  double model_s = 0;  // the model's estimate for this runner (0: none)
  // --mode T: seconds is A^T's apply, n_seconds A's, transpose_s the
  // build of A^T (kspmv; a peer's is part of its convert_s).
  double n_seconds = 0, transpose_s = 0;
  // --vectors k: Y = A X for k columns in one call (kspmv::spmv with a
  // handle; cuSPARSE's SpMM, its best algorithm, on the csr-alg1 runner).
  double block_s = 0;
  std::string block_how;  // fused, column by column, or cuSPARSE's algorithm
  std::string format;     // the format built (auto's pick; a peer's runner name)
  std::int64_t rows = 0, nnz = 0;
};

// The solve loop every runner is scored on: a Newton- or time-step-like
// outer loop of value refreshes, each followed by a linear solve's SpMVs.
constexpr int kLoopRefreshes = 5, kLoopSpmvs = 100;

// ---- configuration ----
std::vector<Entry> g_entries;
std::vector<std::string> g_runners;
std::vector<std::string> g_precisions = {"double"};
std::string g_matrix_dir = KSPMV_SHARED_MATRICES_DIR;
std::string g_csv;
int g_samples = 30;
double g_copy_gbs = 0;
double g_l2_bytes = 0;
std::vector<Result> g_results;
int g_wrong = 0;
bool g_profile_split = false;
bool g_cold_conversions = false;  // --cold-conversions
// "N": y = A x; "T": y = A^T x (kspmv::spmv mode "T"; cuSPARSE's
// transposed SpMV).
std::string g_mode = "N";
// --vectors: columns of X and Y for the multivector timing (1: none).
int g_vectors = 1;
// The performance model used for the validation table (pmf-model Table 3
// style): calibrated in this run (--calibrate) or read (--calibration).
kspmv::ModelHardware g_model;
bool g_have_model = false;
// Per matrix/precision: the model's estimate of every format and its pick.
struct ModelView {
  std::map<std::string, double> seconds;  // format name -> estimate
  std::string pick;
};
std::map<std::string, ModelView> g_model_views;

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string resolve(const std::string& source) {
  if (source.rfind("shared:", 0) == 0) return g_matrix_dir + "/" + source.substr(7);
  return source;
}

// ---- the matrix being benchmarked (one in memory at a time) ----
struct Loaded {
  std::string name;
  kspmv::HostCsr<double> d;
  kspmv::HostCsr<float> f;  // made on first use
  bool has_float = false;
  std::string group;
  // x and the exact y = Ax per precision, computed once for all runners.
  std::vector<double> xd;
  std::vector<float> xf;
  std::unique_ptr<kspmv::SpmvOracle<double>> od;
  std::unique_ptr<kspmv::SpmvOracle<float>> of;
  // The same for A^T (--mode T): x of A's rows, y = A^T x.
  std::vector<double> txd;
  std::vector<float> txf;
  std::unique_ptr<kspmv::SpmvOracle<double>> tod;
  std::unique_ptr<kspmv::SpmvOracle<float>> tof;
};
std::unique_ptr<Loaded> g_loaded;

Loaded& load(const Entry& e) {
  if (g_loaded && g_loaded->name == e.name) return *g_loaded;
  g_loaded.reset();
  auto L = std::make_unique<Loaded>();
  L->name = e.name;
  const std::string src = resolve(e.source);
  if (is_file(src))
    L->d = kspmv::read_matrix_market<double>(src);
  else if (kspmv::is_generator_spec(src))
    L->d = kspmv::generate<double>(src);
  else
    throw kspmv::InvalidArgumentError("suite entry '" + e.name + "': '" + src +
                                      "' is neither a file nor a generator spec");
  // "small": the matrix's minimum traffic fits the L2 cache, so repeated
  // SpMVs run from L2 and the time is mostly launch latency.
  L->group = kspmv::csr32_min_bytes(L->d) <= g_l2_bytes ? "small (L2-resident)" : "large";
  g_loaded = std::move(L);
  return *g_loaded;
}

// The float copy is made on first use: double-only runs never pay for it.
template <class Scalar>
const kspmv::HostCsr<Scalar>& host(Loaded& L) {
  if constexpr (sizeof(Scalar) == 4) {
    if (!L.has_float) {
      L.f = kspmv::convert_scalar<float>(L.d);
      L.has_float = true;
    }
    return L.f;
  } else {
    return L.d;
  }
}

template <class Scalar>
std::vector<Scalar> test_x(std::size_t n);

// x and the oracle for y = A^T x (--mode T), from the host transpose.
template <class Scalar>
std::pair<const std::vector<Scalar>*, const kspmv::SpmvOracle<Scalar>*> transpose_oracle(Loaded& L) {
  const auto& a = host<Scalar>(L);
  auto& x = [&]() -> std::vector<Scalar>& {
    if constexpr (sizeof(Scalar) == 4) return L.txf; else return L.txd;
  }();
  auto& o = [&]() -> std::unique_ptr<kspmv::SpmvOracle<Scalar>>& {
    if constexpr (sizeof(Scalar) == 4) return L.tof; else return L.tod;
  }();
  if (!o) {
    x = test_x<Scalar>(static_cast<std::size_t>(a.nrows));
    o = std::make_unique<kspmv::SpmvOracle<Scalar>>(kspmv::make_oracle(
        kspmv::transpose(a), Scalar(1), x, Scalar(0), std::vector<Scalar>(static_cast<std::size_t>(a.ncols))));
  }
  return {&x, o.get()};
}

// The test vector x and the oracle for y = A x (y poisoned before each run).
template <class Scalar>
std::pair<const std::vector<Scalar>*, const kspmv::SpmvOracle<Scalar>*> oracle(Loaded& L) {
  const auto& a = host<Scalar>(L);
  auto& x = [&]() -> std::vector<Scalar>& {
    if constexpr (sizeof(Scalar) == 4) return L.xf; else return L.xd;
  }();
  auto& o = [&]() -> std::unique_ptr<kspmv::SpmvOracle<Scalar>>& {
    if constexpr (sizeof(Scalar) == 4) return L.of; else return L.od;
  }();
  if (!o) {
    x = test_x<Scalar>(static_cast<std::size_t>(a.ncols));
    o = std::make_unique<kspmv::SpmvOracle<Scalar>>(
        kspmv::make_oracle(a, Scalar(1), x, Scalar(0), std::vector<Scalar>(static_cast<std::size_t>(a.nrows))));
  }
  return {&x, o.get()};
}

// Median per-SpMV time: batches of k back-to-back SpMVs between two events
// (k so one batch lasts >= 1 ms), after a warm-up of >= 30 ms. A batch pays
// once for the gap between its start event and its first kernel (the host
// enqueues the launch after recording the event); with 50 us batches that
// gap added 1-2.5 us to every 15-30 us SpMV.
template <class F>
double one_median_seconds(F&& apply) {
  kspmv::DeviceTimer<Space> timer(Space{});
  // Warm-up for at least 30 ms of back-to-back SpMVs: the GPU drops its
  // clocks while the host converts and checks, and a few microseconds of
  // work do not bring them back (small matrices then measured several times
  // slower, at random).
  {
    Kokkos::Timer wall;
    int w = 0;
    while (w < 5 || wall.seconds() < 0.03) {
      apply();
      if (++w % 64 == 0) Space().fence();
    }
    Space().fence();
  }
  timer.start();
  apply();
  const double one = std::max(timer.stop(), 1e-7);
  const int k = static_cast<int>(std::clamp(std::ceil(1e-3 / one), 1.0, 2000.0));
  std::vector<double> t(static_cast<std::size_t>(g_samples));
  for (auto& s : t) {
    timer.start();
    for (int i = 0; i < k; ++i) apply();
    s = timer.stop() / k;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The better of two medians, each after its own warm-up. Whole cases still
// ran 1.5-6x slow after one warm-up, a few in every suite run (cage11
// ELLR 23.6 against 6.3 us, af23560 DIA 34.5 against 5.3),
// every sample of the case alike, as at a lowered GPU clock; a second
// measurement of the case, independent of the first, rarely shares it.
template <class F>
double median_seconds(F&& apply) {
  const double first = one_median_seconds(apply);
  return std::min(first, one_median_seconds(apply));
}

template <class Scalar>
std::vector<Scalar> test_x(std::size_t n) {
  kspmv::Rng rng(12345);
  std::vector<Scalar> x(n);
  for (auto& v : x) v = static_cast<Scalar>(2 * rng.uniform() - 1);
  return x;
}

template <class Scalar, class View>
std::vector<Scalar> to_host(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<Scalar>(h.data(), h.data() + v.extent(0));
}

template <class Scalar, class View>
void from_host(const View& v, const std::vector<Scalar>& h) {
  Kokkos::View<const Scalar*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(h.data(), h.size());
  Kokkos::deep_copy(v, hv);
}

void append_csv(const Result& r);

template <class Scalar>
void record(benchmark::State& st, Result r, const kspmv::HostCsr<Scalar>& a) {
  r.rows = a.nrows;
  r.nnz = a.nnz();
  if (r.status == "ok") {
    r.gflops = 2.0 * double(a.nnz()) / r.seconds * 1e-9;
    r.gbs = kspmv::csr32_min_bytes(a) / r.seconds * 1e-9;
    r.frac = g_copy_gbs > 0 ? r.gbs / g_copy_gbs : 0;
    st.SetIterationTime(r.seconds);
    st.counters["GFLOPs"] = r.gflops;
    st.counters["GBs_eff"] = r.gbs;
    st.counters["frac_copy"] = r.frac;
    st.counters["storage_MB"] = r.storage_mb;
    st.counters["convert_ms"] = r.convert_s * 1e3;
    st.counters["convert_x_spmv"] = r.convert_s / r.seconds;
    if (r.refresh_s > 0) {
      r.loop_s = r.convert_s + r.transpose_s + kLoopRefreshes * (r.refresh_s + kLoopSpmvs * r.seconds);
      st.counters["refresh_x_spmv"] = r.refresh_s / r.seconds;
      st.counters["loop_ms"] = r.loop_s * 1e3;
    }
    st.counters["nnz"] = double(a.nnz());
    if (r.transpose_s > 0) {
      st.counters["t_setup_x_spmv"] = r.transpose_s / r.seconds;
      st.counters["t_over_n"] = r.seconds / r.n_seconds;
    }
    if (r.block_s > 0) st.counters["block_per_vector_x_spmv"] = r.block_s / g_vectors / r.seconds;
    for (const auto& [k, v] : r.properties) {  // numeric properties become counters
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (end && end != v.c_str() && *end == '\0') st.counters[k] = d;
    }
    st.SetLabel(r.group);
  } else {
    st.SkipWithError((r.status + ": " + r.message).c_str());
  }
  g_results.push_back(r);
  append_csv(r);
}

// The checked run then the timing, the same for every runner: x uploaded,
// y poisoned with NaN, one y = Ax checked against the oracle; a wrong
// result is counted and never timed.
template <class Scalar, class XView, class YView, class Apply>
void check_then_time(Loaded& L, Result& r, const XView& x, const YView& y, Apply&& apply,
                     const std::vector<kspmv::ordinal_t>& internal = {}, bool x_internal = false,
                     bool transposed = false) {
  const auto [hx, orc] = transposed ? transpose_oracle<Scalar>(L) : oracle<Scalar>(L);
  from_host(x, x_internal ? kspmv::gather(*hx, internal) : *hx);
  Kokkos::deep_copy(y, std::numeric_limits<Scalar>::quiet_NaN());
  apply();
  Space().fence();
  const auto hy = to_host<Scalar>(y);
  const auto c = kspmv::check_spmv(*orc, internal.empty() ? hy : kspmv::scatter(hy, internal));
  if (!c.ok) {
    r.status = "WRONG";
    r.message = c.message;
    ++g_wrong;
  } else {
    r.seconds = median_seconds(apply);
  }
}

// One conversion option, as a suite entry or a runner suffix spells it
// (partitioner=metis|contiguous|rcm|bfs|cells|auto, partition_budget=SECONDS (0: none),
// hyb_k=N|auto|paper|third, max_fill=F,
// order=caller|internal, evc_split=N, ehyb_shared=BYTES,
// ehyb_min_parts_per_sm=N, ehyb_long_row=N, ehyb_padded_fill=F, evc_rows_per_thread=N, evc_ell_lanes=N,
// pellr_sort=auto|always|never, ehyb_er=auto|inline|separate, evc_caller_y=auto|scatter|gather,
// merge_unit_items=N (csr-merge's items a unit, 0 = auto), merge_column_panels=N (csr-merge's column panels, 0 = auto), kernel=auto|portable: the tuned CUDA path where there is one, or the
// portable TeamPolicy kernel; auto's own: expected_applies=X (the SpMVs its set-up is weighed against), auto_candidates=N,
// auto_measure=on|off, auto_quick=on|off, auto_sample_entries=N).
// An option's value as a number (an integer where `whole`) in [least,
// most]: anything else, std::stod's leftovers included, is a typed error
// naming the option, before the run measures anything.
double option_number(const std::string& k, const std::string& v, bool whole, double least, double most) {
  double x = 0;
  std::size_t used = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || used != v.size() || !std::isfinite(x) || x < least || x > most || (whole && x != std::floor(x))) {
    // The bound named: the option's own least, or the type's range where
    // a whole number passes it.
    std::string range;
    char bound[48];
    const bool own_least = least > double(std::numeric_limits<int>::min());
    if (std::isfinite(x) && used == v.size() && !v.empty() && (x > most || (x < least && !own_least))) {
      std::snprintf(bound, sizeof bound, " in [%.0f, %.0f]", least, most);
      range = bound;
    } else if (own_least) {
      std::snprintf(bound, sizeof bound, whole ? " >= %.0f" : " >= %g", least);
      range = bound;
    }
    throw kspmv::InvalidArgumentError(k + ": must be " + (whole ? "an integer" : "a number") + range + ", not '" + v +
                                      "'");
  }
  return x;
}

bool apply_option(kspmv::ConvertOptions& o, const std::string& k, const std::string& v) {
  const double any = -std::numeric_limits<double>::max(), huge = std::numeric_limits<double>::max();
  const auto real = [&](double least) { return option_number(k, v, false, least, huge); };
  // An int option, and an int64 one (to 2^53, where doubles hold integers).
  const auto count = [&](double least) {
    return static_cast<int>(option_number(k, v, true, std::max<double>(least, std::numeric_limits<int>::min()),
                                          std::numeric_limits<int>::max()));
  };
  const auto whole = [&](double least) {
    return static_cast<std::int64_t>(option_number(k, v, true, std::max(least, -9007199254740992.0), 9007199254740992.0));
  };
  if (k == "partitioner" &&
      (v == "metis" || v == "contiguous" || v == "auto" || v == "rcm" || v == "bfs" || v == "cells"))
    o.partitioner = v == "metis"        ? kspmv::Partitioner::Metis
                    : v == "contiguous" ? kspmv::Partitioner::Contiguous
                    : v == "rcm"        ? kspmv::Partitioner::Rcm
                    : v == "bfs"        ? kspmv::Partitioner::Bfs
                    : v == "cells"      ? kspmv::Partitioner::Cells
                                        : kspmv::Partitioner::Auto;
  else if (k == "partition_budget")
    o.partition_budget_seconds = real(0);
  else if (k == "hyb_k" && (v == "auto" || v == "paper" || v == "third"))
    o.hyb_k = v == "auto" ? kspmv::kHybKModel : v == "paper" ? kspmv::kHybKPaper : kspmv::kHybKOneThird;
  else if (k == "hyb_k")
    o.hyb_k = whole(0);
  else if (k == "max_fill")
    o.max_fill = real(any);
  else if (k == "order" && (v == "caller" || v == "internal"))
    o.output_order = v == "caller" ? kspmv::OutputOrder::Caller : kspmv::OutputOrder::Internal;
  else if (k == "ehyb_er" && (v == "auto" || v == "inline" || v == "separate"))
    o.ehyb_er = v == "auto" ? kspmv::ErLayout::Auto : v == "inline" ? kspmv::ErLayout::Inline : kspmv::ErLayout::Separate;
  else if (k == "pellr_sort" && (v == "auto" || v == "always" || v == "never"))
    o.pellr_sort = v == "auto" ? kspmv::RowSort::Auto : v == "always" ? kspmv::RowSort::Always : kspmv::RowSort::Never;
  else if (k == "kernel" && (v == "auto" || v == "portable"))
    o.kernel = v == "auto" ? kspmv::KernelPath::Auto : kspmv::KernelPath::Portable;
  else if (k == "evc_split")
    o.evc_split = count(any);
  else if (k == "ehyb_shared")
    o.ehyb_shared_bytes = whole(any);
  else if (k == "ehyb_min_parts_per_sm")
    o.ehyb_min_parts_per_sm = count(any);
  else if (k == "ehyb_padded_fill")
    o.ehyb_padded_fill = real(any);
  else if (k == "ehyb_long_row")
    o.ehyb_long_row = whole(any);
  else if (k == "evc_rows_per_thread")
    o.evc_rows_per_thread = count(any);
  else if (k == "evc_ell_lanes")
    o.evc_ell_lanes = count(any);
  else if (k == "merge_unit_items")
    o.merge_unit_items = whole(any);
  else if (k == "merge_column_panels")
    o.merge_column_panels = count(any);
  else if (k == "expected_applies")
    o.expected_applies = real(0);
  else if (k == "auto_candidates")
    o.auto_candidates = count(1);
  else if (k == "auto_sample_entries")
    o.auto_sample_entries = whole(0);
  else if (k == "auto_measure" && (v == "on" || v == "off"))
    o.auto_measure = v == "on";
  else if (k == "auto_quick" && (v == "on" || v == "off"))
    o.auto_quick = v == "on";
  else if (k == "evc_caller_y" && (v == "auto" || v == "scatter" || v == "gather"))
    o.evc_caller_y = v == "auto" ? kspmv::CallerY::Auto : v == "scatter" ? kspmv::CallerY::Scatter : kspmv::CallerY::Gather;
  else
    return false;
  return true;
}

// A runner "FORMAT[:key=value...]": the format and its option overrides.
std::pair<kspmv::Format, std::vector<std::pair<std::string, std::string>>> parse_runner(const std::string& r) {
  std::vector<std::pair<std::string, std::string>> kv;
  std::size_t c = r.find(':');
  const kspmv::Format f = kspmv::parse_format(r.substr(0, c));
  while (c != std::string::npos) {
    const std::size_t next = r.find(':', c + 1);
    const std::string opt = r.substr(c + 1, next == std::string::npos ? std::string::npos : next - c - 1);
    const auto eq = opt.find('=');
    kv.emplace_back(opt.substr(0, eq), eq == std::string::npos ? "" : opt.substr(eq + 1));
    kspmv::ConvertOptions probe;
    if (!apply_option(probe, kv.back().first, kv.back().second))
      throw kspmv::InvalidArgumentError("runner '" + r + "': unknown option '" + opt + "'");
    c = next;
  }
  return {f, kv};
}

// The model's estimate of a converted format (with the K HYB chose, and
// for `auto` the estimate of its pick); the matrix's estimates of every
// format are kept for the validation table.
template <class Scalar>
double model_estimate(const kspmv::HostCsr<Scalar>& a, const std::string& key, const kspmv::Matrix<Scalar>& m,
                      const kspmv::ConvertOptions& opt) {
  const int tau = static_cast<int>(sizeof(Scalar));
  static std::string last_key;
  static kspmv::PatternStats stats;
  if (key != last_key) {
    stats = kspmv::pattern_stats(a, tau, g_model);
    last_key = key;
    ModelView v;
    for (const auto& e : kspmv::estimate_all(stats, tau, g_model, opt.max_fill))
      if (e.feasible) v.seconds[kspmv::format_name(e.format)] = e.seconds;
    v.pick = kspmv::format_name(kspmv::pick(stats, tau, g_model, opt.max_fill));
    g_model_views[key] = v;
  }
  std::int64_t k = -1;
  if (m.format() == kspmv::Format::Hyb)
    for (const auto& [name, value] : m.properties())
      if (name == "k") k = std::stoll(value);
  return kspmv::estimate(m.format(), stats, tau, g_model, 1e30, k).seconds;
}

// evc-hyb §3.3: the same conversion timed in the three profile modes; the
// split goes into the runner's properties (and so its counters).
template <class Scalar>
void profile_split(const kspmv::HostCsr<Scalar>& a, const kspmv::ConvertOptions& opt, Result& r) {
  const auto d = kspmv::to_evc_hyb<Scalar, Space>(a, opt);
  typename kspmv::Matrix<Scalar>::vector_type x("x", a.ncols), y("y", a.nrows);
  Kokkos::deep_copy(x, Scalar(1));
  auto time = [&](kspmv::EvcProfile mode) {
    return median_seconds([&] { kspmv::spmv_profile(mode, Space(), Scalar(1), d, x, Scalar(0), y); });
  };
  const double t_ay = time(kspmv::EvcProfile::ConstX), t_xy = time(kspmv::EvcProfile::ConstA),
               t_y = time(kspmv::EvcProfile::ConstAX);
  auto us = [](double t) { return std::to_string(t * 1e6); };
  r.properties.push_back({"profile_TA_us", us(t_ay - t_y)});
  r.properties.push_back({"profile_TX_us", us(t_xy - t_y)});
  r.properties.push_back({"profile_TY_us", us(t_y)});
  r.properties.push_back({"profile_ratio", std::to_string((t_ay + t_xy - t_y) / r.seconds)});
}

// One kspmv format (kk-crs included: it is the Kokkos Kernels baseline).
template <class Scalar>
void bench_format(benchmark::State& st, std::size_t mi, std::string runner, std::string precision) {
  for (auto _ : st) {
    Loaded& L = load(g_entries[mi]);
    const auto& a = host<Scalar>(L);
    const auto [f, overrides] = parse_runner(runner);
    Result r{L.name, L.group, runner, precision, "ok", ""};
    r.peer = f == kspmv::Format::KkCrs;
    try {
      kspmv::ConvertOptions opt = g_entries[mi].options;
      opt.expected_vectors = std::min(g_vectors, 64);  // auto times its candidates on products of that width
      for (const auto& [k, v] : overrides) apply_option(opt, k, v);
      // The caller's matrix on the device (a solver that assembles there):
      // the conversion is timed from it.
      const auto d = kspmv::upload_csr<Scalar, Space>(a);
      // A process's first build: no device blocks kept from the runners
      // before (kspmv/core/scratch.hpp).
      if (g_cold_conversions) kspmv::release_scratch<Space::memory_space>();
      Space().fence();
      auto m = kspmv::Matrix<Scalar>::convert(d, f, opt);
      if (g_have_model && g_mode == "N") r.model_s = model_estimate(a, L.name + "/" + precision, m, opt);
      r.convert_s = m.conversion_seconds();
      r.storage_mb = double(m.storage_bytes()) * 1e-6;
      r.properties = m.properties();
      r.format = m.name();
      typename kspmv::Matrix<Scalar>::vector_type x("x", a.ncols), y("y", a.nrows);
      // Internal order: x goes in permuted where the format renumbers
      // columns, and y is checked after mapping it back.
      const auto perm = m.internal_order();
      check_then_time<Scalar>(L, r, x, y, [&] { m.apply(Scalar(1), x, Scalar(0), y); }, perm,
                              m.x_in_internal_order());
      // --mode T: A^T built (timed alone), checked and timed through
      // kspmv::spmv with a handle, as a solver calls it.
      if (g_mode == "T" && r.status == "ok") {
        r.n_seconds = r.seconds;
        Kokkos::Timer build;
        m.transposed(Space());
        Space().fence();
        r.transpose_s = build.seconds();
        r.storage_mb += double(m.transpose_bytes()) * 1e-6;
        for (const auto& [k, v] : m.transposed(Space()).properties()) r.properties.push_back({"t_" + k, v});
        r.properties.push_back({"t_format", m.transposed(Space()).name()});
        const auto tt = m.transpose_times();
        r.properties.push_back({"t_structure_ms", std::to_string(tt.structure * 1e3)});
        r.properties.push_back({"t_pick_ms", std::to_string(tt.pick * 1e3)});
        r.properties.push_back({"t_convert_ms", std::to_string(tt.convert * 1e3)});
        typename kspmv::Matrix<Scalar>::vector_type xt("xt", a.nrows), yt("yt", a.ncols);
        kspmv::SpmvHandle<Scalar, Space> h;
        check_then_time<Scalar>(L, r, xt, yt, [&] { kspmv::spmv(Space(), h, "T", Scalar(1), m, xt, Scalar(0), yt); },
                                {}, false, true);
      }
      // --vectors k: every column x, each checked against the oracle.
      if (g_vectors > 1 && g_mode == "N" && r.status == "ok" && perm.empty()) {
        const auto& [hx, orc] = oracle<Scalar>(L);
        Kokkos::View<Scalar**, Kokkos::LayoutLeft, Mem> X("X", a.ncols, g_vectors), Y("Y", a.nrows, g_vectors);
        for (int j = 0; j < g_vectors; ++j) from_host(Kokkos::subview(X, Kokkos::ALL, j), *hx);
        Kokkos::deep_copy(Y, std::numeric_limits<Scalar>::quiet_NaN());
        kspmv::SpmvHandle<Scalar, Space> h;
        typename decltype(X)::const_type Xc = X;
        auto block = [&] { kspmv::spmv(Space(), h, "N", Scalar(1), m, Xc, Scalar(0), Y); };
        block();
        Space().fence();
        bool ok = true;
        for (int j = 0; j < g_vectors && ok; ++j) {
          const auto c = kspmv::check_spmv(*orc, to_host<Scalar>(Kokkos::subview(Y, Kokkos::ALL, j)));
          if (!c.ok) {
            r.status = "WRONG";
            r.message = "column " + std::to_string(j) + " of " + std::to_string(g_vectors) + ": " + c.message;
            ++g_wrong;
            ok = false;
          }
        }
        if (ok) r.block_s = median_seconds(block);
        r.block_how = m.has_fused_block_kernel() ? "fused" : "columns";
      }
      // A refresh with the matrix's own values (the same bits stay; with
      // --mode T, A^T's too).
      if (r.status == "ok" && m.refreshable())
        r.refresh_s = median_seconds([&] { m.update_values(Space(), d.values); });
      if (g_profile_split && f == kspmv::Format::EvcHyb && r.status == "ok") profile_split(a, opt, r);
    } catch (const kspmv::FormatCannotHoldError& e) {
      r.status = "refused";
      r.message = e.what();
    }
    record(st, r, a);
  }
}

#if KSPMV_ENABLE_CUSPARSE
template <class Scalar>
void bench_cusparse(benchmark::State& st, std::size_t mi, kspmv_perf::CusparseKind k, std::string precision) {
  for (auto _ : st) {
    Loaded& L = load(g_entries[mi]);
    const auto& a = host<Scalar>(L);
    Result r{L.name, L.group, kspmv_perf::cusparse_name(k), precision, "ok", ""};
    r.peer = true;
    try {
      const auto d = kspmv::upload_csr<Scalar, Space>(a);
      Space().fence();
      Kokkos::Timer timer;
      kspmv_perf::CusparsePeer<Scalar> p(a, d, k, Space().cuda_stream(), g_mode == "T");
      Space().fence();
      r.convert_s = timer.seconds();
      r.storage_mb = double(p.storage_bytes()) * 1e-6;
      check_then_time<Scalar>(L, r, p.x(), p.y(), [&] { p.apply(Scalar(1), Scalar(0)); }, {}, false, g_mode == "T");
      // --vectors k: SpMM on CSR, the fastest of its algorithms that take
      // this matrix (ALG1 and ALG3 column-major, ALG2 row-major), checked.
      if (g_vectors > 1 && g_mode == "N" && r.status == "ok" && k == kspmv_perf::CusparseKind::CsrAlg1) {
        const auto& [hx, orc] = oracle<Scalar>(L);
        const std::pair<cusparseSpMMAlg_t, const char*> algs[] = {{CUSPARSE_SPMM_CSR_ALG1, "spmm-alg1-col"},
                                                                  {CUSPARSE_SPMM_CSR_ALG2, "spmm-alg2-row"},
                                                                  {CUSPARSE_SPMM_CSR_ALG3, "spmm-alg3-col"}};
        for (const auto& [alg, name] : algs) {
          if (!p.spmm_setup(g_vectors, alg, alg == CUSPARSE_SPMM_CSR_ALG2, *hx)) continue;
          p.spmm_apply();
          Space().fence();
          bool ok = true;
          for (int j = 0; j < g_vectors && ok; ++j) ok = kspmv::check_spmv(*orc, p.spmm_column(j)).ok;
          if (!ok) {
            r.message += std::string(name) + " wrong; ";
            continue;
          }
          const double t = median_seconds([&] { p.spmm_apply(); });
          if (r.block_s == 0 || t < r.block_s) {
            r.block_s = t;
            r.block_how = name;
          }
        }
        p.spmm_release();
      }
      // Its refresh as a cuSPARSE user would: new value pointers for CSR
      // and COO, a new conversion for sliced ELL (no value-only update).
      if (r.status == "ok") {
        Kokkos::Timer refresh;
        for (int i = 0; i < kLoopRefreshes; ++i) p.refresh(a);
        Space().fence();
        r.refresh_s = refresh.seconds() / kLoopRefreshes;
      }
    } catch (const kspmv::Error& e) {
      r.status = "refused";
      r.message = e.what();
    }
    record(st, r, a);
  }
}
#endif

// Device-to-device copy bandwidth (bytes read + written), median of 20.
double measure_copy_bandwidth() {
  const std::size_t n = std::size_t(1) << 27;  // 2 x 1 GiB of doubles
  Kokkos::View<double*, Mem> a("copy_a", n), b("copy_b", n);
  Kokkos::deep_copy(a, 1.0);
  auto copy = [&] { Kokkos::deep_copy(Space(), b, a); };
  kspmv::DeviceTimer<Space> timer(Space{});
  for (int i = 0; i < 3; ++i) copy();
  std::vector<double> t(20);
  for (auto& s : t) {
    timer.start();
    copy();
    s = timer.stop();
  }
  std::sort(t.begin(), t.end());
  return 2.0 * n * sizeof(double) / t[t.size() / 2] * 1e-9;
}

void read_suite(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw kspmv::IoError("cannot read suite file " + path);
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::stringstream ss(line);
    Entry e;
    if (!(ss >> e.name)) continue;
    if (!(ss >> e.source)) throw kspmv::ParseError(path, 0, "entry '" + e.name + "' has no source");
    std::string opt;
    while (ss >> opt) {
      const auto eq = opt.find('=');
      const std::string k = opt.substr(0, eq), v = eq == std::string::npos ? "" : opt.substr(eq + 1);
      if (!apply_option(e.options, k, v))
        throw kspmv::ParseError(path, 0, "entry '" + e.name + "': unknown option '" + opt + "'");
      e.options_text += (e.options_text.empty() ? "" : " ") + opt;
    }
    g_entries.push_back(e);
  }
}

void print_summary() {
  std::printf("\n==== kspmv_perf summary ====\n");
  std::printf("device: %s; copy bandwidth %.0f GB/s (device-to-device, read + write); L2 %.0f MB\n",
              Space::name(), g_copy_gbs, g_l2_bytes * 1e-6);
  std::printf("time: per SpMV, the better of two medians (y = Ax); eff GB/s: CSR 32-bit minimum bytes / time; x peer: best of "
              "kk-crs and cuSPARSE over this; * fastest\n");
  std::printf("convert: from a CSR on the device (kspmv; cuSPARSE CSR and COO likewise, sliced ELL from the host); "
              "convert x, refresh x: in SpMVs of that runner; loop: convert + %d x (refresh + %d SpMVs)\n",
              kLoopRefreshes, kLoopSpmvs);
  for (const std::string group : {"small (L2-resident)", "large"}) {
    bool header = false;
    std::vector<std::string> done;
    for (const auto& r0 : g_results) {
      if (r0.group != group) continue;
      const std::string key = r0.matrix + "/" + r0.precision;
      if (std::find(done.begin(), done.end(), key) != done.end()) continue;
      done.push_back(key);
      if (!header) {
        std::printf("\n-- %s matrices --\n", group.c_str());
        header = true;
      }
      std::vector<const Result*> rows;
      double best = 1e30, best_peer = 1e30;
      for (const auto& r : g_results)
        if (r.matrix == r0.matrix && r.precision == r0.precision) {
          rows.push_back(&r);
          if (r.status == "ok") {
            best = std::min(best, r.seconds);
            if (r.peer) best_peer = std::min(best_peer, r.seconds);
          }
        }
      std::string opts;
      for (const auto& e : g_entries)
        if (e.name == r0.matrix && !e.options_text.empty()) opts = "; options: " + e.options_text;
      std::printf("\n%s (%s): %lld rows, %lld nnz%s\n", r0.matrix.c_str(), r0.precision.c_str(), (long long)r0.rows,
                  (long long)r0.nnz, opts.c_str());
      std::printf("  %-26s %11s %9s %9s %7s %8s %10s %12s %10s %10s %10s\n", "format", "time us", "GFLOP/s",
                  "eff GB/s", "%copy", "x peer", "storage MB", "convert ms", "convert x", "refresh x", "loop ms");
      std::stable_sort(rows.begin(), rows.end(), [](const Result* a, const Result* b) {
        if ((a->status == "ok") != (b->status == "ok")) return a->status == "ok";
        return a->seconds < b->seconds;
      });
      for (const Result* r : rows) {
        if (r->status != "ok") {
          std::printf("  %-26s %s: %.90s\n", r->runner.c_str(), r->status.c_str(), r->message.c_str());
          continue;
        }
        std::printf("  %-26s %11.2f %9.1f %9.0f %6.1f%% %8.2f %10.1f %12.1f %10.0f %10.2f %10.2f%s%s\n",
                    r->runner.c_str(), r->seconds * 1e6, r->gflops, r->gbs, 100 * r->frac,
                    best_peer < 1e30 ? best_peer / r->seconds : 0.0, r->storage_mb, r->convert_s * 1e3,
                    r->convert_s / r->seconds, r->refresh_s / r->seconds, r->loop_s * 1e3,
                    r->seconds == best ? " *" : "", r->peer ? " (peer)" : "");
      }
    }
  }
  if (g_wrong) std::printf("\n%d benchmark(s) computed a WRONG result (see above); exit code 1\n", g_wrong);
}

// Estimated vs measured per (matrix, format), how often the pick is the
// measured best, its regret, and HYB with the model's K against the 1/3
// rule (pmf-model Table 3 and the reach).
void print_model_validation() {
  if (!g_have_model) return;
  std::printf("\n==== performance model vs measurement (double; %s model: %s) ====\n",
              g_model.calibrated ? "calibrated" : "uncalibrated", g_model.name.c_str());
  int pairs = 0, within = 0, picks = 0, picks_ok = 0, hyb_pairs = 0;
  double regret_sum = 0, regret_max = 1, hyb_gain = 0;
  std::vector<std::string> done;
  for (const auto& r0 : g_results) {
    if (r0.precision != "double" || std::find(done.begin(), done.end(), r0.matrix) != done.end()) continue;
    done.push_back(r0.matrix);
    const auto it = g_model_views.find(r0.matrix + "/double");
    if (it == g_model_views.end()) continue;
    double best = 1e30, t_pick = 0, t_third = 0, t_auto = 0;
    std::string best_name, k_third, k_auto;
    std::printf("\n%s\n  %-14s %11s %11s %8s\n", r0.matrix.c_str(), "format", "measured us", "model us", "diff");
    for (const auto& r : g_results) {
      if (r.matrix != r0.matrix || r.precision != "double" || r.status != "ok") continue;
      auto prop = [&](const char* key) {
        for (const auto& [k, v] : r.properties)
          if (k == key) return v;
        return std::string();
      };
      if (r.runner == "hyb") { t_third = r.seconds; k_third = prop("k"); }
      if (r.runner == "hyb:hyb_k=auto") { t_auto = r.seconds; k_auto = prop("k"); }
      if (r.runner.find(':') != std::string::npos || r.model_s <= 0) continue;
      const double d = (r.model_s - r.seconds) / r.seconds;
      std::printf("  %-14s %11.2f %11.2f %+7.0f%%\n", r.runner.c_str(), r.seconds * 1e6, r.model_s * 1e6, 100 * d);
      if (r.runner != "auto") {
        ++pairs;
        within += std::fabs(d) <= 0.2;
        if (r.runner != "kk-crs" && r.seconds < best) {
          best = r.seconds;
          best_name = r.runner;
        }
      }
      if (r.runner == it->second.pick) t_pick = r.seconds;
    }
    if (t_pick > 0 && best < 1e30) {
      ++picks;
      const double regret = t_pick / best;
      picks_ok += regret <= 1.10;
      regret_sum += regret;
      regret_max = std::max(regret_max, regret);
      std::printf("  pick %s (%.2f us), measured best %s (%.2f us): regret %.3f\n", it->second.pick.c_str(),
                  t_pick * 1e6, best_name.c_str(), best * 1e6, regret);
    }
    if (t_third > 0 && t_auto > 0) {
      std::printf("  hyb K: 1/3 rule %s %.2f us, model %s %.2f us (%.2fx)\n", k_third.c_str(), t_third * 1e6,
                  k_auto.c_str(), t_auto * 1e6, t_third / t_auto);
      if (k_third != k_auto) {
        ++hyb_pairs;
        hyb_gain += t_third / t_auto;
      }
    }
  }
  std::printf("\nestimates within 20%%: %d of %d (matrix, format) pairs (%.0f%%)\n", within, pairs,
              pairs ? 100.0 * within / pairs : 0.0);
  std::printf("pick within 10%% of the measured best kspmv format: %d of %d matrices (%.0f%%); mean regret %.3f, "
              "worst %.3f\n", picks_ok, picks, picks ? 100.0 * picks_ok / picks : 0.0, picks ? regret_sum / picks : 0.0,
              regret_max);
  if (hyb_pairs)
    std::printf("hyb with the model's K vs the 1/3 rule, where K differs: %d matrices, mean speedup %.3fx\n",
                hyb_pairs, hyb_gain / hyb_pairs);
}

// evc-hyb §3.3 / Figures 12-13: the synthetic total over the measured time
// and each part's share of it.
void print_profile_split() {
  bool header = false;
  for (const auto& r : g_results) {
    std::map<std::string, double> p;
    for (const auto& [k, v] : r.properties)
      if (k.rfind("profile_", 0) == 0) p[k] = std::stod(v);
    if (p.size() < 4) continue;
    if (!header) {
      std::printf("\n==== evc-hyb time profile (§3.3): x constant -> T_A + T_Y, A constant -> T_X + T_Y, both -> "
                  "T_Y ====\n  %-22s %-22s %-7s %9s %9s %9s %9s %7s %6s %6s %6s\n",
                  "matrix", "runner", "prec", "T us", "T_A us", "T_X us", "T_Y us", "sum/T", "A %", "x %", "y %");
      header = true;
    }
    const double sum = p["profile_TA_us"] + p["profile_TX_us"] + p["profile_TY_us"];
    std::printf("  %-22s %-22s %-7s %9.2f %9.2f %9.2f %9.2f %7.2f %5.0f%% %5.0f%% %5.0f%%\n", r.matrix.c_str(),
                r.runner.c_str(), r.precision.c_str(), r.seconds * 1e6, p["profile_TA_us"], p["profile_TX_us"],
                p["profile_TY_us"], p["profile_ratio"], 100 * p["profile_TA_us"] / sum,
                100 * p["profile_TX_us"] / sum, 100 * p["profile_TY_us"] / sum);
  }
}

// One CSV field as RFC 4180 wants it: a field holding a comma, a double
// quote or a line break is enclosed in double quotes and its quotes are
// doubled; any other field is written as it is. Matrix and runner names
// come from suite files and the command line, so they may hold any of
// these.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// The CSV gets its header when the run starts and each result as it is
// recorded (flushed), so a run stopped early keeps what it measured.
void start_csv() {
  if (g_csv.empty()) return;
  std::ofstream out(g_csv);
  if (!out) throw kspmv::IoError("cannot write " + g_csv);
  out << "matrix,group,precision,runner,peer,status,rows,nnz,time_us,gflops,eff_gbs,frac_copy,storage_mb,convert_ms,"
         "copy_gbs,model_us,refresh_us,loop_ms,mode,transpose_setup_ms,n_time_us,vectors,block_us,block_how,format,"
         "picked_by\n";
}

// A runner's property by name ("" where it has none).
std::string property(const Result& r, const std::string& name) {
  for (const auto& [k, v] : r.properties)
    if (k == name) return v;
  return "";
}

void append_csv(const Result& r) {
  if (g_csv.empty()) return;
  std::ofstream out(g_csv, std::ios::app);
  out << csv_field(r.matrix) << "," << csv_field(r.group) << "," << csv_field(r.precision) << ","
      << csv_field(r.runner) << "," << (r.peer ? 1 : 0) << "," << csv_field(r.status) << "," << r.rows << ","
      << r.nnz << "," << r.seconds * 1e6 << "," << r.gflops << "," << r.gbs << "," << r.frac << "," << r.storage_mb
      << "," << r.convert_s * 1e3 << "," << g_copy_gbs << "," << r.model_s * 1e6 << "," << r.refresh_s * 1e6 << ","
      << r.loop_s * 1e3 << "," << g_mode << "," << r.transpose_s * 1e3 << "," << r.n_seconds * 1e6 << ","
      << (r.block_s > 0 ? g_vectors : 1) << "," << r.block_s * 1e6 << "," << csv_field(r.block_how) << ","
      << csv_field(r.format.empty() ? r.runner : r.format) << "," << csv_field(property(r, "picked_by")) << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  std::string suite, matrices, formats, calibration_file;
  double calibrate_budget = -1;
  long long scratch_limit_mb = -1;  // --scratch-limit-mb
  // The command line is read before Kokkos starts: --help and a bad flag
  // need no device, and Kokkos 3's initialize() prints its own help for
  // --help. Kokkos' flags (--kokkos-...) are left to Kokkos.
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--kokkos", 0) != 0) args.emplace_back(argv[i]);
  std::vector<std::string> benchmark_flags;
  {
    CLI::App app("kspmv_perf: every kspmv format beside Kokkos Kernels and cuSPARSE, against the memory roofline",
                 "kspmv_perf");
    app.footer("Any other --benchmark_* flag goes to Google Benchmark, e.g. --benchmark_out=run.json "
               "--benchmark_out_format=json --benchmark_filter=REGEX.");
    app.get_formatter()->column_width(36);
    // A repeated flag takes its last value, as the hand-written parser did.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    // Extras are allowed only to collect the --benchmark_* flags; anything
    // else among them is refused below.
    app.allow_extras();
    app.add_option("--suite", suite, "suite file: a line per matrix, `name spec-or-shared:FILE [options]`");
    app.add_option("--matrices", matrices, "matrices as SPEC,SPEC,... (generator specs or files)");
    app.add_option("--formats", formats,
                   "runners as F[:opt=v...],... (default: every format and peer); options: partitioner=, "
                   "partition_budget=, hyb_k=, max_fill=, order=, evc_split=, ehyb_shared=, kernel=, ...; auto's: "
                   "expected_applies=, auto_candidates=, auto_measure=on|off, auto_quick=on|off, auto_sample_entries=");
    std::string precision = "double";
    app.add_option("--precision", precision, "double, float or both")
        ->check(CLI::IsMember({"double", "float", "both"}))
        ->capture_default_str();
    app.add_option("--samples", g_samples, "batches per median (at least 3 are taken)")
        ->transform(kspmv_cli::positive_integer())
        ->capture_default_str();
    app.add_option("--csv", g_csv, "write the summary as CSV (RFC 4180) for perf_tests/*.py");
    app.add_option("--matrix-dir", g_matrix_dir, "where shared:FILE entries are (KSPMV_SHARED_MATRICES wins)")
        ->capture_default_str();
    auto* calibrate = app.add_option("--calibrate", calibrate_budget,
                                     "calibrate the model first in at most SECONDS (written to CSV.cal, else "
                                     "kspmv_perf.cal)")
                          ->check(kspmv_cli::non_negative_number());
    auto* calibration = app.add_option("--calibration", calibration_file, "read the model's calibration from FILE");
    calibrate->excludes(calibration);
    app.add_flag("--profile-split", g_profile_split, "time evc-hyb runners again for T_A, T_X, T_Y (§3.3)");
    app.add_flag("--cold-conversions", g_cold_conversions,
                 "free the device blocks kspmv keeps before each runner's conversion, as a process's first has none");
    app.add_option("--scratch-limit-mb", scratch_limit_mb,
                   "keep at most this many MiB of free device blocks between conversions (kspmv::set_scratch_limit; "
                   "default: the library's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--mode", g_mode,
                   "N: y = A x; T: y = A^T x (kspmv's A^T built on the device, timed alone; cuSPARSE transposed)")
        ->check(CLI::IsMember({"N", "T"}));
    app.add_option("--vectors", g_vectors,
                   "also time Y = A X for this many columns (mode N): kspmv::spmv, and cuSPARSE's SpMM on csr-alg1")
        ->check(CLI::Range(1, 1024));
    std::vector<const char*> cargv = {argv[0]};
    for (const auto& a : args) cargv.push_back(a.c_str());
    try {
      app.parse(static_cast<int>(cargv.size()), cargv.data());
    } catch (const CLI::Success& e) {  // --help
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      std::fprintf(stderr, "kspmv_perf: %s\nsee kspmv_perf --help\n", e.what());
      return 2;
    }
    for (const auto& a : app.remaining()) {
      if (a.rfind("--benchmark_", 0) == 0) {
        benchmark_flags.push_back(a);
        continue;
      }
      // A misspelt flag (--formt=ell) must not run a whole suite with the
      // flag ignored, as it did when everything unknown went to Google
      // Benchmark (which ignores what it does not know).
      if (a.rfind("-", 0) == 0)
        std::fprintf(stderr, "kspmv_perf: unknown flag '%s'\n", a.substr(0, a.find('=')).c_str());
      else
        std::fprintf(stderr, "kspmv_perf: unexpected argument '%s'\n", a.c_str());
      std::fprintf(stderr, "only --benchmark_* flags go on to Google Benchmark; see kspmv_perf --help\n");
      return 2;
    }
    g_samples = std::max(3, g_samples);
    g_precisions = precision == "both" ? std::vector<std::string>{"double", "float"}
                                       : std::vector<std::string>{precision};
  }
  // Google Benchmark takes its flags now, so that a misspelt --benchmark_
  // flag fails before the copy bandwidth and the model are measured.
  std::vector<char*> rest = {argv[0]};
  for (auto& f : benchmark_flags) rest.push_back(f.data());
  int bargc = static_cast<int>(rest.size());
  benchmark::Initialize(&bargc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, rest.data())) return 2;

  Kokkos::ScopeGuard guard(argc, argv);
  if (scratch_limit_mb >= 0) kspmv::set_scratch_limit<Space::memory_space>(static_cast<std::size_t>(scratch_limit_mb) << 20);
  if (const char* env = std::getenv("KSPMV_SHARED_MATRICES")) g_matrix_dir = env;
  try {
    if (!suite.empty()) read_suite(suite);
    for (const auto& m : split(matrices, ',')) g_entries.push_back({m, m});
    if (g_entries.empty()) {
      std::fprintf(stderr, "kspmv_perf: no matrices (give --suite=FILE or --matrices=SPEC,...)\n");
      return 2;
    }
    if (formats.empty()) {
      for (const auto& f : kspmv::known_formats()) g_runners.push_back(f.name);
#if KSPMV_ENABLE_CUSPARSE
      for (auto k : {kspmv_perf::CusparseKind::CsrAlg1, kspmv_perf::CusparseKind::CsrAlg2,
                     kspmv_perf::CusparseKind::Coo, kspmv_perf::CusparseKind::SlicedEll})
        g_runners.push_back(kspmv_perf::cusparse_name(k));
#endif
    } else {
      g_runners = split(formats, ',');
    }
    // Unknown formats and options, and options' bad values, are refused
    // before anything is calibrated or measured.
    for (const auto& r : g_runners) {
      bool peer = false;
#if KSPMV_ENABLE_CUSPARSE
      for (auto k : {kspmv_perf::CusparseKind::CsrAlg1, kspmv_perf::CusparseKind::CsrAlg2,
                     kspmv_perf::CusparseKind::Coo, kspmv_perf::CusparseKind::SlicedEll})
        peer = peer || r == kspmv_perf::cusparse_name(k);
#endif
      if (!peer) parse_runner(r);
    }
#if defined(KOKKOS_ENABLE_CUDA)
    {
      cudaDeviceProp prop;
      cudaGetDeviceProperties(&prop, 0);
      g_l2_bytes = prop.l2CacheSize;
      std::printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    }
#else
    g_l2_bytes = 32e6;  // a typical host last-level cache
#endif
    // The model: calibrated on its own matrices (not the suite's) before
    // the benchmarks, or read from a file; Format::Auto and hyb_k=auto use it.
    if (calibrate_budget >= 0) {
      kspmv::CalibrationOptions co;
      co.budget_seconds = calibrate_budget;
      co.log = [](const std::string& s) { std::printf("  calibration: %s\n", s.c_str()); };
      g_model = kspmv::calibrate_model<double>(co);
      const std::string out = g_csv.empty() ? "kspmv_perf.cal" : g_csv + ".cal";
      kspmv::write_calibration(out, g_model);
      g_model.source = "--calibrate, written to " + out;
      g_have_model = true;
    } else if (!calibration_file.empty()) {
      g_model = kspmv::read_calibration(calibration_file);
      g_model.source = "--calibration " + calibration_file;
      g_have_model = true;
    } else {
      g_model = kspmv::default_model();
      g_have_model = true;
    }
    kspmv::set_default_model(g_model);
    std::printf("model calibration: %s\n", g_model.source.c_str());
    g_copy_gbs = measure_copy_bandwidth();
    start_csv();
    std::printf("copy bandwidth: %.1f GB/s (device-to-device, 2 GiB moved per copy, median of 20)\n", g_copy_gbs);

    // One benchmark per (matrix, runner, precision), in suite order.
    for (std::size_t mi = 0; mi < g_entries.size(); ++mi)
      for (const auto& p : g_precisions)
        for (const auto& r : g_runners) {
          const std::string name = g_entries[mi].name + "/" + r + "/" + p;
          benchmark::internal::Benchmark* b = nullptr;
#if KSPMV_ENABLE_CUSPARSE
          for (auto k : {kspmv_perf::CusparseKind::CsrAlg1, kspmv_perf::CusparseKind::CsrAlg2,
                         kspmv_perf::CusparseKind::Coo, kspmv_perf::CusparseKind::SlicedEll})
            if (r == kspmv_perf::cusparse_name(k))
              b = p == "double" ? benchmark::RegisterBenchmark(name.c_str(), bench_cusparse<double>, mi, k, p)
                                : benchmark::RegisterBenchmark(name.c_str(), bench_cusparse<float>, mi, k, p);
#endif
          if (!b) {
            b = p == "double" ? benchmark::RegisterBenchmark(name.c_str(), bench_format<double>, mi, r, p)
                              : benchmark::RegisterBenchmark(name.c_str(), bench_format<float>, mi, r, p);
          }
          b->Iterations(1)->UseManualTime()->Unit(benchmark::kMicrosecond);
        }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    g_loaded.reset();
    print_summary();
    print_model_validation();
    print_profile_split();

  } catch (const kspmv::Error& e) {
    std::fprintf(stderr, "kspmv_perf: error: %s\n", e.what());
    return 1;
  }
  return g_wrong ? 1 : 0;
}
