// Helpers every device format shares: argument checks at the API boundary,
// the y = alpha*sum + beta*y combine with BLAS semantics, uploads from host
// vectors, and the alpha == 0 path that only scales y.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/config.hpp"
#include "kspmv/core/adaptive.hpp"
#include "kspmv/core/error.hpp"

namespace kspmv {
namespace detail {

// y(i) = alpha*sum + beta*y(i). beta == 0 overwrites: y's old value (maybe
// NaN) is neither read nor propagated, and no bandwidth is spent on it.
template <class YView, class Index, class Scalar>
KOKKOS_INLINE_FUNCTION void combine_y(const YView& y, const Index i, const Scalar alpha, const Scalar sum,
                                      const Scalar beta) {
  if (beta == Scalar(0))
    y(i) = alpha * sum;
  else
    y(i) = alpha * sum + beta * y(i);
}

// Lengths must match the matrix; x and y must not overlap (the kernels read
// x while writing y).
template <class XView, class YView>
void check_spmv_args(std::int64_t nrows, std::int64_t ncols, const XView& x, const YView& y,
                     const char* format) {
  static_assert(XView::rank == 1 && YView::rank == 1, "x and y must be rank-1 views");
  if (static_cast<std::int64_t>(x.extent(0)) != ncols)
    throw InvalidArgumentError(std::string(format) + " spmv: x has " + std::to_string(x.extent(0)) +
                               " entries, the matrix has " + std::to_string(ncols) + " columns");
  if (static_cast<std::int64_t>(y.extent(0)) != nrows)
    throw InvalidArgumentError(std::string(format) + " spmv: y has " + std::to_string(y.extent(0)) +
                               " entries, the matrix has " + std::to_string(nrows) + " rows");
  using xs = typename XView::value_type;
  using ys = typename YView::value_type;
  const char* xb = reinterpret_cast<const char*>(x.data());
  const char* xe = xb + x.span() * sizeof(xs);
  const char* yb = reinterpret_cast<const char*>(y.data());
  const char* ye = yb + y.span() * sizeof(ys);
  if (x.span() > 0 && y.span() > 0 && xb < ye && yb < xe)
    throw InvalidArgumentError(std::string(format) + " spmv: x and y overlap in memory; "
                               "y = alpha*A*x + beta*y needs distinct vectors");
}

// Formats that renumber rows and columns alike (PKT, EHYB) hold square
// matrices only.
inline void require_square(std::int64_t rows, std::int64_t cols, const char* format) {
  if (rows != cols)
    throw FormatCannotHoldError(std::string(format) +
                                ": needs a square matrix (it renumbers rows and columns alike), got " +
                                std::to_string(rows) + " x " + std::to_string(cols));
}

// y = beta * y (beta == 0 writes zeros): the whole SpMV when alpha == 0.
template <class ExecSpace, class YView, class Scalar>
void scale_y(const ExecSpace& space, Scalar beta, const YView& y) {
  const std::int64_t n = static_cast<std::int64_t>(y.extent(0));
  Kokkos::parallel_for(
      "kspmv::scale_y", Kokkos::RangePolicy<ExecSpace>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        y(i) = beta == Scalar(0) ? Scalar(0) : beta * y(i);
      });
}

// The part of every format's spmv that does not depend on the format:
// argument checks, the empty matrix, and alpha == 0 (only scales y).
// True when nothing is left for the format's own kernel to do.
template <class ExecSpace, class XView, class YView, class Scalar>
bool spmv_prologue(const ExecSpace& space, const char* format, std::int64_t nrows, std::int64_t ncols, Scalar alpha,
                   const XView& x, Scalar beta, const YView& y) {
  check_spmv_args(nrows, ncols, x, y, format);
  if (nrows == 0) return true;
  if (alpha == Scalar(0)) {
    scale_y(space, beta, y);
    return true;
  }
  return false;
}

// A device copy of a host vector, converting the element type with a
// range check when it narrows (e.g. 64-bit host offsets to 32-bit).
template <class T, class MemSpace, class U>
Kokkos::View<T*, MemSpace> upload(const std::vector<U>& v, const std::string& label) {
  Kokkos::View<T*, MemSpace> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_integral<T>::value && std::is_integral<U>::value && sizeof(T) < sizeof(U))
      h(i) = checked_cast<T>(v[i], label.c_str());
    else
      h(i) = static_cast<T>(v[i]);
  }
  Kokkos::deep_copy(d, h);
  return d;
}

// Hand-tuned kernels take raw pointers: only for contiguous x and y.
template <class XView, class YView>
bool contiguous(const XView& x, const YView& y) {
  return x.span_is_contiguous() && y.span_is_contiguous();
}

