// PKT (Bell & Garland §3.6, §4.6): rows and columns are renumbered part by
// part (cells grown on the device by default; METIS k-way on A + A^T, BFS,
// RCM or contiguous blocks when asked), so most entries fall into diagonal
// blocks ("packets") of at most `packet_rows` rows. A team per packet loads the packet's window of x
// into team scratch once; the packet's rows are spread over the team's
// threads by greedy least-occupied-bin packing, each thread's entries laid
// out column-major with 16-bit local row and column packed in one 32-bit
// word. Entries outside the diagonal blocks form a COO remainder (rows in
// the internal order, columns in the order x comes in).
//
// x and y: in the caller's order by default; with OutputOrder::Internal
// both stay in the internal order given by `new_to_old`. The portable path
// gathers x into the internal order, runs the packets and the remainder
// into `t_internal` and scatters y back; the CUDA path (pkt_cuda.hpp) runs
// the remainder into `t_internal`, then one fused packet launch that reads
// x and writes y in the caller's order.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <limits>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_info.hpp"
#include "kspmv/core/device_partition.hpp"
#include "kspmv/core/partition.hpp"
#include "kspmv/core/scratch.hpp"
#include "kspmv/core/permutation.hpp"
#include "kspmv/core/row_segments.hpp"
#include "kspmv/formats/coo.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/pkt_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct PktDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "pkt";
  static constexpr std::uint32_t padding = 0xFFFFFFFFu;

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  int packets = 0;
  int packet_rows = 0;  // the most rows one packet holds
  int threads = 1;      // threads per packet (the team size)
  std::int64_t packet_nnz = 0;
  std::string partitioner;
  std::string partition_note;  // RowPartition::note
  double partition_seconds = 0;
  OutputOrder order = OutputOrder::Caller;
  Kokkos::View<int*, memory_space> new_to_old;    // internal row -> caller row
  Kokkos::View<int*, memory_space> packet_start;  // packets' first rows, size packets + 1
  Kokkos::View<std::int64_t*, memory_space> packet_offset;  // into index/value, size packets + 1
  Kokkos::View<std::uint32_t*, memory_space> index;  // (local row << 16) | local column
  Kokkos::View<Scalar*, memory_space> value;
  CooDevice<Scalar, ExecSpace> remainder;  // internal rows; columns in x's order (caller or internal)
  // For each slot (the packets' slots, then the remainder's entries), its
  // entry's place in its row of the CSR it was built from (padding: not
  // read): what a refresh gathers by (detail::PktSlotVisit). Empty where the
  // format keeps no value map or a row holds more than 65,536 entries; a
  // refresh then goes through a map of slots.
  Kokkos::View<std::uint16_t*, memory_space> entry_place;
  KernelPath kernel = KernelPath::Auto;
  // Workspace for each apply: x and the product in the internal order.
  Kokkos::View<Scalar*, memory_space> x_internal, t_internal;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return (new_to_old.span() + packet_start.span()) * sizeof(int) + packet_offset.span() * sizeof(std::int64_t) +
           index.span() * sizeof(std::uint32_t) + (value.span() + x_internal.span() + t_internal.span()) * sizeof(Scalar) +
           entry_place.span() * sizeof(std::uint16_t) + remainder.storage_bytes();
  }
};

template <class Scalar, class ExecSpace>
std::vector<std::pair<std::string, std::string>> pkt_properties(const PktDevice<Scalar, ExecSpace>& f) {
  return {{"partitioner", f.partitioner},
          {"partition_note", f.partition_note},
          {"packets", std::to_string(f.packets)},
          {"packet_rows", std::to_string(f.packet_rows)},
          {"threads_per_packet", std::to_string(f.threads)},
          {"in_packets", std::to_string(f.nnz ? 100.0 * double(f.packet_nnz) / double(f.nnz) : 0.0) + "%"},
          {"partition_seconds", std::to_string(f.partition_seconds)}};
}

