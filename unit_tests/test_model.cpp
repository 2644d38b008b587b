// The performance model: the paper's equations on a hand-computed PMF, the
// HYB K searches on distributions whose optimum is known, the storage model
// against the formats' real storage, calibration files, and a calibration
// run (tiny, on whatever device the tests run on).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "kspmv/core/distinct_count.hpp"
#include "test_support.hpp"

using namespace kspmv;

namespace {
// A toy device whose units make the equations easy to check by hand:
// C = 2 stream processors, W = 2, BS = 2, CR = 1 Hz, BW = 8 bytes, F = 1.
ModelHardware toy() {
  ModelHardware hw;
  hw.cores = 2;
  hw.warp = 2;
  hw.block = 2;
  hw.memory_clock_ghz = 1e-9;
  hw.bus_width_bits = 64;
  hw.core_clock_ghz = 1e-9;
  hw.pcie_gbs = 1e-9;  // B = 1 byte/s
  return hw;
}
// 200 rows: row 0 of 40 entries, the others of 2 (HYB's K = 2 sends 38 to
// COO; PKT's packet holds row 0 whole).
HostCsr<double> one_row_of_40() {
  HostCoo<double> c(200, 200);
  for (int j = 0; j < 40; ++j) c.add(0, j, 1.0);
  for (int i = 1; i < 200; ++i) {
    c.add(i, i, 1.0);
    c.add(i, i - 1, 1.0);
  }
  return to_csr(c);
}
}  // namespace

TEST(PaperModel, EquationsOnAHandComputedPmf) {
  // Rows of 1, 2, 3, 6 entries: N 4, NNZ 12, E(X) 3; with W = 2 the
  // 2-fractiles are 2 and 6, E(Q) = 4. Single precision: S_s = S_i = 4.
  const auto s = row_length_stats({1, 2, 3, 6}, 10, 2);
  ASSERT_DOUBLE_EQ(s.fractile_mean(), 4.0);
  const auto hw = toy();
  // eq. (29): 12/2 (2 + 2) + 12/2 + 4*2/2 ceil(3/2) = 24 + 6 + 8
  EXPECT_DOUBLE_EQ(paper_coo(s, 4, hw), 38.0);
  // eq. (36): 4/2 ((2 + 2) + 2 + 4 + 4 * 3) = 2 * 22
  EXPECT_DOUBLE_EQ(paper_csr(s, 4, hw), 44.0);
  // eq. (42), K = 6: 4/2 ((3 + 3) + 4 (6 - 2)/4 + 2 + 2 * 4) = 2 * 20
  EXPECT_DOUBLE_EQ(paper_ell(s, 4, hw), 40.0);
  // eq. (49), K = 2: COO 5 entries: 5/2 (4 + 1) + 0.5*4*2/2 ceil((4.5 - 2)/2)
  // = 12.5 + 4; ELL: 4/2 ((1 + 1) + 0 + 2 + 2 * 1.5) = 14.
  EXPECT_DOUBLE_EQ(paper_hyb(s, 2, 4, hw), 30.5);
  // eq. (25): DTT = ((4 + 8) 12 + 2 * 4 * 4) / 1 = 176 added on request.
  EXPECT_DOUBLE_EQ(paper_coo(s, 4, hw, true), 38.0 + 176.0);
  // Algorithm 2 searches [E(X), max] = [3, 6] for the smallest eq. (50).
  const auto K = paper_hyb_k(s, 4, hw);
  EXPECT_GE(K, 3);
  EXPECT_LE(K, 6);
  for (std::int64_t k = 3; k <= 6; ++k) EXPECT_LE(paper_hyb(s, K, 4, hw), paper_hyb(s, k, 4, hw));
}

TEST(TrafficModel, HybSplitOnConstructedDistributions) {
  ModelHardware hw;
  // 4000 rows of 4 and one row of 10000: ELL must hold exactly the short
  // rows (K = 4); each further column costs a padded slot per row for one
  // entry moved out of COO.
  std::vector<std::int64_t> len(4000, 4);
  len.push_back(10000);
  PatternStats s;
  s.rows = row_length_stats(len, 20000);
  EXPECT_EQ(model_hyb_k(s, 8, hw), 4);
  // The paper's Algorithm 2 starts at E(X) = 6.5 and cannot find it.
  EXPECT_GE(paper_hyb_k(s.rows, 8, hw), 6);
  // All rows equal: no COO part at all (saves its launches).
  PatternStats u;
  u.rows = row_length_stats(std::vector<std::int64_t>(5000, 7), 5000);
  EXPECT_EQ(model_hyb_k(u, 8, hw), 7);
  EXPECT_EQ(paper_hyb_k(u.rows, 8, hw), 7);
  // The 1/3 rule's K is what estimate() uses when hyb_k < 0.
  EXPECT_EQ(estimate(Format::Hyb, s, 8, hw).note, "K=4");
}

TEST(TrafficModel, StorageModelMatchesTheFormats) {
  const auto a = generate<double>("lap2d:64");
  const auto s = pattern_stats(a, 8, 512);
  ModelHardware hw;
  EXPECT_EQ(s.diagonals, 5);
  for (Format f : {Format::Csr, Format::Ell, Format::Dia}) {
    const auto m = Matrix<double>::convert(a, f);
    EXPECT_NEAR(estimate(f, s, 8, hw).storage_bytes, double(m.storage_bytes()), 0.02 * double(m.storage_bytes()))
        << format_name(f);
  }
  // Refusals agree with the conversions' fill limit.
  const auto p = generate<double>("powerlaw:3000:6:seed=2");
  const auto sp = pattern_stats(p, 8, 512);
  const bool ell_ok = estimate(Format::Ell, sp, 8, hw, 3.0).feasible;
  bool converts = true;
  try {
    Matrix<double>::convert(p, Format::Ell);
  } catch (const FormatCannotHoldError&) {
    converts = false;
  }
  EXPECT_EQ(ell_ok, converts);
  // The pick is feasible; Format::Auto (on a host space, where it does
  // not measure) converts to the cheapest loop by the model.
  const Format f = pick(sp, 8, default_model());
  EXPECT_TRUE(estimate(f, sp, 8, hw).feasible);
  const auto loop = rank_for_loop(pattern_stats(p, 8, default_model()), 8, default_model(), 3.0,
                                  ConvertOptions().expected_applies);
  EXPECT_TRUE(loop.front().feasible);
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Matrix<double>::memory_space>::accessible)
    EXPECT_EQ(Matrix<double>::convert(p, Format::Auto).format(), loop.front().format);
  EXPECT_THROW(estimate(Format::Auto, sp, 8, hw), InvalidArgumentError);
}

