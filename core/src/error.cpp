#include "kspmv/core/error.hpp"

#include <unistd.h>

#include <fstream>

namespace kspmv {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::Parse: return "parse error";
    case ErrorCode::Overflow: return "overflow";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::FormatCannotHold: return "format cannot hold matrix";
    case ErrorCode::Io: return "I/O error";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::Limit: return "limit";
  }
  return "error";
}

static std::string parse_message(const std::string& source, std::int64_t line,
                                 const std::string& problem) {
  std::string m = source;
  if (line > 0) m += ":" + std::to_string(line);
  return m + ": " + problem;
}

ParseError::ParseError(const std::string& source, std::int64_t line,
                       const std::string& problem)
    : Error(ErrorCode::Parse, parse_message(source, line, problem)),
      source_(source),
      line_(line),
      problem_(problem) {}

std::int64_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? std::int64_t(pages) * size : -1;
}

void check_fits(std::int64_t bytes, std::int64_t available, const std::string& what, const char* where) {
  if (available >= 0 && bytes > available)
    throw OutOfMemoryError(what + " needs " + std::to_string(bytes / (1 << 20)) + " MiB, " + where + " has " +
                           std::to_string(available / (1 << 20)) + " MiB available");
}

}  // namespace kspmv
