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
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kspmv/core/device_util.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/host_matrix.hpp"
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

// One pass over the matrix on the device; the host sees three scalars.
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
  std::int64_t first[3];
  for (int fault = 0; fault < 3; ++fault) {
    Kokkos::parallel_reduce(
        "kspmv::csr_faults", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
          const offset_t b = row_ptr(i), e = row_ptr(i + 1);
          bool bad = false;
          if (fault == 0) {
            bad = (i == 0 && b != 0) || e < b || e > nnz || (i + 1 == nrows && e != nnz);
          } else if (b <= e && e <= nnz) {
            for (offset_t k = b; k < e && !bad; ++k)
              bad = fault == 1 ? (col(k) < 0 || col(k) >= ncols) : (k > b && col(k) <= col(k - 1));
          }
          if (bad && i < m) m = i;
        },
        Kokkos::Min<std::int64_t>(first[fault]));
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

// Canonical input stays on the device untouched. Unsorted or duplicate
// entries are sorted and summed on the host (one round trip of the
// matrix): slower, and said so in docs/ARCHITECTURE.md.
template <class Scalar, class ExecSpace>
CanonicalCsr<Scalar, ExecSpace> canonical_csr(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& d,
                                              const std::string& what) {
  CanonicalCsr<Scalar, ExecSpace> c;
  c.input_nnz = d.nnz();
  const CsrFaults f = find_faults(space, d, what);
  if (f.order >= d.nrows) {
    c.csr = d;
    return c;
  }
  using M = typename ExecSpace::memory_space;
  const HostCsr<Scalar> in = download_csr(d);  // its rows hold unsorted columns or duplicates
  HostCsr<Scalar> out(in.nrows, in.ncols);
  std::vector<int> offsets, entries;
  offsets.reserve(in.col_idx.size() + 1);
  entries.reserve(in.col_idx.size());
  out.col_idx.reserve(in.col_idx.size());
  out.values.reserve(in.col_idx.size());
  std::vector<std::int64_t> order;
  for (ordinal_t i = 0; i < in.nrows; ++i) {
    order.clear();
    for (offset_t k = in.row_ptr[i]; k < in.row_ptr[i + 1]; ++k) order.push_back(k);
    // By column, then by input position: duplicates summed in input order.
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t x, std::int64_t y) { return in.col_idx[x] < in.col_idx[y]; });
    for (std::size_t p = 0; p < order.size(); ++p) {
      const std::int64_t k = order[p];
      if (p > 0 && in.col_idx[k] == in.col_idx[order[p - 1]]) {
        out.values.back() += in.values[k];
      } else {
        offsets.push_back(static_cast<int>(entries.size()));
        out.col_idx.push_back(in.col_idx[k]);
        out.values.push_back(in.values[k]);
      }
      entries.push_back(checked_cast<int>(k, "entries of the matrix"));
    }
    out.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<offset_t>(out.col_idx.size());
  }
  offsets.push_back(static_cast<int>(entries.size()));
  c.csr = upload_csr<Scalar, ExecSpace>(out);
  c.merge_offsets = detail::upload<int, M>(offsets, "kspmv::merge_offsets");
  c.merge_entries = detail::upload<int, M>(entries, "kspmv::merge_entries");
  return c;
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
