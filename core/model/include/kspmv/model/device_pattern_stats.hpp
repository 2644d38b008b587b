// pattern_stats() of a CSR on a device, without bringing the matrix to the
// host: the row lengths (4 bytes a row) and the figures counted over every
// entry come from kernels on the matrix's execution space, and the
// per-warp figures read the few rows pick_warps samples, gathered there
// and copied back. What auto and mode "T" rank formats by.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/model/model.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace>
PatternStats pattern_stats(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, int scalar_bytes,
                           const ModelHardware& hw, std::int64_t max_entries) {
  using M = typename ExecSpace::memory_space;
  using policy = Kokkos::RangePolicy<ExecSpace>;
  const std::int64_t n = a.nrows, ncols = a.ncols;
  const auto row_ptr = a.row_ptr;
  const auto col = a.col_idx;
  PatternSource src;
  src.nrows = n;
  src.ncols = ncols;
  {
    const auto len = detail::row_lengths(space, row_ptr, "kspmv::stats::lengths");
    auto h = Kokkos::create_mirror_view(len);
    Kokkos::deep_copy(space, h, len);
    space.fence();
    src.lengths.assign(h.data(), h.data() + n);
  }
  const std::int64_t window = model_ehyb_window(n, hw);
  const std::int64_t packet = pkt_default_rows(scalar_bytes);
  src.ehyb_window = window;
  Kokkos::parallel_reduce(
      "kspmv::stats::in_window", policy(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum) {
        for (offset_t k = row_ptr(i); k < row_ptr(i + 1); ++k) sum += (i / window == col(k) / window) ? 1 : 0;
      },
      src.in_window);
  Kokkos::parallel_reduce(
      "kspmv::stats::in_packet", policy(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum) {
        for (offset_t k = row_ptr(i); k < row_ptr(i + 1); ++k) sum += (i / packet == col(k) / packet) ? 1 : 0;
      },
      src.in_packet);
  Kokkos::parallel_reduce(
      "kspmv::stats::longest_in_packet", policy(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& most) {
        std::int64_t in = 0;
        for (offset_t k = row_ptr(i); k < row_ptr(i + 1); ++k) in += (i / packet == col(k) / packet) ? 1 : 0;
        if (in > most) most = in;
      },
      Kokkos::Max<std::int64_t>(src.longest_in_packet));
  {
    // Distinct j - i: a flag a diagonal (every writer stores the same 1).
    Kokkos::View<int*, M> seen(Kokkos::view_alloc(space, std::string("kspmv::stats::diagonals")), n + ncols + 1);
    Kokkos::parallel_for(
        "kspmv::stats::diagonals", policy(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
          for (offset_t k = row_ptr(i); k < row_ptr(i + 1); ++k) seen(std::int64_t(col(k)) - i + n) = 1;
        });
    Kokkos::parallel_reduce(
        "kspmv::stats::count_diagonals", policy(space, 0, n + ncols + 1),
        KOKKOS_LAMBDA(const std::int64_t d, std::int64_t& sum) { sum += seen(d); }, src.diagonals);
  }
  if (n == 0) src.longest_in_packet = 0;
  src.fetch_rows = [&](const std::vector<ordinal_t>& ids, std::vector<offset_t>& begins, std::vector<ordinal_t>& cols) {
    detail::fetch_rows(space, a, src.lengths, ids, begins, cols);
  };
  return pattern_stats(src, scalar_bytes, max_entries);
}

}  // namespace kspmv
