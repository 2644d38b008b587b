#include "kspmv/core/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/roofline.hpp"

namespace kspmv {

namespace {

constexpr int kIndex = 4;  // S_i: 32-bit indices
std::int64_t pitch_of(std::int64_t n) { return (n + 31) / 32 * 32; }

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
// HYB has no COO part there, EHYB no extra rows).
int tiny_launches(Format f) {
  switch (f) {
    case Format::Coo: return 2;
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

namespace {

// Kokkos Kernels' lanes a row for its CRS SpMV on a GPU (4.x,
// spmv_launch_parameters): the smallest power of two up to 32 at least a
// sixth of the integer mean row length. Rows of 6 or fewer entries get a
// lane each, as csr-scalar.
int kk_vector_length(std::int64_t nnz, std::int64_t rows) {
  const std::int64_t per_row = std::max<std::int64_t>(1, rows > 0 ? nnz / rows : 1);
  int v = 1;
  while (v < 32 && v * 6 < per_row) v *= 2;
  return v;
}

std::vector<std::int64_t> sorted(std::vector<std::int64_t> v, bool descending) {
  if (descending) std::sort(v.begin(), v.end(), std::greater<>());
  else std::sort(v.begin(), v.end());
  return v;
}

// 32-byte sectors that warps of 32 consecutive rows of `order` touch in
// row_ptr (the row's two offsets), y, the column indices and the values.
template <class Scalar>
double sorted_row_sectors(const HostCsr<Scalar>& a, const std::vector<ordinal_t>& order, int scalar_bytes) {
  std::vector<std::int64_t> sec[4];
  double total = 0;
  auto span = [](std::vector<std::int64_t>& out, std::int64_t b, std::int64_t e, int bytes) {
    for (std::int64_t q = b * bytes / 32; e > b && q <= (e * bytes - 1) / 32; ++q) out.push_back(q);
  };
  for (std::size_t w = 0; w < order.size(); w += 32) {
    for (auto& v : sec) v.clear();
    for (std::size_t p = w; p < std::min(order.size(), w + 32); ++p) {
      const std::int64_t r = order[p];
      span(sec[0], r, r + 2, kIndex);
      span(sec[1], r, r + 1, scalar_bytes);
      span(sec[2], a.row_ptr[r], a.row_ptr[r + 1], kIndex);
      span(sec[3], a.row_ptr[r], a.row_ptr[r + 1], scalar_bytes);
    }
    for (auto& v : sec) {
      std::sort(v.begin(), v.end());
      total += double(std::unique(v.begin(), v.end()) - v.begin());
    }
  }
  return total;
}

// The 128-byte lines of column indices, values and x that a kernel's
// warp-wide loads touch, summed over its loads: rows taken in `order`, a
// row's `tpr` lanes (tpr_of(position)) loading entries o, o + tpr, ... of
// it, a warp holding 32 / tpr consecutive rows of one tpr (tpr <= 32) or a
// 32-lane share of one row. A load's lanes fall in as many lines as there
// are distinct ones among them; an SM looks each up (line_ns).
template <class Scalar, class TprOf>
double warp_load_lines(const HostCsr<Scalar>& a, const std::vector<ordinal_t>& order, const TprOf& tpr_of,
                       int scalar_bytes) {
  struct Lane {
    std::int64_t begin, end;  // entries the lane loads: begin, begin + tpr, ... < end
  };
  double total = 0;
  std::vector<Lane> lanes;
  std::vector<std::int64_t> c, v, xl;
  auto distinct = [](std::vector<std::int64_t>& w) {
    std::sort(w.begin(), w.end());
    return double(std::unique(w.begin(), w.end()) - w.begin());
  };
  auto warp = [&](std::int64_t t) {
    std::int64_t steps = 0;
    for (const Lane& l : lanes) steps = std::max(steps, (l.end - l.begin + t - 1) / t);
    for (std::int64_t j = 0; j < steps; ++j) {
      c.clear();
      v.clear();
      xl.clear();
      for (const Lane& l : lanes) {
        const std::int64_t k = l.begin + j * t;
        if (k >= l.end) continue;
        c.push_back(k * kIndex / 128);
        v.push_back(k * scalar_bytes / 128);
        xl.push_back(std::int64_t(a.col_idx[k]) * scalar_bytes / 128);
      }
      total += distinct(c) + distinct(v) + distinct(xl);
    }
  };
  const std::size_t n = order.size();
  for (std::size_t p = 0; p < n;) {
    const std::int64_t t = tpr_of(p);
    lanes.clear();
    if (t <= 32) {
      std::size_t q = p;
      for (; q < n && q < p + static_cast<std::size_t>(32 / t) && tpr_of(q) == t; ++q) {
        const ordinal_t r = order[q];
        for (std::int64_t o = 0; o < t; ++o) lanes.push_back({std::int64_t(a.row_ptr[r]) + o, a.row_ptr[r + 1]});
      }
      warp(t);
      p = q;
    } else {
      const ordinal_t r = order[p];
      for (std::int64_t w = 0; w < t; w += 32) {
        lanes.clear();
        for (std::int64_t o = w; o < w + 32; ++o) lanes.push_back({std::int64_t(a.row_ptr[r]) + o, a.row_ptr[r + 1]});
        warp(t);
      }
      ++p;
    }
  }
  return total;
}

}  // namespace

template <class Scalar>
PatternStats pattern_stats(const HostCsr<Scalar>& a, int scalar_bytes, std::int64_t ehyb_window) {
  PatternStats s;
  s.lengths = row_lengths(a);
  s.rows = row_length_stats(s.lengths, a.ncols);
  s.alpha = x_reuse_alpha(a, {}, scalar_bytes);
  {
    // csr-scalar: a lane per row, the caller's order.
    std::vector<ordinal_t> identity(static_cast<std::size_t>(a.nrows));
    for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<ordinal_t>(i);
    s.scalar_lines = warp_load_lines(a, identity, [](std::size_t) { return std::int64_t(1); }, scalar_bytes);
  }
  // csr-adaptive walks its rows stably sorted by ascending length, EVC-HYB
  // by ascending length too (ties by first column; the stable order stands
  // in for it): their x sectors per warp, and csr-adaptive's row_ptr,
  // column, value and y sectors (a warp's 32 rows no longer neighbours in
  // memory where lengths vary, so each row pays whole 32-byte sectors).
  {
    const std::vector<ordinal_t> order = rows_by_length(s.lengths, false);
    s.alpha_ascending = x_reuse_alpha(a, order, scalar_bytes);
    s.sorted_row_sector_bytes = sorted_row_sectors(a, order, scalar_bytes) * 32.0;
    // csr-adaptive's lanes: its ranges' threads per row (tpr_ranges).
    constexpr int block = kCsrAdaptiveBlockThreads;
    s.adaptive_lines = warp_load_lines(
        a, order,
        [&](std::size_t p) {
          return std::int64_t(std::min(block, tpr_for_length(s.lengths[static_cast<std::size_t>(order[p])], block)));
        },
        scalar_bytes);
  }
  std::vector<char> seen(static_cast<std::size_t>(a.nrows + a.ncols) + 1, 0);
  std::int64_t in = 0, in_packet = 0;
  const std::int64_t packet_rows = pkt_default_rows(scalar_bytes);
  s.ehyb_window = std::max<std::int64_t>(1, ehyb_window);
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    std::int64_t row_in_packet = 0;
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t d = std::int64_t(a.col_idx[k]) - i + a.nrows;
      if (!seen[static_cast<std::size_t>(d)]) {
        seen[static_cast<std::size_t>(d)] = 1;
        ++s.diagonals;
      }
      if (i / s.ehyb_window == a.col_idx[k] / s.ehyb_window) ++in;
      if (i / packet_rows == a.col_idx[k] / packet_rows) ++row_in_packet;
    }
    in_packet += row_in_packet;
    s.pkt_longest_in_packet = std::max(s.pkt_longest_in_packet, row_in_packet);
  }
  s.ehyb_in_part = a.nnz() ? double(in) / double(a.nnz()) : 1.0;
  s.pkt_in_packet = a.nnz() ? double(in_packet) / double(a.nnz()) : 1.0;
  return s;
}
std::int64_t model_ehyb_window(std::int64_t nrows, const ModelHardware& hw) {
  const std::int64_t p = std::max(1, hw.processors) * std::int64_t(std::max(1, ConvertOptions{}.ehyb_min_parts_per_sm));
  return std::max<std::int64_t>(32, (nrows + p - 1) / p);
}

template PatternStats pattern_stats(const HostCsr<float>&, int, std::int64_t);
template PatternStats pattern_stats(const HostCsr<double>&, int, std::int64_t);

FormatEstimate estimate(Format f, const PatternStats& s, int tau, const ModelHardware& hw, double max_fill,
                        std::int64_t hyb_k) {
  FormatEstimate e;
  e.format = f;
  if (s.rows.nrows == 0) return e;
  const double n = double(s.rows.nrows), m = double(s.rows.ncols), nnz = double(s.rows.nnz);
  const double pitch = double(pitch_of(s.rows.nrows));
  const double maxlen = double(s.rows.max);
  // x traffic (evc-hyb §3.2 alpha), in the order the format walks its rows.
  const bool ascending = f == Format::CsrAdaptive || f == Format::EvcHyb;
  const double x = tau * nnz * (ascending ? s.alpha_ascending : s.alpha);
  const double y = tau * n;              // y written once (beta = 0)
  const double csr_storage = (tau + kIndex) * nnz + kIndex * (n + 1);
  double bytes = 0, chain_elems = 0, slots = nnz, extra_fixed = 0;
  std::pair<double, double> hyb_parts{0, 0};  // HYB: its ELL part's bytes, its COO part's
  auto warp_slots = [&](const std::vector<std::int64_t>& len) { return 32.0 * double(warp_iterations(len).n_iter); };
  switch (f) {
    case Format::Auto:
      throw InvalidArgumentError("estimate: 'auto' is a choice among formats, not a format to estimate");
    case Format::Csr:
    case Format::CsrVector:
    case Format::KkCrs: {
      const int v = f == Format::KkCrs ? kk_vector_length(s.rows.nnz, s.rows.nrows) : csr_vector_length_for_mean(s.rows.mean);
      // A group of v lanes a row: its steps cost whole groups, idle lanes
      // too (time tracked the groups' slots, not the entries, on the
      // stencils: 5 entries to 8 lanes took 1.33x the model's entry
      // count, 9 to 16 1.6x, session 13).
      double group_slots = 0;
      for (const std::int64_t len : s.lengths) group_slots += double(v) * double((len + v - 1) / v);
      bytes = (tau + kIndex) * group_slots + kIndex * (n + 1) + x + y;
      e.storage_bytes = csr_storage;
      chain_elems = maxlen / v;
      break;
    }
    case Format::CsrScalar: {
      // A lane per row: the warp waits for its longest row (N_iter, pellr eq. 1).
      const double lane_slots = warp_slots(s.lengths);
      bytes = (tau + kIndex) * lane_slots + kIndex * (n + 1) + x + y;
      e.storage_bytes = csr_storage;
      chain_elems = maxlen;
      break;
    }
    case Format::CsrAdaptive:
      // The sorted order's row map, then each row's offsets, entries and
      // y in whole sectors (pattern_stats), x in that order.
      bytes = kIndex * n + s.sorted_row_sector_bytes + x;
      e.storage_bytes = csr_storage + kIndex * n;
      // A range's lanes per row are set so each walks at most 8 entries
      // (tpr_for_length), up to a block of 256 lanes a row.
      chain_elems = std::max(std::min(maxlen, 8.0), maxlen / 256);
      break;
    case Format::Ell:
      slots = maxlen * double((s.rows.nrows + 255) / 256 * 256);  // 256-row slices (ell.hpp)
      bytes = kIndex * slots + tau * nnz + x + y;  // padding: index read, value and x skipped
      e.storage_bytes = (tau + kIndex) * slots;
      chain_elems = maxlen;
      e.feasible = maxlen * n <= max_fill * std::max(nnz, 1.0);
      break;
    case Format::Ellr:
      slots = maxlen * pitch;
      bytes = (tau + kIndex) * warp_slots(s.lengths) + kIndex * n + x + y;
      e.storage_bytes = (tau + kIndex) * slots + kIndex * n;
      chain_elems = maxlen;
      e.feasible = maxlen * n <= max_fill * std::max(nnz, 1.0);
      break;
    case Format::Pellr:
    case Format::Jad: {
      // PELLR keeps the caller's order where sorting would not pay
      // (pellr_should_sort, as its conversion decides): no permuted y then.
      auto desc = sorted(s.lengths, true);
      double perm_bytes = kIndex * n;
      if (f == Format::Pellr && !pellr_should_sort(warp_iterations(s.lengths), warp_iterations(desc))) {
        desc = s.lengths;
        perm_bytes = 0;
      }
      bytes = (tau + kIndex) * warp_slots(desc) + 3 * kIndex * n / 32 + perm_bytes + x + y;
      slots = f == Format::Pellr ? warp_slots(desc) : nnz;
      e.storage_bytes = (tau + kIndex) * slots + kIndex * n;
      chain_elems = maxlen;
      break;
    }
    case Format::Dia:
      slots = double(s.diagonals) * pitch;
      bytes = tau * slots + tau * m + y;  // x read along each diagonal: cached
      e.storage_bytes = tau * slots + kIndex * double(s.diagonals);
      chain_elems = double(s.diagonals);
      e.feasible = slots <= max_fill * std::max(nnz, 1.0);
      break;
    case Format::Coo:
      bytes = (tau + 2 * kIndex) * nnz + x + y;
      e.storage_bytes = (tau + 2 * kIndex) * nnz;
      e.launches = 2;
      break;
    case Format::Hyb: {
      std::int64_t K = hyb_k >= 0 ? hyb_k : 0;
      if (hyb_k < 0) {  // Bell & Garland's 1/3 rule
        const double third = n / 3.0;
        while (K < s.rows.max && double(s.rows.nrows) * s.rows.prob_gt(K) >= third) ++K;
      }
      K = std::min<std::int64_t>(K, s.rows.max);
      const double ell_nnz = s.rows.nnz_le(K) + double(K) * s.rows.prob_gt(K) * n;
      const double coo_nnz = nnz - ell_nnz;
      slots = double(K) * pitch + coo_nnz;
      // Its ELL part (x in proportion to its entries, y written), then its
      // COO part (the rest of x, y read and written for rows past K).
      hyb_parts = {kIndex * double(K) * pitch + tau * ell_nnz + x * ell_nnz / std::max(nnz, 1.0) + y,
                   coo_nnz > 0 ? (tau + 2 * kIndex) * coo_nnz + x * coo_nnz / std::max(nnz, 1.0) +
                                     2.0 * tau * s.rows.prob_gt(K) * n
                               : 0.0};
      bytes = hyb_parts.first + hyb_parts.second;
      e.storage_bytes = (tau + kIndex) * double(K) * pitch + (tau + 2 * kIndex) * coo_nnz;
      e.launches = coo_nnz > 0 ? 3 : 1;
      chain_elems = double(K);
      e.note = "K=" + std::to_string(K);
      break;
    }
    case Format::Pkt: {
      // Rough: packets as CSR-like traffic with 4-byte packed indices, x and
      // y gathered and scattered once; the remainder is COO. A block per
      // packet of pkt_default_rows (contiguous here; METIS does better) and
      // pkt_gpu_threads: a thread walks its share of the packet's entries.
      const double packets = std::ceil(n / double(pkt_default_rows(tau)));
      const double threads = pkt_gpu_threads(static_cast<std::int64_t>(packets), hw.processors);
      bytes = (tau + kIndex) * nnz + 4 * tau * n + x * (1 - s.pkt_in_packet);
      e.storage_bytes = (tau + kIndex) * nnz * 1.3;
      e.launches = 5;
      e.feasible = s.rows.nrows == s.rows.ncols;
      chain_elems = std::ceil(nnz * s.pkt_in_packet / (packets * threads));
      // A thread owns whole rows of its packet: the longest stays one chain.
      chain_elems = std::max(chain_elems, double(s.pkt_longest_in_packet));
      // The remainder is a COO SpMV of its own before the packet launch.
      // The tiny matrix's remainder (two entries, one chunk of one step)
      // already paid one launch of it; the rest of COO's fixed cost (its
      // chunk walk and fix-up pass) comes on top where entries leave
      // their packet.
      if (s.pkt_in_packet < 1) extra_fixed = fixed_seconds(hw, Format::Coo, 2) - hw.launch_us * 1e-6;
      e.note = "rough";
      break;
    }
    case Format::EvcHyb: {
      // The conversion's arithmetic on the sorted lengths, with its auto
      // split and lanes (to_evc_hyb) for a device of processors x 2048
      // lanes: fewer rows than lanes lower the split towards 32 and let
      // lanes share the sub-ELL rows.
      const auto asc = sorted(s.lengths, false);
      const std::int64_t lanes_on_device = std::int64_t(hw.processors) * 2048;
      const std::int64_t split = evc_auto_split(s.rows.nrows, lanes_on_device);
      const std::int64_t short_rows = std::upper_bound(asc.begin(), asc.end(), split) - asc.begin();
      const std::int64_t isplit = short_rows / 32 * 32;
      double ell = 0, vcsr = 0;
      for (std::int64_t r = 0; r < isplit; r += 32) ell += 32.0 * double(asc[static_cast<std::size_t>(r + 31)]);
      for (std::size_t r = static_cast<std::size_t>(isplit); r < asc.size(); ++r) vcsr += double((asc[r] + 31) / 32 * 32);
      slots = ell + vcsr;
      bytes = (tau + kIndex) * slots + kIndex * n + x + y;
      e.storage_bytes = (tau + kIndex) * slots + 2 * kIndex * n;
      const std::int64_t width = isplit > 0 ? asc[static_cast<std::size_t>(isplit - 1)] : 0;
      const int lanes = evc_lanes_for_width(width, evc_lane_cap(isplit, lanes_on_device));
      chain_elems = std::ceil(double(width) / lanes) + maxlen / 256;
      break;
    }
    case Format::Ehyb: {
      const double in = s.ehyb_in_part;
      const double er = nnz * (1 - in);
      slots = nnz;
      bytes = (tau + 2) * nnz * in + (tau + kIndex) * er + tau * n + x * (1 - in) + y + 2 * kIndex * n +
              (er > 0 ? 2.0 * tau * std::min(n, er) : 0.0);
      e.storage_bytes = (tau + 2) * nnz * in + (tau + kIndex) * er + 2 * kIndex * n;
      // Extra rows inline beside the slices up to kEhybInlineMaxNnz
      // (ErLayout::Auto), a second pass beyond.
      e.launches = er > 0 && nnz > double(kEhybInlineMaxNnz) ? 2 : 1;
      // Rows past ehyb_long_row leave the slices for an adaptive-TPR pass
      // (one more launch, a block per row): a lane walks at most that many.
      // A lane walks its row's in-part entries (x from shared memory) and
      // then its extra entries, whose x loads wait on their columns: two
      // round trips per step of four, so they count twice.
      const double long_row = double(ConvertOptions{}.ehyb_long_row);
      if (long_row > 0 && maxlen > long_row) {
        ++e.launches;
        chain_elems = long_row * (2 - in) + maxlen / 256;
      } else {
        chain_elems = maxlen * (2 - in);
      }
      e.feasible = s.rows.nrows == s.rows.ncols;
      e.note = "in-part " + std::to_string(int(100 * in)) + "% (contiguous windows; METIS does better)";
      break;
    }
  }
  e.bytes = bytes;
  e.padding = nnz > 0 ? slots / nnz - 1 : 0;
  const bool in_l2 = bytes <= 0.8 * double(hw.l2_bytes);
  const double cv = s.rows.mean > 0 ? s.rows.stddev / s.rows.mean : 0.0;
  // Time to move `b` bytes at format g's efficiency.
  // csr-scalar streams long rows past L1 (csr_walks_rows): the near-L2
  // figure, measured on a walked stencil, is not for those.
  const bool walked = f != Format::CsrScalar || csr_walks_rows(s.rows.mean, s.rows.max, 1);
  auto moving = [&](Format g, double b) {
    return b / (hw.bandwidth_gbs * 1e9 * bandwidth_factor(hw, g, cv, in_l2, csr_storage, walked));
  };
  e.chain_elements = chain_elems;
  if (f == Format::Hyb) {
    // HYB runs ELL's kernel on its first K columns, then a COO SpMV of the
    // rest: each part at the figures of the format whose kernel it runs.
    e.chain_seconds = chain_elems * chain_ns_of(hw, Format::Ell, in_l2) * 1e-9;
    const bool coo = hyb_parts.second > 0;
    e.fixed_seconds = fixed_seconds(hw, Format::Ell, 1) + (coo ? fixed_seconds(hw, Format::Coo, 2) : 0.0);
    e.seconds = e.fixed_seconds + std::max(moving(Format::Ell, hyb_parts.first), e.chain_seconds) +
                (coo ? moving(Format::Coo, hyb_parts.second) : 0.0);
    e.host_seconds = host_seconds(hw, Format::Ell, 1) + (coo ? host_seconds(hw, Format::Coo, 2) : 0.0);
  } else {
    // EHYB's lanes walk their slots with ELL's loop (padded_slots_dot),
    // csr-adaptive's their few entries four a step as well: their chains
    // cost ELL's figure per element, which is for four slots a step;
    // EHYB's kernel may load eight (ehyb_slots_per_step).
    const double per_step = f == Format::Ehyb ? 4.0 / ehyb_slots_per_step(ConvertOptions{}.ehyb_min_parts_per_sm) : 1.0;
    const bool ell_loop = f == Format::Ehyb || f == Format::CsrAdaptive;
    e.chain_seconds = chain_elems * per_step * chain_ns_of(hw, ell_loop ? Format::Ell : f, in_l2) * 1e-9;
    // csr-scalar's lanes, and csr-adaptive's on its short rows (in the
    // sorted order that scatters a warp's rows), each load from a row of
    // their own: a warp's load touches up to 32 lines, which its SM looks
    // up one by one. The longest row waits behind its SM's share of every
    // warp's lines (one SM in `processors`; fitted as a sum on the small
    // real matrices, session 13), at csr-scalar's figure for both (the
    // SM's cost, measured with csr-scalar's lanes).
    if (f == Format::CsrScalar || f == Format::CsrAdaptive)
      e.chain_seconds += (f == Format::CsrScalar ? s.scalar_lines : s.adaptive_lines) /
                         std::max(1, hw.processors) * line_ns_of(hw, Format::CsrScalar) * 1e-9;
    e.fixed_seconds = fixed_seconds(hw, f, e.launches) + extra_fixed;
    // The longest serial chain bounds the time from below; it does not add
    // to the traffic, which the other lanes move meanwhile.
    e.seconds = e.fixed_seconds + std::max(moving(f, bytes), e.chain_seconds);
    e.host_seconds = host_seconds(hw, f, e.launches);
  }
  // Back to back, an SpMV the device finishes before the host has queued
  // the next takes the host's time.
  e.seconds = std::max(e.seconds, e.host_seconds);
  return e;
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

// --- The paper's equations -------------------------------------------------

namespace {
struct PaperTerms {
  double C, W, BS, CR, BWb, F, Fi, Ss, Si, B;
};
PaperTerms terms(int tau, const ModelHardware& hw) {
  PaperTerms t;
  t.C = hw.cores;
  t.W = hw.warp;
  t.BS = hw.block;
  t.CR = hw.memory_clock_ghz * 1e9;
  t.BWb = hw.bus_width_bits / 8.0;
  t.Fi = hw.core_clock_ghz * 1e9;
  t.F = tau == 8 ? t.Fi / 2 : t.Fi;  // F_d: half the single-precision rate
  t.Ss = tau;
  t.Si = kIndex;
  t.B = hw.pcie_gbs * 1e9;
  return t;
}
}  // namespace

double paper_coo(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), NNZ = double(s.nnz);
  const double ct = NNZ / t.C * (2 * t.Si / (t.CR * t.Si) + 2 * t.Ss / (t.CR * t.Ss)) + NNZ / (t.C * t.F) +
                    N * t.W / t.C * std::ceil(s.mean / t.W) / t.F;  // eq. (29)
  const double dtt = ((t.Ss + 2 * t.Si) * NNZ + 2 * t.Ss * N) / t.B;  // eq. (25)
  return ct + (transfer ? dtt : 0);
}

double paper_csr(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), NNZ = double(s.nnz), EQ = s.fractile_mean();
  const double ct = N / t.C *
                    ((std::ceil(t.Ss * EQ / t.BWb) + std::ceil(t.Si * EQ / t.BWb)) / t.CR + 2 / t.CR + EQ / t.CR +
                     EQ * (2 / t.F + 1 / t.Fi));  // eq. (36)
  const double dtt = ((t.Ss + t.Si) * NNZ + t.Si * (N + 1) + 2 * t.Ss * N) / t.B;  // eq. (31)
  return ct + (transfer ? dtt : 0);
}

double paper_ell(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), K = double(s.max), EQ = s.fractile_mean(), P0 = s.prob_gt(0);
  const double ct = P0 * N / t.C *
                    ((std::ceil(t.Si * K / t.BWb) + std::ceil(t.Ss * K / t.BWb)) / t.CR +
                     t.Ss * std::max(0.0, K - t.BS) / (t.CR * t.Ss) + 2 / t.CR + 2 * EQ / t.F);  // eq. (42)
  const double dtt = (P0 * N * K * (t.Ss + t.Si) + t.Si * P0 * N + 2 * t.Ss * N) / t.B;  // eq. (38)
  return ct + (transfer ? dtt : 0);
}