namespace detail {
// The most entries a row may hold for pkt to keep its entries' places in
// 16 bits (PktDevice::entry_place).
inline constexpr std::int64_t kPktMostPlaces = 65536;

// What both builds start with: the shape, the options kept, the packet
// size (checked against what a packet's scratch holds).
template <class Scalar, class ExecSpace>
PktDevice<Scalar, ExecSpace> pkt_start(ordinal_t nrows, ordinal_t ncols, std::int64_t nnz, const ConvertOptions& opt) {
  require_square(nrows, ncols, "pkt");
  PktDevice<Scalar, ExecSpace> p;
  p.nrows = nrows;
  p.ncols = ncols;
  p.nnz = nnz;
  p.order = opt.output_order;
  p.kernel = opt.kernel;
  p.threads = default_team_size<ExecSpace>();
  const int scratch_rows = pkt_scratch_rows(sizeof(Scalar));
  p.packet_rows = opt.pkt_rows > 0 ? opt.pkt_rows : pkt_default_rows(sizeof(Scalar));
  if (p.packet_rows > scratch_rows || p.packet_rows > 65535)
    throw InvalidArgumentError("pkt: pkt_rows = " + std::to_string(p.packet_rows) + " exceeds the " +
                               std::to_string(std::min(scratch_rows, 65535)) + " rows a packet can cache");
  return p;
}
// Threads a packet once the packets are known: fewer packets than two per
// SM get more threads each (pkt_gpu_threads).
template <class Scalar, class ExecSpace>
void pkt_set_packets(PktDevice<Scalar, ExecSpace>& p, int packets) {
  p.packets = packets;
  if (!is_host_space<ExecSpace>()) p.threads = pkt_gpu_threads(packets, device_figures<ExecSpace>().processors);
}
}  // namespace detail

namespace detail {
// The deal (pkt_pack's step 2): for each packet q, its rows order(pos), pos in
// [start(q), start(q + 1)) (most entries first), dealt to T threads, each
// to the least loaded (ties: the lowest thread): a row's thread, its first
// slot in that thread's column, and the packet's width x T in size(q).
// One thread of a team a packet keeps a min-heap of (load, thread) in team
// scratch: the deal is sequential within a packet, and packets are many.
template <class ExecSpace, class Starts, class Order, class Counts, class Rows, class Sizes>
void pkt_deal(const ExecSpace& space, int packets, int T, const Starts& start, const Order& order,
              const Counts& count, const Rows& row_thread, const Rows& row_slot, const Sizes& size) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using sL = Kokkos::View<std::int64_t*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using sI = Kokkos::View<int*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Kokkos::parallel_for(
      "kspmv::pkt::deal",
      policy(space, packets, 1).set_scratch_size(0, Kokkos::PerTeam(sL::shmem_size(T) + sI::shmem_size(T))),
      KOKKOS_LAMBDA(const member& t) {
        sL load(t.team_scratch(0), T);
        sI who(t.team_scratch(0), T);
        const int q = t.league_rank();
        Kokkos::single(Kokkos::PerTeam(t), [&]() {
          // Every load 0 in thread order is a min-heap.
          for (int i = 0; i < T; ++i) {
            load(i) = 0;
            who(i) = i;
          }
          auto less = [&](int u, int v) { return load(u) < load(v) || (load(u) == load(v) && who(u) < who(v)); };
          for (auto pos = start(q); pos < start(q + 1); ++pos) {
            const int r = order(pos);
            row_thread(r) = who(0);
            row_slot(r) = static_cast<int>(load(0));
            load(0) += count(r);
            for (int i = 0;;) {  // the root sifted down
              const int l = 2 * i + 1;
              if (l >= T) break;
              const int m = l + 1 < T && less(l + 1, l) ? l + 1 : l;
              if (!less(m, i)) break;
              const std::int64_t lm = load(m);
              const int wm = who(m);
              load(m) = load(i);
              who(m) = who(i);
              load(i) = lm;
              who(i) = wm;
              i = m;
            }
          }
          std::int64_t width = 0;
          for (int i = 0; i < T; ++i) width = load(i) > width ? load(i) : width;
          size(q) = width * T;
        });
      });
}

