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

namespace detail {

template <class T>
using unmanaged_host = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The rows `ids` of `a`: each one's offset in a's entries and its column
// indices, packed one row after another (lengths: a's row lengths).
template <class Scalar, class ExecSpace>
void fetch_rows(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, const std::vector<std::int64_t>& lengths,
                const std::vector<ordinal_t>& ids, std::vector<offset_t>& begins, std::vector<ordinal_t>& cols) {
  using M = typename ExecSpace::memory_space;
  const auto row_ptr = a.row_ptr;
  const auto col = a.col_idx;
  const std::int64_t rows = static_cast<std::int64_t>(ids.size());
  std::vector<std::int64_t> local(ids.size() + 1, 0);
  for (std::size_t q = 0; q < ids.size(); ++q) local[q + 1] = local[q] + lengths[static_cast<std::size_t>(ids[q])];
  const std::int64_t entries = local.back();
  auto alloc = [&](const char* label) { return Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)); };
  Kokkos::View<ordinal_t*, M> ids_d(alloc("kspmv::stats::ids"), rows);
  Kokkos::View<std::int64_t*, M> local_d(alloc("kspmv::stats::local"), rows + 1);
  Kokkos::View<offset_t*, M> begins_d(alloc("kspmv::stats::begins"), rows);
  Kokkos::View<ordinal_t*, M> cols_d(alloc("kspmv::stats::cols"), entries);
  Kokkos::deep_copy(space, ids_d, unmanaged_host<const ordinal_t>(ids.data(), ids.size()));
  Kokkos::deep_copy(space, local_d, unmanaged_host<const std::int64_t>(local.data(), local.size()));
  Kokkos::parallel_for(
      "kspmv::stats::fetch_rows", Kokkos::RangePolicy<ExecSpace>(space, 0, rows), KOKKOS_LAMBDA(const std::int64_t q) {
        const offset_t b = row_ptr(ids_d(q));
        begins_d(q) = b;
        for (std::int64_t j = local_d(q); j < local_d(q + 1); ++j) cols_d(j) = col(b + (j - local_d(q)));
      });
  begins.resize(ids.size());
  cols.resize(static_cast<std::size_t>(entries));
  Kokkos::deep_copy(space, unmanaged_host<offset_t>(begins.data(), begins.size()), begins_d);
  Kokkos::deep_copy(space, unmanaged_host<ordinal_t>(cols.data(), cols.size()), cols_d);
  space.fence();
}

}  // namespace detail

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
