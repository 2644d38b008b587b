// kspmv::detail::scan and the team kernels it runs on device spaces
// (kspmv/core/device_scan.hpp), against a sum element by element. The
// team kernels run here on the default space: on the host (teams of one
// thread, chunks of 8 elements) and on the device in a CUDA build.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "kspmv/core/device_scan.hpp"

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Mem = Space::memory_space;

// Element i's part: uneven, zero for every seventh, so that offsets repeat.
KOKKOS_INLINE_FUNCTION std::int64_t part_of(const std::int64_t i) { return i % 7 == 0 ? 0 : (i * 7919) % 13 + 1; }

std::vector<std::int64_t> prefix_by_hand(std::int64_t begin, std::int64_t end) {
  std::vector<std::int64_t> out;
  std::int64_t sum = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    out.push_back(sum);
    sum += part_of(i);
  }
  out.push_back(sum);
  return out;
}

// The team kernels over [begin, end) of a functor writing each element's
// exclusive prefix, and the total at end - 1 as Kokkos's callers do (a
// free function: nvcc takes no device lambda in a test body, a private
// member). Returns the prefixes and, last, the total returned.
template <class T>
std::vector<std::int64_t> team_prefixes(std::int64_t begin, std::int64_t end, bool total) {
  const std::int64_t n = end > begin ? end - begin : 0;
  Kokkos::View<T*, Mem> out("out", n + 1);
  Kokkos::deep_copy(out, T(-1));
  kspmv::detail::ScratchSet<Space> temps{Space()};
  const T got = kspmv::detail::scan_on_teams(
      "test::scan", Space(), begin, end,
      KOKKOS_LAMBDA(const std::int64_t i, T& sum, const bool final) {
        if (final) {
          out(i - begin) = sum;
          if (i + 1 == end) out(n) = sum + T(part_of(i));
        }
        sum += T(part_of(i));
      },
      temps, total);
  temps.give_back();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < n + 1; ++i) v.push_back(std::int64_t(h(i)));
  if (n == 0) v[0] = 0;  // no element: nothing written
  v.push_back(std::int64_t(got));
  return v;
}

// scan() with a total, as the conversions call it.
std::int64_t scan_total(std::int64_t n, const Kokkos::View<std::int64_t*, Mem>& out) {
  std::int64_t total = -1;
  kspmv::detail::scan(
      "test::scan_total", Kokkos::RangePolicy<Space>(Space(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
        if (final) out(i) = sum;
        sum += part_of(i);
      },
      total);
  return total;
}

// Every size around a chunk's edges (a chunk holds 8 elements on the
// host, 2,048 on a device), with and without a total, from 0 and from
// another start.
TEST(DeviceScan, TeamKernelsGiveEveryPrefixAndTheTotal) {
  for (const std::int64_t begin : {std::int64_t(0), std::int64_t(5)}) {
    for (const std::int64_t n : {0, 1, 7, 8, 9, 255, 256, 257, 2047, 2048, 2049, 4096, 70001}) {
      const std::int64_t end = begin + n;
      const auto want = prefix_by_hand(begin, end);
      for (const bool total : {false, true}) {
        const auto got = team_prefixes<std::int64_t>(begin, end, total);
        ASSERT_EQ(got.size(), want.size() + 1) << n;
        for (std::size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k], want[k]) << "n " << n << " at " << k;
        EXPECT_EQ(got.back(), total ? want.back() : 0) << "n " << n;  // the total only where asked for
      }
    }
  }
}

// Narrower sums (pkt's marks are 32-bit) give the same prefixes.
TEST(DeviceScan, ThirtyTwoBitSums) {
  const auto want = prefix_by_hand(0, 5000);
  const auto got = team_prefixes<std::uint32_t>(0, 5000, true);
  for (std::size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k], want[k]) << k;
  EXPECT_EQ(got.back(), want.back());
}

TEST(DeviceScan, ScanWithATotalMatchesTheSum) {
  const std::int64_t n = 12345;
  Kokkos::View<std::int64_t*, Mem> out("out", n);
  const std::int64_t total = scan_total(n, out);
  const auto want = prefix_by_hand(0, n);
  EXPECT_EQ(total, want.back());
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(h(i), want[std::size_t(i)]) << i;
}

}  // namespace