double paper_hyb(const RowLengthStats& s, std::int64_t Kint, int tau, const ModelHardware& hw, bool transfer) {
  const auto t = terms(tau, hw);
  const double N = double(s.nrows), K = double(Kint), P0 = s.prob_gt(0), PK = s.prob_gt(Kint);
  const double coo_nnz = std::max(0.0, s.nnz_gt(Kint) - K * PK * N);
  const double ct_coo = coo_nnz / t.C * (4 / t.CR + 1 / t.F) +
                        PK * N * t.W / t.C * std::ceil(std::max(0.0, s.mean_gt(Kint) - K) / t.W) / t.F;  // eq. (46)
  const double ct_ell = P0 * N / t.C *
                        ((std::ceil(t.Si * K / t.BWb) + std::ceil(t.Ss * K / t.BWb)) / t.CR +
                         std::ceil(t.Ss * std::max(0.0, K - t.BS) / t.BWb) / t.CR + 2 / t.CR +
                         2 * s.mean_le(Kint) / t.F);  // eq. (47)
  const double dtt = (coo_nnz * (t.Ss + 2 * t.Si) + (t.Ss + t.Si) * P0 * N * K + t.Si * P0 * N + 2 * t.Ss * N) /
                     t.B;  // eq. (45)
  return ct_coo + ct_ell + (transfer ? dtt : 0);  // eq. (50)
}

