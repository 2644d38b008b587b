// csr-adaptive and EVC-HYB: the adaptive-TPR rule, the paper's Table 3
// columns computed independently from row lengths, both output orders, and
// the row-length shapes the issue names (a few extremely long rows, all
// rows short, all rows long, lengths on and off multiples of 32).
#include <map>

#include "test_support.hpp"

using namespace kspmv;

namespace {

using Space = Kokkos::DefaultExecutionSpace;

// A matrix with the given row lengths (columns spread over ncols) and
// values that make every row's sum distinct.
HostCsr<double> with_lengths(const std::vector<std::int64_t>& len, ordinal_t ncols, std::uint64_t seed = 1) {
  HostCoo<double> c(static_cast<ordinal_t>(len.size()), ncols);
  Rng rng(seed);
  for (std::size_t i = 0; i < len.size(); ++i) {
    const std::int64_t start = static_cast<std::int64_t>(rng.uniform() * ncols);
    for (std::int64_t k = 0; k < len[i]; ++k)
      c.add(static_cast<ordinal_t>(i), static_cast<ordinal_t>((start + k * 7) % ncols), 0.25 + rng.uniform());
  }
  return to_csr(c);
}

// The lengths in a random order (the conversions sort the rows).
std::vector<std::int64_t> shuffled(std::vector<std::int64_t> len, std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t i = len.size() - 1; i > 0; --i)
    std::swap(len[i], len[static_cast<std::size_t>(rng.uniform() * double(i + 1))]);
  return len;
}

// evc-hyb at the paper's split (128), with its sorted order and its
// vector-CSR part's offsets copied to the host.
struct PaperEvcHyb {
  EvcHybDevice<double, Space> f;
  decltype(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old)) perm;
  decltype(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.csr_row_ptr)) row_ptr;
};
PaperEvcHyb paper_evc_hyb(const HostCsr<double>& a) {
  ConvertOptions paper = kspmv_test::test_options();
  paper.evc_split = 128;
  PaperEvcHyb e;
  e.f = to_evc_hyb<double, Space>(a, paper);
  e.perm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.f.new_to_old);
  e.row_ptr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.f.csr_row_ptr);
  return e;
}

std::map<std::string, std::string> props(const Matrix<double>& m) {
  const auto p = m.properties();
  return {p.begin(), p.end()};
}

void check_both_kernels(const HostCsr<double>& a, Format f, const std::string& what) {
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
    const auto m = Matrix<double>::convert(a, f, kspmv_test::test_options(k));
    for (auto [al, be] : std::vector<std::pair<double, double>>{{1, 0}, {-1.5, 0.5}, {2, 1}})
      EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, al, be)) << what;
  }
}

// y = alpha A x (or one of evc-hyb §3.3's profile modes) with y poisoned
// by NaN first, copied back to the host.
auto apply_on_host(const EvcHybDevice<double, Space>& f, const std::vector<double>& x, double alpha,
                   EvcProfile mode = EvcProfile::Full) {
  auto dx = detail::upload<double, Space::memory_space>(x, "x");
  Kokkos::View<double*, Space::memory_space> dy("y", f.nrows);
  Kokkos::deep_copy(dy, std::numeric_limits<double>::quiet_NaN());
  spmv_profile(mode, Space(), alpha, f, dx, 0.0, dy);
  Kokkos::fence();
  auto h = Kokkos::create_mirror(dy);  // a copy even where dy is host memory
  Kokkos::deep_copy(h, dy);
  return h;
}

// In the internal order y(i) is row new_to_old(i) of A x.
void expect_internal_order_product(const HostCsr<double>& a, const EvcHybDevice<double, Space>& f,
                                   const std::string& what) {
  auto perm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 3);
  std::vector<double> yref(static_cast<std::size_t>(a.nrows));
  reference_spmv(1.0, a, x, 0.0, yref);
  const auto h = apply_on_host(f, x, 1.0);
  for (ordinal_t i = 0; i < a.nrows; ++i)
    ASSERT_NEAR(h(i), yref[perm(i)], 1e-12 * (1 + std::fabs(yref[perm(i)]))) << what << " row " << i;
}

}  // namespace

