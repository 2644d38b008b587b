// estimate(): a format's traffic (traffic.cpp) turned into time with the
// calibrated figures of the device; estimate_all(), pick() (Algorithm 1)
// and model_hyb_k() (Algorithm 2 over the traffic model).
#include <algorithm>
#include <cmath>

#include "traffic.hpp"

namespace kspmv {

namespace {

// A format's efficiency from its regular and irregular figures, log-
// interpolated by the row-length coefficient of variation; dflt where the
// regular one is absent.
double interpolated(const std::map<std::string, double>& regular, const std::map<std::string, double>& irregular,
                    Format f, double cv, double dflt) {
  auto get = [&](const std::map<std::string, double>& m, double d) {
    const auto it = m.find(format_name(f));
    return it == m.end() || it->second <= 0 ? d : it->second;
  };
  const double reg = get(regular, dflt), irr = get(irregular, reg);
  const double w = std::clamp((cv - 0.3) / 0.7, 0.0, 1.0);
  return std::exp((1 - w) * std::log(reg) + w * std::log(irr));
}

double efficiency(const ModelHardware& hw, Format f, double cv) {
  return interpolated(hw.efficiency, hw.efficiency_irregular, f, cv, 0.8);
}

// The DRAM efficiency's factor for a matrix of csr_bytes (CSR storage)
// just past L2: efficiency_near / efficiency up to near_bytes, 1 from
// far_bytes, log-linear between.
double near_l2_factor(const ModelHardware& hw, Format f, double csr_bytes) {
  const auto near = hw.efficiency_near.find(format_name(f));
  const auto far = hw.efficiency.find(format_name(f));
  if (near == hw.efficiency_near.end() || far == hw.efficiency.end() || near->second <= 0 || far->second <= 0 ||
      hw.near_bytes <= 0 || hw.far_bytes <= hw.near_bytes)
    return 1;
  const double t = std::clamp(std::log(std::max(csr_bytes, 1.0) / hw.near_bytes) / std::log(hw.far_bytes / hw.near_bytes),
                              0.0, 1.0);
  return std::pow(near->second / far->second, 1 - t);
}

// Bandwidth multiple of the copy bandwidth: the format's L2 efficiency
// where calibrated and the working set fits L2, else the DRAM efficiency
// (times l2_gain in L2), just past L2 its near-L2 factor on top where
// its lanes walk their rows as on the stencil it was measured on.
double bandwidth_factor(const ModelHardware& hw, Format f, double cv, bool in_l2, double csr_bytes, bool walked) {
  if (in_l2) {
    const auto it = hw.efficiency_l2.find(format_name(f));
    if (it != hw.efficiency_l2.end() && it->second > 0)
      return interpolated(hw.efficiency_l2, hw.efficiency_l2_irregular, f, cv, it->second);
    return hw.l2_gain * efficiency(hw, f, cv);
  }
  return efficiency(hw, f, cv) * (walked ? near_l2_factor(hw, f, csr_bytes) : 1.0);
}

// Launches of each format on the calibration's tiny matrix (a 1D stencil:
// HYB has no COO part there, EHYB no extra rows; csr-merge's rows cross
// its units there too, so it runs its fix-up).
int tiny_launches(Format f) {
  switch (f) {
    case Format::Coo: return 2;
    case Format::CsrMerge: return 2;  // its units and the fix-up of the rows crossing them
    case Format::Pkt: return 5;
    default: return 1;
  }
}

// Seconds of a per-format tiny-matrix figure (us) for an SpMV of
// `launches` launches: the figure plus per_launch_us for each launch the
// tiny matrix did not need (EHYB's separate extra-row pass); absent_us
// where the format has no figure.
double tiny_figure_seconds(const std::map<std::string, double>& us, Format f, int launches, double per_launch_us,
                           double absent_us) {
  const auto it = us.find(format_name(f));
  if (it == us.end() || it->second <= 0) return absent_us * 1e-6;
  return (it->second + std::max(0, launches - tiny_launches(f)) * per_launch_us) * 1e-6;
}

}  // namespace

double fixed_seconds(const ModelHardware& hw, Format f, int launches) {
  return tiny_figure_seconds(hw.fixed_us, f, launches, hw.launch_us, launches * hw.launch_us);
}

double host_seconds(const ModelHardware& hw, Format f, int launches) {
  const auto one = hw.host_us.find(format_name(Format::CsrVector));  // one launch, one pass
  return tiny_figure_seconds(hw.host_us, f, launches, one != hw.host_us.end() ? one->second : 0.0, 0.0);
}

double line_ns_of(const ModelHardware& hw, Format f) {
  const auto it = hw.line_ns.find(format_name(f));
  return it != hw.line_ns.end() && it->second > 0 ? it->second : 0.0;
}

double chain_ns_of(const ModelHardware& hw, Format f, bool in_l2) {
  const auto& m = in_l2 ? hw.chain_ns : hw.chain_dram_ns;
  const auto it = m.find(format_name(f));
  return it != m.end() && it->second > 0 ? it->second : hw.serial_ns;
}

FormatEstimate estimate(Format f, const PatternStats& s, int tau, const ModelHardware& hw, double max_fill,
                        std::int64_t hyb_k) {
  using namespace model_detail;
  FormatEstimate e;
  e.format = f;
  if (s.rows.nrows == 0) return e;
  const double n = double(s.rows.nrows), nnz = double(s.rows.nnz);
  const TrafficInput in{s,
                        tau,
                        hw,
                        max_fill,
                        hyb_k,
                        n,
                        double(s.rows.ncols),
                        nnz,
                        double(pitch_of(s.rows.nrows)),
                        double(s.rows.max),
                        tau * nnz * s.alpha,
                        tau * nnz * s.alpha_ascending,
                        tau * n,
                        (tau + kIndex) * nnz + kIndex * (n + 1)};
  const Traffic t = format_traffic(f, in);
  double bytes = 0;
  e.launches = 0;
  for (const TrafficPart& p : t.parts) {
    bytes += p.bytes;
    e.launches += p.launches;
  }
  e.bytes = bytes;
  e.storage_bytes = t.storage_bytes;
  e.padding = nnz > 0 ? t.slots / nnz - 1 : 0;
  e.feasible = t.feasible;
  e.note = t.note;
  e.chain_elements = t.chain_elements;
  const bool in_l2 = bytes <= 0.8 * double(hw.l2_bytes);
  const double cv = s.rows.coefficient_of_variation();
  // Time to move a part's bytes at the efficiency of the format whose
  // kernel moves them.
  auto moving = [&](const TrafficPart& p) {
    return p.bytes / (hw.bandwidth_gbs * 1e9 * bandwidth_factor(hw, p.runs_as, cv, in_l2, in.csr_storage, t.walked));
  };
  e.chain_seconds = t.chain_elements * t.chain_per_step * chain_ns_of(hw, t.chain_as, in_l2) * 1e-9;
  // Lanes each loading from a row of their own: the longest row waits
  // behind its SM's share of every warp's lines (one SM in `processors`;
  // fitted as a sum on the small real matrices), at csr-scalar's figure
  // (the SM's cost, measured with csr-scalar's lanes).
  if (t.lines > 0) e.chain_seconds += t.lines / std::max(1, hw.processors) * line_ns_of(hw, Format::CsrScalar) * 1e-9;
  e.fixed_seconds = t.extra_fixed_seconds;
  for (const TrafficPart& p : t.parts) {
    e.fixed_seconds += fixed_seconds(hw, p.runs_as, p.launches);
    e.host_seconds += host_seconds(hw, p.runs_as, p.launches);
  }
  // The longest serial chain bounds the first kernel's time from below;
  // it does not add to the traffic, which the other lanes move meanwhile.
  // A later kernel (HYB's COO part) runs after it.
  e.seconds = e.fixed_seconds + std::max(moving(t.parts.front()), e.chain_seconds);
  for (std::size_t i = 1; i < t.parts.size(); ++i) e.seconds += moving(t.parts[i]);
  // Back to back, an SpMV the device finishes before the host has queued
  // the next takes the host's time.
  e.seconds = std::max(e.seconds, e.host_seconds);
  const SetupDefaults d = setup_defaults(f);
  auto figure = [&](const std::map<std::string, double>& m, double fallback) {
    const auto it = m.find(format_name(f));
    return it != m.end() ? it->second : fallback;
  };
  e.setup_seconds = (figure(hw.setup_us, d.fixed_us) * 1e-6 + figure(hw.setup_ns_per_nnz, d.ns_per_nnz) * nnz * 1e-9);
  e.refresh_seconds = figure(hw.refresh_spmvs, d.refresh_spmvs) * e.seconds;
  return e;
}

// Medians of the H100 node's runs (kspmv_perf, device CSR input):
// conversions of the formats built on the device take about 2 ms plus
// 0.1-1.3 ns a nonzero (evc-hyb too: 1.8 ms plus 0.15 ns fitted on
// perf_tests/suites/setup-fit.txt, refresh 1.5 SpMVs; it takes jad's
// figures, as the others are taken); pkt, partitioned into cells and
// built on the device, 5-31 ms on 4-30M nonzeros of the FEM and set-up
// suites on an H200 (38 and 131-176 ms on a power-law graph of 1M rows
// and the 8M-row stencil, most of it the cells), refreshed by its
// scatter in 0.5-6.3 SpMVs, median 2.0.
// Refresh: one copy for the formats that keep the CSR order,
// a scatter or a walk of the rows for the others (2.7 SpMVs for dia, jad
// and ehyb, 4 for pellr); evc-hyb 1.2, the median of its CUDA kernel's
// 0.60-1.71 on the FEM and set-up suites (H200); ell, ellr and hyb 1.7, the middle of
// their tile kernel's 0.7-2.4 where an ELL is 12 wide or more and their
// scatter's 1.6-1.7 on narrower ones (H200, tile_refresh_cuda.hpp).
SetupDefaults setup_defaults(Format f) {
  switch (f) {
    case Format::Csr:
    case Format::KkCrs:
    case Format::CsrScalar:
    case Format::CsrVector:
    case Format::CsrAdaptive:
    case Format::Coo: return {2000, 0.3, 1.0};
    case Format::Ell:
    case Format::Ellr:
    case Format::Hyb: return {2000, 0.5, 1.7};
    case Format::Dia:
    case Format::Jad: return {2000, 0.5, 2.7};
    case Format::Pellr: return {2000, 0.5, 4.0};
    case Format::CsrMerge: return {2000, 0.5, 1.0};  // CSR's copy plus its merge-path split points
    case Format::EvcHyb: return {2000, 0.5, 1.2};  // built along its rows like jad
    // Built on the device with cells (device_partition.hpp): 7-23 ms on
    // FEM meshes of 5.6-25M entries, a refresh 2.3-2.8 SpMVs there (its
    // CUDA refresh kernel; the portable slot walk 3.6-5.7), 0.6-2.6
    // elsewhere (its scatter).
    case Format::Ehyb: return {3500, 0.8, 2.7};
    case Format::Pkt: return {5000, 1.0, 2.0};
    case Format::Auto: break;
  }
  return {2000, 0.5, 1.0};
}

double expected_trial_saving(double applies, double best, double estimate, double spread) {
  if (!(best > 0) || !(estimate > 0) || !(spread > 0)) return applies * std::max(best, 0.0);
  const double d = std::log(estimate / best), z = d / spread;
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI), tail = 0.5 * std::erfc(z / std::sqrt(2.0));
  return applies * best * std::max(0.0, spread * phi - d * tail);
}

