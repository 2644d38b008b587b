// Typed errors thrown at kspmv's API boundary.
//
// Every failure a caller can provoke with bad input (a malformed file, a
// size that does not fit 32-bit indices, a format that cannot hold a
// matrix, vectors of the wrong length) is reported as one of these, with a
// message that names what was wrong. Nothing is ever silently truncated.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kspmv {

enum class ErrorCode {
  InvalidArgument,  // a caller passed something that cannot be used
  Parse,            // malformed input file or spec
  Overflow,         // a size or index does not fit the target integer type
  Unsupported,      // a valid input the library does not handle
  FormatCannotHold, // a format's conversion refuses this matrix
  Io,               // a file could not be opened, read or written
  OutOfMemory,      // an allocation larger than the memory available
  Limit,            // input past a limit the caller set (untrusted input)
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& what)
      : std::runtime_error(what), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

struct InvalidArgumentError : Error {
  explicit InvalidArgumentError(const std::string& w)
      : Error(ErrorCode::InvalidArgument, w) {}
};
struct OverflowError : Error {
  explicit OverflowError(const std::string& w) : Error(ErrorCode::Overflow, w) {}
};
struct UnsupportedError : Error {
  explicit UnsupportedError(const std::string& w)
      : Error(ErrorCode::Unsupported, w) {}
};
struct FormatCannotHoldError : Error {
  explicit FormatCannotHoldError(const std::string& w)
      : Error(ErrorCode::FormatCannotHold, w) {}
};
struct OutOfMemoryError : Error {
  explicit OutOfMemoryError(const std::string& w) : Error(ErrorCode::OutOfMemory, w) {}
};
struct LimitError : Error {
  explicit LimitError(const std::string& w) : Error(ErrorCode::Limit, w) {}
};

// Memory the host could still give (MemAvailable), in bytes; -1 unknown.
std::int64_t host_available_bytes();
// Throws OutOfMemoryError when `bytes` exceed `available` (>= 0), naming
// what needed them.
void check_fits(std::int64_t bytes, std::int64_t available, const std::string& what, const char* where);

struct IoError : Error {
  explicit IoError(const std::string& w) : Error(ErrorCode::Io, w) {}
};

// A parse error carries where it happened: file (or spec), 1-based line.
class ParseError : public Error {
 public:
  ParseError(const std::string& source, std::int64_t line,
             const std::string& problem);
  const std::string& source() const noexcept { return source_; }
  std::int64_t line() const noexcept { return line_; }
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string source_;
  std::int64_t line_;
  std::string problem_;
};

// Narrowing with a check: the value must fit To, else OverflowError naming
// `what` (e.g. "number of rows").
template <class To, class From>
To checked_cast(From v, const char* what) {
  static_assert(std::is_integral<To>::value && std::is_integral<From>::value,
                "checked_cast is for integers");
  const bool neg = std::is_signed<From>::value && v < From(0);
  if (neg && !std::is_signed<To>::value)
    throw OverflowError(std::string(what) + " is negative (" +
                        std::to_string(v) + ")");
  if (!neg) {
    using U = typename std::make_unsigned<From>::type;
    using UT = typename std::make_unsigned<To>::type;
    if (static_cast<unsigned long long>(static_cast<U>(v)) >
        static_cast<unsigned long long>(
            static_cast<UT>(std::numeric_limits<To>::max())))
      throw OverflowError(std::string(what) + " = " + std::to_string(v) +
                          " does not fit a " + std::to_string(sizeof(To) * 8) +
                          "-bit index (max " +
                          std::to_string(std::numeric_limits<To>::max()) + ")");
  } else if (static_cast<long long>(v) <
             static_cast<long long>(std::numeric_limits<To>::min())) {
    throw OverflowError(std::string(what) + " = " + std::to_string(v) +
                        " is below the range of the target index type");
  }
  return static_cast<To>(v);
}

}  // namespace kspmv