// The deal's order of the rows: by packet, then in-packet entries
// descending, then row. One stable sort of packet x (most + 1) + (most -
// count) where that key times the rows fits 63 bits (the sort's bound,
// rows_by_length); past it (or where `two_sorts` asks, for the tests) two
// stable sorts, by count, then by packet, give the same order.
template <class ExecSpace, class Ints>
device_ints<ExecSpace> pkt_deal_order(const ExecSpace& space, const Ints& packet_of, const Ints& in_count,
                                      int packets, std::int64_t most_in, ScratchSet<ExecSpace>& temps,
                                      bool two_sorts = false) {
  const std::int64_t n = packet_of.extent(0);
  const std::int64_t key_bound = std::max<std::int64_t>(1, std::int64_t(packets) * (most_in + 1));
  if (!two_sorts && double(key_bound) * double(std::max<std::int64_t>(n, 1)) < 9e18) {
    auto key = temps.template take<std::int64_t>("kspmv::pkt::deal_key", n);
    Kokkos::parallel_for(
        "kspmv::pkt::deal_keys", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t r) {
          key(r) = std::int64_t(packet_of(r)) * (most_in + 1) + (most_in - in_count(r));
        });
    return rows_by_length(space, key, key_bound - 1, false, "kspmv::pkt::deal_order", &temps);
  }
  const auto by_count = rows_by_length(space, in_count, most_in, true, "kspmv::pkt::deal_by_count", &temps);
  auto packet_key = temps.template take<int>("kspmv::pkt::deal_packet", n);
  Kokkos::parallel_for(
      "kspmv::pkt::deal_packets", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { packet_key(i) = packet_of(by_count(i)); });
  const auto by_packet = rows_by_length(space, packet_key, std::max(packets - 1, 0), false, "kspmv::pkt::deal_pos", &temps);
  auto order = temps.template take<int>("kspmv::pkt::deal_order", n);
  Kokkos::parallel_for(
      "kspmv::pkt::deal_order", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t j) { order(j) = by_count(by_packet(j)); });
  return order;
}