TEST(TrafficModel, HybKChoicesInTheConversion) {
  const auto a = generate<double>("powerlaw:5000:6:seed=4");
  for (std::int64_t rule : {kHybKOneThird, kHybKModel, kHybKPaper}) {
    ConvertOptions o;
    o.hyb_k = rule;
    const auto m = Matrix<double>::convert(a, Format::Hyb, o);
    EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.0));
    std::string k_rule;
    for (const auto& [k, v] : m.properties())
      if (k == "k_rule") k_rule = v;
    EXPECT_EQ(k_rule, rule == kHybKOneThird ? "one third" : rule == kHybKModel ? "model" : "paper eq. 50");
  }
  ConvertOptions bad;
  bad.hyb_k = -7;
  EXPECT_THROW(Matrix<double>::convert(a, Format::Hyb, bad), InvalidArgumentError);
}

TEST(Calibration, FileRoundTripAndErrors) {
  ModelHardware hw;
  hw.name = "test device";
  hw.bandwidth_gbs = 1234.5;
  hw.launch_us = 2.5;
  hw.efficiency["evc-hyb"] = 0.75;
  hw.efficiency_l2["ell"] = 2.5;
  hw.efficiency_l2_irregular["ell"] = 0.5;
  hw.fixed_us["coo"] = 9.5;
  hw.host_us["ell"] = 3.25;
  hw.chain_ns["pellr"] = 80;
  hw.chain_dram_ns["jad"] = 350;
  hw.line_ns["csr-scalar"] = 0.25;
  hw.efficiency_near["csr-adaptive"] = 1.5;
  hw.near_bytes = 6.5e7;
  hw.far_bytes = 1.5e8;
  hw.l2_gain = 1.0 / 3.0;  // needs all 17 digits to read back the same
  hw.chain_ns["ell"] = 2.0 / 3.0;
  const std::string path = ::testing::TempDir() + "kspmv_test.cal";
  write_calibration(path, hw);
  const auto back = read_calibration(path);
  EXPECT_EQ(back.name, "test device");
  EXPECT_DOUBLE_EQ(back.bandwidth_gbs, 1234.5);
  EXPECT_DOUBLE_EQ(back.launch_us, 2.5);
  EXPECT_DOUBLE_EQ(back.efficiency.at("evc-hyb"), 0.75);
  EXPECT_DOUBLE_EQ(back.fixed_us.at("coo"), 9.5);
  EXPECT_DOUBLE_EQ(back.host_us.at("ell"), 3.25);
  EXPECT_EQ(back.host_us.count("coo"), 0u);
  EXPECT_DOUBLE_EQ(back.efficiency_l2.at("ell"), 2.5);
  EXPECT_DOUBLE_EQ(back.efficiency_l2_irregular.at("ell"), 0.5);
  EXPECT_EQ(back.efficiency.count("ell"), 0u);
  EXPECT_DOUBLE_EQ(back.chain_ns.at("pellr"), 80);
  EXPECT_DOUBLE_EQ(back.chain_dram_ns.at("jad"), 350);
  EXPECT_EQ(back.chain_ns.count("jad"), 0u);
  EXPECT_DOUBLE_EQ(back.line_ns.at("csr-scalar"), 0.25);
  EXPECT_DOUBLE_EQ(back.efficiency_near.at("csr-adaptive"), 1.5);
  EXPECT_DOUBLE_EQ(back.near_bytes, 6.5e7);
  EXPECT_DOUBLE_EQ(back.far_bytes, 1.5e8);
  EXPECT_EQ(back.l2_gain, 1.0 / 3.0);  // bit for bit
  EXPECT_EQ(back.chain_ns.at("ell"), 2.0 / 3.0);
  EXPECT_TRUE(back.calibrated);
  // The crowd figures csr-scalar once had are no longer in the model:
  // files that hold them still read, those keys dropped (their format
  // names still checked).
  std::ofstream(path) << "crowd_ns.csr-scalar = 268\ncrowd_scattered_ns.csr-scalar = 320\nline_ns.csr-scalar = 0.5\n";
  EXPECT_DOUBLE_EQ(read_calibration(path).line_ns.at("csr-scalar"), 0.5);
  for (const char* bad : {"bandwidth_gbs = fast\n", "no equals sign\n", "efficiency.nonsense = 1\n", "colour = 3\n",
                          "fixed_us.nonsense = 2\n", "fixed_us.coo = slow\n", "efficiency_l2.nonsense = 1\n",
                          "efficiency_l2_irregular.ell = x\n", "chain_ns.nonsense = 1\n", "chain_dram_ns.ell = x\n",
                          "host_us.nonsense = 1\n", "host_us.ell = quick\n", "crowd_ns.nonsense = 1\n", "line_ns.nonsense = 1\n",
                          "line_ns.csr-scalar = x\n", "efficiency_near.nonsense = 1\n", "near_bytes = big\n"}) {
    std::ofstream(path) << bad;
    EXPECT_THROW(read_calibration(path), Error) << bad;
  }
  EXPECT_THROW(read_calibration("/nonexistent/kspmv.cal"), IoError);
}

// Every calibration file the project ships reads back (a key the reader
// does not know would make it throw) and names its device and figures.
TEST(Calibration, ShippedFilesRead) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kspmv_test::calibration_dir())) {
    if (entry.path().extension() != ".cal") continue;
    ++files;
    ModelHardware hw;
    ASSERT_NO_THROW(hw = read_calibration(entry.path().string())) << entry.path();
    EXPECT_TRUE(hw.calibrated);
    EXPECT_NE(hw.name, "unknown") << entry.path();
    EXPECT_GT(hw.bandwidth_gbs, 0) << entry.path();
    EXPECT_GT(hw.launch_us, 0) << entry.path();
    EXPECT_FALSE(hw.efficiency.empty()) << entry.path();
  }
  EXPECT_GE(files, 1);
}

