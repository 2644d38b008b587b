// The transpose of a canonical device CSR, built on the device.
//
// Mode "T" of kspmv::spmv applies A^T as a matrix of its own (any format),
// so it needs A^T's CSR: its pattern once, and its values after every
// refresh. Each column's entries are counted (integer atomics, so the
// counts are exact) and the counts scanned into A^T's offsets. On CUDA the
// entries are then ordered by one stable radix sort of (column, entry)
// pairs on the column's bits (device_sort.hpp), which keeps each column's
// entries in A's order. Elsewhere, counting, not sorting: each entry of A
// is placed in its column's segment by an atomic cursor. The cursor's
// order depends on the schedule, so each segment is then ordered by A's
// entry index, which is A's row order: in a short segment each entry is
// written at its rank among the segment's entries, and the few long ones
// (power-law hubs) are ordered together by one sort of unique keys
// (column, entry); where most entries lie in long segments (graphs with
// hub columns), one sort of every entry's key instead. Either way the
// result depends on the pattern only: the same bits on every run and every
// device, columns of A^T ascending.
//
// Where A is structurally symmetric (FEM meshes, stencils), A^T has A's
// pattern and none of that is needed: for_each_partner() finds each entry's
// partner, and A^T is A's format with values of its own (matrix.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/device_sort.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/row_segments.hpp"
#include "kspmv/core/scratch.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace>
struct TransposedCsr {
  DeviceCsr<Scalar, ExecSpace> csr;  // A^T: ncols x nrows, canonical
  // source(p): the entry of A that A^T's entry p holds (nnz ints), so A^T's
  // values are values_of_A(source(p)).
  Kokkos::View<int*, typename ExecSpace::memory_space> source;
};

// Segments of A^T up to this many entries are ordered by ranking (a thread
// an entry reads the segment's entries); longer ones by the key sort.
constexpr std::int64_t kTransposeThreadSortMax = 32;
// Rows of A up to this many entries are placed by one thread; the entries
// of longer rows a thread each.
constexpr std::int64_t kTransposeThreadRowMax = 64;

