#include "kspmv/core/error.hpp"

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

}  // namespace kspmv
