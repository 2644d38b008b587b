// Device temporaries of the conversions and the pattern figures, from
// blocks kept between them.
//
// On a CUDA device every Kokkos allocation waits for the device, and every
// free waits again and unmaps the pages: a conversion's dozen temporaries
// (sort keys, scan offsets, per-row counts, a value map's checks) cost more
// host time than its kernels on a matrix of a million rows (H100: 50-250
// us each, 5-16 ms of auto's set-up). A ScratchSet takes such temporaries
// from blocks a finished one gave back (after fencing their last users)
// and allocates only where none fits; a FormatArrays takes the arrays a
// format keeps from the same blocks, and the format gives them back when
// it goes. Free blocks stay held for the process, up to scratch_limit()
// bytes of them (set_scratch_limit changes it); release_scratch() (and
// Kokkos::finalize) frees them. On host memory spaces both allocate
// plainly.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kspmv {

// Free blocks kept beyond this many bytes in all are freed when given
// back, unless set_scratch_limit sets another limit. On the H200, a limit
// of a sixteenth of the device's memory (about 9 GB) instead changed the
// conversions of the FEM and set-up suites by 0.77-1.15x a format
// (geomean), within the spread between processes (docs/PERFORMANCE.md).
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
    return take_kept_or_new(size, std::numeric_limits<std::size_t>::max());
  }

  // A block for an array a format keeps (FormatArrays): the smallest kept
  // block of at least `bytes` and at most an eighth more, else a new one of
  // `bytes` (rounded to 256), so that a kept array holds no more than that
  // eighth beyond its size.
  std::pair<void*, std::size_t> take_close(std::size_t bytes) {
    const std::size_t size = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
    return take_kept_or_new(size, size + size / 8);
  }

  // Gives a block back (its users finished: the caller fenced them).
  // The first block kept after Kokkos::initialize arms a finalize hook.
  void give_back(void* p, std::size_t size) {
    {
      std::lock_guard<std::mutex> hold(lock_);
      if (kept_ + size <= limit_) {
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
    MemSpace().deallocate("kspmv::scratch", p, size);
  }

  // Frees every kept block.
  void release() { free_beyond(0); }

  std::size_t kept_bytes() {
    std::lock_guard<std::mutex> hold(lock_);
    return kept_;
  }

  // The most bytes of free blocks kept (scratch_limit).
  std::size_t limit() {
    std::lock_guard<std::mutex> hold(lock_);
    return limit_;
  }
  // Keeps at most `bytes` of free blocks from now on, freeing the largest
  // kept ones until those left fit.
  void set_limit(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> hold(lock_);
      limit_ = bytes;
    }
    free_beyond(bytes);
  }

 private:
  ScratchPool() = default;
  // The smallest kept block of `size` to `most` bytes, else a new one of
  // `size`.
  std::pair<void*, std::size_t> take_kept_or_new(std::size_t size, std::size_t most) {
    {
      std::lock_guard<std::mutex> hold(lock_);
      auto it = free_.lower_bound(size);
      if (it != free_.end() && it->first <= most) {
        const auto block = *it;
        free_.erase(it);
        kept_ -= block.first;
        return {block.second, block.first};
      }
    }
    return {allocate(size), size};
  }
  // Frees the largest kept blocks until at most `keep` bytes of them are
  // left (the frees outside the lock: a device free waits for the device).
  void free_beyond(std::size_t keep) {
    std::vector<std::pair<std::size_t, void*>> freed;
    {
      std::lock_guard<std::mutex> hold(lock_);
      while (kept_ > keep && !free_.empty()) {
        const auto last = std::prev(free_.end());
        freed.emplace_back(*last);
        kept_ -= last->first;
        free_.erase(last);
      }
    }
    for (const auto& b : freed) MemSpace().deallocate("kspmv::scratch", b.second, b.first);
  }
  // The memory space's own allocation, with no Kokkos allocation record:
  // on CUDA a record copies its header to the device and fences the
  // default instance, so every View allocated waits for the device.
  void* allocate(std::size_t size) {
    try {
      return MemSpace().allocate("kspmv::scratch", size);
    } catch (...) {  // the kept blocks may be what is missing
      release();
      return MemSpace().allocate("kspmv::scratch", size);
    }
  }
  static std::size_t rounded(std::size_t bytes) {
    std::size_t p = 256;
    while (p < bytes) p *= 2;
    const std::size_t eighth = p / 8;
    return p <= 2048 ? p : (bytes + eighth - 1) / eighth * eighth;
  }
  std::mutex lock_;
  std::multimap<std::size_t, void*> free_;
  std::size_t kept_ = 0;
  std::size_t limit_ = kScratchKeptBytes;
  bool armed_ = false;
};

