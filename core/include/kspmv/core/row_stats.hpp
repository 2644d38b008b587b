// Row-length statistics: the probability mass function of nonzeros per row
// and its numerical characteristics, as defined in pmf-model §4.1
// (eqs. 1-14). The format model (pmf-model §4-5) is built on these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/host_matrix.hpp"

namespace kspmv {

struct RowLengthStats {
  std::int64_t nrows = 0, ncols = 0, nnz = 0;
  std::int64_t min = 0, max = 0;
  std::int64_t empty_rows = 0;
  double mean = 0;      // E(X), eq. 6
  double stddev = 0;    // sigma, eq. 9
  double skewness = 0;  // gamma, eq. 10 (0 when sigma = 0)
  // counts[i] = b_i, the number of rows with exactly i entries (size max+1).
  std::vector<std::int64_t> counts;
  // Prefix sums of counts and of i * counts (O(1) conditional moments).
  std::vector<std::int64_t> cum_rows;
  std::vector<double> cum_nnz;
  // W-fractiles (eq. 11): fractiles[i-1] = smallest k with P(X <= k) >= i/W,
  // for i = 1..W.
  int W = 0;
  std::vector<std::int64_t> fractiles;

  double pmf(std::int64_t i) const;          // p_i = b_i / N, eq. 1
  double prob_le(std::int64_t K) const;      // P(X <= K), eq. 2
  double prob_gt(std::int64_t K) const;      // P(X > K), eq. 3
  double mean_le(std::int64_t K) const;      // E(X | X <= K), eq. 7 (0 if empty)
  double mean_gt(std::int64_t K) const;      // E(X | X > K), eq. 8 (0 if empty)
  double nnz_le(std::int64_t K) const;       // NNZ(X <= K), eq. 13
  double nnz_gt(std::int64_t K) const;       // NNZ(X > K), eq. 14
  double fractile_mean() const;              // E(Q) of eq. 32: mean of the W-fractiles
  // sigma / E(X): the rows' spread for their length (0 without entries).
  double coefficient_of_variation() const { return mean > 0 ? stddev / mean : 0.0; }
};

// From a list of row lengths (the matrix's shape is passed for reports).
RowLengthStats row_length_stats(const std::vector<std::int64_t>& lengths, std::int64_t ncols,
                                int W = 32);
// From the histogram alone: counts[l] rows of exactly l entries (trailing
// zeros dropped; a negative count is an InvalidArgumentError). What a
// matrix on a device sends back instead of a length per row.
RowLengthStats row_length_stats_from_counts(std::vector<std::int64_t> counts, std::int64_t ncols, int W = 32);

template <class Scalar>
RowLengthStats row_length_stats(const HostCsr<Scalar>& a, int W = 32);

// pellr eqs. (1) and (2): with rows taken `warp` at a time in the given
// order (the last warp padded with empty rows), N_iter = sum over warps of
// the longest row in the warp, N_p = sum over warp slots of (2 b - 1).
// ELLR uses the caller's order; PELLR the rows sorted by length, longest
// first, which lowers N_iter and leaves N_p unchanged.
struct WarpIterations {
  std::int64_t n_iter = 0;
  std::int64_t n_p = 0;
};
WarpIterations warp_iterations(const std::vector<std::int64_t>& lengths, int warp = 32);
// PELLR's RowSort::Auto rule: sort when the sorted order needs at least 5%
// fewer warp iterations than the caller's order.
inline bool pellr_should_sort(const WarpIterations& caller_order, const WarpIterations& sorted) {
  return static_cast<double>(sorted.n_iter) <= 0.95 * static_cast<double>(caller_order.n_iter);
}
// The lengths sorted longest first (stable), as PELLR and JAD store them.
std::vector<std::int64_t> sorted_descending(std::vector<std::int64_t> lengths);

// A text histogram of row lengths, `width` characters wide at most: one bar
// per length when the lengths span few values, else per power-of-two bin.
std::string row_length_histogram(const RowLengthStats& s, int width = 60);

}  // namespace kspmv
