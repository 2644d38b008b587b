// kspmv: the command-line program.
//
//   kspmv info MATRIX            size, nnz, row-length statistics, histogram
//         [--predict]            + every format's estimated time, storage,
//                                  padding and the model's pick
//         [--format F]           + the format's own report after converting
//   kspmv calibrate [--out FILE] time a few SpMVs, fit the model (--budget S)
//   kspmv spmv MATRIX --format F convert, check against the reference, time
//   kspmv convert MATRIX OUT     write Matrix Market (.mtx or .mtx.gz)
//   kspmv formats                list the formats this build knows
//
// MATRIX is a Matrix Market file (.mtx, .mtx.gz) or a generator spec such
// as lap3d:64 or powerlaw:1000000:8 (see `kspmv --help`).
//
// info, spmv and formats take --json: the same information as one JSON
// object on stdout (numbers as numbers), for scripts such as
// perf_tests/model_replay.py.
//
// Each command is a CLI11 subcommand with its own options: an option of
// another command is an error, `--key value` and `--key=value` both work,
// and numbers are checked before anything runs. Exit codes: 0 success,
// 1 an error while running (bad file, unknown format, ...), 2 a bad command
// line, 3 spmv computed a wrong result.

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "kspmv/kspmv.hpp"

namespace {

// Keys in the order the text output prints them.
using json = nlohmann::ordered_json;

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitWrongResult = 3;

// ---- what each command was given ----
struct InfoArgs {
  std::string matrix, calibration, format;
  int fractiles = 32;
  bool predict = false, json = false;
  bool has_calibration = false, has_format = false;
};
struct CalibrateArgs {
  std::string out;  // default: the user's cache entry for this device
  double budget = 120, scale = 1;
};
struct SpmvArgs {
  std::string matrix, format, precision = "double", x, write_y;
  int reps = 100, vector_length = 0;
  double alpha = 1, beta = 0;
  long long seed = 42;
  bool json = false;
  bool has_format = false, has_x = false, has_write_y = false, has_vector_length = false;
};
struct ConvertArgs {
  std::string matrix, output;
};
struct FormatsArgs {
  bool json = false;
};

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

template <class Scalar>
kspmv::HostCsr<Scalar> load_matrix(const std::string& what) {
  auto progress = kspmv::terminal_progress();  // stderr only: stdout may be JSON
  if (is_file(what)) {
    kspmv::MatrixMarketReadOptions o;
    o.progress = progress;
    return kspmv::read_matrix_market<Scalar>(what, o);
  }
  if (kspmv::is_generator_spec(what)) return kspmv::generate<Scalar>(what, progress);
  throw kspmv::InvalidArgumentError("'" + what + "' is neither a readable file nor a generator spec; generators:\n" +
                                    kspmv::generator_help());
}

// JSON has no NaN or infinity: such a value is written as null.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// A format's report is pairs of text; a value that reads as a number is
// written as a JSON number (width, k, isplit), whole numbers as integers.
// Values with a unit or several parts ("1.00%", "8.718 (alpha ...)") stay
// strings, as the library wrote them.
json properties_json(const kspmv::Properties& props) {
  json out = json::object();
  for (const auto& [k, v] : props) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(v.c_str(), &end, 10);
    if (!v.empty() && *end == '\0' && errno == 0) {
      out[k] = i;
      continue;
    }
    const double d = std::strtod(v.c_str(), &end);
    if (!v.empty() && *end == '\0' && std::isfinite(d))
      out[k] = d;
    else
      out[k] = v;
  }
  return out;
}

void print_json(const json& j) { std::cout << j.dump(2) << '\n'; }

// ---- info ----

