// HYB (Bell & Garland §3.5, §4.5): the first K entries of every row in ELL,
// the rest of the long rows in COO. By default K follows the paper's rule:
// add an ELL column K while at least one third of the rows have K or more
// entries (ELL being about three times faster than COO per entry). The
// caller may set K (ConvertOptions::hyb_k); the performance model will.
#pragma once

#include <tuple>
#include <utility>

#include "kspmv/core/device_scan.hpp"
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
  // Where each row's entries past the ELL start in the COO part (nrows +
  // 1): what a refresh walks by (slot_walk).
  Kokkos::View<const offset_t*, memory_space> coo_row_start;
  detail::KeptBlocks<memory_space> storage;  // what coo_row_start is taken from (FormatArrays)
  std::int64_t longest = 0;  // the longest row
  double conversion_seconds = 0;

  std::string k_rule;  // how K was chosen
  std::int64_t k() const { return ell.width; }
  std::size_t storage_bytes() const {
    return ell.storage_bytes() + coo.storage_bytes() + coo_row_start.span() * sizeof(offset_t);
  }
};

// The 1/3 rule on a row-length histogram (rows_of_length[l]: rows of l
// entries): the largest K with #{rows with >= K entries} >= nrows / 3.
inline std::int64_t hyb_k_one_third_rule_of_counts(std::vector<std::int64_t> rows_of_length) {
  if (rows_of_length.empty()) return 0;
  const std::int64_t maxlen = static_cast<std::int64_t>(rows_of_length.size()) - 1;
  std::int64_t n = 0;
  for (auto c : rows_of_length) n += c;
  // at_least[k]: rows with k or more entries.
  std::vector<std::int64_t>& at_least = rows_of_length;
  at_least.push_back(0);
  for (std::int64_t k = maxlen - 1; k >= 0; --k) at_least[k] += at_least[k + 1];
  std::int64_t K = 0;
  while (K < maxlen && at_least[K + 1] * 3 >= n) ++K;
  return K;
}
// The same on the row lengths.
inline std::int64_t hyb_k_one_third_rule(const std::vector<std::int64_t>& lengths) {
  if (lengths.empty()) return 0;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end())) + 1, 0);
  for (auto l : lengths) ++counts[static_cast<std::size_t>(l)];
  return hyb_k_one_third_rule_of_counts(std::move(counts));
}

namespace detail {
// Rows [rp(i) + K, rp(i + 1)) of `a`, the entries past an ELL of width K,
// as HYB's COO part, written straight into its views in one pass (a thread
// a row segment writing row, column and value), with its chunk lists but
// no list of empty rows (HYB applies it with beta = 1). The offsets of its
// rows into it are taken from `arrays` (HYB keeps them: its slot walk and
// refresh read them).
template <class Scalar, class ExecSpace>
std::pair<CooDevice<Scalar, ExecSpace>, Kokkos::View<offset_t*, typename ExecSpace::memory_space>> coo_past_width(
    const ExecSpace& space, const DeviceCsr<Scalar, ExecSpace>& a, std::int64_t K, std::int64_t longest,
    const ConvertOptions& opt, FormatArrays<ExecSpace>& arrays) {
  const auto rp = arrays.template take<offset_t>("kspmv::hyb::tail_row_ptr", a.row_ptr.extent(0));
  const auto src = a.row_ptr;
  std::int64_t total = 0;
  {
    ScratchSet<ExecSpace> temps(space);
    kspmv::detail::scan(
        "kspmv::hyb::tail_offsets", Kokkos::RangePolicy<ExecSpace>(space, 0, a.nrows + 1),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
          if (final) rp(i) = sum;
          if (i < std::int64_t(src.extent(0)) - 1) {
            const std::int64_t len = src(i + 1) - src(i);
            sum += len > K ? len - K : 0;
          }
        },
        total, &temps);
  }
  FormatArrays<ExecSpace> coo_arrays(space);
  auto c = coo_shell<Scalar, ExecSpace>(a.nrows, a.ncols, total, opt, coo_arrays);
  const auto row = c.row;
  const auto col = c.col;
  const auto val = c.val;
  const auto acol = detail::read_only(a.col_idx);
  const auto aval = detail::read_only(a.values);
  // Row i's entries from its K-th on, from rp(i).
  if (total > 0)
    detail::for_each_row_segment(
        space, "kspmv::hyb::tail_fill", a.nrows, longest - K,
        KOKKOS_LAMBDA(const std::int64_t i) {
          return std::int64_t(src(i)) + K < std::int64_t(src(i + 1)) ? std::int64_t(src(i)) + K
                                                                     : std::int64_t(src(i + 1));
        },
        KOKKOS_LAMBDA(const std::int64_t i) { return std::int64_t(src(i + 1)); },
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t k0, const std::int64_t k1) {
          const std::int64_t out = rp(i) + (k0 - std::int64_t(src(i)) - K);
          for (std::int64_t k = k0; k < k1; ++k) {
            row(out + (k - k0)) = static_cast<int>(i);
            col(out + (k - k0)) = acol(k);
            val(out + (k - k0)) = aval(k);
          }
        });
  coo_chunk_lists(space, c, Kokkos::View<const offset_t*, typename ExecSpace::memory_space>(rp), false, coo_arrays);
  c.storage = coo_arrays.kept();
  return {c, rp};
}
}  // namespace detail