template <class Scalar, class ExecSpace>
TransposedCsr<Scalar, ExecSpace> transpose_csr(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a) {
  using M = typename ExecSpace::memory_space;
  using policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t nnz = a.nnz();
  const std::int64_t nrows = a.nrows, ncols = a.ncols;
  if (nnz > std::int64_t(std::numeric_limits<int>::max()))
    throw FormatCannotHoldError("transpose: " + std::to_string(nnz) + " entries exceed 32-bit entry indices");
  auto alloc = [&](const char* label) { return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)); };
  const auto row_ptr = a.row_ptr;
  const auto col_idx = a.col_idx;
  const auto values = a.values;

  // A^T's offsets: entries a column (32-bit counters: nnz fits an int,
  // and half the footprint keeps a large column count in L2), scanned.
  Kokkos::View<int*, M> count(Kokkos::view_alloc(space, std::string("kspmv::transpose::count")), ncols);
  Kokkos::parallel_for(
      "kspmv::transpose::count", policy(space, 0, nnz),
      KOKKOS_LAMBDA(const std::int64_t k) { Kokkos::atomic_add(&count(col_idx(k)), 1); });
  Kokkos::View<offset_t*, M> tptr(alloc("kspmv::transpose::row_ptr"), ncols + 1);
  kspmv::detail::scan(
      "kspmv::transpose::offsets", policy(space, 0, ncols + 1),
      KOKKOS_LAMBDA(const std::int64_t c, offset_t& sum, const bool final) {
        if (final) tptr(c) = sum;
        if (c < ncols) sum += count(c);
      });
  TransposedCsr<Scalar, ExecSpace> t;
  Kokkos::View<ordinal_t*, M> tcol(alloc("kspmv::transpose::col_idx"), nnz);
  if constexpr (detail::has_radix_sort<ExecSpace>()) {
    // (column, entry) pairs sorted on the column's bits: three 8-bit
    // passes for 8M columns, where the key sort below takes eight over
    // 64-bit keys and the counting path's cursors contend on hub columns.
    // (H100: A^T's whole build 51 ms on rmat-23 against 79 by that key
    // sort; docs/PERFORMANCE.md, mode T.) The sort is stable, so each column's
    // entries stay in A's order. A's row of each entry is written once
    // into the spare key buffer, which the sort leaves free, and gathered.
    Kokkos::View<unsigned*, M> key(alloc("kspmv::transpose::column_key"), nnz);
    Kokkos::View<unsigned*, M> spare_key(alloc("kspmv::transpose::column_key"), nnz);
    Kokkos::View<int*, M> entry(alloc("kspmv::transpose::source"), nnz);
    Kokkos::View<int*, M> spare_entry(alloc("kspmv::transpose::source"), nnz);
    Kokkos::parallel_for(
        "kspmv::transpose::pairs", policy(space, 0, nnz), KOKKOS_LAMBDA(const std::int64_t k) {
          key(k) = static_cast<unsigned>(col_idx(k));
          entry(k) = static_cast<int>(k);
        });
    detail::radix_sort_pairs(space, key, spare_key, entry, spare_entry, detail::key_bits_below(ncols));
    const auto entry_row = spare_key;
    detail::for_each_row_segment(
        space, "kspmv::transpose::entry_rows", nrows, longest_row(space, row_ptr),
        KOKKOS_LAMBDA(const std::int64_t i) { return row_ptr(i); },
        KOKKOS_LAMBDA(const std::int64_t i) { return row_ptr(i + 1); },
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t k0, const std::int64_t k1) {
          for (std::int64_t k = k0; k < k1; ++k) entry_row(k) = static_cast<unsigned>(i);
        });
    const auto sorted = entry;
    Kokkos::parallel_for(
        "kspmv::transpose::rows", policy(space, 0, nnz),
        KOKKOS_LAMBDA(const std::int64_t p) { tcol(p) = static_cast<ordinal_t>(entry_row(sorted(p))); });
    t.source = entry;
  } else {
    t.source = Kokkos::View<int*, M>(alloc("kspmv::transpose::source"), nnz);
    const auto source = t.source;

    // Where most entries lie in long segments (graphs whose hub columns hold
    // most entries), every entry goes through the key sort anyway and the
    // cursors' atomics on hub columns only add to it: one sort of every
    // entry's key (column, entry) orders A^T at once. (H100, rmat-23: A^T's
    // whole build took 131 ms through the counting path, 103 ms sorting.)
    std::int64_t in_long_segments = 0;
    Kokkos::parallel_reduce(
        "kspmv::transpose::long_share", policy(space, 0, ncols),
        KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& n) {
          const std::int64_t len = tptr(c + 1) - tptr(c);
          if (len > kTransposeThreadSortMax) n += len;
        },
        in_long_segments);
    if (2 * in_long_segments > nnz) {
      Kokkos::View<std::int64_t*, M> key(alloc("kspmv::transpose::key"), nnz);
      Kokkos::parallel_for(
          "kspmv::transpose::all_keys", policy(space, 0, nnz),
          KOKKOS_LAMBDA(const std::int64_t k) { key(k) = std::int64_t(col_idx(k)) * nnz + k; });
      space.fence();
      Kokkos::sort(key);
      Kokkos::fence();
      Kokkos::parallel_for(
          "kspmv::transpose::all_place", policy(space, 0, nnz), KOKKOS_LAMBDA(const std::int64_t p) {
            const std::int64_t k = key(p) % nnz;
            source(p) = static_cast<int>(k);
            tcol(p) = static_cast<ordinal_t>(detail::row_of_entry(row_ptr, nrows, k));
          });
    } else {
      // Each entry into its column's segment by an atomic cursor (so the
      // order within a segment is arbitrary), in scratch arrays: a thread a
      // row of A up to kTransposeThreadRowMax entries, a thread an entry in
      // the longer rows, so no thread walks a power-law hub alone.
      Kokkos::View<int*, M> placed_entry(alloc("kspmv::transpose::placed_entry"), nnz);
      Kokkos::View<ordinal_t*, M> placed_row(alloc("kspmv::transpose::placed_row"), nnz);
      {
        const auto cursor = count;  // reused: each column's next free slot
        Kokkos::parallel_for(
            "kspmv::transpose::cursor", policy(space, 0, ncols),
            KOKKOS_LAMBDA(const std::int64_t c) { cursor(c) = static_cast<int>(tptr(c)); });
        std::int64_t long_row_entries = 0;
        Kokkos::parallel_reduce(
            "kspmv::transpose::place", policy(space, 0, nrows),
            KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& in_long) {
              const offset_t b = row_ptr(i), e = row_ptr(i + 1);
              if (e - b > kTransposeThreadRowMax) {
                in_long += e - b;
                return;
              }
              for (offset_t k = b; k < e; ++k) {
                const int p = Kokkos::atomic_fetch_add(&cursor(col_idx(k)), 1);
                placed_entry(p) = static_cast<int>(k);
                placed_row(p) = static_cast<ordinal_t>(i);
              }
            },
            long_row_entries);
        if (long_row_entries > 0) {
          Kokkos::View<std::int64_t*, M> long_row_start(alloc("kspmv::transpose::long_row_start"), nrows);
          kspmv::detail::scan(
              "kspmv::transpose::long_rows", policy(space, 0, nrows),
              KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
                const std::int64_t len = row_ptr(i + 1) - row_ptr(i);
                if (final) long_row_start(i) = sum;
                sum += len > kTransposeThreadRowMax ? len : 0;
              });
          Kokkos::parallel_for(
              "kspmv::transpose::place_long_rows", policy(space, 0, long_row_entries),
              KOKKOS_LAMBDA(const std::int64_t e) {
                const std::int64_t i = detail::row_of_entry(long_row_start, nrows, e);
                const offset_t k = row_ptr(i) + (e - long_row_start(i));
                const int p = Kokkos::atomic_fetch_add(&cursor(col_idx(k)), 1);
                placed_entry(p) = static_cast<int>(k);
                placed_row(p) = static_cast<ordinal_t>(i);
              });
        }
      }

      // A thread an entry of a short segment writes it at its rank in the
      // segment (how many of the segment's entries precede it in A): at most
      // 32 reads, which neighbouring threads of the same segment share in
      // cache, and one write; no data moves twice. Entries of long segments
      // are counted for the key sort.
      std::int64_t long_entries = 0;
      Kokkos::parallel_reduce(
          "kspmv::transpose::order_short", policy(space, 0, nnz),
          KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& in_long) {
            const int k = placed_entry(p);
            const ordinal_t c = col_idx(k);
            const offset_t b = tptr(c), e = tptr(c + 1);
            if (e - b > kTransposeThreadSortMax) {
              ++in_long;
              return;
            }
            offset_t rank = 0;
            for (offset_t q = b; q < e; ++q) rank += placed_entry(q) < k;
            source(b + rank) = k;
            tcol(b + rank) = placed_row(p);
          },
          long_entries);
      if (long_entries > 0) {
        // The long segments' entries, gathered in column order (a scan of
        // their lengths), keyed (column, entry of A): unique keys, so one
        // sort orders every long segment at once.
        Kokkos::View<std::int64_t*, M> long_start(alloc("kspmv::transpose::long_start"), ncols);
        kspmv::detail::scan(
            "kspmv::transpose::long_segments", policy(space, 0, ncols),
            KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& sum, const bool final) {
              const std::int64_t len = tptr(c + 1) - tptr(c);
              if (final) long_start(c) = sum;
              sum += len > kTransposeThreadSortMax ? len : 0;
            });
        // A thread a long entry e: its column is the last whose long_start is
        // at most e (short columns before it share its start).
        Kokkos::View<std::int64_t*, M> key(alloc("kspmv::transpose::key"), long_entries);
        Kokkos::parallel_for(
            "kspmv::transpose::long_keys", policy(space, 0, long_entries), KOKKOS_LAMBDA(const std::int64_t e) {
              const std::int64_t c = detail::row_of_entry(long_start, ncols, e);
              // c * nnz + entry fits 63 bits: columns and entries are 32-bit.
              key(e) = c * nnz + placed_entry(tptr(c) + (e - long_start(c)));
            });
        space.fence();
        Kokkos::sort(key);
        Kokkos::fence();
        Kokkos::parallel_for(
            "kspmv::transpose::long_place", policy(space, 0, long_entries), KOKKOS_LAMBDA(const std::int64_t e) {
              // Sorted by column first, so the e-th key is still in the
              // segment of the column it names.
              const std::int64_t c = key(e) / nnz;
              const std::int64_t k = key(e) - c * nnz;
              const offset_t p = tptr(c) + (e - long_start(c));
              source(p) = static_cast<int>(k);
              tcol(p) = static_cast<ordinal_t>(detail::row_of_entry(row_ptr, nrows, k));
            });
      }
    }  // counting path
  }
  const auto source = t.source;
  Kokkos::View<Scalar*, M> tval(alloc("kspmv::transpose::values"), nnz);
  Kokkos::parallel_for(
      "kspmv::transpose::values", policy(space, 0, nnz), KOKKOS_LAMBDA(const std::int64_t p) { tval(p) = values(source(p)); });
  t.csr.nrows = a.ncols;
  t.csr.ncols = a.nrows;
  t.csr.row_ptr = tptr;
  t.csr.col_idx = tcol;
  t.csr.values = tval;
  return t;
}

