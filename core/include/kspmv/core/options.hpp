// Options shared by every format's conversion.
#pragma once

#include "kspmv/core/progress.hpp"

namespace kspmv {

// Formats that reorder rows compute y in their internal order. By default
// they hand y back in the caller's order; solvers that stay permuted for a
// whole solve ask for Internal and use the format's permutation themselves.
enum class OutputOrder { Caller, Internal };

struct ConvertOptions {
  OutputOrder output_order = OutputOrder::Caller;
  // Lanes (threads) per row for CSR-like kernels; 0 chooses from the mean
  // row length. Must be a power of two <= 32 on CUDA.
  int vector_length = 0;
  ProgressFn progress;  // long conversions report here
};

}  // namespace kspmv
