#include "kspmv/core/partition.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "kspmv/config.hpp"
#include "kspmv/core/device_partition.hpp"
#if KSPMV_HAVE_METIS
#include <metis.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#define KSPMV_PARTITION_IN_CHILD 1
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#else
#define KSPMV_PARTITION_IN_CHILD 0
#endif

namespace kspmv {

bool have_metis() { return KSPMV_HAVE_METIS != 0; }

int parts_for_max_rows(std::int64_t n, ordinal_t max_rows) {
  return static_cast<int>((n * 10 / 9 + max_rows - 1) / max_rows);
}

std::vector<ordinal_t> cut_parts(const std::vector<std::int64_t>& part_rows, ordinal_t max_rows) {
  std::vector<ordinal_t> start(1, 0);
  ordinal_t first = 0;
  for (const std::int64_t rows : part_rows) {
    const ordinal_t end = first + static_cast<ordinal_t>(rows);
    for (ordinal_t s = first; s < end; s += max_rows) start.push_back(std::min(end, s + max_rows));
    first = end;
  }
  return start;
}

namespace {

// Parts from a label per row: rows grouped by label (stable), labels whose
// group exceeds max_rows cut into consecutive pieces.
RowPartition from_labels(const std::vector<int>& label, int nlabels, ordinal_t max_rows) {
  RowPartition p;
  const ordinal_t n = static_cast<ordinal_t>(label.size());
  std::vector<ordinal_t> count(static_cast<std::size_t>(nlabels) + 1, 0);
  for (int l : label) ++count[l + 1];
  for (int l = 0; l < nlabels; ++l) count[l + 1] += count[l];
  p.new_to_old.resize(static_cast<std::size_t>(n));
  {
    std::vector<ordinal_t> next(count.begin(), count.end() - 1);
    for (ordinal_t i = 0; i < n; ++i) p.new_to_old[next[label[i]]++] = i;
  }
  std::vector<std::int64_t> rows(static_cast<std::size_t>(nlabels));
  for (int l = 0; l < nlabels; ++l) rows[l] = count[l + 1] - count[l];
  p.part_start = cut_parts(rows, max_rows);
  return p;
}

// The graph of A + A^T: no self loops, each edge once per endpoint.
template <class Scalar, class Idx>
void symmetric_graph(const HostCsr<Scalar>& a, std::vector<Idx>& xadj, std::vector<Idx>& adj) {
  const ordinal_t n = a.nrows;
  const auto t = transpose(a);
  xadj.assign(static_cast<std::size_t>(n) + 1, 0);
  adj.clear();
  adj.reserve(static_cast<std::size_t>(a.nnz()) * 2);
  for (ordinal_t i = 0; i < n; ++i) {
    offset_t ka = a.row_ptr[i], kt = t.row_ptr[i];
    const offset_t ea = a.row_ptr[i + 1], et = t.row_ptr[i + 1];
    while (ka < ea || kt < et) {  // merge two sorted column lists
      ordinal_t j;
      if (kt >= et || (ka < ea && a.col_idx[ka] < t.col_idx[kt])) j = a.col_idx[ka++];
      else if (ka >= ea || t.col_idx[kt] < a.col_idx[ka]) j = t.col_idx[kt++];
      else { j = a.col_idx[ka++]; ++kt; }
      if (j != i) adj.push_back(static_cast<Idx>(j));
    }
    // METIS's idx_t is 32-bit in Debian's build: an offset past it would
    // wrap and hand METIS a corrupt graph.
    xadj[i + 1] = checked_cast<Idx>(adj.size(), "adjacency entries of the graph of A + A^T (the partitioner's index)");
  }
}

// Reverse Cuthill-McKee on the graph of A + A^T: each connected component
// from a minimum-degree vertex, neighbours by increasing degree.
template <class Scalar>
std::vector<ordinal_t> rcm_order(const HostCsr<Scalar>& a) {
  std::vector<std::int64_t> xadj, adj;
  symmetric_graph(a, xadj, adj);
  const ordinal_t n = a.nrows;
  auto deg = [&](ordinal_t v) { return xadj[v + 1] - xadj[v]; };
  std::vector<ordinal_t> by_degree(static_cast<std::size_t>(n));
  for (ordinal_t i = 0; i < n; ++i) by_degree[i] = i;
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](ordinal_t u, ordinal_t v) { return deg(u) < deg(v); });
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  std::vector<ordinal_t> order, nb;
  order.reserve(static_cast<std::size_t>(n));
  for (ordinal_t s : by_degree) {
    if (seen[s]) continue;
    seen[s] = 1;
    std::size_t head = order.size();
    order.push_back(s);
    while (head < order.size()) {
      const ordinal_t v = order[head++];
      nb.clear();
      for (auto k = xadj[v]; k < xadj[v + 1]; ++k)
        if (!seen[adj[k]]) {
          seen[adj[k]] = 1;
          nb.push_back(static_cast<ordinal_t>(adj[k]));
        }
      std::stable_sort(nb.begin(), nb.end(), [&](ordinal_t u, ordinal_t w) { return deg(u) < deg(w); });
      order.insert(order.end(), nb.begin(), nb.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// Greedy graph growing: parts of `target` rows grown breadth-first over
// A + A^T (the graph xadj/adj), each from a vertex on the previous part's
// frontier (the first from a minimum-degree vertex), so parts are compact
// balls rather than the thin slabs RCM levels give on 3D meshes.
template <class Idx>
RowPartition bfs_grow(const std::vector<Idx>& xadj, const std::vector<Idx>& adj, int nparts) {
  const ordinal_t n = static_cast<ordinal_t>(xadj.size()) - 1;
  std::vector<char> taken(static_cast<std::size_t>(n), 0), queued(static_cast<std::size_t>(n), 0);
  std::vector<ordinal_t> by_degree(static_cast<std::size_t>(n));
  for (ordinal_t i = 0; i < n; ++i) by_degree[i] = i;
  std::stable_sort(by_degree.begin(), by_degree.end(),
                   [&](ordinal_t u, ordinal_t v) { return xadj[u + 1] - xadj[u] < xadj[v + 1] - xadj[v]; });
  RowPartition p;
  p.new_to_old.reserve(static_cast<std::size_t>(n));
  p.part_start.push_back(0);
  std::size_t next_seed = 0;
  std::vector<ordinal_t> frontier;  // queued, not yet taken: seeds of the next parts
  for (int q = 0; q < nparts; ++q) {
    const ordinal_t target = static_cast<ordinal_t>(static_cast<std::int64_t>(n) * (q + 1) / nparts) -
                             static_cast<ordinal_t>(static_cast<std::int64_t>(n) * q / nparts);
    // One seed: the first untaken vertex the last part reached.
    std::vector<ordinal_t> queue;
    for (ordinal_t v : frontier)
      if (!taken[v]) {
        queue.push_back(v);
        queued[v] = 1;
        break;
      }
    std::size_t head = 0;
    ordinal_t count = 0;
    while (count < target) {
      if (head == queue.size()) {  // a new component (or the first part)
        while (next_seed < by_degree.size() && taken[by_degree[next_seed]]) ++next_seed;
        const ordinal_t s = by_degree[next_seed];
        queued[s] = 1;
        queue.push_back(s);
      }
      const ordinal_t v = queue[head++];
      if (taken[v]) continue;
      taken[v] = 1;
      p.new_to_old.push_back(v);
      ++count;
      for (auto k = xadj[v]; k < xadj[v + 1]; ++k) {
        const ordinal_t w = static_cast<ordinal_t>(adj[k]);
        if (!queued[w] && !taken[w]) {
          queued[w] = 1;
          queue.push_back(w);
        }
      }
    }
    frontier.assign(queue.begin() + static_cast<std::ptrdiff_t>(head), queue.end());
    for (ordinal_t v : frontier) queued[v] = 0;
    p.part_start.push_back(static_cast<ordinal_t>(p.new_to_old.size()));
  }
  p.method = "bfs";
  return p;
}

// BFS parts of A's graph (A + A^T), built here.
template <class Scalar>
RowPartition bfs_parts(const HostCsr<Scalar>& a, int nparts) {
  std::vector<std::int64_t> xadj, adj;
  symmetric_graph(a, xadj, adj);
  return bfs_grow(xadj, adj, nparts);
}

// Cell parts (device_partition.hpp) of a host CSR, computed on the host's
// execution space with views of its own arrays.
template <class Scalar>
RowPartition cell_parts(const HostCsr<Scalar>& a, int nparts, ordinal_t max_rows) {
  using H = Kokkos::DefaultHostExecutionSpace;
  const detail::unmanaged_host<const offset_t> row_ptr(a.row_ptr.data(), a.row_ptr.size());
  const detail::unmanaged_host<const ordinal_t> col_idx(a.col_idx.data(), a.col_idx.size());
  const auto cells = cell_partition(H(), row_ptr, col_idx, a.nrows, nparts, max_rows);
  std::vector<int> label(static_cast<std::size_t>(a.nrows));
  Kokkos::deep_copy(detail::unmanaged_host<int>(label.data(), label.size()), cells.part_of);
  RowPartition p = from_labels(label, nparts, max_rows);
  char note[160];
  std::snprintf(note, sizeof note, "%d cells, %d levels%s; in-part share %.1f%%", cells.cells, cells.levels,
                cells.no_locality ? ", no locality (cells joined in order)" : "", 100.0 * cells.in_part);
  p.note = note;
  p.method = "cells";
  return p;
}

// Share of A's entries whose column lies in its row's part: what a window
// format can read from its cached x.
template <class Scalar>
double in_part_share(const HostCsr<Scalar>& a, const RowPartition& p) {
  if (a.nnz() == 0) return 1.0;
  std::vector<int> part_of(static_cast<std::size_t>(a.nrows), 0);
  for (std::size_t q = 0; q + 1 < p.part_start.size(); ++q)
    for (ordinal_t r = p.part_start[q]; r < p.part_start[q + 1]; ++r) part_of[p.new_to_old[r]] = static_cast<int>(q);
  std::int64_t in = 0;
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) in += part_of[a.col_idx[k]] == part_of[i];
  return static_cast<double>(in) / static_cast<double>(a.nnz());
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.2f s" : "%.0f s", s);
  return buf;
}

#if KSPMV_HAVE_METIS
// METIS k-way labels of the graph, in this process.
int metis_kway(const std::vector<idx_t>& xadj, const std::vector<idx_t>& adj, int nparts, std::vector<idx_t>& part) {
  idx_t nv = static_cast<idx_t>(xadj.size()) - 1, ncon = 1, np = nparts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // reproducible partitions
  part.assign(static_cast<std::size_t>(nv), 0);
  return METIS_PartGraphKway(&nv, &ncon, const_cast<idx_t*>(xadj.data()),
                             adj.empty() ? nullptr : const_cast<idx_t*>(adj.data()), nullptr, nullptr, nullptr, &np,
                             nullptr, nullptr, options, &objval, part.data());
}

Error metis_failed(int rc) {
  return Error(ErrorCode::InvalidArgument, "METIS_PartGraphKway failed with code " + std::to_string(rc));
}

// What a budgeted METIS run gave: its labels, or why there are none.
struct MetisOutcome {
  bool finished = false;
  std::vector<int> label;
  std::string why_not;  // when !finished
};

MetisOutcome metis_in_process(const std::vector<idx_t>& xadj, const std::vector<idx_t>& adj, int nparts) {
  std::vector<idx_t> part;
  const int rc = metis_kway(xadj, adj, nparts, part);
  if (rc != METIS_OK) throw metis_failed(rc);
  MetisOutcome out;
  out.finished = true;
  out.label.assign(part.begin(), part.end());
  return out;
}

#if KSPMV_PARTITION_IN_CHILD
bool write_all(int fd, const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t w = ::write(fd, p, bytes);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    bytes -= static_cast<std::size_t>(w);
  }
  return true;
}

// METIS under a deadline. METIS cannot be interrupted in-process, so it
// runs in a forked child (copy-on-write: the graph is not copied), which
// sends its labels back through a pipe and leaves with _exit (no atexit
// handlers, no Kokkos or CUDA calls in the child). `meanwhile` runs here
// while the child works (the fallback partition). At the deadline the
// child is killed. Every half second of waiting reports progress.
MetisOutcome metis_in_child(const std::vector<idx_t>& xadj, const std::vector<idx_t>& adj, int nparts, double budget,
                            const ProgressFn& progress, const std::function<void()>& meanwhile) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = xadj.size() - 1;
  int fds[2];
  if (::pipe(fds) != 0) throw Error(ErrorCode::Io, std::string("partition: pipe() for METIS failed: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(ErrorCode::OutOfMemory, std::string("partition: fork() for METIS failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    int status = 1;
    try {
      std::vector<idx_t> part;
      const std::int32_t rc = metis_kway(xadj, adj, nparts, part);
      std::vector<std::int32_t> label(part.begin(), part.end());
      status = write_all(fds[1], &rc, sizeof rc) &&
                       (rc != METIS_OK || write_all(fds[1], label.data(), label.size() * sizeof(std::int32_t)))
                   ? 0
                   : 1;
    } catch (...) {
      status = 2;
    }
    ::_exit(status);
  }
  ::close(fds[1]);
  if (meanwhile) meanwhile();
  // The child's answer: METIS' return code, then a label per row.
  std::vector<std::int32_t> buf(n + 1);
  char* dst = reinterpret_cast<char*>(buf.data());
  const std::size_t want = buf.size() * sizeof(std::int32_t);
  std::size_t got = 0;
  bool eof = false;
  const std::string stage = "partitioning (METIS, stops at its " + seconds_text(budget) + " budget)";
  while (got < want && !eof) {
    const double left = budget - seconds_since(t0);
    pollfd pfd{fds[0], POLLIN, 0};
    const int wait_ms = left <= 0 ? 0 : static_cast<int>(std::min(500.0, std::ceil(left * 1000)));
    const int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r > 0) {
      const ssize_t k = ::read(fds[0], dst + got, want - got);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) eof = true;
      else got += static_cast<std::size_t>(k);
      continue;  // drain what is there before looking at the clock
    }
    if (left <= 0) break;
    if (progress) progress(stage.c_str(), std::min(1.0, seconds_since(t0) / budget));
  }
  const bool complete = got == want;
  if (!complete) ::kill(pid, SIGKILL);
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  MetisOutcome out;
  if (complete) {
    if (buf[0] != METIS_OK)
      throw metis_failed(buf[0]);
    out.finished = true;
    out.label.assign(buf.begin() + 1, buf.end());
  } else if (eof) {
    out.why_not = "the METIS process ended without an answer (out of memory?)";
  } else {
    out.why_not = "METIS passed the " + seconds_text(budget) + " partition budget (ConvertOptions::partition_budget_seconds)";
  }
  if (progress) progress(stage.c_str(), 1.0);
  return out;
}
#endif
#endif