json stats_json(const kspmv::RowLengthStats& s) {
  const double density = (s.nrows && s.ncols) ? double(s.nnz) / (double(s.nrows) * double(s.ncols)) : 0.0;
  // The exact distribution that the text histogram bins: rows per row
  // length, lengths that occur only.
  json counts = json::array();
  for (std::size_t len = 0; len < s.counts.size(); ++len)
    if (s.counts[len] > 0) counts.push_back({{"length", len}, {"rows", s.counts[len]}});
  return {{"rows", s.nrows},
          {"columns", s.ncols},
          {"nonzeros", s.nnz},
          {"density", number(density)},
          {"row_length",
           {{"mean", number(s.mean)},
            {"std", number(s.stddev)},
            {"skewness", number(s.skewness)},
            {"min", s.min},
            {"max", s.max}}},
          {"empty_rows", s.empty_rows},
          {"fractiles", {{"W", s.W}, {"values", s.fractiles}, {"mean", number(s.fractile_mean())}}},
          {"row_length_counts", counts}};
}

void print_stats(const kspmv::RowLengthStats& s) {
  std::printf("rows              %lld\n", (long long)s.nrows);
  std::printf("columns           %lld\n", (long long)s.ncols);
  std::printf("nonzeros          %lld\n", (long long)s.nnz);
  const double density = (s.nrows && s.ncols) ? double(s.nnz) / (double(s.nrows) * double(s.ncols)) : 0.0;
  std::printf("density           %.3e\n", density);
  std::printf("row length        mean %.3f  std %.3f  skewness %.3f  min %lld  max %lld\n", s.mean, s.stddev,
              s.skewness, (long long)s.min, (long long)s.max);
  std::printf("empty rows        %lld\n", (long long)s.empty_rows);
  std::printf("%d-fractiles       ", s.W);
  for (std::size_t i = 0; i < s.fractiles.size(); ++i)
    std::printf("%lld%s", (long long)s.fractiles[i], i + 1 < s.fractiles.size() ? " " : "\n");
  if (s.fractiles.empty()) std::printf("-\n");
  std::printf("fractile mean     %.3f  (E(Q), pmf-model eq. 32)\n", s.fractile_mean());
  std::printf("row-length histogram (rows per length):\n%s", kspmv::row_length_histogram(s).c_str());
}

// pmf-model Algorithm 1 over every format, double precision: the model,
// every estimate with the terms behind it, the pick, HYB's K three ways and
// the paper's own equations.
struct Prediction {
  kspmv::ModelHardware hw;
  kspmv::PatternStats stats;
  std::vector<kspmv::FormatEstimate> estimates;
  const char* pick = "";
  // Auto's model choice for solve loops of several lengths (SpMVs per
  // value refresh), set-up and refresh counted.
  std::vector<std::pair<double, const char*>> loop_picks;
  std::int64_t k_third = 0, k_model = 0, k_paper = 0;
  double paper_coo = 0, paper_csr = 0, paper_ell = 0, paper_hyb = 0;  // seconds
};

Prediction predict(const kspmv::HostCsr<double>& A, const std::vector<std::int64_t>& len) {
  Prediction r;
  r.hw = kspmv::default_model();
  r.stats = kspmv::pattern_stats(A, 8, r.hw);
  r.estimates = kspmv::estimate_all(r.stats, 8, r.hw);
  r.pick = kspmv::format_name(kspmv::pick(r.stats, 8, r.hw));
  for (double applies : {20.0, 100.0, 1000.0, 10000.0, 1e6})
    r.loop_picks.emplace_back(
        applies, kspmv::format_name(kspmv::rank_for_loop(r.stats, 8, r.hw, 3.0, applies).front().format));
  r.k_third = kspmv::hyb_k_one_third_rule(len);
  r.k_model = kspmv::model_hyb_k(r.stats, 8, r.hw);
  r.k_paper = kspmv::paper_hyb_k(r.stats.rows, 8, r.hw);
  r.paper_coo = kspmv::paper_coo(r.stats.rows, 8, r.hw);
  r.paper_csr = kspmv::paper_csr(r.stats.rows, 8, r.hw);
  r.paper_ell = kspmv::paper_ell(r.stats.rows, 8, r.hw);
  r.paper_hyb = kspmv::paper_hyb(r.stats.rows, r.k_paper, 8, r.hw);
  return r;
}

