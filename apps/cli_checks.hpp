// Value checks for the CLI11 command lines of kspmv and kspmv_perf.
//
// CLI11's Range validators describe a failure by their limits ("not in
// range [2.22507e-308 - 1.79769e+308]" for PositiveNumber); these say what
// is wanted instead ("--reps: must be a positive integer, not '1.5'").
// They parse the text themselves, so "1.5" for an integer or "abc" for a
// number fails here with that message rather than as a conversion error.
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <string>

namespace kspmv_cli {

// An integer in [lo, hi], base 10; `want` names the range in the message.
// The text is rewritten in canonical form because CLI11's own conversion
// afterwards reads a leading 0 as octal; so give it with transform(), as
// check() drops the rewrite.
inline CLI::Validator integer_in(long long lo, long long hi, const std::string& want, const std::string& tag) {
  return CLI::Validator(
      [lo, hi, want](std::string& s) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
          return "must be " + want + ", not '" + s + "'";
        s = std::to_string(v);
        return std::string();
      },
      tag);
}

// A finite number for which ok(v) holds; `want` says which in the message.
inline CLI::Validator number_where(bool (*ok)(double), const std::string& want, const std::string& tag) {
  return CLI::Validator(
      [ok, want](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !std::isfinite(v) || !ok(v)) return "must be " + want + ", not '" + s + "'";
        return std::string();
      },
      tag);
}

inline CLI::Validator positive_integer() { return integer_in(1, INT_MAX, "a positive integer", "POSITIVE"); }
inline CLI::Validator non_negative_integer() { return integer_in(0, LLONG_MAX, "an integer >= 0", "NONNEGATIVE"); }
inline CLI::Validator positive_number() {
  return number_where([](double v) { return v > 0; }, "a positive number", "POSITIVE");
}
inline CLI::Validator non_negative_number() {
  return number_where([](double v) { return v >= 0; }, "a number >= 0", "NONNEGATIVE");
}
inline CLI::Validator finite_number() {
  return number_where([](double) { return true; }, "a number", "");
}

}  // namespace kspmv_cli