// A structurally symmetric A (square, entry (j, i) present for every
// entry (i, j)) has A^T's pattern, so A^T is A's layout holding other
// values: at entry k = (i, j) A^T holds A's entry (j, i), k's partner,
// found by a binary search of row j's columns (sorted in a canonical
// CSR): a few dependent loads an entry, no sort, no atomics but a flag.
// PartnerSearch is that search; for_each_partner runs it a vector lane an
// entry, a row to a vector (so no lane searches for its row), or, where
// some row is longer than kMirrorRowMax (power-law hubs), a thread an
// entry that first finds its row by a search of the offsets. It hands
// each (entry, partner) to the caller's functor as it finds it, so that
// what A^T needs of the pair (its value, its slot: matrix.hpp) is done in
// the same pass, and no array of partners is written or read again.
namespace detail {
template <class RowPtr, class ColIdx, class Visit, class Flag>
struct PartnerSearch {
  RowPtr row_ptr;
  ColIdx col_idx;
  Visit visit;
  Flag missing;
  // Whether a missing partner was found already: then the rest is not
  // needed (a graph's pattern fails in its first warps, and every later
  // entry costs one read of a word in L2). A volatile read: a plain one
  // may be served from a copy in the SM's L1 taken before the flag was
  // set, which the atomic that sets it (in L2) does not update.
  KOKKOS_INLINE_FUNCTION bool settled() const { return *static_cast<volatile const int*>(missing.data()) != 0; }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t k) const {
    if (settled()) return;
    const ordinal_t j = col_idx(k);
    // The first entry of row j whose column is not below i.
    offset_t lo = row_ptr(j), hi = row_ptr(j + 1);
    const offset_t end = hi;
    while (lo < hi) {
      const offset_t mid = lo + (hi - lo) / 2;
      if (col_idx(mid) < i)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < end && col_idx(lo) == i) {
      visit(static_cast<int>(k), static_cast<int>(lo));
    } else {
      Kokkos::atomic_exchange(&missing(0), 1);
    }
  }
};

