// Host-side sparse matrices: the input every device format is built from.
//
// HostCoo holds triplets as given (any order, duplicates allowed).
// HostCsr is canonical: rows in order, columns sorted within a row,
// duplicates summed, explicit zeros kept, empty rows and rectangular shapes
// allowed. Column indices are 32-bit (what every device format stores);
// row offsets are 64-bit so a host matrix may hold more than 2^31 entries
// and a device format that needs 32-bit offsets can refuse it clearly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"

namespace kspmv {

using ordinal_t = std::int32_t;  // row / column index
using offset_t = std::int64_t;   // host row offsets, entry counts

template <class Scalar>
struct HostCoo {
  ordinal_t nrows = 0;
  ordinal_t ncols = 0;
  std::vector<ordinal_t> row;
  std::vector<ordinal_t> col;
  std::vector<Scalar> val;

  HostCoo() = default;
  // Sizes are checked against the 32-bit index range.
  HostCoo(std::int64_t rows, std::int64_t cols);

  // Appends one entry (0-based); out-of-range indices throw.
  void add(std::int64_t i, std::int64_t j, Scalar v);
  std::int64_t entries() const { return static_cast<std::int64_t>(val.size()); }
};

template <class Scalar>
struct HostCsr {
  using scalar_type = Scalar;

  ordinal_t nrows = 0;
  ordinal_t ncols = 0;
  std::vector<offset_t> row_ptr{0};  // nrows + 1 entries
  std::vector<ordinal_t> col_idx;    // nnz entries, sorted within each row
  std::vector<Scalar> values;        // nnz entries

  HostCsr() = default;
  // An empty (all-zero) matrix of the given shape.
  HostCsr(std::int64_t rows, std::int64_t cols);

  std::int64_t nnz() const { return static_cast<std::int64_t>(col_idx.size()); }
  std::int64_t row_length(ordinal_t i) const { return row_ptr[i + 1] - row_ptr[i]; }

  // Throws InvalidArgumentError naming the first violation of the canonical
  // form (array sizes, monotone offsets, sorted unique in-range columns).
  void validate() const;
  // The part of validate() that is O(nrows): array sizes and monotone
  // offsets, what every conversion checks before it reads the arrays.
  void validate_offsets() const;
};

// Builds the canonical CSR from triplets (sorts, sums duplicates). Works in
// O(nnz + nrows) memory beyond the output: a counting sort by row, then a
// sort of each row by column.
template <class Scalar>
HostCsr<Scalar> to_csr(const HostCoo<Scalar>& coo);

template <class Scalar>
HostCoo<Scalar> to_coo(const HostCsr<Scalar>& csr);

// The same matrix with values cast to another precision.
template <class To, class From>
HostCsr<To> convert_scalar(const HostCsr<From>& a) {
  HostCsr<To> b;
  b.nrows = a.nrows;
  b.ncols = a.ncols;
  b.row_ptr = a.row_ptr;
  b.col_idx = a.col_idx;
  b.values.assign(a.values.begin(), a.values.end());
  return b;
}

// Aᵀ, canonical.
template <class Scalar>
HostCsr<Scalar> transpose(const HostCsr<Scalar>& a);

// A few rows of a matrix copied to the host (detail::fetch_rows on a
// device, or a host matrix's own; what pattern_stats samples and
// evc-hyb's report reads): row ids[q] of the matrix, the offset of its
// entries there (begins[q]) and its column indices,
// cols[local[q]] .. cols[local[q + 1] - 1].
struct SampledRows {
  std::vector<ordinal_t> ids;
  std::vector<offset_t> begins;
  std::vector<std::int64_t> local;  // ids.size() + 1, from 0
  std::vector<ordinal_t> cols;
};

// Entries per row (nrows values).
template <class Scalar>
std::vector<std::int64_t> row_lengths(const HostCsr<Scalar>& a);
// Row numbers ordered by length, shortest or longest first; equal lengths
// keep the caller's order. csr-adaptive walks its rows shortest first,
// PELLR and JAD store theirs longest first, and the model counts bytes in
// the order a format walks.
std::vector<ordinal_t> rows_by_length(const std::vector<std::int64_t>& lengths, bool descending);

// Bytes of y = Ax's minimum traffic for CSR with 32-bit indices: values,
// column indices and row offsets once, x once, y once. The roofline every
// benchmark's effective bandwidth is measured against.
template <class Scalar>
double csr32_min_bytes(const HostCsr<Scalar>& a) {
  return static_cast<double>(a.nnz()) * (sizeof(Scalar) + 4) +
         (static_cast<double>(a.nrows) + 1) * 4 +
         static_cast<double>(a.ncols) * sizeof(Scalar) +
         static_cast<double>(a.nrows) * sizeof(Scalar);
}

}  // namespace kspmv