TEST(AdaptiveTpr, LanesPerRowByLength) {
  // <= 8 entries -> 1 lane, <= 16 -> 2, ..., capped at the block.
  EXPECT_EQ(tpr_for_length(0, 256), 1);
  EXPECT_EQ(tpr_for_length(8, 256), 1);
  EXPECT_EQ(tpr_for_length(9, 256), 2);
  EXPECT_EQ(tpr_for_length(16, 256), 2);
  EXPECT_EQ(tpr_for_length(17, 256), 4);
  EXPECT_EQ(tpr_for_length(256, 256), 32);
  EXPECT_EQ(tpr_for_length(257, 256), 64);
  EXPECT_EQ(tpr_for_length(2048, 256), 256);
  EXPECT_EQ(tpr_for_length(1000000, 256), 256);
  // Ranges over sorted lengths: contiguous, block counts by rows per block.
  const std::vector<std::int64_t> len = {1, 2, 8, 9, 9, 100, 300, 300, 300, 5000};
  const auto r = tpr_ranges(len, 256);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].tpr, 1);
  EXPECT_EQ(r[0].end, 3);
  EXPECT_EQ(r[1].tpr, 2);
  EXPECT_EQ(r[2].tpr, 16);  // 100 entries
  EXPECT_EQ(r[3].tpr, 64);  // 300 entries: 4 rows per block -> 1 block
  EXPECT_EQ(r[3].blocks, 1);
  EXPECT_EQ(r[4].tpr, 256);
  EXPECT_EQ(r[4].first_block, 4);
  // min_tpr (vector CSR): at least a warp per row.
  for (const auto& x : tpr_ranges(len, 256, 32)) EXPECT_GE(x.tpr, 32);
}

// The CUDA kernels find a team's sub-ELL block and a block's TPR range
// with warp ballots, 32 candidates a round: more than 32 sub-ELL blocks
// (every width 0..128 at the paper's split) take several rounds, and
// csr-adaptive's ranges reach all nine TPRs of a 256-lane block.
TEST(EvcHyb, ManyBlocksAndEveryTprRange) {
  std::vector<std::int64_t> len;
  for (std::int64_t w = 0; w <= 128; ++w) len.insert(len.end(), 40, w);
  for (std::int64_t l : {300, 600, 1200, 2500}) len.push_back(l);
  const auto a = with_lengths(shuffled(len, 9), 20000);
  ConvertOptions paper = kspmv_test::test_options();
  paper.evc_split = 128;
  const auto evc = to_evc_hyb<double, Space>(a, paper);
  EXPECT_GT(evc.host_blocks.size(), 96u);  // four ballot rounds
  const auto m = Matrix<double>::convert(a, Format::EvcHyb, paper);
  for (auto [al, be] : std::vector<std::pair<double, double>>{{1, 0}, {-1.5, 0.5}})
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, al, be));
  // Lengths 1, 9, 17, 33, 65, 129, 257, 513 and 2049: TPR 1, 2, ..., 256.
  std::vector<std::int64_t> every;
  for (std::int64_t l : {1, 9, 17, 33, 65, 129, 257, 513, 2049}) every.insert(every.end(), 70, l);
  const auto b = with_lengths(every, 5000);
  const auto adaptive = to_csr_adaptive<double, Space>(b);
  EXPECT_EQ(adaptive.host_ranges.size(), 9u);
  check_both_kernels(b, Format::CsrAdaptive, "every TPR");
  check_both_kernels(b, Format::EvcHyb, "every TPR");
  // More ranges than a warp's lanes cannot reach the kernel.
  EXPECT_THROW(detail::upload_ranges<Space::memory_space>(std::vector<TprRange>(33), "r"), UnsupportedError);
}