std::int64_t paper_hyb_k(const RowLengthStats& s, int tau, const ModelHardware& hw, bool transfer) {
  std::int64_t best = static_cast<std::int64_t>(s.mean);
  double bt = 1e300;
  for (std::int64_t K = static_cast<std::int64_t>(s.mean); K <= s.max; ++K) {
    const double v = paper_hyb(s, K, tau, hw, transfer);
    if (v < bt) {
      bt = v;
      best = K;
    }
  }
  return best;
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

// --- Calibration files -----------------------------------------------------

namespace {
// The per-format figures: "PREFIX.FORMAT = value" lines, in the order a
// calibration file lists them.
using FormatFigures = std::map<std::string, double> ModelHardware::*;
constexpr std::pair<const char*, FormatFigures> kFormatKeys[] = {
    {"fixed_us.", &ModelHardware::fixed_us},
    {"host_us.", &ModelHardware::host_us},
    {"efficiency.", &ModelHardware::efficiency},
    {"efficiency_irregular.", &ModelHardware::efficiency_irregular},
    {"efficiency_near.", &ModelHardware::efficiency_near},
    {"efficiency_l2.", &ModelHardware::efficiency_l2},
    {"efficiency_l2_irregular.", &ModelHardware::efficiency_l2_irregular},
    {"chain_ns.", &ModelHardware::chain_ns},
    {"chain_dram_ns.", &ModelHardware::chain_dram_ns},
    {"line_ns.", &ModelHardware::line_ns}};
// Keys of earlier calibration files the model no longer uses: read (the
// format name still checked) and dropped, so those files still load.
constexpr const char* kRetiredKeys[] = {"crowd_ns.", "crowd_scattered_ns."};
}  // namespace

ModelHardware read_calibration(const std::string& path, ModelHardware hw) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read calibration file " + path);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto h = line.find('#'); h != std::string::npos) line.resize(h);
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      if (line.find_first_not_of(" \t\r") != std::string::npos) throw ParseError(path, lineno, "expected key = value");
      continue;
    }
    auto trim = [](std::string v) {
      const auto b = v.find_first_not_of(" \t\r"), e = v.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
    };
    const std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    const bool num = end && end != v.c_str() && *end == '\0';
    if (k == "name") { hw.name = v; continue; }
    if (!num) throw ParseError(path, lineno, "'" + k + "' needs a number, got '" + v + "'");
    if (k == "bandwidth_gbs") hw.bandwidth_gbs = d;
    else if (k == "l2_bytes") hw.l2_bytes = static_cast<std::int64_t>(d);
    else if (k == "processors") hw.processors = static_cast<int>(d);
    else if (k == "cores") hw.cores = static_cast<int>(d);
    else if (k == "warp") hw.warp = static_cast<int>(d);
    else if (k == "block") hw.block = static_cast<int>(d);
    else if (k == "memory_clock_ghz") hw.memory_clock_ghz = d;
    else if (k == "bus_width_bits") hw.bus_width_bits = static_cast<int>(d);
    else if (k == "core_clock_ghz") hw.core_clock_ghz = d;
    else if (k == "pcie_gbs") hw.pcie_gbs = d;
    else if (k == "launch_us") hw.launch_us = d;
    else if (k == "l2_gain") hw.l2_gain = d;
    else if (k == "serial_ns") hw.serial_ns = d;
    else if (k == "near_bytes") hw.near_bytes = d;
    else if (k == "far_bytes") hw.far_bytes = d;
    else {
      const auto retired = std::find_if(std::begin(kRetiredKeys), std::end(kRetiredKeys),
                                        [&](const char* key) { return k.rfind(key, 0) == 0; });
      if (retired != std::end(kRetiredKeys)) {
        parse_format(k.substr(std::strlen(*retired)));
        continue;
      }
      const auto it = std::find_if(std::begin(kFormatKeys), std::end(kFormatKeys),
                                   [&](const auto& key) { return k.rfind(key.first, 0) == 0; });
      if (it == std::end(kFormatKeys)) throw ParseError(path, lineno, "unknown key '" + k + "'");
      const std::string format = k.substr(std::strlen(it->first));
      parse_format(format);  // unknown format names are errors
      (hw.*(it->second))[format] = d;
    }
  }
  hw.calibrated = true;
  return hw;
}

