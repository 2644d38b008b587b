// Passes over rows a thread a row segment: the fills of the sliced,
// jagged and diagonal layouts, and the slot walks that refresh them
// (kspmv/core/value_map.hpp). A long row is split into segments so that
// no thread walks a power-law hub alone.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include "kspmv/core/device_scan.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/scratch.hpp"

namespace kspmv::detail {

// The row holding entry k (k < nnz): the last row whose offset is <= k, so
// empty rows before it are stepped over. A binary search: a thread an
// entry spreads a long row over many threads.
template <class RowPtr>
KOKKOS_INLINE_FUNCTION std::int64_t row_of_entry(const RowPtr& row_ptr, std::int64_t nrows, std::int64_t k) {
  std::int64_t lo = 0, hi = nrows;
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    if (std::int64_t(row_ptr(mid)) <= k) lo = mid; else hi = mid;
  }
  return lo;
}

// Longest row segment one thread of for_each_row_segment takes.
inline constexpr std::int64_t kRowSegment = 32;

// for_each_row_segment's functors (structs, not lambdas: the caller's
// lambdas are members, which nvcc allows where a lambda capturing another
// device lambda it does not). RowWhole: a thread a row.
template <class Begin, class End, class F>
struct RowWhole {
  Begin begin;
  End end;
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r) const { f(r, std::int64_t(begin(r)), std::int64_t(end(r))); }
};

// Each row's first segment: an exclusive scan of its segment count.
template <class TaskStart, class Begin, class End>
struct RowSegmentStarts {
  TaskStart task_start;
  std::int64_t nrows;
  Begin begin;
  End end;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r, std::int64_t& sum, const bool final) const {
    if (final) task_start(r) = sum;
    if (r < nrows) sum += (std::int64_t(end(r)) - std::int64_t(begin(r)) + kRowSegment - 1) / kRowSegment;
  }
};

// Task t: segment t - task_start(r) of row r.
template <class TaskStart, class Begin, class End, class F>
struct RowSegments {
  TaskStart task_start;
  std::int64_t nrows;
  Begin begin;
  End end;
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t r = row_of_entry(task_start, nrows, t);
    const std::int64_t k0 = std::int64_t(begin(r)) + (t - std::int64_t(task_start(r))) * kRowSegment;
    const std::int64_t e = end(r);
    f(r, k0, k0 + kRowSegment < e ? k0 + kRowSegment : e);
  }
};

// How a pass a thread a row segment splits rows (for_each_row_segment):
// every row whole where none is longer than kRowSegment, else each row's
// first segment. Made once (a scan and a read-back of the task count) and
// kept where the same rows are walked again (a refresh), so that a later
// pass is one kernel, no host work.
template <class ExecSpace>
struct RowSegmentPlan {
  std::int64_t nrows = 0, tasks = 0;
  bool whole_rows = true;
  Kokkos::View<std::int64_t*, typename ExecSpace::memory_space> task_start;  // nrows + 1, where split

  std::size_t bytes() const { return task_start.span() * sizeof(std::int64_t); }
};

// The plan for rows [begin(r), end(r)), r < nrows, no longer than
// `longest`; its task starts a temporary of `temps` where given (a plan
// used once), else kept.
template <class ExecSpace, class Begin, class End>
RowSegmentPlan<ExecSpace> row_segment_plan(const ExecSpace& space, std::int64_t nrows, std::int64_t longest,
                                           const Begin& begin, const End& end, ScratchSet<ExecSpace>* temps = nullptr) {
  using starts = Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>;
  RowSegmentPlan<ExecSpace> plan;
  plan.nrows = nrows > 0 ? nrows : 0;
  plan.tasks = plan.nrows;
  if (nrows <= 0 || longest <= kRowSegment) return plan;
  plan.whole_rows = false;
  plan.task_start = temps ? temps->template take<std::int64_t>("kspmv::row_segments", nrows + 1)
                          : starts(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::row_segments"),
                                   nrows + 1);
  kspmv::detail::scan("kspmv::row_segments", Kokkos::RangePolicy<ExecSpace>(space, 0, nrows + 1),
                        RowSegmentStarts<starts, Begin, End>{plan.task_start, nrows, begin, end}, plan.tasks, temps);
  return plan;
}

// Calls f(r, k0, k1) over the segments of `plan`, a thread a segment.
template <class ExecSpace, class Begin, class End, class F>
void run_row_segments(const ExecSpace& space, const char* label, const RowSegmentPlan<ExecSpace>& plan,
                      const Begin& begin, const End& end, const F& f) {
  using policy = Kokkos::RangePolicy<ExecSpace>;
  using starts = Kokkos::View<std::int64_t*, typename ExecSpace::memory_space>;
  if (plan.tasks <= 0) return;
  if (plan.whole_rows) {
    Kokkos::parallel_for(label, policy(space, 0, plan.nrows), RowWhole<Begin, End, F>{begin, end, f});
    return;
  }
  Kokkos::parallel_for(label, policy(space, 0, plan.tasks),
                       RowSegments<starts, Begin, End, F>{plan.task_start, plan.nrows, begin, end, f});
}

