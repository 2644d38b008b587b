// DeviceTimer: the device time of work queued on a space, and hold(), which
// parks a CUDA stream so that a batch queued meanwhile runs back to back
// (the calibration's fixed costs are timed so).
#include "test_support.hpp"

using namespace kspmv;

namespace {
using Exec = Kokkos::DefaultExecutionSpace;

// Free function: CUDA's extended lambdas may not sit in a test's private
// TestBody.
void fill_iota(const Exec& space, const Kokkos::View<double*, Exec::memory_space>& v) {
  Kokkos::parallel_for(
      "kspmv_test::iota", Kokkos::RangePolicy<Exec>(space, 0, static_cast<int>(v.extent(0))),
      KOKKOS_LAMBDA(const int i) { v(i) = i; });
}
}  // namespace

TEST(DeviceTimer, TimesQueuedWorkAndParksTheQueue) {
  Exec space;
  DeviceTimer<Exec> timer(space);
  Kokkos::View<double*, Exec::memory_space> v("v", 1 << 16);
  timer.start();
  fill_iota(space, v);
  const double t = timer.stop();
  EXPECT_GT(t, 0);
  EXPECT_LT(t, 1.0);
  EXPECT_EQ(timer.held(), 0.0);  // no hold asked

  Kokkos::deep_copy(v, -1.0);
  timer.hold(0.05);
  Kokkos::Timer host;
  timer.start();
  for (int r = 0; r < 8; ++r) fill_iota(space, v);
  const double queued = host.seconds();
  const double batch = timer.stop();
  if (DeviceTimer<Exec>::can_hold) {
    // The stream spun for the hold while the host queued the batch without
    // waiting; the events time the batch alone.
    EXPECT_GE(timer.held(), 0.04);
    EXPECT_LT(queued, 0.04);
    EXPECT_LT(batch, 0.04);
  } else {
    EXPECT_EQ(timer.held(), 0.0);  // host spaces run work as it is launched
  }
  EXPECT_GT(batch, 0);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (std::size_t i = 0; i < h.extent(0); i += 997) ASSERT_EQ(h(i), double(i));
}