// The fixed part of an estimate: launches * launch_us uncalibrated; the
// format's tiny-matrix time once calibrated, plus a launch for each launch
// the tiny matrix did not need. HYB is ELL's kernel plus, where rows pass
// K, a COO SpMV: ELL's fixed cost plus COO's. PKT pays COO's fixed cost
// less one launch where entries leave their packet.
TEST(Model, FixedCostFromCalibration) {
  ModelHardware hw;
  hw.launch_us = 3;
  EXPECT_DOUBLE_EQ(fixed_seconds(hw, Format::Hyb, 3), 9e-6);
  hw.fixed_us["ell"] = 4;
  hw.fixed_us["coo"] = 7;
  hw.fixed_us["pkt"] = 6;
  EXPECT_DOUBLE_EQ(fixed_seconds(hw, Format::Coo, 2), 7e-6);  // measured with its two launches
  hw.fixed_us["ehyb"] = 5;
  EXPECT_DOUBLE_EQ(fixed_seconds(hw, Format::Ehyb, 2), 8e-6);  // a separate extra-row pass: one launch
  EXPECT_DOUBLE_EQ(fixed_seconds(hw, Format::Dia, 1), 3e-6);   // not calibrated: one launch
  // estimate() adds it to the traffic (or chain) time: a matrix of two rows
  // is all fixed cost but a two-entry chain of 25 ns each.
  hw.serial_ns = 25;
  const auto tiny = pattern_stats(generate<double>("lap1d:2"), 8, 64);
  const auto e = estimate(Format::Hyb, tiny, 8, hw);
  EXPECT_DOUBLE_EQ(e.fixed_seconds, 4e-6);
  EXPECT_NEAR(e.seconds, 4e-6 + 50e-9, 1e-12);
  // One row of 40 beside rows of 2: with K = 2 its 38 others go to COO.
  const auto one_long = pattern_stats(one_row_of_40(), 8, 64);
  EXPECT_DOUBLE_EQ(estimate(Format::Hyb, one_long, 8, hw, 3.0, 2).fixed_seconds, 11e-6);
  EXPECT_DOUBLE_EQ(estimate(Format::Hyb, one_long, 8, hw, 3.0, 40).fixed_seconds, 4e-6);
  // PKT: lap1d:4000 has entries across its packets' edges, diagonal blocks
  // of 8 none.
  const auto across = pattern_stats(generate<double>("lap1d:4000"), 8, 64);
  const auto inside = pattern_stats(generate<double>("blockdiag:4096:8"), 8, 64);
  EXPECT_DOUBLE_EQ(estimate(Format::Pkt, across, 8, hw).fixed_seconds, 10e-6);
  EXPECT_DOUBLE_EQ(estimate(Format::Pkt, inside, 8, hw).fixed_seconds, 6e-6);
}

// SpMVs run back to back take at least the host's time to queue each: the
// calibrated host_us is a floor under the device estimate (for HYB, ELL's
// launch plus COO's where rows pass K; a launch beyond the tiny matrix's
// costs csr-vector's). Absent (older files, host spaces) there is no floor.
TEST(Model, HostCostIsAFloorUnderBackToBackSpMVs) {
  ModelHardware hw;
  hw.launch_us = 2;
  hw.serial_ns = 25;
  hw.fixed_us["ell"] = 2;
  hw.fixed_us["coo"] = 3;
  const auto tiny = pattern_stats(generate<double>("lap1d:2"), 8, 64);
  EXPECT_DOUBLE_EQ(host_seconds(hw, Format::Ell, 1), 0.0);
  EXPECT_NEAR(estimate(Format::Ell, tiny, 8, hw).seconds, 2e-6 + 50e-9, 1e-12);  // no floor
  hw.host_us["ell"] = 5;
  hw.host_us["coo"] = 6;
  hw.host_us["csr-vector"] = 4;
  EXPECT_DOUBLE_EQ(host_seconds(hw, Format::Ell, 1), 5e-6);
  EXPECT_DOUBLE_EQ(host_seconds(hw, Format::Ehyb, 2), 0.0);     // not calibrated: no floor
  hw.host_us["ehyb"] = 5.5;
  EXPECT_DOUBLE_EQ(host_seconds(hw, Format::Ehyb, 2), 9.5e-6);  // one launch more: csr-vector's
  const auto e = estimate(Format::Ell, tiny, 8, hw);
  EXPECT_DOUBLE_EQ(e.host_seconds, 5e-6);
  EXPECT_DOUBLE_EQ(e.fixed_seconds, 2e-6);
  EXPECT_DOUBLE_EQ(e.seconds, 5e-6);  // the host, not the device, sets the pace
  // HYB: ELL's host cost, plus COO's where rows pass K.
  const auto one_long = pattern_stats(one_row_of_40(), 8, 64);
  EXPECT_DOUBLE_EQ(estimate(Format::Hyb, one_long, 8, hw, 3.0, 40).host_seconds, 5e-6);
  EXPECT_DOUBLE_EQ(estimate(Format::Hyb, one_long, 8, hw, 3.0, 2).host_seconds, 11e-6);
  EXPECT_DOUBLE_EQ(estimate(Format::Hyb, one_long, 8, hw, 3.0, 2).seconds, 11e-6);
  // A matrix whose traffic outlasts the host's queueing is not floored.
  hw.bandwidth_gbs = 10;
  const auto big = pattern_stats(generate<double>("lap2d:300"), 8, 64);
  const auto b = estimate(Format::Ell, big, 8, hw);
  EXPECT_GT(b.seconds, 2 * b.host_seconds);
  EXPECT_DOUBLE_EQ(b.host_seconds, 5e-6);
}