TEST(EvcHyb, TableThreeColumnsFromRowLengths) {
  // 100 rows of 3, 50 of 5, 40 of 200, 2 of 5000 entries.
  std::vector<std::int64_t> len;
  len.insert(len.end(), 100, 3);
  len.insert(len.end(), 50, 5);
  len.insert(len.end(), 40, 200);
  len.insert(len.end(), 2, 5000);
  // Shuffled rows: the format sorts them.
  std::vector<std::int64_t> shuffled(len.size());
  for (std::size_t i = 0; i < len.size(); ++i) shuffled[(i * 37) % len.size()] = len[i];
  const auto a = with_lengths(shuffled, 6000);
  ASSERT_EQ(a.nnz(), 300 + 250 + 8000 + 10000);
  ConvertOptions paper;
  paper.evc_split = 128;  // the paper's split, whatever the device
  auto p = props(Matrix<double>::convert(a, Format::EvcHyb, paper));
  // 150 short rows -> Isplit 128 (whole slices); slices of widths 3,3,3,5.
  EXPECT_EQ(p["isplit"], "128");
  EXPECT_EQ(p["nnz_ell"], std::to_string(96 * 3 + 32 * 5));
  EXPECT_EQ(p["ell_blocks"], "2");
  // vCSR: 22 leftover rows of 5 -> 32 slots each, 40 x 224, 2 x 5024.
  EXPECT_EQ(p["nnz_vcsr"], std::to_string(22 * 32 + 40 * 224 + 2 * 5024));
  EXPECT_EQ(p["csr_ranges"], "2");  // 32 lanes for <= 256 entries, 256 for 5000
  const double pad = 96 * 3 + 32 * 5 + 22 * 32 + 40 * 224 + 2 * 5024 - 18550;
  char b[32];
  std::snprintf(b, sizeof b, "%.2f%%", 100.0 * pad / 18550);
  EXPECT_EQ(p["pct_padding"], b);
  check_both_kernels(a, Format::EvcHyb, "table 3 matrix");
  check_both_kernels(a, Format::CsrAdaptive, "table 3 matrix");
}

TEST(EvcHyb, RowLengthShapes) {
  Rng rng(5);
  // ibm-dc1-like: short rows and two rows holding ~21% of the entries.
  std::vector<std::int64_t> dc(20000);
  for (auto& l : dc) l = 1 + static_cast<std::int64_t>(rng.uniform() * 9);
  dc[77] = 21000;
  dc[15000] = 9000;
  // All rows <= 128: a multiple of 32 rows (no vCSR part) and not.
  std::vector<std::int64_t> short32(3200), short_odd(3211), long_only(500), mult32(640);
  for (auto& l : short32) l = static_cast<std::int64_t>(rng.uniform() * 129);
  for (auto& l : short_odd) l = static_cast<std::int64_t>(rng.uniform() * 129);
  // All rows > 128; lengths on multiples of 32 and off them.
  for (auto& l : long_only) l = 129 + static_cast<std::int64_t>(rng.uniform() * 900);
  for (std::size_t i = 0; i < mult32.size(); ++i) mult32[i] = 32 * (1 + static_cast<std::int64_t>(i % 9));
  struct Shape {
    const char* name;
    std::vector<std::int64_t> len;
    std::int64_t isplit;
  };
  const std::vector<Shape> shapes = {{"ibm-dc1-like", dc, 19968},
                                     {"all <= 128, 3200 rows", short32, 3200},
                                     {"all <= 128, 3211 rows", short_odd, 3200},
                                     {"all > 128", long_only, 0},
                                     {"multiples of 32", mult32, 256}};
  for (const auto& s : shapes) {
    const auto a = with_lengths(s.len, 30000);
    ConvertOptions paper;
    paper.evc_split = 128;
    auto p = props(Matrix<double>::convert(a, Format::EvcHyb, paper));
    EXPECT_EQ(p["isplit"], std::to_string(s.isplit)) << s.name;
    EXPECT_EQ(std::stoll(p["isplit"]) % 32, 0) << s.name;
    check_both_kernels(a, Format::EvcHyb, s.name);
    check_both_kernels(a, Format::CsrAdaptive, s.name);
  }
}

