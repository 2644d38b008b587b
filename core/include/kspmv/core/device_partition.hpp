// Row partitioning on the matrix's own execution space ("cells"), for the
// formats that cache a part's window of x (EHYB, PKT): parts of about equal
// rows whose entries mostly stay inside them, in milliseconds where METIS
// takes seconds and the host's BFS growing a third of one.
//
//  1. Cells: rows whose hash falls in 1 / cell_rows are seeds, and every
//     other row takes the cell of the first row of its own that a
//     breadth-first wave from all seeds at once reached a level earlier
//     (ties go to the first such column in the row: the same cells on
//     every run). Cells are small balls of about cell_rows rows. Rows no
//     wave reaches (a component without a seed) and cells grown far past
//     their share (a hub's neighbourhood) are cut into runs of cell_rows
//     consecutive rows instead.
//  2. The cell graph: each entry joining two cells, both ways, sorted and
//     counted (weights), copied to the host. A few times the cells in
//     edges: tens of thousands on a mesh of a million rows.
//  3. group_cells (partition.cpp) joins the cells into the parts on the
//     host, and each row takes its cell's part. Where more than 3/4 of the
//     entries join two cells (random columns, power-law and Kronecker
//     graphs) there is no locality to keep: the cells are joined in order
//     into parts of equal rows, and steps 2-3 are skipped.
//
// What it gives up against METIS: on FEM meshes of 0.4-0.9M rows, 132
// parts, 85.9-89.6% of the entries inside their row's part against
// METIS's 92.2-93.9% (the host's BFS growing 87.9-90.1%). On a graph with
// no locality no partitioner finds any (uniform random columns: 10-17%).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/device_sort.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/partition.hpp"
#include "kspmv/core/profiling.hpp"
#include "kspmv/core/scratch.hpp"
#include "kspmv/core/seeded_waves.hpp"

namespace kspmv {

template <class ExecSpace>
struct DevicePartition {
  Kokkos::View<int*, typename ExecSpace::memory_space> part_of;  // each row's part
  std::vector<std::int64_t> part_rows;                           // rows in each part
  // The rows part by part in the partitioner's order, where it has one
  // (a host partitioner's new_to_old); empty for the cells, whose rows
  // keep the caller's order inside a part.
  Kokkos::View<int*, typename ExecSpace::memory_space> order;
  int cells = 0;       // the cells grouped into parts
  int levels = 0;      // breadth-first levels the cells took
  double in_part = 0;  // share of entries whose column is in the row's part
  bool no_locality = false;  // cells joined in order, no cell graph (kCellsNoLocalityShare)
  double seconds = 0;

  // What a format's conversion report says of these parts.
  std::string note() const {
    char text[160];
    std::snprintf(text, sizeof text, "on the device: %d cells, %d levels%s; in-part share %.1f%%", cells, levels,
                  no_locality ? ", no locality (cells joined in order)" : "", 100.0 * in_part);
    return text;
  }
};

// The percentage of entries joining two cells past which cell_partition
// builds no cell graph.
constexpr std::int64_t kCellsNoLocalityShare = 75;

namespace detail {

// Relabels `label` (values below `bound`) as 0 .. cells - 1 in order of
// value; returns the count.
template <class ExecSpace, class Labels>
int compact_labels(const ExecSpace& space, const Labels& label, std::int64_t bound) {
  const std::int64_t n = label.extent(0);
  ScratchSet<ExecSpace> temps(space);
  auto id = temps.template take<int>("kspmv::cells::ids", bound);
  Kokkos::deep_copy(space, id, 0);
  Kokkos::parallel_for(
      "kspmv::cells::used", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { id(label(i)) = 1; });
  std::int64_t count = 0;
  kspmv::detail::scan(
      "kspmv::cells::number", Kokkos::RangePolicy<ExecSpace>(space, 0, bound),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& sum, const bool final) {
        const int used = id(c);
        if (final) id(c) = static_cast<int>(sum);
        sum += used;
      },
      count, &temps);
  Kokkos::parallel_for(
      "kspmv::cells::relabel", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { label(i) = id(label(i)); });
  return static_cast<int>(count);
}

}  // namespace detail

