// HYB (Bell & Garland §3.5, §4.5): the first K entries of every row in ELL,
// the rest of the long rows in COO. By default K follows the paper's rule:
// add an ELL column K while at least one third of the rows have K or more
// entries (ELL being about three times faster than COO per entry). The
// caller may set K (ConvertOptions::hyb_k); the performance model will.
#pragma once

#include "kspmv/core/properties.hpp"
#include "kspmv/formats/coo.hpp"
#include "kspmv/model/model.hpp"
#include "kspmv/formats/ell.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct HybDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "hyb";

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  EllDevice<Scalar, ExecSpace> ell;
  CooDevice<Scalar, ExecSpace> coo;
  double conversion_seconds = 0;

  std::string k_rule;  // how K was chosen
  std::int64_t k() const { return ell.width; }
  std::size_t storage_bytes() const { return ell.storage_bytes() + coo.storage_bytes(); }
};

// The 1/3 rule on a row-length histogram: the largest K with
// #{rows with >= K entries} >= nrows / 3.
inline std::int64_t hyb_k_one_third_rule(const std::vector<std::int64_t>& lengths) {
  if (lengths.empty()) return 0;
  std::int64_t maxlen = 0;
  for (auto l : lengths) maxlen = std::max(maxlen, l);
  std::vector<std::int64_t> at_least(static_cast<std::size_t>(maxlen) + 2, 0);
  for (auto l : lengths) ++at_least[l];
  for (std::int64_t k = maxlen - 1; k >= 0; --k) at_least[k] += at_least[k + 1];
  const std::int64_t n = static_cast<std::int64_t>(lengths.size());
  std::int64_t K = 0;
  while (K < maxlen && at_least[K + 1] * 3 >= n) ++K;
  return K;
}

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
HybDevice<Scalar, ExecSpace> to_hyb(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  HybDevice<Scalar, ExecSpace> h;
  h.nrows = a.nrows;
  h.ncols = a.ncols;
  h.nnz = a.nnz();
  const auto lengths = row_lengths(a);
  std::int64_t maxlen = 0;
  for (auto l : lengths) maxlen = std::max(maxlen, l);
  // A K past the longest row would only add padding.
  std::int64_t K;
  if (opt.hyb_k >= 0) {
    K = opt.hyb_k;
    h.k_rule = "given";
  } else if (opt.hyb_k == kHybKModel || opt.hyb_k == kHybKPaper) {
    // pmf-model Algorithm 2: the K minimising the HYB estimate over
    // [E(X), max row length]: the traffic model's or the paper's eq. (50).
    const int tau = static_cast<int>(sizeof(Scalar));
    const auto& hw = default_model();
    if (opt.hyb_k == kHybKModel) {
      K = model_hyb_k(pattern_stats(a, tau), tau, hw);
      h.k_rule = "model";
    } else {
      K = paper_hyb_k(row_length_stats(lengths, a.ncols), tau, hw);
      h.k_rule = "paper eq. 50";
    }
  } else if (opt.hyb_k == kHybKOneThird) {
    K = hyb_k_one_third_rule(lengths);
    h.k_rule = "one third";
  } else {
    throw InvalidArgumentError("hyb: hyb_k = " + std::to_string(opt.hyb_k) +
                               " (give K >= 0, or kHybKOneThird, kHybKModel, kHybKPaper)");
  }
  K = std::min(maxlen, K);
  h.ell = detail::build_ell<Scalar, ExecSpace>(a, K, opt);
  std::vector<ordinal_t> rows, cols;
  std::vector<Scalar> vals;
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (offset_t k = a.row_ptr[i] + K; k < a.row_ptr[i + 1]; ++k) {
      rows.push_back(i);
      cols.push_back(a.col_idx[k]);
      vals.push_back(a.values[k]);
    }
  h.coo = detail::build_coo<Scalar, ExecSpace>(a.nrows, a.ncols, rows, cols, vals, opt);
  ExecSpace().fence();
  h.conversion_seconds = timer.seconds();
  return h;
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const HybDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "hyb", A.nrows, A.ncols, alpha, x, beta, y)) return;
  // The ELL part covers every row (with width 0 it just applies beta);
  // the COO part then adds the long rows' remainders.
  detail::ell_apply(space, alpha, A.ell, x, beta, y);
  if (A.coo.nnz > 0) detail::coo_apply(space, alpha, A.coo, x, Scalar(1), y);
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp).
template <class Scalar, class ExecSpace>
std::vector<Kokkos::View<Scalar*, typename ExecSpace::memory_space>> value_views(const HybDevice<Scalar, ExecSpace>& f) {
  return {f.ell.values, f.coo.val};
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const HybDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.ell.kernel, on_cuda<ExecSpace>())},
          {"k", std::to_string(f.k())},
          {"k_rule", f.k_rule},
          {"ell_nnz", std::to_string(f.ell.nnz)},
          {"coo_nnz", std::to_string(f.coo.nnz)}};
}
}  // namespace detail

}  // namespace kspmv
