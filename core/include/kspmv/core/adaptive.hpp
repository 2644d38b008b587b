// Adaptive threads per row (evc-hyb §1, the "adaptive TPR" method): rows
// sorted by length are cut into ranges, each range gets the smallest power
// of two TPR with max length <= 8 * TPR (so a group of lanes does about 8
// products each), capped at the block size; each range gets its own blocks.
// Shared by csr-adaptive and the vector-CSR part of evc-hyb.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kspmv/core/error.hpp"

namespace kspmv {

struct TprRange {
  int begin = 0, end = 0;  // positions in the sorted order
  int tpr = 1;             // lanes per row
  int first_block = 0;     // the range's first block (team) of the launch
  int blocks = 0;
};

// The smallest power of two t <= max_tpr with length <= 8 t.
inline int tpr_for_length(std::int64_t length, int max_tpr) {
  int t = 1;
  while (t < max_tpr && length > 8 * static_cast<std::int64_t>(t)) t *= 2;
  return t;
}

// `sorted_len` ascending; positions [offset, offset + size) of the launch.
// `block_threads` lanes per block: a block holds block_threads / tpr rows
// (one row per block when tpr == block_threads). `min_tpr` raises the TPR
// of every range (vector CSR uses at least a warp per row).
inline std::vector<TprRange> tpr_ranges(const std::vector<std::int64_t>& sorted_len, int block_threads,
                                        int min_tpr = 1, int first_block = 0) {
  std::vector<TprRange> out;
  const int n = static_cast<int>(sorted_len.size());
  int i = 0;
  int block = first_block;
  auto tpr_of = [&](int row) {
    return std::min(block_threads, std::max(min_tpr, tpr_for_length(sorted_len[row], block_threads)));
  };
  while (i < n) {
    const int t = tpr_of(i);
    int j = i + 1;
    while (j < n && tpr_of(j) == t) ++j;
    TprRange r;
    r.begin = i;
    r.end = j;
    r.tpr = t;
    r.first_block = block;
    const std::int64_t rows_per_block = block_threads / t;
    const std::int64_t blocks = (j - i + rows_per_block - 1) / rows_per_block;
    if (block + blocks > 0x7fffffff) throw OverflowError("adaptive TPR: more than 2^31 blocks");
    r.blocks = static_cast<int>(blocks);
    block += r.blocks;
    out.push_back(r);
    i = j;
  }
  return out;
}

}  // namespace kspmv