// A scope's temporaries on `space`'s memory: take() gives an uninitialized
// view of n values of T (upload() one holding a host vector's), valid (for
// kernels launched meanwhile too) until the set ends or give_back() is
// called, which fence `space` once and give every block back. Views taken
// must not outlive the set: only for what no format, map or result keeps.
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

  // A temporary holding a copy of a host vector, queued on the space with
  // no fence. An asynchronous copy may read `from` until the device runs
  // it, so a vector passed by reference must stay as it is until the set
  // gives its blocks back; one passed as an rvalue the set keeps until then.
  template <class T>
  Kokkos::View<T*, memory_space> upload(const std::vector<T>& from, const std::string& label) {
    const auto v = take<T>(label, from.size());
    Kokkos::deep_copy(space_, v, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(from.data(), from.size()));
    return v;
  }
  template <class T>
  Kokkos::View<T*, memory_space> upload(std::vector<T>&& from, const std::string& label) {
    auto source = std::make_shared<const std::vector<T>>(std::move(from));
    const auto v = upload(*source, label);
    sources_.push_back(std::move(source));
    return v;
  }

  void give_back() {
    if (blocks_.empty() && sources_.empty()) return;
    space_.fence();
    for (const auto& b : blocks_) ScratchPool<memory_space>::instance().give_back(b.first, b.second);
    blocks_.clear();
    sources_.clear();
  }

 private:
  ExecSpace space_;
  std::vector<std::pair<void*, std::size_t>> blocks_;
  std::vector<std::shared_ptr<const void>> sources_;  // host vectors uploads read from
};

// Whether host memory spaces also take a format's arrays from kept blocks
// (FormatArrays), as device spaces do: off, but a test turns it on, so
// that the host build (and its sanitizers) runs the code device builds run.
inline bool& host_arrays_from_blocks() {
  static bool on = false;
  return on;
}

// Shared ownership of the blocks holding a format's arrays: the last copy
// to go fences the device (kernels may still read them, as a free waits
// for them) and gives the blocks back to the pool, which keeps them for the
// next conversion (up to its limit, scratch_limit) or frees them.
template <class MemSpace>
class KeptBlocks {
 private:
  struct Hold {
    std::vector<std::pair<void*, std::size_t>> blocks;
    Hold() = default;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() {
      if (blocks.empty()) return;
      // Past Kokkos::finalize the pool has gone with the spaces; a format
      // living on is a caller's error, and its blocks are left.
      if (!Kokkos::is_initialized()) return;
      Kokkos::fence();
      for (const auto& b : blocks) ScratchPool<MemSpace>::instance().give_back(b.first, b.second);
    }
  };
  std::shared_ptr<Hold> hold_;
  template <class ExecSpace>
  friend class FormatArrays;
};

// The arrays a conversion makes for its format to keep: take() gives an
// uninitialized view of n values of T from a kept block (ScratchPool's
// take_close), so a conversion after another, or auto's candidates after
// the ones it freed, allocates nothing, and a new block is the memory
// space's own allocation, which neither fences nor copies a header (a
// Kokkos View's allocation on CUDA does both: 0.05-0.3 ms each, as much as
// a few SpMVs of a million-row matrix). The format holds kept() with its
// views, which do not own their memory. On host memory spaces the views
// are Kokkos's own (host_arrays_from_blocks turns the blocks on).
template <class ExecSpace>
class FormatArrays {
 public:
  using memory_space = typename ExecSpace::memory_space;

  explicit FormatArrays(const ExecSpace& space) : space_(space) {
    kept_.hold_ = std::make_shared<typename KeptBlocks<memory_space>::Hold>();
  }
  FormatArrays(const FormatArrays&) = delete;
  FormatArrays& operator=(const FormatArrays&) = delete;

  template <class T>
  Kokkos::View<T*, memory_space> take(const std::string& label, std::size_t n) {
    if (!from_blocks()) return Kokkos::View<T*, memory_space>(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, label), n);
    const std::pair<void*, std::size_t> block = ScratchPool<memory_space>::instance().take_close(n * sizeof(T));
    kept_.hold_->blocks.push_back(block);
    return Kokkos::View<T*, memory_space>(static_cast<T*>(block.first), n);
  }
  // The same, every value `value` (asynchronously on the space).
  template <class T>
  Kokkos::View<T*, memory_space> take_filled(const std::string& label, std::size_t n, const T value) {
    const auto v = take<T>(label, n);
    Kokkos::deep_copy(space_, v, value);
    return v;
  }
  // A device copy of a host vector (a blocking copy: `from` may go).
  template <class T>
  Kokkos::View<T*, memory_space> upload(const std::vector<T>& from, const std::string& label) {
    const auto v = take<T>(label, from.size());
    Kokkos::deep_copy(space_, v, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(from.data(), from.size()));
    space_.fence();
    return v;
  }
  // The blocks this set takes, for the format to hold with its views
  // (shared: what the set takes after the call is held too).
  KeptBlocks<memory_space> kept() const { return kept_; }

 private:
  bool from_blocks() const {
    return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible || host_arrays_from_blocks();
  }
  ExecSpace space_;
  KeptBlocks<memory_space> kept_;
};

}  // namespace detail

// Frees the blocks kept in MemSpace for conversions' temporaries and
// formats' arrays, those no format holds now (one call per memory space).
// Kokkos::finalize frees them all.
template <class MemSpace>
void release_scratch() {
  detail::ScratchPool<MemSpace>::instance().release();
}

// The most bytes of free blocks kept in MemSpace between conversions
// (kScratchKeptBytes, 512 MiB, unless set_scratch_limit set another).
template <class MemSpace>
std::size_t scratch_limit() {
  return detail::ScratchPool<MemSpace>::instance().limit();
}
// Keeps at most `bytes` of free blocks in MemSpace from now on (0: none,
// every block freed as it comes back), freeing kept blocks beyond it now.
// Blocks that formats hold are not counted and stay theirs.
template <class MemSpace>
void set_scratch_limit(std::size_t bytes) {
  detail::ScratchPool<MemSpace>::instance().set_limit(bytes);
}

}  // namespace kspmv
