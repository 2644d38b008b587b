// pattern_stats(): the figures of a matrix the model reads beyond its row
// lengths. The figures counted over every entry (diagonals, in-window
// shares) take one pass; the per-warp figures (x sectors, the lines a
// warp's loads touch) read every warp of the matrix, or, given a budget of
// entries, a sample of warps that stands for the rest (pick_warps).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <condition_variable>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/distinct_count.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/profiling.hpp"
#include "kspmv/core/roofline.hpp"
#include "kspmv/model/part_balls.hpp"
#include "traffic.hpp"

namespace kspmv {
namespace {

using model_detail::kIndex;

// One row as the per-warp figures read it: its index in the matrix, the
// offsets [begin, end) of its entries there (they decide which sectors and
// lines its indices and values fall in) and its column indices.
struct RowRef {
  std::int64_t id, begin, end;
  const ordinal_t* cols;  // cols[k - begin] for k in [begin, end)
  std::int64_t length() const { return end - begin; }
  std::int64_t col(std::int64_t k) const { return cols[k - begin]; }
};

// Rows fetched from a source, one after another.
struct FetchedRows {
  const SampledRows* f;
  RowRef operator[](std::size_t p) const {
    const std::int64_t b = f->begins[p];
    return {f->ids[p], b, b + (f->local[p + 1] - f->local[p]), f->cols.data() + f->local[p]};
  }
};

// x's 32-byte sectors that warps of 32 positions from p0 (to p1) touch,
// no reuse between warps assumed (evc-hyb §3.2's alpha, as x_reuse_alpha).
// A row's sorted columns give its sectors in order, so a sector it repeats
// is left out as it comes.
template <class Rows>
double x_sectors(const Rows& rows, std::size_t p0, std::size_t p1, int scalar_bytes, DistinctCounter& distinct) {
  // Sectors hold a power of two of values (32 / scalar_bytes): a shift,
  // not a 64-bit division an entry.
  int shift = 0;
  while ((2 << shift) * scalar_bytes <= 32) ++shift;
  double total = 0;
  std::vector<std::int64_t> s;
  for (std::size_t w = p0; w < p1; w += 32) {
    std::size_t entries = 0;
    for (std::size_t p = w; p < std::min(p1, w + 32); ++p) entries += static_cast<std::size_t>(rows[p].length());
    if (s.size() < entries) s.resize(entries);
    std::size_t m = 0;
    for (std::size_t p = w; p < std::min(p1, w + 32); ++p) {
      const RowRef r = rows[p];
      std::int64_t last = -1;
      for (std::int64_t k = r.begin; k < r.end; ++k) {
        const std::int64_t sector = r.col(k) >> shift;
        if (sector != last) s[m++] = sector;
        last = sector;
      }
    }
    total += double(distinct.count(s.data(), m));
  }
  return total;
}

// 32-byte sectors that warps of 32 positions touch in row_ptr (the row's
// two offsets), y, the column indices and the values. Each row touches a
// run of sectors in each array, so a warp's count is the size of the
// union of its rows' runs (sorted and merged: a warp of hub rows costs
// as little as a warp of short ones).
template <class Rows>
double sorted_row_sectors(const Rows& rows, std::size_t p0, std::size_t p1, int scalar_bytes) {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs[4];  // [first, last] sectors
  double total = 0;
  auto span = [](std::vector<std::pair<std::int64_t, std::int64_t>>& out, std::int64_t b, std::int64_t e, int bytes) {
    if (e > b) out.push_back({b * bytes / 32, (e * bytes - 1) / 32});
  };
  for (std::size_t w = p0; w < p1; w += 32) {
    for (auto& v : runs) v.clear();
    for (std::size_t p = w; p < std::min(p1, w + 32); ++p) {
      const RowRef r = rows[p];
      span(runs[0], r.id, r.id + 2, kIndex);
      span(runs[1], r.id, r.id + 1, scalar_bytes);
      span(runs[2], r.begin, r.end, kIndex);
      span(runs[3], r.begin, r.end, scalar_bytes);
    }
    for (auto& v : runs) {
      std::sort(v.begin(), v.end());
      std::int64_t next = std::numeric_limits<std::int64_t>::min();  // the first sector not yet counted
      for (const auto& [first, last] : v) {
        const std::int64_t from = std::max(first, next);
        if (last >= from) total += double(last - from + 1);
        next = std::max(next, last + 1);
      }
    }
  }
  return total;
}

// The 128-byte lines of column indices, values and x that a kernel's
// warp-wide loads touch, summed over its loads: rows taken in position
// order, a row's `tpr` lanes (tpr_of(row)) loading entries o, o + tpr, ...
// of it, a warp holding 32 / tpr consecutive rows of one tpr (tpr <= 32)
// or a 32-lane share of one row. A load's lanes fall in as many lines as
// there are distinct ones among them; an SM looks each up (line_ns).
// A warp of more than kLoadsCounted loads (a hub row: csr-scalar's lane
// walks it alone, csr-adaptive's lanes 256 entries a load) is counted at
// every stride-th load of each run of loads with the same lanes busy, a
// sample standing for the loads up to the next: the figure is a sum over
// loads and a hub's loads are alike, so it moved by under 0.01% on the
// 2-4M-row power-law and R-MAT graphs, where counting every load was most
// of the figures' host time.
constexpr std::int64_t kLoadsCounted = 256;
// Where the warp that warp_load_lines forms at position p (< p1) ends: up
// to 32 / tpr consecutive rows of one tpr, or the one row whose tpr passes
// 32 (its lanes then take 32-lane shares of it).
template <class Rows, class TprOf>
std::size_t warp_rows_end(const Rows& rows, std::size_t p, std::size_t p1, const TprOf& tpr_of) {
  const std::int64_t t = tpr_of(rows[p]);
  if (t > 32) return p + 1;
  std::size_t q = p + 1;
  while (q < p1 && q < p + static_cast<std::size_t>(32 / t) && tpr_of(rows[q]) == t) ++q;
  return q;
}
template <class Rows, class TprOf>
double warp_load_lines(const Rows& rows, std::size_t p0, std::size_t p1, const TprOf& tpr_of, int scalar_bytes,
                       DistinctCounter& distinct_of) {
  struct Lane {
    std::int64_t begin, end;  // entries the lane loads: begin, begin + tpr, ... < end
    const RowRef* row;
  };
  double total = 0;
  std::vector<Lane> lanes;
  std::vector<RowRef> held;
  std::array<std::int64_t, 32> c, v, xl;  // a warp's lanes' lines, one load
  // Lanes that have loaded all their entries leave the list, the rest in
  // row order (the counter's path for sorted runs), so that a warp of one
  // hub row and 31 short ones costs its samples, not 32 lanes a load.
  const auto loads = [](const Lane& l, std::int64_t t) { return l.end > l.begin ? (l.end - l.begin + t - 1) / t : 0; };
  auto warp = [&](std::int64_t t) {
    std::int64_t steps = 0;
    for (const Lane& l : lanes) steps = std::max(steps, loads(l, t));
    const std::int64_t stride = steps > kLoadsCounted ? (steps + kLoadsCounted - 1) / kLoadsCounted : 1;
    // Each run sampled from its own start, so a sample's lanes are those
    // of the loads it stands for.
    for (std::int64_t j0 = 0; j0 < steps;) {
      lanes.erase(std::remove_if(lanes.begin(), lanes.end(), [&](const Lane& l) { return loads(l, t) <= j0; }),
                  lanes.end());
      std::int64_t j1 = steps;
      for (const Lane& l : lanes) j1 = std::min(j1, loads(l, t));
      for (std::int64_t j = j0; j < j1; j += stride) {
        std::size_t m = 0;
        for (const Lane& l : lanes) {
          const std::int64_t k = l.begin + j * t;
          c[m] = k * kIndex / 128;
          v[m] = k * scalar_bytes / 128;
          xl[m] = l.row->col(k) * scalar_bytes / 128;
          ++m;
        }
        total += double(std::min(stride, j1 - j)) * double(distinct_of.count(c.data(), m) +
                                                           distinct_of.count(v.data(), m) + distinct_of.count(xl.data(), m));
      }
      j0 = j1;
    }
  };
  held.reserve(32);
  for (std::size_t p = p0; p < p1;) {
    const RowRef first = rows[p];
    const std::int64_t t = tpr_of(first);
    lanes.clear();
    held.clear();
    if (t <= 32) {
      const std::size_t q = warp_rows_end(rows, p, p1, tpr_of);
      for (std::size_t r = p; r < q; ++r) held.push_back(r == p ? first : rows[r]);
      for (const RowRef& r : held)
        for (std::int64_t o = 0; o < t; ++o) lanes.push_back({r.begin + o, r.end, &r});
      warp(t);
      p = q;
    } else {
      held.push_back(first);
      for (std::int64_t w = 0; w < t; w += 32) {
        lanes.clear();
        for (std::int64_t o = w; o < w + 32; ++o) lanes.push_back({first.begin + o, first.end, &held[0]});
        warp(t);
      }
      ++p;
    }
  }
  return total;
}

// A run of positions of an order read for the per-warp figures and what
// it stands for: its figures count `weight` times.
struct WarpPick {
  std::size_t first, last;
  double weight;
};

// The warps (32 positions of an order; warp w holds entries[w] entries)
// the per-warp figures read. Every one (a single run, weight 1) where the
// rows hold at most max_entries entries or max_entries is 0. Else a
// systematic sample with probability proportional to a warp's entries plus
// its rows: a warp of at least the sampling step always (weight 1), a
// lighter one standing for 1 / its probability (the Horvitz-Thompson
// weight). The step is set so that about max_entries entries are read,
// but lowered to give at least kMinPicks picks while that reads no more
// than 4x max_entries: where a few enormous warps hold most entries
// (R-MAT's longest rows, sorted to the end) a step from the budget alone
// would read them and one or two of the rest (figures 30-40% off on
// rmat:15-18 at small budgets, within 1% with the floor). On a stencil
// the sample is a stride through the rows.
std::vector<WarpPick> pick_warps(std::size_t n, const std::vector<double>& entries, std::int64_t max_entries) {
  const std::size_t warps = entries.size();
  // Expected entries read = sum over warps of min(1, size / step) * entries
  // <= sum(size * entries) / step. The three sums in one pass (each in
  // the warps' order: the same bits as three passes).
  constexpr double kMinPicks = 64;
  double total = 0, size_times_entries = 0, sizes = 0;
  for (double e : entries) {
    total += e;
    size_times_entries += (e + 32.0) * e;
    sizes += e + 32.0;
  }
  if (max_entries <= 0 || total <= double(max_entries)) return {{0, n, 1.0}};
  const double budget = double(max_entries);
  const double step = std::max(std::min(size_times_entries / budget, sizes / kMinPicks),
                               size_times_entries / (4.0 * budget));
  std::vector<WarpPick> picks;
  double next = step / 2, cum = 0;
  for (std::size_t w = 0; w < warps; ++w) {
    const double size = entries[w] + 32.0;
    cum += size;
    if (cum < next) continue;
    while (next <= cum) next += step;
    picks.push_back({w * 32, std::min(n, w * 32 + 32), size >= step ? 1.0 : step / size});
  }
  return picks;
}

// Entries a warp of 32 rows holds, the caller's order.
std::vector<double> caller_warp_entries(const std::vector<std::int64_t>& lengths) {
  std::vector<double> e((lengths.size() + 31) / 32, 0.0);
  for (std::size_t p = 0; p < lengths.size(); ++p) e[p / 32] += double(lengths[p]);
  return e;
}

// The same in the ascending-length order, from the histogram alone (rows
// of one length take consecutive ranks).
std::vector<double> ascending_warp_entries(const RowLengthStats& r) {
  std::vector<double> e(static_cast<std::size_t>((r.nrows + 31) / 32), 0.0);
  std::int64_t rank = 0;
  for (std::size_t len = 0; len < r.counts.size(); ++len) {
    for (std::int64_t left = r.counts[len]; left > 0;) {
      const std::int64_t take = std::min(left, 32 - rank % 32);
      e[static_cast<std::size_t>(rank / 32)] += double(take) * double(len);
      rank += take;
      left -= take;
    }
  }
  return e;
}

// The rows at `ranks` of the ascending-length order (rows of equal length
// in their own order, as rows_by_length sorts them). Most ranks: the whole
// sorted order. A few: one pass over the lengths finds the k-th row of
// each length asked for, instead of sorting millions of rows for a few
// thousand.
std::vector<ordinal_t> ascending_rows_at(const std::vector<std::int64_t>& lengths, const RowLengthStats& r,
                                         const std::int64_t* ranks, std::size_t count) {
  std::vector<ordinal_t> rows(count, -1);
  if (count >= lengths.size() / 8) {
    const std::vector<ordinal_t> order = rows_by_length(lengths, false);
    for (std::size_t q = 0; q < count; ++q) rows[q] = order[static_cast<std::size_t>(ranks[q])];
    return rows;
  }
  struct Ask {
    std::int64_t len, k;
    std::size_t slot;
  };
  std::vector<Ask> asks(count);
  for (std::size_t q = 0; q < count; ++q) {
    const std::int64_t len = model_detail::length_at_rank(r, ranks[q], false);
    const std::int64_t before = len ? r.cum_rows[static_cast<std::size_t>(len - 1)] : 0;
    asks[q] = {len, ranks[q] - before, q};
  }
  std::sort(asks.begin(), asks.end(), [](const Ask& a, const Ask& b) { return a.len != b.len ? a.len < b.len : a.k < b.k; });
  // next[len]: the first ask of that length not yet answered.
  std::vector<std::size_t> next(r.counts.size() + 1, asks.size());
  for (std::size_t q = asks.size(); q-- > 0;) next[static_cast<std::size_t>(asks[q].len)] = q;
  std::vector<std::int64_t> seen(r.counts.size(), 0);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const std::size_t len = static_cast<std::size_t>(lengths[i]);
    const std::int64_t k = seen[len]++;
    for (std::size_t& q = next[len]; q < asks.size() && asks[q].len == std::int64_t(len) && asks[q].k == k; ++q)
      rows[asks[q].slot] = static_cast<ordinal_t>(i);
  }
  return rows;
}

// Host threads kept for the per-warp figures between calls. Starting and
// joining fifteen threads each time auto ranks a matrix, each with a cold
// DistinctCounter (its tables' pages faulted in anew), cost more than the
// figures themselves on small samples. The workers wait on a condition
// variable between jobs; one job runs at a time (a second caller meanwhile
// runs its tasks on its own thread). Never destroyed: blocked workers are
// ended with the process.
class FigureWorkers {
 public:
  static FigureWorkers& instance() {
    static FigureWorkers* workers = new FigureWorkers;
    return *workers;
  }

