// kspmv::Matrix: one matrix, any format chosen at run time.
//
// Like Morpheus' DynamicMatrix or Ginkgo's LinOp: convert a HostCsr once
// into the format a program names (`--format evc-hyb`), then apply it as
// often as a solver needs. Every format plugs in through the contract in
// docs/ARCHITECTURE.md: a struct of Kokkos::Views built by a named
// conversion, and a free `spmv(space, alpha, A, x, beta, y)`.
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <new>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kspmv/core/block_util.hpp"
#include "kspmv/core/format.hpp"
#include "kspmv/core/host_matrix.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/profiling.hpp"
#include "kspmv/core/properties.hpp"
#include "kspmv/core/device_csr.hpp"
#include "kspmv/core/device_timer.hpp"
#include "kspmv/core/transpose.hpp"
#include "kspmv/core/value_map.hpp"
#include "kspmv/core/device_util.hpp"
#include <Kokkos_Timer.hpp>
// Every format's header (generated at configure time from formats/ and
// backends/kokkoskernels/, so a new format's header needs no line here).
#include "kspmv/core/progress.hpp"
#include "kspmv/formats/all.hpp"
#include "kspmv/model/calibrate.hpp"
#include "kspmv/model/calibration_search.hpp"
#include "kspmv/model/device_pattern_stats.hpp"
#include "kspmv/model/model.hpp"

namespace kspmv {

namespace detail {

template <class F, class = void>
struct has_order : std::false_type {};
template <class F>
struct has_order<F, std::void_t<decltype(std::declval<const F&>().order), decltype(std::declval<const F&>().new_to_old)>>
    : std::true_type {};

template <class F>
bool in_internal_order(const F& f) {
  if constexpr (has_order<F>::value) return f.order == OutputOrder::Internal;
  return false;
}

// The internal order a format was built to compute in: new_to_old (empty
// when y, and x, are in the caller's order).
template <class F>
std::vector<ordinal_t> internal_order(const F& f) {
  if constexpr (has_order<F>::value) {
    if (in_internal_order(f)) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
      return std::vector<ordinal_t>(h.data(), h.data() + h.extent(0));
    }
  }
  return {};
}

// Whether format F has a fused kernel for several columns (spmv_block,
// kspmv/core/block_util.hpp).
template <class F, class = void>
struct has_spmv_block : std::false_type {};
template <class F>
struct has_spmv_block<
    F, std::void_t<decltype(spmv_block(
           std::declval<const typename F::execution_space&>(), typename F::scalar_type(), std::declval<const F&>(),
           std::declval<ConstBlockView<typename F::scalar_type, typename F::memory_space>>(), typename F::scalar_type(),
           std::declval<BlockView<typename F::scalar_type, typename F::memory_space>>()))>> : std::true_type {};

// Whether this matrix's fused kernel beats applying its columns one at a
// time; a format whose kernel loses on some matrices says so with an
// overload of its own (found by argument-dependent lookup).
template <class F>
constexpr bool block_pays(const F&) {
  return true;
}

// Whether its fused kernel gathers whole rows of X (X(c, 0..k-1) for an
// entry in column c): such a kernel wants X row-major, and kspmv::spmv
// stages a column-major X into a row-major block for it. Formats say so
// with an overload of their own.
template <class F>
constexpr bool block_gathers_rows(const F&) {
  return false;
}

// A format's value views (its value_members), as its value map takes
// them.
template <class F>
auto value_views(const F& f) {
  // value_members hands out references so that pattern_copy() can replace
  // them; here they are only read.
  const auto members = value_members(const_cast<F&>(f));
  using first = std::decay_t<std::tuple_element_t<0, std::decay_t<decltype(members)>>>;
  using view = Kokkos::View<typename first::non_const_value_type*, typename first::memory_space>;
  return std::apply([](const auto&... v) { return std::vector<view>{view(v)...}; }, members);
}

// A copy of format f sharing its pattern (every view but its values) with
// value views of its own, zero, so padding stays zero where the fill
// (ValueMap::partner_copy) writes only the entries' slots: A^T of a
// structurally symmetric A is A's layout holding other values
// (Matrix::build_transpose).
template <class ExecSpace, class F>
F pattern_copy(const ExecSpace& space, const F& f) {
  F g = f;
  std::apply(
      [&](auto&... v) {
        ((v = std::decay_t<decltype(v)>(Kokkos::view_alloc(space, v.label()), v.extent(0))), ...);
      },
      value_members(g));
  return g;
}

// Whether format F knows where each entry of a row lands (a slot walk,
// row_segments.hpp): then it is built from the values themselves and
// refreshed by walking its rows, with no per-entry map (value_map.hpp).
template <class F, class = void>
struct has_slot_walk : std::false_type {};
template <class F>
struct has_slot_walk<F, std::void_t<decltype(slot_walk(
                            std::declval<const F&>(),
                            std::declval<const Kokkos::View<const offset_t*, typename F::memory_space>&>()))>>
    : std::true_type {};

// Whether format F may keep a CSR's entries in their order, in one value
// view (keeps_csr_order says, before it is built, whether it will for a
// given matrix): then it is built from the values, and its refresh map is
// the identity, with no tag pass.
template <class F, class = void>
struct has_csr_order : std::false_type {};
template <class F>
struct has_csr_order<F, std::void_t<decltype(keeps_csr_order(
                            std::declval<const F*>(),
                            std::declval<const DeviceCsr<typename F::scalar_type, typename F::execution_space>&>(),
                            std::declval<const ConvertOptions&>()))>>
    : std::true_type {};

// Whether format F knows which entry each of its slots holds (a slot
// visit, row_segments.hpp): then it is built from the values themselves
// and refreshed by gathering each slot's value (pkt), with no per-entry
// map, where visits_slots(f) says it kept what the visit reads.
template <class F, class = void>
struct has_slot_visit : std::false_type {};
template <class F>
struct has_slot_visit<F, std::void_t<decltype(slot_visit(
                             std::declval<const F&>(),
                             std::declval<const Kokkos::View<const offset_t*, typename F::memory_space>&>()))>>
    : std::true_type {};

// Whether format F has a refresh kernel of its own for where its map is
// by rows (tuned_refresh: true where it wrote the values, false where the
// slot walk is to).
template <class F, class = void>
struct has_tuned_refresh_kernel : std::false_type {};
template <class F>
struct has_tuned_refresh_kernel<
    F, std::void_t<decltype(tuned_refresh(
           std::declval<const typename F::execution_space&>(), std::declval<const F&>(),
           std::declval<const Kokkos::View<const offset_t*, typename F::memory_space>&>(),
           std::declval<const Kokkos::View<const typename F::scalar_type*, Kokkos::LayoutLeft, typename F::memory_space>&>()))>>
    : std::true_type {};

// Whether a refresh walks the format's rows (no per-entry map) rather
// than scatter through a map of slots made by the walk. Walking pays where
// the format reorders rows (sorted pellr, jad, evc-hyb, ehyb): a slice's rows are far
// apart in the CSR, so a thread an entry writes each 32-byte sector of a
// slice at times far apart and the sectors leave L2 part-written (2.2-2.6
// SpMVs a refresh on FEM meshes, against 1.2-1.5 walking). Where rows keep
// the CSR's order, a thread an entry reads in order and neighbouring warps
// complete each sector while it is in L2, and beat a thread a row reading
// its row 8 bytes at a time (dia 70 us against 86 on a block-diagonal
// matrix, hyb's COO part 5x). A format with a refresh kernel of its own
// (tuned_refresh) is refreshed by it where its map is by rows: dia, ell,
// ellr and hyb on CUDA's tuned path (a tile of rows in shared memory) and
// ehyb. A format that walks says so with an overload of its own
// (argument-dependent lookup).
template <class F>
constexpr bool refresh_by_rows(const F&) {
  return false;
}

// What a slot walk does at each entry k and its slot s: a refresh, the
// values read back, the slot recorded.
// Slots: ValueMap's (the format's value views, concatenated).
template <class Slots, class Values>
struct StoreAtSlot {
  Slots slots;
  Values values;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, const std::int64_t s) const {
    slots.at(static_cast<int>(s)) = values(k);
  }
};
template <class Slots, class Out>
struct LoadFromSlot {
  Slots slots;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, const std::int64_t s) const {
    out(k) = slots.at(static_cast<int>(s));
  }
};
// The slots of a format's value views, concatenated in their order.
template <class Scalar, class ExecSpace>
typename ValueMap<Scalar, ExecSpace>::Slots concatenated_slots(const typename ValueMap<Scalar, ExecSpace>::views_type& views) {
  std::vector<std::int64_t> starts;
  std::int64_t slots = 0;
  for (const auto& v : views) {
    starts.push_back(slots);
    slots += static_cast<std::int64_t>(v.extent(0));
  }
  if (slots > std::numeric_limits<int>::max())
    throw FormatCannotHoldError(std::to_string(slots) + " value slots exceed a value map's 32-bit slot indices");
  return typename ValueMap<Scalar, ExecSpace>::Slots(views, starts);
}
template <class SlotOf>
struct RecordSlot {
  SlotOf slot_of;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, const std::int64_t s) const {
    slot_of(k) = static_cast<int>(s);
  }
};

