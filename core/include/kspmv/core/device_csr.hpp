// A CSR matrix on the device: what every conversion starts from. A
// Kokkos Kernels CrsMatrix or a caller's raw device views become one
// without leaving the device; a HostCsr is uploaded once.
//
// Like HostCsr it is canonical: row offsets non-decreasing from 0 to nnz,
// columns strictly increasing within a row and below ncols. A caller's
// CSR with unsorted columns or duplicate entries is made canonical by
// canonical_csr(); offsets out of order or columns out of range are an
// InvalidArgumentError naming the first bad row (find_faults()).
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/row_segments.hpp"
#include "kspmv/core/value_map.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace>
struct DeviceCsr {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  ordinal_t nrows = 0, ncols = 0;
  Kokkos::View<const offset_t*, memory_space> row_ptr;  // nrows + 1
  Kokkos::View<const ordinal_t*, memory_space> col_idx;
  Kokkos::View<const Scalar*, memory_space> values;

  std::int64_t nnz() const { return static_cast<std::int64_t>(col_idx.extent(0)); }
};

// One upload of a (canonical) HostCsr.
template <class Scalar, class ExecSpace>
DeviceCsr<Scalar, ExecSpace> upload_csr(const HostCsr<Scalar>& a) {
  using M = typename ExecSpace::memory_space;
  DeviceCsr<Scalar, ExecSpace> d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.row_ptr = detail::upload<offset_t, M>(a.row_ptr, "kspmv::csr::row_ptr");
  d.col_idx = detail::upload<ordinal_t, M>(a.col_idx, "kspmv::csr::col_idx");
  d.values = detail::upload<Scalar, M>(a.values, "kspmv::csr::values");
  return d;
}

namespace detail {
// `v` itself where it is already a contiguous view of T, else a device
// copy converted element by element.
template <class T, class ExecSpace, class V>
Kokkos::View<const T*, typename ExecSpace::memory_space> same_or_copy(const V& v, const char* label) {
  using M = typename ExecSpace::memory_space;
  static_assert(V::rank == 1, "CSR arrays are rank-1 views");
  if constexpr (std::is_same<typename V::non_const_value_type, T>::value &&
                std::is_assignable<Kokkos::View<const T*, M>, V>::value) {
    if (v.span_is_contiguous()) return v;
  }
  Kokkos::View<T*, M> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), v.extent(0));
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(0, v.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { out(i) = static_cast<T>(v(i)); });
  return out;
}

}  // namespace detail

// A DeviceCsr over a caller's device views: row offsets (nrows + 1, any
// integer type), column indices and values in memory ExecSpace can read.
// Views of DeviceCsr's own types are used as they are; others are copied
// on the device, converting their elements.
template <class Scalar, class ExecSpace, class RowPtr, class ColIdx, class Values>
DeviceCsr<Scalar, ExecSpace> device_csr_from_views(std::int64_t nrows, std::int64_t ncols, const RowPtr& row_ptr,
                                                   const ColIdx& col_idx, const Values& values) {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename RowPtr::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename ColIdx::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename Values::memory_space>::accessible,
                "the views must be in memory the matrix's execution space can read");
  DeviceCsr<Scalar, ExecSpace> d;
  d.nrows = checked_cast<ordinal_t>(nrows, "number of rows");
  d.ncols = checked_cast<ordinal_t>(ncols, "number of columns");
  d.row_ptr = detail::same_or_copy<offset_t, ExecSpace>(row_ptr, "kspmv::row_ptr");
  d.col_idx = detail::same_or_copy<ordinal_t, ExecSpace>(col_idx, "kspmv::col_idx");
  d.values = detail::same_or_copy<Scalar, ExecSpace>(values, "kspmv::values");
  return d;
}

// A host copy, for the conversions that still build on the host.
template <class Scalar, class ExecSpace>
HostCsr<Scalar> download_csr(const DeviceCsr<Scalar, ExecSpace>& d) {
  HostCsr<Scalar> a;
  a.nrows = d.nrows;
  a.ncols = d.ncols;
  auto copy = [](const auto& v, auto& out) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    out.assign(h.data(), h.data() + h.extent(0));
  };
  copy(d.row_ptr, a.row_ptr);
  copy(d.col_idx, a.col_idx);
  copy(d.values, a.values);
  return a;
}