// csr-scalar's lines: each load step of a warp (32 consecutive rows, a
// lane each, the lanes whose rows are that long) touches the 128-byte
// lines of its column indices, values and x; counted by hand here. Its
// chain is the longest row at the lone figure plus an SM's share of every
// warp's lines at line_ns; other formats have no line term.
TEST(Model, CsrScalarLinesAddToItsChain) {
  // 64 rows of 4 entries, row i at columns 16 i .. 16 i + 3. A step of a
  // warp: indices 4 i + j over 32 lanes span 4 lines (32 ints a line),
  // values 8 (16 doubles a line), x one line a lane (16 i): 44 lines, 4
  // steps, 2 warps.
  HostCoo<double> c(64, 1024);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 4; ++j) c.add(i, 16 * i + j, 1.0);
  const auto a = to_csr(c);
  const auto s = pattern_stats(a, 8, 64);
  EXPECT_DOUBLE_EQ(s.scalar_lines, 2 * 4 * (4 + 8 + 32));
  // Floats: values 4 lines a step, x a line per two lanes.
  HostCoo<float> cf(64, 1024);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 4; ++j) cf.add(i, 16 * i + j, 1.0f);
  EXPECT_DOUBLE_EQ(pattern_stats(to_csr(cf), 4, 64).scalar_lines, 2 * 4 * (4 + 4 + 16));
  // A straggler: row 0 of 10 entries (columns 0-9), rows 1-31 one entry
  // (column 16 i). Step 0: indices 0, 10-40 span 2 lines, values 3, x 32
  // (row 0 and row 1's x share none: line 0 and lines 1-31); steps 1-9:
  // lane 0 alone, a line each.
  HostCoo<double> d(32, 512);
  for (int j = 0; j < 10; ++j) d.add(0, j, 1.0);
  for (int i = 1; i < 32; ++i) d.add(i, 16 * i, 1.0);
  EXPECT_DOUBLE_EQ(pattern_stats(to_csr(d), 8, 64).scalar_lines, (2 + 3 + 32) + 9 * 3);

  ModelHardware hw;
  hw.bandwidth_gbs = 1e6;  // traffic ~free: the chain sets the time
  hw.processors = 2;
  hw.chain_ns["csr-scalar"] = 50;
  EXPECT_NEAR(estimate(Format::CsrScalar, s, 8, hw).chain_seconds, 4 * 50e-9, 1e-15);  // no line figure
  const double vector_chain = estimate(Format::CsrVector, s, 8, hw).chain_seconds;
  hw.line_ns["csr-scalar"] = 10;
  EXPECT_NEAR(estimate(Format::CsrScalar, s, 8, hw).chain_seconds, 4 * 50e-9 + 352 / 2.0 * 10e-9, 1e-15);
  EXPECT_DOUBLE_EQ(line_ns_of(hw, Format::CsrScalar), 10);
  EXPECT_DOUBLE_EQ(line_ns_of(hw, Format::CsrVector), 0);
  EXPECT_DOUBLE_EQ(estimate(Format::CsrVector, s, 8, hw).chain_seconds, vector_chain);  // csr-scalar's figure only
  // Past L2 too (the lone figure then the DRAM one).
  hw.l2_bytes = 1000;
  hw.chain_dram_ns["csr-scalar"] = 70;
  EXPECT_NEAR(estimate(Format::CsrScalar, s, 8, hw).chain_seconds, 4 * 70e-9 + 352 / 2.0 * 10e-9, 1e-15);
}

// A warp of more than 256 loads (two hubs among short rows, csr-scalar's
// lane a row) is counted at every stride-th load of each run of loads with
// the same lanes busy: within 0.5% of the count of every load, taken here
// with sets. Rows of fewer loads are counted exactly (the test above).
TEST(Model, HubLoadsAreSampledWithinHalfAPercent) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> col(0, 999999);
  HostCoo<double> c(32, 1000000);
  const int lengths[3] = {20000, 5003, 2};
  for (int i = 0; i < 32; ++i) {
    std::set<int> cols;
    while (static_cast<int>(cols.size()) < lengths[std::min(i, 2)] + (i > 2 ? i % 3 : 0)) cols.insert(col(rng));
    for (const int j : cols) c.add(i, j, 1.0);
  }
  const auto a = to_csr(c);
  double exact = 0;
  for (std::int64_t j = 0;; ++j) {
    std::set<std::int64_t> idx, val, x;
    for (int r = 0; r < 32; ++r) {
      const std::int64_t k = a.row_ptr[r] + j;
      if (k >= a.row_ptr[r + 1]) continue;
      idx.insert(k * 4 / 128);
      val.insert(k * 8 / 128);
      x.insert(std::int64_t(a.col_idx[k]) * 8 / 128);
    }
    if (idx.empty()) break;
    exact += double(idx.size() + val.size() + x.size());
  }
  const double sampled = pattern_stats(a, 8, 64).scalar_lines;
  EXPECT_NEAR(sampled, exact, 0.005 * exact);
  EXPECT_GT(exact, 3.0 * 20000);
}

// kk-crs's chain: the longest row over Kokkos Kernels' lanes a row (the
// smallest power of two up to 32 at least a sixth of nnz / rows, integer
// division), not csr-vector's rule: a lane a row up to 6 entries.
TEST(Model, KkCrsChainFollowsKokkosKernelsLanes) {
  const ModelHardware hw;
  for (const auto& [len, lanes] : std::vector<std::pair<int, int>>{{6, 1}, {7, 2}, {12, 2}, {13, 4}, {25, 8}, {200, 32}}) {
    HostCoo<double> c(64, 256);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < len; ++j) c.add(i, j, 1.0);
    const auto s = pattern_stats(to_csr(c), 8, 64);
    EXPECT_DOUBLE_EQ(estimate(Format::KkCrs, s, 8, hw).chain_elements, double(len) / lanes) << len;
  }
}

// CSR kernels with a group of lanes a row pay whole groups: a row of 5
// entries under csr-vector's 8 lanes (CUSP's rule on a mean of 5) moves
// 8 slots of index and value; kk-crs gives rows of 5 a lane each (no idle
// lanes); csr-scalar and ELL are unaffected.
TEST(Model, VectorCsrPaysWholeGroups) {
  const ModelHardware hw;
  HostCoo<double> c(256, 256);
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 5; ++j) c.add(i, (i + 7 * j) % 256, 1.0);
  const auto s = pattern_stats(to_csr(c), 8, 64);
  const double rest = 4.0 * 257 + 8.0 * 256 * 5 * s.alpha + 8.0 * 256;  // row_ptr, x, y
  EXPECT_NEAR(estimate(Format::CsrVector, s, 8, hw).bytes, 12.0 * 256 * 8 + rest, 1e-6);
  EXPECT_NEAR(estimate(Format::Csr, s, 8, hw).bytes, 12.0 * 256 * 8 + rest, 1e-6);
  EXPECT_NEAR(estimate(Format::KkCrs, s, 8, hw).bytes, 12.0 * 256 * 5 + rest, 1e-6);
  EXPECT_DOUBLE_EQ(estimate(Format::CsrVector, s, 8, hw).storage_bytes, 12.0 * 256 * 5 + 4.0 * 257);
}