// METIS k-way parts (Partitioner::Metis, or Auto) under the caller's
// budget. Auto grows BFS parts beside METIS (this process, while METIS
// runs in its own) and falls back to them when METIS does not finish in
// time; the note gives both in-part shares so the trade is visible.
// Explicit Metis past its budget is a LimitError. `max_rows` cuts METIS's
// parts (from_labels); BFS parts are equal by construction.
template <class Scalar>
RowPartition metis_within_budget(const HostCsr<Scalar>& a, int nparts, ordinal_t max_rows, Partitioner how,
                                 double budget, const ProgressFn& progress) {
#if KSPMV_HAVE_METIS
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<idx_t> xadj, adj;
  symmetric_graph(a, xadj, adj);
  RowPartition bfs;
  double bfs_seconds = 0, bfs_in_part = 0;
  auto grow_bfs = [&] {  // with its in-part share, while METIS runs
    const auto tb = std::chrono::steady_clock::now();
    if (progress) progress("partitioning (BFS growing)", 0.0);
    bfs = bfs_grow(xadj, adj, nparts);
    bfs_seconds = seconds_since(tb);
    bfs_in_part = in_part_share(a, bfs);
  };
  MetisOutcome metis;
  const bool in_child = KSPMV_PARTITION_IN_CHILD && budget > 0;
  if (!in_child) {
    if (progress) progress("partitioning (METIS)", 0.0);
    metis = metis_in_process(xadj, adj, nparts);
    if (progress) progress("partitioning (METIS)", 1.0);
  } else {
#if KSPMV_PARTITION_IN_CHILD
    std::function<void()> meanwhile;
    if (how == Partitioner::Auto) meanwhile = grow_bfs;
    metis = metis_in_child(xadj, adj, nparts, budget, progress, meanwhile);
#endif
  }
  if (!metis.finished && how == Partitioner::Metis)
    throw LimitError("partition: " + metis.why_not + " on a graph of " + std::to_string(a.nrows) + " rows and " +
                     std::to_string(adj.size()) + " edges into " + std::to_string(nparts) +
                     " parts; nothing was built. Raise the budget (0: no limit) or choose Partitioner::Bfs, "
                     "which grows parts breadth-first in about linear time");
  RowPartition p;
  if (metis.finished) {
    p = from_labels(metis.label, nparts, max_rows);
    p.method = "metis";
    if (!bfs.new_to_old.empty()) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "metis %.1f%% of entries in part; bfs (grown beside it in %s) %.1f%%",
                    100 * in_part_share(a, p), seconds_text(bfs_seconds).c_str(), 100 * bfs_in_part);
      p.note = buf;
    }
  } else {
    if (bfs.new_to_old.empty()) grow_bfs();
    p = std::move(bfs);
    char buf[96];
    std::snprintf(buf, sizeof buf, "; bfs instead: %.1f%% of entries in part", 100 * bfs_in_part);
    p.note = metis.why_not + buf;
  }
  p.seconds = seconds_since(t0);
  return p;
