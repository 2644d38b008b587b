// The value phase of a conversion, and what lets a matrix refresh its
// values in place.
//
// A conversion only moves values: every stored slot holds one entry of the
// CSR it was built from, or padding (zero). So a format built from the
// pattern with each entry's value replaced by a tag (entry k holds the bit
// pattern k + 1: tagged_pattern) holds, in its value views, which entry
// each slot came from. ValueMap::from_tags() turns that into one slot per
// entry (4 bytes a nonzero; none where the format keeps the CSR order, as
// the CSR formats do), and scatter() writes any values of that pattern into
// the format's views: the first fill after the conversion and every refresh
// after it, the same bits as a fresh conversion of those values.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/core/host_matrix.hpp"

namespace kspmv {

// The unsigned integer a tag of Scalar is written in (its size).
template <class Scalar>
using tag_bits_t = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;

// The same pattern, entry k's value the tag k + 1 (0 stays padding).
template <class Scalar>
HostCsr<Scalar> tagged_pattern(const HostCsr<Scalar>& a) {
  static_assert(sizeof(Scalar) == sizeof(tag_bits_t<Scalar>), "tags need a 4- or 8-byte scalar");
  HostCsr<Scalar> t;
  t.nrows = a.nrows;
  t.ncols = a.ncols;
  t.row_ptr = a.row_ptr;
  t.col_idx = a.col_idx;
  t.values.resize(a.values.size());
  for (std::size_t k = 0; k < t.values.size(); ++k) {
    const tag_bits_t<Scalar> tag = static_cast<tag_bits_t<Scalar>>(k + 1);
    std::memcpy(&t.values[k], &tag, sizeof tag);
  }
  return t;
}

template <class Scalar, class ExecSpace>
class ValueMap {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using values_view = Kokkos::View<Scalar*, memory_space>;
  using const_values_view = Kokkos::View<const Scalar*, memory_space>;
  // A format's value views, in a fixed order (detail::value_views).
  using views_type = std::vector<values_view>;
  static constexpr std::size_t kMaxViews = 3;

  ValueMap() = default;

