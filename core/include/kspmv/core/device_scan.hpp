// Prefix sums with Kokkos::parallel_scan's contract, run as team kernels
// on device spaces.
//
// Kokkos's own range scan on CUDA costs 3-6 ms on its first call in a
// process (Kokkos 4.6, H200: 3.0-6.0 ms in seven processes, the calls
// after it 0.03 ms; a first team kernel, a first reduction, a first team
// scan cost 0.04 ms; docs/PERFORMANCE.md, "kspmv's conversions no longer
// pay it").
// Every conversion scans (offsets of slices, parts, packets, runs), so a
// process's first conversion paid it, as much as the whole set-up of a
// mesh of a million entries. kspmv::detail::scan does the same work in
// three team kernels (each chunk's sum; the chunks' sums scanned; each
// chunk scanned from its offset), which cost nothing like it on a first
// call: two kernel types, one for the caller's functor and one every scan
// of a value type shares. Host spaces keep Kokkos::parallel_scan.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kspmv/core/scratch.hpp"

namespace kspmv {
namespace detail {

// The value type a scan functor f(i, sum, final) adds into: `sum`'s.
template <class F>
struct scan_value : scan_value<decltype(&F::operator())> {};
template <class C, class I, class T>
struct scan_value<void (C::*)(I, T&, bool) const> {
  using type = T;
};
template <class F>
using scan_value_t = typename scan_value<F>::type;

// Elements a team thread takes in each of a chunk's rounds, and rounds a
// chunk: a chunk of 2,048 elements a team of 256 on a device.
inline constexpr int kScanRounds = 8;
template <class ExecSpace>
constexpr int scan_team_size() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible ? 1 : 256;
}

// The pass over a functor's elements, both of them in one kernel type
// (`final_pass` a member, not a template argument): each chunk's sum into
// sums(c), or each chunk scanned from its offset sums(c). One kernel type
// a functor, as Kokkos's range scan has, where a lambda a pass made two,
// and a third (the chunks' scan) a call site: matrix.cpp's sm_90 code is
// a fifth smaller (12.35 to 9.71 MB), its conversions as fast.
template <class ExecSpace, class F>
struct ScanChunks {
  using T = scan_value_t<F>;
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  F f;
  Kokkos::View<T*, typename ExecSpace::memory_space> sums;
  std::int64_t begin, end, chunk;
  bool final_pass;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const std::int64_t lo = begin + m.league_rank() * chunk;
    const std::int64_t hi = lo + chunk < end ? lo + chunk : end;
    if (!final_pass) {
      T part = 0;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(m, lo, hi), [&](const std::int64_t i, T& acc) { f(i, acc, false); }, part);
      Kokkos::single(Kokkos::PerTeam(m), [&] { sums(m.league_rank()) = part; });
      return;
    }
    // A round of team_size() neighbouring elements at a time (as the reads
    // of most functors are laid out).
    T carry = sums(m.league_rank());
    for (std::int64_t first = lo; first < hi; first += m.team_size()) {
      const std::int64_t i = first + m.team_rank();
      T mine = 0;
      if (i < hi) f(i, mine, false);
      const T before = m.team_scan(mine);
      T round = before + mine;  // the last thread's: the round's sum
      m.team_broadcast(round, m.team_size() - 1);
      if (i < hi) {
        T sum = carry + before;
        f(i, sum, true);
      }
      carry += round;
    }
  }
};

// The chunks' sums into their offsets, one team, a round of team_size()
// chunks at a time; sums(chunks) the total. Depends on the value type
// only, so every scan of a process shares its kernel.
template <class ExecSpace, class T>
struct ScanChunkOffsets {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::View<T*, typename ExecSpace::memory_space> sums;
  std::int64_t chunks;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    T carry = 0;
    for (std::int64_t first = 0; first < chunks; first += m.team_size()) {
      const std::int64_t c = first + m.team_rank();
      const T mine = c < chunks ? sums(c) : T(0);
      const T before = m.team_scan(mine);
      T round = before + mine;
      m.team_broadcast(round, m.team_size() - 1);
      if (c < chunks) sums(c) = carry + before;
      carry += round;
    }
    Kokkos::single(Kokkos::PerTeam(m), [&] { sums(chunks) = carry; });
  }
};