// csr-adaptive's lines: rows sorted by ascending length, a range's
// threads per row each (tpr_for_length: up to 8 entries a lane). 32 rows
// of 16 entries (2 lanes a row, 16 rows a warp: 2 warps) and, sorted
// before them, 32 rows of 4 (a lane each: 1 warp). Counted by hand; its
// chain takes csr-scalar's line figure.
TEST(Model, CsrAdaptiveLinesInItsSortedOrder) {
  // Row i < 32: 16 entries, columns 16 i + j (x: one line a row); rows
  // 32-63: 4 entries, columns 16 (i - 32) + j.
  HostCoo<double> c(64, 1024);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 16; ++j) c.add(i, 16 * i + j, 1.0);
  for (int i = 32; i < 64; ++i)
    for (int j = 0; j < 4; ++j) c.add(i, 16 * (i - 32) + j, 1.0);
  const auto a = to_csr(c);
  const auto s = pattern_stats(a, 8, 64);
  // Short rows first (entries 512 + 4 r + j, r = 0..31): a warp, 4 steps;
  // a step's indices are bytes 2048 + 16 r + 4 j (lines 16-19: 4), its
  // values bytes 4096 + 32 r + 8 j (lines 32-39: 8), its x a line a row
  // (32).
  const double short_rows = 4 * (4 + 8 + 32);
  // Long rows, 2 lanes a row (offsets 0 and 1, stride 2), 16 rows a warp:
  // 8 steps. Warp 0 (rows 0-15): entries 16 r + 2 j + o, indices bytes
  // 64 r + ...: 16 rows x 64 bytes = 8 lines; values 16 x 128: 16 lines;
  // x: 16 lines (a line a row). Warp 1 (rows 16-31) the same.
  const double long_rows = 2 * 8 * (8 + 16 + 16);
  EXPECT_DOUBLE_EQ(s.adaptive_lines, short_rows + long_rows);
  ModelHardware hw;
  hw.bandwidth_gbs = 1e6;
  hw.processors = 4;
  hw.chain_ns["ell"] = 100;  // csr-adaptive's lanes walk with ELL's loop
  const double base = estimate(Format::CsrAdaptive, s, 8, hw).chain_seconds;
  EXPECT_NEAR(base, 8 * 100e-9, 1e-15);  // a lane's 8 entries
  hw.line_ns["csr-scalar"] = 2;
  EXPECT_NEAR(estimate(Format::CsrAdaptive, s, 8, hw).chain_seconds, base + (short_rows + long_rows) / 4 * 2e-9, 1e-15);
}

// Just past L2 a format's DRAM efficiency takes the factor efficiency_near
// / efficiency: whole up to the near stencil's CSR bytes, none from the
// far one's, log-linear between; csr-scalar only where it walks its rows.
TEST(Model, NearL2FactorBetweenTheTwoStencils) {
  ModelHardware hw;
  hw.l2_bytes = 1000;  // everything is past L2
  hw.bandwidth_gbs = 100;
  hw.serial_ns = 1e-6;  // chains ~free: the traffic sets the time
  const auto a = generate<double>("lap2d:100");
  const auto s = pattern_stats(a, 8, 64);
  const double csr = 12.0 * double(a.nnz()) + 4.0 * double(a.nrows + 1);
  for (Format f : {Format::Ell, Format::CsrScalar}) {
    hw.efficiency[format_name(f)] = 1.0;
    hw.efficiency_near[format_name(f)] = 2.0;
  }
  // The factor an estimate moved its bytes with.
  auto factor = [&](Format f) {
    const auto e = estimate(f, s, 8, hw);
    return e.bytes / (hw.bandwidth_gbs * 1e9) / (e.seconds - e.fixed_seconds);
  };
  EXPECT_NEAR(factor(Format::Ell), 1.0, 1e-9);  // no sizes: no factor
  hw.near_bytes = 2 * csr;
  hw.far_bytes = 8 * csr;
  EXPECT_NEAR(factor(Format::Ell), 2.0, 1e-9);
  EXPECT_NEAR(factor(Format::CsrScalar), 2.0, 1e-9);  // 5 entries a row: walked
  EXPECT_NEAR(factor(Format::CsrVector), 0.8, 1e-9);  // no figures: the default efficiency alone
  hw.near_bytes = csr / 2;
  hw.far_bytes = 2 * csr;
  EXPECT_NEAR(factor(Format::Ell), std::sqrt(2.0), 1e-9);
  hw.near_bytes = csr / 8;
  hw.far_bytes = csr / 2;
  EXPECT_NEAR(factor(Format::Ell), 1.0, 1e-9);
  // Within L2 the L2 figures apply, not this factor.
  hw.near_bytes = 2 * csr;
  hw.far_bytes = 8 * csr;
  hw.l2_bytes = 1'000'000'000;
  EXPECT_NEAR(factor(Format::Ell), hw.l2_gain, 1e-9);
  // csr-scalar streams rows past 8 entries on average (csr_walks_rows):
  // the factor is not for it there.
  hw.l2_bytes = 1000;
  HostCoo<double> wide(512, 512);
  for (int i = 0; i < 512; ++i)
    for (int j = 0; j < 12; ++j) wide.add(i, (i + 37 * j) % 512, 1.0);
  const auto w = to_csr(wide);
  const auto sw = pattern_stats(w, 8, 64);
  hw.near_bytes = 2 * (12.0 * double(w.nnz()) + 4.0 * double(w.nrows + 1));
  hw.far_bytes = 4 * hw.near_bytes;
  const auto e = estimate(Format::CsrScalar, sw, 8, hw);
  EXPECT_NEAR(e.bytes / (hw.bandwidth_gbs * 1e9) / (e.seconds - e.fixed_seconds), 1.0, 1e-9);
  const auto el = estimate(Format::Ell, sw, 8, hw);
  EXPECT_NEAR(el.bytes / (hw.bandwidth_gbs * 1e9) / (el.seconds - el.fixed_seconds), 2.0, 1e-9);
}

