#include "kspmv/core/partition.hpp"

#include <algorithm>
#include <chrono>

#include "kspmv/config.hpp"
#if KSPMV_HAVE_METIS
#include <metis.h>
#endif

namespace kspmv {

bool have_metis() { return KSPMV_HAVE_METIS != 0; }

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
  p.part_start.push_back(0);
  for (int l = 0; l < nlabels; ++l)
    for (ordinal_t s = count[l]; s < count[l + 1]; s += max_rows) p.part_start.push_back(std::min(count[l + 1], s + max_rows));
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
// A + A^T, each from a vertex on the previous part's frontier (the first
// from a minimum-degree vertex), so parts are compact balls rather than the
// thin slabs RCM levels give on 3D meshes.
template <class Scalar>
RowPartition bfs_grow(const HostCsr<Scalar>& a, int nparts) {
  std::vector<std::int64_t> xadj, adj;
  symmetric_graph(a, xadj, adj);
  const ordinal_t n = a.nrows;
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
  return p;
}

// METIS k-way on the graph of A + A^T: a part label per row.
template <class Scalar>
std::vector<int> metis_labels(const HostCsr<Scalar>& a, int nparts, const ProgressFn& progress) {
  std::vector<int> label(static_cast<std::size_t>(a.nrows), 0);
#if KSPMV_HAVE_METIS
  if (progress) progress("partitioning (METIS)", 0.0);
  std::vector<idx_t> xadj, adj;
  symmetric_graph(a, xadj, adj);
  idx_t nv = a.nrows, ncon = 1, np = nparts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // reproducible partitions
  std::vector<idx_t> part(static_cast<std::size_t>(a.nrows));
  const int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adj.empty() ? nullptr : adj.data(), nullptr, nullptr,
                                     nullptr, &np, nullptr, nullptr, options, &objval, part.data());
  if (rc != METIS_OK) throw Error(ErrorCode::InvalidArgument, "METIS_PartGraphKway failed with code " + std::to_string(rc));
  for (ordinal_t i = 0; i < a.nrows; ++i) label[i] = static_cast<int>(part[i]);
  if (progress) progress("partitioning (METIS)", 1.0);
#else
  (void)a;
  (void)nparts;
  (void)progress;
#endif
  return label;
}

}  // namespace

template <class Scalar>
RowPartition partition_rows(const HostCsr<Scalar>& a, ordinal_t max_rows, Partitioner how,
                            const ProgressFn& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.nrows != a.ncols) throw InvalidArgumentError("partition_rows: the matrix must be square");
  if (max_rows < 1) throw InvalidArgumentError("partition_rows: max_rows must be >= 1");
  if (how == Partitioner::Metis && !have_metis())
    throw UnsupportedError("METIS partitioning was asked for, but kspmv was built without METIS "
                           "(install libmetis-dev and reconfigure, or use Partitioner::Contiguous)");
  const ordinal_t n = a.nrows;
  // METIS gets ~10% more parts than strictly needed, so its load imbalance
  // rarely forces a split.
  const int nparts = static_cast<int>((static_cast<std::int64_t>(n) * 10 / 9 + max_rows - 1) / max_rows);
  std::vector<int> label(static_cast<std::size_t>(n), 0);
  RowPartition p;
  if ((how == Partitioner::Metis || how == Partitioner::Auto) && have_metis() && nparts > 1) {
    p = from_labels(metis_labels(a, nparts, progress), nparts, max_rows);
    p.method = "metis";
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
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

template <class Scalar>
RowPartition partition_rows_into(const HostCsr<Scalar>& a, int nparts, Partitioner how, const ProgressFn& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (a.nrows != a.ncols) throw InvalidArgumentError("partition_rows_into: the matrix must be square");
  if (nparts < 1) throw InvalidArgumentError("partition_rows_into: nparts must be >= 1");
  if (how == Partitioner::Metis && !have_metis())
    throw UnsupportedError("METIS partitioning was asked for, but kspmv was built without METIS "
                           "(install libmetis-dev and reconfigure, or use Partitioner::Rcm / Contiguous)");
  const ordinal_t n = a.nrows;
  RowPartition p;
  const bool metis = (how == Partitioner::Metis || how == Partitioner::Auto) && have_metis() && nparts > 1 && n > nparts;
  if (metis) {
    p = from_labels(metis_labels(a, nparts, progress), nparts, n);
    p.method = "metis";
  } else {
    if (how == Partitioner::Bfs || how == Partitioner::Auto) {
      if (progress) progress("partitioning (BFS growing)", 0.0);
      p = bfs_grow(a, nparts);
      p.method = "bfs";
      p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return p;
    }
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
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

template <class Scalar>
std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<Scalar>& a) {
  if (a.nrows != a.ncols) throw InvalidArgumentError("reverse_cuthill_mckee: the matrix must be square");
  return rcm_order(a);
}

template std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<float>&);
template std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<double>&);
template RowPartition partition_rows_into(const HostCsr<float>&, int, Partitioner, const ProgressFn&);
template RowPartition partition_rows_into(const HostCsr<double>&, int, Partitioner, const ProgressFn&);
template RowPartition partition_rows(const HostCsr<float>&, ordinal_t, Partitioner, const ProgressFn&);
template RowPartition partition_rows(const HostCsr<double>&, ordinal_t, Partitioner, const ProgressFn&);

}  // namespace kspmv
