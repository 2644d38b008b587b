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

#include <sys/stat.h>

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "kspmv/kspmv.hpp"

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitWrongResult = 3;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct HelpRequested {};

const char* kUsage =
    "usage:\n"
    "  kspmv info MATRIX [--fractiles W] [--predict] [--calibration FILE] [--format F]\n"
    "  kspmv calibrate [--out FILE] [--budget SECONDS] [--scale S]\n"
    "  kspmv spmv MATRIX --format F [--reps N] [--precision double|float]\n"
    "             [--alpha A] [--beta B] [--x FILE] [--write-y FILE] [--seed S]\n"
    "             [--vector-length V]\n"
    "  kspmv convert MATRIX OUTPUT.mtx[.gz]\n"
    "  kspmv formats\n"
    "MATRIX is a Matrix Market file (.mtx or .mtx.gz) or a generator spec:\n";

// Parsed command line: the command, positional arguments, --key value pairs.
struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> opts;

  std::string get(const std::string& k, const std::string& dflt) const {
    auto it = opts.find(k);
    return it == opts.end() ? dflt : it->second;
  }
  bool has(const std::string& k) const { return opts.count(k) != 0; }
};

const std::vector<std::string> kFlags = {"predict"};  // options without a value

Args parse_args(int argc, char** argv, const std::vector<std::string>& known) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--kokkos", 0) == 0) continue;  // Kokkos' own flags
    if (s.rfind("--", 0) == 0 && s.size() > 2) {
      const std::string key = s.substr(2);
      if (key == "help") throw HelpRequested{};
      if (std::find(kFlags.begin(), kFlags.end(), key) != kFlags.end()) {
        a.opts[key] = "1";
        continue;
      }
      if (std::find(known.begin(), known.end(), key) == known.end())
        throw UsageError("unknown option '" + s + "'");
      if (i + 1 >= argc) throw UsageError("option '" + s + "' needs a value");
      a.opts[key] = argv[++i];
    } else if (a.command.empty()) {
      a.command = s;
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

double parse_double(const std::string& s, const char* what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty()) throw UsageError(std::string(what) + " '" + s + "' is not a number");
  return v;
}

long long parse_int(const std::string& s, const char* what, long long lo) {
  const double v = parse_double(s, what);
  if (v != std::floor(v) || v < double(lo)) throw UsageError(std::string(what) + " '" + s + "' must be an integer >= " + std::to_string(lo));
  return static_cast<long long>(v);
}

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