TEST(EvcHyb, InternalOrderIsSortedByLengthThenFirstColumn) {
  // Power-law rows; short random rows, empty ones among them (many ties).
  for (const std::string spec : {"powerlaw:5000:6:seed=4", "uniform:5000:0:3:seed=3"}) {
    SCOPED_TRACE(spec);
    const auto a = generate<double>(spec);
    ConvertOptions o;
    o.output_order = OutputOrder::Internal;
    const auto f = to_evc_hyb<double, Space>(a, o);
    auto perm_d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
    std::vector<ordinal_t> perm(perm_d.data(), perm_d.data() + a.nrows);
    validate_permutation(perm, a.nrows);
    for (ordinal_t r = 1; r < a.nrows; ++r) {
      const auto lp = a.row_length(perm[r - 1]), lr = a.row_length(perm[r]);
      ASSERT_LE(lp, lr);
      if (lp == lr && lp > 0) ASSERT_LE(a.col_idx[a.row_ptr[perm[r - 1]]], a.col_idx[a.row_ptr[perm[r]]]);
      // Ties (one length and first column, or empty) keep the rows' order.
      if (lp == lr && (lp == 0 || a.col_idx[a.row_ptr[perm[r - 1]]] == a.col_idx[a.row_ptr[perm[r]]]))
        ASSERT_LT(perm[r - 1], perm[r]);
    }
    expect_internal_order_product(a, f, spec);
  }
}

// The vector-CSR part is planned on the device (a scan of its padded
// lengths that marks where each threads-per-row class ends): its offsets
// and ranges are the host rule's (tpr_ranges over the sorted lengths) on
// rows of every class, on a matrix with no vector-CSR rows and on one
// whose rows are all there.
TEST(EvcHyb, VectorCsrPlanMatchesTheHostRule) {
  using D = EvcHybDevice<double, Space>;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> cases;
  {
    std::vector<std::int64_t> len(45, 3);  // one slice, 13 short rows left for the vector CSR
    for (std::int64_t l : {129, 200, 256, 257, 300, 512, 513, 1024, 1025, 2048, 2049, 5000})
      len.insert(len.end(), 3, l);
    cases.push_back({"every class", shuffled(len, 21)});
  }
  cases.push_back({"no vector-CSR rows", std::vector<std::int64_t>(64, 7)});
  cases.push_back({"every row vector CSR", {0, 5, 40, 1, 130, 9, 64, 2, 3, 31}});
  for (const auto& [what, len] : cases) {
    SCOPED_TRACE(what);
    const auto a = with_lengths(len, 6000);
    const auto [f, perm, row_ptr] = paper_evc_hyb(a);
    const std::int64_t isplit = f.report.isplit, ncsr = a.nrows - isplit;
    ASSERT_EQ(static_cast<std::int64_t>(row_ptr.extent(0)), ncsr + 1);
    std::vector<std::int64_t> clen;
    std::int64_t slots = 0;
    for (std::int64_t q = 0; q < ncsr; ++q) {
      clen.push_back(a.row_length(perm(isplit + q)));
      ASSERT_EQ(row_ptr(q), slots) << "row " << q;
      slots += (clen.back() + 31) / 32 * 32;
    }
    EXPECT_EQ(row_ptr(ncsr), slots);
    EXPECT_EQ(f.report.vcsr_slots, slots);
    EXPECT_EQ(static_cast<std::int64_t>(f.csr_val.extent(0)), slots);
    const auto want = tpr_ranges(clen, D::team_lanes, 32);
    ASSERT_EQ(f.host_ranges.size(), want.size());
    for (std::size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(f.host_ranges[r].tpr, want[r].tpr) << "range " << r;
      EXPECT_EQ(f.host_ranges[r].begin, want[r].begin) << "range " << r;
      EXPECT_EQ(f.host_ranges[r].end, want[r].end) << "range " << r;
      EXPECT_EQ(f.host_ranges[r].first_block, want[r].first_block) << "range " << r;
      EXPECT_EQ(f.host_ranges[r].blocks, want[r].blocks) << "range " << r;
    }
    check_both_kernels(a, Format::EvcHyb, what);
  }
}

