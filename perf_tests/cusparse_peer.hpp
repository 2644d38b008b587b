// cuSPARSE as a peer: generic SpMV with CSR (ALG1, ALG2), COO and sliced
// ELL, on the same device vectors and stream as kspmv's formats.
#pragma once

#include <cusparse.h>

#include <Kokkos_Core.hpp>
#include <limits>
#include <string>
#include <vector>

#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/host_matrix.hpp"

namespace kspmv_perf {

inline void cusparse_check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw kspmv::Error(kspmv::ErrorCode::InvalidArgument, std::string(what) + ": " + cusparseGetErrorString(s));
}

enum class CusparseKind { CsrAlg1, CsrAlg2, Coo, SlicedEll };

inline const char* cusparse_name(CusparseKind k) {
  switch (k) {
    case CusparseKind::CsrAlg1: return "cusparse-csr-alg1";
    case CusparseKind::CsrAlg2: return "cusparse-csr-alg2";
    case CusparseKind::Coo: return "cusparse-coo";
    case CusparseKind::SlicedEll: return "cusparse-sell";
  }
  return "cusparse";
}

// The CSR's 64-bit offsets as cuSPARSE's 32-bit ones, on the device.
template <class RowPtr>
Kokkos::View<int*, Kokkos::CudaSpace> narrow_offsets(const RowPtr& rp) {
  Kokkos::View<int*, Kokkos::CudaSpace> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("cusparse::row_ptr")),
                                            rp.extent(0));
  Kokkos::parallel_for(
      "cusparse::narrow_offsets", Kokkos::RangePolicy<Kokkos::Cuda>(0, rp.extent(0)),
      KOKKOS_LAMBDA(const int i) { out(i) = static_cast<int>(rp(i)); });
  return out;
}

// COO's row index of every entry, from the CSR's offsets, on the device.
template <class RowPtr>
Kokkos::View<int*, Kokkos::CudaSpace> expand_rows(const RowPtr& rp, std::int64_t nnz) {
  Kokkos::View<int*, Kokkos::CudaSpace> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("cusparse::rows")),
                                            nnz);
  const int nrows = static_cast<int>(rp.extent(0)) - 1;
  Kokkos::parallel_for(
      "cusparse::expand_rows", Kokkos::RangePolicy<Kokkos::Cuda>(0, nrows), KOKKOS_LAMBDA(const int i) {
        for (auto k = rp(i); k < rp(i + 1); ++k) out(k) = i;
      });
  return out;
}

template <class Scalar>
class CusparsePeer {
  using Mem = Kokkos::CudaSpace;
  template <class T>
  using V = Kokkos::View<T*, Mem>;

 public:
  // CSR and COO are set up from the device CSR `d` (the same matrix as `a`,
  // as a solver that assembles on the device holds it): its arrays copied
  // on the device, COO's row indices expanded there. Sliced ELL has no
  // cuSPARSE conversion: it is built from `a` on the host and uploaded, as
  // a user would have to.
  // transposed: y = A^T x (x of A's rows, y of its columns).
  CusparsePeer(const kspmv::HostCsr<Scalar>& a, const kspmv::DeviceCsr<Scalar, Kokkos::Cuda>& d, CusparseKind kind,
               cudaStream_t stream, bool transposed = false)
      : kind_(kind), op_(transposed ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE) {
    const cudaDataType vt = sizeof(Scalar) == 4 ? CUDA_R_32F : CUDA_R_64F;
    cusparse_check(cusparseCreate(&handle_), "cusparseCreate");
    cusparse_check(cusparseSetStream(handle_, stream), "cusparseSetStream");
    const int64_t nnz = a.nnz();
    storage_ = 0;
    if (kind == CusparseKind::CsrAlg1 || kind == CusparseKind::CsrAlg2) {
      a_i_ = narrow_offsets(d.row_ptr);
      a_j_ = copy_of<int>(d.col_idx);
      a_v_ = copy_of<Scalar>(d.values);
      cusparse_check(cusparseCreateCsr(&mat_, a.nrows, a.ncols, nnz, a_i_.data(), a_j_.data(), a_v_.data(),
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt),
                     "cusparseCreateCsr");
      alg_ = kind == CusparseKind::CsrAlg1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
    } else if (kind == CusparseKind::Coo) {
      a_i_ = expand_rows(d.row_ptr, nnz);
      a_j_ = copy_of<int>(d.col_idx);
      a_v_ = copy_of<Scalar>(d.values);
      cusparse_check(cusparseCreateCoo(&mat_, a.nrows, a.ncols, nnz, a_i_.data(), a_j_.data(), a_v_.data(),
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt),
                     "cusparseCreateCoo");
      alg_ = CUSPARSE_SPMV_COO_ALG1;
    } else {
      const auto sell = sliced_ell(a);
      a_i_ = up<int>(sell.offsets);
      a_j_ = up<int>(sell.col);
      a_v_ = up<Scalar>(sell.val);
      cusparse_check(cusparseCreateSlicedEll(&mat_, a.nrows, a.ncols, nnz, sell.offsets.back(), kSlice, a_i_.data(),
                                             a_j_.data(), a_v_.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_BASE_ZERO, vt),
                     "cusparseCreateSlicedEll");
      alg_ = CUSPARSE_SPMV_SELL_ALG1;
    }
    storage_ = a_i_.span() * sizeof(int) + a_j_.span() * sizeof(int) + a_v_.span() * sizeof(Scalar);
    const std::int64_t nx = transposed ? a.nrows : a.ncols, ny = transposed ? a.ncols : a.nrows;
    x_ = V<Scalar>("cusparse::x", nx);
    y_ = V<Scalar>("cusparse::y", ny);
    cusparse_check(cusparseCreateDnVec(&vx_, nx, x_.data(), vt), "cusparseCreateDnVec");
    cusparse_check(cusparseCreateDnVec(&vy_, ny, y_.data(), vt), "cusparseCreateDnVec");
    Scalar one = 1, zero = 0;
    std::size_t bytes = 0;
    cusparse_check(cusparseSpMV_bufferSize(handle_, op_, &one, mat_, vx_, &zero, vy_, vt,
                                           alg_, &bytes),
                   "cusparseSpMV_bufferSize");
    buffer_ = Kokkos::View<char*, Mem>("cusparse::buffer", bytes);
    storage_ += bytes;
    cusparse_check(cusparseSpMV_preprocess(handle_, op_, &one, mat_, vx_, &zero, vy_, vt,
                                           alg_, buffer_.data()),
                   "cusparseSpMV_preprocess");
  }
  ~CusparsePeer() {
    spmm_release();
    cusparseDestroyDnVec(vx_);
    cusparseDestroyDnVec(vy_);
    cusparseDestroySpMat(mat_);
    cusparseDestroy(handle_);
  }
  CusparsePeer(const CusparsePeer&) = delete;
  CusparsePeer& operator=(const CusparsePeer&) = delete;

