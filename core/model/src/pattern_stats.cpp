// pattern_stats(): the figures of a matrix the model reads beyond its row
// lengths, one pass each over the pattern.
#include <algorithm>

#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/roofline.hpp"
#include "traffic.hpp"

namespace kspmv {
namespace {

using model_detail::kIndex;

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

}  // namespace kspmv
