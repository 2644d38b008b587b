// Quick empirical calibration of the traffic model (pmf-model §5 "beyond
// the paper"): a few timed SpMVs on the device under a time budget fit the
// launch cost, each format's fixed cost (its time on a tiny matrix), each
// format's bandwidth efficiency past L2 and within it, the L2 gain and the
// cost of a lane's serial chain (one figure, then each format's own within
// L2 and past it). The result can be written to a calibration file
// (kspmv calibrate) and handed to set_default_model() / $KSPMV_CALIBRATION.
//
// This floor knows formats by name only: the caller hands in how to time
// one (a FormatTimer). The run-time Matrix's calibrate_model()
// (kspmv/calibrate.hpp) converts and times through kspmv::Matrix.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "kspmv/core/device_info.hpp"
#include "kspmv/core/device_timer.hpp"
#include "kspmv/inputs/generators.hpp"
#include "kspmv/model/model.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv {

struct CalibrationOptions {
  // Formats not reached in time keep the default efficiency. 60 s left
  // EHYB out on the H100 once the csr and csr-vector chains were fitted too.
  double budget_seconds = 90;
  double scale = 1.0;          // matrix sizes (1: ~12M nonzeros, past a 50 MB L2)
  std::function<void(const std::string&)> log;
};

namespace detail {
// Per-SpMV seconds of a batch run back to back (medians of seven): on the
// device alone, and the host's cost to queue one. Where the space has a
// launch queue (CUDA), the stream is parked behind a spinning kernel while
// the host queues the batch, and events time the batch alone: timed with a
// host clock, a batch of tiny SpMVs measured the host's launch rate, which
// moved by 1 us from one calibration to the next. parked is
// false where the batch could not be parked: a host space (device and
// host times are the same there), or a format whose apply waits on the
// device (a fence or a copy back), when the batch's wall time is kept.
struct ApplyTimes {
  double device = 0, host = 0;
  bool parked = false;
};

// apply(space) queues one SpMV on `space`.
template <class ExecSpace, class ApplyOnce>
ApplyTimes time_apply(const ApplyOnce& apply) {
  using Timer = DeviceTimer<ExecSpace>;
  ExecSpace space;
  Timer timer(space);
  Kokkos::Timer t;
  int w = 0;
  // 50 ms: the GPU lowers its clocks while the host converts, and 20 ms
  // did not always bring them back (first formats fitted 40% low).
  while (w < 3 || t.seconds() < 0.05) {
    apply(space);
    ++w;
  }
  space.fence();
  timer.start();
  apply(space);
  const double one = std::max(timer.stop(), 1e-7);
  // Batches of >= 2 ms; parked ones of at most 256 SpMVs (PKT's five
  // launches each stay well inside CUDA's queue of pending launches).
  const int k = static_cast<int>(std::clamp(std::ceil(2e-3 / one), 1.0, Timer::can_hold ? 256.0 : 2000.0));
  std::vector<double> dev(7), host(7);
  // Seven batches, each behind a hold (hold > 0) or not; false where a
  // parked batch still outran its hold after three longer tries.
  auto sample = [&](double hold) {
    for (std::size_t i = 0; i < dev.size(); ++i)
      for (int attempt = 0;; ++attempt) {
        space.fence();
        if (hold > 0) timer.hold(hold);
        Kokkos::Timer queued;
        timer.start();
        for (int j = 0; j < k; ++j) apply(space);
        const double q = queued.seconds();
        const double d = timer.stop();
        dev[i] = d / k;
        host[i] = q / k;
        // The host must have queued the whole batch before the hold ended.
        if (hold <= 0 || q < 0.8 * timer.held()) break;
        if (attempt == 3) return false;
        hold = 2 * q + 1e-3;
      }
    return true;
  };
  const bool parked = Timer::can_hold && sample(2e-3);
  if (!parked) sample(0);
  std::sort(dev.begin(), dev.end());
  std::sort(host.begin(), host.end());
  return {dev[dev.size() / 2], host[host.size() / 2], parked};
}
}  // namespace detail

// Converts `a` to format `f` with `opt` and times its SpMV
// (detail::time_apply). Throws kspmv::Error where the format cannot hold
// `a` or this build lacks it.
template <class Scalar>
using FormatTimer = std::function<detail::ApplyTimes(const HostCsr<Scalar>&, Format, const ConvertOptions&)>;

