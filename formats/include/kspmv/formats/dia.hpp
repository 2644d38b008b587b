// DIA (Bell & Garland §3.1, §4.1): the occupied diagonals' offsets and a
// column-major, padded `data` array (data[d * pitch + row] = A(row,
// row + offsets[d]), zero where the diagonal leaves the matrix). No column
// indices are stored or read: on stencil matrices it moves the fewest bytes.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>
#include <tuple>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/core/block_util.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/config.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/dia_cuda.hpp"
#include "kspmv/backends/cuda/tile_refresh_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct DiaDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "dia";
  // Up to this many offsets are kept in team scratch (32 KB); beyond, the
  // kernel reads them from device memory.
  static constexpr int scratch_diagonals = 8192;

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  int ndiag = 0;
  int pitch = 0;  // rows rounded up to 32
  Kokkos::View<int*, memory_space> offsets;
  Kokkos::View<Scalar*, memory_space> data;
  // Which diagonals each row has entries on, a bit a diagonal (bit d of
  // word d / 64 of the row's mask_words): where a row's entries land, so a
  // refresh walks rows (slot_walk) without a map of 4 bytes an entry.
  int mask_words = 0;
  Kokkos::View<std::uint64_t*, memory_space> row_diagonals;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return offsets.span() * sizeof(int) + data.span() * sizeof(Scalar) + row_diagonals.span() * sizeof(std::uint64_t);
  }
};

