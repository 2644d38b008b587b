// A Kokkos Tools region for a scope: conversion, refresh, apply, transpose,
// auto's trials and the parts of the pattern figures. nsys (through the
// NVTX connector) and the Kokkos Tools show kspmv's work under these
// names, raw CUDA launches included. Costs one check of a callback pointer
// when no tool is loaded.
#pragma once

#include <Kokkos_Core.hpp>
#include <string>

namespace kspmv::detail {

class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&) = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

}  // namespace kspmv::detail