void print_prediction(const Prediction& r) {
  const auto& hw = r.hw;
  std::printf("\nmodel             %s; copy bandwidth %.0f GB/s, launch %.1f us, L2 gain %.2f\n", hw.name.c_str(),
              hw.bandwidth_gbs, hw.launch_us, hw.l2_gain);
  std::printf("calibration       %s%s\n", hw.source.c_str(), hw.calibrated ? "" : " (kspmv calibrate fits one)");
  std::printf("x reuse alpha     %.3f (evc-hyb 3.2, 32-row warps)   diagonals %lld\n", r.stats.alpha,
              (long long)r.stats.diagonals);
  // estimate = max(fixed + max(traffic / bandwidth, chain), host); the
  // terms are printed so that a miss can be traced to its term.
  std::printf("%-14s %12s %12s %10s %11s %9s %9s %9s %10s %11s  %s\n", "format", "estimate us", "storage MB",
              "padding", "traffic MB", "chain us", "fixed us", "host us", "set-up ms", "refresh us", "note");
  for (const auto& e : r.estimates)
    std::printf("%-14s %12.2f %12.2f %9.1f%% %11.2f %9.2f %9.2f %9.2f %10.2f %11.2f  %s%s\n",
                kspmv::format_name(e.format), e.seconds * 1e6, e.storage_bytes * 1e-6, 100 * e.padding,
                e.bytes * 1e-6, e.chain_seconds * 1e6, e.fixed_seconds * 1e6, e.host_seconds * 1e6,
                e.setup_seconds * 1e3, e.refresh_seconds * 1e6, e.feasible ? "" : "refused (fill or shape) ",
                e.note.c_str());
  std::printf("pick              %s (fastest SpMV)\n", r.pick);
  std::printf("auto, by loop     ");
  for (std::size_t i = 0; i < r.loop_picks.size(); ++i)
    std::printf("%s%g SpMVs a refresh: %s", i ? ", " : "", r.loop_picks[i].first, r.loop_picks[i].second);
  std::printf("\n                  (the model's choice; on a GPU auto then times its %d best and keeps the fastest,\n"
              "                  unless csr-vector, timed first, is within what ranking costs of %.1f us, the least\n"
              "                  SpMV of any format on this calibration, over those SpMVs)\n",
              kspmv::ConvertOptions().auto_candidates, kspmv::least_spmv_seconds(hw) * 1e6);
  std::printf("hyb K             1/3 rule %lld, model %lld, paper eq. 50 %lld\n", (long long)r.k_third,
              (long long)r.k_model, (long long)r.k_paper);
  std::printf("paper eqs. (us)   COO %.2f  CSR %.2f  ELL %.2f  HYB %.2f\n", r.paper_coo * 1e6, r.paper_csr * 1e6,
              r.paper_ell * 1e6, r.paper_hyb * 1e6);
}

// The same as print_prediction, times in us as there.
json prediction_json(const Prediction& r) {
  json estimates = json::array();
  for (const auto& e : r.estimates)
    estimates.push_back({{"format", kspmv::format_name(e.format)},
                         {"estimate_us", number(e.seconds * 1e6)},
                         {"storage_mb", number(e.storage_bytes * 1e-6)},
                         {"padding_pct", number(100 * e.padding)},
                         {"traffic_mb", number(e.bytes * 1e-6)},
                         {"chain_us", number(e.chain_seconds * 1e6)},
                         {"fixed_us", number(e.fixed_seconds * 1e6)},
                         {"host_us", number(e.host_seconds * 1e6)},
                         {"setup_ms", number(e.setup_seconds * 1e3)},
                         {"refresh_us", number(e.refresh_seconds * 1e6)},
                         {"feasible", e.feasible},
                         {"note", e.note}});
  return {{"model",
           {{"name", r.hw.name},
            {"calibrated", r.hw.calibrated},
            {"calibration", r.hw.source},
            {"bandwidth_gbs", number(r.hw.bandwidth_gbs)},
            {"launch_us", number(r.hw.launch_us)},
            {"l2_gain", number(r.hw.l2_gain)}}},
          {"x_reuse_alpha", number(r.stats.alpha)},
          {"diagonals", r.stats.diagonals},
          {"estimates", estimates},
          {"pick", r.pick},
          {"auto_by_loop", [&] {
             json l = json::array();
             for (const auto& [applies, f] : r.loop_picks) l.push_back({{"expected_applies", applies}, {"format", f}});
             return l;
           }()},
          {"hyb_k", {{"one_third_rule", r.k_third}, {"model", r.k_model}, {"paper_eq50", r.k_paper}}},
          {"paper_us",
           {{"coo", number(r.paper_coo * 1e6)},
            {"csr", number(r.paper_csr * 1e6)},
            {"ell", number(r.paper_ell * 1e6)},
            {"hyb", number(r.paper_hyb * 1e6)}}}};
}