template <class Scalar, class ExecSpace>
struct AnyFormat {
  using memory_space = typename ExecSpace::memory_space;
  using vector_type = Kokkos::View<Scalar*, Kokkos::LayoutLeft, memory_space>;
  using const_vector_type = Kokkos::View<const Scalar*, Kokkos::LayoutLeft, memory_space>;
  using block_type = BlockView<Scalar, memory_space>;
  using const_block_type = ConstBlockView<Scalar, memory_space>;
  virtual ~AnyFormat() = default;
  virtual void apply(const ExecSpace& space, Scalar alpha, const const_vector_type& x, Scalar beta,
                     const vector_type& y) const = 0;
  // Y = alpha * A * X + beta * Y for all columns in one pass over the
  // format where it has a fused kernel; false (nothing done) where not.
  virtual bool apply_block(const ExecSpace& space, Scalar alpha, const const_block_type& x, Scalar beta,
                           const block_type& y) const = 0;
  virtual bool has_block() const = 0;
  // Whether the fused kernel wants X row-major (block_gathers_rows).
  virtual bool block_wants_rows() const = 0;
  virtual std::size_t storage_bytes() const = 0;
  virtual double conversion_seconds() const = 0;
  virtual Properties properties() const = 0;
  virtual std::vector<ordinal_t> internal_order() const = 0;
  virtual bool in_internal_order() const = 0;
  virtual bool permutes_x() const = 0;
  // The value map the conversion kept (invalid: none kept).
  virtual const ValueMap<Scalar, ExecSpace>& value_map() const = 0;
  // Writes values (the CSR order of the conversion) into the format.
  virtual void scatter_values(const ExecSpace& space, const const_vector_type& values) const = 0;
  // Reads the values back in the CSR order of the conversion (needs a map).
  virtual void gather_values(const ExecSpace& space, const vector_type& out) const = 0;
  // The same format (its views shared) refreshed through another map.
  virtual std::shared_ptr<const AnyFormat> with_map(ValueMap<Scalar, ExecSpace> m) const = 0;
  // Its value map with a slot for each entry (one made by walking its
  // rows where the map is by rows, in a temporary of temps): what
  // reindexed() and partner_copy() read.
  virtual ValueMap<Scalar, ExecSpace> slot_map(const ExecSpace& space, ScratchSet<ExecSpace>& temps) const = 0;
  // The same pattern (its views shared) with value views and scratch of
  // its own (zero), which `fill` fills from this one's value views
  // (fill(from, to)) and returns the copy's refresh map for: A^T of a
  // structurally symmetric A. Null where fill returns none.
  using PartnerFill = std::function<std::optional<ValueMap<Scalar, ExecSpace>>(
      const typename ValueMap<Scalar, ExecSpace>::views_type& from, const typename ValueMap<Scalar, ExecSpace>::views_type& to)>;
  virtual std::shared_ptr<const AnyFormat> pattern_copy(const ExecSpace& space, const PartnerFill& fill) const = 0;
  // Device bytes of its value views.
  virtual std::size_t value_bytes() const = 0;
  // The same format with scratch views of its own (has_scratch), for a
  // handle; null where the format keeps no scratch.
  virtual std::shared_ptr<const AnyFormat> with_own_scratch() const = 0;
  virtual std::size_t scratch_bytes() const = 0;
};

template <class Scalar, class ExecSpace, class F>
struct FormatHolder final : AnyFormat<Scalar, ExecSpace> {
  using base = AnyFormat<Scalar, ExecSpace>;
  F f;
  ValueMap<Scalar, ExecSpace> map;
  std::string apply_region = std::string("kspmv::apply ") + F::format_name;
  explicit FormatHolder(F&& x, ValueMap<Scalar, ExecSpace> m = {}) : f(std::move(x)), map(std::move(m)) {}
  const ValueMap<Scalar, ExecSpace>& value_map() const override { return map; }
  // A format whose map walks its rows (map.by_rows()) applies `Op` (built
  // from the concatenated slots and `vec`) entry by entry along its slot
  // walk; false where the map keeps a slot a nonzero instead.
  // A format with a slot visit does the same slot by slot.
  template <template <class, class> class Op, class Vec>
  bool walk_rows(const ExecSpace& space, const char* label, const Vec& vec) const {
    if constexpr (has_slot_walk<F>::value || has_slot_visit<F>::value) {
      if (map.by_rows()) {
        using S = typename ValueMap<Scalar, ExecSpace>::Slots;
        const S slots = concatenated_slots<Scalar, ExecSpace>(value_views(f));
        if constexpr (has_slot_walk<F>::value)
          walk_slots(space, label, map.plan(), slot_walk(f, map.row_ptr()), Op<S, Vec>{slots, vec});
        else
          visit_slots(space, label, slot_visit(f, map.row_ptr()), Op<S, Vec>{slots, vec});
        return true;
      }
    }
    return false;
  }
  void scatter_values(const ExecSpace& space, const typename base::const_vector_type& values) const override {
    // A walk reads the new values through the read-only path (RandomAccess:
    // __ldg on CUDA), so a thread's loads of its row need not wait for its
    // stores into the slots (on the H100, refreshes of evc-hyb, pellr and
    // jad 0.79-1.00x of plain loads' time on FEM meshes and banded, uniform
    // and normal rows).
    const Kokkos::View<const Scalar*, Kokkos::LayoutLeft, typename ExecSpace::memory_space,
                       Kokkos::MemoryTraits<Kokkos::RandomAccess>>
        read_only = values;
    if constexpr (has_tuned_refresh_kernel<F>::value) {
      if (map.by_rows() && tuned_refresh(space, f, map.row_ptr(), values)) return;
    }
    if (!walk_rows<StoreAtSlot>(space, "kspmv::value_map::refresh_rows", read_only)) map.scatter(space, values, value_views(f));
  }
  void gather_values(const ExecSpace& space, const typename base::vector_type& out) const override {
    if (!walk_rows<LoadFromSlot>(space, "kspmv::value_map::gather_rows", out)) map.gather(space, value_views(f), out);
  }
  ValueMap<Scalar, ExecSpace> slot_map(const ExecSpace& space, ScratchSet<ExecSpace>& temps) const override {
    if constexpr (has_slot_walk<F>::value || has_slot_visit<F>::value) {
      if (map.by_rows()) {
        using memory_space = typename ExecSpace::memory_space;
        const Kokkos::View<int*, memory_space> slot = temps.template take<int>("kspmv::value_map::slot", map.nnz());
        const RecordSlot<Kokkos::View<int*, memory_space>> record{slot};
        if constexpr (has_slot_walk<F>::value)
          walk_slots(space, "kspmv::value_map::slots_of_rows", map.plan(), slot_walk(f, map.row_ptr()), record);
        else
          visit_slots(space, "kspmv::value_map::slots_visited", slot_visit(f, map.row_ptr()), record);
        return ValueMap<Scalar, ExecSpace>::from_slots(map.nnz(), value_views(f), slot);
      }
    }
    return map;
  }
  std::shared_ptr<const base> with_map(ValueMap<Scalar, ExecSpace> m) const override {
    return std::make_shared<FormatHolder>(F(f), std::move(m));
  }
  std::shared_ptr<const base> pattern_copy(const ExecSpace& space, const typename base::PartnerFill& fill) const override {
    F g = detail::pattern_copy(space, f);
    if constexpr (has_scratch<F>::value) g = kspmv::with_own_scratch(g);
    auto kept = fill(value_views(f), value_views(g));
    if (!kept) return nullptr;
    return std::make_shared<FormatHolder>(std::move(g), std::move(*kept));
  }
  std::size_t value_bytes() const override {
    std::size_t bytes = 0;
    for (const auto& v : value_views(f)) bytes += v.span() * sizeof(Scalar);
    return bytes;
  }
  std::shared_ptr<const base> with_own_scratch() const override {
    if constexpr (has_scratch<F>::value) {
      return std::make_shared<FormatHolder>(kspmv::with_own_scratch(f), map);
    } else {
      return nullptr;
    }
  }
  std::size_t scratch_bytes() const override {
    if constexpr (has_scratch<F>::value) {
      return kspmv::scratch_bytes(f);
    } else {
      return 0;
    }
  }
  void apply(const ExecSpace& space, Scalar alpha, const typename base::const_vector_type& x, Scalar beta,
             const typename base::vector_type& y) const override {
    ProfilingRegion region(apply_region);
    spmv(space, alpha, f, x, beta, y);
  }
  bool apply_block(const ExecSpace& space, Scalar alpha, const typename base::const_block_type& x, Scalar beta,
                   const typename base::block_type& y) const override {
    if constexpr (has_spmv_block<F>::value) {
      if (!block_pays(f)) return false;
      ProfilingRegion region(apply_region);
      spmv_block(space, alpha, f, x, beta, y);
      return true;
    } else {
      return false;
    }
  }
  bool has_block() const override {
    if constexpr (has_spmv_block<F>::value) {
      return block_pays(f);
    } else {
      return false;
    }
  }
  bool block_wants_rows() const override {
    if constexpr (has_spmv_block<F>::value) {
      return block_pays(f) && block_gathers_rows(f);
    } else {
      return false;
    }
  }
  std::size_t storage_bytes() const override { return f.storage_bytes(); }
  double conversion_seconds() const override { return f.conversion_seconds; }
  // Its own report, and how update_values writes it: one copy where it
  // keeps the CSR's order, along its rows or by visiting its slots where
  // the map keeps only the row offsets, else through the map's slot a
  // nonzero (and "none" where no map was kept).
  Properties properties() const override {
    Properties p = format_properties(f);
    const char* refresh = !map.valid()      ? "none"
                          : map.identity()  ? "copy"
                          : !map.by_rows()  ? "slot map"
                          : has_slot_visit<F>::value ? "slot visit"
                                                     : "row walk";
    p.push_back({"refresh", refresh});
    return p;
  }
  std::vector<ordinal_t> internal_order() const override { return detail::internal_order(f); }
  bool in_internal_order() const override { return detail::in_internal_order(f); }
  bool permutes_x() const override { return detail::permutes_x<F>::value; }
};

}  // namespace detail

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
class SpmvHandle;  // kspmv/spmv.hpp