// The vector-CSR part holds each sorted row's entries in the CSR's order
// at the row's offset, then column -1 and value 0 up to the next offset
// (the fill writes the padding too), on rows of many lengths, empty ones
// and one long enough to span many of the fill's runs.
TEST(EvcHyb, VectorCsrSlotsHoldTheRowThenPadding) {
  std::vector<std::int64_t> len(20, 2);
  for (std::int64_t l : {0, 0, 129, 130, 160, 161, 300, 1023, 1024, 1025, 4000}) len.push_back(l);
  const auto a = with_lengths(shuffled(len, 33), 9000);
  const auto [f, perm, row_ptr] = paper_evc_hyb(a);
  auto col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.csr_col);
  auto val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.csr_val);
  const std::int64_t isplit = f.report.isplit, ncsr = a.nrows - isplit;
  ASSERT_EQ(isplit, 0);  // 22 short rows: no whole slice
  for (std::int64_t q = 0; q < ncsr; ++q) {
    const auto r = perm(isplit + q);
    const std::int64_t b = a.row_ptr[r], l = a.row_length(r), s0 = row_ptr(q), s1 = row_ptr(q + 1);
    ASSERT_EQ(s1 - s0, (l + 31) / 32 * 32) << "row " << q;
    for (std::int64_t k = 0; k < s1 - s0; ++k) {
      if (k < l) {
        ASSERT_EQ(col(s0 + k), a.col_idx[b + k]) << "row " << q << " entry " << k;
        ASSERT_EQ(val(s0 + k), a.values[b + k]) << "row " << q << " entry " << k;
      } else {
        ASSERT_EQ(col(s0 + k), -1) << "row " << q << " padding " << k;
        ASSERT_EQ(val(s0 + k), 0.0) << "row " << q << " padding " << k;
      }
    }
  }
  check_both_kernels(a, Format::EvcHyb, "vector-CSR slots");
}

TEST(Roofline, CodeBalanceAndAlphaFromPattern) {
  // The paper's double-precision form: TBytes = (12/beta + 8 alpha) NNZ + 16 N.
  const auto c = code_balance(1000, 1250, 100, 8, 0.5);
  EXPECT_DOUBLE_EQ(c.beta, 0.8);
  EXPECT_DOUBLE_EQ(c.bytes, (12 / 0.8 + 8 * 0.5) * 1000 + 16 * 100);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 1000 + 3 * 100);
  // A dense 32 x 32 block: one warp touches 32 doubles = 8 sectors for
  // 1024 entries -> alpha = 8 * 32 / (8 * 1024).
  const auto d = generate<double>("dense:32:32");
  EXPECT_DOUBLE_EQ(x_reuse_alpha(d, {}, 8), 8.0 * 32 / (8 * 1024));
  // A diagonal: each row its own x, 32 rows touch 32 consecutive doubles
  // (8 sectors): every x loaded once, alpha = 1.
  HostCoo<double> diag(64, 64);
  for (int i = 0; i < 64; ++i) diag.add(i, i, 1.0);
  EXPECT_DOUBLE_EQ(x_reuse_alpha(to_csr(diag), {}, 8), 1.0);
}

