// The baseline: Kokkos Kernels' CrsMatrix and KokkosSparse::spmv (native
// kernels, no vendor TPL), behind kspmv's format contract, plus interop both
// ways with matrices and vectors a Kokkos Kernels user already has.
#pragma once

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <tuple>

#include "kspmv/core/properties.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct KkCrs {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using device_type = Kokkos::Device<ExecSpace, memory_space>;
  // int ordinals and int offsets: the narrow ETI Kokkos Kernels is built with.
  using crs_type = KokkosSparse::CrsMatrix<Scalar, int, device_type, void, int>;
  static constexpr const char* format_name = "kk-crs";

  crs_type A;
  double conversion_seconds = 0;

  ordinal_t nrows() const { return A.numRows(); }
  ordinal_t ncols() const { return A.numCols(); }
  std::int64_t nnz() const { return A.nnz(); }
  std::size_t storage_bytes() const {
    return A.graph.row_map.span() * sizeof(int) + A.graph.entries.span() * sizeof(int) +
           A.values.span() * sizeof(Scalar);
  }
};

// Kokkos Kernels' own CrsMatrix over copies of the device CSR's arrays
// (offsets narrowed to its 32-bit ones on the device).
namespace detail {
// dst(i) = src(i) as int. A named functor rather than a KOKKOS_LAMBDA: in
// kspmv_perf's CUDA build the extended lambda's nvcc wrapper, in a clone
// GCC made of to_kk_crs, called a null pointer when it was destroyed.
template <class Dst, class Src>
struct NarrowOffsets {
  Dst dst;
  Src src;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { dst(i) = static_cast<int>(src(i)); }
};
}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
KkCrs<Scalar, ExecSpace> to_kk_crs(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& = {}) {
  Kokkos::Timer timer;
  using K = KkCrs<Scalar, ExecSpace>;
  using M = typename K::memory_space;
  if (a.nnz() > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("kk-crs: " + std::to_string(a.nnz()) +
                                " entries exceed its 32-bit offsets");
  ExecSpace space;
  Kokkos::View<int*, M> row_map(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::kk-crs::row_map"),
                                a.row_ptr.extent(0));
  Kokkos::parallel_for("kspmv::kk-crs::narrow_offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, row_map.extent(0)),
                       detail::NarrowOffsets<decltype(row_map), decltype(a.row_ptr)>{row_map, a.row_ptr});
  Kokkos::View<int*, M> entries(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::kk-crs::entries"),
                                a.nnz());
  Kokkos::deep_copy(space, entries, a.col_idx);
  Kokkos::View<Scalar*, M> values(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::kk-crs::values"),
                                  a.nnz());
  Kokkos::deep_copy(space, values, a.values);
  space.fence();
  K k;
  k.A = typename K::crs_type("kspmv::kk-crs", a.nrows, a.ncols, static_cast<int>(a.nnz()), values, row_map,
                             entries);
  ExecSpace().fence();
  k.conversion_seconds = timer.seconds();
  return k;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
KkCrs<Scalar, ExecSpace> to_kk_crs(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_kk_crs(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const KkCrs<Scalar, ExecSpace>& K, const XView& x,
          Scalar beta, const YView& y) {
  if (detail::spmv_prologue(space, "kk-crs", K.nrows(), K.ncols(), alpha, x, beta, y)) return;
#if KOKKOS_VERSION >= 40000
  KokkosSparse::spmv(space, "N", alpha, K.A, x, beta, y);
#else
  // Kokkos Kernels 3.4 runs on the default instance of ExecSpace only.
  space.fence();
  KokkosSparse::spmv("N", alpha, K.A, x, beta, y);
#endif
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(Scalar alpha, const KkCrs<Scalar, ExecSpace>& K, const XView& x, Scalar beta, const YView& y) {
  spmv(ExecSpace(), alpha, K, x, beta, y);
}

// A host copy of any KokkosSparse::CrsMatrix, in kspmv's canonical form
// (so any kspmv format can be built from a Kokkos Kernels user's matrix).
template <class CrsMatrixType>
HostCsr<typename CrsMatrixType::non_const_value_type> host_csr_from_kokkos_kernels(const CrsMatrixType& A) {
  using Scalar = typename CrsMatrixType::non_const_value_type;
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.values);
  HostCoo<Scalar> coo(A.numRows(), A.numCols());
  coo.row.reserve(en.extent(0));
  coo.col.reserve(en.extent(0));
  coo.val.reserve(en.extent(0));
  for (std::int64_t i = 0; i < A.numRows(); ++i)
    for (std::int64_t k = static_cast<std::int64_t>(rm(i)); k < static_cast<std::int64_t>(rm(i + 1)); ++k)
      coo.add(i, en(k), va(k));
  // Kokkos Kernels allows unsorted rows and duplicates: canonicalize.
  return to_csr(coo);
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(KkCrs<Scalar, ExecSpace>& f) {
  return std::tie(f.A.values);
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const KkCrs<Scalar, ExecSpace>&) {
  return {};
}
}  // namespace detail

}  // namespace kspmv