// A view read through the read-only path (RandomAccess: __ldg on CUDA).
// The fills that move a CSR's entries into a format's slots read through
// it: with plain loads the compiler must assume a thread's stores into the
// slots may alias its next loads of the CSR, so each load waits for the
// store before it (a lab on an H200, 300,000 rows of 129 entries a thread a
// 32-entry segment: 5.0 ms plain, 2.1 with restrict pointers;
// docs/perf/h200-evc-fill-lab.cu).
template <class View>
Kokkos::View<typename View::const_data_type, typename View::array_layout, typename View::memory_space,
             Kokkos::MemoryTraits<Kokkos::RandomAccess>>
read_only(const View& v) {
  return v;
}

// Column-major padded layouts (DIA, ELL, PKT) start every column on a
// 32-element boundary: 128-byte aligned for float, 256 for double.
inline std::int64_t aligned_pitch(std::int64_t rows) { return (rows + 31) / 32 * 32; }
// Rows per ELL slice (ell.hpp); a compile-time power of two so the slot
// addressing is shifts and immediate offsets (a run-time slice height
// measured 10% slower on the H100).
constexpr int kEllSliceRows = 256;
// Ints per EVC-HYB sub-ELL block in its device copy (EvcEllBlock: first
// row, rows, width, offset, first team, teams, lanes), read by the
// portable and tuned kernels.
constexpr int kEvcBlockInts = 7;
// The lowest set bit of m (m != 0).
KOKKOS_INLINE_FUNCTION int lowest_set_bit(std::uint64_t m) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __ffsll(static_cast<long long>(m)) - 1;
#else
  return __builtin_ctzll(m);
#endif
}
// The set bits of w.
KOKKOS_INLINE_FUNCTION int set_bits(std::uint32_t w) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __popc(w);
#else
  return __builtin_popcount(w);
#endif
}
// Where slot 0 of ELL row `row` lies (width K slots per row); slot n is
// n * kEllSliceRows further. Shared by the portable and tuned kernels.
KOKKOS_INLINE_FUNCTION std::int64_t ell_row_base(int row, int width) {
  return static_cast<std::int64_t>(row / kEllSliceRows) * kEllSliceRows * width + row % kEllSliceRows;
}

// Work-group sizes for TeamPolicy kernels: a team of threads on GPUs, one
// thread walking many rows on host backends.
template <class ExecSpace>
constexpr bool is_host_space() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
}
// Whether ExecSpace is CUDA, where the formats have tuned kernels.
template <class ExecSpace>
constexpr bool on_cuda() {
#if KSPMV_ENABLE_CUDA
  return std::is_same<ExecSpace, Kokkos::Cuda>::value;
#else
  return false;
#endif
}
template <class ExecSpace>
constexpr int default_team_size() {
  return is_host_space<ExecSpace>() ? 1 : kGpuTeamSize;
}


// Bytes free in ExecSpace's memory: cudaMemGetInfo on CUDA, the host's
// available memory on host backends; -1 when unknown.
template <class ExecSpace>
std::int64_t device_available_bytes() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    std::size_t free_b = 0, total = 0;
    if (cudaMemGetInfo(&free_b, &total) == cudaSuccess) return static_cast<std::int64_t>(free_b);
    cudaGetLastError();
    return -1;
  }
#endif
  return host_available_bytes();
}

// Before a format builds padded storage: host staging and the device copy
// must both fit, else a typed OutOfMemoryError instead of a crash.
// `budget` > 0 is a cap the caller set (ConvertOptions::memory_budget_bytes).
template <class ExecSpace>
void check_allocation(std::int64_t bytes, const std::string& what, std::int64_t budget = 0) {
  if (budget > 0) check_fits(bytes, budget, what, "the memory budget");
  check_fits(bytes, host_available_bytes(), what, "the host");
  if (!is_host_space<ExecSpace>()) check_fits(bytes, device_available_bytes<ExecSpace>(), what, "the device");
}


// Rows whose entries were split across work units (coo's chunks,
// csr-merge's units): row span_row(s) begins in unit span_first(s), whose
// partial sum is tail(first), and ends in span_last(s), each later unit u
// holding head(u). It gets alpha * (tail + the heads) + beta * y once, the
// heads summed in a fixed order (the same bits every run, no atomics).
template <class ExecSpace, class Ints, class Partials, class YView, class Scalar>
void fix_up_spanning_rows(const ExecSpace& space, const std::string& label, int nspan, const Ints& span_row,
                          const Ints& span_first, const Ints& span_last, const Partials& head, const Partials& tail,
                          Scalar alpha, Scalar beta, const YView& y) {
  if (nspan == 0) return;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int team = is_host_space<ExecSpace>() ? 1 : 64;
  Kokkos::parallel_for(
      label, policy(space, nspan, team), KOKKOS_LAMBDA(const member& t) {
        const int s = t.league_rank();
        const int u0 = span_first(s), u1 = span_last(s);
        Scalar sum = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(t, u0 + 1, u1 + 1), [&](const int u, Scalar& acc) { acc += head(u); }, sum);
        Kokkos::single(Kokkos::PerTeam(t), [&]() { combine_y(y, span_row(s), alpha, tail(u0) + sum, beta); });
      });
}

}  // namespace detail
}  // namespace kspmv
