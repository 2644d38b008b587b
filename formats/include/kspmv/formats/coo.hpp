// COO (Bell & Garland §3.3, §4.4): row-sorted triplets and a kernel based
// on segmented reduction, insensitive to how entries are spread over rows.
//
// The entries are cut into fixed chunks of `chunk` entries; a team (a warp
// on the tuned CUDA path) reduces one chunk with a segmented scan. A row
// that lies wholly inside a chunk is written there. A row that crosses chunk
// boundaries leaves a partial sum per chunk (its first piece in `tail` of
// its first chunk, the others in `head`); a fix-up kernel adds those in a
// fixed order, so the result is deterministic — no atomics. Which rows cross
// boundaries, and which rows are empty, is known at conversion time.
#pragma once

#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#include <tuple>

#include "kspmv/core/properties.hpp"
#include "kspmv/config.hpp"
#include "kspmv/core/device_build.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_util.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#if KSPMV_ENABLE_CUDA
#include "kspmv/backends/cuda/coo_cuda.hpp"
#endif

namespace kspmv {

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
struct CooDevice {
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr const char* format_name = "coo";
  // Entries per chunk: a warp takes 8 steps of 32 on the tuned path, a
  // 128-thread team 2 steps on the portable one.
  static constexpr int default_chunk = 256;

  ordinal_t nrows = 0, ncols = 0;
  std::int64_t nnz = 0;
  int chunk = default_chunk;
  int nchunks = 0;
  Kokkos::View<int*, memory_space> row, col;
  Kokkos::View<Scalar*, memory_space> val;
  // Rows whose entries span several chunks: id, first and last chunk.
  int nspan = 0;
  Kokkos::View<int*, memory_space> span_row, span_first, span_last;
  // Rows without entries (they still get y = beta * y).
  int nempty = 0;
  Kokkos::View<int*, memory_space> empty_rows;
  // Per-chunk partial sums: scratch for each apply (one apply at a time;
  // a kspmv::SpmvHandle holds its own: with_own_scratch).
  Kokkos::View<Scalar*, memory_space> head, tail;
  detail::KeptBlocks<memory_space> storage;  // what the views above are taken from (FormatArrays)
  KernelPath kernel = KernelPath::Auto;
  double conversion_seconds = 0;