template <class Scalar, class ExecSpace = Kokkos::DefaultExecutionSpace>
class Matrix {
 public:
  using scalar_type = Scalar;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  // 1-D contiguous vectors; Kokkos Kernels' LayoutLeft vectors and default
  // rank-1 Views of this memory space both bind here.
  using vector_type = typename detail::AnyFormat<Scalar, ExecSpace>::vector_type;
  using const_vector_type = typename detail::AnyFormat<Scalar, ExecSpace>::const_vector_type;

  Matrix() = default;

  using device_csr_type = DeviceCsr<Scalar, ExecSpace>;

  // Converts `a` into format `f`. Throws FormatCannotHoldError where the
  // format cannot hold the matrix, InvalidArgumentError where its arrays'
  // sizes or offsets are not a CSR's (HostCsr::validate_offsets: O(rows);
  // its columns are the caller's to keep sorted and in range, which
  // validate() checks). The host matrix is uploaded once and then takes
  // the device path below, except for the formats still built on the host
  // (docs/ARCHITECTURE.md).
  static Matrix convert(const HostCsr<Scalar>& a, Format f, const ConvertOptions& opt = {}) {
    a.validate_offsets();
    return convert_any(a, f, opt);
  }

  // From a CSR already on the device (see DeviceCsr). Canonical input
  // (columns strictly increasing within each row) never leaves the device;
  // unsorted columns and duplicate entries are sorted and summed
  // (canonical_csr(), on the device), and update_values() then takes
  // values in the input's order and sums the duplicates again. Offsets out
  // of order or columns out of range are an InvalidArgumentError naming
  // the first bad row.
  static Matrix convert(const device_csr_type& a, Format f, const ConvertOptions& opt = {}) {
    const auto c = canonical_csr(ExecSpace(), a, std::string(format_name(f)) + " conversion");
    return convert_any(c.csr, f, opt, c.merged() ? &c : nullptr);
  }

  // From a caller's device views: row offsets (nrows + 1, any integer
  // type), column indices (int) and values, in this memory space. Copied
  // where the types differ from DeviceCsr's, never through the host.
  template <class RowPtr, class ColIdx, class Values>
  static Matrix from_device_views(std::int64_t nrows, std::int64_t ncols, const RowPtr& row_ptr,
                                  const ColIdx& col_idx, const Values& values, Format f,
                                  const ConvertOptions& opt = {}) {
    return convert(device_csr_from_views<Scalar, ExecSpace>(nrows, ncols, row_ptr, col_idx, values), f, opt);
  }

  // From a Kokkos Kernels matrix in this memory space: its own device
  // views, no trip through the host where its rows are sorted and merged
  // (as convert(device_csr_type) above).
  template <class CrsMatrixType>
  static Matrix from_kokkos_kernels(const CrsMatrixType& A, Format f, const ConvertOptions& opt = {}) {
    return from_device_views(A.numRows(), A.numCols(), A.graph.row_map, A.graph.entries, A.values, f, opt);
  }

 private:
  using canonical_type = CanonicalCsr<Scalar, ExecSpace>;

  template <class In>
  static Matrix convert_any(const In& a, Format f, const ConvertOptions& opt, const canonical_type* merged = nullptr) {
    detail::ProfilingRegion region(std::string("kspmv::convert ") + format_name(f));
    if (f == Format::Auto) return convert_auto(a, opt, merged);
    try {
      return convert_to(a, f, opt, merged);
    } catch (const std::bad_alloc&) {
      // Host vectors and Kokkos allocations (RawMemoryAllocationFailure)
      // both land here: a typed error, nothing half-built left behind.
      throw OutOfMemoryError(std::string(format_name(f)) + ": conversion of a " + std::to_string(a.nrows) + " x " +
                             std::to_string(a.ncols) + " matrix with " + std::to_string(a.nnz()) +
                             " entries ran out of memory");
    }
  }

  // Format::Auto: the model ranks every format by what a solve loop pays
  // per refresh (set-up + refresh + expected_applies SpMVs, with the
  // default calibration: set_default_model() or $KSPMV_CALIBRATION); on a
  // device the cheapest few are converted and timed on the matrix itself
  // and the cheapest measured kept. The pattern statistics of a device
  // input are taken there (stats_of), a sample of its rows copied back.
  template <class In>
  static Matrix convert_auto(const In& a, const ConvertOptions& opt, const canonical_type* merged) {
    if (!(opt.expected_applies >= 0) || !std::isfinite(opt.expected_applies) || opt.auto_candidates < 1)
      throw InvalidArgumentError("auto: expected_applies must be finite and >= 0 (got " +
                                 std::to_string(opt.expected_applies) + ") and auto_candidates >= 1 (got " +
                                 std::to_string(opt.auto_candidates) + ")");
    if (opt.expected_vectors < 1 || opt.expected_vectors > 64)
      throw InvalidArgumentError("auto: expected_vectors must be in [1, 64] (got " +
                                 std::to_string(opt.expected_vectors) + ")");
    if (opt.auto_sample_entries < 0)
      throw InvalidArgumentError("auto: auto_sample_entries must be >= 0 (got " +
                                 std::to_string(opt.auto_sample_entries) + ")");
    constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
    if constexpr (!on_host && std::is_same<In, HostCsr<Scalar>>::value) {
      if (opt.auto_measure && opt.auto_candidates > 1) {
        // A host matrix goes up once; the candidates convert from there.
        Kokkos::Timer upload;
        Matrix m = convert_auto(upload_csr<Scalar, ExecSpace>(a), opt, merged);
        m.conversion_seconds_ = upload.seconds();
        return m;
      }
    }
    Kokkos::Timer timer;
    const bool measures = !on_host && opt.auto_measure && opt.auto_candidates > 1;
    if (measures) {
      // Where csr-merge builds column panels it is the only candidate
      // (convert_panelled_merge says why): converted here before any
      // pattern figures, which would rank nothing (on an H100 they took
      // 15-32 ms of 32-54 ms set-ups on x of 56-134 MB), and not timed
      // against nothing.
      int panels = 1;
      Matrix merge = convert_panelled_merge(a, opt, merged, panels);
      if (!merge.empty()) {
        merge.auto_note_ = "csr-merge in " + std::to_string(panels) +
                           " column panels: x outgrows the L2 on rows that gather across it (taken "
                           "unranked, nothing timed), expected_applies " +
                           std::to_string(opt.expected_applies);
        merge.auto_picked_ = true;
        merge.conversion_seconds_ = timer.seconds();
        return merge;
      }
    }
    // The set-up counts the panel check but not a first-use calibration
    // (model_for_auto: once a process, then cached).
    const double panel_check = timer.seconds();
    const auto& hw = model_for_auto(opt);
    timer.reset();
    const int tau = static_cast<int>(sizeof(Scalar));
    // Single vectors: csr-vector first where it may be kept unranked
    // (ConvertOptions::auto_quick), tried only where the model's figure
    // for it from the CSR's bytes alone would be kept, so that larger
    // matrices, which rank anyway, do not pay for its trial.
    std::optional<Timed> first;
    const double least = least_spmv_seconds(hw);
    if (measures && opt.auto_quick && opt.expected_vectors == 1 &&
        !ranking_can_pay(opt.expected_applies, bytes_only_estimate(hw, Format::CsrVector, a.nrows, a.ncols, a.nnz(), tau),
                         least, 0)) {
      std::optional<detail::ProfilingRegion> quick(std::in_place, "kspmv::auto::quick");
      first = quick_trial(a, opt, merged);
      double saving = 0, cost = 0;
      if (first && !ranking_can_pay(opt.expected_applies, first->spmv, least, first->m.conversion_seconds() + first->trial,
                                    &saving, &cost)) {
        Matrix best = std::move(first->m);
        char note[320];
        std::snprintf(note, sizeof note,
                      "quick (%s %.1f us, set-up %.2f ms, trial %.2f ms: ranking could save at most %.2f ms over "
                      "%g SpMVs, no format's SpMV taking under %.1f us here, and would cost %.2f ms or more)",
                      best.name(), first->spmv * 1e6, best.conversion_seconds() * 1e3, first->trial * 1e3,
                      saving * 1e3, opt.expected_applies, least * 1e6, cost * 1e3);
        best.auto_note_ = note;
        if (opt.transpose != TransposeBuild::Never) best.attach_transpose(device_view(a), opt);
        best.auto_picked_ = true;
        best.conversion_seconds_ = panel_check + timer.seconds();
        return best;
      }
    }
    std::optional<detail::ProfilingRegion> phase(std::in_place, "kspmv::auto::figures");
    const auto stats = stats_of(a, tau, hw, opt.auto_sample_entries);
    const double figures_ms = timer.seconds() * 1e3;
    phase.emplace("kspmv::auto::ranking");
    const auto ranked = rank_for_loop(stats, tau, hw, opt.max_fill, opt.expected_applies);
    const double ranking_ms = timer.seconds() * 1e3 - figures_ms;
    phase.reset();
    const char* why = on_host ? "model (host space: not measured)" : "model (auto_measure off)";
    Matrix best;
    if (measures) {
      best = measured_pick(a, opt, merged, shortlist(ranked, opt.expected_vectors), first ? &*first : nullptr);
      why = nullptr;
    }
    if (best.empty()) {
      for (const auto& e : ranked) {
        if (!e.feasible) continue;
        try {
          best = convert_to(a, e.format, opt, merged);
          best.auto_note_ = std::string(why ? why : "model (no candidate converted)") + ", expected_applies " +
                            std::to_string(opt.expected_applies);
          break;
        } catch (const FormatCannotHoldError&) {  // the model thought it would fit: the next
        }
      }
    }
    if (best.empty()) best = convert_to(a, Format::Csr, opt, merged);
    char cost[96];
    std::snprintf(cost, sizeof cost, "; pattern figures %.1f ms, ranking %.1f ms", figures_ms, ranking_ms);
    best.auto_note_ += cost;
    best.auto_picked_ = true;
    best.conversion_seconds_ = panel_check + timer.seconds();
    return best;
  }