// Every PKT build's packing, on the matrix's execution space, from its
// partition: p.new_to_old (internal row -> caller row, rows grouped part by
// part) and the packets' first rows (internal numbering; each part cut
// into packets of at most p.packet_rows):
//  1. each entry marked where its column lies in its row's packet (a
//     thread a row segment: no thread walks a hub row alone) and the marks
//     scanned: each row's count, and each entry's place among its row's
//     packet entries or remainder;
//  2. each packet's rows, most entries first, dealt to its threads
//     (pkt_deal): each row's thread and first slot, each packet's width;
//  3. packet offsets by a scan of width x threads, then a thread a row
//     segment writes its packet entries and its remainder entries.
template <class Scalar, class ExecSpace>
void pkt_pack(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, const std::vector<ordinal_t>& packet_start,
              const ConvertOptions& opt, PktDevice<Scalar, ExecSpace>& p) {
  using P = PktDevice<Scalar, ExecSpace>;
  using M = typename P::memory_space;
  pkt_set_packets(p, static_cast<int>(packet_start.size()) - 1);
  if (opt.progress) opt.progress("packing (on the device)", 0.0);
  const int packets = p.packets, T = p.threads;
  const std::int64_t n = a.nrows;
  p.packet_start = upload<int, M>(packet_start, "kspmv::pkt::packet_start");
  ScratchSet<ExecSpace> temps(space);
  const auto new_to_old = p.new_to_old;
  const auto pstart = p.packet_start;
  const auto row_ptr = a.row_ptr;
  const auto col_idx = detail::read_only(a.col_idx);
  const auto values = detail::read_only(a.values);
  auto old_to_new = temps.template take<int>("kspmv::pkt::old_to_new", n);
  auto packet_of = temps.template take<int>("kspmv::pkt::packet_of", n);
  auto in_count = temps.template take<int>("kspmv::pkt::in_packet", n);
  Kokkos::parallel_for(
      "kspmv::pkt::rows", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t r) {
        old_to_new(new_to_old(r)) = static_cast<int>(r);
        packet_of(r) = static_cast<int>(row_of_entry(pstart, packets, r));  // the last packet starting at or before r
      });
  // 1. The marks, then their exclusive scan in place over the CSR's
  // entries: a row's entries inside its packet before entry k are
  // inside(k) - inside(row's first), its count inside(row's end) -
  // inside(row's first). 32-bit sums that wrap past 2^32 entries: only
  // differences within a row are read, and a row holds fewer.
  const std::int64_t nnz = a.nnz();
  auto inside = temps.template take<std::uint32_t>("kspmv::pkt::inside", nnz + 1);
  const auto first = KOKKOS_LAMBDA(const std::int64_t r) { return std::int64_t(row_ptr(new_to_old(r))); };
  const auto last = KOKKOS_LAMBDA(const std::int64_t r) { return std::int64_t(row_ptr(new_to_old(r) + 1)); };
  const std::int64_t longest = longest_row(space, row_ptr);
  const auto segments = row_segment_plan(space, n, longest, first, last, &temps);
  run_row_segments(
      space, "kspmv::pkt::marks", segments, first, last,
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t k0, const std::int64_t k1) {
        const int q = packet_of(r), s = pstart(q), e = pstart(q + 1);
        for (std::int64_t k = k0; k < k1; ++k) {
          const int col = old_to_new(col_idx(k));
          inside(k) = col >= s && col < e ? 1u : 0u;
        }
      });
  kspmv::detail::scan(
      "kspmv::pkt::inside", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz + 1),
      KOKKOS_LAMBDA(const std::int64_t k, std::uint32_t& sum, const bool final) {
        const std::uint32_t mark = k < nnz ? inside(k) : 0u;
        if (final) inside(k) = sum;
        sum += mark;
      }, &temps);
  std::int64_t most_in = 0;
  Kokkos::parallel_reduce(
      "kspmv::pkt::in_packet", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& most) {
        const int orow = new_to_old(r);
        const int c = static_cast<int>(inside(row_ptr(orow + 1)) - inside(row_ptr(orow)));
        in_count(r) = c;
        most = c > most ? c : most;
      },
      Kokkos::Max<std::int64_t>(most_in));
  most_in = std::max<std::int64_t>(most_in, 0);
  // 2. The deal.
  const auto deal_order = pkt_deal_order(space, packet_of, in_count, packets, most_in, temps);
  auto row_thread = temps.template take<int>("kspmv::pkt::row_thread", n);
  auto row_slot = temps.template take<int>("kspmv::pkt::row_slot", n);
  p.packet_offset = Kokkos::View<std::int64_t*, M>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::pkt::packet_offset")), packets + 1);
  const auto offset = p.packet_offset;
  pkt_deal(space, packets, T, pstart, deal_order, in_count, row_thread, row_slot, offset);
  // 3. Offsets (an exclusive scan of the packets' sizes in place), then
  // the entries. Each row's remainder entries start at its scan of the
  // entries outside its packet.
  std::int64_t total = 0;
  kspmv::detail::scan(
      "kspmv::pkt::offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, packets + 1),
      KOKKOS_LAMBDA(const int q, std::int64_t& sum, const bool final) {
        const std::int64_t size = q < packets ? offset(q) : 0;
        if (final) offset(q) = sum;
        sum += size;
      },
      total, &temps);
  Kokkos::View<offset_t*, M> rem_ptr(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::pkt::remainder_ptr")), n + 1);
  std::int64_t rem_nnz = 0;
  kspmv::detail::scan(
      "kspmv::pkt::remainder_rows", Kokkos::RangePolicy<ExecSpace>(space, 0, n + 1),
      KOKKOS_LAMBDA(const std::int64_t r, std::int64_t& sum, const bool final) {
        if (final) rem_ptr(r) = static_cast<offset_t>(sum);
        if (r < n) sum += std::int64_t(row_ptr(new_to_old(r) + 1) - row_ptr(new_to_old(r))) - in_count(r);
      },
      rem_nnz, &temps);
  p.index = Kokkos::View<std::uint32_t*, M>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::pkt::index")), total);
  Kokkos::deep_copy(space, p.index, P::padding);
  p.value = Kokkos::View<Scalar*, M>(Kokkos::view_alloc(space, std::string("kspmv::pkt::value")), total);
  auto rem_col = temps.template take<ordinal_t>("kspmv::pkt::remainder_col", rem_nnz);
  auto rem_val = temps.template take<Scalar>("kspmv::pkt::remainder_val", rem_nnz);
  // Each entry's place in its row, 16 bits, where a refresh can gather by
  // it (detail::PktSlotVisit).
  const bool places = opt.value_map && longest <= kPktMostPlaces;
  p.entry_place = Kokkos::View<std::uint16_t*, M>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::pkt::entry_place")),
      places ? total + rem_nnz : 0);
  const auto place = p.entry_place;
  const auto index = p.index;
  const auto value = p.value;
  const bool caller_x = p.order == OutputOrder::Caller;
  run_row_segments(
      space, "kspmv::pkt::fill", segments, first, last,
      KOKKOS_LAMBDA(const std::int64_t r, const std::int64_t k0, const std::int64_t k1) {
        const int q = packet_of(r), s = pstart(q), e = pstart(q + 1);
        const std::int64_t row_first = row_ptr(new_to_old(r));
        const std::uint32_t inside_first = inside(row_first);
        const std::int64_t base = offset(q) + row_thread(r) + std::int64_t(row_slot(r)) * T;
        for (std::int64_t k = k0; k < k1; ++k) {
          const int col = old_to_new(col_idx(k));
          const std::int64_t in_before = inside(k) - inside_first;
          if (col >= s && col < e) {
            const std::int64_t pos = base + in_before * T;
            index(pos) = (static_cast<std::uint32_t>(r - s) << 16) | static_cast<std::uint32_t>(col - s);
            value(pos) = values(k);
            if (places) place(pos) = static_cast<std::uint16_t>(k - row_first);
          } else {
            const std::int64_t out = std::int64_t(rem_ptr(r)) + (k - row_first) - in_before;
            rem_col(out) = caller_x ? col_idx(k) : col;
            rem_val(out) = values(k);
            if (places) place(total + out) = static_cast<std::uint16_t>(k - row_first);
          }
        }
      });
  DeviceCsr<Scalar, ExecSpace> remainder;
  remainder.nrows = a.nrows;
  remainder.ncols = a.ncols;
  remainder.row_ptr = rem_ptr;
  remainder.col_idx = rem_col;
  remainder.values = rem_val;
  // Built with its list of empty rows (unlike HYB's COO part): CUDA's tuned
  // path applies it with beta = 0 into t_internal, which the packets'
  // kernel then adds to, so every row without a remainder entry is zeroed
  // there first.
  p.remainder = to_coo_device(remainder, opt);
  p.packet_nnz = a.nnz() - rem_nnz;
  p.x_internal = Kokkos::View<Scalar*, M>(Kokkos::view_alloc(space, std::string("kspmv::pkt::x_internal")), n);
  p.t_internal = Kokkos::View<Scalar*, M>(Kokkos::view_alloc(space, std::string("kspmv::pkt::t_internal")), n);
  space.fence();
  if (opt.progress) opt.progress("packing (on the device)", 1.0);
}