  std::size_t storage_bytes() const {
    return (row.span() + col.span() + span_row.span() + span_first.span() + span_last.span() + empty_rows.span()) *
               sizeof(int) +
           (val.span() + head.span() + tail.span()) * sizeof(Scalar);
  }
};

namespace detail {

// Step 1, portable: a team per chunk, `team` entries per iteration, a
// Hillis-Steele segmented scan in scratch, a carry between iterations.
template <class Scalar, class ExecSpace, class XView, class YView>
void coo_chunks_portable(const ExecSpace& space, Scalar alpha, const CooDevice<Scalar, ExecSpace>& A, const XView& x,
                         Scalar beta, const YView& y) {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  using member = typename policy::member_type;
  using sS = Kokkos::View<Scalar*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using sI = Kokkos::View<int*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const int T = default_team_size<ExecSpace>();
  const int S = A.chunk;
  const std::int64_t nnz = A.nnz;
  const auto row = A.row;
  const auto col = A.col;
  const auto val = A.val;
  const auto head = A.head;
  const auto tail = A.tail;
  const std::size_t shmem = sS::shmem_size(T + 1) + sI::shmem_size(T + 1);
  Kokkos::parallel_for(
      "kspmv::coo", policy(space, A.nchunks, T).set_scratch_size(0, Kokkos::PerTeam(shmem)),
      KOKKOS_LAMBDA(const member& t) {
        sS vals(t.team_scratch(0), T + 1);  // vals(T): the carried sum
        sI rows(t.team_scratch(0), T + 1);  // rows(T): the carried row (-1: none)
        const int c = t.league_rank();
        const int tt = t.team_rank();
        const std::int64_t cs = static_cast<std::int64_t>(c) * S;
        const std::int64_t ce = cs + S < nnz ? cs + S : nnz;
        const int first_row = row(cs);
        const bool starts_before = cs > 0 && row(cs - 1) == first_row;
        const bool continues = ce < nnz && row(ce) == row(ce - 1);
        // A finished piece of row r: head, tail or final.
        auto finish = [&](const int r, const Scalar s, const bool chunk_last) {
          if (r == first_row && starts_before)
            head(c) = s;
          else if (chunk_last && continues)
            tail(c) = s;
          else
            combine_y(y, r, alpha, s, beta);
        };
        if (tt == 0) rows(T) = -1;
        t.team_barrier();
        for (std::int64_t base = cs; base < ce; base += T) {
          const std::int64_t e = base + tt;
          const bool valid = e < ce;
          const int r = valid ? row(e) : -2;
          Scalar p = valid ? val(e) * x(col(e)) : Scalar(0);
          if (tt == 0 && rows(T) >= 0) {
            if (rows(T) == r)
              p += vals(T);  // the carried piece continues here
            else
              finish(rows(T), vals(T), false);  // it had ended with the last iteration
          }
          rows(tt) = r;
          vals(tt) = p;
          t.team_barrier();
          for (int off = 1; off < T; off *= 2) {
            const Scalar add = (tt >= off && rows(tt - off) == r) ? vals(tt - off) : Scalar(0);
            t.team_barrier();
            vals(tt) += add;
            t.team_barrier();
          }
          const bool last_lane = tt == T - 1 || e + 1 == ce;
          if (valid && (last_lane || rows(tt + 1) != r)) {
            if (e + 1 == ce) {
              finish(r, vals(tt), true);
            } else if (last_lane) {
              rows(T) = r;  // carry into the next iteration
              vals(T) = vals(tt);
            } else {
              finish(r, vals(tt), false);
            }
          }
          t.team_barrier();
        }
      });
}

// Steps 2 and 3: rows that span chunks, and empty rows.
template <class Scalar, class ExecSpace, class YView>
void coo_fixup(const ExecSpace& space, Scalar alpha, const CooDevice<Scalar, ExecSpace>& A, Scalar beta,
               const YView& y) {
  fix_up_spanning_rows(space, "kspmv::coo_span", A.nspan, A.span_row, A.span_first, A.span_last, A.head, A.tail,
                       alpha, beta, y);
  if (A.nempty > 0 && beta != Scalar(1)) {
    const auto empty = A.empty_rows;
    Kokkos::parallel_for(
        "kspmv::coo_empty", Kokkos::RangePolicy<ExecSpace>(space, 0, A.nempty), KOKKOS_LAMBDA(const int i) {
          const int r = empty(i);
          y(r) = beta == Scalar(0) ? Scalar(0) : beta * y(r);
        });
  }
}

// y = alpha * COO * x + beta * y (beta = 1 lets HYB and PKT add a COO
// remainder to what their main part wrote).
template <class Scalar, class ExecSpace, class XView, class YView>
void coo_apply(const ExecSpace& space, Scalar alpha, const CooDevice<Scalar, ExecSpace>& A, const XView& x,
               Scalar beta, const YView& y) {
  if (A.nchunks > 0) {
#if KSPMV_ENABLE_CUDA
    if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
      if (A.kernel == KernelPath::Auto && contiguous(x, y)) {
        cuda_tuned::coo_chunks(space.cuda_stream(), A.nnz, A.chunk, A.nchunks, A.row.data(), A.col.data(), A.val.data(),
                         alpha, x.data(), beta, y.data(), A.head.data(), A.tail.data());
        cuda_tuned::coo_fixup(space.cuda_stream(), A.nspan, A.span_row.data(), A.span_first.data(), A.span_last.data(),
                        A.head.data(), A.tail.data(), A.nempty, A.empty_rows.data(), alpha, beta, y.data());
        return;
      }
    }
#endif
    coo_chunks_portable(space, alpha, A, x, beta, y);
  }
  coo_fixup(space, alpha, A, beta, y);
}

}  // namespace detail

