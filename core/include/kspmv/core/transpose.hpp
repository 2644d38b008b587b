// The transpose of a canonical device CSR, built on the device.
//
// Mode "T" of kspmv::spmv applies A^T as a matrix of its own (any format),
// so it needs A^T's CSR: its pattern once, and its values after every
// refresh. The pattern comes from one sort of the keys col * nnz + k (k the
// entry of A): the keys are unique, so any sort gives one order, and within
// a column of A the entries keep A's row order (columns of A^T ascend). No
// atomics: the same bits on every run and every device.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Sort.hpp>
#include <cstdint>
#include <string>

#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/error.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace>
struct TransposedCsr {
  DeviceCsr<Scalar, ExecSpace> csr;  // A^T: ncols x nrows, canonical
  // source(p): the entry of A that A^T's entry p holds (nnz ints), so A^T's
  // values are values_of_A(source(p)).
  Kokkos::View<int*, typename ExecSpace::memory_space> source;
};

template <class Scalar, class ExecSpace>
TransposedCsr<Scalar, ExecSpace> transpose_csr(const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a) {
  using M = typename ExecSpace::memory_space;
  const std::int64_t nnz = a.nnz();
  const std::int64_t nrows = a.nrows, ncols = a.ncols;
  if (nnz > std::int64_t(std::numeric_limits<int>::max()))
    throw FormatCannotHoldError("transpose: " + std::to_string(nnz) + " entries exceed 32-bit entry indices");
  const auto row_ptr = a.row_ptr;
  const auto col_idx = a.col_idx;

  // Each entry's row, then the unique keys col * nnz + entry.
  Kokkos::View<int*, M> row_of(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::transpose::row_of"), nnz);
  Kokkos::parallel_for(
      "kspmv::transpose::row_of", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        for (offset_t k = row_ptr(i); k < row_ptr(i + 1); ++k) row_of(k) = static_cast<int>(i);
      });
  Kokkos::View<std::int64_t*, M> key(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::transpose::key"),
                                     nnz);
  Kokkos::parallel_for(
      "kspmv::transpose::key", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz),
      KOKKOS_LAMBDA(const std::int64_t k) { key(k) = std::int64_t(col_idx(k)) * nnz + k; });
  space.fence();
  if (nnz > 0) Kokkos::sort(key);
  Kokkos::fence();

  TransposedCsr<Scalar, ExecSpace> t;
  Kokkos::View<offset_t*, M> tptr(Kokkos::view_alloc(space, "kspmv::transpose::row_ptr"), ncols + 1);
  Kokkos::View<ordinal_t*, M> tcol(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::transpose::col_idx"),
                                   nnz);
  Kokkos::View<Scalar*, M> tval(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::transpose::values"),
                                nnz);
  t.source = Kokkos::View<int*, M>(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::transpose::source"),
                                   nnz);
  const auto source = t.source;
  const auto values = a.values;
  // Row c of A^T starts at the first key of column c or beyond: each
  // position where the column changes writes the starts of the columns it
  // steps over (empty columns included), the last position those past it.
  Kokkos::parallel_for(
      "kspmv::transpose::entries", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz), KOKKOS_LAMBDA(const std::int64_t p) {
        const std::int64_t c = key(p) / nnz;
        const std::int64_t k = key(p) - c * nnz;
        source(p) = static_cast<int>(k);
        tcol(p) = row_of(k);
        tval(p) = values(k);
        const std::int64_t prev = p == 0 ? -1 : key(p - 1) / nnz;
        for (std::int64_t j = prev + 1; j <= c; ++j) tptr(j) = p;
        if (p == nnz - 1)
          for (std::int64_t j = c + 1; j <= ncols; ++j) tptr(j) = nnz;
      });
  t.csr.nrows = a.ncols;
  t.csr.ncols = a.nrows;
  t.csr.row_ptr = tptr;
  t.csr.col_idx = tcol;
  t.csr.values = tval;
  return t;
}

}  // namespace kspmv
