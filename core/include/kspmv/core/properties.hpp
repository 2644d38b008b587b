// What a format reports about itself (kspmv info --format, the benchmark's
// CSV): name/value pairs, each format's detail::format_properties()
// overload beside its storage struct.
#pragma once

#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kspmv/config.hpp"
#include "kspmv/core/options.hpp"

namespace kspmv {

using Properties = std::vector<std::pair<std::string, std::string>>;

namespace detail {

// The kernel a format runs: its hand-tuned CUDA kernel where it has one,
// this build has the CUDA paths and the caller did not ask for the
// portable one.
inline std::string kernel_name(KernelPath k, bool has_tuned) {
#if KSPMV_ENABLE_CUDA
  if (has_tuned && k == KernelPath::Auto) return "cuda-tuned";
#else
  (void)has_tuned;
  (void)k;
#endif
  return "portable";
}

inline std::string percent(double part, double whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return b;
}

// Formats that renumber columns as well as rows (square only): in the
// internal order they take x in that order too. Such a format specialises
// this beside its struct.
template <class F>
struct permutes_x : std::false_type {};

// Formats whose apply writes to views of their own (partial sums, a
// permuted copy of x or y): two applies of one such matrix at once on two
// streams would share them. Such a format specialises this beside its
// struct and gives with_own_scratch(f): a copy of f (its other views
// shared) with new scratch views, which a kspmv::SpmvHandle holds.
template <class F>
struct has_scratch : std::false_type {};

}  // namespace detail
}  // namespace kspmv
