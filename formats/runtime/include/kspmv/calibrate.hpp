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
  return calibrate_model<Scalar, ExecSpace>(co, Matrix<Scalar, ExecSpace>::calibration_timer());
}

}  // namespace kspmv
