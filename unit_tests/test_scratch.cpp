// The pool of device blocks behind conversions' temporaries
// (kspmv/core/scratch.hpp), exercised on the host memory space (a CUDA
// build runs the same code on its device through every conversion).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kspmv/core/scratch.hpp"

namespace {

using Pool = kspmv::detail::ScratchPool<Kokkos::HostSpace>;

// A block given back is the one taken next for the same size or a
// smaller one (the smallest kept block that fits), not for a request past
// it; release frees every kept block.
TEST(Scratch, PoolReusesBlocksThatFit) {
  Pool& pool = Pool::instance();
  pool.release();
  const auto a = pool.take(100000);
  ASSERT_NE(a.first, nullptr);
  EXPECT_GE(a.second, std::size_t(100000));
  static_cast<char*>(a.first)[99999] = 7;  // the whole request is writable
  pool.give_back(a.first, a.second);
  EXPECT_EQ(pool.kept_bytes(), a.second);
  const auto b = pool.take(90000);
  EXPECT_EQ(b.first, a.first);
  EXPECT_EQ(pool.kept_bytes(), std::size_t(0));
  pool.give_back(b.first, b.second);
  const auto bigger = pool.take(a.second + 1);  // does not fit: a new block
  EXPECT_NE(bigger.first, a.first);
  pool.give_back(bigger.first, bigger.second);
  const auto smaller = pool.take(1000);  // the smallest kept block that fits: a's
  EXPECT_EQ(smaller.first, a.first);
  pool.give_back(smaller.first, smaller.second);
  EXPECT_EQ(pool.kept_bytes(), a.second + bigger.second);
  pool.release();
  EXPECT_EQ(pool.kept_bytes(), std::size_t(0));
}

// Blocks past the pool's limit in all are freed as they come back, not
// kept; on a host space the limit is kScratchKeptBytes unless set.
TEST(Scratch, PoolKeepsAtMostItsLimit) {
  Pool& pool = Pool::instance();
  pool.release();
  const std::size_t was = kspmv::scratch_limit<Kokkos::HostSpace>();
  EXPECT_EQ(was, kspmv::kScratchKeptBytes);
  kspmv::set_scratch_limit<Kokkos::HostSpace>(std::size_t(1) << 20);
  EXPECT_EQ(kspmv::scratch_limit<Kokkos::HostSpace>(), std::size_t(1) << 20);
  const auto big = pool.take((std::size_t(1) << 20) - 4096);
  const auto more = pool.take(1 << 16);
  pool.give_back(big.first, big.second);
  pool.give_back(more.first, more.second);
  EXPECT_LE(pool.kept_bytes(), std::size_t(1) << 20);
  EXPECT_EQ(pool.kept_bytes(), big.second);
  kspmv::set_scratch_limit<Kokkos::HostSpace>(was);
  pool.release();
}

// Lowering the limit frees the largest kept blocks until the rest fit;
// a limit of 0 keeps nothing, and a block given back then is freed.
TEST(Scratch, LoweringTheLimitFreesKeptBlocks) {
  Pool& pool = Pool::instance();
  pool.release();
  const std::size_t was = kspmv::scratch_limit<Kokkos::HostSpace>();
  const auto small = pool.take(1000), middle = pool.take(100000), large = pool.take(1000000);
  pool.give_back(small.first, small.second);
  pool.give_back(middle.first, middle.second);
  pool.give_back(large.first, large.second);
  EXPECT_EQ(pool.kept_bytes(), small.second + middle.second + large.second);
  kspmv::set_scratch_limit<Kokkos::HostSpace>(small.second + middle.second);
  EXPECT_EQ(pool.kept_bytes(), small.second + middle.second);
  EXPECT_EQ(pool.take(50000).first, middle.first);  // still kept: the smallest that fits
  pool.give_back(middle.first, middle.second);
  kspmv::set_scratch_limit<Kokkos::HostSpace>(0);
  EXPECT_EQ(pool.kept_bytes(), std::size_t(0));
  const auto again = pool.take(1000);
  pool.give_back(again.first, again.second);
  EXPECT_EQ(pool.kept_bytes(), std::size_t(0));
  kspmv::set_scratch_limit<Kokkos::HostSpace>(was);
}

// A set's views hold what is written to them until the set ends.
TEST(Scratch, SetViewsHoldTheirValues) {
  Kokkos::DefaultHostExecutionSpace space;
  kspmv::detail::ScratchSet<Kokkos::DefaultHostExecutionSpace> temps(space);
  const auto a = temps.take<int>("a", 1000);
  const auto b = temps.take<double>("b", 0);
  ASSERT_EQ(a.extent(0), 1000u);
  EXPECT_EQ(b.extent(0), 0u);
  for (int i = 0; i < 1000; ++i) a(i) = i;
  std::int64_t sum = 0;
  for (int i = 0; i < 1000; ++i) sum += a(i);
  EXPECT_EQ(sum, 999 * 1000 / 2);
}

// The entries of a and b that do not hold a(i) = i - 500 and
// b(i) = 3 i + 1. A free function: CUDA's extended lambdas may not sit in
// a test's private TestBody.
template <class A, class B>
std::int64_t upload_mismatches(const Kokkos::DefaultExecutionSpace& space, const A& a, const B& b) {
  std::int64_t wrong = 0;
  const auto nb = static_cast<std::int64_t>(b.extent(0));
  Kokkos::parallel_reduce(
      "kspmv_test::upload", Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(space, 0, a.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& w) {
        w += a(i) != i - 500 ? 1 : 0;
        if (i < nb) w += b(i) != 3 * i + 1 ? 1 : 0;
      },
      wrong);
  return wrong;
}

// upload() gives a temporary holding the vector's values, on the default
// execution space (the device in a CUDA build); a vector passed as an
// rvalue is the set's from then on.
TEST(Scratch, UploadHoldsTheVectorsValues) {
  Kokkos::DefaultExecutionSpace space;
  kspmv::detail::ScratchSet<Kokkos::DefaultExecutionSpace> temps(space);
  std::vector<int> by_reference(1000);
  std::iota(by_reference.begin(), by_reference.end(), -500);
  std::vector<std::int64_t> moved(777);
  for (std::size_t i = 0; i < moved.size(); ++i) moved[i] = 3 * static_cast<std::int64_t>(i) + 1;
  const auto a = temps.upload(by_reference, "a");
  const auto b = temps.upload(std::move(moved), "b");
  const auto none = temps.upload(std::vector<double>(), "none");
  EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move): the set took it
  ASSERT_EQ(a.extent(0), 1000u);
  ASSERT_EQ(b.extent(0), 777u);
  EXPECT_EQ(none.extent(0), 0u);
  EXPECT_EQ(upload_mismatches(space, a, b), 0);
  temps.give_back();
  temps.give_back();  // nothing left: no second fence
}

}  // namespace