double least_spmv_seconds(const ModelHardware& hw) {
  double least = 0;
  bool any = false;
  for (const auto& d : known_formats()) {
    if (d.format == Format::Auto || d.format == Format::KkCrs) continue;
    const int launches = tiny_launches(d.format);
    const double t = std::max(fixed_seconds(hw, d.format, launches), host_seconds(hw, d.format, launches));
    if (!any || t < least) least = t;
    any = true;
  }
  return least;
}

double bytes_only_estimate(const ModelHardware& hw, Format f, std::int64_t nrows, std::int64_t ncols,
                           std::int64_t nnz, int tau) {
  using namespace model_detail;
  const double csr = double(tau + kIndex) * double(nnz) + double(kIndex) * double(nrows + 1);
  const double bytes = csr + double(tau) * double(nrows + ncols);
  const bool in_l2 = bytes <= 0.8 * double(hw.l2_bytes);
  const int launches = tiny_launches(f);
  const double moving = bytes / (hw.bandwidth_gbs * 1e9 * bandwidth_factor(hw, f, 0.0, in_l2, csr, false));
  return std::max(fixed_seconds(hw, f, launches) + moving, host_seconds(hw, f, launches));
}

bool ranking_can_pay(double applies, double measured, double least, double converted, double* saving,
                     double* cost) {
  const double s = std::max(0.0, applies) * std::max(0.0, measured - std::max(0.0, least));
  const double c = kLeastFiguresSeconds + std::max(0.0, converted);
  if (saving) *saving = s;
  if (cost) *cost = c;
  return s > c;
}

