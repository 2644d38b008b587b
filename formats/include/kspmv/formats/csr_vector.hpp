// csr-vector: CSR with a group of 2, 4, ..., 32 lanes per row (Bell &
// Garland Figure 22, generalised as CUSP does). The group size is
// ConvertOptions::vector_length, by default the smallest power of two >=
// the mean row length.
#pragma once

#include "kspmv/formats/csr.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
using CsrVectorDevice = CsrDeviceT<Scalar, ExecSpace, CsrKernel::Vector>;

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrVectorDevice<Scalar, ExecSpace> to_csr_vector(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  return detail::build_csr<Scalar, ExecSpace, CsrKernel::Vector>(a, opt);
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrVectorDevice<Scalar, ExecSpace> to_csr_vector(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_csr_vector(upload_csr<Scalar, ExecSpace>(a), opt);
}

}  // namespace kspmv