int cmd_info(const InfoArgs& a) {
  // Read before the matrix is loaded: a bad calibration file fails at once.
  if (a.has_calibration) {
    auto hw = kspmv::read_calibration(a.calibration);
    hw.source = "--calibration " + a.calibration;
    kspmv::set_default_model(hw);
  }
  auto A = load_matrix<double>(a.matrix);
  const auto stats = kspmv::row_length_stats(A, a.fractiles);
  // pellr eqs. (1), (2): iterations of 32-thread warps over the rows in the
  // caller's order (ELLR) and sorted by length (PELLR, JAD).
  const auto len = kspmv::row_lengths(A);
  const auto e = kspmv::warp_iterations(len), p = kspmv::warp_iterations(kspmv::sorted_descending(len));
  const double fewer = p.n_iter ? double(e.n_iter) / double(p.n_iter) : 1.0;
  const bool sorts = kspmv::pellr_should_sort(e, p);
  json j;
  if (a.json) {
    j["matrix"] = a.matrix;
    j.update(stats_json(stats));
    j["warp_iterations"] = {{"ellr", e.n_iter}, {"sorted", p.n_iter}, {"fewer", number(fewer)},
                            {"n_p", e.n_p},     {"pellr_sorts", sorts}};
  } else {
    std::printf("matrix            %s\n", a.matrix.c_str());
    print_stats(stats);
    std::printf("warp iterations   N_iter ELLR %lld, sorted %lld (%.2fx fewer); N_p %lld; pellr %s\n",
                (long long)e.n_iter, (long long)p.n_iter, fewer, (long long)e.n_p,
                sorts ? "sorts (>= 5% fewer)" : "keeps the caller's order (< 5% fewer)");
  }
  if (a.predict) {
    const Prediction r = predict(A, len);
    if (a.json)
      j["predict"] = prediction_json(r);
    else
      print_prediction(r);
  }
  if (a.has_format) {
    const auto m = kspmv::Matrix<double>::convert(A, kspmv::parse_format(a.format));
    if (a.json) {
      j["format_report"] = {{"format", m.name()},
                            {"conversion_s", number(m.conversion_seconds())},
                            {"storage_mb", number(double(m.storage_bytes()) * 1e-6)},
                            {"properties", properties_json(m.properties())}};
    } else {
      std::printf("\nformat            %s (conversion %.3f s, %.2f MB)\n", m.name(), m.conversion_seconds(),
                  double(m.storage_bytes()) * 1e-6);
      for (const auto& [k, v] : m.properties()) std::printf("  %-28s %s\n", k.c_str(), v.c_str());
    }
  }
  if (a.json) print_json(j);
  return 0;
}

// ---- calibrate, convert, formats ----

int cmd_calibrate(const CalibrateArgs& a) {
  kspmv::CalibrationOptions co;
  co.budget_seconds = a.budget;
  co.scale = a.scale;
  co.log = [](const std::string& s) { std::printf("  %s\n", s.c_str()); };
  const std::string device = kspmv::device_figures<Kokkos::DefaultExecutionSpace>().name;
  const std::string out = a.out.empty() ? kspmv::calibration_cache_path(device) : a.out;
  if (out.empty())
    throw kspmv::InvalidArgumentError("no cache directory (neither XDG_CACHE_HOME nor HOME is set): give --out FILE");
  std::printf("calibrating the performance model of %s (budget %.0f s)\n", device.c_str(), co.budget_seconds);
  const auto hw = kspmv::calibrate_model<double>(co);
  kspmv::write_calibration_atomically(out, hw);
  if (a.out.empty())
    std::printf("wrote %s: auto finds it there for this device\n", out.c_str());
  else
    std::printf("wrote %s (use with KSPMV_CALIBRATION=%s or --calibration)\n", out.c_str(), out.c_str());
  return 0;
}

