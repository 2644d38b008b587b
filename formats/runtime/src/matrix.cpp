#include "kspmv/matrix.hpp"

namespace kspmv {
template class Matrix<float, Kokkos::DefaultExecutionSpace>;
template class Matrix<double, Kokkos::DefaultExecutionSpace>;
}  // namespace kspmv
