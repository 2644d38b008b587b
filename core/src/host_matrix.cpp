#include "kspmv/core/host_matrix.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {

template <class Scalar>
HostCoo<Scalar>::HostCoo(std::int64_t rows, std::int64_t cols)
    : nrows(checked_cast<ordinal_t>(rows, "number of rows")),
      ncols(checked_cast<ordinal_t>(cols, "number of columns")) {}

template <class Scalar>
void HostCoo<Scalar>::add(std::int64_t i, std::int64_t j, Scalar v) {
  if (i < 0 || i >= nrows || j < 0 || j >= ncols)
    throw InvalidArgumentError("entry (" + std::to_string(i) + ", " +
                               std::to_string(j) + ") is outside a " +
                               std::to_string(nrows) + " x " +
                               std::to_string(ncols) + " matrix");
  row.push_back(static_cast<ordinal_t>(i));
  col.push_back(static_cast<ordinal_t>(j));
  val.push_back(v);
}

template <class Scalar>
HostCsr<Scalar>::HostCsr(std::int64_t rows, std::int64_t cols)
    : nrows(checked_cast<ordinal_t>(rows, "number of rows")),
      ncols(checked_cast<ordinal_t>(cols, "number of columns")),
      row_ptr(static_cast<std::size_t>(nrows) + 1, 0) {}

template <class Scalar>
void HostCsr<Scalar>::validate_offsets() const {
  auto fail = [](const std::string& m) {
    throw InvalidArgumentError("HostCsr is not canonical: " + m);
  };
  if (nrows < 0 || ncols < 0) fail("negative dimension");
  if (row_ptr.size() != static_cast<std::size_t>(nrows) + 1)
    fail("row_ptr has " + std::to_string(row_ptr.size()) + " entries, expected " +
         std::to_string(static_cast<std::int64_t>(nrows) + 1));
  if (row_ptr[0] != 0) fail("row_ptr[0] != 0");
  if (values.size() != col_idx.size()) fail("values and col_idx differ in length");
  if (row_ptr[nrows] != static_cast<offset_t>(col_idx.size()))
    fail("row_ptr[nrows] = " + std::to_string(row_ptr[nrows]) + " but there are " +
         std::to_string(col_idx.size()) + " entries");
  for (ordinal_t i = 0; i < nrows; ++i)
    if (row_ptr[i + 1] < row_ptr[i]) fail("row_ptr decreases at row " + std::to_string(i));
}

template <class Scalar>
void HostCsr<Scalar>::validate() const {
  auto fail = [](const std::string& m) {
    throw InvalidArgumentError("HostCsr is not canonical: " + m);
  };
  validate_offsets();
  for (ordinal_t i = 0; i < nrows; ++i) {
    for (offset_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      if (col_idx[k] < 0 || col_idx[k] >= ncols)
        fail("column " + std::to_string(col_idx[k]) + " out of range in row " +
             std::to_string(i));
      if (k > row_ptr[i] && col_idx[k] <= col_idx[k - 1])
        fail("columns not strictly increasing in row " + std::to_string(i));
    }
  }
}

