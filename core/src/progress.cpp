#include "kspmv/core/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace kspmv {

ProgressFn terminal_progress() {
  if (!isatty(STDERR_FILENO)) return {};
  struct State {
    std::chrono::steady_clock::time_point last{};
    std::string stage;
  };
  auto st = std::make_shared<State>();
  return [st](const char* stage, double fraction) {
    const auto now = std::chrono::steady_clock::now();
    const bool done = fraction >= 1.0;
    if (!done && st->stage == stage && now - st->last < std::chrono::milliseconds(200)) return;
    st->last = now;
    st->stage = stage;
    std::fprintf(stderr, "\r  %-20s %5.1f%%%s", stage, 100.0 * fraction, done ? "\n" : "");
    std::fflush(stderr);
  };
}

}  // namespace kspmv