void write_calibration(const std::string& path, const ModelHardware& hw) {
  std::ofstream out(path);
  if (!out) throw IoError("cannot write " + path);
  out << "# kspmv performance-model calibration (kspmv calibrate)\n"
      << "name = " << hw.name << "\nbandwidth_gbs = " << hw.bandwidth_gbs << "\nl2_bytes = " << hw.l2_bytes
      << "\nprocessors = " << hw.processors << "\ncores = " << hw.cores << "\nwarp = " << hw.warp
      << "\nblock = " << hw.block << "\nmemory_clock_ghz = " << hw.memory_clock_ghz
      << "\nbus_width_bits = " << hw.bus_width_bits << "\ncore_clock_ghz = " << hw.core_clock_ghz
      << "\npcie_gbs = " << hw.pcie_gbs << "\nlaunch_us = " << hw.launch_us << "\nl2_gain = " << hw.l2_gain
      << "\nserial_ns = " << hw.serial_ns << "\n";
  if (hw.near_bytes > 0) out << "near_bytes = " << hw.near_bytes << "\nfar_bytes = " << hw.far_bytes << "\n";
  for (const auto& [prefix, figures] : kFormatKeys)
    for (const auto& [k, v] : hw.*figures) out << prefix << k << " = " << v << "\n";
}

namespace {
std::mutex g_model_mutex;
ModelHardware* g_model = nullptr;
}  // namespace

const ModelHardware& default_model() {
  std::lock_guard<std::mutex> lock(g_model_mutex);
  if (!g_model) {
    g_model = new ModelHardware();
    if (const char* p = std::getenv("KSPMV_CALIBRATION"); p && *p) *g_model = read_calibration(p);
  }
  return *g_model;
}

void set_default_model(const ModelHardware& hw) {
  std::lock_guard<std::mutex> lock(g_model_mutex);
  if (!g_model) g_model = new ModelHardware();
  *g_model = hw;
}

}  // namespace kspmv