// A format's own chain cost per element, within L2 and past it, replaces
// serial_ns; formats without one keep it.
TEST(Model, ChainCostPerFormatAndRegime) {
  ModelHardware hw;
  hw.bandwidth_gbs = 1e6;  // traffic ~free: the chain sets the time
  hw.l2_bytes = 50'000'000;
  hw.serial_ns = 10;
  hw.fixed_us["pellr"] = 1;
  hw.fixed_us["jad"] = 1;
  hw.chain_ns["pellr"] = 100;
  hw.chain_dram_ns["pellr"] = 400;
  // One row of 1000 entries beside short ones: a 1000-element chain.
  HostCoo<double> c(5000, 5000);
  for (int j = 0; j < 1000; ++j) c.add(0, j, 1.0);
  for (int i = 1; i < 5000; ++i) c.add(i, i, 1.0);
  const auto small = pattern_stats(to_csr(c), 8, 64);
  for (Format f : {Format::Pellr, Format::Jad}) {
    const auto e = estimate(f, small, 8, hw);
    EXPECT_DOUBLE_EQ(e.chain_elements, 1000) << format_name(f);
    const double ns = f == Format::Pellr ? 100 : 10;
    EXPECT_NEAR(e.chain_seconds, 1000 * ns * 1e-9, 1e-15) << format_name(f);
    EXPECT_NEAR(e.seconds, 1e-6 + e.chain_seconds, 1e-12) << format_name(f);
  }
  // The same matrix judged past L2 (an L2 smaller than its traffic).
  hw.l2_bytes = 1000;
  EXPECT_NEAR(estimate(Format::Pellr, small, 8, hw).chain_seconds, 1000 * 400e-9, 1e-15);
  EXPECT_NEAR(estimate(Format::Jad, small, 8, hw).chain_seconds, 1000 * 10e-9, 1e-15);
  EXPECT_DOUBLE_EQ(chain_ns_of(hw, Format::Pellr, true), 100);
  EXPECT_DOUBLE_EQ(chain_ns_of(hw, Format::Ell, false), 10);
}

// Within L2 a calibrated format's own L2 efficiency replaces l2_gain x
// efficiency; past L2, and for formats without one, nothing changes.
TEST(Model, L2EfficiencyReplacesTheGain) {
  ModelHardware hw;
  hw.bandwidth_gbs = 1000;
  hw.l2_bytes = 50'000'000;
  hw.l2_gain = 2;
  hw.efficiency["csr-vector"] = 0.5;
  hw.fixed_us["csr-vector"] = 3;
  hw.serial_ns = 0;
  const auto small = pattern_stats(generate<double>("lap2d:100"), 8, 64);  // regular: cv <= 0.3
  const auto before = estimate(Format::CsrVector, small, 8, hw);
  EXPECT_NEAR(before.seconds, 3e-6 + before.bytes / (1000e9 * 2 * 0.5), 1e-12);
  hw.efficiency_l2["csr-vector"] = 4;
  const auto after = estimate(Format::CsrVector, small, 8, hw);
  EXPECT_NEAR(after.seconds, 3e-6 + after.bytes / (1000e9 * 4), 1e-12);
  // A format without an L2 figure keeps the gain.
  hw.efficiency["ell"] = 0.5;
  hw.fixed_us["ell"] = 3;
  const auto ell = estimate(Format::Ell, small, 8, hw);
  EXPECT_NEAR(ell.seconds, 3e-6 + ell.bytes / (1000e9 * 2 * 0.5), 1e-12);
  // Past L2 the DRAM efficiency holds.
  hw.l2_bytes = 1000;
  const auto big = estimate(Format::CsrVector, small, 8, hw);
  EXPECT_NEAR(big.seconds, 3e-6 + big.bytes / (1000e9 * 0.5), 1e-12);
}

// csr-adaptive walks its rows stably sorted by ascending length: where
// lengths vary, a warp's 32 rows are no longer neighbours and each pays
// whole 32-byte sectors of row_ptr, y, columns and values (hand count
// below); x is counted in that order too.
TEST(Model, CsrAdaptivePaysWholeSectorsInItsSortedOrder) {
  // 64 rows of 4: two warps of neighbours, 61 sectors each (row_ptr 5, y 8,
  // columns 16, values 32).
  HostCoo<double> u(64, 64);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 4; ++j) u.add(i, (i + j) % 64, 1.0);
  EXPECT_DOUBLE_EQ(pattern_stats(to_csr(u), 8, 64).sorted_row_sector_bytes, 2 * 61 * 32.0);
  // Even rows of 1, odd rows of 3: the sorted order puts the even rows in
  // the first warp (row_ptr 8, y 16, columns 16, values 32 sectors) and the
  // odd ones in the second (9, 16, 16, 32).
  HostCoo<double> a(64, 64);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < (i % 2 ? 3 : 1); ++j) a.add(i, (i + j) % 64, 1.0);
  const auto s = pattern_stats(to_csr(a), 8, 64);
  EXPECT_DOUBLE_EQ(s.sorted_row_sector_bytes, (72 + 73) * 32.0);
  ModelHardware hw;
  const auto e = estimate(Format::CsrAdaptive, s, 8, hw);
  EXPECT_DOUBLE_EQ(e.bytes, 4.0 * 64 + s.sorted_row_sector_bytes + 8.0 * 128 * s.alpha_ascending);
}

// The same figure counted sector by sector (every sector of every run in
// a set per warp) on rows of very different lengths, hubs included, whose
// runs overlap within a warp: the union of runs the model takes is exact.
TEST(Model, SortedRowSectorsCountEachSectorOnce) {
  std::mt19937 rng(7);
  HostCoo<double> u(300, 5000);
  for (int i = 0; i < 300; ++i) {
    const int len = i % 37 == 0 ? 3000 + i : static_cast<int>(rng() % 9);
    for (int j = 0; j < len; ++j) u.add(i, static_cast<int>((i * 13 + j) % 5000), 1.0);
  }
  const HostCsr<double> a = to_csr(u);
  std::vector<std::int64_t> lengths(300);
  for (int i = 0; i < 300; ++i) lengths[i] = a.row_ptr[i + 1] - a.row_ptr[i];
  const std::vector<ordinal_t> order = rows_by_length(lengths, false);
  double sectors = 0;
  for (std::size_t w = 0; w < order.size(); w += 32) {
    std::set<std::int64_t> s[4];
    for (std::size_t p = w; p < std::min(order.size(), w + 32); ++p) {
      const std::int64_t i = order[p], b = a.row_ptr[i], e = a.row_ptr[i + 1];
      for (std::int64_t q = i * 4; q < (i + 2) * 4; ++q) s[0].insert(q / 32);
      s[1].insert(i * 8 / 32);
      for (std::int64_t k = b; k < e; ++k) {
        s[2].insert(k * 4 / 32);
        s[3].insert(k * 8 / 32);
      }
    }
    for (const auto& set : s) sectors += double(set.size());
  }
  EXPECT_DOUBLE_EQ(pattern_stats(a, 8, 64).sorted_row_sector_bytes, sectors * 32.0);
}

// distinct_count sorts short lists and uses a bitmap for long ones over a
// dense range: both give the set's size.
TEST(Model, DistinctCountIsTheSetSize) {
  std::mt19937_64 rng(3);
  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(5000), std::size_t(200000)}) {
    for (const std::int64_t range : {std::int64_t(10), std::int64_t(100000), std::int64_t(1) << 40}) {
      std::vector<std::int64_t> v(n);
      for (auto& x : v) x = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range)) + 17;
      const std::set<std::int64_t> set(v.begin(), v.end());
      EXPECT_EQ(distinct_count(v), static_cast<std::int64_t>(set.size())) << n << " values below " << range;
    }
  }
}

