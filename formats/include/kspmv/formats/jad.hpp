// JAD, jagged diagonals (pellr §2.3.5): rows sorted by length as PELLR;
// the d-th jagged diagonal holds the d-th entry of every row longer than d
// (the first n_d sorted rows), stored one after another from jd_ptr[d]. No
// padding at all; entry d of sorted row r is at jd_ptr[d] + r, so a thread
// per row reads each diagonal coalesced. x stays in the caller's order; y
// in the caller's order by default, in the sorted order on request. Only a
// portable kernel (compiled for CUDA by Kokkos) so far.
#pragma once

#include "kspmv/core/properties.hpp"
#include "kspmv/formats/pellr.hpp"

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct JadDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "jad";

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  int ndiag = 0;  // the longest row
  OutputOrder order = OutputOrder::Caller;
  Kokkos::View<int*, memory_space> new_to_old;  // sorted row -> caller row
  Kokkos::View<int*, memory_space> rl;          // sorted rows' lengths
  Kokkos::View<int*, memory_space> jd_ptr;      // size ndiag + 1
  Kokkos::View<int*, memory_space> indices;
  Kokkos::View<Scalar*, memory_space> values;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return (new_to_old.span() + rl.span() + jd_ptr.span() + indices.span()) * sizeof(int) +
           values.span() * sizeof(Scalar);
  }
};

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
JadDevice<Scalar, ExecSpace> to_jad(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  using J = JadDevice<Scalar, ExecSpace>;
  using M = typename J::memory_space;
  J j;
  j.nrows = a.nrows;
  j.ncols = a.ncols;
  j.nnz = a.nnz();
  j.order = opt.output_order;
  if (a.nnz() > std::numeric_limits<int>::max())
    throw FormatCannotHoldError("jad: " + std::to_string(a.nnz()) + " entries exceed its 32-bit index");
  const auto len = row_lengths(a);
  const auto perm = rows_by_length(len, true);
  std::vector<int> rl(len.size());
  for (std::size_t r = 0; r < perm.size(); ++r) rl[r] = static_cast<int>(len[perm[r]]);
  j.ndiag = rl.empty() ? 0 : rl[0];
  // n_d = rows longer than d: a decreasing staircase over the sorted rows.
  std::vector<int> jd_ptr(static_cast<std::size_t>(j.ndiag) + 1, 0);
  {
    std::int64_t rows_longer = static_cast<std::int64_t>(rl.size());
    for (int d = 0; d < j.ndiag; ++d) {
      while (rows_longer > 0 && rl[rows_longer - 1] <= d) --rows_longer;
      jd_ptr[d + 1] = jd_ptr[d] + static_cast<int>(rows_longer);
    }
  }
  std::vector<int> idx(static_cast<std::size_t>(a.nnz()));
  std::vector<Scalar> val(static_cast<std::size_t>(a.nnz()));
  for (ordinal_t r = 0; r < a.nrows; ++r) {
    const ordinal_t o = perm[r];
    for (offset_t k = a.row_ptr[o]; k < a.row_ptr[o + 1]; ++k) {
      const std::size_t pos = static_cast<std::size_t>(jd_ptr[k - a.row_ptr[o]] + r);
      idx[pos] = a.col_idx[k];
      val[pos] = a.values[k];
    }
  }
  j.new_to_old = detail::upload<int, M>(perm, "kspmv::jad::new_to_old");
  j.rl = detail::upload<int, M>(rl, "kspmv::jad::rl");
  j.jd_ptr = detail::upload<int, M>(jd_ptr, "kspmv::jad::jd_ptr");
  j.indices = detail::upload<int, M>(idx, "kspmv::jad::indices");
  j.values = detail::upload<Scalar, M>(val, "kspmv::jad::values");
  ExecSpace().fence();
  j.conversion_seconds = timer.seconds();
  return j;
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const JadDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "jad", A.nrows, A.ncols, alpha, x, beta, y)) return;
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  const int team = detail::default_team_size<ExecSpace>();
  const int rpt = detail::is_host_space<ExecSpace>() ? 1024 : team;
  const int nrows = A.nrows;
  const bool caller = A.order == OutputOrder::Caller;
  const auto rl = A.rl;
  const auto jd_ptr = A.jd_ptr;
  const auto indices = A.indices;
  const auto values = A.values;
  const auto perm = A.new_to_old;
  Kokkos::parallel_for(
      "kspmv::jad", policy(space, (nrows + rpt - 1) / rpt, team), KOKKOS_LAMBDA(const member& t) {
        const int first = t.league_rank() * rpt;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, rpt), [&](const int i) {
          const int r = first + i;
          if (r >= nrows) return;
          Scalar sum = 0;
          const int len = rl(r);
          for (int d = 0; d < len; ++d) {
            const int k = jd_ptr(d) + r;
            sum += values(k) * x(indices(k));
          }
          detail::combine_y(y, caller ? perm(r) : r, alpha, sum, beta);
        });
      });
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp).
template <class Scalar, class ExecSpace>
std::vector<Kokkos::View<Scalar*, typename ExecSpace::memory_space>> value_views(const JadDevice<Scalar, ExecSpace>& f) {
  return {f.values};
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const JadDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", "portable"},
          {"jagged_diagonals", std::to_string(f.ndiag)},
          {"order", f.order == OutputOrder::Caller ? "caller" : "internal"}};
}
}  // namespace detail

}  // namespace kspmv