// A host partitioner's parts (METIS, BFS, RCM, contiguous) as a
// DevicePartition: each row's part and the partitioner's row order on
// ExecSpace's memory and the parts' row counts, for the formats built on
// the device from them. The cells' figures (cells, levels, in_part) stay
// 0: the RowPartition's note says what the partitioner found.
template <class ExecSpace>
DevicePartition<ExecSpace> device_partition_of(const ExecSpace& space, const RowPartition& host, const std::string& label) {
  DevicePartition<ExecSpace> part;
  const std::size_t nparts = host.part_start.empty() ? 0 : host.part_start.size() - 1;
  std::vector<int> part_of(host.new_to_old.size());
  part.part_rows.resize(nparts);
  for (std::size_t q = 0; q < nparts; ++q) {
    part.part_rows[q] = host.part_start[q + 1] - host.part_start[q];
    for (ordinal_t r = host.part_start[q]; r < host.part_start[q + 1]; ++r) part_of[host.new_to_old[r]] = static_cast<int>(q);
  }
  using ints = Kokkos::View<int*, typename ExecSpace::memory_space>;
  part.part_of = ints(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), part_of.size());
  part.order = ints(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "_order"), host.new_to_old.size());
  static_assert(sizeof(ordinal_t) == sizeof(int), "a partition's rows as ints");
  Kokkos::deep_copy(space, part.part_of, detail::unmanaged_host<int>(part_of.data(), part_of.size()));
  Kokkos::deep_copy(space, part.order,
                    detail::unmanaged_host<const int>(host.new_to_old.data(), host.new_to_old.size()));
  space.fence();  // part_of is a host vector that dies here
  part.seconds = host.seconds;
  return part;
}

