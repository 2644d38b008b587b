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
//
// A format that knows where each entry of a row lands (a slot walk: dia,
// ell, ellr, hyb, pellr, jad, evc-hyb, ehyb; see walk_slots in
// row_segments.hpp) needs no tags: it is built from the values themselves.
// Where it reorders rows (sorted pellr, jad, evc-hyb; ehyb where more
// than one row in eight moved and none is long) a refresh walks its rows again, a thread a
// row segment writing neighbouring slots (ehyb on CUDA's tuned path by a
// kernel of its own, tuned_refresh: a warp a slice), and the map keeps
// only the CSR's row offsets (by_rows()) and,
// where rows are longer than a segment, where each row's segments start
// (ehyb keeps a bit a nonzero in the format: which entries are extra); a
// scatter through a per-entry map would write
// each 32-byte sector of a slice at times far apart (2.2-4.2 SpMVs a
// refresh on FEM meshes against 1.2-2.8). Where rows keep the CSR's order
// the walk writes the per-entry map (from_slots) and refreshes scatter,
// but for dia, ell, ellr and hyb on CUDA's tuned path: their own kernel
// (tuned_refresh) reads a tile of rows as one run of the CSR and writes
// it out a column at a time, and the map keeps only the row offsets.
// pkt, whose slots hold a row's entries a thread-column apart, keeps each
// slot's place in its row (16 bits, in the format) and is refreshed by
// visiting its slots (visit_slots in row_segments.hpp): a thread a slot
// gathers its value from the CSR; the map keeps the row offsets.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/row_segments.hpp"
#include "kspmv/core/scratch.hpp"

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

  using row_ptr_view = Kokkos::View<const offset_t*, memory_space>;

  ValueMap() = default;

  // The map of a format with a slot walk built from a CSR with these row
  // offsets (kept; a device input's own view) and nnz entries: refreshes
  // walk the format's rows along `plan` (the caller's, which knows the
  // format; scatter() and gather() are not for this map). A format with a
  // slot visit (pkt) keeps the same with an empty plan: refreshes visit
  // its slots.
  static ValueMap by_rows(std::int64_t nnz, const row_ptr_view& row_ptr, detail::RowSegmentPlan<ExecSpace> plan) {
    ValueMap m;
    m.nnz_ = nnz;
    m.rows_ = true;
    m.row_ptr_ = row_ptr;
    m.plan_ = std::move(plan);
    m.valid_ = true;
    return m;
  }

  // The map of a format built from tagged_pattern() of a matrix with nnz
  // entries, read off its value views. Throws Error where an entry is not
  // in exactly one slot (the format does not only move values: a bug).
  static ValueMap from_tags(const ExecSpace& space, const views_type& views, std::int64_t nnz, const char* format) {
    if (views.size() > kMaxViews)
      throw Error(ErrorCode::InvalidArgument, std::string(format) + ": more value views than a value map holds");
    ValueMap m;
    m.nnz_ = nnz;
    const std::int64_t slots = m.set_starts(views);
    if (slots > std::numeric_limits<int>::max())
      throw FormatCannotHoldError(std::string(format) + ": " + std::to_string(slots) +
                                  " value slots exceed the value map's 32-bit slot indices");
    using Bits = tag_bits_t<Scalar>;
    using bits_view = Kokkos::View<const Bits*, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::View<int*, memory_space> slot(Kokkos::view_alloc(space, "kspmv::value_map::slot"), nnz);
    detail::ScratchSet<ExecSpace> temps(space);
    const Kokkos::View<int*, memory_space> seen = temps.template take<int>("kspmv::value_map::seen", nnz);
    Kokkos::deep_copy(space, seen, 0);
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
    require_slots("scatter");
    if (merge_offsets_.extent(0) > 0) {
      scatter_merged(space, values, views);
      return;
    }
    if (identity_) {
      Kokkos::deep_copy(space, views[0], values);
      return;
    }
    const Slots slots(views, starts_);
    const auto slot = slot_;
    Kokkos::parallel_for(
        "kspmv::value_map::scatter", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz_),
        KOKKOS_LAMBDA(const std::int64_t k) { slots.at(slot(k)) = values(k); });
  }

  // Each canonical entry the sum of its input entries, in input order, into
  // its slot (scatter() with merge lists; public only because CUDA's
  // device lambdas cannot live in private members).
  void scatter_merged(const ExecSpace& space, const const_values_view& values, const views_type& views) const {
    const Slots slots(views, starts_);
    const auto slot = slot_;
    const bool identity = identity_;
    const auto off = merge_offsets_;
    const auto from = merge_entries_;
    Kokkos::parallel_for(
        "kspmv::value_map::merge_scatter", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz_),
        KOKKOS_LAMBDA(const std::int64_t c) {
          Scalar sum = values(from(off(c)));
          for (int j = off(c) + 1; j < off(c + 1); ++j) sum += values(from(j));
          slots.at(identity ? static_cast<int>(c) : slot(c)) = sum;
        });
  }

  // The values the format holds, in the order of the CSR it was built from
  // (nnz() of them, duplicates already summed): the inverse of scatter().
  void gather(const ExecSpace& space, const views_type& views, const values_view& out) const {
    require_slots("gather");
    if (identity_) {
      Kokkos::deep_copy(space, out, views[0]);
      return;
    }
    const Slots slots(views, starts_);
    const auto slot = slot_;
    Kokkos::parallel_for(
        "kspmv::value_map::gather", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz_),
        KOKKOS_LAMBDA(const std::int64_t k) { out(k) = slots.at(slot(k)); });
  }

  // This map with slot(k) = slot(k) instead and `original`'s merge lists:
  // the refresh map of a format that shares this one's layout and takes
  // `original`'s input values in another order (A^T).
  ValueMap renumbered(const Kokkos::View<int*, memory_space>& slot, const ValueMap& original) const {
    require_slots("renumbered");
    ValueMap m = *this;
    m.identity_ = false;
    m.slot_ = slot;
    m.merge_offsets_ = original.merge_offsets_;
    m.merge_entries_ = original.merge_entries_;
    return m;
  }

  // This map is of a format built from a reordering of a CSR's entries
  // (entry p of the reordering is entry source(p) of the original): the
  // map that takes the original's values instead, so one scatter refreshes
  // the reordered format (A^T from A's values), with `original`'s merge
  // lists where its input was merged.
  ValueMap reindexed(const ExecSpace& space, const Kokkos::View<const int*, memory_space>& source,
                     const ValueMap& original) const {
    require_slots("reindexed");
    const Kokkos::View<int*, memory_space> to(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::value_map::slot"), nnz_);
    const auto from = slot_;
    const bool identity = identity_;
    Kokkos::parallel_for(
        "kspmv::value_map::reindex", Kokkos::RangePolicy<ExecSpace>(space, 0, nnz_),
        KOKKOS_LAMBDA(const std::int64_t p) { to(source(p)) = identity ? static_cast<int>(p) : from(p); });
    return renumbered(to, original);
  }

  // A functor of (entry p, its partner q) for for_each_partner
  // (transpose.hpp), made by partner_copy(): slot p of a format sharing
  // this map's layout takes what slot q holds in `from`, and p's slot in
  // the new map becomes q's, so that A's input value of entry q refreshes
  // A^T's entry p (q is p's partner and p is q's: A^T(i, j) = A(j, i)).
  // One gather an entry, written where the pair is found.
  template <class SlotsT>
  struct PartnerCopy {
    SlotsT in, out;
    Kokkos::View<const int*, memory_space> slot;  // empty: the identity
    Kokkos::View<int*, memory_space> to_slot;
    KOKKOS_INLINE_FUNCTION void operator()(const int p, const int q) const {
      const bool identity = slot.extent(0) == 0;
      const int sq = identity ? q : slot(q);
      to_slot(p) = sq;
      out.at(identity ? p : slot(p)) = in.at(sq);
    }
  };

  // Slot s of the concatenated value views (public: a device lambda's
  // capture).
  struct Slots {
    values_view v0, v1, v2;
    int s1 = std::numeric_limits<int>::max(), s2 = std::numeric_limits<int>::max();
    Slots(const views_type& views, const std::vector<std::int64_t>& starts) {
      if (views.size() > 0) v0 = views[0];
      if (views.size() > 1) {
        v1 = views[1];
        s1 = static_cast<int>(starts[1]);
      }
      if (views.size() > 2) {
        v2 = views[2];
        s2 = static_cast<int>(starts[2]);
      }
    }
    KOKKOS_INLINE_FUNCTION Scalar& at(const int s) const {
      if (s < s1) return v0(s);
      if (s < s2) return v1(s - s1);
      return v2(s - s2);
    }
  };

  // The PartnerCopy that fills `to` (value views of a format sharing this
  // map's layout, zero at padding) from `from` and writes the new map's
  // slots into to_slot (nnz ints); renumbered(to_slot, ...) is then the
  // new format's refresh map.
  PartnerCopy<Slots> partner_copy(const views_type& from, const views_type& to,
                                  const Kokkos::View<int*, memory_space>& to_slot) const {
    require_slots("partner_copy");
    return PartnerCopy<Slots>{Slots(from, starts_), Slots(to, starts_),
                              identity_ ? Kokkos::View<const int*, memory_space>() : Kokkos::View<const int*, memory_space>(slot_),
                              to_slot};
  }

  // The map of a format built from the values whose one value view holds
  // them in the CSR's order (csr, coo, csr-merge in one panel): a refresh
  // is one copy, nothing is stored, and no tags were needed to learn it.
  static ValueMap in_csr_order(std::int64_t nnz, const views_type& views, const char* format) {
    if (views.size() != 1 || static_cast<std::int64_t>(views[0].extent(0)) != nnz)
      throw Error(ErrorCode::InvalidArgument, std::string(format) + ": its values are not one view in the CSR's order");
    ValueMap m = from_slots(nnz, views, {});
    m.identity_ = true;
    return m;
  }

  // A map of slots from a slot walk: slot(k) = s for every entry. The
  // refresh map of a walking format in the CSR's row order, and what a
  // refresh of a reordering of this CSR needs (reindexed()).
  static ValueMap from_slots(std::int64_t nnz, const views_type& views, Kokkos::View<int*, memory_space> slot) {
    ValueMap m;
    m.nnz_ = nnz;
    m.set_starts(views);
    m.slot_ = slot;
    m.valid_ = true;
    return m;
  }

  bool valid() const { return valid_; }
  // Refreshed by the format's slot walk: no per-entry map.
  bool by_rows() const { return rows_; }
  const row_ptr_view& row_ptr() const { return row_ptr_; }
  const detail::RowSegmentPlan<ExecSpace>& plan() const { return plan_; }
  // Device bytes the map holds: 4 a nonzero (0 where the format keeps the
  // CSR order), and the merge lists where the input was merged; by rows,
  // the row offsets (8 bytes a row, a device input's own) and the
  // segment starts (8 bytes a row, only where a row is longer than one
  // segment).
  std::size_t bytes() const {
    return (slot_.span() + merge_offsets_.span() + merge_entries_.span()) * sizeof(int) +
           row_ptr_.span() * sizeof(offset_t) + plan_.bytes();
  }
  // The format keeps the CSR order: a refresh is one copy, no map stored.
  bool identity() const { return identity_; }
  std::int64_t nnz() const { return nnz_; }

 private:
  // Each view's first slot, the views taken as one concatenated array;
  // returns the slots in all.
  std::int64_t set_starts(const views_type& views) {
    std::int64_t slots = 0;
    for (const auto& v : views) {
      starts_.push_back(slots);
      slots += static_cast<std::int64_t>(v.extent(0));
    }
    return slots;
  }
  void require_slots(const char* what) const {
    if (rows_) throw Error(ErrorCode::InvalidArgument, std::string("value map ") + what + ": a map by rows needs its format's slot walk");
  }

  Kokkos::View<int*, memory_space> slot_;  // entry -> slot in the views, concatenated
  Kokkos::View<int*, memory_space> merge_offsets_, merge_entries_;
  std::vector<std::int64_t> starts_;       // each view's first slot
  std::int64_t nnz_ = 0;
  bool identity_ = false, valid_ = false, rows_ = false;
  row_ptr_view row_ptr_;            // by rows: the CSR's row offsets
  detail::RowSegmentPlan<ExecSpace> plan_;  // by rows: the walk's segments
};

}  // namespace kspmv
