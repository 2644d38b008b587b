#include "kspmv/core/reference.hpp"

#include <cmath>
#include <limits>

namespace kspmv {

namespace {
template <class Scalar>
void check_lengths(const HostCsr<Scalar>& a, std::size_t nx, std::size_t ny) {
  if (nx != static_cast<std::size_t>(a.ncols))
    throw InvalidArgumentError("x has " + std::to_string(nx) + " entries, the matrix " +
                               std::to_string(a.ncols) + " columns");
  if (ny != static_cast<std::size_t>(a.nrows))
    throw InvalidArgumentError("y has " + std::to_string(ny) + " entries, the matrix " +
                               std::to_string(a.nrows) + " rows");
}
}  // namespace

template <class Scalar>
void reference_spmv(Scalar alpha, const HostCsr<Scalar>& a, const std::vector<Scalar>& x,
                    Scalar beta, std::vector<Scalar>& y) {
  check_lengths(a, x.size(), y.size());
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    long double s = 0;
    if (alpha != Scalar(0))
      for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
        s += static_cast<long double>(a.values[k]) * x[a.col_idx[k]];
    const long double ax = alpha != Scalar(0) ? static_cast<long double>(alpha) * s : 0.0L;
    y[i] = static_cast<Scalar>(beta == Scalar(0) ? ax : ax + static_cast<long double>(beta) * y[i]);
  }
}

template <class Scalar>
SpmvOracle<Scalar> make_oracle(const HostCsr<Scalar>& a, Scalar alpha, const std::vector<Scalar>& x, Scalar beta,
                               const std::vector<Scalar>& y_in) {
  check_lengths(a, x.size(), y_in.size());
  SpmvOracle<Scalar> o;
  o.ref.resize(static_cast<std::size_t>(a.nrows));
  o.mag.resize(static_cast<std::size_t>(a.nrows));
  o.len.resize(static_cast<std::size_t>(a.nrows));
  for (ordinal_t i = 0; i < a.nrows; ++i) {
    long double s = 0, mag = 0;
    if (alpha != Scalar(0))
      for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const long double t = static_cast<long double>(a.values[k]) * x[a.col_idx[k]];
        s += t;
        mag += std::fabs(t);
      }
    long double ref = alpha != Scalar(0) ? static_cast<long double>(alpha) * s : 0.0L;
    long double refmag = alpha != Scalar(0) ? std::fabs(static_cast<long double>(alpha)) * mag : 0.0L;
    if (beta != Scalar(0)) {
      ref += static_cast<long double>(beta) * y_in[i];
      refmag += std::fabs(static_cast<long double>(beta) * y_in[i]);
    }
    o.ref[i] = ref;
    o.mag[i] = refmag;
    o.len[i] = a.row_length(i);
  }
  return o;
}

template <class Scalar>
SpmvCheck check_spmv(const SpmvOracle<Scalar>& o, const std::vector<Scalar>& y_out) {
  if (y_out.size() != o.ref.size()) throw InvalidArgumentError("y has the wrong length for this check");
  const long double u = std::numeric_limits<Scalar>::epsilon() / 2;
  const long double tiny = std::numeric_limits<Scalar>::denorm_min();
  SpmvCheck r;
  for (std::size_t i = 0; i < o.ref.size(); ++i) {
    const long double ref = o.ref[i], refmag = o.mag[i];
    // The exact result rounded to Scalar is what a perfect kernel returns;
    // overflow in Scalar turns into Inf, which must then be matched.
    const Scalar ref_s = static_cast<Scalar>(ref);
    const Scalar got = y_out[i];
    bool bad;
    double ratio = 0;
    if (!std::isfinite(ref_s) || !std::isfinite(static_cast<Scalar>(refmag))) {
      // Non-finite somewhere in the row: NaN must give NaN; an infinite
      // exact result must be matched in sign. A finite exact result whose
      // terms overflow Scalar may legitimately come out as Inf or NaN.
      if (std::isnan(ref)) bad = !std::isnan(got);
      else if (std::isinf(ref_s) && std::isfinite(ref)) bad = false;  // rounding overflow
      else if (std::isinf(ref)) bad = !(std::isinf(got) && std::signbit(got) == std::signbit(ref_s));
      else bad = false;
    } else {
      // (len + 4) u: the dot product's len roundings, the scaling by alpha
      // and beta, and the adds that combine partial sums (HYB, PKT).
      const long double bound = (static_cast<long double>(o.len[i]) + 4) * u * refmag * 1.0001L + 2 * tiny;
      const long double err = std::fabs(static_cast<long double>(got) - ref);
      bad = !(err <= bound);  // NaN in got fails here
      ratio = bound > 0 ? static_cast<double>(err / bound) : (err > 0 ? INFINITY : 0.0);
    }
    if (ratio > r.worst_ratio) r.worst_ratio = ratio;
    if (bad) {
      if (r.first_bad < 0) {
        r.first_bad = static_cast<std::int64_t>(i);
        r.message = "row " + std::to_string(i) + ": got " + std::to_string(static_cast<double>(got)) +
                    ", expected " + std::to_string(static_cast<double>(ref)) + " (row length " +
                    std::to_string(o.len[i]) + ")";
      }
      ++r.bad_rows;
      r.ok = false;
    }
  }
  if (!r.ok) r.message = std::to_string(r.bad_rows) + " wrong row(s); first: " + r.message;
  return r;
}

template <class Scalar>
SpmvCheck check_spmv(const HostCsr<Scalar>& a, Scalar alpha, const std::vector<Scalar>& x, Scalar beta,
                     const std::vector<Scalar>& y_in, const std::vector<Scalar>& y_out) {
  if (y_out.size() != y_in.size()) throw InvalidArgumentError("y_out and y_in differ in length");
  return check_spmv(make_oracle(a, alpha, x, beta, y_in), y_out);
}

#define KSPMV_INSTANTIATE(S)                                                                     \
  template void reference_spmv(S, const HostCsr<S>&, const std::vector<S>&, S, std::vector<S>&);     \
  template SpmvCheck check_spmv(const HostCsr<S>&, S, const std::vector<S>&, S, const std::vector<S>&, \
                                const std::vector<S>&);                                             \
  template SpmvOracle<S> make_oracle(const HostCsr<S>&, S, const std::vector<S>&, S, const std::vector<S>&); \
  template SpmvCheck check_spmv(const SpmvOracle<S>&, const std::vector<S>&);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)

}  // namespace kspmv