double loop_seconds(const FormatEstimate& e, double expected_applies) {
  return e.setup_seconds + e.refresh_seconds + expected_applies * e.seconds;
}

std::vector<FormatEstimate> rank_for_loop(const PatternStats& s, int tau, const ModelHardware& hw, double max_fill,
                                          double expected_applies) {
  std::vector<FormatEstimate> v;
  for (auto& e : estimate_all(s, tau, hw, max_fill))
    if (e.format != Format::KkCrs) v.push_back(e);
  std::stable_sort(v.begin(), v.end(), [&](const FormatEstimate& a, const FormatEstimate& b) {
    if (a.feasible != b.feasible) return a.feasible;
    return loop_seconds(a, expected_applies) < loop_seconds(b, expected_applies);
  });
  return v;
}

std::vector<FormatEstimate> estimate_all(const PatternStats& s, int tau, const ModelHardware& hw, double max_fill) {
  std::vector<FormatEstimate> v;
  for (const auto& d : known_formats())
    if (d.format != Format::Auto) v.push_back(estimate(d.format, s, tau, hw, max_fill));
  std::stable_sort(v.begin(), v.end(), [](const FormatEstimate& a, const FormatEstimate& b) {
    if (a.feasible != b.feasible) return a.feasible;
    return a.seconds < b.seconds;
  });
  return v;
}

Format pick(const PatternStats& s, int tau, const ModelHardware& hw, double max_fill) {
  for (const auto& e : estimate_all(s, tau, hw, max_fill))
    if (e.feasible && e.format != Format::KkCrs) return e.format;  // kk-crs is the baseline, not ours to pick
  return Format::Csr;
}

std::int64_t model_hyb_k(const PatternStats& s, int tau, const ModelHardware& hw) {
  std::int64_t best = 0;
  double bt = 1e300;
  // Algorithm 2 starts at E(X); a mean inflated by a few very long rows
  // would exclude the best K (the short rows' width), so this search covers
  // [0, max]; beyond a few thousand candidates, a geometric grid.
  for (std::int64_t K = 0; K <= s.rows.max;
       K = K < 4096 ? K + 1 : K + K / 64) {
    const double v = estimate(Format::Hyb, s, tau, hw, 1e30, K).seconds;
    if (v < bt) {
      bt = v;
      best = K;
    }
  }
  return best;
}


}  // namespace kspmv