// A visit that only looks (partners_found's probe).
struct IgnorePartner {
  KOKKOS_INLINE_FUNCTION void operator()(int, int) const {}
};
}  // namespace detail

// Rows longer than this send for_each_partner to a thread an entry.
inline constexpr std::int64_t kMirrorRowMax = 1024;

// visit(k, partner(k)) for every entry k of a canonical A, asynchronously
// within the call, which returns whether every entry has a partner (A's
// pattern is symmetric). Where one is missing the search stops early: some
// entries were visited, others not, and what the visits wrote is to be
// discarded. `entries` >= 0: only A's first `entries` entries (a probe).
template <class Scalar, class ExecSpace, class Visit>
bool for_each_partner(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, const Visit& visit,
                      detail::ScratchSet<ExecSpace>& temps, std::int64_t entries = -1) {
  using M = typename ExecSpace::memory_space;
  const std::int64_t nnz = a.nnz();
  const std::int64_t nrows = a.nrows;
  if (a.nrows != a.ncols || nnz > std::int64_t(std::numeric_limits<int>::max())) return false;
  const bool probe = entries >= 0 && entries < nnz;
  const auto row_ptr = a.row_ptr;
  const auto missing = temps.template take<int>("kspmv::transpose::missing", 1);
  Kokkos::deep_copy(space, missing, 0);
  using Search = detail::PartnerSearch<decltype(a.row_ptr), decltype(a.col_idx), Visit, Kokkos::View<int*, M>>;
  const Search search{a.row_ptr, a.col_idx, visit, missing};
  if (!probe && nrows > 0 && longest_row(space, row_ptr) <= kMirrorRowMax) {
    // A vector of lanes a row, as wide as the mean row where the space
    // has lanes (a power of two up to 32), 128 lanes a team.
    using team_policy = Kokkos::TeamPolicy<ExecSpace>;
    constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, M>::accessible;
    int vector = 1;
    if (!on_host)
      while (vector < 32 && vector * nrows < nnz) vector *= 2;
    const int rows_a_team = on_host ? 1 : 128 / vector;
    const std::int64_t teams = (nrows + rows_a_team - 1) / rows_a_team;
    Kokkos::parallel_for(
        "kspmv::transpose::partner_rows", team_policy(space, static_cast<int>(teams), rows_a_team, vector),
        KOKKOS_LAMBDA(const typename team_policy::member_type& t) {
          const std::int64_t i = std::int64_t(t.league_rank()) * t.team_size() + t.team_rank();
          if (i >= nrows) return;
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(t, row_ptr(i), row_ptr(i + 1)),
                               [&](const offset_t k) { search(i, k); });
        });
  } else {
    Kokkos::parallel_for(
        probe ? "kspmv::transpose::partner_probe" : "kspmv::transpose::partner_entries",
        Kokkos::RangePolicy<ExecSpace>(space, 0, probe ? entries : nnz), KOKKOS_LAMBDA(const std::int64_t k) {
          if (!search.settled()) search(detail::row_of_entry(row_ptr, nrows, k), k);
        });
  }
  space.fence();
  int missed = 0;
  Kokkos::deep_copy(missed, Kokkos::subview(missing, 0));
  return missed == 0;
}

