// kspmv::Matrix: one matrix, any format chosen at run time.
//
// Like Morpheus' DynamicMatrix or Ginkgo's LinOp: convert a HostCsr once
// into the format a program names (`--format evc-hyb`), then apply it as
// often as a solver needs. Every format plugs in through the contract in
// docs/ARCHITECTURE.md: a struct of Kokkos::Views built by a named
// conversion, and a free `spmv(space, alpha, A, x, beta, y)`.
#pragma once

#include <Kokkos_Core.hpp>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/format.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/properties.hpp"
// Every format's header (generated at configure time from formats/ and
// backends/kokkoskernels/, so a new format's header needs no line here).
#include "kspmv/formats/all.hpp"
#include "kspmv/model/model.hpp"

namespace kspmv {

namespace detail {

template <class F, class = void>
struct has_order : std::false_type {};
template <class F>
struct has_order<F, std::void_t<decltype(std::declval<const F&>().order), decltype(std::declval<const F&>().new_to_old)>>
    : std::true_type {};

template <class F>
bool in_internal_order(const F& f) {
  if constexpr (has_order<F>::value) return f.order == OutputOrder::Internal;
  return false;
}

// The internal order a format was built to compute in: new_to_old (empty
// when y, and x, are in the caller's order).
template <class F>
std::vector<ordinal_t> internal_order(const F& f) {
  if constexpr (has_order<F>::value) {
    if (in_internal_order(f)) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
      return std::vector<ordinal_t>(h.data(), h.data() + h.extent(0));
    }
  }
  return {};
}

template <class Scalar, class ExecSpace>
struct AnyFormat {
  using memory_space = typename ExecSpace::memory_space;
  using vector_type = Kokkos::View<Scalar*, Kokkos::LayoutLeft, memory_space>;
  using const_vector_type = Kokkos::View<const Scalar*, Kokkos::LayoutLeft, memory_space>;
  virtual ~AnyFormat() = default;
  virtual void apply(const ExecSpace& space, Scalar alpha, const const_vector_type& x, Scalar beta,
                     const vector_type& y) const = 0;
  virtual std::size_t storage_bytes() const = 0;
  virtual double conversion_seconds() const = 0;
  virtual Properties properties() const = 0;
  virtual std::vector<ordinal_t> internal_order() const = 0;
  virtual bool in_internal_order() const = 0;
  virtual bool permutes_x() const = 0;
};

template <class Scalar, class ExecSpace, class F>
struct FormatHolder final : AnyFormat<Scalar, ExecSpace> {
  using base = AnyFormat<Scalar, ExecSpace>;
  F f;
  explicit FormatHolder(F&& x) : f(std::move(x)) {}
  void apply(const ExecSpace& space, Scalar alpha, const typename base::const_vector_type& x, Scalar beta,
             const typename base::vector_type& y) const override {
    spmv(space, alpha, f, x, beta, y);
  }
  std::size_t storage_bytes() const override { return f.storage_bytes(); }
  double conversion_seconds() const override { return f.conversion_seconds; }
  Properties properties() const override { return format_properties(f); }
  std::vector<ordinal_t> internal_order() const override { return detail::internal_order(f); }
  bool in_internal_order() const override { return detail::in_internal_order(f); }
  bool permutes_x() const override { return detail::permutes_x<F>::value; }
};

}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
class Matrix {
 public:
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  // 1-D contiguous vectors; Kokkos Kernels' LayoutLeft vectors and default
  // rank-1 Views of this memory space both bind here.
  using vector_type = typename detail::AnyFormat<Scalar, ExecSpace>::vector_type;
  using const_vector_type = typename detail::AnyFormat<Scalar, ExecSpace>::const_vector_type;

  Matrix() = default;