// Parts of the rows of a square pattern (row_ptr, col_idx on ExecSpace's
// memory), `nparts` of them, none above max_rows where cells allow. Throws
// InvalidArgumentError for nparts < 1 or max_rows < 1.
template <class ExecSpace, class RowPtr, class ColIdx>
DevicePartition<ExecSpace> cell_partition(const ExecSpace& space, const RowPtr& row_ptr, const ColIdx& col_idx,
                                          std::int64_t n, int nparts, std::int64_t max_rows) {
  using M = typename ExecSpace::memory_space;
  Kokkos::Timer timer;
  if (nparts < 1 || max_rows < 1)
    throw InvalidArgumentError("cell_partition: nparts and max_rows must be >= 1 (got " + std::to_string(nparts) +
                               ", " + std::to_string(max_rows) + ")");
  DevicePartition<ExecSpace> out;
  out.part_of = Kokkos::View<int*, M>(Kokkos::view_alloc(space, std::string("kspmv::partition::part_of")), n);
  out.part_rows.assign(static_cast<std::size_t>(nparts), 0);
  if (n == 0) return out;
  detail::ProfilingPhases phase;
  if (nparts == 1) {
    out.part_rows[0] = n;
    out.in_part = 1;
    out.seconds = timer.seconds();
    return out;
  }
  // Cells of about 64 rows (a sixteenth of a part where parts are small),
  // so a part is tens of cells and its border follows theirs.
  const std::int64_t share = std::max<std::int64_t>(1, n / nparts);
  const std::int64_t cell_rows = std::max<std::int64_t>(1, std::min<std::int64_t>(64, share / 16));
  detail::ScratchSet<ExecSpace> temps(space);
  auto cell = temps.template take<int>("kspmv::cells::cell", n);
  auto level = temps.template take<int>("kspmv::cells::level", n);
  phase.enter("kspmv::cells::waves");
  // 1. Seeds, then the waves. A row labelled in wave L has level L; a row
  // reads only neighbours of level L - 1, which no thread of wave L writes.
  std::int64_t reached = 0;
  Kokkos::parallel_reduce(
      "kspmv::cells::seeds", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& seeds) {
        const bool seed = detail::wave_seed(i, cell_rows);
        cell(i) = seed ? static_cast<int>(i) : -1;
        level(i) = seed ? 0 : -1;
        seeds += seed ? 1 : 0;
      },
      reached);
  int levels = 0;
  while (reached < n) {
    const int wave = ++levels;
    std::int64_t got = 0;
    Kokkos::parallel_reduce(
        "kspmv::cells::wave", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& count) {
          if (level(i) >= 0) return;
          const std::int64_t j =
              detail::wave_parent(row_ptr, col_idx, level, i, wave, std::int64_t(row_ptr(i + 1) - row_ptr(i)));
          if (j < 0) return;
          cell(i) = cell(j);
          level(i) = wave;
          ++count;
        },
        got);
    if (got == 0) break;
    reached += got;
  }
  out.levels = levels;
  // Rows no wave reached: runs of consecutive rows (labels n + i / cell_rows).
  const std::int64_t bound = n + (n + cell_rows - 1) / cell_rows;
  Kokkos::parallel_for(
      "kspmv::cells::unreached", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        if (cell(i) < 0) cell(i) = static_cast<int>(n + i / cell_rows);
      });
  int ncells = detail::compact_labels(space, cell, bound);
  // Cells far past their share (a hub reached its whole neighbourhood in
  // one wave) are cut into runs of consecutive rows as well: a part is
  // joined from cells, so no cell may be a large piece of one.
  const std::int64_t biggest_cell = std::max<std::int64_t>(8 * cell_rows, std::min<std::int64_t>(share / 4, max_rows));
  {
    auto size = temps.template take<int>("kspmv::cells::size", ncells);
    Kokkos::deep_copy(space, size, 0);
    Kokkos::parallel_for(
        "kspmv::cells::count", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { Kokkos::atomic_add(&size(cell(i)), 1); });
    std::int64_t big = 0;
    Kokkos::parallel_reduce(
        "kspmv::cells::big", Kokkos::RangePolicy<ExecSpace>(space, 0, ncells),
        KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& b) { b += size(c) > biggest_cell ? 1 : 0; }, big);
    if (big > 0) {
      const std::int64_t first_run = ncells;
      Kokkos::parallel_for(
          "kspmv::cells::cut", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
            if (size(cell(i)) > biggest_cell) cell(i) = static_cast<int>(first_run + i / cell_rows);
          });
      ncells = detail::compact_labels(space, cell, first_run + (n + cell_rows - 1) / cell_rows);
    }
  }
  out.cells = ncells;
  phase.enter("kspmv::cells::graph");
  // 2. The cell graph: an entry (i, j) of two cells gives the pairs
  // (cell i, cell j) and (cell j, cell i).
  auto cross = temps.template take<std::int64_t>("kspmv::cells::cross", n + 1);
  std::int64_t pairs = 0;
  kspmv::detail::scan(
      "kspmv::cells::cross", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
        std::int64_t c = 0;
        for (auto k = row_ptr(i); k < row_ptr(i + 1); ++k) c += cell(col_idx(k)) != cell(i) ? 2 : 0;
        if (final) cross(i) = sum;
        sum += c;
      },
      pairs, &temps);
  // Where most entries join two cells (random columns, power-law and
  // Kronecker graphs: 88-98% against 29-48% on meshes and stencils) the
  // pattern has no locality to find: the cells are joined in their order
  // into parts of equal rows, with no cell graph (its sort, copy and
  // grouping took 1.6 s on 24M entries of random columns).
  const std::int64_t nnz = static_cast<std::int64_t>(col_idx.extent(0));
  out.no_locality = pairs > 2 * nnz * kCellsNoLocalityShare / 100;
  if (!out.no_locality && pairs > std::int64_t(0x7FFFFFFF))
    throw FormatCannotHoldError("cell_partition: more than 2^31 entries join cells");
  std::vector<int> from, to, first;
  std::int64_t edges = 0;
  if (pairs > 0 && !out.no_locality) {
    auto a_cell = temps.template take<int>("kspmv::cells::pair_from", pairs);
    auto b_cell = temps.template take<int>("kspmv::cells::pair_to", pairs);
    Kokkos::parallel_for(
        "kspmv::cells::pairs", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
          std::int64_t at = cross(i);
          const int ci = cell(i);
          for (auto k = row_ptr(i); k < row_ptr(i + 1); ++k) {
            const int cj = cell(col_idx(k));
            if (cj == ci) continue;
            a_cell(at) = ci;
            b_cell(at) = cj;
            a_cell(at + 1) = cj;
            b_cell(at + 1) = ci;
            at += 2;
          }
        });
    // Sorted by (from, to).
    if constexpr (detail::has_radix_sort<ExecSpace>()) {
      auto sorted = detail::take_radix_pairs(temps, pairs, "kspmv::cells::key", "kspmv::cells::value");
      const int bits = detail::key_bits_below(ncells);
      {
        const auto key = sorted.key;
        const auto value = sorted.value;
        Kokkos::parallel_for(
            "kspmv::cells::by_to", Kokkos::RangePolicy<ExecSpace>(space, 0, pairs), KOKKOS_LAMBDA(const std::int64_t p) {
              key(p) = static_cast<unsigned>(b_cell(p));
              value(p) = a_cell(p);
            });
        sorted.sort(space, bits, &temps);
      }
      // Then stably by `from`: keys and values swap roles, in the spares,
      // which become the pairs sorted next.
      {
        const auto key = sorted.key;
        const auto value = sorted.value;
        const auto spare_key = sorted.spare_key;
        const auto spare_value = sorted.spare_value;
        Kokkos::parallel_for(
            "kspmv::cells::by_from", Kokkos::RangePolicy<ExecSpace>(space, 0, pairs), KOKKOS_LAMBDA(const std::int64_t p) {
              spare_key(p) = static_cast<unsigned>(value(p));
              spare_value(p) = static_cast<int>(key(p));
            });
        std::swap(sorted.key, sorted.spare_key);
        std::swap(sorted.value, sorted.spare_value);
        sorted.sort(space, bits, &temps);
      }
      {
        const auto from = sorted.key;
        const auto to = sorted.value;
        Kokkos::parallel_for(
            "kspmv::cells::sorted", Kokkos::RangePolicy<ExecSpace>(space, 0, pairs), KOKKOS_LAMBDA(const std::int64_t p) {
              a_cell(p) = static_cast<int>(from(p));
              b_cell(p) = to(p);
            });
      }
    } else {
      auto key = temps.template take<std::uint64_t>("kspmv::cells::key", pairs);
      Kokkos::parallel_for(
          "kspmv::cells::keys", Kokkos::RangePolicy<ExecSpace>(space, 0, pairs), KOKKOS_LAMBDA(const std::int64_t p) {
            key(p) = (std::uint64_t(a_cell(p)) << 32) | std::uint64_t(unsigned(b_cell(p)));
          });
      space.fence();
      Kokkos::sort(key);
      Kokkos::fence();
      Kokkos::parallel_for(
          "kspmv::cells::sorted", Kokkos::RangePolicy<ExecSpace>(space, 0, pairs), KOKKOS_LAMBDA(const std::int64_t p) {
            a_cell(p) = static_cast<int>(key(p) >> 32);
            b_cell(p) = static_cast<int>(key(p) & 0xFFFFFFFFu);
          });
    }
    // Runs of equal pairs: an edge each, its weight the run's length.
    auto head = temps.template take<int>("kspmv::cells::head", pairs + 1);
    kspmv::detail::scan(
        "kspmv::cells::runs", Kokkos::RangePolicy<ExecSpace>(space, 0, pairs),
        KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& sum, const bool final) {
          const bool starts = p == 0 || a_cell(p) != a_cell(p - 1) || b_cell(p) != b_cell(p - 1);
          if (final && starts) head(sum) = static_cast<int>(p);
          sum += starts ? 1 : 0;
        },
        edges, &temps);
    Kokkos::deep_copy(space, Kokkos::subview(head, edges), static_cast<int>(pairs));
    auto e_from = temps.template take<int>("kspmv::cells::edge_from", edges);
    auto e_to = temps.template take<int>("kspmv::cells::edge_to", edges);
    Kokkos::parallel_for(
        "kspmv::cells::edges", Kokkos::RangePolicy<ExecSpace>(space, 0, edges), KOKKOS_LAMBDA(const std::int64_t e) {
          e_from(e) = a_cell(head(e));
          e_to(e) = b_cell(head(e));
        });
    from.resize(static_cast<std::size_t>(edges));
    to.resize(static_cast<std::size_t>(edges));
    first.resize(static_cast<std::size_t>(edges) + 1);
    Kokkos::deep_copy(space, detail::unmanaged_host<int>(from.data(), from.size()), e_from);
    Kokkos::deep_copy(space, detail::unmanaged_host<int>(to.data(), to.size()), e_to);
    Kokkos::deep_copy(space, detail::unmanaged_host<int>(first.data(), first.size()),
                      Kokkos::subview(head, Kokkos::make_pair(std::int64_t(0), edges + 1)));
  }
  std::vector<std::int64_t> cell_rows_of(static_cast<std::size_t>(ncells), 0);
  {
    auto size = temps.template take<std::int64_t>("kspmv::cells::rows", ncells);
    Kokkos::deep_copy(space, size, std::int64_t(0));
    Kokkos::parallel_for(
        "kspmv::cells::rows", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) { Kokkos::atomic_add(&size(cell(i)), std::int64_t(1)); });
    Kokkos::deep_copy(space, detail::unmanaged_host<std::int64_t>(cell_rows_of.data(), cell_rows_of.size()), size);
  }
  space.fence();
  phase.enter("kspmv::cells::group");
  // 3. The cells joined into parts on the host.
  std::vector<std::int64_t> xadj(static_cast<std::size_t>(ncells) + 1, 0);
  std::vector<int> weight(static_cast<std::size_t>(edges));
  for (std::int64_t e = 0; e < edges; ++e) {
    ++xadj[from[e] + 1];
    weight[e] = first[e + 1] - first[e];
  }
  for (int c = 0; c < ncells; ++c) xadj[c + 1] += xadj[c];
  std::vector<int> cell_part;
  if (out.no_locality) {
    // Consecutive cells, each part up to its share of the rows.
    cell_part.resize(static_cast<std::size_t>(ncells));
    std::int64_t seen = 0;
    for (int c = 0; c < ncells; ++c) {
      cell_part[c] = static_cast<int>(std::min<std::int64_t>(nparts - 1, seen * nparts / n));
      seen += cell_rows_of[c];
    }
  } else {
    cell_part = group_cells(xadj, to, weight, cell_rows_of, nparts, max_rows);
  }
  for (int c = 0; c < ncells; ++c) out.part_rows[cell_part[c]] += cell_rows_of[c];
  phase.enter("kspmv::cells::part_of");
  const auto part_of_cell = temps.upload(std::move(cell_part), "kspmv::cells::part_of_cell");
  const auto part_of = out.part_of;
  Kokkos::parallel_for(
      "kspmv::cells::part_of", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { part_of(i) = part_of_cell(cell(i)); });
  std::int64_t inside = 0;  // nnz: above
  Kokkos::parallel_reduce(
      "kspmv::cells::in_part", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& s) {
        for (auto k = row_ptr(i); k < row_ptr(i + 1); ++k) s += part_of(col_idx(k)) == part_of(i) ? 1 : 0;
      },
      inside);
  out.in_part = nnz > 0 ? double(inside) / double(nnz) : 1.0;
  out.seconds = timer.seconds();
  return out;
}

}  // namespace kspmv