  // Runs task(0) .. task(count - 1) on the calling thread and up to
  // `helpers` workers; rethrows the first task's exception after all end.
  void run(std::size_t count, unsigned helpers, const std::function<void(std::size_t)>& task) {
    std::unique_lock<std::mutex> one_job(job_lock_, std::try_to_lock);
    if (!one_job.owns_lock()) helpers = 0;
    if (helpers == 0) {
      for (std::size_t t = 0; t < count; ++t) task(t);
      return;
    }
    {
      std::lock_guard<std::mutex> hold(lock_);
      while (threads_.size() < helpers) threads_.emplace_back([this] { work(); });
      task_ = &task;
      count_ = count;
      next_ = 0;
      failure_ = nullptr;
      wanted_ = helpers;
      busy_ = helpers;
      ++job_;
    }
    wake_.notify_all();
    take_tasks();
    std::unique_lock<std::mutex> hold(lock_);
    done_.wait(hold, [this] { return busy_ == 0; });
    task_ = nullptr;
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  FigureWorkers() = default;

  void take_tasks() {
    try {
      for (std::size_t t; (t = next_.fetch_add(1)) < count_;) (*task_)(t);
    } catch (...) {
      std::lock_guard<std::mutex> hold(lock_);
      if (!failure_) failure_ = std::current_exception();
      next_ = count_;
    }
  }

  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> hold(lock_);
        // A job this worker has not served, and a place in it (a job asks
        // for `wanted_` helpers; the rest sleep on).
        wake_.wait(hold, [&] { return job_ != seen && wanted_ > 0; });
        seen = job_;
        --wanted_;
      }
      take_tasks();
      std::lock_guard<std::mutex> hold(lock_);
      if (--busy_ == 0) done_.notify_all();
    }
  }

  std::mutex job_lock_, lock_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  std::exception_ptr failure_;
  unsigned wanted_ = 0, busy_ = 0;
  std::uint64_t job_ = 0;
};

