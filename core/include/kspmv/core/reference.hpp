// The host reference SpMV, y = alpha * A x + beta * y, and the checker that
// every format's tests and benchmarks use as their oracle.
//
// BLAS semantics: beta == 0 overwrites y (NaN or Inf already in y does not
// leak into the result); alpha == 0 only scales y (A and x are not read).
// Sums are accumulated in long double, so the reference's own error is far
// below the float/double rounding of the kernels it judges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/host_matrix.hpp"

namespace kspmv {

template <class Scalar>
void reference_spmv(Scalar alpha, const HostCsr<Scalar>& a, const std::vector<Scalar>& x,
                    Scalar beta, std::vector<Scalar>& y);

struct SpmvCheck {
  bool ok = true;
  std::int64_t bad_rows = 0;   // rows outside the error bound
  std::int64_t first_bad = -1; // first such row
  double worst_ratio = 0;      // max |y - ref| / bound over finite rows
  std::string message;         // empty when ok; names the first bad row otherwise
};

// Checks y_out against the exact result of alpha*A*x + beta*y_in, row by
// row, with the rigorous bound for any summation order (with or without
// FMA): |y - ref| <= (len + 4) * u * (|alpha| * sum|a_ij x_j| + |beta y_i|),
// u = unit roundoff of Scalar. Non-finite references must be matched
// exactly (NaN by NaN, +Inf by +Inf, -Inf by -Inf).
template <class Scalar>
SpmvCheck check_spmv(const HostCsr<Scalar>& a, Scalar alpha, const std::vector<Scalar>& x,
                     Scalar beta, const std::vector<Scalar>& y_in, const std::vector<Scalar>& y_out);

// The same check split in two, for checking many results of one product
// (a benchmark checks every format against one reference): the exact
// result and the bound per row, computed once...
template <class Scalar>
struct SpmvOracle {
  std::vector<long double> ref;    // exact alpha*A*x + beta*y_in
  std::vector<long double> mag;    // |alpha| * sum|a_ij x_j| + |beta y_i|
  std::vector<std::int64_t> len;   // row lengths
};
template <class Scalar>
SpmvOracle<Scalar> make_oracle(const HostCsr<Scalar>& a, Scalar alpha, const std::vector<Scalar>& x, Scalar beta,
                               const std::vector<Scalar>& y_in);
// ...then each result compared against it.
template <class Scalar>
SpmvCheck check_spmv(const SpmvOracle<Scalar>& oracle, const std::vector<Scalar>& y_out);

}  // namespace kspmv