// A partition made on the host (partition_rows: METIS, BFS, RCM, cells or
// contiguous), recorded in p and its order uploaded for pkt_pack.
template <class Scalar, class ExecSpace>
void pkt_take_partition(const RowPartition& part, PktDevice<Scalar, ExecSpace>& p) {
  p.partitioner = part.method;
  p.partition_note = part.note;
  p.partition_seconds = part.seconds;
  p.new_to_old = upload<int, typename ExecSpace::memory_space>(part.new_to_old, "kspmv::pkt::new_to_old");
}
}  // namespace detail

// From a host CSR: the partition on the host (Partitioner::Auto: METIS
// where kspmv has it, within the budget), then one upload and the packing
// on the matrix's execution space.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
PktDevice<Scalar, ExecSpace> to_pkt(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  auto p = detail::pkt_start<Scalar, ExecSpace>(a.nrows, a.ncols, a.nnz(), opt);
  const RowPartition part = partition_rows(a, p.packet_rows, opt.partitioner, opt.partition_budget_seconds, opt.progress);
  detail::pkt_take_partition(part, p);
  detail::pkt_pack(ExecSpace(), upload_csr<Scalar, ExecSpace>(a), part.part_start, opt, p);
  p.conversion_seconds = timer.seconds();
  return p;
}

