// Row partitioning for formats that cache a window of x per team (PKT,
// later EHYB): METIS k-way on the graph of A + A^T when kspmv was built
// with METIS, or contiguous blocks of rows. The choice is explicit and
// reported, never silent.
#pragma once

#include <string>
#include <vector>

#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv {

bool have_metis();

struct RowPartition {
  std::string method;              // "metis" or "contiguous"
  std::vector<ordinal_t> new_to_old;  // rows renumbered part by part
  std::vector<ordinal_t> part_start;  // parts' first rows (internal numbering), size parts + 1
  double seconds = 0;
};

// Splits the rows of a square matrix into parts of at most max_rows rows.
// Partitioner::Auto means METIS when available, else contiguous;
// Partitioner::Metis without METIS is an UnsupportedError.
template <class Scalar>
RowPartition partition_rows(const HostCsr<Scalar>& a, ordinal_t max_rows, Partitioner how,
                            const ProgressFn& progress = {});

// Splits the rows of a square matrix into exactly `nparts` parts (some may
// be empty): METIS k-way (Partitioner::Metis, or Auto when built with
// METIS; parts within METIS' ~3% imbalance), else equal parts grown
// breadth-first over the graph (Bfs, or Auto without METIS), equal
// contiguous blocks after reverse Cuthill-McKee (Rcm), or of the caller's
// order (Contiguous). `method` says which.
template <class Scalar>
RowPartition partition_rows_into(const HostCsr<Scalar>& a, int nparts, Partitioner how,
                                 const ProgressFn& progress = {});

// Reverse Cuthill-McKee order (new_to_old) of the graph of A + A^T, each
// connected component from a minimum-degree vertex: a bandwidth-reducing,
// cache-friendly numbering for a square matrix.
template <class Scalar>
std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<Scalar>& a);

}  // namespace kspmv