// The roofline's alpha, counted independently: the distinct 32-byte x
// sectors of each sampled warp of the sorted order (every stride-th warp,
// as kEvcAlphaWarps and kEvcAlphaEntries give it), per entry, read from
// the CSR through the format's own permutation.
template <class Scalar>
double sampled_warps_alpha(const HostCsr<Scalar>& a, const std::vector<int>& perm) {
  const std::int64_t tau = sizeof(Scalar), per_sector = 32 / tau, n = a.nrows;
  const std::int64_t mean = std::max<std::int64_t>(1, a.nnz() / std::max<std::int64_t>(1, n));
  const std::int64_t warps = (n + 31) / 32;
  const std::int64_t sampled = std::clamp<std::int64_t>(kEvcAlphaEntries / (32 * mean), 1, kEvcAlphaWarps);
  const std::int64_t stride = std::max<std::int64_t>(1, warps / sampled);
  std::int64_t sectors = 0, entries = 0;
  for (std::int64_t w = 0; w < warps; w += stride) {
    std::vector<std::int64_t> s;
    for (std::int64_t p = 32 * w; p < std::min(n, 32 * w + 32); ++p)
      for (offset_t k = a.row_ptr[perm[p]]; k < a.row_ptr[perm[p] + 1]; ++k) s.push_back(a.col_idx[k] / per_sector);
    entries += static_cast<std::int64_t>(s.size());
    std::sort(s.begin(), s.end());
    sectors += std::unique(s.begin(), s.end()) - s.begin();
  }
  return entries > 0 ? double(sectors) * 32.0 / (double(tau) * double(entries)) : 0.0;
}

template <class Scalar>
void expect_roofline_of_sorted_warps(const HostCsr<Scalar>& a, int split, const std::string& what) {
  ConvertOptions o;
  o.evc_split = split;
  const auto f = to_evc_hyb<Scalar, Space>(a, o);
  auto perm_d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.new_to_old);
  const std::vector<int> perm(perm_d.data(), perm_d.data() + a.nrows);
  const CodeBalance r = evc_hyb_roofline(f);
  EXPECT_DOUBLE_EQ(r.alpha, sampled_warps_alpha(a, perm)) << what;
  const double stored = double(f.report.ell_slots + f.report.vcsr_slots);
  EXPECT_DOUBLE_EQ(r.beta, stored > 0 ? double(a.nnz()) / stored : 1.0) << what;
  // Made once: a copy shares it, and a second call gives the same.
  const auto copy = f;
  EXPECT_EQ(copy.roofline.get(), f.roofline.get()) << what;
  EXPECT_DOUBLE_EQ(evc_hyb_roofline(copy).alpha, r.alpha) << what;
}

// The roofline is made from the format's own slots when first asked for:
// padding in sub-ELL blocks and vector-CSR rows left out, rows in the
// sorted order, every warp where they are few and every stride-th warp of
// a 20,000-row power-law graph; float and double (8 and 4 entries a
// 32-byte sector); no entries at all.
TEST(EvcHyb, RooflineAlphaCountsTheSortedWarpsSectors) {
  std::vector<std::int64_t> len;
  for (int i = 0; i < 700; ++i) len.push_back(1 + (i * 13) % 40);
  len.push_back(900);
  const auto mixed = with_lengths(len, 5000);
  for (int split : {128, 32}) {
    const std::string at = ", split " + std::to_string(split);
    expect_roofline_of_sorted_warps(mixed, split, "mixed lengths" + at);
    expect_roofline_of_sorted_warps(generate<double>("lap2d:60"), split, "lap2d:60" + at);
    expect_roofline_of_sorted_warps(generate<float>("lap2d:60"), split, "lap2d:60 float" + at);
    expect_roofline_of_sorted_warps(generate<double>("powerlaw:20000:9:seed=3"), split, "powerlaw" + at);
    expect_roofline_of_sorted_warps(generate<float>("powerlaw:20000:9:seed=3"), split, "powerlaw float" + at);
  }
  expect_roofline_of_sorted_warps(with_lengths(std::vector<std::int64_t>(70, 0), 10), 128, "no entries");
  // The Matrix's properties print it.
  const auto m = Matrix<double>::convert(mixed, Format::EvcHyb);
  const auto f = to_evc_hyb<double, Space>(mixed);
  char want[32];
  std::snprintf(want, sizeof want, "(alpha %.3f,", evc_hyb_roofline(f).alpha);
  EXPECT_NE(props(m)["code_balance_bytes_per_flop"].find(want), std::string::npos)
      << props(m)["code_balance_bytes_per_flop"];
}