// f(i, sum, final) over [begin, end) as Kokkos::parallel_scan calls it:
// on the final call `sum` is the sum of the parts of the elements before
// i, and f adds i's part to it (on every call). Returns the sum of all
// parts, read back (a fence) only where `want_total`. The chunks' sums
// are a temporary of `temps`. Integer parts only: the sums are taken in
// another order than element by element.
template <class ExecSpace, class F>
scan_value_t<F> scan_on_teams(const std::string& label, const ExecSpace& space, std::int64_t begin, std::int64_t end,
                              const F& f, ScratchSet<ExecSpace>& temps, bool want_total) {
  using T = scan_value_t<F>;
  static_assert(std::is_integral<T>::value, "kspmv::detail::scan sums integers");
  using team_policy = Kokkos::TeamPolicy<ExecSpace>;
  const std::int64_t n = end > begin ? end - begin : 0;
  if (n == 0) return T(0);
  const int threads = scan_team_size<ExecSpace>();
  const std::int64_t chunk = std::int64_t(threads) * kScanRounds;
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  const Kokkos::View<T*, typename ExecSpace::memory_space> sums = temps.template take<T>(label + "::chunks", chunks + 1);
  const int league = static_cast<int>(chunks);
  Kokkos::parallel_for(label + "::chunk_sums", team_policy(space, league, threads),
                       ScanChunks<ExecSpace, F>{f, sums, begin, end, chunk, false});
  Kokkos::parallel_for("kspmv::scan::chunk_offsets", team_policy(space, 1, threads),
                       ScanChunkOffsets<ExecSpace, T>{sums, chunks});
  Kokkos::parallel_for(label, team_policy(space, league, threads), ScanChunks<ExecSpace, F>{f, sums, begin, end, chunk, true});
  T total = 0;
  if (want_total) {
    Kokkos::deep_copy(space, Kokkos::View<T, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(&total),
                      Kokkos::subview(sums, chunks));
    space.fence();
  }
  return total;
}

// Kokkos::parallel_scan(label, policy, f) on host spaces, scan_on_teams on
// device spaces (its temporary from `temps` where given, else from a set
// of its own, which fences the space when it ends); the sum of every part
// returned where `want_total` (a fence, as Kokkos's scan with a total).
template <class ExecSpace, class F>
scan_value_t<F> scan_any_space(const std::string& label, const Kokkos::RangePolicy<ExecSpace>& policy, const F& f,
                               ScratchSet<ExecSpace>* temps, bool want_total) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible) {
    scan_value_t<F> sum = 0;
    if (want_total)
      Kokkos::parallel_scan(label, policy, f, sum);
    else
      Kokkos::parallel_scan(label, policy, f);
    return sum;
  } else if (temps) {
    return scan_on_teams(label, policy.space(), policy.begin(), policy.end(), f, *temps, want_total);
  } else {
    ScratchSet<ExecSpace> own(policy.space());
    return scan_on_teams(label, policy.space(), policy.begin(), policy.end(), f, own, want_total);
  }
}

// As Kokkos::parallel_scan(label, policy, f). Pass the caller's `temps`
// where it holds one: a set of the scan's own fences the space.
template <class ExecSpace, class F>
void scan(const std::string& label, const Kokkos::RangePolicy<ExecSpace>& policy, const F& f,
          ScratchSet<ExecSpace>* temps = nullptr) {
  scan_any_space(label, policy, f, temps, false);
}

// As Kokkos::parallel_scan(label, policy, f, total): the same, the sum of
// every part into `total` (a fence, as Kokkos's).
template <class ExecSpace, class F, class Total>
void scan(const std::string& label, const Kokkos::RangePolicy<ExecSpace>& policy, const F& f, Total& total,
          ScratchSet<ExecSpace>* temps = nullptr) {
  total = static_cast<Total>(scan_any_space(label, policy, f, temps, true));
}

}  // namespace detail
}  // namespace kspmv