// Whether A's first `entries` entries all have partners: a look before
// A^T's arrays are allocated for a shared pattern, where a graph's
// pattern fails in its first rows.
template <class Scalar, class ExecSpace>
bool partners_found(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, std::int64_t entries,
                    detail::ScratchSet<ExecSpace>& temps) {
  return for_each_partner(space, a, detail::IgnorePartner{}, temps, entries);
}

// Whether two device CSRs have the same pattern (shape, offsets, columns):
// A and A^T do where A is structurally symmetric, and then A's format suits
// A^T as well. One pass over both.
template <class Scalar, class ExecSpace>
bool same_pattern(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, const DeviceCsr<Scalar, ExecSpace>& b) {
  if (a.nrows != b.nrows || a.ncols != b.ncols || a.nnz() != b.nnz()) return false;
  const auto ap = a.row_ptr, bp = b.row_ptr;
  const auto ac = a.col_idx, bc = b.col_idx;
  const std::int64_t rows = a.nrows, nnz = a.nnz();
  std::int64_t differ = 0;
  Kokkos::parallel_reduce(
      "kspmv::transpose::same_pattern", Kokkos::RangePolicy<ExecSpace>(space, 0, std::max(rows + 1, nnz)),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& n) {
        if (k <= rows && ap(k) != bp(k)) ++n;
        if (k < nnz && ac(k) != bc(k)) ++n;
      },
      differ);
  return differ == 0;
}

}  // namespace kspmv
