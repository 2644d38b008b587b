// Where the model's calibration comes from, so that a user never has to
// name one: $KSPMV_CALIBRATION if set, else the user's cache entry for the
// device, else a calibration installed with the library for a device of
// that name, else none (then Format::Auto calibrates on first use on a
// device: kspmv/matrix.hpp).
//
// Calibration files are named by the device's key: its name in lower case,
// every run of other characters than letters and digits one '-'
// ("NVIDIA H100 80GB HBM3" -> nvidia-h100-80gb-hbm3.cal); the file's own
// `name =` line must match the device, so a file copied to the wrong name
// is refused rather than trusted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kspmv/model/model.hpp"

namespace kspmv {

std::string calibration_device_key(const std::string& device_name);

// $XDG_CACHE_HOME/kspmv, else $HOME/.cache/kspmv; "" when neither is set.
std::string calibration_cache_dir();
// The cache entry for a device ("" when there is no cache directory).
std::string calibration_cache_path(const std::string& device_name);
// Folders holding the calibrations shipped with the library: those in
// $KSPMV_CALIBRATION_PATH (':'-separated, for a relocated install), the
// installed share/kspmv/calibration, then the source tree's
// perf_tests/calibration (a build used in place).
std::vector<std::string> installed_calibration_dirs();

struct CalibrationLocation {
  std::string path;  // "" when none was found
  std::string from;  // "KSPMV_CALIBRATION", "user cache", "installed" or "none"
};
// The calibration the model should read for `device_name`, by the order
// above. Finding nothing is not an error.
CalibrationLocation find_calibration(const std::string& device_name);

// read_calibration(), checked to be a calibration of `device_name` (a
// ParseError naming the file otherwise), with ModelHardware::source set to
// "<from> <path>".
ModelHardware read_calibration_of(const CalibrationLocation& where, const std::string& device_name);

// Writes a calibration so that a reader never sees half a file: into a
// temporary file beside `path`, then renamed over it. Creates the folder.
void write_calibration_atomically(const std::string& path, const ModelHardware& hw);

// The cache entry for `device_name`, made by `calibrate` once across the
// processes of a user (an MPI job's ranks starting together included):
// the first process takes a lock file beside the entry, calibrates and
// writes it; the others wait for it (up to wait_seconds) and read it. A
// lock older than stale_seconds is taken to be left by a process that
// died and is removed. Where there is no cache directory, the entry cannot
// be written, or the wait runs out, `calibrate` runs here and its result
// is used without being cached (ModelHardware::source says so). An
// unreadable existing entry is a ParseError naming it; it is left as it is.
ModelHardware cached_calibration(const std::string& device_name, const std::function<ModelHardware()>& calibrate,
                                 double wait_seconds = 300, double stale_seconds = 900);

}  // namespace kspmv