// Runs task(0) .. task(count - 1) on up to `threads` host threads. The
// picks' figures are independent; each lands in its own slot and the sums
// are taken afterwards in pick order, so the figures are the same bits
// whatever the number of threads.
template <class Task>
void for_each_task(std::size_t count, unsigned threads, const Task& task) {
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, count));
  const std::function<void(std::size_t)> each = [&task](std::size_t t) { task(t); };
  FigureWorkers::instance().run(count, threads > 1 ? threads - 1 : 0, each);
}

// The per-warp figures over the picked warps of each order, spread over
// the host's cores where they hold enough entries to pay for the threads.
// A task is one figure over a piece of one pick: a pick is one warp where
// the figures sample, but the whole order where they read every warp, and
// as one task a figure of a whole order ran on one thread (a small
// matrix's figures on 5 of 16 cores: docs/PERFORMANCE.md). So a pick is
// cut into pieces of about run_positions positions, each cut where a warp
// of that figure begins: the figures are sums over warps of whole numbers
// (sectors, lines, loads), so the pieces' sums are the pick's to the bit.
template <class Rows>
void warp_figures(PatternStats& s, const Rows& caller, const std::vector<WarpPick>& caller_picks, const Rows& ascending,
                  const std::vector<WarpPick>& ascending_picks, int scalar_bytes, std::int64_t entries,
                  std::size_t run_positions) {
  // csr-adaptive walks its rows stably sorted by ascending length, EVC-HYB
  // by ascending length too (ties by first column; the stable order stands
  // in for it): their x sectors per warp, and csr-adaptive's row_ptr,
  // column, value and y sectors (a warp's 32 rows no longer neighbours in
  // memory where lengths vary, so each row pays whole 32-byte sectors) and
  // its lanes (its ranges' threads per row, tpr_ranges).
  const int block = kCsrAdaptiveBlockThreads;
  const auto adaptive_tpr = [block](const RowRef& r) {
    return std::int64_t(std::min(block, tpr_for_length(r.length(), block)));
  };
  const auto scalar_tpr = [](const RowRef&) { return std::int64_t(1); };  // csr-scalar: a lane a row
  const std::size_t nc = caller_picks.size();
  const std::size_t run = std::max<std::size_t>(32, run_positions / 32 * 32);
  struct Task {
    std::size_t pick;  // caller's picks first, then the ascending order's
    int figure;        // x sectors; csr-scalar's lines or csr-adaptive's row sectors; csr-adaptive's lines
    std::size_t first, last;
    std::int64_t held;  // entries of rows [first, last)
  };
  std::vector<Task> tasks;
  for (std::size_t t = 0; t < nc + ascending_picks.size(); ++t) {
    const WarpPick& w = t < nc ? caller_picks[t] : ascending_picks[t - nc];
    const Rows& rows = t < nc ? caller : ascending;
    const int figures = t < nc ? 2 : 3;
    if (w.last - w.first <= run) {  // a sampled warp: a task a figure, nothing cut
      std::int64_t held = 0;
      for (std::size_t p = w.first; p < w.last; ++p) held += rows[p].length();
      for (int figure = 0; figure < figures; ++figure) tasks.push_back({t, figure, w.first, w.last, held});
      continue;
    }
    for (int figure = 0; figure < figures; ++figure) {
      for (std::size_t a = w.first; a < w.last;) {
        // Every figure's warps but csr-adaptive's lines' start 32
        // positions apart from the pick's first (csr-scalar's lines too:
        // 32 rows of one lane each); those follow warp_rows_end.
        std::size_t b = std::min(w.last, a + run);
        if (figure == 2)
          for (b = a; b < w.last && b - a < run;) b = warp_rows_end(rows, b, w.last, adaptive_tpr);
        std::int64_t held = 0;
        for (std::size_t p = a; p < b; ++p) held += rows[p].length();
        tasks.push_back({t, figure, a, b, held});
        a = b;
      }
    }
  }
  constexpr std::int64_t kEntriesPerThread = 8192;
  const unsigned threads = static_cast<unsigned>(std::clamp<std::int64_t>(
      std::min<std::int64_t>(std::thread::hardware_concurrency(), 16), 1, std::max<std::int64_t>(1, entries / kEntriesPerThread)));
  // The heaviest tasks first: a warp of hubs can hold most of the sample
  // (493,000 of a power-law graph's entries in one warp of the ascending
  // order), and its figures started last, or one after another on one
  // thread, would run alone after the rest.
  std::vector<std::pair<std::int64_t, std::size_t>> heaviest(tasks.size());
  for (std::size_t k = 0; k < tasks.size(); ++k) heaviest[k] = {-tasks[k].held, k};
  std::sort(heaviest.begin(), heaviest.end());
  std::vector<double> out(tasks.size(), 0.0);
  for_each_task(tasks.size(), threads, [&](std::size_t order) {
    const std::size_t k = heaviest[order].second;
    const Task& task = tasks[k];
    thread_local DistinctCounter distinct;
    if (task.pick < nc) {
      if (task.figure == 0)
        out[k] = x_sectors(caller, task.first, task.last, scalar_bytes, distinct);
      else
        out[k] = warp_load_lines(caller, task.first, task.last, scalar_tpr, scalar_bytes, distinct);
    } else {
      if (task.figure == 0)
        out[k] = x_sectors(ascending, task.first, task.last, scalar_bytes, distinct);
      else if (task.figure == 1)
        out[k] = sorted_row_sectors(ascending, task.first, task.last, scalar_bytes);
      else
        out[k] = warp_load_lines(ascending, task.first, task.last, adaptive_tpr, scalar_bytes, distinct);
    }
  });
  // Each pick's figures, its pieces summed in position order (csr-scalar's
  // third figure stays 0).
  std::vector<std::array<double, 3>> per_pick(nc + ascending_picks.size(), {0.0, 0.0, 0.0});
  for (std::size_t k = 0; k < tasks.size(); ++k)
    per_pick[tasks[k].pick][static_cast<std::size_t>(tasks[k].figure)] += out[k];
  double sectors = 0, sectors_asc = 0, row_sectors = 0, scalar_lines = 0, adaptive_lines = 0;
  for (std::size_t t = 0; t < nc; ++t) {
    sectors += caller_picks[t].weight * per_pick[t][0];
    scalar_lines += caller_picks[t].weight * per_pick[t][1];
  }
  for (std::size_t t = nc; t < per_pick.size(); ++t) {
    const double weight = ascending_picks[t - nc].weight;
    sectors_asc += weight * per_pick[t][0];
    row_sectors += weight * per_pick[t][1];
    adaptive_lines += weight * per_pick[t][2];
  }
  const double nnz = double(s.rows.nnz);
  s.alpha = nnz > 0 ? sectors * 32.0 / (double(scalar_bytes) * nnz) : 0.0;
  s.alpha_ascending = nnz > 0 ? sectors_asc * 32.0 / (double(scalar_bytes) * nnz) : 0.0;
  s.sorted_row_sector_bytes = row_sectors * 32.0;
  s.scalar_lines = scalar_lines;
  s.adaptive_lines = adaptive_lines;
}