  // The map of a format built from tagged_pattern() of a matrix with nnz
  // entries, read off its value views. Throws Error where an entry is not
  // in exactly one slot (the format does not only move values: a bug).
  static ValueMap from_tags(const ExecSpace& space, const views_type& views, std::int64_t nnz, const char* format) {
    if (views.size() > kMaxViews)
      throw Error(ErrorCode::InvalidArgument, std::string(format) + ": more value views than a value map holds");
    ValueMap m;
    m.nnz_ = nnz;
    std::int64_t slots = 0;
    for (const auto& v : views) {
      m.starts_.push_back(slots);
      slots += static_cast<std::int64_t>(v.extent(0));
    }
    if (slots > std::numeric_limits<int>::max())
      throw FormatCannotHoldError(std::string(format) + ": " + std::to_string(slots) +
                                  " value slots exceed the value map's 32-bit slot indices");
    using Bits = tag_bits_t<Scalar>;
    using bits_view = Kokkos::View<const Bits*, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::View<int*, memory_space> slot(Kokkos::view_alloc(space, "kspmv::value_map::slot"), nnz);
    Kokkos::View<int*, memory_space> seen(Kokkos::view_alloc(space, "kspmv::value_map::seen"), nnz);
    Kokkos::View<int, memory_space> stray(Kokkos::view_alloc(space, "kspmv::value_map::stray"));
    for (std::size_t j = 0; j < views.size(); ++j) {
      const bits_view bits(reinterpret_cast<const Bits*>(views[j].data()), views[j].extent(0));
      const int start = static_cast<int>(m.starts_[j]);
      Kokkos::parallel_for(
          "kspmv::value_map::read_tags", Kokkos::RangePolicy<ExecSpace>(space, 0, bits.extent(0)),
          KOKKOS_LAMBDA(const std::int64_t s) {
            const Bits tag = bits(s);
            if (tag == 0) return;  // padding
            if (tag > static_cast<Bits>(nnz)) {
              Kokkos::atomic_increment(&stray());
              return;
            }
            const std::int64_t k = static_cast<std::int64_t>(tag - 1);
            slot(k) = start + static_cast<int>(s);
            Kokkos::atomic_increment(&seen(k));
          });
    }
    // Every entry in exactly one slot, and whether that is its own index
    // (one view in the CSR order: no map needed).
    std::int64_t misplaced = 0, moved = 0;
    Kokkos::parallel_reduce(
        "kspmv::value_map::check", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz),
        KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& bad) { bad += seen(k) != 1; }, misplaced);
    Kokkos::parallel_reduce(
        "kspmv::value_map::in_order", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz),
        KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& off) { off += slot(k) != static_cast<int>(k); }, moved);
    int strays = 0;
    Kokkos::deep_copy(strays, stray);
    if (misplaced > 0 || strays > 0)
      throw Error(ErrorCode::InvalidArgument, std::string(format) + ": " + std::to_string(misplaced) +
                                                  " entries not in exactly one slot and " + std::to_string(strays) +
                                                  " slots of no entry after conversion; its value map cannot be made");
    m.identity_ = views.size() == 1 && slots == nnz && moved == 0;
    if (!m.identity_) m.slot_ = slot;
    m.valid_ = true;
    return m;
  }

  // Input entries summed into each entry of the CSR the format was built
  // from (CanonicalCsr's merge lists): scatter() then takes values in the
  // input's order and sums them the same way.
  void set_merge(const Kokkos::View<int*, memory_space>& offsets, const Kokkos::View<int*, memory_space>& entries) {
    merge_offsets_ = offsets;
    merge_entries_ = entries;
  }
  // The values scatter() takes: the input's entries.
  std::int64_t input_nnz() const {
    return merge_offsets_.extent(0) > 0 ? static_cast<std::int64_t>(merge_entries_.extent(0)) : nnz_;
  }

  // Writes values (input_nnz(), in the order of the CSR the format was
  // built from, or of its input where that was merged) into the format's
  // value views on `space`, asynchronously: one kernel.
  void scatter(const ExecSpace& space, const const_values_view& values, const views_type& views) const {
    if (merge_offsets_.extent(0) > 0) {
      scatter_merged(space, values, views);
      return;
    }
    if (identity_) {
      Kokkos::deep_copy(space, views[0], values);
      return;
    }
    values_view v[kMaxViews];
    int start[kMaxViews] = {0, 0, 0};
    for (std::size_t j = 0; j < views.size(); ++j) {
      v[j] = views[j];
      start[j] = static_cast<int>(starts_[j]);
    }
    // Slots past the last view's start fall in it; a view absent here has
    // a start past every slot.
    for (std::size_t j = views.size(); j < kMaxViews; ++j) start[j] = std::numeric_limits<int>::max();
    const auto v0 = v[0], v1 = v[1], v2 = v[2];
    const int s1 = start[1], s2 = start[2];
    const auto slot = slot_;
    Kokkos::parallel_for(
        "kspmv::value_map::scatter", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz_), KOKKOS_LAMBDA(const std::int64_t k) {
          const int s = slot(k);
          if (s < s1)
            v0(s) = values(k);
          else if (s < s2)
            v1(s - s1) = values(k);
          else
            v2(s - s2) = values(k);
        });
  }

  // Each canonical entry the sum of its input entries, in input order, into
  // its slot (scatter() with merge lists; public only because CUDA's
  // device lambdas cannot live in private members).
  void scatter_merged(const ExecSpace& space, const const_values_view& values, const views_type& views) const {
    values_view v[kMaxViews];
    int start[kMaxViews];
    for (std::size_t j = 0; j < kMaxViews; ++j) {
      if (j < views.size()) v[j] = views[j];
      start[j] = j < views.size() ? static_cast<int>(starts_[j]) : std::numeric_limits<int>::max();
    }
    const auto v0 = v[0], v1 = v[1], v2 = v[2];
    const int s1 = start[1], s2 = start[2];
    const auto slot = slot_;
    const bool identity = identity_;
    const auto off = merge_offsets_;
    const auto from = merge_entries_;
    Kokkos::parallel_for(
        "kspmv::value_map::merge_scatter", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz_),
        KOKKOS_LAMBDA(const std::int64_t c) {
          Scalar sum = values(from(off(c)));
          for (int j = off(c) + 1; j < off(c + 1); ++j) sum += values(from(j));
          const int s = identity ? static_cast<int>(c) : slot(c);
          if (s < s1)
            v0(s) = sum;
          else if (s < s2)
            v1(s - s1) = sum;
          else
            v2(s - s2) = sum;
        });
  }

  bool valid() const { return valid_; }
  // Device bytes the map holds: 4 a nonzero (0 where the format keeps the
  // CSR order), and the merge lists where the input was merged.
  std::size_t bytes() const { return (slot_.span() + merge_offsets_.span() + merge_entries_.span()) * sizeof(int); }
  // The format keeps the CSR order: a refresh is one copy, no map stored.
  bool identity() const { return identity_; }
  std::int64_t nnz() const { return nnz_; }

 private:
  Kokkos::View<int*, memory_space> slot_;  // entry -> slot in the views, concatenated
  Kokkos::View<int*, memory_space> merge_offsets_, merge_entries_;
  std::vector<std::int64_t> starts_;       // each view's first slot
  std::int64_t nnz_ = 0;
  bool identity_ = false, valid_ = false;
};

}  // namespace kspmv