  // The peer's own vectors (cuSPARSE descriptors point at them).
  V<Scalar>& x() { return x_; }
  V<Scalar>& y() { return y_; }
  std::size_t storage_bytes() const { return storage_; }

  // New values of `a`'s pattern, as a cuSPARSE user gives them: CSR and
  // COO point the descriptor at the value array (here the same one, whose
  // contents a solver rewrites in place); sliced ELL has no value-only
  // update and is built again on the host and uploaded.
  void refresh(const kspmv::HostCsr<Scalar>& a) {
    if (kind_ == CusparseKind::CsrAlg1 || kind_ == CusparseKind::CsrAlg2) {
      cusparse_check(cusparseCsrSetPointers(mat_, a_i_.data(), a_j_.data(), a_v_.data()), "cusparseCsrSetPointers");
    } else if (kind_ == CusparseKind::Coo) {
      cusparse_check(cusparseCooSetPointers(mat_, a_i_.data(), a_j_.data(), a_v_.data()), "cusparseCooSetPointers");
    } else {
      const auto sell = sliced_ell(a);
      Kokkos::deep_copy(a_j_, Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                  sell.col.data(), sell.col.size()));
      Kokkos::deep_copy(a_v_, Kokkos::View<const Scalar*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                  sell.val.data(), sell.val.size()));
    }
  }

  // SpMM (CSR kinds only): Y = A X for k columns of one x, X and Y dense,
  // column-major (ld = rows) or row-major (ld = k) as the algorithm asks.
  // False where cuSPARSE refuses the algorithm for this matrix or layout.
  bool spmm_setup(int k, cusparseSpMMAlg_t alg, bool row_major, const std::vector<Scalar>& hx) {
    spmm_release();
    if (kind_ != CusparseKind::CsrAlg1 && kind_ != CusparseKind::CsrAlg2) return false;
    const cudaDataType vt = sizeof(Scalar) == 4 ? CUDA_R_32F : CUDA_R_64F;
    const std::int64_t nx = static_cast<std::int64_t>(x_.extent(0)), ny = static_cast<std::int64_t>(y_.extent(0));
    std::vector<Scalar> h(static_cast<std::size_t>(nx * k));
    for (std::int64_t i = 0; i < nx; ++i)
      for (int j = 0; j < k; ++j) h[row_major ? i * k + j : j * nx + i] = hx[static_cast<std::size_t>(i)];
    mx_ = up<Scalar>(h);
    my_ = V<Scalar>("cusparse::Y", ny * k);
    const auto order = row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
    spmm_k_ = k;
    spmm_row_major_ = row_major;
    spmm_alg_ = alg;
    if (cusparseCreateDnMat(&dx_, nx, k, row_major ? k : nx, mx_.data(), vt, order) != CUSPARSE_STATUS_SUCCESS ||
        cusparseCreateDnMat(&dy_, ny, k, row_major ? k : ny, my_.data(), vt, order) != CUSPARSE_STATUS_SUCCESS)
      return false;
    Scalar one = 1, zero = 0;
    std::size_t bytes = 0;
    if (cusparseSpMM_bufferSize(handle_, op_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, dx_, &zero, dy_, vt, alg,
                                &bytes) != CUSPARSE_STATUS_SUCCESS)
      return false;
    spmm_buffer_ = Kokkos::View<char*, Mem>("cusparse::spmm_buffer", bytes);
    if (cusparseSpMM_preprocess(handle_, op_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, dx_, &zero, dy_, vt, alg,
                                spmm_buffer_.data()) != CUSPARSE_STATUS_SUCCESS)
      return false;
    return true;
  }
  void spmm_apply() {
    const cudaDataType vt = sizeof(Scalar) == 4 ? CUDA_R_32F : CUDA_R_64F;
    Scalar one = 1, zero = 0;
    cusparse_check(cusparseSpMM(handle_, op_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, dx_, &zero, dy_, vt,
                                spmm_alg_, spmm_buffer_.data()),
                   "cusparseSpMM");
  }
  // Column j of the last SpMM's Y.
  std::vector<Scalar> spmm_column(int j) const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), my_);
    const std::int64_t ny = static_cast<std::int64_t>(y_.extent(0));
    std::vector<Scalar> c(static_cast<std::size_t>(ny));
    for (std::int64_t i = 0; i < ny; ++i) c[i] = h(spmm_row_major_ ? i * spmm_k_ + j : j * ny + i);
    return c;
  }
  void spmm_release() {
    if (dx_) cusparseDestroyDnMat(dx_);
    if (dy_) cusparseDestroyDnMat(dy_);
    dx_ = dy_ = nullptr;
  }

  void apply(Scalar alpha, Scalar beta) {
    const cudaDataType vt = sizeof(Scalar) == 4 ? CUDA_R_32F : CUDA_R_64F;
    cusparse_check(cusparseSpMV(handle_, op_, &alpha, mat_, vx_, &beta, vy_, vt, alg_,
                                buffer_.data()),
                   "cusparseSpMV");
  }

 private:
  // Sliced ELL, kSlice-row slices, column-major inside a slice, -1 padding.
  static constexpr int kSlice = 32;
  struct SlicedEll {
    std::vector<int> offsets, col;
    std::vector<Scalar> val;
  };
  static SlicedEll sliced_ell(const kspmv::HostCsr<Scalar>& a) {
    const int S = kSlice;
    const int nslices = (a.nrows + S - 1) / S;
    SlicedEll e;
    e.offsets.assign(static_cast<std::size_t>(nslices) + 1, 0);
    // Its offsets are 32-bit (CUSPARSE_INDEX_32I): a matrix whose padded
    // slices pass them (a power-law graph's hubs, each padding its slice
    // to its own length) is refused, not wrapped around.
    std::int64_t slots = 0;
    for (int s = 0; s < nslices; ++s) {
      std::int64_t w = 0;
      for (int i = s * S; i < std::min(a.nrows, (s + 1) * S); ++i) w = std::max(w, a.row_length(i));
      slots += w * S;
      if (slots > std::numeric_limits<int>::max())
        throw kspmv::FormatCannotHoldError("cusparse-sell: its padded slices pass 2^31 - 1 slots (32-bit offsets); " +
                                           std::to_string(a.nnz()) + " nonzeros");
      e.offsets[s + 1] = static_cast<int>(slots);
    }
    e.col.assign(static_cast<std::size_t>(e.offsets.back()), -1);
    e.val.assign(static_cast<std::size_t>(e.offsets.back()), Scalar(0));
    for (int s = 0; s < nslices; ++s)
      for (int i = s * S; i < std::min(a.nrows, (s + 1) * S); ++i)
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
          const std::size_t pos = static_cast<std::size_t>(e.offsets[s] + (k - a.row_ptr[i]) * S + (i - s * S));
          e.col[pos] = a.col_idx[k];
          e.val[pos] = a.values[k];
        }
    return e;
  }

  template <class T, class View>
  static V<T> copy_of(const View& v) {
    V<T> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("cusparse::array")), v.extent(0));
    Kokkos::deep_copy(d, v);
    return d;
  }

  template <class T>
  static V<T> up(const std::vector<T>& h) {
    V<T> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cusparse::array"), h.size());
    Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(h.data(), h.size());
    Kokkos::deep_copy(d, hv);
    return d;
  }

  CusparseKind kind_;
  cusparseOperation_t op_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
  cusparseSpMVAlg_t alg_ = CUSPARSE_SPMV_ALG_DEFAULT;
  V<int> a_i_, a_j_;
  V<Scalar> a_v_, x_, y_;
  Kokkos::View<char*, Mem> buffer_;
  std::size_t storage_ = 0;
  cusparseDnMatDescr_t dx_ = nullptr, dy_ = nullptr;
  V<Scalar> mx_, my_;
  Kokkos::View<char*, Mem> spmm_buffer_;
  int spmm_k_ = 0;
  bool spmm_row_major_ = false;
  cusparseSpMMAlg_t spmm_alg_ = CUSPARSE_SPMM_ALG_DEFAULT;
};

}  // namespace kspmv_perf
