// Row partitioning for formats that cache a window of x per team (PKT,
// EHYB): METIS k-way on the graph of A + A^T when kspmv was built with
// METIS, parts grown breadth-first, or contiguous blocks of rows. The
// choice is explicit and reported, never silent.
//
// METIS runs under a time budget (ConvertOptions::partition_budget_seconds):
// on a graph with no locality (random columns) it can take minutes for a
// partition no window format gains from. On POSIX systems it runs in a
// forked child process, killed at the deadline (METIS cannot be stopped
// in-process; the child shares the graph copy-on-write and makes no Kokkos,
// CUDA or MPI calls). Partitioner::Auto grows BFS parts in this process
// meanwhile and keeps them when METIS runs out of time; Partitioner::Metis
// past its budget is a LimitError. A budget of 0 runs METIS in-process
// with no limit (for programs that must not fork).
#pragma once

#include <string>
#include <vector>

#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv {

bool have_metis();

struct RowPartition {
  std::string method;              // "metis", "bfs", "cells", "rcm-contiguous" or "contiguous"
  // Why this method and what the other gave, where Auto tried two
  // (in-part shares: entries whose column lies in the row's part).
  std::string note;
  std::vector<ordinal_t> new_to_old;  // rows renumbered part by part
  std::vector<ordinal_t> part_start;  // parts' first rows (internal numbering), size parts + 1
  double seconds = 0;
};

// An InvalidArgumentError unless budget_seconds (partition_budget_seconds)
// is >= 0 and finite; `who` starts the message. partition_rows and
// partition_rows_into check theirs; a format that partitions later checks
// before its other work.
void check_partition_budget(double budget_seconds, const char* who = "partition");

// Splits the rows of a square matrix into parts of at most max_rows rows.
// Partitioner::Auto means METIS when available (BFS parts where it passes
// the budget), else contiguous; Bfs grows parts of at most max_rows rows;
// Partitioner::Metis without METIS is an UnsupportedError.
template <class Scalar>
RowPartition partition_rows(const HostCsr<Scalar>& a, ordinal_t max_rows, Partitioner how, double budget_seconds,
                            const ProgressFn& progress = {});

// The parts partition_rows asks a partitioner for, for parts of at most
// max_rows rows: about 10% more than n / max_rows, so a partitioner's
// imbalance rarely forces a cut.
int parts_for_max_rows(std::int64_t n, ordinal_t max_rows);

// Parts of at most max_rows rows from parts holding part_rows[l] rows
// (numbered part by part): each part cut into consecutive pieces of
// max_rows, empty parts dropped. Returns the pieces' first rows, size
// pieces + 1: RowPartition::part_start.
std::vector<ordinal_t> cut_parts(const std::vector<std::int64_t>& part_rows, ordinal_t max_rows);

// Splits the rows of a square matrix into exactly `nparts` parts (some may
// be empty): METIS k-way (Partitioner::Metis, or Auto when built with
// METIS and METIS finishes within the budget; parts within METIS' ~3%
// imbalance), else equal parts grown breadth-first over the graph (Bfs,
// or Auto without METIS or past the budget), equal
// contiguous blocks after reverse Cuthill-McKee (Rcm), or of the caller's
// order (Contiguous). `method` says which.
template <class Scalar>
RowPartition partition_rows_into(const HostCsr<Scalar>& a, int nparts, Partitioner how, double budget_seconds,
                                 const ProgressFn& progress = {});

// Cells of rows (a weighted graph: cell c holds cell_rows[c] rows, and
// weight[k] entries join it to cell adj[k], k in [xadj[c], xadj[c + 1]))
// joined into `nparts` parts of about equal rows, none above max_rows
// (unless one cell alone is): parts grown breadth-first over the cells,
// each from a cell the previous part reached, then two passes that move
// a cell on a part's border to the neighbouring part it has more entries
// with, where both parts stay within 3% of their share of the rows. The
// device partitioner's last step (device_partition.hpp): its cells are
// few (tens of rows each), so this runs on the host: 2-4 ms on a 2-core
// development host for a FEM mesh of 0.4-0.9M rows (6,000-14,000 cells).
// Returns each cell's part.
std::vector<int> group_cells(const std::vector<std::int64_t>& xadj, const std::vector<int>& adj,
                             const std::vector<int>& weight, const std::vector<std::int64_t>& cell_rows, int nparts,
                             std::int64_t max_rows);

// Reverse Cuthill-McKee order (new_to_old) of the graph of A + A^T, each
// connected component from a minimum-degree vertex: a bandwidth-reducing,
// cache-friendly numbering for a square matrix.
template <class Scalar>
std::vector<ordinal_t> reverse_cuthill_mckee(const HostCsr<Scalar>& a);

}  // namespace kspmv