#else
  (void)a, (void)nparts, (void)max_rows, (void)how, (void)budget, (void)progress;
  throw UnsupportedError("partition: kspmv was built without METIS");
#endif
}

}  // namespace

void check_partition_budget(double budget, const char* who) {
  if (!(budget >= 0) || !std::isfinite(budget))
    throw InvalidArgumentError(std::string(who) + ": partition_budget_seconds = " + std::to_string(budget) +
                               " must be >= 0 and finite (0: no limit)");
}

template <class Scalar>
RowPartition partition_rows(const HostCsr<Scalar>& a, ordinal_t max_rows, Partitioner how, double budget_seconds,
                            const ProgressFn& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.nrows != a.ncols) throw InvalidArgumentError("partition_rows: the matrix must be square");
  if (max_rows < 1) throw InvalidArgumentError("partition_rows: max_rows must be >= 1");
  check_partition_budget(budget_seconds);
  if (how == Partitioner::Metis && !have_metis())
    throw UnsupportedError("METIS partitioning was asked for, but kspmv was built without METIS "
                           "(install libmetis-dev and reconfigure, or use Partitioner::Contiguous)");
  const ordinal_t n = a.nrows;
  // METIS gets ~10% more parts than strictly needed, so its load imbalance
  // rarely forces a split.
  const int nparts = parts_for_max_rows(n, max_rows);
  std::vector<int> label(static_cast<std::size_t>(n), 0);
  RowPartition p;
  if ((how == Partitioner::Metis || how == Partitioner::Auto) && have_metis() && nparts > 1) {
    return metis_within_budget(a, nparts, max_rows, how, budget_seconds, progress);
  } else if (how == Partitioner::Bfs && nparts > 1) {
    p = bfs_parts(a, nparts);
  } else if (how == Partitioner::Cells && nparts > 1) {
    p = cell_parts(a, nparts, max_rows);
  } else if (how == Partitioner::Rcm) {
    const auto order = rcm_order(a);
    p = from_labels(label, 1, max_rows);
    p.new_to_old = order;
    p.method = "rcm-contiguous";
  } else {
    // Contiguous blocks: the caller's order is kept.
    p = from_labels(label, 1, max_rows);
    p.method = "contiguous";
  }
  p.seconds = seconds_since(t0);
  return p;
}