// Calls f(r, k0, k1) over every row r < nrows, whose entries are
// [begin(r), end(r)), in segments [k0, k1) of at most kRowSegment entries,
// a thread a segment. Rows in their order, so where every row fits one
// segment this is a thread a row, neighbouring threads writing
// neighbouring slots of a sliced or jagged layout; a long row is spread
// over many threads instead of one walking a power-law hub of 10^5
// entries alone (20-28 ms a fill on a 1M-row power-law graph).
// `longest`: the longest row (or a bound on it).
template <class ExecSpace, class Begin, class End, class F>
void for_each_row_segment(const ExecSpace& space, const char* label, std::int64_t nrows, std::int64_t longest,
                          const Begin& begin, const End& end, const F& f) {
  ScratchSet<ExecSpace> temps(space);
  run_row_segments(space, label, row_segment_plan(space, nrows, longest, begin, end, &temps), begin, end, f);
}

// A format's slot walk (kspmv/core/value_map.hpp, by_rows()): for the
// CSR it was built from, `positions` rows in the format's order, position
// r holding entries [begin(r), end(r)), and walk(r, k0, k1, op) calling
// op(k, s) for each entry k in [k0, k1) with the slot s of the format's
// values that holds it. These adapt one to for_each_row_segment.
// The rows of a slot walk over a format that keeps rows in an order of
// its own (sorted pellr, jad, evc-hyb): position r holds CSR row perm(r).
// A format's walk derives from it and adds walk().
template <class ExecSpace>
struct PermutedRows {
  Kokkos::View<const offset_t*, typename ExecSpace::memory_space> rp;
  Kokkos::View<const int*, typename ExecSpace::memory_space> perm;
  std::int64_t positions = 0, longest = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t begin(const std::int64_t r) const { return rp(perm(r)); }
  KOKKOS_INLINE_FUNCTION std::int64_t end(const std::int64_t r) const { return rp(perm(r) + 1); }
};

template <class Walk>
struct WalkBegin {
  Walk w;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t r) const { return w.begin(r); }
};
template <class Walk>
struct WalkEnd {
  Walk w;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t r) const { return w.end(r); }
};
template <class Walk, class Op>
struct WalkSegment {
  Walk w;
  Op op;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t r, const std::int64_t k0, const std::int64_t k1) const {
    w.walk(r, k0, k1, op);
  }
};

// The plan a walk's passes use (kept by the value map).
template <class ExecSpace, class Walk>
RowSegmentPlan<ExecSpace> walk_plan(const ExecSpace& space, const Walk& w) {
  return row_segment_plan(space, w.positions, w.longest, WalkBegin<Walk>{w}, WalkEnd<Walk>{w});
}

// op(k, s) for every entry of the walk, asynchronously on `space`.
template <class ExecSpace, class Walk, class Op>
void walk_slots(const ExecSpace& space, const char* label, const RowSegmentPlan<ExecSpace>& plan, const Walk& w,
                const Op& op) {
  run_row_segments(space, label, plan, WalkBegin<Walk>{w}, WalkEnd<Walk>{w}, WalkSegment<Walk, Op>{w, op});
}


// A format's slot visit, the other way round from a slot walk: for every
// slot s of its value views (concatenated), the CSR entry k it holds, or
// none (padding). A visit has slots(), seek(s) (a cursor for slot s, e.g.
// the packet holding it, found by a binary search) and entry(s, cursor, k)
// (false at padding; the cursor moves on with s). Where a format's slots
// hold a row's entries far apart (pkt: a packet's rows dealt to its
// threads, a row's entries one thread-column apart), a thread a slot
// writes the values in order and gathers each from the CSR: a packet's
// rows are read while they are in L2, where a thread an entry of the CSR
// would write each 32-byte sector of the slots at times far apart.
// Runs of 32 slots, 32 threads a run (a warp on CUDA); each thread takes
// kVisitRuns runs in turn and seeks once.
inline constexpr std::int64_t kVisitRuns = 8;

// What a visit does at padding where the caller gives nothing: nothing.
struct SkipPadding {
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t) const {}
};

template <class Visit, class Op, class Pad>
struct VisitSlots {
  Visit v;
  Op op;
  Pad pad;
  std::int64_t slots = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const std::int64_t lane = i % 32, run0 = i / 32 * kVisitRuns;
    std::int64_t s = 32 * run0 + lane;
    if (s >= slots) return;
    auto cursor = v.seek(s);
    for (std::int64_t r = 0; r < kVisitRuns && s < slots; ++r, s += 32) {
      std::int64_t k = 0;
      if (v.entry(s, cursor, k))
        op(k, s);
      else
        pad(s);
    }
  }
};

// op(k, s) for every slot s of the visit holding entry k, and pad(s) for
// every slot holding none, asynchronously on `space`. A fill gives a pad
// that writes the padding, so its slots need not be cleared first; a
// refresh leaves padding as it is.
template <class ExecSpace, class Visit, class Op, class Pad = SkipPadding>
void visit_slots(const ExecSpace& space, const char* label, const Visit& v, const Op& op, const Pad& pad = {}) {
  const std::int64_t slots = v.slots();
  if (slots <= 0) return;
  const std::int64_t runs = (slots + 31) / 32, groups = (runs + kVisitRuns - 1) / kVisitRuns;
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace>(space, 0, groups * 32),
                       VisitSlots<Visit, Op, Pad>{v, op, pad, slots});
}

}  // namespace kspmv::detail
