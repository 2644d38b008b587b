// kspmv::spmv: the call a Kokkos solver already makes.
//
//   KokkosSparse::spmv(space, handle, mode, alpha, A, X, beta, Y)
//   kspmv::spmv      (space, handle, mode, alpha, A, X, beta, Y)
//
// Y = alpha * op(A) * X + beta * Y, op(A) = A for mode "N" (and "C": the
// scalars are real), A^T for "T" (and "H"). X and Y are rank-1 or rank-2
// Kokkos::Views (LayoutLeft, LayoutRight or LayoutStride) in the matrix's
// memory space; rank-2 views hold one vector a column. beta == 0
// overwrites Y (NaN in it is not propagated), as in BLAS and Kokkos
// Kernels. Every call is asynchronous on `space`.
//
// The handle (SpmvHandle) owns the call's scratch: columns of LayoutRight
// and strided views are staged through it. Pass one handle per stream;
// without one, each such call allocates its own.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>
#include <type_traits>

#include "kspmv/core/error.hpp"
#include "kspmv/matrix.hpp"

namespace kspmv {

enum class Mode { N, T };

// "N", "C" -> N; "T", "H" -> T (real scalars); anything else is an
// InvalidArgumentError naming what was given.
inline Mode parse_mode(const char* mode) {
  if (mode != nullptr && mode[0] != '\0' && mode[1] == '\0') {
    switch (mode[0]) {
      case 'N':
      case 'C':
        return Mode::N;
      case 'T':
      case 'H':
        return Mode::T;
      default:
        break;
    }
  }
  throw InvalidArgumentError(std::string("kspmv::spmv: mode \"") + (mode ? mode : "(null)") +
                             "\" is not one of \"N\", \"T\", \"C\", \"H\"");
}

// What one stream's kspmv::spmv calls write besides Y, reused across
// calls: two n x k column blocks for views whose columns are not
// contiguous, a row-major one for fused kernels that gather rows of X
// (csr-merge on CUDA), and, for each matrix whose format keeps scratch (coo, hyb,
// pkt, csr-merge, evc-hyb with a gathered y), a copy of the format sharing its
// storage and values but with scratch of its own. So one Matrix applied
// on two streams at once, each with its handle, is correct. One handle
// serves one stream at a time; copy-free, it holds no matrix alive.
template <class Scalar, class ExecSpace>
class SpmvHandle {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using block_type = Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space>;

  // A block of at least rows x cols, LayoutLeft (its columns contiguous).
  block_type x_block(std::int64_t rows, std::int64_t cols) { return grow(x_, rows, cols, "kspmv::spmv::x_block"); }
  block_type y_block(std::int64_t rows, std::int64_t cols) { return grow(y_, rows, cols, "kspmv::spmv::y_block"); }
  // The row-major block X is copied into for fused kernels that gather
  // whole rows of X (Matrix::fused_block_wants_rows; detail::adjacent_rows
  // grows it).
  using row_block_type = Kokkos::View<Scalar**, Kokkos::LayoutRight, memory_space>;
  row_block_type& x_rows() { return x_rows_; }

  // y = alpha * m * x + beta * y with this handle's scratch.
  void apply(const ExecSpace& space, const Matrix<Scalar, ExecSpace>& m, Scalar alpha,
             const typename Matrix<Scalar, ExecSpace>::const_vector_type& x, Scalar beta,
             const typename Matrix<Scalar, ExecSpace>::vector_type& y) {
    if (m.empty()) throw InvalidArgumentError("apply on an empty kspmv::Matrix");
    format_for(m).apply(space, alpha, x, beta, y);
  }

  // Y = alpha * m * X + beta * Y in one pass where m's format has a fused
  // kernel (Matrix::apply_fused), with this handle's scratch; false
  // (nothing done) where it has none.
  bool apply_fused(const ExecSpace& space, const Matrix<Scalar, ExecSpace>& m, Scalar alpha,
                   const ConstBlockView<Scalar, memory_space>& X, Scalar beta,
                   const BlockView<Scalar, memory_space>& Y) {
    if (m.empty()) throw InvalidArgumentError("apply on an empty kspmv::Matrix");
    return format_for(m).apply_block(space, alpha, X, beta, Y);
  }

  // Device bytes the handle holds: its blocks and the formats' scratch.
  std::size_t scratch_bytes() const {
    std::size_t b = (x_.span() + y_.span() + x_rows_.span()) * sizeof(Scalar);
    for (const auto& o : own_) b += o.scratch_bytes;
    return b;
  }

 private:
  using format_type = detail::AnyFormat<Scalar, ExecSpace>;
  struct Own {
    std::weak_ptr<const format_type> of;      // the matrix's format
    std::shared_ptr<const format_type> copy;  // with this handle's scratch
    std::size_t scratch_bytes = 0;
  };