// From a device CSR. Partitioner::Auto and Cells take cell_partition's
// parts (device_partition.hpp), made on the device; Contiguous keeps the
// caller's order; METIS, BFS and RCM partition a copy of the CSR on the
// host. The packing (detail::pkt_pack) runs on the device in every case.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
PktDevice<Scalar, ExecSpace> to_pkt(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  using ints = Kokkos::View<int*, typename ExecSpace::memory_space>;
  Kokkos::Timer timer;
  ExecSpace space;
  auto p = detail::pkt_start<Scalar, ExecSpace>(a.nrows, a.ncols, a.nnz(), opt);
  const bool cells = opt.partitioner == Partitioner::Auto || opt.partitioner == Partitioner::Cells;
  if (!cells && opt.partitioner != Partitioner::Contiguous) {
    const RowPartition part =
        partition_rows(download_csr(a), p.packet_rows, opt.partitioner, opt.partition_budget_seconds, opt.progress);
    detail::pkt_take_partition(part, p);
    detail::pkt_pack(space, a, part.part_start, opt, p);
    p.conversion_seconds = timer.seconds();
    return p;
  }
  check_partition_budget(opt.partition_budget_seconds, "pkt");
  const std::int64_t n = a.nrows;
  const int nparts = parts_for_max_rows(n, p.packet_rows);
  DevicePartition<ExecSpace> part;
  if (cells && nparts > 1) {
    if (opt.progress) opt.progress("partitioning (cells, on the device)", 0.0);
    part = cell_partition(space, a.row_ptr, a.col_idx, n, nparts, p.packet_rows);
    p.partitioner = "cells";
    p.partition_note = part.note();
    p.partition_seconds = part.seconds;
    // Rows grouped by part, in the caller's order within a part.
    p.new_to_old = detail::rows_by_length(space, part.part_of, static_cast<std::int64_t>(part.part_rows.size()) - 1,
                                          false, "kspmv::pkt::new_to_old");
  } else {
    // One part: the caller's order.
    part.part_rows.assign(1, n);
    p.partitioner = "contiguous";
    const ints order(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string("kspmv::pkt::new_to_old")), n);
    Kokkos::parallel_for(
        "kspmv::pkt::caller_order", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { order(i) = static_cast<int>(i); });
    p.new_to_old = order;
  }
  detail::pkt_pack(space, a, cut_parts(part.part_rows, p.packet_rows), opt, p);
  p.conversion_seconds = timer.seconds();
  return p;
}