// On the device: each entry marks its diagonal j - i (shifted by nrows - 1
// into a flag array of nrows + ncols), a scan numbers the occupied ones in
// ascending offset, and each entry lands at its diagonal's column of the
// padded data.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
DiaDevice<Scalar, ExecSpace> to_dia(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using D = DiaDevice<Scalar, ExecSpace>;
  ExecSpace space;
  D d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  d.kernel = opt.kernel;
  const std::int64_t shift = std::int64_t(a.nrows) - 1, span = std::int64_t(a.nrows) + a.ncols;
  detail::ScratchSet<ExecSpace> temps(space);
  detail::FormatArrays<ExecSpace> arrays(space);
  const auto used = temps.template take<int>("kspmv::dia::used", span);
  Kokkos::deep_copy(space, used, 0);
  const auto rp = a.row_ptr;
  const auto col = detail::read_only(a.col_idx);
  Kokkos::parallel_for(
      "kspmv::dia::mark", Kokkos::RangePolicy<ExecSpace>(space, 0, a.nrows), KOKKOS_LAMBDA(const int i) {
        // A plain read first: on a stencil every row hits the same few
        // flags, and one atomic per entry on them serialised the pass.
        for (std::int64_t k = rp(i); k < rp(i + 1); ++k)
          if (used(col(k) - i + shift) == 0) Kokkos::atomic_exchange(&used(col(k) - i + shift), 1);
      });
  // Each occupied diagonal's number, in ascending offset.
  const auto slot = temps.template take<int>("kspmv::dia::slot", span);
  std::int64_t ndiag = 0;
  kspmv::detail::scan(
      "kspmv::dia::number", Kokkos::RangePolicy<ExecSpace>(space, 0, span),
      KOKKOS_LAMBDA(const std::int64_t u, std::int64_t& sum, const bool final) {
        if (final) slot(u) = static_cast<int>(sum);
        sum += used(u);
      },
      ndiag, &temps);
  const std::int64_t pitch = detail::aligned_pitch(a.nrows);
  const long double slots = static_cast<long double>(pitch) * ndiag;
  if (slots > opt.max_fill * std::max<std::int64_t>(a.nnz(), 1))
    throw FormatCannotHoldError("dia: " + std::to_string(ndiag) + " occupied diagonals x " + std::to_string(pitch) +
                                " padded rows = " + std::to_string((long long)slots) + " stored values for " +
                                std::to_string(a.nnz()) + " nonzeros, fill " +
                                std::to_string(double(slots / std::max<std::int64_t>(a.nnz(), 1))) + " > max_fill " +
                                std::to_string(opt.max_fill) + " (use ell, hyb or csr)");
  if (slots > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("dia: " + std::to_string((long long)slots) + " stored values exceed its 32-bit index");
  detail::check_allocation<ExecSpace>(static_cast<std::int64_t>(slots) * static_cast<std::int64_t>(sizeof(Scalar)),
                                      "dia: " + std::to_string(ndiag) + " padded diagonals", opt.memory_budget_bytes);
  d.ndiag = static_cast<int>(ndiag);
  d.pitch = static_cast<int>(pitch);
  d.offsets = arrays.template take<int>("kspmv::dia::offsets", ndiag);
  const auto offsets = d.offsets;
  Kokkos::parallel_for(
      "kspmv::dia::offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, span), KOKKOS_LAMBDA(const std::int64_t u) {
        if (used(u)) offsets(slot(u)) = static_cast<int>(u - shift);
      });
  d.data = arrays.template take_filled<Scalar>("kspmv::dia::data", static_cast<std::int64_t>(slots), Scalar(0));
  d.mask_words = static_cast<int>((ndiag + 63) / 64);
  d.row_diagonals =
      arrays.template take_filled<std::uint64_t>("kspmv::dia::row_diagonals", std::int64_t(a.nrows) * d.mask_words, 0);
  const auto data = d.data;
  const auto mask = d.row_diagonals;
  const int words = d.mask_words;
  const auto val = detail::read_only(a.values);
  Kokkos::parallel_for(
      "kspmv::dia::fill", Kokkos::RangePolicy<ExecSpace>(space, 0, a.nrows), KOKKOS_LAMBDA(const int i) {
        // Columns ascend in a row, so its diagonals do: a word at a time.
        std::uint64_t bits = 0;
        int word = 0;
        for (std::int64_t k = rp(i); k < rp(i + 1); ++k) {
          const int s = slot(col(k) - i + shift);
          data(std::int64_t(s) * pitch + i) = val(k);
          if (s / 64 != word) {
            if (bits) mask(std::int64_t(i) * words + word) |= bits;
            bits = 0;
            word = s / 64;
          }
          bits |= std::uint64_t(1) << (s % 64);
        }
        if (bits) mask(std::int64_t(i) * words + word) |= bits;
      });
  d.storage = arrays.kept();
  space.fence();
  d.conversion_seconds = timer.seconds();
  return d;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
DiaDevice<Scalar, ExecSpace> to_dia(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_dia(upload_csr<Scalar, ExecSpace>(a), opt);
}

namespace detail {
// Portable kernel: a team per block of rows, a thread per row; the team
// reads the offsets into scratch once.
template <class Scalar, class ExecSpace, class XView, class YView>
void dia_portable(const ExecSpace& space, Scalar alpha, const DiaDevice<Scalar, ExecSpace>& A, const XView& x,
                  Scalar beta, const YView& y) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using scratch = Kokkos::View<int*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int team = default_team_size<ExecSpace>();
  const int rpt = is_host_space<ExecSpace>() ? 1024 : team;
  const int nrows = A.nrows, ncols = A.ncols, ndiag = A.ndiag, pitch = A.pitch;
  const auto offsets = A.offsets;
  const auto data = A.data;
  const int league = (nrows + rpt - 1) / rpt;
  const int cached = ndiag <= DiaDevice<Scalar, ExecSpace>::scratch_diagonals ? ndiag : 0;
  Kokkos::parallel_for(
      "kspmv::dia", policy(space, league, team).set_scratch_size(0, Kokkos::PerTeam(scratch::shmem_size(cached))),
      KOKKOS_LAMBDA(const member& t) {
        scratch offs(t.team_scratch(0), cached);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, cached), [&](const int d) { offs(d) = offsets(d); });
        t.team_barrier();
        const int first = t.league_rank() * rpt;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int r) {
          const int row = first + r;
          if (row >= nrows) return;
          Scalar sum = 0;
          for (int d = 0; d < ndiag; ++d) {
            const int col = row + (cached ? offs(d) : offsets(d));
            if (col >= 0 && col < ncols) sum += data(d * pitch + row) * x(col);
          }
          combine_y(y, row, alpha, sum, beta);
        });
      });
}
}  // namespace detail

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const DiaDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "dia", A.nrows, A.ncols, alpha, x, beta, y)) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto && detail::contiguous(x, y))
      return cuda_tuned::dia_spmv(space.cuda_stream(), A.nrows, A.ncols, A.ndiag, A.pitch, A.offsets.data(), A.data.data(),
                            alpha, x.data(), beta, y.data());
  }
#endif
  detail::dia_portable(space, alpha, A, x, beta, y);
}

// Y = alpha * A * X + beta * Y for k columns (kspmv/core/block_util.hpp):
// a thread a row, each diagonal's entry read once for up to kBlockColumns
// columns (on CUDA the tuned kernel: streamed loads of the diagonals, X
// and Y at their strides).
template <class Scalar, class ExecSpace, class XView, class YView>
void spmv_block(const ExecSpace& space, Scalar alpha, const DiaDevice<Scalar, ExecSpace>& A, const XView& X,
                Scalar beta, const YView& Y) {
  if (detail::block_prologue(space, A.nrows, alpha, beta, Y)) return;
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (A.kernel == KernelPath::Auto) {
      detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
        const auto b = cuda_tuned::column_block<Scalar>(X, Y, j0, cols);
        cuda_tuned::dia_spmv_block(space.cuda_stream(), A.nrows, A.ncols, A.ndiag, A.pitch, A.offsets.data(),
                                   A.data.data(), alpha, b, beta);
      });
      return;
    }
  }
