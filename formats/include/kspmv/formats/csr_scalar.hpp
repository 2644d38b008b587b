// csr-scalar: CSR with one thread per row (Bell & Garland Figure 20).
// Coalescing is poor (each thread walks its own row), so it is meant for
// very short rows; csr-vector is the general choice.
#pragma once

#include "kspmv/formats/csr.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
using CsrScalarDevice = CsrDeviceT<Scalar, ExecSpace, CsrKernel::Scalar>;

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrScalarDevice<Scalar, ExecSpace> to_csr_scalar(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  return detail::build_csr<Scalar, ExecSpace, CsrKernel::Scalar>(a, opt);
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CsrScalarDevice<Scalar, ExecSpace> to_csr_scalar(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_csr_scalar(upload_csr<Scalar, ExecSpace>(a), opt);
}

}  // namespace kspmv
