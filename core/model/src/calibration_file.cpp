// Calibration files ("key = value" lines) and the calibration the model
// uses by default.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>

#include "kspmv/core/device_info.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/model/calibration_search.hpp"
#include "kspmv/model/model.hpp"

namespace kspmv {

namespace {
// The per-format figures: "PREFIX.FORMAT = value" lines, in the order a
// calibration file lists them.
using FormatFigures = std::map<std::string, double> ModelHardware::*;
constexpr std::pair<const char*, FormatFigures> kFormatKeys[] = {
    {"fixed_us.", &ModelHardware::fixed_us},
    {"host_us.", &ModelHardware::host_us},
    {"efficiency.", &ModelHardware::efficiency},
    {"efficiency_irregular.", &ModelHardware::efficiency_irregular},
    {"efficiency_near.", &ModelHardware::efficiency_near},
    {"efficiency_l2.", &ModelHardware::efficiency_l2},
    {"efficiency_l2_irregular.", &ModelHardware::efficiency_l2_irregular},
    {"chain_ns.", &ModelHardware::chain_ns},
    {"chain_dram_ns.", &ModelHardware::chain_dram_ns},
    {"line_ns.", &ModelHardware::line_ns},
    {"setup_us.", &ModelHardware::setup_us},
    {"setup_ns_per_nnz.", &ModelHardware::setup_ns_per_nnz},
    {"refresh_spmvs.", &ModelHardware::refresh_spmvs}};
// Keys of earlier calibration files the model no longer uses: read (the
// format name still checked) and dropped, so those files still load.
constexpr const char* kRetiredKeys[] = {"crowd_ns.", "crowd_scattered_ns."};
}  // namespace

ModelHardware read_calibration(const std::string& path, ModelHardware hw) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read calibration file " + path);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto h = line.find('#'); h != std::string::npos) line.resize(h);
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      if (line.find_first_not_of(" \t\r") != std::string::npos) throw ParseError(path, lineno, "expected key = value");
      continue;
    }
    auto trim = [](std::string v) {
      const auto b = v.find_first_not_of(" \t\r"), e = v.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
    };
    const std::string k = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    const bool num = end && end != v.c_str() && *end == '\0';
    if (k == "name") { hw.name = v; continue; }
    if (!num) throw ParseError(path, lineno, "'" + k + "' needs a number, got '" + v + "'");
    if (k == "bandwidth_gbs") hw.bandwidth_gbs = d;
    else if (k == "l2_bytes") hw.l2_bytes = static_cast<std::int64_t>(d);
    else if (k == "processors") hw.processors = static_cast<int>(d);
    else if (k == "cores") hw.cores = static_cast<int>(d);
    else if (k == "warp") hw.warp = static_cast<int>(d);
    else if (k == "block") hw.block = static_cast<int>(d);
    else if (k == "memory_clock_ghz") hw.memory_clock_ghz = d;
    else if (k == "bus_width_bits") hw.bus_width_bits = static_cast<int>(d);
    else if (k == "core_clock_ghz") hw.core_clock_ghz = d;
    else if (k == "pcie_gbs") hw.pcie_gbs = d;
    else if (k == "launch_us") hw.launch_us = d;
    else if (k == "l2_gain") hw.l2_gain = d;
    else if (k == "serial_ns") hw.serial_ns = d;
    else if (k == "near_bytes") hw.near_bytes = d;
    else if (k == "far_bytes") hw.far_bytes = d;
    else {
      const auto retired = std::find_if(std::begin(kRetiredKeys), std::end(kRetiredKeys),
                                        [&](const char* key) { return k.rfind(key, 0) == 0; });
      if (retired != std::end(kRetiredKeys)) {
        parse_format(k.substr(std::strlen(*retired)));
        continue;
      }
      const auto it = std::find_if(std::begin(kFormatKeys), std::end(kFormatKeys),
                                   [&](const auto& key) { return k.rfind(key.first, 0) == 0; });
      if (it == std::end(kFormatKeys)) throw ParseError(path, lineno, "unknown key '" + k + "'");
      const std::string format = k.substr(std::strlen(it->first));
      parse_format(format);  // unknown format names are errors
      (hw.*(it->second))[format] = d;
    }
  }
  hw.calibrated = true;
  return hw;
}

void write_calibration(const std::string& path, const ModelHardware& hw) {
  std::ofstream out(path);
  if (!out) throw IoError("cannot write " + path);
  // Every digit a double holds, so a file read back gives the same model.
  out.precision(std::numeric_limits<double>::max_digits10);
  out << "# kspmv performance-model calibration (kspmv calibrate)\n"
      << "name = " << hw.name << "\nbandwidth_gbs = " << hw.bandwidth_gbs << "\nl2_bytes = " << hw.l2_bytes
      << "\nprocessors = " << hw.processors << "\ncores = " << hw.cores << "\nwarp = " << hw.warp
      << "\nblock = " << hw.block << "\nmemory_clock_ghz = " << hw.memory_clock_ghz
      << "\nbus_width_bits = " << hw.bus_width_bits << "\ncore_clock_ghz = " << hw.core_clock_ghz
      << "\npcie_gbs = " << hw.pcie_gbs << "\nlaunch_us = " << hw.launch_us << "\nl2_gain = " << hw.l2_gain
      << "\nserial_ns = " << hw.serial_ns << "\n";
  if (hw.near_bytes > 0) out << "near_bytes = " << hw.near_bytes << "\nfar_bytes = " << hw.far_bytes << "\n";
  for (const auto& [prefix, figures] : kFormatKeys)
    for (const auto& [k, v] : hw.*figures) out << prefix << k << " = " << v << "\n";
}

namespace {
std::mutex g_model_mutex;
ModelHardware* g_model = nullptr;
}  // namespace

const ModelHardware& default_model() {
  std::lock_guard<std::mutex> lock(g_model_mutex);
  if (!g_model) {
    const std::string device = device_figures<Kokkos::DefaultExecutionSpace>().name;
    const CalibrationLocation where = find_calibration(device);
    g_model = new ModelHardware(where.path.empty() ? ModelHardware() : read_calibration_of(where, device));
  }
  return *g_model;
}

void set_default_model(const ModelHardware& hw) {
  std::lock_guard<std::mutex> lock(g_model_mutex);
  if (!g_model) g_model = new ModelHardware();
  *g_model = hw;
}

}  // namespace kspmv