// The positions the picks cover, one pick after another, and the picks
// re-based onto that list (from `at`).
void append_positions(std::vector<WarpPick>& picks, std::vector<std::int64_t>& positions) {
  for (WarpPick& w : picks) {
    const std::size_t at = positions.size();
    for (std::size_t p = w.first; p < w.last; ++p) positions.push_back(static_cast<std::int64_t>(p));
    w = {at, positions.size(), w.weight};
  }
}

// The entries a matrix's per-warp figures read, of a budget of
// max_entries: a sample's error goes as the spread of the warps' figures
// over the root of the warps read, and that spread follows the row
// lengths', so the entries needed for a given error go as the square of
// the lengths' coefficient of variation. The whole budget from a
// coefficient of 1 (power-law and R-MAT graphs: at 2^18 entries within
// 3.5% of reading every warp, at 2^16 up to 20% off on rmat:19-20), down
// to a quarter of it for regular rows (stencils, banded and block-diagonal
// matrices, rows of uniform and normal lengths: within 0.5% at 2^16),
// where reading less shortens auto's set-up most (docs/PERFORMANCE.md).
// 0 stays 0: every warp.
std::int64_t sample_budget(std::int64_t max_entries, const RowLengthStats& rows) {
  if (max_entries <= 0) return max_entries;
  const double cv = rows.coefficient_of_variation();
  const double share = std::clamp(cv * cv, 0.25, 1.0);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(share * double(max_entries)));
}

