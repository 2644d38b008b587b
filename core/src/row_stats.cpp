#include "kspmv/core/row_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace kspmv {

double RowLengthStats::pmf(std::int64_t i) const {
  if (nrows == 0 || i < 0 || i >= static_cast<std::int64_t>(counts.size())) return 0.0;
  return double(counts[i]) / double(nrows);
}

double RowLengthStats::prob_le(std::int64_t K) const {
  if (nrows == 0 || K < 0 || counts.empty()) return 0.0;
  return double(cum_rows[static_cast<std::size_t>(std::min<std::int64_t>(K, max))]) / double(nrows);
}

double RowLengthStats::prob_gt(std::int64_t K) const { return nrows ? 1.0 - prob_le(K) : 0.0; }

double RowLengthStats::nnz_le(std::int64_t K) const {
  if (K < 0 || counts.empty()) return 0.0;
  return cum_nnz[static_cast<std::size_t>(std::min<std::int64_t>(K, max))];
}

double RowLengthStats::nnz_gt(std::int64_t K) const { return double(nnz) - nnz_le(K); }

double RowLengthStats::mean_le(std::int64_t K) const {
  const double p = prob_le(K);
  return p > 0 ? nnz_le(K) / (p * double(nrows)) : 0.0;
}

double RowLengthStats::mean_gt(std::int64_t K) const {
  const double p = prob_gt(K);
  return p > 0 ? nnz_gt(K) / (p * double(nrows)) : 0.0;
}

double RowLengthStats::fractile_mean() const {
  if (fractiles.empty()) return 0.0;
  double s = 0;
  for (auto f : fractiles) s += double(f);
  return s / double(fractiles.size());
}

RowLengthStats row_length_stats(const std::vector<std::int64_t>& lengths, std::int64_t ncols, int W) {
  if (W < 1) throw InvalidArgumentError("the number of fractiles W must be >= 1");
  std::vector<std::int64_t> counts;
  if (!lengths.empty()) {
    const std::int64_t lo = *std::min_element(lengths.begin(), lengths.end());
    if (lo < 0) throw InvalidArgumentError("negative row length");
    counts.assign(static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end())) + 1, 0);
    for (auto k : lengths) ++counts[static_cast<std::size_t>(k)];
  }
  return row_length_stats_from_counts(std::move(counts), ncols, W);
}

RowLengthStats row_length_stats_from_counts(std::vector<std::int64_t> counts, std::int64_t ncols, int W) {
  if (W < 1) throw InvalidArgumentError("the number of fractiles W must be >= 1");
  RowLengthStats s;
  s.ncols = ncols;
  s.W = W;
  // Sums in locals, not through s (a store and a reload a length; a
  // power-law graph's histogram holds 10^5 lengths and more).
  std::int64_t nrows = 0, nnz = 0;
  for (std::size_t l = 0; l < counts.size(); ++l) {
    if (counts[l] < 0)
      throw InvalidArgumentError("row length histogram: " + std::to_string(counts[l]) + " rows of length " +
                                 std::to_string(l));
    nrows += counts[l];
    nnz += static_cast<std::int64_t>(l) * counts[l];
  }
  s.nrows = nrows;
  s.nnz = nnz;
  while (!counts.empty() && counts.back() == 0) counts.pop_back();
  if (s.nrows == 0) return s;
  s.counts = std::move(counts);
  s.max = static_cast<std::int64_t>(s.counts.size()) - 1;
  while (s.counts[static_cast<std::size_t>(s.min)] == 0) ++s.min;
  s.cum_rows.resize(s.counts.size());
  s.cum_nnz.resize(s.counts.size());
  // Entries summed as integers (each partial sum is below 2^53, so the
  // doubles are the ones a sum of doubles gives, without its chain of
  // floating-point adds).
  std::int64_t rows_so_far = 0, entries_so_far = 0;
  for (std::size_t i = 0; i < s.counts.size(); ++i) {
    rows_so_far += s.counts[i];
    entries_so_far += static_cast<std::int64_t>(i) * s.counts[i];
    s.cum_rows[i] = rows_so_far;
    s.cum_nnz[i] = double(entries_so_far);
  }
  s.empty_rows = s.counts[0];
  const double n = double(s.nrows);
  s.mean = double(s.nnz) / n;
  double m2 = 0, m3 = 0;
  for (std::int64_t i = 0; i <= s.max; ++i) {
    if (!s.counts[i]) continue;
    const double d = double(i) - s.mean, p = double(s.counts[i]) / n;
    m2 += p * d * d;
    m3 += p * d * d * d;
  }
  s.stddev = std::sqrt(m2);
  s.skewness = s.stddev > 0 ? m3 / (s.stddev * s.stddev * s.stddev) : 0.0;
  // Fractiles: walk the cumulative counts once. Compare in integers:
  // P(X <= k) >= i/W  <=>  W * cum(k) >= i * N.
  s.fractiles.resize(static_cast<std::size_t>(W));
  std::int64_t k = 0, cum = s.counts[0];
  for (int i = 1; i <= W; ++i) {
    while (static_cast<long double>(cum) * W < static_cast<long double>(i) * s.nrows) cum += s.counts[++k];
    s.fractiles[i - 1] = k;
  }
  return s;
}