// The longest row's length (one reduction).
template <class ExecSpace, class RowPtr>
std::int64_t longest_row(const ExecSpace& space, const RowPtr& row_ptr) {
  std::int64_t longest = 0;
  const std::int64_t nrows = row_ptr.extent(0) > 0 ? std::int64_t(row_ptr.extent(0)) - 1 : 0;
  Kokkos::parallel_reduce(
      "kspmv::longest_row", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
        const std::int64_t len = std::int64_t(row_ptr(i + 1)) - std::int64_t(row_ptr(i));
        if (len > m) m = len;
      },
      Kokkos::Max<std::int64_t>(longest));
  return std::max<std::int64_t>(longest, 0);
}

// The first row of each fault a CSR can have (nrows: none).
struct CsrFaults {
  std::int64_t offsets, range, order;  // bad offsets; a column out of range; columns not strictly increasing
};

// Three passes over the matrix on the device (offsets, then column range
// and order); the host sees three scalars.
// Throws InvalidArgumentError naming `what` for what no conversion can
// mend: the arrays' sizes, offsets out of order, columns out of range.
template <class Scalar, class ExecSpace>
CsrFaults find_faults(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& d, const std::string& what) {
  if (d.nrows < 0 || d.ncols < 0) throw InvalidArgumentError(what + ": negative dimensions");
  if (static_cast<std::int64_t>(d.row_ptr.extent(0)) != std::int64_t(d.nrows) + 1)
    throw InvalidArgumentError(what + ": row offsets have " + std::to_string(d.row_ptr.extent(0)) + " entries for " +
                               std::to_string(d.nrows) + " rows (need rows + 1)");
  if (d.values.extent(0) != d.col_idx.extent(0))
    throw InvalidArgumentError(what + ": " + std::to_string(d.col_idx.extent(0)) + " column indices but " +
                               std::to_string(d.values.extent(0)) + " values");
  const auto row_ptr = d.row_ptr;
  const auto col = d.col_idx;
  const std::int64_t nnz = d.nnz(), nrows = d.nrows;
  const ordinal_t ncols = d.ncols;
  // Offsets first, a thread a row: the entry passes below search them.
  std::int64_t first[3] = {nrows, nrows, nrows};
  Kokkos::parallel_reduce(
      "kspmv::csr_faults::offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
        const offset_t b = row_ptr(i), e = row_ptr(i + 1);
        const bool bad = (i == 0 && b != 0) || e < b || e > nnz || (i + 1 == nrows && e != nnz);
        if (bad && i < m) m = i;
      },
      Kokkos::Min<std::int64_t>(first[0]));
  if (first[0] >= nrows && nrows > 0 && nnz > 0) {
    // Columns in range, then strictly increasing: a thread per W
    // consecutive entries, the row of its first found by a binary search
    // of row_ptr and the next by stepping, so a row of 10^5 entries is not
    // one thread's walk (8 ms a pass on a 1M-row power-law graph).
    constexpr std::int64_t W = 16;
    const std::int64_t walks = (nnz + W - 1) / W;
    for (int fault = 1; fault < 3; ++fault) {
      Kokkos::parallel_reduce(
          "kspmv::csr_faults::entries", Kokkos::RangePolicy<ExecSpace>(space, 0, walks),
          KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& m) {
            const std::int64_t k0 = c * W, k1 = k0 + W < nnz ? k0 + W : nnz;
            std::int64_t i = detail::row_of_entry(row_ptr, nrows, k0), begin = row_ptr(i), end = row_ptr(i + 1);
            for (std::int64_t k = k0; k < k1; ++k) {
              while (k >= end) {
                begin = end;
                end = row_ptr(++i + 1);
              }
              const bool bad = fault == 1 ? (col(k) < 0 || col(k) >= ncols) : (k > begin && col(k) <= col(k - 1));
              if (bad && i < m) m = i;
            }
          },
          Kokkos::Min<std::int64_t>(first[fault]));
    }
  }
  const CsrFaults f{std::min(first[0], nrows), std::min(first[1], nrows), std::min(first[2], nrows)};
  if (f.offsets < nrows)
    throw InvalidArgumentError(what + ": row " + std::to_string(f.offsets) + " has offsets out of order or past the " +
                               std::to_string(nnz) + " entries");
  if (nrows == 0 && nnz != 0) throw InvalidArgumentError(what + ": entries in a matrix without rows");
  if (f.range < nrows)
    throw InvalidArgumentError(what + ": row " + std::to_string(f.range) + " has a column index outside [0, " +
                               std::to_string(ncols) + ")");
  return f;
}

