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
  if (how != Partitioner::Contiguous && have_metis() && nparts > 1) {
#if KSPMV_HAVE_METIS
    if (progress) progress("partitioning (METIS)", 0.0);
    // The graph of A + A^T: no self loops, each edge once per endpoint.
    const auto t = transpose(a);
    std::vector<idx_t> xadj(static_cast<std::size_t>(n) + 1, 0), adj;
    adj.reserve(static_cast<std::size_t>(a.nnz()) * 2);
    for (ordinal_t i = 0; i < n; ++i) {
      offset_t ka = a.row_ptr[i], kt = t.row_ptr[i];
      const offset_t ea = a.row_ptr[i + 1], et = t.row_ptr[i + 1];
      while (ka < ea || kt < et) {  // merge two sorted column lists
        ordinal_t j;
        if (kt >= et || (ka < ea && a.col_idx[ka] < t.col_idx[kt])) j = a.col_idx[ka++];
        else if (ka >= ea || t.col_idx[kt] < a.col_idx[ka]) j = t.col_idx[kt++];
        else { j = a.col_idx[ka++]; ++kt; }
        if (j != i) adj.push_back(j);
      }
      xadj[i + 1] = static_cast<idx_t>(adj.size());
    }
    idx_t nv = n, ncon = 1, np = nparts, objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;  // reproducible partitions
    std::vector<idx_t> part(static_cast<std::size_t>(n));
    const int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adj.empty() ? nullptr : adj.data(), nullptr, nullptr,
                                       nullptr, &np, nullptr, nullptr, options, &objval, part.data());
    if (rc != METIS_OK) throw Error(ErrorCode::InvalidArgument, "METIS_PartGraphKway failed with code " + std::to_string(rc));
    for (ordinal_t i = 0; i < n; ++i) label[i] = static_cast<int>(part[i]);
    p = from_labels(label, nparts, max_rows);
    p.method = "metis";
    if (progress) progress("partitioning (METIS)", 1.0);
#endif
  } else {
    // Contiguous blocks: the caller's order is kept.
    p = from_labels(label, 1, max_rows);
    p.method = "contiguous";
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

template RowPartition partition_rows(const HostCsr<float>&, ordinal_t, Partitioner, const ProgressFn&);
template RowPartition partition_rows(const HostCsr<double>&, ordinal_t, Partitioner, const ProgressFn&);

}  // namespace kspmv
