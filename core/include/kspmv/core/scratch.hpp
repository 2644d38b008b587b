// Device temporaries of the conversions and the pattern figures, from
// blocks kept between them.
//
// On a CUDA device every Kokkos allocation waits for the device, and every
// free waits again and unmaps the pages: a conversion's dozen temporaries
// (sort keys, scan offsets, per-row counts, a value map's checks) cost more
// host time than its kernels on a matrix of a million rows (H100: 50-250
// us each, 5-16 ms of auto's set-up). A ScratchSet takes such temporaries
// from blocks a finished one gave back (after fencing their last users)
// and allocates only where none fits. Blocks stay held for the process,
// up to kScratchKeptBytes of them; release_scratch() (and Kokkos::finalize)
// frees them. On host memory spaces a ScratchSet allocates plainly.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kspmv {

// Free blocks kept beyond this many bytes in all are freed when given back.
inline constexpr std::size_t kScratchKeptBytes = std::size_t(512) << 20;

namespace detail {

template <class MemSpace>
class ScratchPool {
 public:
  static ScratchPool& instance() {
    static ScratchPool* pool = new ScratchPool;  // never destroyed: its blocks go before Kokkos::finalize
    return *pool;
  }

  // A block of at least `bytes`: the smallest kept one that fits, else a
  // new one (sizes rounded up to an eighth of their power of two, so that
  // close sizes share blocks).
  std::pair<void*, std::size_t> take(std::size_t bytes) {
    const std::size_t size = rounded(bytes);
    {
      std::lock_guard<std::mutex> hold(lock_);
      auto it = free_.lower_bound(size);
      if (it != free_.end()) {
        const auto block = *it;
        free_.erase(it);
        kept_ -= block.first;
        return {block.second, block.first};
      }
    }
    void* p = nullptr;
    try {
      p = Kokkos::kokkos_malloc<MemSpace>("kspmv::scratch", size);
    } catch (...) {  // the kept blocks may be what is missing
      release();
      p = Kokkos::kokkos_malloc<MemSpace>("kspmv::scratch", size);
    }
    return {p, size};
  }

  // Gives a block back (its users finished: the caller fenced them).
  // The first block kept after Kokkos::initialize arms a finalize hook.
  void give_back(void* p, std::size_t size) {
    {
      std::lock_guard<std::mutex> hold(lock_);
      if (kept_ + size <= kScratchKeptBytes) {
        free_.emplace(size, p);
        kept_ += size;
        if (!armed_) {
          armed_ = true;
          Kokkos::push_finalize_hook([this] {
            release();
            std::lock_guard<std::mutex> again(lock_);
            armed_ = false;
          });
        }
        return;
      }
    }
    Kokkos::kokkos_free<MemSpace>(p);
  }

  // Frees every kept block.
  void release() {
    std::multimap<std::size_t, void*> blocks;
    {
      std::lock_guard<std::mutex> hold(lock_);
      blocks.swap(free_);
      kept_ = 0;
    }
    for (const auto& b : blocks) Kokkos::kokkos_free<MemSpace>(b.second);
  }

  std::size_t kept_bytes() {
    std::lock_guard<std::mutex> hold(lock_);
    return kept_;
  }

 private:
  ScratchPool() = default;
  static std::size_t rounded(std::size_t bytes) {
    std::size_t p = 256;
    while (p < bytes) p *= 2;
    const std::size_t eighth = p / 8;
    return p <= 2048 ? p : (bytes + eighth - 1) / eighth * eighth;
  }
  std::mutex lock_;
  std::multimap<std::size_t, void*> free_;
  std::size_t kept_ = 0;
  bool armed_ = false;
};

// A scope's temporaries on `space`'s memory: take() gives an uninitialized
// view of n values of T, valid (for kernels launched meanwhile too) until
// the set ends or give_back() is called, which fence `space` once and give
// every block back. Views taken must not outlive the set: only for what
// no format, map or result keeps.
template <class ExecSpace>
class ScratchSet {
 public:
  using memory_space = typename ExecSpace::memory_space;

  explicit ScratchSet(const ExecSpace& space) : space_(space) {}
  ~ScratchSet() { give_back(); }
  ScratchSet(const ScratchSet&) = delete;
  ScratchSet& operator=(const ScratchSet&) = delete;

  template <class T>
  Kokkos::View<T*, memory_space> take(const std::string& label, std::size_t n) {
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible) {
      return Kokkos::View<T*, memory_space>(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, label), n);
    } else {
      const std::pair<void*, std::size_t> block = ScratchPool<memory_space>::instance().take(n * sizeof(T) + 1);
      blocks_.push_back(block);
      return Kokkos::View<T*, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(static_cast<T*>(block.first), n);
    }
  }

  void give_back() {
    if (blocks_.empty()) return;
    space_.fence();
    for (const auto& b : blocks_) ScratchPool<memory_space>::instance().give_back(b.first, b.second);
    blocks_.clear();
  }

 private:
  ExecSpace space_;
  std::vector<std::pair<void*, std::size_t>> blocks_;
};

}  // namespace detail

// Frees the blocks kept in MemSpace for conversions' temporaries (one
// call per memory space). Kokkos::finalize frees them all.
template <class MemSpace>
void release_scratch() {
  detail::ScratchPool<MemSpace>::instance().release();
}

}  // namespace kspmv
