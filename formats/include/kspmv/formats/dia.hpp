// DIA (Bell & Garland §3.1, §4.1): the occupied diagonals' offsets and a
// column-major, padded `data` array (data[d * pitch + row] = A(row,
// row + offsets[d]), zero where the diagonal leaves the matrix). No column
// indices are stored or read: on stencil matrices it moves the fewest bytes.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <algorithm>

#include "kspmv/core/properties.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/config.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/dia_cuda.hpp"
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
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const { return offsets.span() * sizeof(int) + data.span() * sizeof(Scalar); }
};

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
DiaDevice<Scalar, ExecSpace> to_dia(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using D = DiaDevice<Scalar, ExecSpace>;
  D d;
  d.nrows = a.nrows;
  d.ncols = a.ncols;
  d.nnz = a.nnz();
  d.kernel = opt.kernel;
  // Occupied diagonals: offset j - i, shifted by nrows - 1 to index a bitmap.
  std::vector<char> used(static_cast<std::size_t>(a.nrows) + a.ncols, 0);
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      used[static_cast<std::size_t>(a.col_idx[k]) - i + a.nrows - 1] = 1;
  std::vector<int> offs;
  std::vector<std::int64_t> slot(used.size(), -1);
  for (std::size_t u = 0; u < used.size(); ++u)
    if (used[u]) {
      slot[u] = static_cast<std::int64_t>(offs.size());
      offs.push_back(static_cast<int>(static_cast<std::int64_t>(u) - (a.nrows - 1)));
    }
  const std::int64_t pitch = detail::aligned_pitch(a.nrows);
  const long double slots = static_cast<long double>(pitch) * offs.size();
  if (slots > opt.max_fill * std::max<std::int64_t>(a.nnz(), 1))
    throw FormatCannotHoldError("dia: " + std::to_string(offs.size()) + " occupied diagonals x " +
                                std::to_string(pitch) + " padded rows = " + std::to_string((long long)slots) +
                                " stored values for " + std::to_string(a.nnz()) + " nonzeros, fill " +
                                std::to_string(double(slots / std::max<std::int64_t>(a.nnz(), 1))) +
                                " > max_fill " + std::to_string(opt.max_fill) + " (use ell, hyb or csr)");
  if (slots > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("dia: " + std::to_string((long long)slots) +
                                " stored values exceed its 32-bit index");
  detail::check_allocation<ExecSpace>(static_cast<std::int64_t>(slots) * static_cast<std::int64_t>(sizeof(Scalar)),
                                      "dia: " + std::to_string(offs.size()) + " padded diagonals",
                                      opt.memory_budget_bytes);
  d.ndiag = static_cast<int>(offs.size());
  d.pitch = static_cast<int>(pitch);
  std::vector<Scalar> data(static_cast<std::size_t>(slots), Scalar(0));
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t s = slot[static_cast<std::size_t>(a.col_idx[k]) - i + a.nrows - 1];
      data[static_cast<std::size_t>(s * pitch + i)] = a.values[k];
    }
  d.offsets = detail::upload<int, typename D::memory_space>(offs, "kspmv::dia::offsets");
  d.data = detail::upload<Scalar, typename D::memory_space>(data, "kspmv::dia::data");
  ExecSpace().fence();
  d.conversion_seconds = timer.seconds();
  return d;
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
      return cuda::dia_spmv(space.cuda_stream(), A.nrows, A.ncols, A.ndiag, A.pitch, A.offsets.data(), A.data.data(),
                            alpha, x.data(), beta, y.data());
  }
#endif
  detail::dia_portable(space, alpha, A, x, beta, y);
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp).
template <class Scalar, class ExecSpace>
std::vector<Kokkos::View<Scalar*, typename ExecSpace::memory_space>> value_views(const DiaDevice<Scalar, ExecSpace>& f) {
  return {f.data};
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