// EntryCounts::in_ball of a host matrix: the device's kernels
// (detail::count_entries) as loops, wave after wave, the same figure.
template <class Scalar>
std::int64_t count_in_balls(const HostCsr<Scalar>& a, std::int64_t window) {
  const std::int64_t n = a.nrows;
  const bool balls = a.nrows == a.ncols;
  std::vector<int> ball(balls ? static_cast<std::size_t>(n) : 0, -1), level(ball.size(), -1), rows(ball.size(), 0);
  if (balls) {
    for (std::int64_t i = 0; i < n; ++i)
      if (detail::wave_seed(i, window)) ball[i] = static_cast<int>(i), level[i] = 0;
    for (int wave = 1; wave <= detail::kBallWaves; ++wave)
      for (std::int64_t i = 0; i < n; ++i) {
        if (level[i] >= 0) continue;
        const std::int64_t j = detail::wave_parent(a.row_ptr.data(), a.col_idx.data(), level.data(), i, wave,
                                                     detail::kBallRowScan);
        if (j >= 0) ball[i] = ball[j], level[i] = wave;
      }
    for (std::int64_t i = 0; i < n; ++i)
      if (level[i] >= 0) ++rows[ball[i]];
  }
  std::int64_t in = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t label = detail::ball_label(ball.data(), level.data(), rows.data(), i, n, window, balls);
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      in += detail::ball_label(ball.data(), level.data(), rows.data(), a.col_idx[k], n, window, balls) == label ? 1 : 0;
  }
  return in;
}

}  // namespace