template <class Scalar>
RowPartition partition_rows_into(const HostCsr<Scalar>& a, int nparts, Partitioner how, double budget_seconds,
                                 const ProgressFn& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.nrows != a.ncols) throw InvalidArgumentError("partition_rows_into: the matrix must be square");
  if (nparts < 1) throw InvalidArgumentError("partition_rows_into: nparts must be >= 1");
  check_partition_budget(budget_seconds);
  if (how == Partitioner::Metis && !have_metis())
    throw UnsupportedError("METIS partitioning was asked for, but kspmv was built without METIS "
                           "(install libmetis-dev and reconfigure, or use Partitioner::Rcm / Contiguous)");
  const ordinal_t n = a.nrows;
  const bool metis = (how == Partitioner::Metis || how == Partitioner::Auto) && have_metis() && nparts > 1 && n > nparts;
  if (metis) return metis_within_budget(a, nparts, n, how, budget_seconds, progress);
  RowPartition p;
  if (how == Partitioner::Cells) {
    if (progress) progress("partitioning (cells)", 0.0);
    p = cell_parts(a, nparts, n);
  } else if (how == Partitioner::Bfs || how == Partitioner::Auto) {
    if (progress) progress("partitioning (BFS growing)", 0.0);
    p = bfs_parts(a, nparts);
  } else {
    // Equal contiguous blocks, after RCM unless plain contiguous was asked.
    const bool use_rcm = how == Partitioner::Rcm;
    if (use_rcm && progress) progress("ordering (RCM)", 0.0);
    if (use_rcm) {
      p.new_to_old = rcm_order(a);
    } else {
      p.new_to_old.resize(static_cast<std::size_t>(n));
      for (ordinal_t i = 0; i < n; ++i) p.new_to_old[i] = i;
    }
    for (int q = 0; q <= nparts; ++q)
      p.part_start.push_back(static_cast<ordinal_t>(static_cast<std::int64_t>(n) * q / nparts));
    p.method = use_rcm ? "rcm-contiguous" : "contiguous";
  }
  p.seconds = seconds_since(t0);
  return p;
}

