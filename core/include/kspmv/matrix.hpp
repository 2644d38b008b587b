// kspmv::Matrix: one matrix, any format chosen at run time.
//
// Like Morpheus' DynamicMatrix or Ginkgo's LinOp: convert a HostCsr once
// into the format a program names (`--format evc-hyb`), then apply it as
// often as a solver needs. Every format plugs in through the contract in
// docs/ARCHITECTURE.md: a struct of Kokkos::Views built by a named
// conversion, and a free `spmv(space, alpha, A, x, beta, y)`.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/backends/kk_crs.hpp"
#include "kspmv/core/format.hpp"
#include "kspmv/core/model.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/formats/coo.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/formats/csr_scalar.hpp"
#include "kspmv/formats/csr_vector.hpp"
#include "kspmv/formats/csr_adaptive.hpp"
#include "kspmv/formats/evc_hyb.hpp"
#include "kspmv/formats/ehyb.hpp"
#include "kspmv/formats/dia.hpp"
#include "kspmv/formats/ell.hpp"
#include "kspmv/formats/ellr.hpp"
#include "kspmv/formats/jad.hpp"
#include "kspmv/formats/pellr.hpp"
#include "kspmv/formats/hyb.hpp"
#include "kspmv/formats/pkt.hpp"

namespace kspmv {

// Name/value pairs a format reports about itself (vector length, split...).
using Properties = std::vector<std::pair<std::string, std::string>>;

namespace detail {

inline std::string kernel_name(KernelPath k, bool has_tuned) {
#if KSPMV_ENABLE_CUDA
  if (has_tuned && k == KernelPath::Auto) return "cuda-tuned";
#else
  (void)has_tuned;
  (void)k;
#endif
  return "portable";
}

template <class Scalar, class ExecSpace, CsrKernel Kind>
Properties format_properties(const CsrDeviceT<Scalar, ExecSpace, Kind>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>() && Kind != CsrKernel::Portable)},
          {"vector_length", std::to_string(f.vector_length)},
          {"rows_per_team", std::to_string(f.rows_per_team)}};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const KkCrs<Scalar, ExecSpace>&) {
  return {};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const DiaDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"diagonals", std::to_string(f.ndiag)},
          {"fill", std::to_string(f.nnz ? double(f.ndiag) * f.pitch / double(f.nnz) : 0.0)}};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const EllDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"width", std::to_string(f.width)},
          {"fill", std::to_string(f.nnz ? double(f.width) * f.padded_rows / double(f.nnz) : 0.0)}};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const CooDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"chunk", std::to_string(f.chunk)},
          {"rows_spanning_chunks", std::to_string(f.nspan)},
          {"empty_rows", std::to_string(f.nempty)}};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const HybDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.ell.kernel, on_cuda<ExecSpace>())},
          {"k", std::to_string(f.k())},
          {"k_rule", f.k_rule},
          {"ell_nnz", std::to_string(f.ell.nnz)},
          {"coo_nnz", std::to_string(f.coo.nnz)}};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const PktDevice<Scalar, ExecSpace>& f) {
  Properties p = pkt_properties(f);
  p.insert(p.begin(), {"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())});
  return p;
}
template <class Scalar, class ExecSpace>
Properties format_properties(const EllrDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.ell.kernel, on_cuda<ExecSpace>())},
          {"width", std::to_string(f.ell.width)},
          {"n_iter", std::to_string(f.iterations.n_iter)},
          {"n_p", std::to_string(f.iterations.n_p)}};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const PellrDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"slices", std::to_string(f.nslices)},
          {"sorted", f.sorted ? "yes" : "no"},
          {"n_iter", std::to_string(f.pellr_iterations.n_iter)},
          {"n_iter_ellr", std::to_string(f.ellr_iterations.n_iter)},
          {"n_p", std::to_string(f.pellr_iterations.n_p)},
          {"order", f.order == OutputOrder::Caller ? "caller" : "internal"}};
}
template <class Scalar, class ExecSpace>
Properties format_properties(const JadDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", "portable"},
          {"jagged_diagonals", std::to_string(f.ndiag)},
          {"order", f.order == OutputOrder::Caller ? "caller" : "internal"}};
}

