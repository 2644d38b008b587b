// cuSPARSE as a peer: generic SpMV with CSR (ALG1, ALG2), COO and sliced
// ELL, on the same device vectors and stream as kspmv's formats.
#pragma once

#include <cusparse.h>

#include <Kokkos_Core.hpp>
#include <string>
#include <vector>

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

template <class Scalar>
class CusparsePeer {
  using Mem = Kokkos::CudaSpace;
  template <class T>
  using V = Kokkos::View<T*, Mem>;

 public:
  CusparsePeer(const kspmv::HostCsr<Scalar>& a, CusparseKind kind, cudaStream_t stream) : kind_(kind) {
    const cudaDataType vt = sizeof(Scalar) == 4 ? CUDA_R_32F : CUDA_R_64F;
    cusparse_check(cusparseCreate(&handle_), "cusparseCreate");
    cusparse_check(cusparseSetStream(handle_, stream), "cusparseSetStream");
    const int64_t nnz = a.nnz();
    storage_ = 0;
    if (kind == CusparseKind::CsrAlg1 || kind == CusparseKind::CsrAlg2) {
      a_i_ = up<int>(std::vector<int>(a.row_ptr.begin(), a.row_ptr.end()));
      a_j_ = up<int>(a.col_idx);
      a_v_ = up<Scalar>(a.values);
      cusparse_check(cusparseCreateCsr(&mat_, a.nrows, a.ncols, nnz, a_i_.data(), a_j_.data(), a_v_.data(),
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt),
                     "cusparseCreateCsr");
      alg_ = kind == CusparseKind::CsrAlg1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
    } else if (kind == CusparseKind::Coo) {
      std::vector<int> rows(static_cast<std::size_t>(nnz));
      for (int i = 0; i < a.nrows; ++i)
        for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) rows[k] = i;
      a_i_ = up<int>(rows);
      a_j_ = up<int>(a.col_idx);
      a_v_ = up<Scalar>(a.values);
      cusparse_check(cusparseCreateCoo(&mat_, a.nrows, a.ncols, nnz, a_i_.data(), a_j_.data(), a_v_.data(),
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt),
                     "cusparseCreateCoo");
      alg_ = CUSPARSE_SPMV_COO_ALG1;
    } else {
      // Sliced ELL, 32-row slices, column-major inside a slice, -1 padding.
      const int S = 32;
      const int nslices = (a.nrows + S - 1) / S;
      std::vector<int> offsets(static_cast<std::size_t>(nslices) + 1, 0);
      for (int s = 0; s < nslices; ++s) {
        std::int64_t w = 0;
        for (int i = s * S; i < std::min(a.nrows, (s + 1) * S); ++i) w = std::max(w, a.row_length(i));
        offsets[s + 1] = offsets[s] + static_cast<int>(w) * S;
      }
      std::vector<int> col(static_cast<std::size_t>(offsets.back()), -1);
      std::vector<Scalar> val(static_cast<std::size_t>(offsets.back()), Scalar(0));
      for (int s = 0; s < nslices; ++s)
        for (int i = s * S; i < std::min(a.nrows, (s + 1) * S); ++i)
          for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            const std::size_t pos = static_cast<std::size_t>(offsets[s] + (k - a.row_ptr[i]) * S + (i - s * S));
            col[pos] = a.col_idx[k];
            val[pos] = a.values[k];
          }
      a_i_ = up<int>(offsets);
      a_j_ = up<int>(col);
      a_v_ = up<Scalar>(val);
      cusparse_check(cusparseCreateSlicedEll(&mat_, a.nrows, a.ncols, nnz, offsets.back(), S, a_i_.data(),
                                             a_j_.data(), a_v_.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_BASE_ZERO, vt),
                     "cusparseCreateSlicedEll");
      alg_ = CUSPARSE_SPMV_SELL_ALG1;
    }
    storage_ = a_i_.span() * sizeof(int) + a_j_.span() * sizeof(int) + a_v_.span() * sizeof(Scalar);
    x_ = V<Scalar>("cusparse::x", a.ncols);
    y_ = V<Scalar>("cusparse::y", a.nrows);
    cusparse_check(cusparseCreateDnVec(&vx_, a.ncols, x_.data(), vt), "cusparseCreateDnVec");
    cusparse_check(cusparseCreateDnVec(&vy_, a.nrows, y_.data(), vt), "cusparseCreateDnVec");
    Scalar one = 1, zero = 0;
    std::size_t bytes = 0;
    cusparse_check(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_, vt,
                                           alg_, &bytes),
                   "cusparseSpMV_bufferSize");
    buffer_ = Kokkos::View<char*, Mem>("cusparse::buffer", bytes);
    storage_ += bytes;
    cusparse_check(cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, vx_, &zero, vy_, vt,
                                           alg_, buffer_.data()),
                   "cusparseSpMV_preprocess");
  }
  ~CusparsePeer() {
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

  void apply(Scalar alpha, Scalar beta) {
    const cudaDataType vt = sizeof(Scalar) == 4 ? CUDA_R_32F : CUDA_R_64F;
    cusparse_check(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_, vx_, &beta, vy_, vt, alg_,
                                buffer_.data()),
                   "cusparseSpMV");
  }

 private:
  template <class T>
  static V<T> up(const std::vector<T>& h) {
    V<T> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cusparse::array"), h.size());
    Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(h.data(), h.size());
    Kokkos::deep_copy(d, hv);
    return d;
  }

  CusparseKind kind_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
  cusparseSpMVAlg_t alg_ = CUSPARSE_SPMV_ALG_DEFAULT;
  V<int> a_i_, a_j_;
  V<Scalar> a_v_, x_, y_;
  Kokkos::View<char*, Mem> buffer_;
  std::size_t storage_ = 0;
};

}  // namespace kspmv_perf