std::vector<int> group_cells(const std::vector<std::int64_t>& xadj, const std::vector<int>& adj,
                             const std::vector<int>& weight, const std::vector<std::int64_t>& cell_rows, int nparts,
                             std::int64_t max_rows) {
  const int ncells = static_cast<int>(cell_rows.size());
  if (nparts < 1) throw InvalidArgumentError("group_cells: nparts must be >= 1");
  if (xadj.size() != cell_rows.size() + 1 || adj.size() != weight.size() ||
      (ncells > 0 && xadj.back() != static_cast<std::int64_t>(adj.size())))
    throw InvalidArgumentError("group_cells: the cell graph's arrays disagree in size");
  std::int64_t n = 0;
  for (std::int64_t r : cell_rows) n += r;
  std::vector<int> part(static_cast<std::size_t>(ncells), -1);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(nparts), 0);
  // Growing: part q takes cells breadth-first until it holds its share of
  // the rows, stopping before a cell that would leave it further from
  // that share than it is, or pass max_rows.
  std::vector<char> queued(static_cast<std::size_t>(ncells), 0);
  std::vector<int> queue, frontier;
  int next_seed = 0;
  std::int64_t done = 0;
  for (int q = 0; q < nparts; ++q) {
    const std::int64_t target = n * (q + 1) / nparts - done;
    queue.clear();
    for (int c : frontier)
      if (part[c] < 0) {
        queue.push_back(c);
        queued[c] = 1;
        break;
      }
    std::size_t head = 0;
    std::int64_t count = 0;
    while (count < target) {
      if (head == queue.size()) {  // a new component (or the first part)
        while (next_seed < ncells && part[next_seed] >= 0) ++next_seed;
        if (next_seed == ncells) break;
        queue.push_back(next_seed);
        queued[next_seed] = 1;
      }
      const int c = queue[head++];
      if (part[c] >= 0) continue;
      const std::int64_t after = count + cell_rows[c];
      if (count > 0 && (after - target > target - count || after > max_rows)) {
        queued[c] = 0;  // for a later part
        break;
      }
      part[c] = q;
      count = after;
      for (std::int64_t k = xadj[c]; k < xadj[c + 1]; ++k)
        if (!queued[adj[k]] && part[adj[k]] < 0) {
          queued[adj[k]] = 1;
          queue.push_back(adj[k]);
        }
    }
    rows[q] = count;
    done += count;
    frontier.assign(queue.begin() + static_cast<std::ptrdiff_t>(head), queue.end());
    for (int c : frontier) queued[c] = 0;
  }
  // Cells no part took (the last parts stopped short): each to the part
  // with the fewest rows among its neighbours', else overall.
  for (int c = 0; c < ncells; ++c) {
    if (part[c] >= 0) continue;
    int best = -1;
    for (std::int64_t k = xadj[c]; k < xadj[c + 1]; ++k) {
      const int q = part[adj[k]];
      if (q >= 0 && rows[q] + cell_rows[c] <= max_rows && (best < 0 || rows[q] < rows[best])) best = q;
    }
    if (best < 0) best = static_cast<int>(std::min_element(rows.begin(), rows.end()) - rows.begin());
    part[c] = best;
    rows[best] += cell_rows[c];
  }
  // Refinement: a border cell moves to the neighbouring part it shares
  // the most entries with, where that beats what it shares with its own
  // and both parts stay within 3% of their share (and max_rows). Two
  // passes: on the FEM meshes a third and fourth raised the in-part share
  // by 0.4-0.9 points and left EHYB's SpMV as it was (0.98-1.00x), while
  // they took 1.3-3.8 ms of its 6-21 ms build on an H200's host
  // (docs/PERFORMANCE.md, "Where the build's time goes").
  const double share = double(n) / nparts;
  const std::int64_t hi = std::min<std::int64_t>(max_rows, static_cast<std::int64_t>(share * 1.03));
  const std::int64_t lo = static_cast<std::int64_t>(share * 0.97);
  std::vector<std::int64_t> with(static_cast<std::size_t>(nparts), 0);
  std::vector<int> touched;
  constexpr int kPasses = 2;
  for (int pass = 0; pass < kPasses; ++pass) {
    int moved = 0;
    for (int c = 0; c < ncells; ++c) {
      const int p = part[c];
      touched.clear();
      for (std::int64_t k = xadj[c]; k < xadj[c + 1]; ++k) {
        const int q = part[adj[k]];
        if (with[q] == 0) touched.push_back(q);
        with[q] += weight[k];
      }
      const std::int64_t own = with[p];
      int to = -1;
      std::int64_t gain = 0;
      for (int q : touched)
        if (q != p && with[q] - own > gain && rows[q] + cell_rows[c] <= hi && rows[p] - cell_rows[c] >= lo) {
          gain = with[q] - own;
          to = q;
        }
      for (int q : touched) with[q] = 0;
      with[p] = 0;
      if (to >= 0) {
        part[c] = to;
        rows[p] -= cell_rows[c];
        rows[to] += cell_rows[c];
        ++moved;
      }
    }
    if (moved == 0) break;
  }
  return part;
}

template <class Scalar>
std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<Scalar>& a) {
  if (a.nrows != a.ncols) throw InvalidArgumentError("reverse_cuthill_mckee: the matrix must be square");
  return rcm_order(a);
}

template std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<float>&);
template std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<double>&);
template RowPartition partition_rows_into(const HostCsr<float>&, int, Partitioner, double, const ProgressFn&);
template RowPartition partition_rows_into(const HostCsr<double>&, int, Partitioner, double, const ProgressFn&);
template RowPartition partition_rows(const HostCsr<float>&, ordinal_t, Partitioner, double, const ProgressFn&);
template RowPartition partition_rows(const HostCsr<double>&, ordinal_t, Partitioner, double, const ProgressFn&);

}  // namespace kspmv
