// Progress callbacks for long operations (reading, generating, converting).
#pragma once

#include <functional>

namespace kspmv {

// Called with a stage name and the fraction done in [0, 1]. Callers may
// call it often; the receiver throttles. An empty function means silence.
using ProgressFn = std::function<void(const char* stage, double fraction)>;

// A ProgressFn that redraws one line on stderr, only when stderr is a
// terminal (so logs and CI output stay clean).
ProgressFn terminal_progress();

}  // namespace kspmv