template <class Scalar, class ExecSpace>
ModelHardware calibrate_model(const CalibrationOptions& co, const FormatTimer<Scalar>& times_of) {
  Kokkos::Timer budget;
  auto log = [&](const std::string& s) {
    if (co.log) co.log(s);
  };
  const int tau = static_cast<int>(sizeof(Scalar));
  const DeviceFigures fig = device_figures<ExecSpace>();
  ModelHardware hw;
  hw.name = fig.name;
  hw.processors = fig.processors;
  hw.cores = fig.processors * (fig.warp == 32 ? 128 : 1);  // FP32 lanes per SM on Hopper
  hw.warp = fig.warp;
  if (fig.l2_bytes > 0) hw.l2_bytes = fig.l2_bytes;
  if (fig.memory_clock_ghz > 0) hw.memory_clock_ghz = fig.memory_clock_ghz;
  if (fig.bus_width_bits > 0) hw.bus_width_bits = fig.bus_width_bits;
  if (fig.clock_ghz > 0) hw.core_clock_ghz = fig.clock_ghz;
  // Copy bandwidth: bytes read + written.
  {
    const std::size_t n = static_cast<std::size_t>(std::max(1e6, 3.2e7 * std::min(1.0, co.scale)));
    Kokkos::View<double*, typename ExecSpace::memory_space> a("cal_a", n), b("cal_b", n);
    Kokkos::deep_copy(a, 1.0);
    // A quarter second of copies first, then the median of nine. The figure
    // (256 MB copies) reads 5-7% under the benchmark's 2 GiB copies on the
    // H100 (2780 against 2978 GB/s): the efficiencies are fitted
    // against it and used with it, so the model is consistent either way.
    std::vector<double> t(9);
    for (Kokkos::Timer warm; warm.seconds() < 0.25 * std::min(1.0, co.scale * 10);) {
      Kokkos::deep_copy(ExecSpace(), b, a);
      ExecSpace().fence();
    }
    for (auto& s : t) {
      Kokkos::Timer w;
      Kokkos::deep_copy(ExecSpace(), b, a);
      ExecSpace().fence();
      s = w.seconds();
    }
    std::sort(t.begin(), t.end());
    hw.bandwidth_gbs = 2.0 * n * sizeof(double) / t[t.size() / 2] * 1e-9;
    log("copy bandwidth " + std::to_string(hw.bandwidth_gbs) + " GB/s");
  }
  // Device seconds per SpMV (the host's queuing cost hidden where it can be).
  auto time_of = [&](const HostCsr<Scalar>& a, Format f, const ConvertOptions& opt) {
    return times_of(a, f, opt).device;
  };
  // Each format's fixed cost: an SpMV with almost nothing to move, its
  // launches and its passes over a few cache lines, on the device alone;
  // and the host's cost to queue one, a floor under any SpMV run back to
  // back (estimate()). Five passes, the smallest time kept: the first
  // formats of the first pass measured up to 4x slower on the H100 (clocks
  // still rising, first-call setup) than in the second. The launch cost is
  // csr-vector's (one launch, one pass).
  const auto tiny = generate<Scalar>("lap1d:2000");
  bool all_parked = true;
  for (int pass = 0; pass < 5; ++pass)
    for (const auto& d : known_formats()) {
      if (d.format == Format::Auto) continue;
      ConvertOptions opt;
      opt.partitioner = Partitioner::Contiguous;
      try {
        const detail::ApplyTimes t = times_of(tiny, d.format, opt);
        auto keep_min = [&](std::map<std::string, double>& m, double us) {
          const auto it = m.find(d.name);
          m[d.name] = it == m.end() ? us : std::min(it->second, us);
        };
        keep_min(hw.fixed_us, t.device * 1e6);
        // Unparked (a host space), the device time already holds the host's.
        if (t.parked) keep_min(hw.host_us, t.host * 1e6);
        all_parked = all_parked && t.parked;
      } catch (const Error&) {
        continue;  // a format this device or build lacks keeps launches * launch_us
      }
    }
  {
    std::string line = std::string("fixed cost (us, ") + (all_parked ? "device alone" : "batch wall time") + "):";
    for (const auto& [k, v] : hw.fixed_us) line += " " + k + " " + std::to_string(v).substr(0, 5);
    log(line);
    if (!hw.host_us.empty()) {
      line = "host cost to queue one SpMV (us):";
      for (const auto& [k, v] : hw.host_us) line += " " + k + " " + std::to_string(v).substr(0, 5);
      log(line);
    }
  }
  hw.launch_us = hw.fixed_us.at(format_name(Format::CsrVector));
  log("launch " + std::to_string(hw.launch_us) + " us");
  // A lane's serial chain first (the efficiency fits leave out runs it
  // bounds): one long row walked by csr-scalar.
  {
    const std::int64_t len = static_cast<std::int64_t>(std::max(2000.0, 2e5 * std::min(1.0, co.scale * 10)));
    HostCoo<Scalar> c(64, len);
    for (std::int64_t j = 0; j < len; ++j) c.add(3, static_cast<ordinal_t>(j), Scalar(1));
    const auto a = to_csr(c);
    const double t = time_of(a, Format::CsrScalar, {});
    hw.serial_ns = std::max(0.1, (t - hw.launch_us * 1e-6) / double(len) * 1e9);
    log("serial chain " + std::to_string(hw.serial_ns) + " ns per entry");
  }
  // Each format's own cost per element of a lane's serial chain, in the two
  // regimes where one long row sets the time: one lane walking a row of
  // 4096 scattered columns alone, beside short rows (4 entries, a narrow
  // band), with the matrix within L2 (32K rows) and past it (2M rows, the
  // row's steps then DRAM round trips). A lane striding a column-major
  // layout (PELLR, JAD) pays a sector a step, a CSR lane walks its own
  // cache lines. ELL and ELLR cannot hold such a matrix (the long row pads
  // every slice) and walk PELLR's layout: they take its figure (and HYB's
  // ELL part ELL's). PKT is measured on packets of long rows (below).
  // csr and csr-vector walk the row with a group of lanes (512 steps of 8
  // here), kk-crs a lane a row there (its rule for short rows); formats
  // that split a row wider (csr-adaptive, EVC-HYB)
  // or cap a lane's share (EHYB) have chains below 500 steps here and keep
  // serial_ns.
  {
    Kokkos::Timer stage;
    const double shrink = std::min(1.0, co.scale * 10);
    // ns a step of format f on matrix a, into `out`, where its chain has at
    // least min_elements steps; false where it was not measured.
    auto fit_chain = [&](Format f, const HostCsr<Scalar>& a, const PatternStats& s, const ConvertOptions& opt,
                         double min_elements, std::map<std::string, double>& out, std::string& line) {
      const FormatEstimate e = estimate(f, s, tau, hw);
      if (!e.feasible || e.chain_elements < min_elements || budget.seconds() > co.budget_seconds / 3) return;
      try {
        const double t = time_of(a, f, opt) - e.fixed_seconds;
        if (t <= 0) return;
        out[format_name(f)] = t / e.chain_elements * 1e9;
        line += " " + std::string(format_name(f)) + " " + std::to_string(out[format_name(f)]).substr(0, 6);
      } catch (const FormatCannotHoldError&) {
      }
    };
    // A square pattern of ones, row i's columns from cols_of(i, cols)
    // (sorted and made unique here).
    auto pattern = [](std::int64_t rows, const std::function<void(std::int64_t, std::vector<ordinal_t>&)>& cols_of) {
      HostCsr<Scalar> a(rows, rows);
      std::vector<ordinal_t> cols;
      for (std::int64_t i = 0; i < rows; ++i) {
        cols.clear();
        cols_of(i, cols);
        std::sort(cols.begin(), cols.end());
        cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
        a.col_idx.insert(a.col_idx.end(), cols.begin(), cols.end());
        a.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<offset_t>(a.col_idx.size());
      }
      a.values.assign(a.col_idx.size(), Scalar(1));
      return a;
    };
    auto long_row_matrix = [&](std::int64_t rows) {
      const std::int64_t len = std::min<std::int64_t>(rows, std::max<std::int64_t>(1024, 4096 * shrink));
      return pattern(rows, [&](std::int64_t i, std::vector<ordinal_t>& cols) {
        if (i == 0)  // the long row
          for (std::int64_t j = 0; j < len; ++j) cols.push_back(static_cast<ordinal_t>((j * 1000003) % rows));
        else
          for (std::int64_t c = std::max<std::int64_t>(0, i - 1); c <= std::min(rows - 1, i + 2); ++c)
            cols.push_back(static_cast<ordinal_t>(c));
      });
    };
    struct Regime {
      const char* name;
      std::int64_t rows;
      std::map<std::string, double>* out;
    };
    const Regime regimes[] = {
        {"within L2", std::max<std::int64_t>(4096, static_cast<std::int64_t>(32768 * shrink)), &hw.chain_ns},
        {"past L2", std::max<std::int64_t>(4096, static_cast<std::int64_t>(2e6 * co.scale)), &hw.chain_dram_ns}};
    for (const auto& r : regimes) {
      const HostCsr<Scalar> a = long_row_matrix(r.rows);
      const PatternStats s = pattern_stats(a, tau, hw);
      std::string line = std::string("chain ns per element ") + r.name + ":";
      for (const auto& d : known_formats())
        if (d.format != Format::Auto) fit_chain(d.format, a, s, {}, 500, *r.out, line);
      const auto pellr = r.out->find(format_name(Format::Pellr));
      if (pellr != r.out->end())
        for (Format f : {Format::Ell, Format::Ellr}) (*r.out)[format_name(f)] = pellr->second;
      log(line);
    }
    // PKT's threads walk a share of their packet rather than one long row:
    // its figure comes from a few packets of long rows, columns scattered
    // over a band of 4096 (4096 rows of 192 entries: 4 packets of 512
    // threads, as on raefsky1). EHYB measured 165 ns there, and its
    // estimates on the small real matrices went 1.1-1.9x high with it
    // it keeps serial_ns.
    {
      const std::int64_t rows = std::max<std::int64_t>(1024, static_cast<std::int64_t>(4096 * shrink));
      const std::int64_t w = std::min<std::int64_t>(rows, 4096);  // distinct columns: 1000003 is coprime to w
      const HostCsr<Scalar> a = pattern(rows, [&](std::int64_t i, std::vector<ordinal_t>& cols) {
        for (std::int64_t j = 0; j < 192; ++j)
          cols.push_back(static_cast<ordinal_t>((i - w / 2 + (i * 7 + j * 1000003) % w + rows) % rows));
      });
      const PatternStats s = pattern_stats(a, tau, hw);
      std::string line = "chain ns per element within L2, packets:";
      ConvertOptions opt;
      opt.partitioner = Partitioner::Contiguous;
      fit_chain(Format::Pkt, a, s, opt, 64, hw.chain_ns, line);
      log(line);
    }
    // csr-scalar's line figure: every lane walking a row of its own, so a
    // warp's load touches up to 32 lines, which its SM looks up one by
    // one. Rows of 27 columns in a band of 128 (an odd length: rows of 32
    // put every lane's lines 128 or 256 bytes apart, the same L1 sets,
    // and measured 1.4x slower a line on the H100),
    // 16 warps an SM where L2 holds them; the time left after the longest
    // row's chain is the SMs' line time (model.hpp, line_ns). Devices
    // with warps only: a host space walks the rows one by one.
    if (hw.warp > 1 && budget.seconds() <= co.budget_seconds / 3) {
      constexpr std::int64_t len = 27;
      const double fit_rows = 0.4 * double(hw.l2_bytes) / (len * (tau + int(sizeof(ordinal_t))) + 3 * tau);
      // At least a block of 128 rows an SM, so quick runs still see lines.
      const std::int64_t rows = std::max<std::int64_t>(
          std::int64_t(std::max(1, hw.processors)) * 128,
          static_cast<std::int64_t>(std::min(double(hw.processors) * 512, fit_rows) * shrink));
      const HostCsr<Scalar> a = pattern(rows, [&](std::int64_t i, std::vector<ordinal_t>& cols) {
        for (std::int64_t j = 0; j < len; ++j)
          cols.push_back(static_cast<ordinal_t>((i - 64 + (j * 37 + i * 11) % 128 + rows) % rows));
      });
      const PatternStats s = pattern_stats(a, tau, hw);
      const FormatEstimate e = estimate(Format::CsrScalar, s, tau, hw);
      const double lone_chain = double(s.rows.max) * chain_ns_of(hw, Format::CsrScalar, true) * 1e-9;
      const double t = time_of(a, Format::CsrScalar, {}) - e.fixed_seconds - lone_chain;
      const double lines_per_sm = s.scalar_lines / std::max(1, hw.processors);
      if (t > 0 && lines_per_sm > 0) {
        hw.line_ns[format_name(Format::CsrScalar)] = t / lines_per_sm * 1e9;
        log("line ns an SM, csr-scalar: " + std::to_string(t / lines_per_sm * 1e9).substr(0, 6) + " (" +
            std::to_string(lines_per_sm).substr(0, 7) + " lines an SM)");
      }
    }
    log("chain figures took " + std::to_string(stage.seconds()).substr(0, 5) + " s");
  }
  // Efficiencies on two matrices past L2: a 3D stencil (regular rows) and
  // a power-law graph (irregular rows), one efficiency each.
  const auto side = static_cast<std::int64_t>(std::max(8.0, 120 * std::cbrt(co.scale)));
  const auto rows = static_cast<std::int64_t>(std::max(2000.0, 1.5e6 * co.scale));
  const HostCsr<Scalar> regular = generate<Scalar>("lap3d:" + std::to_string(side));
  const HostCsr<Scalar> irregular = generate<Scalar>("powerlaw:" + std::to_string(rows) + ":8");
  const PatternStats s_reg = pattern_stats(regular, tau, hw);
  const PatternStats s_irr = pattern_stats(irregular, tau, hw);
  // One format's bandwidth efficiency on matrix `a`: the model's bytes at
  // the copy bandwidth over the measured time less the format's fixed cost,
  // clamped to [0.02, cap]. 0 (no figure) where the format cannot hold the
  // matrix or would move more than max_bytes, where the time left is at
  // most min_share x the fixed cost, or where one lane's chain bounds the
  // run (it says nothing about bandwidth then).
  auto fit_efficiency = [&](Format f, const HostCsr<Scalar>& a, const PatternStats& s, double max_fill,
                            double max_bytes, double min_share, double cap) -> double {
    ConvertOptions opt;
    opt.max_fill = max_fill;
    opt.partitioner = f == Format::Pkt ? Partitioner::Contiguous : Partitioner::Cells;
    try {
      // Only the estimate's traffic and chain are used: neither depends on
      // the efficiencies or the L2 gain being fitted.
      const FormatEstimate e = estimate(f, s, tau, hw, opt.max_fill);
      if (!e.feasible || e.bytes > max_bytes) return 0;
      const double fixed = e.fixed_seconds;
      const double t = time_of(a, f, opt) - fixed;
      if (t <= min_share * fixed || e.chain_seconds > 0.5 * t) return 0;
      return std::clamp(e.bytes / (hw.bandwidth_gbs * 1e9) / t, 0.02, cap);
    } catch (const FormatCannotHoldError&) {
      return 0;
    }
  };
  // HYB has no figures of its own: its estimate runs its ELL part at ELL's
  // and its COO part at COO's (the kernels it launches).
  for (const auto& d : known_formats()) {
    if (d.format == Format::Auto || d.format == Format::Hyb) continue;
    if (budget.seconds() > co.budget_seconds) {
      log(std::string(d.name) + ": budget spent, default efficiency kept");
      continue;
    }
    auto fit = [&](const HostCsr<Scalar>& a, const PatternStats& s) {
      return fit_efficiency(d.format, a, s, 1e9, std::numeric_limits<double>::infinity(), 0.0, 4.0);
    };
    const double er = fit(regular, s_reg), ei = fit(irregular, s_irr);
    if (er > 0) hw.efficiency[d.name] = er;
    if (ei > 0) hw.efficiency_irregular[d.name] = ei;
    log(std::string(d.name) + ": efficiency regular " + (er > 0 ? std::to_string(er) : "n/a") + ", irregular " +
        (ei > 0 ? std::to_string(ei) : "n/a"));
  }
  // Each format's efficiency on a 3D stencil just past L2 (CSR bytes 1.25x
  // L2, below the regular stencil's): the lines a walking lane's L1 drops
  // are still in L2 there (model.hpp, efficiency_near).
  {
    const double csr_bytes_of_side = 7.0 * (tau + 4) + 4;  // a 3D 7-point stencil, per row
    const auto near_side = static_cast<std::int64_t>(
        std::min(std::cbrt(1.25 * double(hw.l2_bytes) / csr_bytes_of_side), 0.75 * double(side)));
    const auto near = generate<Scalar>("lap3d:" + std::to_string(std::max<std::int64_t>(near_side, 6)));
    const PatternStats s_near = pattern_stats(near, tau, hw);
    auto csr_bytes = [&](const HostCsr<Scalar>& a) { return double(a.nnz()) * (tau + 4) + 4.0 * double(a.nrows + 1); };
    hw.near_bytes = csr_bytes(near);
    hw.far_bytes = csr_bytes(regular);
    std::string line = "efficiency just past L2 (CSR " + std::to_string(hw.near_bytes / 1e6).substr(0, 6) + " MB):";
    for (const auto& d : known_formats()) {
      if (d.format == Format::Auto || d.format == Format::Hyb || !hw.efficiency.count(d.name)) continue;
      if (budget.seconds() > co.budget_seconds + 20) {
        line += " (budget spent)";
        break;
      }
      // Past L2 only: within it the L2 efficiency applies.
      const double e = fit_efficiency(d.format, near, s_near, 1e9, std::numeric_limits<double>::infinity(), 0.0, 4.0);
      if (e > 0 && estimate(d.format, s_near, tau, hw).bytes > 0.8 * double(hw.l2_bytes)) {
        hw.efficiency_near[d.name] = e;
        line += " " + std::string(d.name) + " " + std::to_string(e).substr(0, 5);
      }
    }
    log(line);
  }
  // L2 gain: on a 2D stencil whose working set is half of L2, the
  // geometric mean over four bandwidth-bound formats of (estimate at DRAM
  // bandwidth) / (measured), fixed costs taken out of both (smaller
  // matrices are mostly fixed cost and say little).
  {
    const auto side2 = static_cast<std::int64_t>(
        std::max(20.0, std::sqrt(double(hw.l2_bytes) / 2 / (5 * (tau + 4) + 2 * tau))));
    const auto mid = generate<Scalar>("lap2d:" + std::to_string(side2));
    const auto s = pattern_stats(mid, tau, hw);
    ModelHardware probe = hw;
    probe.l2_gain = 1;
    double log_sum = 0;
    int n = 0;
    for (Format f : {Format::Ell, Format::Pellr, Format::EvcHyb, Format::CsrAdaptive}) {
      if (budget.seconds() > co.budget_seconds + 10) break;
      const FormatEstimate e = estimate(f, s, tau, probe);
      const double fixed = e.fixed_seconds;
      const double t = time_of(mid, f, {});
      if (t <= fixed || e.seconds <= fixed) continue;  // all fixed cost: says nothing
      log_sum += std::log((e.seconds - fixed) / (t - fixed));
      ++n;
    }
    hw.l2_gain = n ? std::clamp(std::exp(log_sum / n), 1.0, 8.0) : 1.0;
    log("L2 gain " + std::to_string(hw.l2_gain) + " (" + std::to_string(n) + " formats)");
  }
  // Each format's own efficiency while the working set fits L2, where the
  // formats rank differently than past it (latency, not bandwidth, bounds
  // them): a 3D stencil and a power-law graph of about a fifth of L2 in
  // CSR bytes, the size of typical small real matrices (0.3-1.2M
  // nonzeros on a 50 MB L2). Formats not fitted keep l2_gain x efficiency.
  {
    const double nnz_target = std::max(2e3, double(hw.l2_bytes) / 5 / (tau + 4) * std::min(1.0, co.scale));
    const auto side3 = static_cast<std::int64_t>(std::max(8.0, std::cbrt(nnz_target / 7)));
    const auto rows3 = static_cast<std::int64_t>(std::max(2000.0, nnz_target / 8));
    const HostCsr<Scalar> small_reg = generate<Scalar>("lap3d:" + std::to_string(side3));
    const HostCsr<Scalar> small_irr = generate<Scalar>("powerlaw:" + std::to_string(rows3) + ":8");
    const PatternStats sr = pattern_stats(small_reg, tau, hw), si = pattern_stats(small_irr, tau, hw);
    for (const auto& d : known_formats()) {
      if (d.format == Format::Auto || d.format == Format::Hyb) continue;
      if (budget.seconds() > co.budget_seconds + 30) {
        log(std::string(d.name) + ": budget spent, no L2 efficiency");
        continue;
      }
      // Working sets within L2 only; a run mostly fixed cost says little.
      auto fit = [&](const HostCsr<Scalar>& a, const PatternStats& s) {
        return fit_efficiency(d.format, a, s, ConvertOptions{}.max_fill, 0.8 * double(hw.l2_bytes), 0.2, 8.0);
      };
      const double er = fit(small_reg, sr), ei = fit(small_irr, si);
      if (er > 0) hw.efficiency_l2[d.name] = er;
      if (er > 0 && ei > 0) hw.efficiency_l2_irregular[d.name] = ei;
      log(std::string(d.name) + ": L2 efficiency regular " + (er > 0 ? std::to_string(er) : "n/a") +
          ", irregular " + (ei > 0 ? std::to_string(ei) : "n/a"));
    }
  }
  hw.calibrated = true;
  return hw;
}

}  // namespace kspmv