// A CSR whose rows may hold unsorted columns and duplicate entries, made
// canonical: columns sorted, duplicates summed in the order they came.
// merge_offsets / merge_entries list, for each canonical entry, the input
// entries summed into it (empty where the input was canonical already), so
// a refresh with values in the input's order sums them the same way.
template <class Scalar, class ExecSpace>
struct CanonicalCsr {
  DeviceCsr<Scalar, ExecSpace> csr;
  Kokkos::View<int*, typename ExecSpace::memory_space> merge_offsets, merge_entries;
  std::int64_t input_nnz = 0;
  bool merged() const { return merge_offsets.extent(0) > 0; }
};

namespace detail {
template <class T>
using unmanaged_host = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// canonical_csr's work on the device. The rows whose columns are not
// strictly increasing ("bad" rows, ranked b = 0, 1, ...) are sorted by
// unique 64-bit keys (b - b0) x (ncols x L) + column x L + position in the
// row, L the longest bad row: by column, duplicates in input order. Rows
// are sorted in batches [b0, b0 + R) of R = key_limit / (ncols x L) rows
// (one batch unless the key would pass 2^63). Good rows are copied as
// they are. key_limit is a parameter only so tests can force batches.
template <class Scalar, class ExecSpace>
CanonicalCsr<Scalar, ExecSpace> canonical_csr_on_device(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& d,
                                                        std::int64_t key_limit) {
  using M = typename ExecSpace::memory_space;
  using policy = Kokkos::RangePolicy<ExecSpace>;
  auto alloc = [&](const char* label) { return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)); };
  const std::int64_t n = d.nrows, nnz = d.nnz(), ncols = d.ncols;
  (void)checked_cast<int>(nnz, "entries of a matrix with unsorted or duplicate entries (32-bit merge lists)");
  const auto row_ptr = d.row_ptr;
  const auto col = d.col_idx;
  const auto val = d.values;
  // A row is bad where an entry's column is not above the one before it
  // (every writer stores the same 1).
  Kokkos::View<int*, M> bad(Kokkos::view_alloc(space, std::string("kspmv::canonical::bad")), n);
  Kokkos::parallel_for(
      "kspmv::canonical::find_bad", policy(space, 0, nnz), KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t i = row_of_entry(row_ptr, n, k);
        if (k > std::int64_t(row_ptr(i)) && col(k) <= col(k - 1)) bad(i) = 1;
      });
  // Rank of each bad row (-1: good), and where its entries go in the key
  // array: an exclusive scan over the rows.
  Kokkos::View<int*, M> rank(alloc("kspmv::canonical::rank"), n);
  std::int64_t nbad = 0;
  kspmv::detail::scan(
      "kspmv::canonical::rank", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
        if (final) rank(i) = bad(i) ? static_cast<int>(sum) : -1;
        sum += bad(i);
      },
      nbad);
  Kokkos::View<int*, M> brow(alloc("kspmv::canonical::bad_rows"), nbad);
  Kokkos::View<std::int64_t*, M> boff(alloc("kspmv::canonical::bad_offsets"), nbad + 1);
  Kokkos::parallel_for(
      "kspmv::canonical::bad_rows", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        if (rank(i) >= 0) brow(rank(i)) = static_cast<int>(i);
      });
  std::int64_t nbe = 0;
  kspmv::detail::scan(
      "kspmv::canonical::bad_offsets", policy(space, 0, nbad),
      KOKKOS_LAMBDA(const std::int64_t b, std::int64_t& sum, const bool final) {
        const std::int64_t len = std::int64_t(row_ptr(brow(b) + 1)) - std::int64_t(row_ptr(brow(b)));
        if (final) boff(b) = sum;
        sum += len;
        if (final && b + 1 == nbad) boff(nbad) = sum;
      },
      nbe);
  std::int64_t longest = 1;
  Kokkos::parallel_reduce(
      "kspmv::canonical::longest", policy(space, 0, nbad),
      KOKKOS_LAMBDA(const std::int64_t b, std::int64_t& most) {
        if (boff(b + 1) - boff(b) > most) most = boff(b + 1) - boff(b);
      },
      Kokkos::Max<std::int64_t>(longest));
  const std::int64_t L = std::max<std::int64_t>(longest, 1);
  const std::int64_t nc = std::max<std::int64_t>(ncols, 1), span = nc * L;  // < 2^62: both below 2^31
  const std::int64_t R = std::max<std::int64_t>(1, key_limit / span);
  // The keys: a thread a bad entry, its row found in boff.
  Kokkos::View<std::int64_t*, M> key(alloc("kspmv::canonical::keys"), nbe);
  Kokkos::parallel_for(
      "kspmv::canonical::keys", policy(space, 0, nbe), KOKKOS_LAMBDA(const std::int64_t q) {
        const std::int64_t b = row_of_entry(boff, nbad, q), local = q - boff(b);
        const std::int64_t k = std::int64_t(row_ptr(brow(b))) + local;
        key(q) = (b % R) * span + std::int64_t(col(k)) * L + local;
      });
  space.fence();
  {
    // Each batch's rows are contiguous in the keys, so sorting a batch's
    // keys sorts each of its rows in place.
    std::vector<std::int64_t> hoff(static_cast<std::size_t>(nbad) + 1);
    if (R < nbad)
      Kokkos::deep_copy(unmanaged_host<std::int64_t>(hoff.data(), hoff.size()), boff);
    else
      hoff.back() = nbe;
    for (std::int64_t b0 = 0; b0 < std::max<std::int64_t>(nbad, 1); b0 += R) {
      const std::int64_t q0 = R < nbad ? hoff[b0] : 0, q1 = R < nbad ? hoff[std::min(b0 + R, nbad)] : nbe;
      if (q1 - q0 < 2) continue;
      Kokkos::View<std::int64_t*, M, Kokkos::MemoryTraits<Kokkos::Unmanaged>> batch(key.data() + q0, q1 - q0);
      Kokkos::sort(batch);
    }
    Kokkos::fence();
  }
  // A run of equal columns in a row starts where the column changes; runs
  // numbered by an exclusive scan (run(nbe): their count).
  Kokkos::View<std::int64_t*, M> run(alloc("kspmv::canonical::runs"), nbe + 1);
  kspmv::detail::scan(
      "kspmv::canonical::runs", policy(space, 0, nbe), KOKKOS_LAMBDA(const std::int64_t q, std::int64_t& sum, const bool final) {
        const std::int64_t b = row_of_entry(boff, nbad, q);
        const bool starts = q == boff(b) || (key(q) / L) % nc != (key(q - 1) / L) % nc;
        if (final) run(q) = sum;
        sum += starts ? 1 : 0;
        if (final && q + 1 == nbe) run(nbe) = sum;
      });
  if (nbe == 0) Kokkos::deep_copy(space, run, 0);
  // Canonical row offsets: a good row keeps its length, a bad one has its
  // runs.
  Kokkos::View<offset_t*, M> out_ptr(alloc("kspmv::csr::row_ptr"), n + 1);
  std::int64_t cnnz = 0;
  kspmv::detail::scan(
      "kspmv::canonical::row_ptr", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
        const int b = rank(i);
        const std::int64_t len = b < 0 ? std::int64_t(row_ptr(i + 1)) - std::int64_t(row_ptr(i)) : run(boff(b + 1)) - run(boff(b));
        if (final) out_ptr(i) = sum;
        sum += len;
        if (final && i + 1 == n) out_ptr(n) = sum;
      },
      cnnz);
  if (n == 0) Kokkos::deep_copy(space, out_ptr, 0);
  Kokkos::View<ordinal_t*, M> out_col(alloc("kspmv::csr::col_idx"), cnnz);
  Kokkos::View<Scalar*, M> out_val(alloc("kspmv::csr::values"), cnnz);
  Kokkos::View<int*, M> offsets(alloc("kspmv::merge_offsets"), cnnz + 1);
  Kokkos::View<int*, M> entries(alloc("kspmv::merge_entries"), nnz);
  // Good rows: each entry is its own canonical entry, merged from itself.
  Kokkos::parallel_for(
      "kspmv::canonical::good_rows", policy(space, 0, nnz), KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t i = row_of_entry(row_ptr, n, k);
        if (rank(i) >= 0) return;
        const std::int64_t c = std::int64_t(out_ptr(i)) + k - std::int64_t(row_ptr(i));
        out_col(c) = col(k);
        out_val(c) = val(k);
        offsets(c) = static_cast<int>(k);
        entries(k) = static_cast<int>(k);
      });
  // Bad rows: the merge list holds the row's entries in sorted order; a
  // run's first entry writes the canonical entry, its value summed in
  // input order (the order duplicates keep in the sort).
  Kokkos::parallel_for(
      "kspmv::canonical::bad_rows_out", policy(space, 0, nbe), KOKKOS_LAMBDA(const std::int64_t q) {
        const std::int64_t b = row_of_entry(boff, nbad, q), i = brow(b);
        const std::int64_t first = row_ptr(i), pos = first + (q - boff(b));
        entries(pos) = static_cast<int>(first + key(q) % L);
        const bool starts = q == boff(b) || (key(q) / L) % nc != (key(q - 1) / L) % nc;
        if (!starts) return;
        const std::int64_t c = std::int64_t(out_ptr(i)) + run(q) - run(boff(b));
        const std::int64_t column = (key(q) / L) % nc;
        out_col(c) = static_cast<ordinal_t>(column);
        offsets(c) = static_cast<int>(pos);
        Scalar s = val(first + key(q) % L);
        for (std::int64_t q2 = q + 1; q2 < boff(b + 1) && (key(q2) / L) % nc == column; ++q2)
          s += val(first + key(q2) % L);
        out_val(c) = s;
      });
  Kokkos::parallel_for(
      "kspmv::canonical::last_offset", policy(space, 0, 1), KOKKOS_LAMBDA(const std::int64_t) { offsets(cnnz) = static_cast<int>(nnz); });
  CanonicalCsr<Scalar, ExecSpace> c;
  c.input_nnz = nnz;
  c.csr.nrows = d.nrows;
  c.csr.ncols = d.ncols;
  c.csr.row_ptr = out_ptr;
  c.csr.col_idx = out_col;
  c.csr.values = out_val;
  c.merge_offsets = offsets;
  c.merge_entries = entries;
  return c;
}
}  // namespace detail

