// PKT (Bell & Garland §3.6, §4.6): rows and columns are renumbered part by
// part (METIS k-way on A + A^T when available, contiguous blocks
// otherwise), so most entries fall into diagonal blocks ("packets") of at
// most `packet_rows` rows. A team per packet loads the packet's window of x
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
#include <queue>
#include <tuple>

#include "kspmv/core/properties.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_info.hpp"
#include "kspmv/core/partition.hpp"
#include "kspmv/core/permutation.hpp"
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
  KernelPath kernel = KernelPath::Auto;
  // Workspace for each apply: x and the product in the internal order.
  Kokkos::View<Scalar*, memory_space> x_internal, t_internal;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return (new_to_old.span() + packet_start.span()) * sizeof(int) + packet_offset.span() * sizeof(std::int64_t) +
           index.span() * sizeof(std::uint32_t) + (value.span() + x_internal.span() + t_internal.span()) * sizeof(Scalar) +
           remainder.storage_bytes();
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

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
PktDevice<Scalar, ExecSpace> to_pkt(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using P = PktDevice<Scalar, ExecSpace>;
  using M = typename P::memory_space;
  detail::require_square(a.nrows, a.ncols, "pkt");
  P p;
  p.nrows = a.nrows;
  p.ncols = a.ncols;
  p.nnz = a.nnz();
  p.order = opt.output_order;
  p.kernel = opt.kernel;
  p.threads = detail::default_team_size<ExecSpace>();
  const int scratch_rows = pkt_scratch_rows(sizeof(Scalar));
  p.packet_rows = opt.pkt_rows > 0 ? opt.pkt_rows : pkt_default_rows(sizeof(Scalar));
  if (p.packet_rows > scratch_rows || p.packet_rows > 65535)
    throw InvalidArgumentError("pkt: pkt_rows = " + std::to_string(p.packet_rows) + " exceeds the " +
                               std::to_string(std::min(scratch_rows, 65535)) + " rows a packet can cache");
  const RowPartition part = partition_rows(a, p.packet_rows, opt.partitioner, opt.partition_budget_seconds, opt.progress);
  p.partitioner = part.method;
  p.partition_note = part.note;
  p.partition_seconds = part.seconds;
  p.packets = static_cast<int>(part.part_start.size()) - 1;
  // Fewer packets than two per SM: more threads a packet (pkt_gpu_threads).
  if (!detail::is_host_space<ExecSpace>()) p.threads = pkt_gpu_threads(p.packets, device_figures<ExecSpace>().processors);
  if (opt.progress) opt.progress("packing", 0.0);
  const auto old_to_new = inverse_permutation(part.new_to_old);
  const int T = p.threads;
  std::vector<std::uint32_t> index;
  std::vector<Scalar> value;
  std::vector<std::int64_t> offset(1, 0);
  std::vector<ordinal_t> rrow, rcol;  // remainder, internal numbering, row-sorted
  std::vector<Scalar> rval;
  std::vector<std::int64_t> load(static_cast<std::size_t>(T));
  std::vector<std::vector<ordinal_t>> rows_of_thread(static_cast<std::size_t>(T));
  for (int q = 0; q < p.packets; ++q) {
    const ordinal_t s = part.part_start[q], e = part.part_start[q + 1];
    // In-packet entry counts, then greedy least-occupied-bin packing of the
    // rows, longest first, onto the T threads.
    std::vector<std::pair<std::int64_t, ordinal_t>> len;  // (in-packet entries, internal row)
    for (ordinal_t r = s; r < e; ++r) {
      const ordinal_t orow = part.new_to_old[r];
      std::int64_t c = 0;
      for (offset_t k = a.row_ptr[orow]; k < a.row_ptr[orow + 1]; ++k) {
        const ordinal_t col = old_to_new[a.col_idx[k]];
        if (col >= s && col < e) ++c;
      }
      len.emplace_back(c, r);
    }
    std::stable_sort(len.begin(), len.end(), [](const auto& u, const auto& v) { return u.first > v.first; });
    std::fill(load.begin(), load.end(), 0);
    for (auto& v : rows_of_thread) v.clear();
    using Bin = std::pair<std::int64_t, int>;  // (load, thread)
    std::priority_queue<Bin, std::vector<Bin>, std::greater<Bin>> bins;
    for (int t = 0; t < T; ++t) bins.push({0, t});
    for (const auto& [c, r] : len) {
      auto [l, t] = bins.top();
      bins.pop();
      rows_of_thread[t].push_back(r);
      load[t] = l + c;
      bins.push({load[t], t});
    }
    const std::int64_t W = *std::max_element(load.begin(), load.end());
    const std::int64_t base = offset.back();
    index.resize(static_cast<std::size_t>(base + W * T), P::padding);
    value.resize(static_cast<std::size_t>(base + W * T), Scalar(0));
    for (int t = 0; t < T; ++t) {
      std::int64_t i = 0;
      for (ordinal_t r : rows_of_thread[t]) {
        const ordinal_t orow = part.new_to_old[r];
        for (offset_t k = a.row_ptr[orow]; k < a.row_ptr[orow + 1]; ++k) {
          const ordinal_t col = old_to_new[a.col_idx[k]];
          if (col < s || col >= e) continue;
          const std::size_t pos = static_cast<std::size_t>(base + i * T + t);
          index[pos] = (static_cast<std::uint32_t>(r - s) << 16) | static_cast<std::uint32_t>(col - s);
          value[pos] = a.values[k];
          ++i;
        }
      }
    }
    offset.push_back(base + W * T);
    if (opt.progress && (q & 63) == 0) opt.progress("packing", double(q) / p.packets);
  }
  // The remainder, sorted by internal row; its columns number x as the
  // caller passes it (internal order only with OutputOrder::Internal).
  const bool caller_x = p.order == OutputOrder::Caller;
  for (ordinal_t r = 0; r < a.nrows; ++r) {
    const ordinal_t orow = part.new_to_old[r];
    const auto q = std::upper_bound(part.part_start.begin(), part.part_start.end(), r) - part.part_start.begin() - 1;
    const ordinal_t s = part.part_start[q], e = part.part_start[q + 1];
    for (offset_t k = a.row_ptr[orow]; k < a.row_ptr[orow + 1]; ++k) {
      const ordinal_t col = old_to_new[a.col_idx[k]];
      if (col >= s && col < e) continue;
      rrow.push_back(r);
      rcol.push_back(caller_x ? a.col_idx[k] : col);
      rval.push_back(a.values[k]);
    }
  }
  p.packet_nnz = a.nnz() - static_cast<std::int64_t>(rval.size());
  if (opt.progress) opt.progress("packing", 1.0);
  p.new_to_old = detail::upload<int, M>(part.new_to_old, "kspmv::pkt::new_to_old");
  p.packet_start = detail::upload<int, M>(part.part_start, "kspmv::pkt::packet_start");
  p.packet_offset = detail::upload<std::int64_t, M>(offset, "kspmv::pkt::packet_offset");
  p.index = detail::upload<std::uint32_t, M>(index, "kspmv::pkt::index");
  p.value = detail::upload<Scalar, M>(value, "kspmv::pkt::value");
  p.remainder = detail::build_coo<Scalar, ExecSpace>(a.nrows, a.ncols, rrow, rcol, rval, opt);
  p.x_internal = Kokkos::View<Scalar*, M>("kspmv::pkt::x_internal", a.nrows);
  p.t_internal = Kokkos::View<Scalar*, M>("kspmv::pkt::t_internal", a.nrows);
  ExecSpace().fence();
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