  const format_type& format_for(const Matrix<Scalar, ExecSpace>& m) {
    const auto& impl = m.impl_;
    // Formats of matrices since destroyed go (their scratch with them).
    own_.erase(std::remove_if(own_.begin(), own_.end(), [](const Own& o) { return o.of.expired(); }), own_.end());
    for (const auto& o : own_)
      if (o.of.lock() == impl) return o.copy ? *o.copy : *impl;
    Own o;
    o.of = impl;
    o.copy = impl->with_own_scratch();
    if (o.copy) o.scratch_bytes = o.copy->scratch_bytes();
    own_.push_back(o);
    return o.copy ? *o.copy : *impl;
  }

  static block_type grow(block_type& b, std::int64_t rows, std::int64_t cols, const char* label) {
    if (static_cast<std::int64_t>(b.extent(0)) < rows || static_cast<std::int64_t>(b.extent(1)) < cols)
      b = block_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), rows, cols);
    return Kokkos::subview(b, std::make_pair(std::int64_t(0), rows), std::make_pair(std::int64_t(0), cols));
  }
  block_type x_, y_;
  row_block_type x_rows_;
  std::vector<Own> own_;
};

namespace detail {

template <class View>
constexpr bool is_rank_1_or_2() {
  return View::rank == 1 || View::rank == 2;
}

// A view as rank 2 (a rank-1 view is one column), unmanaged.
template <class View>
auto as_rank_2(const View& v) {
  using T = typename View::value_type;
  using M = typename View::memory_space;
  using R2 = Kokkos::View<T**, Kokkos::LayoutStride, M, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if constexpr (View::rank == 1) {
    return R2(v.data(), Kokkos::LayoutStride(v.extent(0), v.stride(0), 1, v.extent(0) * v.stride(0)));
  } else {
    return R2(v.data(), Kokkos::LayoutStride(v.extent(0), v.stride(0), v.extent(1), v.stride(1)));
  }
}

// Sizes, the mode and whether X and Y share memory, checked before
// anything runs: a wrong call changes nothing.
template <class Scalar, class ExecSpace, class X, class Y>
void check_spmv_call(const Matrix<Scalar, ExecSpace>& A, Mode mode, const X& x, const Y& y) {
  if (A.empty()) throw InvalidArgumentError("kspmv::spmv on an empty kspmv::Matrix");
  const std::int64_t in = mode == Mode::N ? A.ncols() : A.nrows();
  const std::int64_t out = mode == Mode::N ? A.nrows() : A.ncols();
  const char* m = mode == Mode::N ? "\"N\"" : "\"T\"";
  if (static_cast<std::int64_t>(x.extent(0)) != in)
    throw InvalidArgumentError(std::string("kspmv::spmv mode ") + m + ": X has " + std::to_string(x.extent(0)) +
                               " rows, op(A) has " + std::to_string(in) + " columns");
  if (static_cast<std::int64_t>(y.extent(0)) != out)
    throw InvalidArgumentError(std::string("kspmv::spmv mode ") + m + ": Y has " + std::to_string(y.extent(0)) +
                               " rows, op(A) has " + std::to_string(out) + " rows");
  if (x.extent(1) != y.extent(1))
    throw InvalidArgumentError("kspmv::spmv: X has " + std::to_string(x.extent(1)) + " columns and Y " +
                               std::to_string(y.extent(1)));
  const char* xb = reinterpret_cast<const char*>(x.data());
  const char* xe = xb + x.span() * sizeof(Scalar);
  const char* yb = reinterpret_cast<const char*>(y.data());
  const char* ye = yb + y.span() * sizeof(Scalar);
  if (x.span() > 0 && y.span() > 0 && xb < ye && yb < xe)
    throw InvalidArgumentError("kspmv::spmv: X and Y overlap in memory; Y = alpha*op(A)*X + beta*Y needs distinct views");
}

// Column j of a rank-2 view as the contiguous rank-1 view the formats
// take, where it is contiguous.
template <class T, class M, class R2>
Kokkos::View<T*, Kokkos::LayoutLeft, M, Kokkos::MemoryTraits<Kokkos::Unmanaged>> column(const R2& v, std::int64_t j) {
  using C = Kokkos::View<T*, Kokkos::LayoutLeft, M, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  return C(v.data() + j * static_cast<std::int64_t>(v.stride(1)), v.extent(0));
}

// What the views' types must be, checked at compile time.
template <class Scalar, class ExecSpace, class XView, class YView>
constexpr void spmv_call_checks() {
  static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value, "X and Y must be Kokkos::Views");
  static_assert(detail::is_rank_1_or_2<XView>() && int(XView::rank) == int(YView::rank),
                "X and Y must both be rank 1 or both rank 2");
  static_assert(std::is_same<typename XView::non_const_value_type, Scalar>::value &&
                    std::is_same<typename YView::value_type, Scalar>::value,
                "X and Y must hold the matrix's scalar type, Y non-const");
  static_assert(std::is_same<typename XView::memory_space, typename ExecSpace::memory_space>::value &&
                    std::is_same<typename YView::memory_space, typename ExecSpace::memory_space>::value,
                "X and Y must live in the matrix's memory space");
}