#endif
  const int nrows = A.nrows, ncols = A.ncols, ndiag = A.ndiag, pitch = A.pitch;
  const auto offsets = A.offsets;
  const auto data = A.data;
  detail::for_column_groups(X.extent(1), [&](const int j0, const int cols) {
    Kokkos::parallel_for(
        "kspmv::dia::block", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows), KOKKOS_LAMBDA(const int row) {
          Scalar sum[kBlockColumns] = {};
          for (int d = 0; d < ndiag; ++d) {
            const int col = row + offsets(d);
            if (col < 0 || col >= ncols) continue;
            const Scalar v = data(static_cast<std::int64_t>(d) * pitch + row);
            for (int j = 0; j < kBlockColumns; ++j)
              if (j < cols) sum[j] += v * X(col, j0 + j);
          }
          detail::combine_y_block(Y, row, j0, cols, alpha, sum, beta);
        });
  });
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(DiaDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.data);
}
// Its slot walk (row_segments.hpp, walk_slots): row r's entries, in
// column order, on the diagonals its mask names, in ascending order.
template <class Scalar, class ExecSpace>
struct DiaSlotWalk {
  Kokkos::View<const offset_t*, typename ExecSpace::memory_space> rp;
  Kokkos::View<const std::uint64_t*, typename ExecSpace::memory_space> mask;
  int words = 0, pitch = 0;
  std::int64_t positions = 0, longest = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t begin(const std::int64_t r) const { return rp(r); }
  KOKKOS_INLINE_FUNCTION std::int64_t end(const std::int64_t r) const { return rp(r + 1); }
  template <class Op>
  KOKKOS_INLINE_FUNCTION void walk(const std::int64_t r, const std::int64_t k0, const std::int64_t k1, const Op& op) const {
    std::int64_t skip = k0 - rp(r), k = k0;  // a later segment of the row starts at its (k0 - rp(r))-th diagonal
    for (int w = 0; w < words && k < k1; ++w) {
      std::uint64_t m = mask(r * words + w);
      while (m != 0 && k < k1) {
        const int b = lowest_set_bit(m);
        m &= m - 1;
        if (skip > 0) {
          --skip;
          continue;
        }
        op(k++, std::int64_t(64 * w + b) * pitch + r);
      }
    }
  }
};
template <class Scalar, class ExecSpace>
DiaSlotWalk<Scalar, ExecSpace> slot_walk(const DiaDevice<Scalar, ExecSpace>& f,
                                         const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  return {rp, f.row_diagonals, f.mask_words, f.pitch, f.nrows, f.ndiag};
}
// Refreshed by a kernel of its own on CUDA's tuned path (tile_refresh_cuda.hpp:
// a tile of rows read as one run of the CSR, written out a diagonal at a
// time; each row's n-th entry on the n-th diagonal its mask names, no
// column read) where a tile of 32 rows of every diagonal fits in shared
// memory; its map then keeps no slot a nonzero. Elsewhere through a map
// of slots its walk writes (refresh_by_rows, matrix.hpp). H200, refresh
// in SpMVs, the tile / the scatter: the 7- and 9-point stencils 1.9 / 2.5
// and 3.0, bands of 17, 41 and 129 diagonals 2.1-2.4 / 5.2-8.9, the
// 27-point stencil 2.4 / 8.0, block-diagonal rows of 4 on 7 diagonals
// 2.1 / 3.0 (docs/PERFORMANCE.md, "Refreshing dia, ell, ellr and hyb").
template <class Scalar, class ExecSpace>
bool has_tuned_refresh(const DiaDevice<Scalar, ExecSpace>& f) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value)
    return f.kernel == KernelPath::Auto && f.ndiag > 0 && cuda_tuned::tile_refresh_rows<Scalar>(f.ndiag) > 0;
#endif
  (void)f;
  return false;
}
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const DiaDevice<Scalar, ExecSpace>& f) {
  return has_tuned_refresh(f);
}
// True where it wrote the values (has_tuned_refresh), false where the
// slot walk is to.
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const DiaDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (!has_tuned_refresh(f)) return false;
    cuda_tuned::TileLayout layout;
    layout.width = f.ndiag;
    layout.stride = f.pitch;
    cuda_tuned::DiagonalColumns columns;
    columns.mask = f.row_diagonals.data();
    columns.words = f.mask_words;
    columns.ndiag = f.ndiag;
    return cuda_tuned::tile_refresh(space.cuda_stream(), f.nrows, rp.data(), values.data(), f.data.data(), layout,
                                    columns, cuda_tuned::NoTail{}, true);
  }
#endif
  (void)space, (void)f, (void)rp, (void)values;
  return false;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const DiaDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"diagonals", std::to_string(f.ndiag)},
          {"fill", std::to_string(f.nnz ? double(f.ndiag) * f.pitch / double(f.nnz) : 0.0)}};
}
}  // namespace detail

}  // namespace kspmv