PatternStats pattern_stats(const PatternSource& src, int scalar_bytes, std::int64_t max_entries) {
  // 1,024 positions: 32 warps, tens of thousands of entries on rows of
  // tens; the per-warp figures of a small matrix read whole in as many
  // tasks as it holds 1,024 rows.
  return detail::pattern_stats_in_runs(src, scalar_bytes, max_entries, 1024);
}

PatternStats detail::pattern_stats_in_runs(const PatternSource& src, int scalar_bytes, std::int64_t max_entries,
                                           std::size_t run_positions) {
  const std::int64_t n = src.nrows;
  std::int64_t counted = 0;
  for (const std::int64_t c : src.length_counts) counted += c > 0 ? c : 0;
  if (n < 0 || counted != n || static_cast<std::int64_t>(src.warp_entries.size()) != (n + 31) / 32 || !src.fetch_rows)
    throw InvalidArgumentError("pattern_stats: a source of " + std::to_string(n) + " rows needs a histogram of as many (got " +
                               std::to_string(counted) + "), " + std::to_string((n + 31) / 32) + " warp entries (got " +
                               std::to_string(src.warp_entries.size()) + ") and fetch_rows");
  PatternStats s;
  std::optional<detail::ProfilingRegion> part(std::in_place, "kspmv::stats::picks");
  s.rows = row_length_stats_from_counts(src.length_counts, src.ncols);
  s.caller_warps = src.caller_warps;
  const std::int64_t budget = sample_budget(max_entries, s.rows);
  auto caller_picks = pick_warps(static_cast<std::size_t>(n), src.warp_entries, budget / 2);
  auto ascending_picks = pick_warps(static_cast<std::size_t>(n), ascending_warp_entries(s.rows), budget / 2);
  std::vector<std::int64_t> positions;
  append_positions(caller_picks, positions);
  const std::size_t first_ascending = positions.size();
  append_positions(ascending_picks, positions);
  SampledRows fetched;
  part.emplace("kspmv::stats::fetch");
  src.fetch_rows(positions, first_ascending, fetched);
  const auto& f = fetched;
  bool ok = f.ids.size() == positions.size() && f.begins.size() == positions.size() &&
            f.local.size() == positions.size() + 1 && f.local.front() == 0 &&
            static_cast<std::int64_t>(f.cols.size()) == f.local.back();
  for (std::size_t q = 0; ok && q < f.ids.size(); ++q) ok = f.local[q + 1] >= f.local[q] && f.ids[q] >= 0 && f.ids[q] < n;
  if (!ok)
    throw InvalidArgumentError("pattern_stats: fetch_rows returned " + std::to_string(f.ids.size()) + " rows, " +
                               std::to_string(f.local.size()) + " offsets and " + std::to_string(f.cols.size()) +
                               " columns for " + std::to_string(positions.size()) + " positions");
  const FetchedRows rows{&fetched};
  part.emplace("kspmv::stats::per_warp");
  warp_figures(s, rows, caller_picks, rows, ascending_picks, scalar_bytes, f.local.back(), run_positions);
  part.emplace("kspmv::stats::await_counts");
  const EntryCounts counts = src.await_counts ? src.await_counts() : src.counts;
  s.diagonals = counts.diagonals;
  s.ehyb_window = std::max<std::int64_t>(1, src.ehyb_window);
  s.ehyb_in_part = s.rows.nnz ? double(counts.in_ball) / double(s.rows.nnz) : 1.0;
  s.pkt_in_packet = s.rows.nnz ? double(counts.in_packet) / double(s.rows.nnz) : 1.0;
  s.pkt_longest_in_packet = counts.longest_in_packet;
  return s;
}

