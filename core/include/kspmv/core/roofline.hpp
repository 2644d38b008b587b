// Roofline quantities of evc-hyb §3.2: the code balance B (bytes moved per
// flop) of an SpMV that stores `stored` slots (nonzeros + padding) for
// `nnz` nonzeros, with x reuse alpha:
//   TBytes = ((tau + 4) / beta + tau * alpha) NNZ + 2 tau N,  beta = nnz / stored
//   TFlops = 2 NNZ + 3 N
// (the paper's 12/beta + 8 alpha and 16 N for tau = 8). Without a profiler
// alpha is estimated from the pattern: the 32-byte sectors of x a warp of
// 32 consecutive rows touches, with no reuse between warps assumed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kspmv/core/host_matrix.hpp"

namespace kspmv {

struct CodeBalance {
  double alpha = 0;  // x bytes loaded per nonzero, in units of tau
  double beta = 1;   // nonzeros / stored slots
  double bytes = 0;  // TBytes
  double flops = 0;  // TFlops
  double balance() const { return flops > 0 ? bytes / flops : 0; }
};

// alpha from the pattern: rows taken 32 at a time in `order` (empty: the
// caller's order).
template <class Scalar>
double x_reuse_alpha(const HostCsr<Scalar>& a, const std::vector<int>& order, int tau) {
  if (a.nnz() == 0) return 0;
  const std::int64_t per_sector = std::max(1, 32 / tau);
  std::int64_t sectors = 0;
  std::vector<std::int64_t> s;
  for (std::int64_t w = 0; w < a.nrows; w += 32) {
    s.clear();
    for (std::int64_t i = w; i < std::min<std::int64_t>(w + 32, a.nrows); ++i) {
      const ordinal_t r = order.empty() ? static_cast<ordinal_t>(i) : order[static_cast<std::size_t>(i)];
      for (offset_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) s.push_back(a.col_idx[k] / per_sector);
    }
    std::sort(s.begin(), s.end());
    sectors += std::unique(s.begin(), s.end()) - s.begin();
  }
  return double(sectors) * 32.0 / (double(tau) * double(a.nnz()));
}

inline CodeBalance code_balance(std::int64_t nnz, std::int64_t stored, std::int64_t nrows, int tau, double alpha) {
  CodeBalance c;
  c.alpha = alpha;
  c.beta = stored > 0 ? double(nnz) / double(stored) : 1.0;
  c.bytes = (double(tau + 4) / c.beta + double(tau) * alpha) * double(nnz) + 2.0 * tau * double(nrows);
  c.flops = 2.0 * double(nnz) + 3.0 * double(nrows);
  return c;
}

}  // namespace kspmv