  // The model auto ranks by: default_model(), calibrated on this device
  // first where none was found for it and auto may measure here (a device
  // space, auto_measure, auto_calibrate_seconds > 0). Once a process: the
  // result replaces the default model (and is cached for the next run by
  // cached_calibration); a failed calibration leaves the defaults, its
  // reason in ModelHardware::source.
  static const ModelHardware& model_for_auto(const ConvertOptions& opt) {
    constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
    if (on_host || !opt.auto_measure || !(opt.auto_calibrate_seconds > 0) || default_model().calibrated)
      return default_model();
    static std::once_flag once;
    std::call_once(once, [&] {
      const std::string device = device_figures<ExecSpace>().name;
      const ProgressFn progress = opt.progress ? opt.progress : terminal_progress();
      try {
        detail::ProfilingRegion region("kspmv::calibrate");
        set_default_model(cached_calibration(device, [&] {
          CalibrationOptions co;
          co.budget_seconds = opt.auto_calibrate_seconds;
          co.scale = 0.5;
          Kokkos::Timer t;
          if (progress) {
            co.log = [&](const std::string&) {
              progress("kspmv calibrate", std::min(0.99, t.seconds() / (opt.auto_calibrate_seconds + 30)));
            };
          }
          ModelHardware hw = calibrate_model<double, ExecSpace>(co, Matrix<double, ExecSpace>::calibration_timer());
          if (progress) progress("kspmv calibrate", 1.0);
          return hw;
        }));
      } catch (const Error& e) {
        ModelHardware defaults;
        defaults.source = std::string("uncalibrated defaults (first-use calibration failed: ") + e.what() + ")";
        set_default_model(defaults);
      }
    });
    return default_model();
  }

 public:
  // Converts a HostCsr to format f on this space and times its SpMV:
  // calibrate_model()'s FormatTimer (kspmv/calibrate.hpp and auto's
  // first-use calibration).
  static FormatTimer<Scalar> calibration_timer() {
    return [](const HostCsr<Scalar>& a, Format f, const ConvertOptions& opt) {
      const Matrix m = convert(a, f, opt);
      vector_type x("kspmv::calibrate::x", a.ncols), y("kspmv::calibrate::y", a.nrows);
      Kokkos::deep_copy(x, Scalar(1));
      return detail::time_apply<ExecSpace>(
          [&](const ExecSpace& space) { m.apply(space, Scalar(1), x, Scalar(0), y); });
    };
  }

 private:
  // csr-merge, converted, where its column-panel rule splits a's columns
  // (csr_merge_column_panels > 1: x outgrows the L2 on rows that gather
  // from across it); `panels` gets the count. Empty where
  // the rule builds no panels or csr-merge cannot hold a. auto takes it
  // without ranking or timing anything, and so does A^T's pick: every
  // format's figure takes x's gathers at the same cost whether or not L2
  // holds x, so the model cannot rank formats there, and the others
  // gather x from memory, which the panels avoid. On an H100 (x of 56-134
  // MB, eight matrices of five families) csr-merge was 1.23-2.2x faster
  // than every other candidate auto timed, and timing two more cost 20-60
  // ms of set-up (up to 40 of its SpMVs).
  template <class In>
  static Matrix convert_panelled_merge(const In& a, const ConvertOptions& opt, const canonical_type* merged,
                                       int& panels) {
    panels = csr_merge_column_panels(device_view(a), opt);
    if (panels <= 1) return Matrix();
    try {
      detail::ProfilingRegion region("kspmv::auto::candidate csr-merge");
      return convert_to(a, Format::CsrMerge, opt, merged);
    } catch (const FormatCannotHoldError&) {
      return Matrix();
    }
  }

  // The shortlist measured_pick converts and times, in order: the model's
  // ranking, but for products of k > 1 columns the format whose fused
  // kernel serves any pattern, csr-merge, goes second, after the model's
  // first choice, whatever its rank: a fused kernel reads the matrix once
  // for all columns, which the model, ranking by one SpMV, does not see;
  // measured_pick's trial rule (columns_in_spmvs) and the trials decide.
  // (Where csr-merge builds column panels auto takes it unranked:
  // convert_panelled_merge.)
  static std::vector<FormatEstimate> shortlist(std::vector<FormatEstimate> ranked, int k) {
    if (ranked.size() < 2 || k <= 1) return ranked;
    const auto merge = std::find_if(ranked.begin(), ranked.end(), [](const FormatEstimate& e) {
      return e.format == Format::CsrMerge && e.feasible;
    });
    if (merge != ranked.end() && merge > ranked.begin() + 1) std::rotate(ranked.begin() + 1, merge, merge + 1);
    return ranked;
  }

  // A candidate converted and timed: one SpMV's seconds, and what the
  // trial (warm-up and batches) took.
  struct Timed {
    Matrix m;
    double spmv = 0, trial = 0;
  };

  // One of auto's candidates converted, without A^T (the pick gets it
  // once chosen); empty where format f cannot hold a.
  template <class In>
  static Matrix convert_candidate(const In& a, Format f, const ConvertOptions& opt, const canonical_type* merged) {
    ConvertOptions trial_opt = opt;
    trial_opt.transpose = TransposeBuild::Never;
    try {
      detail::ProfilingRegion region(std::string("kspmv::auto::candidate ") + format_name(f));
      return convert_to(a, f, trial_opt, merged);
    } catch (const FormatCannotHoldError&) {
      return Matrix();
    }
  }

  // csr-vector converted as a candidate and timed; empty where it cannot
  // hold a.
  template <class In>
  static std::optional<Timed> quick_trial(const In& a, const ConvertOptions& opt, const canonical_type* merged) {
    ExecSpace space;
    Timed t;
    t.m = convert_candidate(a, Format::CsrVector, opt, merged);
    if (t.m.empty()) return std::nullopt;
    Kokkos::Timer trial_timer;
    detail::ScratchSet<ExecSpace> temps(space);
    const vector_type x = temps.template take<Scalar>("kspmv::auto::x", a.ncols);
    const vector_type y = temps.template take<Scalar>("kspmv::auto::y", a.nrows);
    Kokkos::deep_copy(space, x, Scalar(1));
    Kokkos::deep_copy(space, y, Scalar(0));
    t.spmv = trial_seconds(space, [&] { t.m.apply(space, Scalar(1), x, Scalar(0), y); });
    t.trial = trial_timer.seconds();
    return t;
  }