// DistinctCounter, one counter over many lists (its table kept between
// them, growing and not): each count is the list's set size, lists that
// never decrease (counted by their steps) and dense long ones (the bitmap)
// included, negative values too.
TEST(Model, DistinctCounterCountsEachListAlone) {
  std::mt19937_64 rng(5);
  DistinctCounter counter;
  for (int round = 0; round < 3; ++round) {
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(32), std::size_t(33),
                                std::size_t(300), std::size_t(5000), std::size_t(100000), std::size_t(7)}) {
      for (const std::int64_t range : {std::int64_t(3), std::int64_t(100000), std::int64_t(1) << 40}) {
        std::vector<std::int64_t> v(n);
        for (auto& x : v) x = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range)) - range / 2;
        const std::set<std::int64_t> set(v.begin(), v.end());
        EXPECT_EQ(counter.count(v), static_cast<std::int64_t>(set.size())) << n << " values in a range of " << range;
        std::sort(v.begin(), v.end());
        EXPECT_EQ(counter.count(v.data(), v.size()), static_cast<std::int64_t>(set.size())) << n << " sorted";
        std::reverse(v.begin(), v.end());
        EXPECT_EQ(counter.count(v), static_cast<std::int64_t>(set.size())) << n << " descending";
      }
    }
  }
}

// csr-adaptive gives a row lanes enough that each walks at most 8 entries,
// up to 256 lanes: the chain is the longest row up to 8, or a 256th of it,
// at ELL's figure (a lane's entries four a step, x after the column).
TEST(Model, CsrAdaptiveChainIsEightEntriesALane) {
  ModelHardware hw;
  hw.chain_ns["ell"] = hw.chain_dram_ns["ell"] = 100;
  HostCoo<double> a(8, 4000);
  for (int i = 0; i < 8; ++i) a.add(i, i, 1.0);
  for (int j = 1; j < 5; ++j) a.add(0, j, 1.0);  // longest row: 5
  EXPECT_NEAR(estimate(Format::CsrAdaptive, pattern_stats(to_csr(a), 8, 64), 8, hw).chain_seconds, 5 * 100e-9, 1e-15);
  for (int j = 5; j < 40; ++j) a.add(0, j, 1.0);  // 40: five lanes of 8
  EXPECT_NEAR(estimate(Format::CsrAdaptive, pattern_stats(to_csr(a), 8, 64), 8, hw).chain_seconds, 8 * 100e-9, 1e-15);
  for (int j = 40; j < 3840; ++j) a.add(0, j, 1.0);  // 3840 on 256 lanes: 15 each
  EXPECT_NEAR(estimate(Format::CsrAdaptive, pattern_stats(to_csr(a), 8, 64), 8, hw).chain_seconds, 15 * 100e-9, 1e-15);
}

// HYB runs ELL's kernel and, past K, a COO SpMV: each part at the figures
// of its kernel's format (HYB has none of its own).
TEST(Model, HybPartsTakeEllAndCooFigures) {
  ModelHardware hw;
  hw.bandwidth_gbs = 1;  // traffic sets the time
  hw.serial_ns = 0;
  hw.fixed_us["ell"] = 2;
  hw.fixed_us["coo"] = 5;
  hw.efficiency_l2["ell"] = 0.5;
  hw.efficiency_l2["coo"] = 0.25;
  hw.efficiency_l2["hyb"] = 100;  // ignored
  const auto s = pattern_stats(one_row_of_40(), 8, 64);
  const auto all_ell = estimate(Format::Hyb, s, 8, hw, 3.0, 40);
  EXPECT_NEAR(all_ell.seconds, 2e-6 + all_ell.bytes / 0.5e9, 1e-12);
  // K = 2: row 0's 38 others in COO, with x's share and the row's y twice.
  const auto split = estimate(Format::Hyb, s, 8, hw, 3.0, 2);
  const double coo_bytes = 16.0 * 38 + 8.0 * 438 * s.alpha * 38 / 438 + 2 * 8.0;
  EXPECT_NEAR(split.seconds, 7e-6 + (split.bytes - coo_bytes) / 0.5e9 + coo_bytes / 0.25e9, 1e-12);
  // PKT: a thread owns whole rows, so row 0 is one 40-entry chain.
  EXPECT_DOUBLE_EQ(estimate(Format::Pkt, s, 8, hw).chain_elements, 40);
}

// EHYB sends rows past ehyb_long_row (256) to an adaptive-TPR pass: one
// more launch, and no lane walks more than 256 entries plus a block's share
// of the longest row (it used to charge the whole 57,075-entry row of
// powerlaw-2M to one lane: 6.8x the measured time).
TEST(Model, EhybLongRowsLeaveTheSlices) {
  ModelHardware hw;
  hw.serial_ns = 10;
  HostCoo<double> c(300, 6000);
  for (ordinal_t i = 0; i < 300; ++i) c.add(i, i, 1.0);
  for (ordinal_t j = 0; j < 5119; ++j) c.add(7, 300 + j, 1.0);  // row 7: 5,120 entries
  const auto a = to_csr(c);
  const auto s = pattern_stats(a, 8, 64);
  ASSERT_EQ(s.rows.max, 5120);
  const auto e = estimate(Format::Ehyb, s, 8, hw);
  EXPECT_EQ(e.launches, 2);
  // A lane walks at most 256 entries; extra-row entries (outside the
  // row's 64-row window: row 7's 5,119) count twice, their x loads
  // waiting on their columns.
  // The kernel loads eight slots a step with one part per SM (the
  // default), four with more; the chain figure is per element at four.
  EXPECT_EQ(ehyb_slots_per_step(1), 8);
  EXPECT_EQ(ehyb_slots_per_step(2), 4);
  const double step = 4.0 / ehyb_slots_per_step(ConvertOptions{}.ehyb_min_parts_per_sm);
  const double in = 300.0 / 5419.0;
  EXPECT_NEAR(s.ehyb_in_part, in, 1e-12);
  EXPECT_NEAR(e.chain_seconds, (256 * (2 - in) + 5120 / 256) * step * 10e-9, 1e-15);
  // Without a long row: one launch, the longest row is the chain.
  const auto s2 = pattern_stats(generate<double>("lap1d:300"), 8, 64);
  const double in2 = s2.ehyb_in_part;
  EXPECT_GT(in2, 0.9);
  EXPECT_LT(in2, 1.0);
  const auto e2 = estimate(Format::Ehyb, s2, 8, hw);
  EXPECT_EQ(e2.launches, 1);
  EXPECT_NEAR(e2.chain_seconds, 3 * (2 - in2) * step * 10e-9, 1e-15);
  // The lanes run ELL's slot loop: ELL's calibrated chain figures.
  hw.chain_ns["ell"] = hw.chain_dram_ns["ell"] = 40;
  EXPECT_NEAR(estimate(Format::Ehyb, s2, 8, hw).chain_seconds, 3 * (2 - in2) * step * 40e-9, 1e-15);
}

