// Several right-hand sides at once (Y = alpha * A * X + beta * Y, X and Y
// with k columns): what the formats' fused kernels share. A fused kernel
// reads each stored entry once for up to kBlockColumns columns, its sums in
// registers, then takes the next kBlockColumns; formats without one are
// applied a column at a time by kspmv::spmv.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <string>

#include "kspmv/core/device_util.hpp"

namespace kspmv {

// Columns one pass of a fused kernel carries: 8 doubles a row in registers
// keep enough threads resident on a GPU; more columns take more passes.
constexpr int kBlockColumns = 8;

template <class Scalar, class MemorySpace>
using ConstBlockView = Kokkos::View<const Scalar**, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Scalar, class MemorySpace>
using BlockView = Kokkos::View<Scalar**, Kokkos::LayoutStride, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

namespace detail {

// Y(:, j) = beta * Y(:, j) for every column (beta 0 writes zeros, so NaNs
// in Y do not survive, as in the one-vector kernels).
template <class ExecSpace, class YView, class Scalar>
void scale_block(const ExecSpace& space, Scalar beta, const YView& y) {
  const std::int64_t rows = y.extent(0), cols = y.extent(1);
  Kokkos::parallel_for(
      "kspmv::scale_block", Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(space, {0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
        y(i, j) = beta == Scalar(0) ? Scalar(0) : beta * y(i, j);
      });
}

// The format-independent part of a fused apply: the empty matrix and
// alpha == 0 (Y only scaled). True when nothing is left to do. Sizes are
// checked by kspmv::spmv before it gets here.
template <class ExecSpace, class YView, class Scalar>
bool block_prologue(const ExecSpace& space, std::int64_t nrows, Scalar alpha, Scalar beta, const YView& y) {
  if (nrows == 0 || y.extent(1) == 0) return true;
  if (alpha == Scalar(0)) {
    scale_block(space, beta, y);
    return true;
  }
  return false;
}

// A row's sums for up to kBlockColumns columns as one value, for kernels
// that reduce a row across lanes with Kokkos' nested parallel_reduce
// (joined by +=; Kokkos 3's joins take volatile operands).
template <class Scalar>
struct ColumnSums {
  Scalar v[kBlockColumns] = {};
  KOKKOS_INLINE_FUNCTION ColumnSums& operator+=(const ColumnSums& o) {
    for (int j = 0; j < kBlockColumns; ++j) v[j] += o.v[j];
    return *this;
  }
#if KOKKOS_VERSION < 40000
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile ColumnSums& o) volatile {
    for (int j = 0; j < kBlockColumns; ++j) v[j] += o.v[j];
  }
#endif
};

// Y(row, j0 + j) for j < cols from the row's sums.
template <class YView, class Scalar>
KOKKOS_INLINE_FUNCTION void combine_y_block(const YView& y, const std::int64_t row, const int j0, const int cols,
                                            const Scalar alpha, const Scalar (&sum)[kBlockColumns],
                                            const Scalar beta) {
  for (int j = 0; j < kBlockColumns; ++j) {
    if (j >= cols) break;
    if (beta == Scalar(0))
      y(row, j0 + j) = alpha * sum[j];
    else
      y(row, j0 + j) = alpha * sum[j] + beta * y(row, j0 + j);
  }
}

// dst = src, element by element (blocks of any layouts, same extents).
template <class ExecSpace, class Dst, class Src>
void copy_block(const ExecSpace& space, const Dst& dst, const Src& src) {
  const std::int64_t rows = src.extent(0), cols = src.extent(1);
  Kokkos::parallel_for(
      "kspmv::copy_block", Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(space, {0, 0}, {rows, cols}),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) { dst(i, j) = src(i, j); });
}

// dst = src where dst is row-major and contiguous (LayoutRight): a thread
// an element in dst's order, so a warp writes 32 adjacent elements and
// reads 32 / k adjacent rows of each of src's k columns where src is
// column-major (the 2-D copy_block tiles without regard to either side).
template <class ExecSpace, class Dst, class Src>
void copy_block_to_rows(const ExecSpace& space, const Dst& dst, const Src& src) {
  const std::int64_t cols = src.extent(1), n = static_cast<std::int64_t>(src.extent(0)) * cols;
  if (n == 0) return;
  Kokkos::parallel_for(
      "kspmv::copy_block_to_rows",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(space, 0, n), KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t i = t / cols, j = t - i * cols;
        dst(i, j) = src(i, j);
      });
}

// X for a fused kernel that gathers whole rows of X: X itself where a
// row's entries are adjacent (stride(1) == 1), else X copied row-major
// into `rows`, which grows to fit and is kept for the next call.
template <class ExecSpace, class Scalar, class MemorySpace>
ConstBlockView<Scalar, MemorySpace> adjacent_rows(const ExecSpace& space, const ConstBlockView<Scalar, MemorySpace>& x,
                                                  Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>& rows) {
  if (x.stride(1) == 1) return x;
  const std::int64_t n = x.extent(0), k = x.extent(1);
  if (static_cast<std::int64_t>(rows.span()) < n * k)
    rows = Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kspmv::x_rows")), n, k);
  const Kokkos::View<Scalar**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> r(
      rows.data(), n, k);
  copy_block_to_rows(space, r, x);
  return r;
}

// Calls pass(j0, cols) for each group of at most kBlockColumns columns.
template <class Pass>
void for_column_groups(std::int64_t k, const Pass& pass) {
  for (std::int64_t j0 = 0; j0 < k; j0 += kBlockColumns)
    pass(static_cast<int>(j0), static_cast<int>(std::min<std::int64_t>(kBlockColumns, k - j0)));
}

}  // namespace detail
}  // namespace kspmv

// The identity of ColumnSums for Kokkos' sum reducer, which nested
// reductions of a value use.
namespace Kokkos {
template <class Scalar>
struct reduction_identity<kspmv::detail::ColumnSums<Scalar>> {
  KOKKOS_FORCEINLINE_FUNCTION static kspmv::detail::ColumnSums<Scalar> sum() { return {}; }
};
}  // namespace Kokkos