// A host matrix as a source: the same figures a device source sends, the
// rows fetched from the matrix itself.
template <class Scalar>
PatternStats pattern_stats(const HostCsr<Scalar>& a, int scalar_bytes, std::int64_t ehyb_window,
                           std::int64_t max_entries) {
  const std::vector<std::int64_t> lengths = row_lengths(a);
  PatternSource src;
  src.nrows = a.nrows;
  src.ncols = a.ncols;
  const RowLengthStats r = row_length_stats(lengths, a.ncols);
  src.length_counts = r.counts;
  src.caller_warps = warp_iterations(lengths);
  src.warp_entries = caller_warp_entries(lengths);
  std::vector<char> seen(static_cast<std::size_t>(a.nrows + a.ncols) + 1, 0);
  const std::int64_t packet_rows = pkt_default_rows(scalar_bytes);
  src.ehyb_window = std::max<std::int64_t>(1, ehyb_window);
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    std::int64_t row_in_packet = 0;
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t d = std::int64_t(a.col_idx[k]) - i + a.nrows;
      if (!seen[static_cast<std::size_t>(d)]) {
        seen[static_cast<std::size_t>(d)] = 1;
        ++src.counts.diagonals;
      }
      if (i / packet_rows == a.col_idx[k] / packet_rows) ++row_in_packet;
    }
    src.counts.in_packet += row_in_packet;
    src.counts.longest_in_packet = std::max(src.counts.longest_in_packet, row_in_packet);
  }
  src.counts.in_ball = count_in_balls(a, src.ehyb_window);
  src.fetch_rows = [&](const std::vector<std::int64_t>& positions, std::size_t first_ascending, SampledRows& out) {
    const std::vector<ordinal_t> ascending =
        ascending_rows_at(lengths, r, positions.data() + first_ascending, positions.size() - first_ascending);
    out.ids.resize(positions.size());
    for (std::size_t q = 0; q < positions.size(); ++q)
      out.ids[q] = q < first_ascending ? static_cast<ordinal_t>(positions[q]) : ascending[q - first_ascending];
    out.begins.resize(positions.size());
    out.local.assign(positions.size() + 1, 0);
    for (std::size_t q = 0; q < positions.size(); ++q) {
      const std::size_t row = static_cast<std::size_t>(out.ids[q]);
      out.begins[q] = a.row_ptr[row];
      out.local[q + 1] = out.local[q] + (a.row_ptr[row + 1] - a.row_ptr[row]);
    }
    out.cols.resize(static_cast<std::size_t>(out.local.back()));
    for (std::size_t q = 0; q < positions.size(); ++q)
      std::copy(a.col_idx.begin() + out.begins[q], a.col_idx.begin() + out.begins[q] + (out.local[q + 1] - out.local[q]),
                out.cols.begin() + out.local[q]);
  };
  return pattern_stats(src, scalar_bytes, max_entries);
}

std::int64_t model_ehyb_window(std::int64_t nrows, const ModelHardware& hw) {
  const std::int64_t p = std::max(1, hw.processors) * std::int64_t(std::max(1, ConvertOptions{}.ehyb_min_parts_per_sm));
  return std::max<std::int64_t>(32, (nrows + p - 1) / p);
}

template PatternStats pattern_stats(const HostCsr<float>&, int, std::int64_t, std::int64_t);
template PatternStats pattern_stats(const HostCsr<double>&, int, std::int64_t, std::int64_t);

}  // namespace kspmv
