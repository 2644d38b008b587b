// y = A x with A a 3D Laplacian and x = 1: interior rows sum to zero, so
// y's sum equals the sum over the boundary rows. Prints "downstream ok".
#include <kspmv/kspmv.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  auto a = kspmv::generate<double>("lap3d:8");
  auto m = kspmv::Matrix<double>::convert(a, kspmv::parse_format("csr"));
  kspmv::Matrix<double>::vector_type x("x", a.ncols), y("y", a.nrows);
  Kokkos::deep_copy(x, 1.0);
  m.apply(1.0, x, 0.0, y);
  double sum = 0;
  Kokkos::parallel_reduce(
      "sum", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, a.nrows),
      KOKKOS_LAMBDA(const int i, double& s) { s += y(i); }, sum);
  // Each missing neighbour adds 1: 6 faces * 8^2 boundary links.
  if (sum != 6.0 * 64) {
    std::printf("downstream WRONG: %g\n", sum);
    return 1;
  }
  std::printf("downstream ok\n");
  return 0;
}