template <class Scalar>
kspmv::HostCsr<Scalar> load_matrix(const std::string& what) {
  auto progress = kspmv::terminal_progress();
  if (is_file(what)) {
    kspmv::MatrixMarketReadOptions o;
    o.progress = progress;
    return kspmv::read_matrix_market<Scalar>(what, o);
  }
  if (kspmv::is_generator_spec(what)) return kspmv::generate<Scalar>(what, progress);
  throw kspmv::InvalidArgumentError("'" + what + "' is neither a readable file nor a generator spec; generators:\n" +
                                    kspmv::generator_help());
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

int cmd_info(const Args& a) {
  if (a.positional.size() != 1) throw UsageError("info takes one MATRIX");
  const int W = static_cast<int>(parse_int(a.get("fractiles", "32"), "--fractiles", 1));
  auto A = load_matrix<double>(a.positional[0]);
  std::printf("matrix            %s\n", a.positional[0].c_str());
  print_stats(kspmv::row_length_stats(A, W));
  // pellr eqs. (1), (2): iterations of 32-thread warps over the rows in the
  // caller's order (ELLR) and sorted by length (PELLR, JAD).
  const auto len = kspmv::row_lengths(A);
  const auto e = kspmv::warp_iterations(len), p = kspmv::warp_iterations(kspmv::sorted_descending(len));
  std::printf("warp iterations   N_iter ELLR %lld, sorted %lld (%.2fx fewer); N_p %lld; pellr %s\n",
              (long long)e.n_iter, (long long)p.n_iter, p.n_iter ? double(e.n_iter) / double(p.n_iter) : 1.0,
              (long long)e.n_p,
              kspmv::pellr_should_sort(e, p) ? "sorts (>= 5% fewer)" : "keeps the caller's order (< 5% fewer)");
  if (a.has("calibration")) kspmv::set_default_model(kspmv::read_calibration(a.get("calibration", "")));
  if (a.has("predict")) {
    // pmf-model Algorithm 1 over every format, double precision.
    const auto& hw = kspmv::default_model();
    const auto stats = kspmv::pattern_stats(A, 8, hw);
    std::printf("\nmodel             %s (%s); copy bandwidth %.0f GB/s, launch %.1f us, L2 gain %.2f\n",
                hw.name.c_str(), hw.calibrated ? "calibrated" : "uncalibrated defaults: kspmv calibrate",
                hw.bandwidth_gbs, hw.launch_us, hw.l2_gain);
    std::printf("x reuse alpha     %.3f (evc-hyb 3.2, 32-row warps)   diagonals %lld\n", stats.alpha,
                (long long)stats.diagonals);
    // estimate = max(fixed + max(traffic / bandwidth, chain), host); the
    // terms are printed so that a miss can be traced to its term.
    std::printf("%-14s %12s %12s %10s %11s %9s %9s %9s  %s\n", "format", "estimate us", "storage MB", "padding",
                "traffic MB", "chain us", "fixed us", "host us", "note");
    const auto est = kspmv::estimate_all(stats, 8, hw);
    for (const auto& e : est)
      std::printf("%-14s %12.2f %12.2f %9.1f%% %11.2f %9.2f %9.2f %9.2f  %s%s\n", kspmv::format_name(e.format),
                  e.seconds * 1e6, e.storage_bytes * 1e-6, 100 * e.padding, e.bytes * 1e-6,
                  e.chain_seconds * 1e6, e.fixed_seconds * 1e6, e.host_seconds * 1e6,
                  e.feasible ? "" : "refused (fill or shape) ", e.note.c_str());
    std::printf("pick              %s\n", kspmv::format_name(kspmv::pick(stats, 8, hw)));
    std::printf("hyb K             1/3 rule %lld, model %lld, paper eq. 50 %lld\n",
                (long long)kspmv::hyb_k_one_third_rule(len),
                (long long)kspmv::model_hyb_k(stats, 8, hw), (long long)kspmv::paper_hyb_k(stats.rows, 8, hw));
    std::printf("paper eqs. (us)   COO %.2f  CSR %.2f  ELL %.2f  HYB %.2f\n",
                kspmv::paper_coo(stats.rows, 8, hw) * 1e6, kspmv::paper_csr(stats.rows, 8, hw) * 1e6,
                kspmv::paper_ell(stats.rows, 8, hw) * 1e6,
                kspmv::paper_hyb(stats.rows, kspmv::paper_hyb_k(stats.rows, 8, hw), 8, hw) * 1e6);
  }
  if (a.has("format")) {
    const auto m = kspmv::Matrix<double>::convert(A, kspmv::parse_format(a.get("format", "")));
    std::printf("\nformat            %s (conversion %.3f s, %.2f MB)\n", m.name(), m.conversion_seconds(),
                double(m.storage_bytes()) * 1e-6);
    for (const auto& [k, v] : m.properties()) std::printf("  %-28s %s\n", k.c_str(), v.c_str());
  }
  return 0;
}

int cmd_calibrate(const Args& a) {
  kspmv::CalibrationOptions co;
  co.budget_seconds = parse_double(a.get("budget", "120"), "--budget");
  co.scale = parse_double(a.get("scale", "1"), "--scale");
  co.log = [](const std::string& s) { std::printf("  %s\n", s.c_str()); };
  std::printf("calibrating the performance model (budget %.0f s)\n", co.budget_seconds);
  const auto hw = kspmv::calibrate_model<double>(co);
  const std::string out = a.get("out", "kspmv.cal");
  kspmv::write_calibration(out, hw);
  std::printf("wrote %s (use with KSPMV_CALIBRATION=%s or --calibration)\n", out.c_str(), out.c_str());
  return 0;
}

int cmd_convert(const Args& a) {
  if (a.positional.size() != 2) throw UsageError("convert takes MATRIX and OUTPUT");
  auto A = load_matrix<double>(a.positional[0]);
  kspmv::write_matrix_market(a.positional[1], A, "written by kspmv convert from " + a.positional[0]);
  std::printf("wrote %s: %d x %d, %lld entries\n", a.positional[1].c_str(), A.nrows, A.ncols, (long long)A.nnz());
  return 0;
}

template <class Scalar>
int run_spmv(const Args& a) {
  using Space = Kokkos::DefaultExecutionSpace;
  using M = kspmv::Matrix<Scalar, Space>;
  if (a.positional.size() != 1) throw UsageError("spmv takes one MATRIX");
  if (!a.has("format")) throw UsageError("spmv needs --format (one of: " + kspmv::known_format_names() + ")");
  const kspmv::Format format = kspmv::parse_format(a.get("format", ""));
  const int reps = static_cast<int>(parse_int(a.get("reps", "100"), "--reps", 1));
  const Scalar alpha = static_cast<Scalar>(parse_double(a.get("alpha", "1"), "--alpha"));
  const Scalar beta = static_cast<Scalar>(parse_double(a.get("beta", "0"), "--beta"));
  const auto seed = static_cast<std::uint64_t>(parse_int(a.get("seed", "42"), "--seed", 0));

  auto A = load_matrix<Scalar>(a.positional[0]);
  std::vector<Scalar> x(static_cast<std::size_t>(A.ncols)), y0(static_cast<std::size_t>(A.nrows));
  kspmv::Rng rng(seed);
  if (a.has("x")) {
    const auto xv = kspmv::read_matrix_market_vector(a.get("x", ""));
    if (static_cast<std::int64_t>(xv.size()) != A.ncols)
      throw kspmv::InvalidArgumentError(a.get("x", "") + ": x has " + std::to_string(xv.size()) +
                                        " entries, the matrix has " + std::to_string(A.ncols) + " columns");
    std::transform(xv.begin(), xv.end(), x.begin(), [](double v) { return static_cast<Scalar>(v); });
  } else {
    for (auto& v : x) v = static_cast<Scalar>(2 * rng.uniform() - 1);
  }
  // y starts as random data when beta != 0; as NaN (poison) when beta == 0,
  // so an unwritten row or a leaked old value shows up as a failure.
  for (auto& v : y0) v = beta != Scalar(0) ? static_cast<Scalar>(2 * rng.uniform() - 1) : std::nanf("");

  kspmv::ConvertOptions opt;
  opt.progress = kspmv::terminal_progress();
  if (a.has("vector-length")) opt.vector_length = static_cast<int>(parse_int(a.get("vector-length", ""), "--vector-length", 1));
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
  if (a.has("write-y")) kspmv::write_matrix_market_vector(a.get("write-y", ""), y);

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

  std::printf("matrix            %s\n", a.positional[0].c_str());
  std::printf("size              %d x %d, %lld nonzeros\n", A.nrows, A.ncols, (long long)A.nnz());
  std::printf("format            %s\n", m.name());
  for (const auto& p : m.properties()) std::printf("  %-22s %s\n", p.first.c_str(), p.second.c_str());
  std::printf("precision         %s\n", sizeof(Scalar) == 4 ? "float" : "double");
  std::printf("execution space   %s\n", Space::name());
  std::printf("storage           %.3f MB\n", double(m.storage_bytes()) * 1e-6);
  std::printf("conversion        %.3f ms (%.1f x one SpMV)\n", m.conversion_seconds() * 1e3,
              med > 0 ? m.conversion_seconds() / med : 0.0);
  std::printf("check             %s%s\n", check.ok ? "ok" : "WRONG: ", check.ok ? "" : check.message.c_str());
  std::printf("time              median %.3f us, min %.3f us over %d runs\n", med * 1e6, t.front() * 1e6, reps);
  std::printf("rate              %.3f GFLOP/s, %.3f GB/s effective (CSR 32-bit minimum bytes)\n", gflops, gbs);
  return check.ok ? 0 : kExitWrongResult;
}

int cmd_spmv(const Args& a) {
  const std::string p = a.get("precision", "double");
  if (p == "double") return run_spmv<double>(a);
  if (p == "float") return run_spmv<float>(a);
  throw UsageError("--precision must be double or float");
}

int cmd_formats() {
  for (const auto& f : kspmv::known_formats()) std::printf("%-14s %s\n", f.name, f.summary);
  return 0;
}

int run(int argc, char** argv) {
  const Args a = parse_args(argc, argv, {"format", "reps", "precision", "alpha", "beta", "x", "write-y", "seed",
                                         "fractiles", "vector-length", "calibration", "out", "budget", "scale"});
  if (a.command == "info") return cmd_info(a);
  if (a.command == "spmv") return cmd_spmv(a);
  if (a.command == "convert") return cmd_convert(a);
  if (a.command == "formats") return cmd_formats();
  if (a.command == "calibrate") return cmd_calibrate(a);
  if (a.command.empty() || a.command == "help") throw HelpRequested{};
  throw UsageError("unknown command '" + a.command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  int rc = 0;
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    rc = run(argc, argv);
  } catch (const HelpRequested&) {
    std::printf("%s%s", kUsage, kspmv::generator_help().c_str());
    std::printf("formats: %s\n", kspmv::known_format_names().c_str());
  } catch (const UsageError& e) {
    if (*e.what()) std::fprintf(stderr, "kspmv: %s\n", e.what());
    std::fprintf(stderr, "%s%s", kUsage, kspmv::generator_help().c_str());
    rc = kExitUsage;
  } catch (const kspmv::Error& e) {
    std::fprintf(stderr, "kspmv: error (%s): %s\n", kspmv::error_code_name(e.code()), e.what());
    rc = kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kspmv: error: %s\n", e.what());
    rc = kExitError;
  }
  return rc;
}