namespace detail {
// What COO's apply reads beside its entries, from the rows' offsets into
// them: the rows that span chunks (their first and last chunk), the rows
// with none where `empty_rows` (an apply with beta != 1 scales them; HYB's
// COO part, applied with beta = 1 after its ELL part covers every row,
// needs no such list), and the chunks' partial sums.
template <class Scalar, class ExecSpace>
void coo_chunk_lists(const ExecSpace& space, CooDevice<Scalar, ExecSpace>& c,
                     const Kokkos::View<const offset_t*, typename ExecSpace::memory_space>& rp, bool empty_rows,
                     FormatArrays<ExecSpace>& arrays) {
  const std::int64_t chunk = c.chunk;
  auto spans = KOKKOS_LAMBDA(const std::int64_t i) {
    return rp(i + 1) > rp(i) && (rp(i + 1) - 1) / chunk > rp(i) / chunk;
  };
  c.span_row = rows_where(space, c.nrows, spans, "kspmv::coo::span_row", &arrays);
  if (empty_rows)
    c.empty_rows = rows_where(
        space, c.nrows, KOKKOS_LAMBDA(const std::int64_t i) { return rp(i + 1) == rp(i); }, "kspmv::coo::empty_rows",
        &arrays);
  c.nspan = static_cast<int>(c.span_row.extent(0));
  c.nempty = static_cast<int>(c.empty_rows.extent(0));
  c.span_first = arrays.template take<int>("kspmv::coo::span_first", c.nspan);
  c.span_last = arrays.template take<int>("kspmv::coo::span_last", c.nspan);
  const auto span_row = c.span_row, span_first = c.span_first, span_last = c.span_last;
  Kokkos::parallel_for(
      "kspmv::coo::span_chunks", Kokkos::RangePolicy<ExecSpace>(space, 0, c.nspan), KOKKOS_LAMBDA(const int s) {
        const int i = span_row(s);
        span_first(s) = static_cast<int>(rp(i) / chunk);
        span_last(s) = static_cast<int>((rp(i + 1) - 1) / chunk);
      });
  c.head = arrays.template take_filled<Scalar>("kspmv::coo::head", c.nchunks, Scalar(0));
  c.tail = arrays.template take_filled<Scalar>("kspmv::coo::tail", c.nchunks, Scalar(0));
}
// A COO of nrows x ncols with nnz entries, its views taken from `arrays`
// and not filled; a typed error where its 32-bit entry index cannot hold them.
template <class Scalar, class ExecSpace>
CooDevice<Scalar, ExecSpace> coo_shell(ordinal_t nrows, ordinal_t ncols, std::int64_t nnz, const ConvertOptions& opt,
                                       FormatArrays<ExecSpace>& arrays) {
  CooDevice<Scalar, ExecSpace> c;
  c.nrows = nrows;
  c.ncols = ncols;
  c.nnz = nnz;
  c.kernel = opt.kernel;
  if (c.nnz > std::numeric_limits<int>::max() - c.chunk)
    throw FormatCannotHoldError("coo: " + std::to_string(c.nnz) + " entries exceed its 32-bit entry index");
  c.nchunks = static_cast<int>((c.nnz + c.chunk - 1) / c.chunk);
  c.row = arrays.template take<int>("kspmv::coo::row", c.nnz);
  c.col = arrays.template take<int>("kspmv::coo::col", c.nnz);
  c.val = arrays.template take<Scalar>("kspmv::coo::val", c.nnz);
  return c;
}
}  // namespace detail