  // Converts the model's first opt.auto_candidates formats, times SpMVs and
  // a refresh of each, and returns the one whose loop costs least from here
  // on (loop_once_converted: what was converted is paid whichever is
  // kept); the others are freed as it goes. After the first, a candidate
  // is converted only where timing it is expected to save more over
  // expected_applies SpMVs than its conversion and trial cost
  // (expected_trial_saving: the model's estimates and set-up scaled by
  // what the first candidate measured against them; for k columns each
  // product columns_in_spmvs() of its SpMVs); the note says which were
  // left and why. `pre`, where given, is a candidate converted and timed
  // already (quick_trial): taken in place of converting its format where
  // the shortlist reaches it, else weighed against the pick at the end.
  template <class In>
  static Matrix measured_pick(const In& a, const ConvertOptions& opt, const canonical_type* merged,
                              const std::vector<FormatEstimate>& ranked, Timed* pre = nullptr) {
    ExecSpace space;
    const auto& d = device_view(a);
    detail::ScratchSet<ExecSpace> temps(space);
    const vector_type x = temps.template take<Scalar>("kspmv::auto::x", a.ncols);
    const vector_type y = temps.template take<Scalar>("kspmv::auto::y", a.nrows);
    Kokkos::deep_copy(space, x, Scalar(1));
    Kokkos::deep_copy(space, y, Scalar(0));
    // Products of opt.expected_vectors columns where the caller's have
    // more than one: the fused kernel where the format has one.
    const int k = opt.expected_vectors;
    using block = Kokkos::View<Scalar**, Kokkos::LayoutLeft, memory_space>;
    block X, Y;
    Kokkos::View<Scalar**, Kokkos::LayoutRight, memory_space> X_rows;
    if (k > 1) {
      X = block(Kokkos::view_alloc(space, std::string("kspmv::auto::X")), a.ncols, k);
      Y = block(Kokkos::view_alloc(space, std::string("kspmv::auto::Y")), a.nrows, k);
      Kokkos::deep_copy(space, X, Scalar(1));
    }
    const auto product = [&](const Matrix& m) {
      if (k == 1) return m.apply(space, Scalar(1), x, Scalar(0), y);
      // As kspmv::spmv does it: a kernel that gathers rows of X gets X
      // copied row-major first, the copy timed with it.
      const ConstBlockView<Scalar, memory_space> xf =
          m.fused_block_wants_rows() ? detail::adjacent_rows(space, ConstBlockView<Scalar, memory_space>(X), X_rows)
                                     : ConstBlockView<Scalar, memory_space>(X);
      if (m.apply_fused(space, Scalar(1), xf, Scalar(0), BlockView<Scalar, memory_space>(Y))) return;
      for (int j = 0; j < k; ++j)
        m.apply(space, Scalar(1), Kokkos::subview(X, Kokkos::ALL(), j), Scalar(0), Kokkos::subview(Y, Kokkos::ALL(), j));
    };
    Matrix best;
    double best_loop = 0, best_spmv = 0, setups = 0;
    double spmv_scale = 1, setup_scale = 1, trial_cost = 0;  // from the first candidate
    std::string report, left;
    int tried = 0;
    // Keeps m where its loop is the cheapest yet, else frees it. The
    // loser's arrays are freed in a region of their own: a device free
    // waits for the device and unmaps its pages.
    const auto keep_cheaper = [&](Matrix& m, double loop, double spmv) {
      detail::ProfilingRegion release("kspmv::auto::release");
      if (best.empty() || loop < best_loop) {
        best = Matrix();
        best = std::move(m);
        best_loop = loop;
        best_spmv = spmv;
      } else {
        m = Matrix();
      }
    };
    Kokkos::Timer timer;
    for (const auto& e : ranked) {
      if (tried >= opt.auto_candidates || !e.feasible) break;
      const bool timed_before = pre && !pre->m.empty() && pre->m.format() == e.format;
      if (!best.empty() && !timed_before) {
        // Nothing to save where its set-up alone passes what the best
        // costs from here on.
        const double setup = e.setup_seconds * setup_scale;
        const double product = e.seconds * columns_in_spmvs(has_fused_kernel(e.format), k) * spmv_scale;
        const double saving = setup > best_loop ? 0.0 : expected_trial_saving(opt.expected_applies, best_spmv, product);
        const double cost = setup + trial_cost;
        if (saving < cost) {
          char line[128];
          std::snprintf(line, sizeof line, "%s%s (may save %.2f ms, costs %.2f ms)", left.empty() ? "" : ", ",
                        format_name(e.format), saving * 1e3, cost * 1e3);
          left += line;
          ++tried;  // auto_candidates counts the shortlist, timed or not
          continue;
        }
      }
      Matrix m;
      if (timed_before) {
        m = std::move(pre->m);
      } else {
        m = convert_candidate(a, e.format, opt, merged);
        if (m.empty()) continue;
        setups += m.conversion_seconds();
      }
      ++tried;
      Kokkos::Timer trial_timer;
      std::optional<detail::ProfilingRegion> trial(std::in_place, "kspmv::auto::trial");
      const double spmv = timed_before ? pre->spmv : trial_seconds(space, [&] { product(m); });
      // The refresh weighs one part in expected_applies SpMVs of the loop.
      // It is timed (once after a warm-up, with the values the format holds:
      // the same bits stay) only where the model's figure, allowed twice its
      // size, would move the loop by a part in a hundred: at the default
      // 1000 SpMVs a refresh, a format modelled at 5 SpMVs or more (none
      // of the defaults, 1-4 SpMVs; a calibration's may be). Elsewhere two
      // refreshes would cost more of the set-up (up to 15 SpMVs of dia's,
      // ell's and hyb's on banded matrices) than their figure can change
      // the pick, so it is the model's count of SpMVs taken at the SpMV
      // just measured (its own figure where the products take several
      // columns). A merged input's values are not at hand: the model's
      // figure too.
      const double modelled_refresh =
          k == 1 && e.seconds > 0 ? e.refresh_seconds / e.seconds * spmv : e.refresh_seconds;
      const bool time_refresh =
          !merged && m.refreshable() && 2 * modelled_refresh >= kRefreshTimedShare * opt.expected_applies * spmv;
      const double refresh =
          time_refresh ? trial_seconds(space, [&] { m.impl_->scatter_values(space, d.values); }, false) : modelled_refresh;
      trial.reset();
      const double loop = loop_once_converted(opt.expected_applies, spmv, refresh);
      if (best.empty()) {
        const double modelled = e.seconds * columns_in_spmvs(m.has_fused_block_kernel(), k);
        spmv_scale = modelled > 0 ? spmv / modelled : 1;
        setup_scale = e.setup_seconds > 0 ? m.conversion_seconds() / e.setup_seconds : 1;
        trial_cost = timed_before ? pre->trial : trial_timer.seconds();
      }
      char line[160];
      std::snprintf(line, sizeof line, "%s%s %.1f us%s, set-up %.2f ms, refresh %.1f us%s", report.empty() ? "" : "; ",
                    m.name(), spmv * 1e6, k > 1 ? (" (" + std::to_string(k) + " columns)").c_str() : "",
                    m.conversion_seconds() * 1e3, refresh * 1e6, time_refresh ? "" : " (model)");
      report += line;
      keep_cheaper(m, loop, spmv);
    }
    if (pre && !pre->m.empty()) {
      // Timed first and not reached by the shortlist: weighed as the
      // others are, its refresh the model's count of SpMVs.
      const auto it = std::find_if(ranked.begin(), ranked.end(),
                                   [&](const FormatEstimate& e) { return e.format == pre->m.format(); });
      const double refresh =
          it != ranked.end() && it->seconds > 0 ? it->refresh_seconds / it->seconds * pre->spmv : pre->spmv;
      const double loop = loop_once_converted(opt.expected_applies, pre->spmv, refresh);
      char line[160];
      std::snprintf(line, sizeof line, "%s%s %.1f us, set-up %.2f ms, refresh %.1f us (model), timed first",
                    report.empty() ? "" : "; ", pre->m.name(), pre->spmv * 1e6, pre->m.conversion_seconds() * 1e3,
                    refresh * 1e6);
      report += line;
      keep_cheaper(pre->m, loop, pre->spmv);
    }
    if (best.empty()) return best;
    char trials[64];
    std::snprintf(trials, sizeof trials, "; trials %.1f ms", (timer.seconds() - setups) * 1e3);
    best.auto_note_ = "measured (" + report + trials + (left.empty() ? "" : "; not timed: " + left) +
                      "), expected_applies " + std::to_string(opt.expected_applies);
    if (opt.transpose != TransposeBuild::Never) best.attach_transpose(d, opt);
    return best;
  }