template <class Scalar>
HostCsr<Scalar> to_csr(const HostCoo<Scalar>& coo) {
  HostCsr<Scalar> a(coo.nrows, coo.ncols);
  const std::size_t n = coo.val.size();
  if (coo.row.size() != n || coo.col.size() != n)
    throw InvalidArgumentError("HostCoo arrays differ in length");
  // Counting sort by row.
  std::vector<offset_t> start(static_cast<std::size_t>(a.nrows) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    if (coo.row[k] < 0 || coo.row[k] >= a.nrows || coo.col[k] < 0 || coo.col[k] >= a.ncols)
      throw InvalidArgumentError("HostCoo entry " + std::to_string(k) + " is out of range");
    ++start[coo.row[k] + 1];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::pair<ordinal_t, Scalar>> sorted(n);
  {
    std::vector<offset_t> next(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < n; ++k)
      sorted[next[coo.row[k]]++] = {coo.col[k], coo.val[k]};
  }
  // Sort each row by column (stable keeps the file's order for duplicates,
  // so their sum is reproducible), then sum duplicates in place.
  a.col_idx.reserve(n);
  a.values.reserve(n);
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    auto b = sorted.begin() + start[i], e = sorted.begin() + start[i + 1];
    std::stable_sort(b, e, [](const auto& p, const auto& q) { return p.first < q.first; });
    for (auto it = b; it != e; ++it) {
      if (it != b && it->first == a.col_idx.back())
        a.values.back() += it->second;
      else {
        a.col_idx.push_back(it->first);
        a.values.push_back(it->second);
      }
    }
    a.row_ptr[i + 1] = static_cast<offset_t>(a.col_idx.size());
  }
  a.col_idx.shrink_to_fit();
  a.values.shrink_to_fit();
  return a;
}

template <class Scalar>
HostCoo<Scalar> to_coo(const HostCsr<Scalar>& a) {
  HostCoo<Scalar> c(a.nrows, a.ncols);
  c.row.resize(a.col_idx.size());
  for (ordinal_t i = 0; i < a.nrows; ++i)
    std::fill(c.row.begin() + a.row_ptr[i], c.row.begin() + a.row_ptr[i + 1], i);
  c.col = a.col_idx;
  c.val = a.values;
  return c;
}

template <class Scalar>
HostCsr<Scalar> transpose(const HostCsr<Scalar>& a) {
  HostCsr<Scalar> t(a.ncols, a.nrows);
  for (auto j : a.col_idx) ++t.row_ptr[j + 1];
  std::partial_sum(t.row_ptr.begin(), t.row_ptr.end(), t.row_ptr.begin());
  t.col_idx.resize(a.col_idx.size());
  t.values.resize(a.values.size());
  std::vector<offset_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  // Rows of A in order, so each row of Aᵀ receives increasing columns.
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const offset_t p = next[a.col_idx[k]]++;
      t.col_idx[p] = i;
      t.values[p] = a.values[k];
    }
  return t;
}

std::vector<ordinal_t> rows_by_length(const std::vector<std::int64_t>& lengths, bool descending) {
  // A counting sort (stable, linear in rows plus the longest row): the
  // model sorts every matrix auto sees, millions of rows.
  std::int64_t longest = 0;
  for (const std::int64_t l : lengths) {
    if (l < 0) throw InvalidArgumentError("rows_by_length: a row of negative length " + std::to_string(l));
    longest = std::max(longest, l);
  }
  std::vector<std::size_t> next(static_cast<std::size_t>(longest) + 2, 0);
  auto key = [&](std::int64_t l) { return static_cast<std::size_t>(descending ? longest - l : l); };
  for (const std::int64_t l : lengths) ++next[key(l) + 1];
  for (std::size_t k = 1; k < next.size(); ++k) next[k] += next[k - 1];
  std::vector<ordinal_t> p(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) p[next[key(lengths[i])]++] = static_cast<ordinal_t>(i);
  return p;
}

template <class Scalar>
std::vector<std::int64_t> row_lengths(const HostCsr<Scalar>& a) {
  std::vector<std::int64_t> len(a.nrows);
  for (ordinal_t i = 0; i < a.nrows; ++i) len[i] = a.row_length(i);
  return len;
}

#define KSPMV_INSTANTIATE(S)                                    \
  template struct HostCoo<S>;                                   \
  template struct HostCsr<S>;                                   \
  template HostCsr<S> to_csr(const HostCoo<S>&);                \
  template HostCoo<S> to_coo(const HostCsr<S>&);                \
  template HostCsr<S> transpose(const HostCsr<S>&);             \
  template std::vector<std::int64_t> row_lengths(const HostCsr<S>&);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)

}  // namespace kspmv
