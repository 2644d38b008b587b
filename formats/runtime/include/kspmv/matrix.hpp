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
#include "kspmv/core/value_map.hpp"
#include "kspmv/core/device_util.hpp"
#include <Kokkos_Timer.hpp>
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
  // The value map the conversion kept (invalid: none kept).
  virtual const ValueMap<Scalar, ExecSpace>& value_map() const = 0;
  // Writes values (the CSR order of the conversion) into the format.
  virtual void scatter_values(const ExecSpace& space, const const_vector_type& values) const = 0;
};

template <class Scalar, class ExecSpace, class F>
struct FormatHolder final : AnyFormat<Scalar, ExecSpace> {
  using base = AnyFormat<Scalar, ExecSpace>;
  F f;
  ValueMap<Scalar, ExecSpace> map;
  explicit FormatHolder(F&& x, ValueMap<Scalar, ExecSpace> m = {}) : f(std::move(x)), map(std::move(m)) {}
  const ValueMap<Scalar, ExecSpace>& value_map() const override { return map; }
  void scatter_values(const ExecSpace& space, const typename base::const_vector_type& values) const override {
    map.scatter(space, values, value_views(f));
  }
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
    Kokkos::Timer timer;
    Matrix m;
    m.format_ = f;
    m.nrows_ = a.nrows;
    m.ncols_ = a.ncols;
    m.nnz_ = a.nnz();
    switch (f) {
#define KSPMV_CONVERT_CASE(E, name, builder, square_only, summary)                                           \
  case Format::E:                                                                                              \
    m.impl_ = build(a, opt, name, [](const HostCsr<Scalar>& h, const ConvertOptions& o) { return builder<Scalar, ExecSpace>(h, o); }); \
    break;
      KSPMV_FORMAT_LIST(KSPMV_CONVERT_CASE)
#undef KSPMV_CONVERT_CASE
      case Format::Auto: break;  // handled in convert()
    }
    ExecSpace().fence();
    m.conversion_seconds_ = timer.seconds();
    return m;
  }

  // The pattern phase builds the format from the tagged pattern, the value
  // phase scatters a's values through the map read off it
  // (kspmv/core/value_map.hpp); with opt.value_map off, the format is built
  // from a's values directly and keeps no map.
  template <class Build>
  static std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> build(const HostCsr<Scalar>& a,
                                                                           const ConvertOptions& opt, const char* name,
                                                                           const Build& build_format) {
    if (!opt.value_map) return hold(build_format(a, opt));
    auto f = build_format(tagged_pattern(a), opt);
    ExecSpace space;
    const auto views = detail::value_views(f);
    auto map = ValueMap<Scalar, ExecSpace>::from_tags(space, views, a.nnz(), name);
    const auto values = detail::upload<Scalar, memory_space>(a.values, "kspmv::values");
    map.scatter(space, values, views);
    return hold(std::move(f), std::move(map));
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
  // Wall time of the whole conversion (device fenced): the format's own
  // build and the value phase.
  double conversion_seconds() const { return conversion_seconds_; }
  // Device bytes of the value map that update_values() uses (4 a nonzero;
  // 0 for formats that keep the CSR order, and without a map).
  std::size_t value_map_bytes() const { return impl_ ? impl_->value_map().bytes() : 0; }
  // Whether update_values() can refresh this matrix (a value map was kept:
  // ConvertOptions::value_map).
  bool refreshable() const { return impl_ && impl_->value_map().valid(); }

  // New values for the same pattern: `values` holds nnz() entries in the
  // CSR order the matrix was converted from, on the device. Every format
  // is updated in place by one kernel on `space` (asynchronous, like
  // apply; no allocation, no host work), and then holds the same bits as a
  // fresh conversion of those values. Order it against applies on other
  // streams yourself. Copies of this Matrix share its storage and see the
  // new values too. Throws InvalidArgumentError (wrong length, empty
  // matrix) or UnsupportedError (converted without a value map), with
  // nothing changed.
  void update_values(const ExecSpace& space, const const_vector_type& values) {
    if (!impl_) throw InvalidArgumentError("update_values on an empty kspmv::Matrix");
    if (static_cast<std::int64_t>(values.extent(0)) != nnz_)
      throw InvalidArgumentError(std::string(name()) + " update_values: " + std::to_string(values.extent(0)) +
                                 " values for a matrix of " + std::to_string(nnz_) + " entries");
    if (!refreshable())
      throw UnsupportedError(std::string(name()) +
                             " update_values: converted with ConvertOptions::value_map off, so no value map was kept");
    impl_->scatter_values(space, values);
  }
  void update_values(const const_vector_type& values) { update_values(ExecSpace(), values); }
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
  static std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> hold(F&& f, ValueMap<Scalar, ExecSpace> map = {}) {
    return std::make_shared<detail::FormatHolder<Scalar, ExecSpace, std::decay_t<F>>>(std::forward<F>(f), std::move(map));
  }

  std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> impl_;
  Format format_ = Format::Csr;
  ordinal_t nrows_ = 0, ncols_ = 0;
  std::int64_t nnz_ = 0;
  double conversion_seconds_ = 0;
  bool auto_picked_ = false;
};

// Compiled once in the library for the default execution space.
extern template class Matrix<float, Kokkos::DefaultExecutionSpace>;
extern template class Matrix<double, Kokkos::DefaultExecutionSpace>;

}  // namespace kspmv