  // Converts `a` into format `f`. Throws FormatCannotHoldError where the
  // format cannot hold the matrix.
  static Matrix convert(const HostCsr<Scalar>& a, Format f, const ConvertOptions& opt = {}) {
    if (f == Format::Auto) {
      // pmf-model Algorithm 1 over every format, with the default
      // calibration (set_default_model() or $KSPMV_CALIBRATION).
      const int tau = static_cast<int>(sizeof(Scalar));
      const auto& hw = default_model();
      const auto stats = pattern_stats(a, tau, hw);
      Matrix m = convert(a, pick(stats, tau, hw, opt.max_fill), opt);
      m.auto_picked_ = true;
      return m;
    }
    try {
      return convert_to(a, f, opt);
    } catch (const std::bad_alloc&) {
      // Host vectors and Kokkos allocations (RawMemoryAllocationFailure)
      // both land here: a typed error, nothing half-built left behind.
      throw OutOfMemoryError(std::string(format_name(f)) + ": conversion of a " + std::to_string(a.nrows) + " x " +
                             std::to_string(a.ncols) + " matrix with " + std::to_string(a.nnz()) +
                             " entries ran out of memory");
    }
  }

  // From a Kokkos Kernels matrix (copied through the host once).
  template <class CrsMatrixType>
  static Matrix from_kokkos_kernels(const CrsMatrixType& A, Format f, const ConvertOptions& opt = {}) {
    return convert(host_csr_from_kokkos_kernels(A), f, opt);
  }

 private:
  static Matrix convert_to(const HostCsr<Scalar>& a, Format f, const ConvertOptions& opt) {
    Matrix m;
    m.format_ = f;
    m.nrows_ = a.nrows;
    m.ncols_ = a.ncols;
    m.nnz_ = a.nnz();
    switch (f) {
#define KSPMV_CONVERT_CASE(E, name, builder, square_only, summary) \
  case Format::E: m.impl_ = hold(builder<Scalar, ExecSpace>(a, opt)); break;
      KSPMV_FORMAT_LIST(KSPMV_CONVERT_CASE)
#undef KSPMV_CONVERT_CASE
      case Format::Auto: break;  // handled in convert()
    }
    return m;
  }

 public:

  // y = alpha * A * x + beta * y on `space` (asynchronous, like any Kokkos
  // kernel: fence the space before reading y on the host).
  void apply(const ExecSpace& space, Scalar alpha, const const_vector_type& x, Scalar beta,
             const vector_type& y) const {
    if (!impl_) throw InvalidArgumentError("apply on an empty kspmv::Matrix");
    impl_->apply(space, alpha, x, beta, y);
  }
  void apply(Scalar alpha, const const_vector_type& x, Scalar beta, const vector_type& y) const {
    apply(ExecSpace(), alpha, x, beta, y);
  }

  bool empty() const { return !impl_; }
  Format format() const { return format_; }
  const char* name() const { return format_name(format_); }
  ordinal_t nrows() const { return nrows_; }
  ordinal_t ncols() const { return ncols_; }
  std::int64_t nnz() const { return nnz_; }
  std::size_t storage_bytes() const { return impl_ ? impl_->storage_bytes() : 0; }
  double conversion_seconds() const { return impl_ ? impl_->conversion_seconds() : 0.0; }
  Properties properties() const {
    Properties p = impl_ ? impl_->properties() : Properties{};
    if (auto_picked_) p.insert(p.begin(), {"picked_by", "model (format auto)"});
    return p;
  }
  // True when convert() was asked for Format::Auto; format() is the pick.
  bool auto_picked() const { return auto_picked_; }
  // Converted with OutputOrder::Internal by a format that reorders: row i
  // of y is row internal_order()[i] of A (and, where x_in_internal_order(),
  // x(i) must hold x[internal_order()[i]]). Empty: the caller's order.
  std::vector<ordinal_t> internal_order() const { return impl_ ? impl_->internal_order() : std::vector<ordinal_t>{}; }
  bool x_in_internal_order() const { return impl_ && impl_->in_internal_order() && impl_->permutes_x(); }

 private:
  template <class F>
  static std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> hold(F&& f) {
    return std::make_shared<detail::FormatHolder<Scalar, ExecSpace, F>>(std::forward<F>(f));
  }

  std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> impl_;
  Format format_ = Format::Csr;
  ordinal_t nrows_ = 0, ncols_ = 0;
  std::int64_t nnz_ = 0;
  bool auto_picked_ = false;
};

// Compiled once in the library for the default execution space.
extern template class Matrix<float, Kokkos::DefaultExecutionSpace>;
extern template class Matrix<double, Kokkos::DefaultExecutionSpace>;

}  // namespace kspmv
