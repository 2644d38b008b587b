// Row permutations, for formats that reorder rows (PELLR, EVC-HYB, EHYB...).
//
// Convention: `new_to_old[i]` is the caller's (original) row stored at
// internal position i. A format computes t = (P A) x in internal order;
// y in the caller's order is y[new_to_old[i]] = alpha * t[i] + beta * y[...].
#pragma once

#include <Kokkos_Core.hpp>
#include <vector>

#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"

namespace kspmv {

// Throws InvalidArgumentError unless p is a permutation of 0..n-1.
void validate_permutation(const std::vector<ordinal_t>& new_to_old, std::int64_t n);
std::vector<ordinal_t> inverse_permutation(const std::vector<ordinal_t>& p);

// out[i] = v[p[i]]: caller order -> internal order.
template <class T>
std::vector<T> gather(const std::vector<T>& v, const std::vector<ordinal_t>& p) {
  std::vector<T> out(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) out[i] = v[p[i]];
  return out;
}
// out[p[i]] = v[i]: internal order -> caller order.
template <class T>
std::vector<T> scatter(const std::vector<T>& v, const std::vector<ordinal_t>& p) {
  std::vector<T> out(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) out[p[i]] = v[i];
  return out;
}

// Row i of the result is row new_to_old[i] of A.
template <class Scalar>
HostCsr<Scalar> permute_rows(const HostCsr<Scalar>& a, const std::vector<ordinal_t>& new_to_old);

// P A P^T of a square matrix: B(i, j) = A(new_to_old[i], new_to_old[j]),
// rows kept sorted by column.
template <class Scalar>
HostCsr<Scalar> permute_symmetric(const HostCsr<Scalar>& a, const std::vector<ordinal_t>& new_to_old);

// Device versions: out(i) = in(p(i)) and out(p(i)) = in(i).
template <class ExecSpace, class PView, class InView, class OutView>
void device_gather(const ExecSpace& space, const PView& p, const InView& in, const OutView& out) {
  Kokkos::parallel_for(
      "kspmv::gather", Kokkos::RangePolicy<ExecSpace>(space, 0, p.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { out(i) = in(p(i)); });
}
template <class ExecSpace, class PView, class InView, class OutView>
void device_scatter(const ExecSpace& space, const PView& p, const InView& in, const OutView& out) {
  Kokkos::parallel_for(
      "kspmv::scatter", Kokkos::RangePolicy<ExecSpace>(space, 0, p.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { out(p(i)) = in(i); });
}
// y(p(i)) = alpha * t(i) + beta * y(p(i)): a permuted result into the
// caller's y with BLAS beta semantics.
template <class ExecSpace, class PView, class TView, class YView, class Scalar>
void device_scatter_combine(const ExecSpace& space, const PView& p, Scalar alpha, const TView& t, Scalar beta,
                            const YView& y) {
  Kokkos::parallel_for(
      "kspmv::scatter_combine", Kokkos::RangePolicy<ExecSpace>(space, 0, p.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i) { detail::combine_y(y, p(i), alpha, t(i), beta); });
}

}  // namespace kspmv