namespace detail {
// t = (packets) * xi: a team per packet, x window and y accumulators in
// scratch, each thread owning whole rows (no races on y_local).
template <class Scalar, class ExecSpace, class XView>
void pkt_packets(const ExecSpace& space, const PktDevice<Scalar, ExecSpace>& A, const XView& xi) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using sS = Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int T = A.threads, maxrows = A.packet_rows;
  const auto start = A.packet_start;
  const auto offset = A.packet_offset;
  const auto index = A.index;
  const auto value = A.value;
  const auto t_int = A.t_internal;
  Kokkos::parallel_for(
      "kspmv::pkt", policy(space, A.packets, T).set_scratch_size(0, Kokkos::PerTeam(2 * sS::shmem_size(maxrows))),
      KOKKOS_LAMBDA(const member& t) {
        sS xl(t.team_scratch(0), maxrows), yl(t.team_scratch(0), maxrows);
        const int q = t.league_rank();
        const int s = start(q), n = start(q + 1) - s;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const int i) {
          xl(i) = xi(s + i);
          yl(i) = 0;
        });
        t.team_barrier();
        const std::int64_t base = offset(q);
        const std::int64_t W = (offset(q + 1) - base) / T;
        const int tt = t.team_rank();
        for (std::int64_t i = 0; i < W; ++i) {
          const std::uint32_t v = index(base + i * T + tt);
          if (v == PktDevice<Scalar, ExecSpace>::padding) continue;
          yl(v >> 16) += value(base + i * T + tt) * xl(v & 0xFFFFu);
        }
        t.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const int i) { t_int(s + i) = yl(i); });
      });
}
}  // namespace detail

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const PktDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "pkt", A.nrows, A.ncols, alpha, x, beta, y)) return;
  const auto t = A.t_internal;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && detail::contiguous(x, y)) {
      const bool rem = A.remainder.nnz > 0;
      if (rem) detail::coo_apply(space, Scalar(1), A.remainder, x, Scalar(0), t);
      return cuda_tuned::pkt_spmv(space.cuda_stream(), A.packets, A.threads, A.packet_rows, A.packet_start.data(),
                            A.packet_offset.data(), A.index.data(), A.value.data(),
                            A.order == OutputOrder::Caller ? A.new_to_old.data() : nullptr,
                            rem ? t.data() : nullptr, alpha, x.data(), beta, y.data());
    }
  }
#endif
  auto finish = [&](const auto& xin) {
    detail::pkt_packets(space, A, xin);
    if (A.remainder.nnz > 0) detail::coo_apply(space, Scalar(1), A.remainder, x, Scalar(1), t);
  };
  if (A.order == OutputOrder::Internal) {
    finish(x);
    Kokkos::parallel_for(
        "kspmv::pkt_combine", Kokkos::RangePolicy<ExecSpace>(space, 0, A.nrows),
        KOKKOS_LAMBDA(const int i) { detail::combine_y(y, i, alpha, t(i), beta); });
  } else {
    device_gather(space, A.new_to_old, x, A.x_internal);
    finish(A.x_internal);
    device_scatter_combine(space, A.new_to_old, alpha, t, beta, y);
  }
}