// On the device: the columns and values copied, a thread a row (a segment
// of a long one) writing its row index into its entries, then the chunk
// lists (two compactions).
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CooDevice<Scalar, ExecSpace> to_coo_device(const DeviceCsr<Scalar, ExecSpace>& a, const ConvertOptions& opt = {}) {
  Kokkos::Timer timer;
  ExecSpace space;
  detail::FormatArrays<ExecSpace> arrays(space);
  auto c = detail::coo_shell<Scalar, ExecSpace>(a.nrows, a.ncols, a.nnz(), opt, arrays);
  Kokkos::deep_copy(space, c.col, a.col_idx);
  Kokkos::deep_copy(space, c.val, a.values);
  const auto row = c.row;
  const auto rp = a.row_ptr;
  detail::for_each_row_segment(
      space, "kspmv::coo::rows", a.nrows, longest_row(space, rp), KOKKOS_LAMBDA(const std::int64_t i) { return rp(i); },
      KOKKOS_LAMBDA(const std::int64_t i) { return rp(i + 1); },
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t k0, const std::int64_t k1) {
        for (std::int64_t k = k0; k < k1; ++k) row(k) = static_cast<int>(i);
      });
  detail::coo_chunk_lists(space, c, rp, true, arrays);
  c.storage = arrays.kept();
  space.fence();
  c.conversion_seconds = timer.seconds();
  return c;
}
template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
CooDevice<Scalar, ExecSpace> to_coo_device(const HostCsr<Scalar>& a, const ConvertOptions& opt = {}) {
  return to_coo_device(upload_csr<Scalar, ExecSpace>(a), opt);
}

template <class Scalar, class ExecSpace, class XView, class YView>
void spmv(const ExecSpace& space, Scalar alpha, const CooDevice<Scalar, ExecSpace>& A, const XView& x, Scalar beta,
          const YView& y) {
  if (detail::spmv_prologue(space, "coo", A.nrows, A.ncols, alpha, x, beta, y)) return;
  detail::coo_apply(space, alpha, A, x, beta, y);
}

namespace detail {
// The views holding its values, in the order its value map numbers
// their slots (kspmv/core/value_map.hpp): references to its members,
// read through detail::value_views; a copy given values of its own
// replaces them (detail::with_own_values).
template <class Scalar, class ExecSpace>
auto value_members(CooDevice<Scalar, ExecSpace>& f) {
  return std::tie(f.val);
}
// It keeps the CSR's entries in their order (matrix.hpp: has_csr_order).
template <class Scalar, class ExecSpace>
bool keeps_csr_order(const CooDevice<Scalar, ExecSpace>*, const DeviceCsr<Scalar, ExecSpace>&, const ConvertOptions&) {
  return true;
}
// What kspmv info --format and the benchmark report for this format.
template <class Scalar, class ExecSpace>
Properties format_properties(const CooDevice<Scalar, ExecSpace>& f) {
  return {{"kernel", kernel_name(f.kernel, on_cuda<ExecSpace>())},
          {"chunk", std::to_string(f.chunk)},
          {"rows_spanning_chunks", std::to_string(f.nspan)},
          {"empty_rows", std::to_string(f.nempty)}};
}
}  // namespace detail

namespace detail {
template <class S, class E>
struct has_scratch<CooDevice<S, E>> : std::true_type {};
}  // namespace detail
template <class S, class E>
std::size_t scratch_bytes(const CooDevice<S, E>& f) {
  return (f.head.span() + f.tail.span()) * sizeof(S);
}
template <class S, class E>
CooDevice<S, E> with_own_scratch(const CooDevice<S, E>& f) {
  CooDevice<S, E> c = f;
  c.head = Kokkos::View<S*, typename E::memory_space>("kspmv::coo::head", f.head.extent(0));
  c.tail = Kokkos::View<S*, typename E::memory_space>("kspmv::coo::tail", f.tail.extent(0));
  return c;
}

}  // namespace kspmv
