// The performance model's calibration, timed through kspmv::Matrix: the
// procedure and its fits live with the model (kspmv/model/calibrate.hpp);
// this binds it to the run-time Matrix, which converts to any format.
#pragma once

#include <Kokkos_Core.hpp>

#include "kspmv/matrix.hpp"
#include "kspmv/model/calibrate.hpp"

namespace kspmv {

template <class Scalar = double, class ExecSpace = Kokkos::DefaultExecutionSpace>
ModelHardware calibrate_model(const CalibrationOptions& co = {}) {
  using M = Matrix<Scalar, ExecSpace>;
  const FormatTimer<Scalar> times_of = [](const HostCsr<Scalar>& a, Format f, const ConvertOptions& opt) {
    const M m = M::convert(a, f, opt);
    typename M::vector_type x("x", a.ncols), y("y", a.nrows);
    Kokkos::deep_copy(x, Scalar(1));
    return detail::time_apply<ExecSpace>(
        [&](const ExecSpace& space) { m.apply(space, Scalar(1), x, Scalar(0), y); });
  };
  return calibrate_model<Scalar, ExecSpace>(co, times_of);
}

}  // namespace kspmv