// evc-hyb §3.3's profile modes compute what they claim: x constant -> A·1,
// A constant -> pattern(A)·x, both -> the stored slots of each row (at
// least its length, at most its block's width or 31 padded slots), in caller order, on both kernel
// paths, over rows in the sub-ELL and the vector-CSR part.
TEST(EvcHyb, ProfileModesComputeTheirProducts) {
  std::vector<std::int64_t> len;
  for (int i = 0; i < 700; ++i) len.push_back(1 + (i * 13) % 40);
  len.push_back(900);
  len.push_back(3000);
  const auto a = with_lengths(len, 4000, 9);
  const auto x = kspmv_test::random_vector<double>(static_cast<std::size_t>(a.ncols), 5);
  std::vector<double> ones(x.size(), 1.0), row_sum(a.nrows), pattern_x(a.nrows);
  HostCsr<double> pattern = a;
  for (auto& v : pattern.values) v = 1.0;
  reference_spmv(1.0, a, ones, 0.0, row_sum);
  reference_spmv(1.0, pattern, x, 0.0, pattern_x);
  for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
    ConvertOptions o = kspmv_test::test_options(k);
    o.evc_split = 128;
    const auto f = to_evc_hyb<double, Space>(a, o);
    ASSERT_GT(f.report.isplit, 0);
    ASSERT_LT(f.report.isplit, a.nrows);
    const auto cx = apply_on_host(f, x, 2.0, EvcProfile::ConstX), ca = apply_on_host(f, x, 2.0, EvcProfile::ConstA),
               cax = apply_on_host(f, x, 2.0, EvcProfile::ConstAX);
    for (ordinal_t i = 0; i < a.nrows; ++i) {
      ASSERT_NEAR(cx(i), 2 * row_sum[i], 1e-12 * (1 + std::fabs(row_sum[i]))) << i;
      ASSERT_NEAR(ca(i), 2 * pattern_x[i], 1e-12 * (1 + std::fabs(pattern_x[i]))) << i;
      ASSERT_GE(cax(i), 2.0 * a.row_length(i)) << i;
      // sub-ELL rows: their block's width (<= the split); vector CSR: < 32 padded.
      ASSERT_LE(cax(i), 2.0 * std::max<std::int64_t>(a.row_length(i) + 31, 128)) << i;
    }
  }
}

// Lanes sharing a sub-ELL row (small matrices on a GPU; forced here so the
// host runs the same team layout): every lane count, rows on and off whole
// steps, widths below and above the lanes, both orders, both kernels, and
// the profile modes over split rows. float too: the shuffle is per type.
TEST(EvcHyb, LanesSharingRows) {
  std::vector<std::int64_t> len;
  for (int i = 0; i < 1337; ++i) len.push_back(1 + (i * 29) % 100);
  len.push_back(0);
  len.push_back(700);
  const auto a = with_lengths(len, 5000, 13);
  std::vector<double> ones(static_cast<std::size_t>(a.ncols), 1.0), row_sum(a.nrows);
  reference_spmv(1.0, a, ones, 0.0, row_sum);
  for (int lanes : {1, 2, 4, 8, 16, 32}) {
    for (OutputOrder order : {OutputOrder::Caller, OutputOrder::Internal}) {
      for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
        ConvertOptions o = kspmv_test::test_options(k);
        o.evc_split = 128;
        o.evc_ell_lanes = lanes;
        o.output_order = order;
        const auto f = to_evc_hyb<double, Space>(a, o);
        EXPECT_EQ(f.report.ell_max_lanes, lanes);
        // Every block's teams cover its rows at L / lanes rows a team.
        for (const auto& b : f.host_blocks) {
          EXPECT_EQ(b.lanes, lanes);
          EXPECT_GE(static_cast<std::int64_t>(b.teams) * (256 / lanes), b.rows);
        }
        if (order == OutputOrder::Caller) {
          const auto m = Matrix<double>::convert(a, Format::EvcHyb, o);
          for (auto [al, be] : std::vector<std::pair<double, double>>{{1, 0}, {-1.5, 0.5}})
            EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, al, be)) << lanes;
          // x constant -> A·1 through the split rows.
          const auto h = apply_on_host(f, ones, 1.0, EvcProfile::ConstX);
          for (ordinal_t i = 0; i < a.nrows; ++i)
            ASSERT_NEAR(h(i), row_sum[i], 1e-12 * (1 + std::fabs(row_sum[i]))) << lanes << " row " << i;
        } else {
          expect_internal_order_product(a, f, std::to_string(lanes) + " lanes, internal order");
        }
      }
    }
    ConvertOptions o;
    o.evc_split = 128;
    o.evc_ell_lanes = lanes;
    const auto af = convert_scalar<float>(a);
    EXPECT_TRUE(kspmv_test::format_matches_reference(af, Format::EvcHyb, 1.0f, 0.5f, 3, o)) << lanes << " float";
  }
}

