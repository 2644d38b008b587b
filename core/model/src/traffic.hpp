// What each format's storage model says one SpMV moves and waits on: one
// function a format (traffic.cpp), turned into time by estimate()
// (estimate.cpp) with the calibrated figures. Private to the model.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/model/model.hpp"

namespace kspmv::model_detail {

constexpr int kIndex = 4;  // S_i: 32-bit indices
inline std::int64_t pitch_of(std::int64_t n) { return (n + 31) / 32 * 32; }

// The matrix as every format's traffic sees it.
struct TrafficInput {
  const PatternStats& s;
  int tau;  // scalar bytes
  const ModelHardware& hw;
  double max_fill;
  std::int64_t hyb_k;  // < 0: the 1/3 rule
  double n, m, nnz, pitch, maxlen;
  double x, x_ascending;  // x bytes (evc-hyb §3.2 alpha) in the caller's and the ascending-length order
  double y;               // y written once (beta = 0)
  double csr_storage;     // CSR's bytes: values, 32-bit columns and offsets
};

// A kernel's share of the bytes, moved at the figures of format `runs_as`
// (HYB runs ELL's kernel and COO's: two parts; every other format one,
// its own) with `launches` launches.
struct TrafficPart {
  Format runs_as;
  double bytes = 0;
  int launches = 1;
};

struct Traffic {
  std::vector<TrafficPart> parts;  // the first one's time overlaps the chain
  double storage_bytes = 0;
  double slots = 0;           // stored slots, padding included
  double chain_elements = 0;  // the longest serial chain of one lane, in the format's own steps
  // The chain's steps cost `chain_as`'s figure times per_step (EHYB's and
  // csr-adaptive's lanes run ELL's slot loop).
  Format chain_as;
  double chain_per_step = 1;
  // 128-byte lines its warps' loads touch where each lane walks a row of
  // its own (csr-scalar, csr-adaptive): an SM looks each up (line_ns).
  double lines = 0;
  // Whether its lanes walk their rows as on the stencil the near-L2
  // efficiency was measured on (csr-scalar streams long rows past L1).
  bool walked = true;
  double extra_fixed_seconds = 0;
  bool feasible = true;  // false: the conversion would refuse (fill, shape)
  std::string note;
};

// Format f's traffic (f is a storage format, not auto).
Traffic format_traffic(Format f, const TrafficInput& in);

// The length of the row at rank k (from 0) of the lengths sorted
// ascending, or descending from the longest: a search of the histogram's
// running counts (cum_rows[i]: rows of at most i entries).
inline std::int64_t length_at_rank(const RowLengthStats& r, std::int64_t k, bool descending) {
  if (descending) k = r.nrows - 1 - k;
  return std::upper_bound(r.cum_rows.begin(), r.cum_rows.end(), k) - r.cum_rows.begin();
}

// pellr eqs. 1-2 with the rows sorted longest first, from the histogram: a
// warp's longest row is its first; N_p does not depend on the order.
// The warps' first ranks fall in ever shorter lengths, so one walk down
// the cumulative counts finds them all (a binary search a warp missed the
// cache on every step: milliseconds on a power-law graph's long tail).
inline WarpIterations descending_warps(const RowLengthStats& r) {
  WarpIterations w;
  std::size_t len = r.cum_rows.empty() ? 0 : r.cum_rows.size() - 1;
  for (std::int64_t k = 0; k < r.nrows; k += 32) {
    const std::int64_t ascending_rank = r.nrows - 1 - k;  // length_at_rank(r, k, true), walked
    while (len > 0 && r.cum_rows[len - 1] > ascending_rank) --len;
    w.n_iter += static_cast<std::int64_t>(len);
  }
  w.n_p = 2 * r.nnz - (r.nrows + 31) / 32 * 32;
  return w;
}

}  // namespace kspmv::model_detail
