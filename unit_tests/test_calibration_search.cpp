// Finding and caching the model's calibration (calibration_search.hpp):
// the search order, device keys, the user's cache with its lock, and the
// shipped calibrations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "kspmv/core/error.hpp"
#include "kspmv/model/calibration_search.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace kspmv;

namespace {

// Sets (or with nullopt unsets) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh folder, removed with the scope; the cache lives in it.
// The shipped calibrations are found through $KSPMV_CALIBRATION_PATH too
// (the test binary may run away from its source tree: calibration_dir()).
struct TempCache {
  fs::path dir;
  ScopedEnv xdg, cal, shipped;
  TempCache()
      : dir(fs::temp_directory_path() /
            ("kspmv-cal-" + std::to_string(::getpid()) + "-" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))),
        xdg("XDG_CACHE_HOME", dir.string()),
        cal("KSPMV_CALIBRATION", std::nullopt),
        shipped("KSPMV_CALIBRATION_PATH", kspmv_test::calibration_dir()) {
    fs::create_directories(dir);
  }
  ~TempCache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const std::string kDevice = "Test GPU 9000 (64 GB)";

ModelHardware fitted(double bandwidth) {
  ModelHardware hw;
  hw.name = kDevice;
  hw.bandwidth_gbs = bandwidth;
  hw.fixed_us["csr"] = 3.5;
  hw.calibrated = true;
  return hw;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(CalibrationSearch, DeviceKeyIsTheNameInLowerCaseWithOneDashPerGap) {
  EXPECT_EQ(calibration_device_key("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(calibration_device_key(kDevice), "test-gpu-9000-64-gb");
  EXPECT_EQ(calibration_device_key("  --A__b  "), "a-b");
  EXPECT_EQ(calibration_device_key(" ?? "), "unnamed-device");
}

TEST(CalibrationSearch, CacheDirFollowsXdgThenHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", std::string("/x/cache")), home("HOME", std::string("/h"));
    EXPECT_EQ(calibration_cache_dir(), "/x/cache/kspmv");
    EXPECT_EQ(calibration_cache_path(kDevice), "/x/cache/kspmv/test-gpu-9000-64-gb.cal");
  }
  {
    // The XDG spec: a relative path is invalid and ignored.
    ScopedEnv xdg("XDG_CACHE_HOME", std::string("relative")), home("HOME", std::string("/h"));
    EXPECT_EQ(calibration_cache_dir(), "/h/.cache/kspmv");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt), home("HOME", std::nullopt);
    EXPECT_EQ(calibration_cache_dir(), "");
    EXPECT_EQ(calibration_cache_path(kDevice), "");
  }
}

TEST(CalibrationSearch, OrderIsEnvironmentThenCacheThenInstalled) {
  TempCache cache;
  const std::string h100 = "NVIDIA H100 80GB HBM3";
  // Shipped with the library (the source tree's copy in a build used in place).
  CalibrationLocation w = find_calibration(h100);
  EXPECT_EQ(w.from, "installed");
  EXPECT_EQ(fs::path(w.path).filename(), "nvidia-h100-80gb-hbm3.cal");
  const ModelHardware shipped = read_calibration_of(w, h100);
  EXPECT_TRUE(shipped.calibrated);
  EXPECT_NE(shipped.source.find("installed"), std::string::npos);
  // The user's cache comes first.
  ModelHardware mine = shipped;
  mine.bandwidth_gbs = 1234;
  write_calibration_atomically(calibration_cache_path(h100), mine);
  w = find_calibration(h100);
  EXPECT_EQ(w.from, "user cache");
  EXPECT_DOUBLE_EQ(read_calibration_of(w, h100).bandwidth_gbs, 1234);
  // $KSPMV_CALIBRATION before both, whatever device it was fitted on.
  const std::string other = (cache.dir / "other.cal").string();
  write_calibration_atomically(other, fitted(777));
  {
    ScopedEnv env("KSPMV_CALIBRATION", other);
    w = find_calibration(h100);
    EXPECT_EQ(w.from, "KSPMV_CALIBRATION");
    EXPECT_DOUBLE_EQ(read_calibration_of(w, h100).bandwidth_gbs, 777);
  }
  // A device nobody calibrated.
  EXPECT_EQ(find_calibration("Unheard-of Accelerator").from, "none");
  EXPECT_EQ(find_calibration("Unheard-of Accelerator").path, "");
}

TEST(CalibrationSearch, AFoundFileOfAnotherDeviceIsRefused) {
  TempCache cache;
  ModelHardware wrong = fitted(500);
  wrong.name = "Some Other GPU";
  write_calibration_atomically(calibration_cache_path(kDevice), wrong);
  const CalibrationLocation w = find_calibration(kDevice);
  ASSERT_EQ(w.from, "user cache");
  try {
    read_calibration_of(w, kDevice);
    FAIL() << "a calibration of another device was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.source(), w.path);
    EXPECT_NE(std::string(e.what()).find("Some Other GPU"), std::string::npos) << e.what();
  }
}

TEST(CalibrationSearch, EveryShippedCalibrationIsNamedByItsDeviceAndLoads) {
  ScopedEnv shipped("KSPMV_CALIBRATION_PATH", kspmv_test::calibration_dir());
  EXPECT_EQ(installed_calibration_dirs().front(), kspmv_test::calibration_dir());
  int seen = 0;
  for (const auto& dir : installed_calibration_dirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".cal") continue;
      const ModelHardware hw = read_calibration(e.path().string());
      EXPECT_EQ(e.path().filename().string(), calibration_device_key(hw.name) + ".cal") << e.path();
      EXPECT_TRUE(hw.calibrated);
      ++seen;
    }
  }
  EXPECT_GE(seen, 1) << "no shipped calibration found";
}