  // A product of k columns in the format's one SpMVs, as measured_pick's
  // trial rule weighs a candidate against the products it measured: k
  // where the columns go one at a time, kFusedColumnsShare of k where a
  // fused kernel reads the matrix once for all of them (H100, 8 columns:
  // 0.24-0.75, docs/PERFORMANCE.md). So a format with no fused kernel is
  // not timed where a fused one measured fast, and one with is timed where
  // only a one-column kernel was measured.
  static constexpr double kFusedColumnsShare = 0.5;
  static double columns_in_spmvs(bool fused, int k) { return k == 1 ? 1.0 : fused ? kFusedColumnsShare * k : k; }

  // A refresh is timed where its modelled cost, doubled, reaches this
  // share of expected_applies SpMVs (measured_pick).
  static constexpr double kRefreshTimedShare = 0.01;

  // Seconds one run of `run` takes on the device: a warm-up run (the first
  // launch of a kernel in a process also loads its module), then the
  // better of two batches of at least 0.1 ms each, the timed single run
  // among them where it lasts that long already: an SpMV of milliseconds
  // (the large graphs) is timed twice, not three times (batches false:
  // one run). Batches of 0.2 ms took 12 runs of a 46 us SpMV a candidate
  // where these take 8, 82 of a 5 us one where these take 42
  // (docs/PERFORMANCE.md, "auto's trials in batches of 0.1 ms").
  template <class Run>
  static double trial_seconds(const ExecSpace& space, Run&& run, bool batches = true) {
    constexpr double kBatchSeconds = 1e-4;
    DeviceTimer<ExecSpace> timer(space);
    run();
    timer.start();
    run();
    const double one = std::max(timer.stop(), 1e-7);
    if (!batches) return one;
    const int k = static_cast<int>(std::min(50.0, std::ceil(kBatchSeconds / one)));
    double best = one;
    for (int b = one >= kBatchSeconds ? 1 : 0; b < 2; ++b) {
      timer.start();
      for (int i = 0; i < k; ++i) run();
      best = std::min(best, timer.stop() / k);
    }
    return best;
  }

  // The model's pattern figures of a host or device CSR (max_entries:
  // ConvertOptions::auto_sample_entries).
  static PatternStats stats_of(const HostCsr<Scalar>& a, int tau, const ModelHardware& hw,
                               std::int64_t max_entries) {
    return pattern_stats(a, tau, hw, max_entries);
  }
  static PatternStats stats_of(const device_csr_type& a, int tau, const ModelHardware& hw,
                               std::int64_t max_entries) {
    return pattern_stats(ExecSpace(), a, tau, hw, max_entries);
  }

  static const HostCsr<Scalar>& host_view(const HostCsr<Scalar>& a, std::optional<HostCsr<Scalar>>&) { return a; }
  static const HostCsr<Scalar>& host_view(const device_csr_type& a, std::optional<HostCsr<Scalar>>& copy) {
    copy = download_csr(a);
    return *copy;
  }
  static device_csr_type device_view(const HostCsr<Scalar>& a) { return upload_csr<Scalar, ExecSpace>(a); }
  static const device_csr_type& device_view(const device_csr_type& a) { return a; }

  template <class In>
  static Matrix convert_to(const In& a, Format f, const ConvertOptions& opt, const canonical_type* merged) {
    Kokkos::Timer timer;
    Matrix m;
    m.format_ = f;
    m.nrows_ = a.nrows;
    m.ncols_ = a.ncols;
    m.nnz_ = a.nnz();
    // Each format's conversion: from a DeviceCsr where it has one (built on
    // the device), else from a HostCsr.
    switch (f) {
#define KSPMV_CONVERT_CASE(E, name, builder, square_only, summary)                                       \
  case Format::E:                                                                                        \
    m.impl_ = build(a, opt, name, merged,                                                                \
                    [](const auto& in, const ConvertOptions& o) -> decltype(builder<Scalar, ExecSpace>(in, o)) { \
                      return builder<Scalar, ExecSpace>(in, o);                                          \
                    });                                                                                  \
    break;
      KSPMV_FORMAT_LIST(KSPMV_CONVERT_CASE)
#undef KSPMV_CONVERT_CASE
      case Format::Auto: break;  // handled in convert_any()
    }
    ExecSpace().fence();
    m.conversion_seconds_ = timer.seconds();
    if (opt.transpose != TransposeBuild::Never) m.attach_transpose(a, opt);
    return m;
  }

  // What mode "T" needs later (A's pattern), or A^T itself now
  // (TransposeBuild::AtConversion).
  template <class In>
  void attach_transpose(const In& a, const ConvertOptions& opt) {
    transpose_ = std::make_shared<TransposeState>();
    transpose_->pattern = device_pattern(a);
    transpose_->opt = opt;
    transpose_->opt.transpose = TransposeBuild::Never;
    transpose_->opt.output_order = OutputOrder::Caller;
    if (opt.transpose == TransposeBuild::AtConversion) build_transpose(ExecSpace(), device_view(a).values);
  }

  // A's pattern on the device for a later transpose: a device input's own
  // views (no copy), a host input's uploaded.
  static device_csr_type device_pattern(const device_csr_type& a) {
    device_csr_type p = a;
    p.values = {};
    return p;
  }
  static device_csr_type device_pattern(const HostCsr<Scalar>& a) {
    using M = memory_space;
    device_csr_type p;
    p.nrows = a.nrows;
    p.ncols = a.ncols;
    p.row_ptr = detail::upload<offset_t, M>(a.row_ptr, "kspmv::transpose::pattern_row_ptr");
    p.col_idx = detail::upload<ordinal_t, M>(a.col_idx, "kspmv::transpose::pattern_col_idx");
    return p;
  }

  // Whether format f's conversion runs on the device (its builder takes a
  // DeviceCsr): the candidates for A^T when the model picks it.
  static bool built_on_device(Format f) {
    return visit_builder(f, [](auto builder) {
      return std::is_invocable<decltype(builder), const device_csr_type&, const ConvertOptions&>::value;
    });
  }

  // visit(builder), builder a generic lambda that calls format f's
  // conversion (invocable on the inputs that format converts from): what
  // the registry knows of f before anything is built. False for Auto.
  template <class Visit>
  static bool visit_builder(Format f, const Visit& visit) {
    switch (f) {
#define KSPMV_BUILDER_CASE(E, name, builder, square_only, summary)                                            \
  case Format::E:                                                                                          \
    return visit([](const auto& in, const ConvertOptions& o) -> decltype(builder<Scalar, ExecSpace>(in, o)) { \
      return builder<Scalar, ExecSpace>(in, o);                                                            \
    });
      KSPMV_FORMAT_LIST(KSPMV_BUILDER_CASE)
#undef KSPMV_BUILDER_CASE
      case Format::Auto: break;
    }
    return false;
  }

  // The model's fastest format for `t` among those built on the device;
  // csr-merge, with no pattern figures taken, where it would build column
  // panels for t on a device (convert_panelled_merge says why).
  static Format pick_built_on_device(const device_csr_type& t, const ConvertOptions& opt) {
    constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
    if (!on_host && csr_merge_column_panels(t, opt) > 1) return Format::CsrMerge;
    const int tau = static_cast<int>(sizeof(Scalar));
    const auto& hw = default_model();
    const auto stats = stats_of(t, tau, hw, opt.auto_sample_entries);
    for (const auto& e : estimate_all(stats, tau, hw, opt.max_fill))
      if (e.feasible && built_on_device(e.format)) return e.format;
    return Format::CsrAdaptive;
  }