template <class Scalar>
RowLengthStats row_length_stats(const HostCsr<Scalar>& a, int W) {
  return row_length_stats(row_lengths(a), a.ncols, W);
}
template RowLengthStats row_length_stats(const HostCsr<float>&, int);
template RowLengthStats row_length_stats(const HostCsr<double>&, int);

WarpIterations warp_iterations(const std::vector<std::int64_t>& lengths, int warp) {
  if (warp < 1) throw InvalidArgumentError("warp size must be >= 1");
  WarpIterations w;
  const std::size_t n = lengths.size();
  for (std::size_t b = 0; b < n; b += static_cast<std::size_t>(warp)) {
    std::int64_t mx = 0;
    for (std::size_t j = b; j < b + static_cast<std::size_t>(warp); ++j) {
      const std::int64_t len = j < n ? lengths[j] : 0;
      mx = std::max(mx, len);
      w.n_p += 2 * len - 1;
    }
    w.n_iter += mx;
  }
  return w;
}

std::vector<std::int64_t> sorted_descending(std::vector<std::int64_t> lengths) {
  std::stable_sort(lengths.begin(), lengths.end(), [](std::int64_t a, std::int64_t b) { return a > b; });
  return lengths;
}

std::string row_length_histogram(const RowLengthStats& s, int width) {
  if (s.nrows == 0) return "  (no rows)\n";
  struct Bin {
    std::int64_t lo, hi, count;
  };
  std::vector<Bin> bins;
  if (s.max - s.min < 24) {
    for (std::int64_t i = s.min; i <= s.max; ++i) bins.push_back({i, i, s.counts[i]});
  } else {
    bins.push_back({0, 0, s.counts[0]});
    for (std::int64_t lo = 1; lo <= s.max; lo *= 2) {
      const std::int64_t hi = std::min(s.max, 2 * lo - 1);
      std::int64_t c = 0;
      for (std::int64_t i = lo; i <= hi; ++i) c += s.counts[i];
      bins.push_back({lo, hi, c});
    }
    // Trim empty bins at the ends.
    while (!bins.empty() && bins.front().count == 0) bins.erase(bins.begin());
  }
  std::int64_t peak = 1;
  for (const auto& b : bins) peak = std::max(peak, b.count);
  const int bar_width = std::max(10, width - 36);
  std::string out;
  char line[128];
  for (const auto& b : bins) {
    if (b.lo == b.hi) std::snprintf(line, sizeof line, "  %9lld       ", (long long)b.lo);
    else std::snprintf(line, sizeof line, "  %7lld-%-7lld", (long long)b.lo, (long long)b.hi);
    out += line;
    std::snprintf(line, sizeof line, " %10lld %5.1f%% |", (long long)b.count, 100.0 * double(b.count) / double(s.nrows));
    out += line;
    const int n = static_cast<int>(std::llround(double(bar_width) * double(b.count) / double(peak)));
    out += std::string(static_cast<std::size_t>(n), '#');
    if (n == 0 && b.count > 0) out += '.';
    out += '\n';
  }
  return out;
}

}  // namespace kspmv