template <class Scalar, class ExecSpace>
Properties format_properties(const CsrAdaptiveDevice<Scalar, ExecSpace>& f) {
  std::string tpr;
  for (const auto& r : f.host_ranges) tpr += (tpr.empty() ? "" : ",") + std::to_string(r.tpr) + ":" + std::to_string(r.end - r.begin);
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())}, {"ranges (tpr:rows)", tpr}};
}
inline std::string percent(double part, double whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return b;
}
template <class Scalar, class ExecSpace>
Properties format_properties(const EvcHybDevice<Scalar, ExecSpace>& f) {
  const auto& r = f.report;
  const double slots = double(r.ell_slots + r.vcsr_slots);
  char bal[64];
  std::snprintf(bal, sizeof bal, "%.3f (alpha %.3f, beta %.4f)", r.roofline.balance(), r.roofline.alpha,
                r.roofline.beta);
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"split", std::to_string(f.split)},
          {"isplit", std::to_string(r.isplit)},
          {"nnz_ell", std::to_string(r.ell_slots)},
          {"pct_ell", percent(double(r.ell_slots), slots)},
          {"nnz_vcsr", std::to_string(r.vcsr_slots)},
          {"pct_vcsr", percent(double(r.vcsr_slots), slots)},
          {"pct_padding", percent(double(r.padding), double(f.nnz))},
          {"ell_blocks", std::to_string(r.ell_blocks)},
          {"ell_max_lanes", std::to_string(r.ell_max_lanes)},
          {"csr_ranges", std::to_string(r.csr_ranges)},
          {"code_balance_bytes_per_flop", bal},
          {"order", f.order == OutputOrder::Caller ? (f.gather_y ? "caller (gathered)" : "caller") : "internal"}};
}

template <class Scalar, class ExecSpace>
Properties format_properties(const EhybDevice<Scalar, ExecSpace>& f) {
  const auto& r = f.report;
  char b[64];
  std::snprintf(b, sizeof b, "%.2f (CSR: %.2f)", r.bytes_per_nonzero, r.csr_bytes_per_nonzero);
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"partitioner", r.partitioner},
          {"parts", std::to_string(r.parts)},
          {"k_times_p", std::to_string(r.k) + " x " + std::to_string(r.processors)},
          {"window_rows", std::to_string(r.window_rows)},
          {"parts_per_sm", std::to_string(r.parts_per_sm)},
          {"shared_bytes", std::to_string(r.shared_bytes)},
          {"pct_cached", percent(double(r.ell_nnz), double(f.nnz))},
          {"er_rows", std::to_string(r.er_rows)},
          {"er", f.er_inline ? "inline" : "separate"},
          {"er_padded_slices", std::to_string(r.er_padded_slices)},
          {"er_inline_vs_separate_bytes", std::to_string(r.er_separate_bytes > 0 ? r.er_inline_bytes / r.er_separate_bytes : 0.0)},
          {"long_rows", std::to_string(r.long_rows)},
          {"padding", percent(double(r.ell_slots + r.er_slots - f.nnz), double(f.nnz))},
          {"bytes_per_nonzero", b},
          {"partition_seconds", std::to_string(r.partition_seconds)},
          {"reorder_seconds", std::to_string(r.reorder_seconds)},
          {"order", f.order == OutputOrder::Caller ? "caller" : "internal"}};
}

// Formats that renumber columns as well as rows (square only): in the
// internal order they take x in that order too.
template <class F>
struct permutes_x : std::false_type {};
template <class S, class E>
struct permutes_x<PktDevice<S, E>> : std::true_type {};
template <class S, class E>
struct permutes_x<EhybDevice<S, E>> : std::true_type {};

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
      case Format::Csr: m.impl_ = hold(to_csr_device<Scalar, ExecSpace>(a, opt)); break;
      case Format::KkCrs: m.impl_ = hold(to_kk_crs<Scalar, ExecSpace>(a, opt)); break;
      case Format::Dia: m.impl_ = hold(to_dia<Scalar, ExecSpace>(a, opt)); break;
      case Format::Ell: m.impl_ = hold(to_ell<Scalar, ExecSpace>(a, opt)); break;
      case Format::CsrScalar: m.impl_ = hold(to_csr_scalar<Scalar, ExecSpace>(a, opt)); break;
      case Format::CsrVector: m.impl_ = hold(to_csr_vector<Scalar, ExecSpace>(a, opt)); break;
      case Format::Coo: m.impl_ = hold(to_coo_device<Scalar, ExecSpace>(a, opt)); break;
      case Format::Hyb: m.impl_ = hold(to_hyb<Scalar, ExecSpace>(a, opt)); break;
      case Format::Pkt: m.impl_ = hold(to_pkt<Scalar, ExecSpace>(a, opt)); break;
      case Format::Ellr: m.impl_ = hold(to_ellr<Scalar, ExecSpace>(a, opt)); break;
      case Format::Pellr: m.impl_ = hold(to_pellr<Scalar, ExecSpace>(a, opt)); break;
      case Format::Jad: m.impl_ = hold(to_jad<Scalar, ExecSpace>(a, opt)); break;
      case Format::CsrAdaptive: m.impl_ = hold(to_csr_adaptive<Scalar, ExecSpace>(a, opt)); break;
      case Format::EvcHyb: m.impl_ = hold(to_evc_hyb<Scalar, ExecSpace>(a, opt)); break;
      case Format::Ehyb: m.impl_ = hold(to_ehyb<Scalar, ExecSpace>(a, opt)); break;
      case Format::Auto: break;  // handled above
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