template <class Scalar, class ExecSpace, class X, class Y>
void spmv_columns(const ExecSpace& space, SpmvHandle<Scalar, ExecSpace>& handle, bool handle_scratch, Mode mode,
                  Scalar alpha, const Matrix<Scalar, ExecSpace>& A, const X& x_in, Scalar beta, const Y& y_in) {
  using M = typename ExecSpace::memory_space;
  const auto x = as_rank_2(x_in);
  const auto y = as_rank_2(y_in);
  check_spmv_call(A, mode, x, y);
  const Matrix<Scalar, ExecSpace>& op = mode == Mode::N ? A : A.transposed(space);
  const std::int64_t k = x.extent(1);
  if (k == 0) return;
  // Several columns and a fused kernel: the matrix is read once for up to
  // kBlockColumns of them, X and Y in place whatever their strides.
  // A kernel that gathers whole rows of X gets them adjacent: a
  // column-major X is copied row-major first (k scalars a row of X read
  // and written once, against an X row gathered for every entry).
  if (k > 1) {
    const ConstBlockView<Scalar, M> xc = x;
    const ConstBlockView<Scalar, M> xf = op.fused_block_wants_rows() ? adjacent_rows(space, xc, handle.x_rows()) : xc;
    const bool fused = handle_scratch ? handle.apply_fused(space, op, alpha, xf, beta, y)
                                      : op.apply_fused(space, alpha, xf, beta, y);
    if (fused) return;
  }
  // Columns whose entries are not adjacent (LayoutRight with k > 1,
  // strided views) go through the handle's LayoutLeft blocks.
  const bool x_direct = x.stride(0) == 1;
  const bool y_direct = y.stride(0) == 1;
  Kokkos::View<const Scalar**, Kokkos::LayoutStride, M, Kokkos::MemoryTraits<Kokkos::Unmanaged>> xs = x;
  Kokkos::View<Scalar**, Kokkos::LayoutStride, M, Kokkos::MemoryTraits<Kokkos::Unmanaged>> ys = y;
  if (!x_direct) {
    auto b = handle.x_block(x.extent(0), k);
    copy_block(space, b, x);
    xs = b;
  }
  if (!y_direct) {
    auto b = handle.y_block(y.extent(0), k);
    if (beta != Scalar(0)) copy_block(space, b, y);
    ys = b;
  }
  for (std::int64_t j = 0; j < k; ++j) {
    const auto xj = column<const Scalar, M>(xs, j);
    const auto yj = column<Scalar, M>(ys, j);
    if (handle_scratch)
      handle.apply(space, op, alpha, xj, beta, yj);
    else
      op.apply(space, alpha, xj, beta, yj);
  }
  if (!y_direct) copy_block(space, y, ys);
}

}  // namespace detail

// Y = alpha * op(A) * X + beta * Y with the handle's scratch. Throws
// InvalidArgumentError (mode, sizes, X and Y overlapping, empty matrix)
// and UnsupportedError (mode "T" where the matrix keeps no transpose:
// ConvertOptions::transpose) before anything runs.
template <class Scalar, class ExecSpace, class AlphaType, class BetaType, class XView, class YView>
void spmv(const ExecSpace& space, SpmvHandle<Scalar, ExecSpace>& handle, const char mode[], const AlphaType& alpha,
          const Matrix<Scalar, ExecSpace>& A, const XView& X, const BetaType& beta, const YView& Y) {
  detail::spmv_call_checks<Scalar, ExecSpace, XView, YView>();
  detail::spmv_columns(space, handle, true, parse_mode(mode), static_cast<Scalar>(alpha), A, X,
                       static_cast<Scalar>(beta), Y);
}

// Without a handle: the matrix's own scratch, as Matrix::apply (one such
// call at a time per matrix where its format keeps scratch), and blocks
// allocated for this call where X or Y has columns that are not
// contiguous.
template <class Scalar, class ExecSpace, class AlphaType, class BetaType, class XView, class YView>
void spmv(const ExecSpace& space, const char mode[], const AlphaType& alpha, const Matrix<Scalar, ExecSpace>& A,
          const XView& X, const BetaType& beta, const YView& Y) {
  detail::spmv_call_checks<Scalar, ExecSpace, XView, YView>();
  SpmvHandle<Scalar, ExecSpace> blocks;
  detail::spmv_columns(space, blocks, false, parse_mode(mode), static_cast<Scalar>(alpha), A, X,
                       static_cast<Scalar>(beta), Y);
}

// On the matrix's default execution space instance.
template <class Scalar, class ExecSpace, class AlphaType, class BetaType, class XView, class YView>
void spmv(const char mode[], const AlphaType& alpha, const Matrix<Scalar, ExecSpace>& A, const XView& X,
          const BetaType& beta, const YView& Y) {
  spmv(ExecSpace(), mode, alpha, A, X, beta, Y);
}

}  // namespace kspmv
