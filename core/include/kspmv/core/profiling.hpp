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

// Consecutive regions of one scope (a conversion's phases): enter() ends
// the phase before it, and the scope's end (an exception included) ends
// the last, so the profile's regions stay balanced.
class ProfilingPhases {
 public:
  ProfilingPhases() = default;
  ~ProfilingPhases() { leave(); }
  ProfilingPhases(const ProfilingPhases&) = delete;
  ProfilingPhases& operator=(const ProfilingPhases&) = delete;
  void enter(const std::string& name) {
    leave();
    Kokkos::Profiling::pushRegion(name);
    open_ = true;
  }
  void leave() {
    if (open_) Kokkos::Profiling::popRegion();
    open_ = false;
  }

 private:
  bool open_ = false;
};

}  // namespace kspmv::detail