int cmd_convert(const ConvertArgs& a) {
  auto A = load_matrix<double>(a.matrix);
  kspmv::write_matrix_market(a.output, A, "written by kspmv convert from " + a.matrix);
  std::printf("wrote %s: %d x %d, %lld entries\n", a.output.c_str(), A.nrows, A.ncols, (long long)A.nnz());
  return 0;
}

int cmd_formats(const FormatsArgs& a) {
  if (a.json) {
    json list = json::array();
    for (const auto& f : kspmv::known_formats())
      list.push_back({{"name", f.name}, {"summary", f.summary}, {"square_only", f.square_only}});
    print_json({{"formats", list}});
    return 0;
  }
  for (const auto& f : kspmv::known_formats()) std::printf("%-14s %s\n", f.name, f.summary);
  return 0;
}

// ---- spmv ----

template <class Scalar>
int run_spmv(const SpmvArgs& a) {
  using Space = Kokkos::DefaultExecutionSpace;
  using M = kspmv::Matrix<Scalar, Space>;
  const kspmv::Format format = kspmv::parse_format(a.format);
  const int reps = a.reps;
  const Scalar alpha = static_cast<Scalar>(a.alpha);
  const Scalar beta = static_cast<Scalar>(a.beta);

  auto A = load_matrix<Scalar>(a.matrix);
  std::vector<Scalar> x(static_cast<std::size_t>(A.ncols)), y0(static_cast<std::size_t>(A.nrows));
  kspmv::Rng rng(static_cast<std::uint64_t>(a.seed));
  if (a.has_x) {
    const auto xv = kspmv::read_matrix_market_vector(a.x);
    if (static_cast<std::int64_t>(xv.size()) != A.ncols)
      throw kspmv::InvalidArgumentError(a.x + ": x has " + std::to_string(xv.size()) + " entries, the matrix has " +
                                        std::to_string(A.ncols) + " columns");
    std::transform(xv.begin(), xv.end(), x.begin(), [](double v) { return static_cast<Scalar>(v); });
  } else {
    for (auto& v : x) v = static_cast<Scalar>(2 * rng.uniform() - 1);
  }
  // y starts as random data when beta != 0; as NaN (poison) when beta == 0,
  // so an unwritten row or a leaked old value shows up as a failure.
  for (auto& v : y0) v = beta != Scalar(0) ? static_cast<Scalar>(2 * rng.uniform() - 1) : std::nanf("");

  kspmv::ConvertOptions opt;
  opt.progress = kspmv::terminal_progress();
  if (a.has_vector_length) opt.vector_length = a.vector_length;
  M m = M::convert(A, format, opt);

  typename M::vector_type dx("x", x.size()), dy("y", y0.size());
  auto hx = Kokkos::create_mirror_view(dx);
  auto hy = Kokkos::create_mirror_view(dy);
  for (std::size_t i = 0; i < x.size(); ++i) hx(i) = x[i];
  for (std::size_t i = 0; i < y0.size(); ++i) hy(i) = y0[i];
  Kokkos::deep_copy(dx, hx);
  Kokkos::deep_copy(dy, hy);

  // Checked run.
  m.apply(alpha, dx, beta, dy);
  Space().fence();
  Kokkos::deep_copy(hy, dy);
  std::vector<Scalar> y(y0.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = hy(i);
  const auto check = kspmv::check_spmv(A, alpha, x, beta, y0, y);
  if (a.has_write_y) kspmv::write_matrix_market_vector(a.write_y, y);

  // Timed runs (fenced one by one; perf_tests time with device events).
  std::vector<double> t(static_cast<std::size_t>(reps));
  for (int w = 0; w < std::min(reps, 5); ++w) m.apply(alpha, dx, beta, dy);
  Space().fence();
  for (int r = 0; r < reps; ++r) {
    Kokkos::Timer timer;
    m.apply(alpha, dx, beta, dy);
    Space().fence();
    t[r] = timer.seconds();
  }
  std::sort(t.begin(), t.end());
  const double med = t[t.size() / 2];
  const double gflops = med > 0 ? 2.0 * double(A.nnz()) / med * 1e-9 : 0.0;
  const double gbs = med > 0 ? kspmv::csr32_min_bytes(A) / med * 1e-9 : 0.0;
  const char* precision = sizeof(Scalar) == 4 ? "float" : "double";
  const double conversion_spmvs = med > 0 ? m.conversion_seconds() / med : 0.0;

  if (a.json) {
    // Printed whatever the check says; the exit code still tells a wrong
    // result (3) from a right one.
    print_json({{"matrix", a.matrix},
                {"rows", A.nrows},
                {"columns", A.ncols},
                {"nonzeros", A.nnz()},
                {"format", m.name()},
                {"properties", properties_json(m.properties())},
                {"precision", precision},
                {"execution_space", Space::name()},
                {"storage_mb", number(double(m.storage_bytes()) * 1e-6)},
                {"conversion_ms", number(m.conversion_seconds() * 1e3)},
                {"conversion_spmvs", number(conversion_spmvs)},
                {"check",
                 {{"ok", check.ok},
                  {"message", check.message},
                  {"bad_rows", check.bad_rows},
                  {"first_bad", check.first_bad},
                  {"worst_ratio", number(check.worst_ratio)}}},
                {"time", {{"median_us", number(med * 1e6)}, {"min_us", number(t.front() * 1e6)}, {"reps", reps}}},
                {"rate", {{"gflops", number(gflops)}, {"gbs_effective", number(gbs)}}}});
    return check.ok ? 0 : kExitWrongResult;
  }
  std::printf("matrix            %s\n", a.matrix.c_str());
  std::printf("size              %d x %d, %lld nonzeros\n", A.nrows, A.ncols, (long long)A.nnz());
  std::printf("format            %s\n", m.name());
  for (const auto& p : m.properties()) std::printf("  %-22s %s\n", p.first.c_str(), p.second.c_str());
  std::printf("precision         %s\n", precision);
  std::printf("execution space   %s\n", Space::name());
  std::printf("storage           %.3f MB\n", double(m.storage_bytes()) * 1e-6);
  std::printf("conversion        %.3f ms (%.1f x one SpMV)\n", m.conversion_seconds() * 1e3, conversion_spmvs);
  std::printf("check             %s%s\n", check.ok ? "ok" : "WRONG: ", check.ok ? "" : check.message.c_str());
  std::printf("time              median %.3f us, min %.3f us over %d runs\n", med * 1e6, t.front() * 1e6, reps);
  std::printf("rate              %.3f GFLOP/s, %.3f GB/s effective (CSR 32-bit minimum bytes)\n", gflops, gbs);
  return check.ok ? 0 : kExitWrongResult;
}

int cmd_spmv(const SpmvArgs& a) {
  if (a.precision == "float") return run_spmv<float>(a);
  return run_spmv<double>(a);
}

// ---- the command line ----

std::string matrix_help() {
  return "MATRIX is a Matrix Market file (.mtx or .mtx.gz) or a generator spec:\n" + kspmv::generator_help();
}

// After a parse error, the options that were not expected and the other
// commands that have them: "--reps is an option of `kspmv spmv`".
std::string misplaced_options_hint(const CLI::App& app) {
  const auto selected = app.get_subcommands();
  std::string hint;
  for (const std::string& arg : app.remaining(true)) {
    if (arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    std::string owners;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (std::find(selected.begin(), selected.end(), sub) != selected.end()) continue;
      if (sub->get_option_no_throw(name) != nullptr)
        owners += (owners.empty() ? "`kspmv " : "`, `kspmv ") + sub->get_name();
    }
    if (!owners.empty()) hint += "  " + name + " is an option of " + owners + "`\n";
  }
  return hint;
}

// `kspmv convert A B --reps 5`: the arguments CLI11 did not expect, in
// command-line order (CLI11 2.1's own message lists them reversed).
std::string unexpected_message(const CLI::App& app) {
  std::string list;
  for (const std::string& arg : app.remaining(true)) list += (list.empty() ? "" : " ") + arg;
  const auto sub = app.get_subcommands();
  return std::string(app.remaining(true).size() > 1 ? "unexpected arguments" : "unexpected argument") +
         (sub.empty() ? "" : " for `kspmv " + sub[0]->get_name() + "`") + ": " + list;
}

// Parses the command line, then starts Kokkos and runs the command. The
// command line is read first so that --help and a bad command line need no
// Kokkos (whose initialize() would print its own help for --help).
int run(int& argc, char** argv) {
  // Kokkos' own flags (--kokkos-threads=...) are for Kokkos::initialize().
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--kokkos", 0) != 0) args.emplace_back(argv[i]);
  // `kspmv help [COMMAND]` is `kspmv [COMMAND] --help`.
  if (!args.empty() && args[0] == "help") {
    args.erase(args.begin());
    args.emplace_back("--help");
  }

  CLI::App app("kspmv: sparse matrix-vector products on Kokkos, in every format this build knows", "kspmv");
  app.require_subcommand(0, 1);
  // A repeated option takes its last value, as a later --reps overrides an
  // earlier one in a script that appends options (inherited by the commands).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.footer(matrix_help() + "formats: " + kspmv::known_format_names() +
             "\nexit codes: 0 ok, 1 error, 2 bad command line, 3 spmv computed a wrong result");
  app.get_formatter()->column_width(34);

  InfoArgs info;
  auto* info_cmd = app.add_subcommand("info", "size, nnz, row-length statistics and histogram of a matrix");
  info_cmd->add_option("MATRIX", info.matrix, "Matrix Market file or generator spec")->required();
  info_cmd->add_option("--fractiles", info.fractiles, "W of the W-fractiles of the row lengths")
      ->transform(kspmv_cli::positive_integer())
      ->capture_default_str();
  info_cmd->add_flag("--predict", info.predict,
                     "add the performance model: every format's estimate, the pick, HYB's K");
  auto* info_cal = info_cmd->add_option("--calibration", info.calibration, "the model's calibration (kspmv calibrate)");
  auto* info_format = info_cmd->add_option("--format", info.format, "add FORMAT's own report after converting");
  info_cmd->add_flag("--json", info.json, "print one JSON object instead of text");
  info_cmd->footer(matrix_help());

  CalibrateArgs cal;
  auto* cal_cmd = app.add_subcommand("calibrate", "time a few SpMVs on the device and fit the performance model");
  cal_cmd->add_option("--out", cal.out,
                      "the calibration file to write (default: the user's cache, where auto finds it: "
                      "$XDG_CACHE_HOME/kspmv or ~/.cache/kspmv)");
  cal_cmd->add_option("--budget", cal.budget, "seconds to spend at most")
      ->check(kspmv_cli::non_negative_number())
      ->capture_default_str();
  cal_cmd->add_option("--scale", cal.scale, "size of the calibration matrices, relative")
      ->check(kspmv_cli::positive_number())
      ->capture_default_str();

  SpmvArgs spmv;
  auto* spmv_cmd = app.add_subcommand("spmv", "convert, check y = alpha A x + beta y against the reference, time");
  spmv_cmd->add_option("MATRIX", spmv.matrix, "Matrix Market file or generator spec")->required();
  auto* spmv_format = spmv_cmd->add_option("--format", spmv.format, "the format (required; see kspmv formats)");
  spmv_cmd->add_option("--reps", spmv.reps, "timed SpMVs")
      ->transform(kspmv_cli::positive_integer())
      ->capture_default_str();
  spmv_cmd->add_option("--precision", spmv.precision, "double or float")
      ->check(CLI::IsMember({"double", "float"}))
      ->capture_default_str();
  spmv_cmd->add_option("--alpha", spmv.alpha, "alpha")->check(kspmv_cli::finite_number())->capture_default_str();
  spmv_cmd->add_option("--beta", spmv.beta, "beta (0: y is not read)")
      ->check(kspmv_cli::finite_number())
      ->capture_default_str();
  auto* spmv_x = spmv_cmd->add_option("--x", spmv.x, "x from a Matrix Market array file (default: random)");
  auto* spmv_y = spmv_cmd->add_option("--write-y", spmv.write_y, "write the checked y as a Matrix Market array");
  spmv_cmd->add_option("--seed", spmv.seed, "seed of the random x and y")
      ->transform(kspmv_cli::non_negative_integer())
      ->capture_default_str();
  auto* spmv_vl = spmv_cmd->add_option("--vector-length", spmv.vector_length, "lanes per row (csr, csr-vector)")
                      ->transform(kspmv_cli::positive_integer());
  spmv_cmd->add_flag("--json", spmv.json, "print one JSON object instead of text");
  spmv_cmd->footer(matrix_help() + "formats: " + kspmv::known_format_names() +
                   "\nexits with 3 when the result is wrong");

  ConvertArgs conv;
  auto* conv_cmd = app.add_subcommand("convert", "write a matrix as Matrix Market (gzip when OUTPUT ends in .gz)");
  conv_cmd->add_option("MATRIX", conv.matrix, "Matrix Market file or generator spec")->required();
  conv_cmd->add_option("OUTPUT", conv.output, "OUTPUT.mtx or OUTPUT.mtx.gz")->required();
  conv_cmd->footer(matrix_help());

  FormatsArgs fmts;
  auto* fmts_cmd = app.add_subcommand("formats", "list the formats this build knows");
  fmts_cmd->add_flag("--json", fmts.json, "print one JSON object instead of text");

  std::vector<const char*> cargv = {"kspmv"};
  for (const auto& s : args) cargv.push_back(s.c_str());
  try {
    app.parse(static_cast<int>(cargv.size()), cargv.data());
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
    std::fprintf(stderr, "kspmv: %s\n%s", extras ? unexpected_message(app).c_str() : e.what(),
                 misplaced_options_hint(app).c_str());
    const auto sub = app.get_subcommands();
    std::fprintf(stderr, "run `kspmv%s%s --help` for the options\n", sub.empty() ? "" : " ",
                 sub.empty() ? "" : sub[0]->get_name().c_str());
    return kExitUsage;
  }
  info.has_calibration = info_cal->count() > 0;
  info.has_format = info_format->count() > 0;
  spmv.has_format = spmv_format->count() > 0;
  spmv.has_x = spmv_x->count() > 0;
  spmv.has_write_y = spmv_y->count() > 0;
  spmv.has_vector_length = spmv_vl->count() > 0;
  if (spmv_cmd->parsed() && !spmv.has_format) {
    // Not marked required in CLI11 so that the message can list the formats.
    std::fprintf(stderr, "kspmv: spmv needs --format (one of: %s)\nrun `kspmv spmv --help` for the options\n",
                 kspmv::known_format_names().c_str());
    return kExitUsage;
  }

  // Started before the overview too, which then follows Kokkos' own help
  // for `kspmv --kokkos-help`.
  Kokkos::ScopeGuard guard(argc, argv);
  if (app.get_subcommands().empty()) {  // no command: the overview, as --help prints it
    std::cout << app.help();
    return 0;
  }
  if (info_cmd->parsed()) return cmd_info(info);
  if (spmv_cmd->parsed()) return cmd_spmv(spmv);
  if (conv_cmd->parsed()) return cmd_convert(conv);
  if (fmts_cmd->parsed()) return cmd_formats(fmts);
  return cmd_calibrate(cal);
}

}  // namespace

int main(int argc, char** argv) {
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const kspmv::Error& e) {
    std::fprintf(stderr, "kspmv: error (%s): %s\n", kspmv::error_code_name(e.code()), e.what());
    rc = kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kspmv: error: %s\n", e.what());
    rc = kExitError;
  }
  return rc;
}