// EHYB partitions the rows itself, so the share of entries the model
// gives its parts is that of balls grown from seeds (part_balls.hpp),
// whatever the caller's order; a non-square pattern keeps the caller's
// windows, and a pattern without locality keeps few entries either way.
TEST(Model, EhybInPartComesFromBallsNotTheCallersOrder) {
  const std::int64_t window = 100;
  auto windows_share = [&](const HostCsr<double>& a) {
    std::int64_t in = 0;
    for (ordinal_t i = 0; i < a.nrows; ++i)
      for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) in += i / window == a.col_idx[k] / window;
    return double(in) / double(a.nnz());
  };
  const auto grid = generate<double>("lap2d:40");  // 1,600 rows: 16 parts, radius of a ball under 24 waves
  const auto mixed = kspmv_test::scrambled_symmetric(grid, 3);
  const double natural = pattern_stats(grid, 8, window).ehyb_in_part;
  const double scrambled = pattern_stats(mixed, 8, window).ehyb_in_part;
  EXPECT_LT(windows_share(mixed), 0.3);  // the diagonal, a fifth of the entries, and 1/16 of the rest
  EXPECT_GT(natural, 0.8);
  EXPECT_GT(scrambled, 0.8);
  EXPECT_NEAR(scrambled, natural, 0.08);
  // Random columns: no balls keep entries, in whatever order.
  const auto random = generate<double>("uniform:1600:4:8:seed=5");
  EXPECT_LT(pattern_stats(random, 8, window).ehyb_in_part, 0.3);
  // A dense block: every row joins the first seed in one wave, a ball of
  // far more than kBallMostParts parts, so its rows keep the caller's
  // windows (8 of 200 columns a row) as a partition into parts would.
  EXPECT_LT(pattern_stats(generate<double>("dense:200"), 8, 8).ehyb_in_part, 0.1);
  // Not square: no balls, the caller's windows exactly.
  const auto wide = generate<double>("uniform:1600:4:8:cols=3000:seed=6");
  EXPECT_DOUBLE_EQ(pattern_stats(wide, 8, window).ehyb_in_part, windows_share(wide));
  // A narrow band in its own order: the balls and the unreached rows'
  // windows keep nearly every entry.
  EXPECT_GT(pattern_stats(generate<double>("banded:900:3"), 8, window).ehyb_in_part, 0.95);
}

TEST(Calibration, QuickRunFitsEveryFormat) {
  CalibrationOptions co;
  co.scale = 2e-4;  // tiny matrices: this checks the procedure, not a device
  co.budget_seconds = 60;
  const auto hw = calibrate_model<double>(co);
  EXPECT_TRUE(hw.calibrated);
  EXPECT_GT(hw.bandwidth_gbs, 0);
  EXPECT_GT(hw.launch_us, 0);
  EXPECT_GE(hw.l2_gain, 1.0);
  // Every format but 'auto' has a measured fixed cost; where the device
  // has a launch queue (CUDA) also the host's cost to queue an SpMV,
  // elsewhere none (the fixed cost holds it).
  const bool queue = DeviceTimer<Kokkos::DefaultExecutionSpace>::can_hold;
  for (const auto& d : known_formats())
    if (d.format != Format::Auto) {
      ASSERT_TRUE(hw.fixed_us.count(d.name)) << d.name;
      EXPECT_GT(hw.fixed_us.at(d.name), 0) << d.name;
      EXPECT_EQ(hw.host_us.count(d.name), queue ? 1u : 0u) << d.name;
      if (queue) EXPECT_GT(hw.host_us.at(d.name), 0) << d.name;
    }
  // Fitted efficiencies are positive and named after real formats (a run
  // bounded by one lane's serial chain keeps the default; how many are
  // bounded depends on timing, e.g. under sanitizers); every estimate
  // stays finite.
  EXPECT_FALSE(hw.efficiency.empty() && hw.efficiency_irregular.empty());
  // The chain matrices give thread-per-row formats chains of 128 and 1024
  // elements: csr-scalar, at least, gets its own figure in both regimes.
  EXPECT_TRUE(hw.chain_ns.count("csr-scalar"));
  EXPECT_TRUE(hw.chain_dram_ns.count("csr-scalar"));
  // csr-scalar's line figure where the device has warps (a block of rows
  // an SM at least: lines to time); none on a host space, which walks the
  // rows one after another.
  EXPECT_EQ(hw.line_ns.count("csr-scalar"), hw.warp > 1 ? 1u : 0u);
  EXPECT_EQ(hw.line_ns.size(), hw.line_ns.count("csr-scalar"));
  // Near-L2 figures only beside a DRAM one, and only with the two
  // stencils' sizes, the near one the smaller.
  for (const auto& [name, e] : hw.efficiency_near) EXPECT_TRUE(hw.efficiency.count(name)) << name;
  if (!hw.efficiency_near.empty()) {
    EXPECT_GT(hw.near_bytes, 0);
    EXPECT_GT(hw.far_bytes, hw.near_bytes);
  }
  for (const auto* m : {&hw.efficiency, &hw.efficiency_irregular, &hw.efficiency_l2, &hw.efficiency_l2_irregular,
                        &hw.efficiency_near, &hw.chain_ns, &hw.chain_dram_ns, &hw.line_ns})
    for (const auto& [name, e] : *m) {
      EXPECT_NO_THROW(parse_format(name));
      EXPECT_GT(e, 0) << name;
    }
  const auto s = pattern_stats(generate<double>("lap2d:50"), 8, 64);
  for (const auto& e : estimate_all(s, 8, hw)) {
    EXPECT_TRUE(std::isfinite(e.seconds)) << format_name(e.format);
    EXPECT_GT(e.seconds, 0) << format_name(e.format);
  }
}