namespace detail {
// pkt's slot visit (row_segments.hpp, visit_slots): slot s of a packet
// holds entry place(s) of internal row packet_start(q) + (index(s) >> 16),
// slot s of the remainder entry place(s) of its row; the cursor is the
// packet. A refresh through it writes the slots in order and gathers
// each packet's rows from the CSR while they are in L2 (a map of slots, a
// thread an entry, wrote each sector of a packet's thread-columns at
// times far apart: 2-6 SpMVs a refresh on scrambled FEM meshes).
template <class Scalar, class ExecSpace>
struct PktSlotVisit {
  using memory_space = typename ExecSpace::memory_space;
  using random_access = Kokkos::MemoryTraits<Kokkos::RandomAccess>;
  Kokkos::View<const offset_t*, memory_space, random_access> row_ptr;  // the CSR's
  Kokkos::View<const int*, memory_space, random_access> new_to_old, packet_start, remainder_row;
  Kokkos::View<const std::int64_t*, memory_space, random_access> packet_offset;
  Kokkos::View<const std::uint32_t*, memory_space> index;
  Kokkos::View<const std::uint16_t*, memory_space> place;
  std::int64_t packet_slots = 0, all_slots = 0;
  int packets = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t slots() const { return all_slots; }
  KOKKOS_INLINE_FUNCTION std::int64_t seek(const std::int64_t s) const {
    return s < packet_slots ? row_of_entry(packet_offset, packets, s) : std::int64_t(packets);
  }
  KOKKOS_INLINE_FUNCTION bool entry(const std::int64_t s, std::int64_t& q, std::int64_t& k) const {
    int r = 0;
    if (s < packet_slots) {
      const std::uint32_t w = index(s);
      if (w == PktDevice<Scalar, ExecSpace>::padding) return false;
      while (packet_offset(q + 1) <= s) ++q;  // packets of no slots are stepped over
      r = packet_start(q) + static_cast<int>(w >> 16);
    } else {
      r = remainder_row(s - packet_slots);
    }
    k = std::int64_t(row_ptr(new_to_old(r))) + place(s);
    return true;
  }
};
// Whether a refresh can visit its slots: it kept its entries' places.
template <class Scalar, class ExecSpace>
bool visits_slots(const PktDevice<Scalar, ExecSpace>& f) {
  return f.entry_place.extent(0) > 0 || f.nnz == 0;
}
// Whether a build from `a` will keep its places (no row longer than 16
// bits reach), known before building, so that a matrix that will not is
// built once, from tags, rather than twice (matrix.hpp).
template <class Scalar, class ExecSpace>
bool slot_visit_fits(const PktDevice<Scalar, ExecSpace>*, const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a) {
  return longest_row(space, a.row_ptr) <= kPktMostPlaces;
}
template <class Scalar, class ExecSpace>
PktSlotVisit<Scalar, ExecSpace> slot_visit(const PktDevice<Scalar, ExecSpace>& f,
                                           const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& row_ptr) {
  PktSlotVisit<Scalar, ExecSpace> v;
  v.row_ptr = row_ptr;
  v.new_to_old = f.new_to_old;
  v.packet_start = f.packet_start;
  v.remainder_row = f.remainder.row;
  v.packet_offset = f.packet_offset;
  v.index = f.index;
  v.place = f.entry_place;
  v.packet_slots = static_cast<std::int64_t>(f.index.extent(0));
  v.all_slots = f.entry_place.extent(0) > 0 ? static_cast<std::int64_t>(f.entry_place.extent(0)) : 0;
  v.packets = f.packets;
  return v;
}

// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(PktDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.value, f.remainder.val);
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const PktDevice<Scalar, ExecSpace>& f) {
  Properties p = pkt_properties(f);
  p.insert(p.begin(), {"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())});
  return p;
}
template <class S, class E>
struct permutes_x<PktDevice<S, E>> : std::true_type {};
}  // namespace detail

namespace detail {
template <class S, class E>
struct has_scratch<PktDevice<S, E>> : std::true_type {};
}  // namespace detail
template <class S, class E>
std::size_t scratch_bytes(const PktDevice<S, E>& f) {
  return (f.x_internal.span() + f.t_internal.span()) * sizeof(S) + scratch_bytes(f.remainder);
}
template <class S, class E>
PktDevice<S, E> with_own_scratch(const PktDevice<S, E>& f) {
  PktDevice<S, E> c = f;
  c.x_internal = Kokkos::View<S*, typename E::memory_space>("kspmv::pkt::x_internal", f.x_internal.extent(0));
  c.t_internal = Kokkos::View<S*, typename E::memory_space>("kspmv::pkt::t_internal", f.t_internal.extent(0));
  c.remainder = with_own_scratch(f.remainder);  // its COO part's partial sums
  return c;
}

}  // namespace kspmv
