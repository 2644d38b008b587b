// Each format's traffic: the bytes one SpMV moves from the format's storage
// model, its longest serial chain, its launches and whether its conversion
// would refuse the matrix. One function a format, in the order of
// KSPMV_FORMAT_LIST; format_traffic() below is the table, a switch with no
// default, so a format without a function here fails to compile.
#include <algorithm>
#include <cmath>

#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/row_stats.hpp"
#include "traffic.hpp"

namespace kspmv::model_detail {
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

// A lane per row: the warp waits for its longest row (N_iter, pellr eq. 1).
double warp_slots(const WarpIterations& w) { return 32.0 * double(w.n_iter); }

Traffic one_part(Format f, double bytes, int launches = 1) {
  Traffic t;
  t.parts = {{f, bytes, launches}};
  t.chain_as = f;
  return t;
}

// csr, csr-vector and kk-crs: a group of v lanes a row, whose steps cost
// whole groups, idle lanes too (time tracked the groups' slots, not the
// entries, on the stencils: 5 entries to 8 lanes took 1.33x the model's
// entry count, 9 to 16 1.6x).
Traffic csr_lane_groups(Format f, int v, const TrafficInput& in) {
  double group_slots = 0;
  const auto& counts = in.s.rows.counts;
  for (std::size_t len = 0; len < counts.size(); ++len)
    if (counts[len] != 0)  // a power-law tail holds few of its lengths
      group_slots += double(counts[len]) * double(v) * double((std::int64_t(len) + v - 1) / v);
  Traffic t = one_part(f, (in.tau + kIndex) * group_slots + kIndex * (in.n + 1) + in.x + in.y);
  t.storage_bytes = in.csr_storage;
  t.slots = in.nnz;
  t.chain_elements = in.maxlen / v;
  return t;
}

Traffic csr(const TrafficInput& in) {
  return csr_lane_groups(Format::Csr, csr_vector_length_for_mean(in.s.rows.mean), in);
}

Traffic kk_crs(const TrafficInput& in) {
  return csr_lane_groups(Format::KkCrs, kk_vector_length(in.s.rows.nnz, in.s.rows.nrows), in);
}

// Occupied diagonals, padded to the pitch; x read along each diagonal
// stays cached.
Traffic dia(const TrafficInput& in) {
  const double slots = double(in.s.diagonals) * in.pitch;
  Traffic t = one_part(Format::Dia, in.tau * slots + in.tau * in.m + in.y);
  t.slots = slots;
  // The offsets, and a mask of 64 diagonals a word a row (what a refresh
  // walks by).
  t.storage_bytes = in.tau * slots + kIndex * double(in.s.diagonals) +
                    8.0 * std::ceil(double(in.s.diagonals) / 64.0) * double(in.n);
  t.chain_elements = double(in.s.diagonals);
  t.feasible = slots <= in.max_fill * std::max(in.nnz, 1.0);
  return t;
}

// 256-row slices padded to the longest row: a padding slot's index is
// read, its value and x skipped.
Traffic ell(const TrafficInput& in) {
  const double slots = in.maxlen * double((in.s.rows.nrows + 255) / 256 * 256);  // ell.hpp's slices
  Traffic t = one_part(Format::Ell, kIndex * slots + in.tau * in.nnz + in.x + in.y);
  t.slots = slots;
  t.storage_bytes = (in.tau + kIndex) * slots;
  t.chain_elements = in.maxlen;
  t.feasible = in.maxlen * in.n <= in.max_fill * std::max(in.nnz, 1.0);
  return t;
}

Traffic csr_scalar(const TrafficInput& in) {
  Traffic t = one_part(Format::CsrScalar, (in.tau + kIndex) * warp_slots(in.s.caller_warps) + kIndex * (in.n + 1) + in.x + in.y);
  t.storage_bytes = in.csr_storage;
  t.slots = in.nnz;
  t.chain_elements = in.maxlen;
  // A lane a row: a warp's load touches up to 32 lines.
  t.lines = in.s.scalar_lines;
  // It streams long rows past L1 (csr_walks_rows): the near-L2 figure,
  // measured on a walked stencil, is not for those.
  t.walked = csr_walks_rows(in.s.rows.mean, in.s.rows.max, 1);
  return t;
}

Traffic csr_vector(const TrafficInput& in) {
  return csr_lane_groups(Format::CsrVector, csr_vector_length_for_mean(in.s.rows.mean), in);
}

Traffic coo(const TrafficInput& in) {
  Traffic t = one_part(Format::Coo, (in.tau + 2 * kIndex) * in.nnz + in.x + in.y, 2);
  t.storage_bytes = (in.tau + 2 * kIndex) * in.nnz;
  t.slots = in.nnz;
  return t;
}

// ELL's kernel on its first K columns, then a COO SpMV of the rest: each
// part at the figures of the format whose kernel it runs.
Traffic hyb(const TrafficInput& in) {
  const auto& s = in.s;
  std::int64_t K = in.hyb_k >= 0 ? in.hyb_k : 0;
  if (in.hyb_k < 0) {  // Bell & Garland's 1/3 rule
    const double third = in.n / 3.0;
    while (K < s.rows.max && double(s.rows.nrows) * s.rows.prob_gt(K) >= third) ++K;
  }
  K = std::min<std::int64_t>(K, s.rows.max);
  const double ell_nnz = s.rows.nnz_le(K) + double(K) * s.rows.prob_gt(K) * in.n;
  const double coo_nnz = in.nnz - ell_nnz;
  Traffic t;
  t.slots = double(K) * in.pitch + coo_nnz;
  // Its ELL part (x in proportion to its entries, y written), then its
  // COO part (the rest of x, y read and written for rows past K).
  t.parts = {{Format::Ell, kIndex * double(K) * in.pitch + in.tau * ell_nnz + in.x * ell_nnz / std::max(in.nnz, 1.0) + in.y, 1}};
  if (coo_nnz > 0)
    t.parts.push_back({Format::Coo,
                       (in.tau + 2 * kIndex) * coo_nnz + in.x * coo_nnz / std::max(in.nnz, 1.0) +
                           2.0 * in.tau * s.rows.prob_gt(K) * in.n,
                       2});
  // The COO part's start a row (8 bytes: what a refresh walks by).
  t.storage_bytes = (in.tau + kIndex) * double(K) * in.pitch + (in.tau + 2 * kIndex) * coo_nnz + 8.0 * (double(in.n) + 1);
  t.chain_elements = double(K);
  t.chain_as = Format::Ell;
  t.note = "K=" + std::to_string(K);
  return t;
}

// Rough: packets as CSR-like traffic with 4-byte packed indices, x and y
// gathered and scattered once; the remainder is COO. A block per packet of
// pkt_default_rows (contiguous here; METIS does better) and
// pkt_gpu_threads: a thread walks its share of the packet's entries.
Traffic pkt(const TrafficInput& in) {
  const auto& s = in.s;
  const double packets = std::ceil(in.n / double(pkt_default_rows(in.tau)));
  const double threads = pkt_gpu_threads(static_cast<std::int64_t>(packets), in.hw.processors);
  Traffic t = one_part(Format::Pkt, (in.tau + kIndex) * in.nnz + 4 * in.tau * in.n + in.x * (1 - s.pkt_in_packet), 5);
  t.storage_bytes = (in.tau + kIndex) * in.nnz * 1.3;
  t.slots = in.nnz;
  t.feasible = s.rows.nrows == s.rows.ncols;
  // A thread owns whole rows of its packet: the longest stays one chain.
  t.chain_elements = std::max(std::ceil(in.nnz * s.pkt_in_packet / (packets * threads)), double(s.pkt_longest_in_packet));
  // The remainder is a COO SpMV of its own before the packet launch. The
  // tiny matrix's remainder (two entries, one chunk of one step) already
  // paid one launch of it; the rest of COO's fixed cost (its chunk walk and
  // fix-up pass) comes on top where entries leave their packet.
  if (s.pkt_in_packet < 1) t.extra_fixed_seconds = fixed_seconds(in.hw, Format::Coo, 2) - in.hw.launch_us * 1e-6;
  t.note = "rough";
  return t;
}

Traffic ellr(const TrafficInput& in) {
  Traffic t = one_part(Format::Ellr, (in.tau + kIndex) * warp_slots(in.s.caller_warps) + kIndex * in.n + in.x + in.y);
  t.slots = in.maxlen * in.pitch;
  t.storage_bytes = (in.tau + kIndex) * t.slots + kIndex * in.n;
  t.chain_elements = in.maxlen;
  t.feasible = in.maxlen * in.n <= in.max_fill * std::max(in.nnz, 1.0);
  return t;
}

// PELLR and JAD walk the rows sorted by descending length, a lane a row.
// PELLR keeps the caller's order where sorting would not pay
// (pellr_should_sort, as its conversion decides): no permuted y then.
Traffic sorted_rows(Format f, const TrafficInput& in) {
  WarpIterations warps = descending_warps(in.s.rows);
  double perm_bytes = kIndex * in.n;
  if (f == Format::Pellr && !pellr_should_sort(in.s.caller_warps, warps)) {
    warps = in.s.caller_warps;
    perm_bytes = 0;
  }
  Traffic t = one_part(f, (in.tau + kIndex) * warp_slots(warps) + 3 * kIndex * in.n / 32 + perm_bytes + in.x + in.y);
  t.slots = f == Format::Pellr ? warp_slots(warps) : in.nnz;
  t.storage_bytes = (in.tau + kIndex) * t.slots + kIndex * in.n;
  t.chain_elements = in.maxlen;
  return t;
}

Traffic pellr(const TrafficInput& in) { return sorted_rows(Format::Pellr, in); }

Traffic jad(const TrafficInput& in) { return sorted_rows(Format::Jad, in); }

// The sorted order's row map, then each row's offsets, entries and y in
// whole sectors (pattern_stats), x in that order.
Traffic csr_adaptive(const TrafficInput& in) {
  Traffic t = one_part(Format::CsrAdaptive, kIndex * in.n + in.s.sorted_row_sector_bytes + in.x_ascending);
  t.storage_bytes = in.csr_storage + kIndex * in.n;
  t.slots = in.nnz;
  // A range's lanes per row are set so each walks at most 8 entries
  // (tpr_for_length), up to a block of 256 lanes a row; they walk them
  // with ELL's slot loop, four a step, and ELL's figure.
  t.chain_elements = std::max(std::min(in.maxlen, 8.0), in.maxlen / 256);
  t.chain_as = Format::Ell;
  // Its short rows, in the sorted order that scatters a warp's rows, each
  // load from a row of their own (as csr-scalar's lanes).
  t.lines = in.s.adaptive_lines;
  return t;
}

// CSR read once in its own order (offsets, columns, values, x gathered, y
// written), plus the merge path's partition (2 ints a unit), the per-unit
// partial sums (head and tail, written and read back) and the list of rows
// crossing units (3 ints each, about one a unit), with the units its
// conversion makes on a GPU of hw.processors SMs (merge_unit_items). A
// lane walks its unit's share of the merge path, rows and entries alike,
// so a long row does not lengthen its chain; only the fix-up lane adding
// that row's pieces, a 32nd of the units it crosses, grows with it.
// Column panels (x beyond L2) are left out: the model sees neither what
// they cost (a pass over y and the offsets a panel) nor what they save (x
// gathered from L2 instead of memory, which no format's figure here
// tells apart); auto's trials time them.
Traffic csr_merge(const TrafficInput& in) {
  const auto items = static_cast<std::int64_t>(in.n + in.nnz);
  const std::int64_t unit_items = merge_unit_items(items, in.hw.processors, true);
  const double units = double(merge_units(items, unit_items));
  Traffic t = one_part(Format::CsrMerge,
                       (in.tau + kIndex) * in.nnz + kIndex * (in.n + 1) + in.x + in.y +
                           units * (4.0 * in.tau + 5.0 * kIndex),
                       units > 1 ? 2 : 1);
  t.storage_bytes = in.csr_storage + units * (2.0 * in.tau + 5.0 * kIndex);
  t.slots = in.nnz;
  t.chain_elements = double(unit_items / kMergeBlockThreads) + std::ceil((in.maxlen / double(unit_items) + 1) / 32);
  return t;
}

// The conversion's arithmetic on the sorted lengths, with its auto split
// and lanes (to_evc_hyb) for a device of processors x 2048 lanes: fewer
// rows than lanes lower the split towards 32 and let lanes share the
// sub-ELL rows.
Traffic evc_hyb(const TrafficInput& in) {
  const RowLengthStats& rs = in.s.rows;
  const std::int64_t lanes_on_device = std::int64_t(in.hw.processors) * 2048;
  const std::int64_t split = evc_auto_split(rs.nrows, lanes_on_device);
  // Sorted ascending (from the histogram): rows of at most `split` entries,
  // whole slices of them to sub-ELL, each slice as wide as its last row.
  const std::int64_t short_rows =
      rs.cum_rows.empty() || split < 0 ? 0 : rs.cum_rows[static_cast<std::size_t>(std::min(split, rs.max))];
  const std::int64_t isplit = short_rows / 32 * 32;
  double ell = 0, vcsr = 0;
  // Each slice's last row, length_at_rank(rs, r + 31, false), walked up
  // the cumulative counts once.
  for (std::int64_t r = 0, len = 0; r < isplit; r += 32) {
    while (rs.cum_rows[static_cast<std::size_t>(len)] <= r + 31) ++len;
    ell += 32.0 * double(len);
  }
  for (std::size_t len = 0; len < rs.counts.size(); ++len) {
    const std::int64_t first = len ? rs.cum_rows[len - 1] : 0, past = rs.cum_rows[len];
    const std::int64_t rows = past - std::max(first, isplit);
    if (rows > 0) vcsr += double(rows) * double((std::int64_t(len) + 31) / 32 * 32);
  }
  const double slots = ell + vcsr;
  Traffic t = one_part(Format::EvcHyb, (in.tau + kIndex) * slots + kIndex * in.n + in.x_ascending + in.y);
  t.slots = slots;
  t.storage_bytes = (in.tau + kIndex) * slots + 2 * kIndex * in.n;
  const std::int64_t width = isplit > 0 ? length_at_rank(rs, isplit - 1, false) : 0;
  const int lanes = evc_lanes_for_width(width, evc_lane_cap(isplit, lanes_on_device));
  t.chain_elements = std::ceil(double(width) / lanes) + in.maxlen / 256;
  return t;
}

Traffic ehyb(const TrafficInput& in) {
  const double nnz = in.nnz, n = in.n, tau = in.tau;
  const double part = in.s.ehyb_in_part;
  const double er = nnz * (1 - part);
  // Extra rows inline beside the slices up to kEhybInlineMaxNnz
  // (ErLayout::Auto), a second pass beyond.
  int launches = er > 0 && nnz > double(kEhybInlineMaxNnz) ? 2 : 1;
  // A lane walks its row's in-part entries (x from shared memory) and
  // then its extra entries, whose x loads wait on their columns: two round
  // trips per step of four, so they count twice. Rows past ehyb_long_row
  // leave the slices for an adaptive-TPR pass (one more launch, a block per
  // row): a lane walks at most that many.
  double chain = in.maxlen * (2 - part);
  const double long_row = double(ConvertOptions{}.ehyb_long_row);
  if (long_row > 0 && in.maxlen > long_row) {
    ++launches;
    chain = long_row * (2 - part) + in.maxlen / 256;
  }
  Traffic t = one_part(Format::Ehyb,
                       (tau + 2) * nnz * part + (tau + kIndex) * er + tau * n + in.x * (1 - part) + in.y + 2 * kIndex * n +
                           (er > 0 ? 2.0 * tau * std::min(n, er) : 0.0),
                       launches);
  t.slots = nnz;
  t.storage_bytes = (tau + 2) * nnz * part + (tau + kIndex) * er + 2 * kIndex * n;
  t.chain_elements = chain;
  // Its lanes walk their slots with ELL's loop (padded_slots_dot), whose
  // figure is for four slots a step; EHYB's kernel may load eight
  // (ehyb_slots_per_step).
  t.chain_as = Format::Ell;
  t.chain_per_step = 4.0 / ehyb_slots_per_step(ConvertOptions{}.ehyb_min_parts_per_sm);
  t.feasible = in.s.rows.nrows == in.s.rows.ncols;
  t.note = "in-part " + std::to_string(int(100 * part)) + "% (balls a part apart; the cells keep a few points fewer)";
  return t;
}

}  // namespace

Traffic format_traffic(Format f, const TrafficInput& in) {
  switch (f) {
    case Format::Csr: return csr(in);
    case Format::KkCrs: return kk_crs(in);
    case Format::Dia: return dia(in);
    case Format::Ell: return ell(in);
    case Format::CsrScalar: return csr_scalar(in);
    case Format::CsrVector: return csr_vector(in);
    case Format::Coo: return coo(in);
    case Format::Hyb: return hyb(in);
    case Format::Pkt: return pkt(in);
    case Format::Ellr: return ellr(in);
    case Format::Pellr: return pellr(in);
    case Format::Jad: return jad(in);
    case Format::CsrAdaptive: return csr_adaptive(in);
    case Format::CsrMerge: return csr_merge(in);
    case Format::EvcHyb: return evc_hyb(in);
    case Format::Ehyb: return ehyb(in);
    case Format::Auto: break;
  }
  throw InvalidArgumentError("estimate: 'auto' is a choice among formats, not a format to estimate");
}

}  // namespace kspmv::model_detail