// On the device: the ELL part as ell builds it, the rest of the long rows
// as a COO written in one pass. K's rule needs the row-length histogram
// (one pass, copied to the host: a number a row length); kHybKModel's
// pattern statistics and kHybKPaper's PMF read the pattern on the host.
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
HybDevice<Scalar, ExecSpace> to_hyb(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  ExecSpace space;
  HybDevice<Scalar, ExecSpace> h;
  h.nrows = a.nrows;
  h.ncols = a.ncols;
  h.nnz = a.nnz();
  const std::int64_t maxlen = longest_row(space, a.row_ptr);
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
    const HostCsr<Scalar> pattern = download_csr(a);
    if (opt.hyb_k == kHybKModel) {
      K = model_hyb_k(pattern_stats(pattern, tau), tau, hw);
      h.k_rule = "model";
    } else {
      K = paper_hyb_k(row_length_stats(row_lengths(pattern), a.ncols), tau, hw);
      h.k_rule = "paper eq. 50";
    }
  } else if (opt.hyb_k == kHybKOneThird) {
    K = a.nrows > 0 ? hyb_k_one_third_rule_of_counts(detail::length_histogram(space, a.row_ptr, maxlen)) : 0;
    h.k_rule = "one third";
  } else {
    throw InvalidArgumentError("hyb: hyb_k = " + std::to_string(opt.hyb_k) +
                               " (give K >= 0, or kHybKOneThird, kHybKModel, kHybKPaper)");
  }
  K = std::min(maxlen, K);
  h.ell = detail::build_ell<Scalar, ExecSpace>(a, K, opt);
  detail::FormatArrays<ExecSpace> arrays(space);
  auto tail = detail::coo_past_width(space, a, K, maxlen, opt, arrays);
  h.coo = std::move(tail.first);
  h.coo_row_start = tail.second;
  h.storage = arrays.kept();
  h.longest = maxlen;
  space.fence();
  h.conversion_seconds = timer.seconds();
  return h;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
HybDevice<Scalar, ExecSpace> to_hyb(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_hyb(upload_csr<Scalar, ExecSpace>(a), opt);
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
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(HybDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.ell.values, f.coo.val);
}
// Its slot walk (row_segments.hpp, walk_slots): row r's first K entries
// in its ELL row, the rest in order from coo_row_start(r) of the COO part,
// whose slots follow the ELL's.
template <class Scalar, class ExecSpace>
struct HybSlotWalk {
  Kokkos::View<const offset_t*, typename ExecSpace::memory_space> rp, coo_start;
  int width = 0;
  std::int64_t ell_slots = 0;
  std::int64_t positions = 0, longest = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t begin(const std::int64_t r) const { return rp(r); }
  KOKKOS_INLINE_FUNCTION std::int64_t end(const std::int64_t r) const { return rp(r + 1); }
  template <class Op>
  KOKKOS_INLINE_FUNCTION void walk(const std::int64_t r, const std::int64_t k0, const std::int64_t k1, const Op& op) const {
    const std::int64_t first = rp(r), base = ell_row_base(static_cast<int>(r), width);
    const std::int64_t tail = ell_slots + std::int64_t(coo_start(r)) - width;
    for (std::int64_t k = k0; k < k1; ++k) {
      const std::int64_t n = k - first;
      op(k, n < width ? base + n * kEllSliceRows : tail + n);
    }
  }
};
template <class Scalar, class ExecSpace>
HybSlotWalk<Scalar, ExecSpace> slot_walk(const HybDevice<Scalar, ExecSpace>& f,
                                         const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp) {
  return {rp, f.coo_row_start, f.ell.width, static_cast<std::int64_t>(f.ell.values.extent(0)), f.nrows, f.longest};
}
// Its refresh: its ELL's kernel (ell.hpp), each row's entries past the
// width written straight into the COO part, which follows the CSR's
// order; where ELL's kernel takes its ELL part (has_tuned_refresh in
// ell.hpp: a tile of 32 rows fits) and no row is longer than 1,024
// entries: a block reads its tile's entries alone, and a hub row of a
// graph would hold it up while the others finish. Elsewhere the scatter.
// H200, refresh in SpMVs, the tile / the scatter: P2 meshes, whose
// longest rows pass 4 widths, 0.70-1.32 / 1.51-2.71.
constexpr std::int64_t kHybTileLongestRow = 1024;
template <class Scalar, class ExecSpace>
bool has_tuned_refresh(const HybDevice<Scalar, ExecSpace>& f) {
  return has_tuned_refresh(f.ell) && f.longest <= kHybTileLongestRow;
}
template <class Scalar, class ExecSpace>
bool refresh_by_rows(const HybDevice<Scalar, ExecSpace>& f) {
  return has_tuned_refresh(f);
}
template <class Scalar, class ExecSpace>
bool tuned_refresh(const ExecSpace& space, const HybDevice<Scalar, ExecSpace>& f,
                   const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp,
                   const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space>& values) {
#if KSPMV_ENABLE_CUDA
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    if (!has_tuned_refresh(f)) return false;
    cuda_tuned::CooTail<Scalar> tail;
    tail.val = f.coo.val.data();
    tail.row_start = f.coo_row_start.data();
    tail.width = f.ell.width;
    return cuda_tuned::tile_refresh(space.cuda_stream(), f.nrows, rp.data(), values.data(), f.ell.values.data(),
                                    tile_layout(f.ell), cuda_tuned::EntryColumns{}, tail, false);
  }
#endif
  (void)space, (void)f, (void)rp, (void)values;
  return false;
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

namespace detail {
template <class S, class E>
struct has_scratch<HybDevice<S, E>> : std::true_type {};
}  // namespace detail
template <class S, class E>
std::size_t scratch_bytes(const HybDevice<S, E>& f) {
  return scratch_bytes(f.coo);
}
template <class S, class E>
HybDevice<S, E> with_own_scratch(const HybDevice<S, E>& f) {
  HybDevice<S, E> c = f;
  c.coo = with_own_scratch(f.coo);
  return c;
}

}  // namespace kspmv