TEST(EvcHyb, AutoLanesOnlyWhenRowsAreFewerThanLanes) {
  // The host runs one lane: never split. A GPU splits the rows of a small
  // matrix (a few thousand rows) and never those of a large one.
  const auto small = generate<double>("lap2d:60");
  const auto fs = to_evc_hyb<double, Space>(small, {});
  const bool host = detail::is_host_space<Space::execution_space>();
  if (host) EXPECT_EQ(fs.report.ell_max_lanes, 1);
  else EXPECT_GT(fs.report.ell_max_lanes, 1);
  EXPECT_TRUE(kspmv_test::format_matches_reference(small, Format::EvcHyb, 1.0, 0.0));
  ConvertOptions rpt;
  rpt.evc_rows_per_thread = 2;  // the caller asked for rows per thread: no lanes
  EXPECT_EQ((to_evc_hyb<double, Space>(small, rpt).report.ell_max_lanes), 1);
}

TEST(EvcHyb, RejectsBadLaneAndRowOptions) {
  const auto a = generate<double>("lap2d:10");
  for (int bad : {-1, 3, 64, 6}) {
    ConvertOptions o;
    o.evc_ell_lanes = bad;
    EXPECT_THROW(to_evc_hyb<double>(a, o), InvalidArgumentError) << bad;
  }
  ConvertOptions o;
  o.evc_rows_per_thread = -2;
  EXPECT_THROW(to_evc_hyb<double>(a, o), InvalidArgumentError);
}

// y in the caller's order by scatter or by the gather pass (CUDA only; the
// host keeps the scatter whatever is asked), with alpha and beta, over
// repeated calls with changing x and y.
TEST(EvcHyb, CallerOrderByScatterOrGather) {
  const auto a = generate<double>("powerlaw:20000:9:seed=3");
  const bool cuda = detail::on_cuda<Space::execution_space>();
  for (CallerY how : {CallerY::Scatter, CallerY::Gather, CallerY::Auto}) {
    for (KernelPath k : {KernelPath::Auto, KernelPath::Portable}) {
      ConvertOptions o = kspmv_test::test_options(k);
      o.evc_caller_y = how;
      const auto f = to_evc_hyb<double, Space>(a, o);
      // Auto gathers only when y takes a quarter of L2 (not this one).
      EXPECT_EQ(f.gather_y, how == CallerY::Gather && cuda && k == KernelPath::Auto);
      if (f.gather_y) {
        EXPECT_EQ(f.y_sorted.extent(0), static_cast<std::size_t>(a.nrows));
        EXPECT_EQ(f.old_to_new.extent(0), static_cast<std::size_t>(a.nrows));
      }
      const auto m = Matrix<double>::convert(a, Format::EvcHyb, o);
      int seed = 11;
      for (auto [al, be] : std::vector<std::pair<double, double>>{{1, 0}, {-1.5, 0.5}, {2, 1}, {0.5, -2}})
        EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, al, be, seed++)) << static_cast<int>(how);
    }
  }
  // Internal order never gathers.
  ConvertOptions o;
  o.evc_caller_y = CallerY::Gather;
  o.output_order = OutputOrder::Internal;
  EXPECT_FALSE((to_evc_hyb<double, Space>(a, o).gather_y));
}
