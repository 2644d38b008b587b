#include "kspmv/core/permutation.hpp"

#include <algorithm>
#include <utility>

namespace kspmv {

void validate_permutation(const std::vector<ordinal_t>& p, std::int64_t n) {
  if (static_cast<std::int64_t>(p.size()) != n)
    throw InvalidArgumentError("permutation has " + std::to_string(p.size()) + " entries, expected " +
                               std::to_string(n));
  std::vector<char> seen(p.size(), 0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] < 0 || p[i] >= n)
      throw InvalidArgumentError("permutation entry " + std::to_string(i) + " = " + std::to_string(p[i]) +
                                 " is out of range");
    if (seen[p[i]]++) throw InvalidArgumentError("permutation repeats " + std::to_string(p[i]));
  }
}

std::vector<ordinal_t> inverse_permutation(const std::vector<ordinal_t>& p) {
  validate_permutation(p, static_cast<std::int64_t>(p.size()));
  std::vector<ordinal_t> inv(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<ordinal_t>(i);
  return inv;
}

template <class Scalar>
HostCsr<Scalar> permute_rows(const HostCsr<Scalar>& a, const std::vector<ordinal_t>& p) {
  validate_permutation(p, a.nrows);
  HostCsr<Scalar> b(a.nrows, a.ncols);
  b.col_idx.reserve(a.col_idx.size());
  b.values.reserve(a.values.size());
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    const ordinal_t r = p[i];
    b.col_idx.insert(b.col_idx.end(), a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1]);
    b.values.insert(b.values.end(), a.values.begin() + a.row_ptr[r], a.values.begin() + a.row_ptr[r + 1]);
    b.row_ptr[i + 1] = static_cast<offset_t>(b.col_idx.size());
  }
  return b;
}
template <class Scalar>
HostCsr<Scalar> permute_symmetric(const HostCsr<Scalar>& a, const std::vector<ordinal_t>& p) {
  if (a.nrows != a.ncols) throw InvalidArgumentError("permute_symmetric: the matrix must be square");
  HostCsr<Scalar> b = permute_rows(a, p);
  const auto old_to_new = inverse_permutation(p);
  std::vector<std::pair<ordinal_t, Scalar>> row;
  for (ordinal_t i = 0; i < b.nrows; ++i) {
    const offset_t lo = b.row_ptr[i], hi = b.row_ptr[i + 1];
    row.clear();
    for (offset_t k = lo; k < hi; ++k) row.emplace_back(old_to_new[b.col_idx[k]], b.values[k]);
    std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (offset_t k = lo; k < hi; ++k) {
      b.col_idx[k] = row[k - lo].first;
      b.values[k] = row[k - lo].second;
    }
  }
  return b;
}

template HostCsr<float> permute_symmetric(const HostCsr<float>&, const std::vector<ordinal_t>&);
template HostCsr<double> permute_symmetric(const HostCsr<double>&, const std::vector<ordinal_t>&);
template HostCsr<float> permute_rows(const HostCsr<float>&, const std::vector<ordinal_t>&);
template HostCsr<double> permute_rows(const HostCsr<double>&, const std::vector<ordinal_t>&);

}  // namespace kspmv
