// Finding, caching and sharing the model's calibration
// (calibration_search.hpp).
#include "kspmv/model/calibration_search.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>

#include "kspmv/core/error.hpp"

#ifndef KSPMV_CALIBRATION_INSTALL_DIR
#define KSPMV_CALIBRATION_INSTALL_DIR ""
#endif
#ifndef KSPMV_CALIBRATION_SOURCE_DIR
#define KSPMV_CALIBRATION_SOURCE_DIR ""
#endif

namespace kspmv {

namespace fs = std::filesystem;

std::string calibration_device_key(const std::string& device_name) {
  std::string key;
  bool gap = false;
  for (const unsigned char c : device_name) {
    if (std::isalnum(c)) {
      if (gap && !key.empty()) key += '-';
      key += static_cast<char>(std::tolower(c));
      gap = false;
    } else {
      gap = true;
    }
  }
  return key.empty() ? std::string("unnamed-device") : key;
}

std::string calibration_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/kspmv";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kspmv";
  return {};
}

std::string calibration_cache_path(const std::string& device_name) {
  const std::string dir = calibration_cache_dir();
  return dir.empty() ? dir : dir + "/" + calibration_device_key(device_name) + ".cal";
}

std::vector<std::string> installed_calibration_dirs() {
  std::vector<std::string> dirs;
  // A relocated install (or a binary carried to another machine) names
  // its folders here.
  if (const char* p = std::getenv("KSPMV_CALIBRATION_PATH"); p && *p) {
    std::string list(p);
    for (std::size_t b = 0; b <= list.size();) {
      const std::size_t e = std::min(list.find(':', b), list.size());
      if (e > b) dirs.push_back(list.substr(b, e - b));
      b = e + 1;
    }
  }
  for (const char* d : {KSPMV_CALIBRATION_INSTALL_DIR, KSPMV_CALIBRATION_SOURCE_DIR})
    if (*d) dirs.emplace_back(d);
  return dirs;
}

namespace {
bool is_file(const std::string& p) {
  std::error_code ec;
  return !p.empty() && fs::is_regular_file(p, ec);
}
}  // namespace

CalibrationLocation find_calibration(const std::string& device_name) {
  if (const char* p = std::getenv("KSPMV_CALIBRATION"); p && *p) return {p, "KSPMV_CALIBRATION"};
  if (const std::string c = calibration_cache_path(device_name); is_file(c)) return {c, "user cache"};
  for (const auto& dir : installed_calibration_dirs()) {
    const std::string p = dir + "/" + calibration_device_key(device_name) + ".cal";
    if (is_file(p)) return {p, "installed"};
  }
  return {"", "none"};
}

ModelHardware read_calibration_of(const CalibrationLocation& where, const std::string& device_name) {
  ModelHardware hw = read_calibration(where.path);
  // $KSPMV_CALIBRATION is the user's explicit choice (another device's
  // figures may be what they want to study); found files must match.
  if (where.from != "KSPMV_CALIBRATION" && hw.name != device_name)
    throw ParseError(where.path, 0,
                     "holds a calibration of '" + hw.name + "', not of this device ('" + device_name +
                         "'); remove it or run kspmv calibrate");
  hw.source = where.from + " " + where.path;
  return hw;
}

void write_calibration_atomically(const std::string& path, const ModelHardware& hw) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) throw IoError("cannot create " + target.parent_path().string() + ": " + ec.message());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    write_calibration(tmp, hw);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw IoError("cannot write " + path + ": " + ec.message());
  }
}

ModelHardware cached_calibration(const std::string& device_name, const std::function<ModelHardware()>& calibrate,
                                 double wait_seconds, double stale_seconds) {
  const std::string path = calibration_cache_path(device_name);
  auto uncached = [&](const std::string& why) {
    ModelHardware hw = calibrate();
    hw.source = "calibrated on first use, not cached (" + why + ")";
    return hw;
  };
  if (path.empty()) return uncached("neither XDG_CACHE_HOME nor HOME is set");
  if (is_file(path)) return read_calibration_of({path, "user cache"}, device_name);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return uncached("cannot create " + fs::path(path).parent_path().string() + ": " + ec.message());
  const std::string lock = path + ".lock";
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const int fd = ::open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd >= 0) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      [[maybe_unused]] const auto n = ::write(fd, pid.data(), pid.size());
      ::close(fd);
      struct Unlock {
        std::string p;
        ~Unlock() {
          std::error_code e;
          fs::remove(p, e);
        }
      } unlock{lock};
      // Another process may have finished between our look and our lock.
      if (is_file(path)) return read_calibration_of({path, "user cache"}, device_name);
      ModelHardware hw = calibrate();
      try {
        write_calibration_atomically(path, hw);
        hw.source = "calibrated on first use, cached in " + path;
      } catch (const IoError& e) {
        hw.source = std::string("calibrated on first use, not cached (") + e.what() + ")";
      }
      return hw;
    }
    if (errno != EEXIST) return uncached("cannot create the lock " + lock);
    // Someone else calibrates: wait for their entry.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (is_file(path)) return read_calibration_of({path, "user cache"}, device_name);
    const auto age = fs::file_time_type::clock::now() - fs::last_write_time(lock, ec);
    if (!ec && std::chrono::duration<double>(age).count() > stale_seconds) {
      fs::remove(lock, ec);  // left by a process that died
      continue;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > wait_seconds)
      return uncached("another process held " + lock + " longer than " + std::to_string(int(wait_seconds)) + " s");
  }
}

}  // namespace kspmv