  // Builds A^T from A's pattern and `values` (A's CSR order; empty: read
  // back from A through its value map), then points its value map at A's
  // entries, so that update_values(A's values) refreshes both.
  void build_transpose(const ExecSpace& space, const const_vector_type& values) const {
    TransposeState& st = *transpose_;
    detail::ProfilingRegion region("kspmv::transpose");
    Kokkos::Timer timer;
    device_csr_type d = st.pattern;
    if (transpose_as_pattern_copy(space, d, timer)) return;  // reads A's values from A itself
    if (values.extent(0) == static_cast<std::size_t>(nnz_)) {
      d.values = values;
    } else {
      if (!refreshable())
        throw UnsupportedError(std::string(name()) +
                               ": mode \"T\" needs A's values, and this matrix was converted with "
                               "ConvertOptions::value_map off; convert with transpose = TransposeBuild::AtConversion");
      vector_type v(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::transpose::a_values"), nnz_);
      impl_->gather_values(space, v);
      d.values = v;
    }
    const auto tr = transpose_csr(space, d);
    space.fence();
    st.times.structure = timer.seconds();
    // Format::Auto: A's own format where A^T has A's pattern (a symmetric
    // pattern: the same pattern runs the same in any format, and A's was
    // chosen for it, measured where auto picked it; no pattern figures to
    // take; converted here only where the pattern copy above could not be
    // made), else the model's pick from A^T's pattern figures.
    Format f = st.opt.transpose_format;
    if (f == Format::Auto) f = built_on_device(format_) && same_pattern(space, d, tr.csr) ? format_
                                                                                        : pick_built_on_device(tr.csr, st.opt);
    st.times.pick = timer.seconds() - st.times.structure;
    Matrix t = convert_any(tr.csr, f, st.opt);
    if (refreshable() && t.refreshable()) {
      detail::ScratchSet<ExecSpace> temps(space);
      t.impl_ = t.impl_->with_map(t.impl_->slot_map(space, temps).reindexed(space, tr.source, impl_->value_map()));
    }
    space.fence();
    st.matrix = std::make_shared<const Matrix>(std::move(t));
    st.pattern = {};  // A^T's map now refreshes it: the pattern is not needed again
    st.times.total = timer.seconds();
    st.times.convert = st.times.total - st.times.structure - st.times.pick;
  }

  // A^T of a structurally symmetric A (for_each_partner, transpose.hpp)
  // in A's format: A's layout shared, values of its own copied from A's
  // slots (entry p from its partner's), and A's slot map renumbered by the
  // partners, which update_values() then refreshes it by; the search, the
  // copy and the map one pass (ValueMap::partner_copy). No conversion, no
  // CSR of A^T. False (nothing built) where A's pattern is not symmetric,
  // A keeps no value map, computes in its internal order, or another
  // format was asked for.
  bool transpose_as_pattern_copy(const ExecSpace& space, const device_csr_type& d, const Kokkos::Timer& timer) const {
    TransposeState& st = *transpose_;
    if (!refreshable() || impl_->in_internal_order()) return false;
    if (st.opt.transpose_format != Format::Auto && st.opt.transpose_format != format_) return false;
    detail::ScratchSet<ExecSpace> temps(space);
    // The first entries' partners looked for before A^T's arrays are
    // allocated: a graph's pattern fails there (as does a rectangular A,
    // or one with more entries than 32-bit partners name).
    if (!partners_found(space, d, kPartnerProbeEntries, temps)) return false;
    const ValueMap<Scalar, ExecSpace> slots = impl_->slot_map(space, temps);
    const Kokkos::View<int*, memory_space> slot(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::value_map::slot"), nnz_);
    // Filled from A's own slots (its values after any merge); refreshed by
    // A's input values through the renumbered map, with A's merge lists.
    auto copy = impl_->pattern_copy(space, [&](const auto& from, const auto& to) {
      std::optional<ValueMap<Scalar, ExecSpace>> kept;
      if (for_each_partner(space, d, slots.partner_copy(from, to, slot), temps))
        kept = slots.renumbered(slot, impl_->value_map());
      return kept;
    });
    if (!copy) return false;
    Matrix t;
    t.impl_ = std::move(copy);
    t.format_ = format_;
    t.nrows_ = ncols_;
    t.ncols_ = nrows_;
    t.nnz_ = nnz_;
    space.fence();
    st.times.structure = timer.seconds();  // the search and the copy are one pass
    st.times.total = st.times.structure;
    st.times.convert = 0;
    t.conversion_seconds_ = st.times.total;
    st.matrix = std::make_shared<const Matrix>(std::move(t));
    st.shares_pattern = true;
    st.pattern = {};
    return true;
  }
  // How many of A's first entries transpose_as_pattern_copy looks at
  // before it allocates.
  static constexpr std::int64_t kPartnerProbeEntries = 1 << 16;

  // The pattern phase builds the format from the tagged pattern, the value
  // phase scatters a's values through the map read off it
  // (kspmv/core/value_map.hpp); with opt.value_map off, the format is built
  // from a's values directly and keeps no map.
  template <class In, class Build>
  static std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> build(const In& a, const ConvertOptions& opt,
                                                                           const char* name, const canonical_type* merged,
                                                                           const Build& build_format) {
    ExecSpace space;
    if constexpr (std::is_invocable<Build, const device_csr_type&, const ConvertOptions&>::value) {
      const auto& d = device_view(a);
      if (!opt.value_map) return hold(build_format(d, opt));
      using F = decltype(build_format(d, opt));
      if constexpr (detail::has_csr_order<F>::value) {
        // Built from the values where it keeps their order: a refresh is
        // one copy. A merged input sums through a map read off tags.
        if (!merged && detail::keeps_csr_order(static_cast<const F*>(nullptr), d, opt)) {
          F f = build_format(d, opt);
          auto map = ValueMap<Scalar, ExecSpace>::in_csr_order(d.nnz(), detail::value_views(f), name);
          return hold(std::move(f), std::move(map));
        }
      }
      if constexpr (detail::has_slot_walk<F>::value) {
        // Built from the values; refreshed by walking its rows, or through
        // a map of slots the walk writes (refresh_by_rows): no tags either
        // way. A merged input sums through a map read off tags.
        if (!merged) {
          F f = build_format(d, opt);
          const auto walk = detail::slot_walk(f, d.row_ptr);
          auto plan = detail::walk_plan(space, walk);
          if (detail::refresh_by_rows(f))
            return hold(std::move(f), ValueMap<Scalar, ExecSpace>::by_rows(d.nnz(), d.row_ptr, std::move(plan)));
          Kokkos::View<int*, memory_space> slot(
              Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kspmv::value_map::slot"), d.nnz());
          detail::walk_slots(space, "kspmv::value_map::slots_of_rows", plan, walk,
                             detail::RecordSlot<Kokkos::View<int*, memory_space>>{slot});
          auto map = ValueMap<Scalar, ExecSpace>::from_slots(d.nnz(), detail::value_views(f), slot);
          return hold(std::move(f), std::move(map));
        }
      }
      if constexpr (detail::has_slot_visit<F>::value) {
        // Built from the values; refreshed by visiting its slots, where it
        // kept what the visit reads (else, and for a merged input, through
        // a map read off tags, which then needs nothing else kept).
        if (!merged && detail::slot_visit_fits(static_cast<const F*>(nullptr), space, d)) {
          F f = build_format(d, opt);
          if (detail::visits_slots(f))
            return hold(std::move(f), ValueMap<Scalar, ExecSpace>::by_rows(d.nnz(), d.row_ptr, {}));
        }
        ConvertOptions tagged = opt;
        tagged.value_map = false;
        return with_values(build_format(tagged_pattern(space, d), tagged), d.values, d.nnz(), name, merged);
      }
      auto f = build_format(tagged_pattern(space, d), opt);
      return with_values(std::move(f), d.values, d.nnz(), name, merged);
    } else {
      std::optional<HostCsr<Scalar>> copy;
      const HostCsr<Scalar>& h = host_view(a, copy);
      if (!opt.value_map) return hold(build_format(h, opt));
      auto f = build_format(tagged_pattern(h), opt);
      if constexpr (std::is_same<In, device_csr_type>::value) {
        return with_values(std::move(f), a.values, h.nnz(), name, merged);
      } else {
        return with_values(std::move(f), detail::upload<Scalar, memory_space>(h.values, "kspmv::values"), h.nnz(),
                           name, merged);
      }
    }
  }

  // The value phase: the map from the tags in f's value views, then the
  // values through it; a merged input's lists after that, so refreshes
  // take the input's values.
  template <class F>
  static std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> with_values(F&& f, const const_vector_type& values,
                                                                                std::int64_t nnz, const char* name,
                                                                                const canonical_type* merged) {
    ExecSpace space;
    const auto views = detail::value_views(f);
    auto map = ValueMap<Scalar, ExecSpace>::from_tags(space, views, nnz, name);
    map.scatter(space, values, views);
    if (merged) map.set_merge(merged->merge_offsets, merged->merge_entries);
    return hold(std::forward<F>(f), std::move(map));
  }

 public:

  // y = alpha * A * x + beta * y on `space` (asynchronous, like any Kokkos
  // kernel: fence the space before reading y on the host). coo, hyb, pkt,
  // csr-merge and evc-hyb (gathered y) write scratch the matrix holds: for applies
  // on several streams at once, give each stream a kspmv::SpmvHandle
  // (kspmv/spmv.hpp), which holds scratch of its own.
  void apply(const ExecSpace& space, Scalar alpha, const const_vector_type& x, Scalar beta,
             const vector_type& y) const {
    if (!impl_) throw InvalidArgumentError("apply on an empty kspmv::Matrix");
    impl_->apply(space, alpha, x, beta, y);
  }
  void apply(Scalar alpha, const const_vector_type& x, Scalar beta, const vector_type& y) const {
    apply(ExecSpace(), alpha, x, beta, y);
  }

  // Whether format f has a fused kernel for several columns (spmv_block)
  // on this space, known before it is built; whether it pays on a given
  // matrix is known only after (block_pays: Matrix::has_fused_block_kernel).
  static bool has_fused_kernel(Format f) {
    return visit_builder(f, [](auto builder) { return has_spmv_block_of<decltype(builder)>(); });
  }

 private:
  // has_spmv_block of the format a builder (taking a DeviceCsr where it
  // can, else a HostCsr) returns.
  template <class Builder>
  static constexpr bool has_spmv_block_of() {
    if constexpr (std::is_invocable<Builder, const device_csr_type&, const ConvertOptions&>::value)
      return detail::has_spmv_block<
          std::decay_t<std::invoke_result_t<Builder, const device_csr_type&, const ConvertOptions&>>>::value;
    else
      return detail::has_spmv_block<
          std::decay_t<std::invoke_result_t<Builder, const HostCsr<Scalar>&, const ConvertOptions&>>>::value;
  }

 public:
  // Y = alpha * A * X + beta * Y for the k columns of X and Y in one pass
  // over the matrix, where its format has a fused kernel that pays (ell,
  // ellr, dia, csr-adaptive, csr's portable kernel, csr-merge's CUDA
  // kernel; pellr unsorted): true.
  // False where it has none: nothing was done, apply the columns one by
  // one. X and Y may have any strides; sizes are the caller's to check
  // (kspmv::spmv does both for you).
  bool apply_fused(const ExecSpace& space, Scalar alpha, const ConstBlockView<Scalar, memory_space>& X, Scalar beta,
                   const BlockView<Scalar, memory_space>& Y) const {
    if (!impl_) throw InvalidArgumentError("apply on an empty kspmv::Matrix");
    return impl_->apply_block(space, alpha, X, beta, Y);
  }
  // Whether apply_fused() has a kernel for this matrix's format.
  bool has_fused_block_kernel() const { return impl_ && impl_->has_block(); }
  // Whether that kernel gathers whole rows of X, so wants X row-major
  // (kspmv::spmv stages a column-major X for it).
  bool fused_block_wants_rows() const { return impl_ && impl_->block_wants_rows(); }

  bool empty() const { return !impl_; }
  Format format() const { return format_; }
  const char* name() const { return format_name(format_); }
  ordinal_t nrows() const { return nrows_; }
  ordinal_t ncols() const { return ncols_; }
  std::int64_t nnz() const { return nnz_; }
  std::size_t storage_bytes() const { return impl_ ? impl_->storage_bytes() : 0; }
  // Wall time of the whole conversion (device fenced): the format's own
  // build and the value phase.
  double conversion_seconds() const { return conversion_seconds_; }
  // Device bytes of the value map that update_values() uses (4 a nonzero;
  // 0 for formats that keep the CSR order, and without a map).
  std::size_t value_map_bytes() const { return impl_ ? impl_->value_map().bytes() : 0; }
  // Whether update_values() can refresh this matrix (a value map was kept:
  // ConvertOptions::value_map).
  bool refreshable() const { return impl_ && impl_->value_map().valid(); }

  // New values for the same pattern: `values` holds the entries of the
  // CSR the matrix was converted from, in its order, on the device (nnz()
  // of them; for a device CSR with duplicates, all of its entries, which
  // are summed again). Every format
  // is updated in place by one kernel on `space` (asynchronous, like
  // apply; no allocation, no host work), and then holds the same bits as a
  // fresh conversion of those values. Order it against applies on other
  // streams yourself. Copies of this Matrix share its storage and see the
  // new values too. Throws InvalidArgumentError (wrong length, empty
  // matrix) or UnsupportedError (converted without a value map), with
  // nothing changed.
  void update_values(const ExecSpace& space, const const_vector_type& values) {
    if (!impl_) throw InvalidArgumentError("update_values on an empty kspmv::Matrix");
    const std::int64_t expected = refreshable() ? impl_->value_map().input_nnz() : nnz_;
    if (static_cast<std::int64_t>(values.extent(0)) != expected)
      throw InvalidArgumentError(std::string(name()) + " update_values: " + std::to_string(values.extent(0)) +
                                 " values for a matrix of " + std::to_string(expected) + " entries");
    if (!refreshable())
      throw UnsupportedError(std::string(name()) +
                             " update_values: converted with ConvertOptions::value_map off, so no value map was kept");
    detail::ProfilingRegion region("kspmv::update_values");
    impl_->scatter_values(space, values);
    if (transpose_) {
      std::lock_guard<std::mutex> guard(transpose_->lock);
      if (transpose_->matrix) transpose_->matrix->impl_->scatter_values(space, values);
    }
  }
  void update_values(const const_vector_type& values) { update_values(ExecSpace(), values); }

  // A^T, the matrix mode "T" of kspmv::spmv applies: built on `space` at
  // the first call where ConvertOptions::transpose is OnFirstUse (then
  // kept, shared by copies of this Matrix, refreshed by update_values).
  // Throws UnsupportedError where transpose is Never, or the matrix
  // computes in its internal order.
  const Matrix& transposed(const ExecSpace& space) const {
    if (!impl_) throw InvalidArgumentError("transpose of an empty kspmv::Matrix");
    if (impl_->in_internal_order())
      throw UnsupportedError(std::string(name()) +
                             ": mode \"T\" of a matrix converted with OutputOrder::Internal (its rows are renumbered)");
    if (!transpose_)
      throw UnsupportedError(std::string(name()) +
                             ": mode \"T\" on a matrix converted with ConvertOptions::transpose = Never");
    std::lock_guard<std::mutex> guard(transpose_->lock);
    if (!transpose_->matrix) build_transpose(space, const_vector_type());
    return *transpose_->matrix;
  }
  // Whether A^T exists now, its device bytes (format, value map; only its
  // values and map where it shares A's layout; before it is built, the
  // pattern kept for it) and the seconds its build took.
  bool transpose_built() const {
    if (!transpose_) return false;
    std::lock_guard<std::mutex> guard(transpose_->lock);
    return transpose_->matrix != nullptr;
  }
  std::size_t transpose_bytes() const {
    if (!transpose_) return 0;
    std::lock_guard<std::mutex> guard(transpose_->lock);
    if (transpose_->matrix)
      return (transpose_->shares_pattern ? transpose_->matrix->impl_->value_bytes() : transpose_->matrix->storage_bytes()) +
             transpose_->matrix->value_map_bytes();
    return transpose_->pattern.row_ptr.span() * sizeof(offset_t) + transpose_->pattern.col_idx.span() * sizeof(ordinal_t);
  }
  double transpose_seconds() const { return transpose_times().total; }
  // Whether A^T is A's layout holding values of its own (A's pattern is
  // symmetric: transpose_as_pattern_copy); false until it is built.
  bool transpose_shares_pattern() const {
    if (!transpose_) return false;
    std::lock_guard<std::mutex> guard(transpose_->lock);
    return transpose_->matrix && transpose_->shares_pattern;
  }
  // Where A^T's build went, in seconds: its CSR on the device (structure),
  // the model's choice of its format (pick; Format::Auto only), its
  // conversion and value map (convert); where A's pattern is symmetric,
  // the search for each entry's partner, the copy of A's layout and its
  // first fill, one pass (structure; convert zero). Zero until it is built.
  struct TransposeTimes {
    double structure = 0, pick = 0, convert = 0, total = 0;
  };
  TransposeTimes transpose_times() const {
    if (!transpose_) return {};
    std::lock_guard<std::mutex> guard(transpose_->lock);
    return transpose_->times;
  }
  Properties properties() const {
    Properties p = impl_ ? impl_->properties() : Properties{};
    if (auto_picked_) p.insert(p.begin(), {"picked_by", auto_note_});
    return p;
  }
  // True when convert() was asked for Format::Auto; format() is the pick.
  bool auto_picked() const { return auto_picked_; }
  // Converted with OutputOrder::Internal by a format that reorders: row i
  // of y is row internal_order()[i] of A (and, where x_in_internal_order(),
  // x(i) must hold x[internal_order()[i]]). Empty: the caller's order.
  std::vector<ordinal_t> internal_order() const { return impl_ ? impl_->internal_order() : std::vector<ordinal_t>{}; }
  bool x_in_internal_order() const { return impl_ && impl_->in_internal_order() && impl_->permutes_x(); }

 private:
  template <class F>
  static std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> hold(F&& f, ValueMap<Scalar, ExecSpace> map = {}) {
    return std::make_shared<detail::FormatHolder<Scalar, ExecSpace, std::decay_t<F>>>(std::forward<F>(f), std::move(map));
  }

  // A^T and what builds it, shared by copies of the Matrix (as impl_ is).
  struct TransposeState {
    std::mutex lock;
    device_csr_type pattern;  // A's, until A^T is built
    ConvertOptions opt;       // A^T's conversion
    std::shared_ptr<const Matrix> matrix;
    bool shares_pattern = false;  // matrix is A's layout with values of its own
    TransposeTimes times;
  };

  friend class SpmvHandle<Scalar, ExecSpace>;

  std::shared_ptr<const detail::AnyFormat<Scalar, ExecSpace>> impl_;
  std::shared_ptr<TransposeState> transpose_;
  Format format_ = Format::Csr;
  ordinal_t nrows_ = 0, ncols_ = 0;
  std::int64_t nnz_ = 0;
  double conversion_seconds_ = 0;
  bool auto_picked_ = false;
  std::string auto_note_;  // how auto chose
};

// Compiled once in the library for the default execution space.
extern template class Matrix<float, Kokkos::DefaultExecutionSpace>;
extern template class Matrix<double, Kokkos::DefaultExecutionSpace>;

}  // namespace kspmv