TEST(CalibrationCache, CalibratesOnceThenReadsTheCache) {
  TempCache cache;
  int runs = 0;
  auto calibrate = [&] {
    ++runs;
    return fitted(2500);
  };
  const ModelHardware first = cached_calibration(kDevice, calibrate);
  EXPECT_EQ(runs, 1);
  EXPECT_DOUBLE_EQ(first.bandwidth_gbs, 2500);
  EXPECT_NE(first.source.find("cached in"), std::string::npos) << first.source;
  const std::string path = calibration_cache_path(kDevice);
  ASSERT_TRUE(fs::is_regular_file(path));
  EXPECT_FALSE(fs::exists(path + ".lock"));
  const ModelHardware second = cached_calibration(kDevice, calibrate);
  EXPECT_EQ(runs, 1);
  EXPECT_DOUBLE_EQ(second.bandwidth_gbs, 2500);
  EXPECT_DOUBLE_EQ(second.fixed_us.at("csr"), 3.5);
  EXPECT_NE(second.source.find("user cache"), std::string::npos) << second.source;
  // And default lookups find it there.
  EXPECT_EQ(find_calibration(kDevice).from, "user cache");
}

TEST(CalibrationCache, ACorruptEntryIsAParseErrorAndStaysAsItWas) {
  TempCache cache;
  const std::string path = calibration_cache_path(kDevice);
  fs::create_directories(fs::path(path).parent_path());
  { std::ofstream(path) << "name = " << kDevice << "\nbandwidth_gbs = fast\n"; }
  const std::string before = slurp(path);
  int runs = 0;
  try {
    cached_calibration(kDevice, [&] {
      ++runs;
      return fitted(1);
    });
    FAIL() << "a corrupt cache entry was accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.source(), path);
    EXPECT_EQ(e.line(), 2);
  }
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(slurp(path), before);
}

TEST(CalibrationCache, WaitsForTheProcessHoldingTheLock) {
  TempCache cache;
  const std::string path = calibration_cache_path(kDevice);
  fs::create_directories(fs::path(path).parent_path());
  { std::ofstream(path + ".lock") << "12345\n"; }
  // "The other process" finishes while we wait.
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    write_calibration_atomically(path, fitted(1800));
    fs::remove(path + ".lock");
  });
  int runs = 0;
  const ModelHardware hw = cached_calibration(kDevice, [&] {
    ++runs;
    return fitted(1);
  });
  other.join();
  EXPECT_EQ(runs, 0);
  EXPECT_DOUBLE_EQ(hw.bandwidth_gbs, 1800);
}

TEST(CalibrationCache, ALockHeldTooLongMeansCalibratingHereUncached) {
  TempCache cache;
  const std::string path = calibration_cache_path(kDevice);
  fs::create_directories(fs::path(path).parent_path());
  { std::ofstream(path + ".lock") << "12345\n"; }
  int runs = 0;
  const ModelHardware hw = cached_calibration(
      kDevice,
      [&] {
        ++runs;
        return fitted(900);
      },
      /*wait_seconds=*/0.3);
  EXPECT_EQ(runs, 1);
  EXPECT_DOUBLE_EQ(hw.bandwidth_gbs, 900);
  EXPECT_NE(hw.source.find("not cached"), std::string::npos) << hw.source;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::exists(path + ".lock"));  // not ours to remove
}

TEST(CalibrationCache, AStaleLockIsRemovedAndTheEntryMade) {
  TempCache cache;
  const std::string path = calibration_cache_path(kDevice);
  fs::create_directories(fs::path(path).parent_path());
  { std::ofstream(path + ".lock") << "12345\n"; }
  fs::last_write_time(path + ".lock", fs::file_time_type::clock::now() - std::chrono::hours(2));
  int runs = 0;
  const ModelHardware hw = cached_calibration(kDevice, [&] {
    ++runs;
    return fitted(1100);
  });
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(fs::is_regular_file(path));
  EXPECT_FALSE(fs::exists(path + ".lock"));
  EXPECT_DOUBLE_EQ(read_calibration(path).bandwidth_gbs, 1100);
  EXPECT_NE(hw.source.find("cached in"), std::string::npos);
}

TEST(CalibrationCache, NoCacheFolderMeansCalibratingUncached) {
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt), home("HOME", std::nullopt);
  int runs = 0;
  const ModelHardware hw = cached_calibration(kDevice, [&] {
    ++runs;
    return fitted(600);
  });
  EXPECT_EQ(runs, 1);
  EXPECT_NE(hw.source.find("not cached"), std::string::npos) << hw.source;
}

TEST(CalibrationCache, AFailedCalibrationLeavesNoEntryAndNoLock) {
  TempCache cache;
  const std::string path = calibration_cache_path(kDevice);
  EXPECT_THROW(cached_calibration(kDevice, []() -> ModelHardware { throw IoError("device went away"); }), IoError);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".lock"));
}