// Canonical input stays on the device untouched. Unsorted or duplicate
// entries are sorted and summed on the device (canonical_csr_on_device):
// the host sees a few scalars.
template <class Scalar, class ExecSpace>
CanonicalCsr<Scalar, ExecSpace> canonical_csr(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& d,
                                              const std::string& what) {
  const CsrFaults f = find_faults(space, d, what);
  if (f.order >= d.nrows) {
    CanonicalCsr<Scalar, ExecSpace> c;
    c.input_nnz = d.nnz();
    c.csr = d;
    return c;
  }
  return detail::canonical_csr_on_device(space, d, std::numeric_limits<std::int64_t>::max());
}

// The same pattern, entry k's value the tag k + 1 (value_map.hpp), made on
// the device.
template <class Scalar, class ExecSpace>
DeviceCsr<Scalar, ExecSpace> tagged_pattern(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& d) {
  using Bits = tag_bits_t<Scalar>;
  static_assert(sizeof(Bits) == sizeof(Scalar), "tags need a 4- or 8-byte scalar");
  using M = typename ExecSpace::memory_space;
  Kokkos::View<Scalar*, M> tags(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::tags"), d.nnz());
  Kokkos::View<Bits*, M, Kokkos::MemoryTraits<Kokkos::Unmanaged>> bits(reinterpret_cast<Bits*>(tags.data()),
                                                                       tags.extent(0));
  Kokkos::parallel_for(
      "kspmv::tag_entries", Kokkos::RangePolicy<ExecSpace>(space, 0, d.nnz()),
      KOKKOS_LAMBDA(const std::int64_t k) { bits(k) = static_cast<Bits>(k + 1); });
  DeviceCsr<Scalar, ExecSpace> t = d;
  t.values = tags;
  return t;
}

}  // namespace kspmv
