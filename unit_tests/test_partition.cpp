// Row partitioning: METIS under a time budget (in a child process that is
// killed at the deadline), Auto's fallback to BFS parts grown meanwhile, an
// explicit Metis past its budget refused with nothing built, the budget's
// argument checks, BFS parts for PKT's bounded packets, and PKT's packing
// from every partitioner against a plain reading of its rule.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "kspmv/core/device_partition.hpp"
#include "kspmv/core/partition.hpp"
#include "test_support.hpp"

using namespace kspmv;

namespace {

// new_to_old is a permutation and part_start splits it into `parts` parts
// of at most max_rows rows.
void expect_valid(const RowPartition& p, ordinal_t n, std::size_t parts, ordinal_t max_rows, const std::string& what) {
  std::vector<ordinal_t> sorted = p.new_to_old;
  std::sort(sorted.begin(), sorted.end());
  std::vector<ordinal_t> iota(static_cast<std::size_t>(n));
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota) << what << ": not a permutation";
  ASSERT_EQ(p.part_start.size(), parts + 1) << what;
  EXPECT_EQ(p.part_start.front(), 0) << what;
  EXPECT_EQ(p.part_start.back(), n) << what;
  for (std::size_t q = 0; q + 1 < p.part_start.size(); ++q) {
    EXPECT_LE(p.part_start[q], p.part_start[q + 1]) << what;
    EXPECT_LE(p.part_start[q + 1] - p.part_start[q], max_rows) << what << ", part " << q;
  }
}

}  // namespace

TEST(Partition, BudgetedMetisGivesTheSamePartsAsMetisInProcess) {
  if (!have_metis()) GTEST_SKIP() << "built without METIS";
  const auto a = generate<double>("lap3d:16");
  const auto here = partition_rows_into(a, 8, Partitioner::Metis, 0.0);  // no budget: in this process
  const auto child = partition_rows_into(a, 8, Partitioner::Metis, 60.0);
  EXPECT_EQ(here.method, "metis");
  EXPECT_EQ(child.method, "metis");
  EXPECT_EQ(here.new_to_old, child.new_to_old);
  EXPECT_EQ(here.part_start, child.part_start);
  // Auto grows BFS parts beside METIS and says what each kept in part.
  const auto autop = partition_rows_into(a, 8, Partitioner::Auto, 60.0);
  EXPECT_EQ(autop.method, "metis");
  EXPECT_EQ(autop.new_to_old, here.new_to_old);
  EXPECT_NE(autop.note.find("bfs"), std::string::npos) << autop.note;
  // PKT's bounded parts take the same path.
  const auto pkt_here = partition_rows(a, 600, Partitioner::Metis, 0.0);
  const auto pkt_child = partition_rows(a, 600, Partitioner::Metis, 60.0);
  EXPECT_EQ(pkt_here.new_to_old, pkt_child.new_to_old);
  EXPECT_EQ(pkt_here.part_start, pkt_child.part_start);
  expect_valid(pkt_child, a.nrows, pkt_child.part_start.size() - 1, 600, "pkt parts");
}

TEST(Partition, MetisPastItsBudget) {
  if (!have_metis()) GTEST_SKIP() << "built without METIS";
  // 64,000 rows into 128 parts: METIS takes tens of milliseconds at least,
  // far past a budget of one.
  const auto a = generate<double>("lap3d:40");
  std::vector<std::string> stages;
  const ProgressFn progress = [&](const char* stage, double) { stages.emplace_back(stage); };
  const auto p = partition_rows_into(a, 128, Partitioner::Auto, 1e-3, progress);
  EXPECT_EQ(p.method, "bfs");
  EXPECT_NE(p.note.find("budget"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("in part"), std::string::npos) << p.note;
  expect_valid(p, a.nrows, 128, a.nrows / 128 + 1, "auto past its budget");
  EXPECT_TRUE(std::any_of(stages.begin(), stages.end(),
                          [](const std::string& s) { return s.find("METIS") != std::string::npos; }))
      << "the wait for METIS is reported";
  // The BFS parts are those Partitioner::Bfs grows.
  const auto bfs = partition_rows_into(a, 128, Partitioner::Bfs, 0.0);
  EXPECT_EQ(p.new_to_old, bfs.new_to_old);
  EXPECT_EQ(p.part_start, bfs.part_start);
  // Asked for explicitly, METIS past its budget is refused.
  try {
    partition_rows_into(a, 128, Partitioner::Metis, 1e-3);
    ADD_FAILURE() << "no LimitError";
  } catch (const LimitError& e) {
    EXPECT_NE(std::string(e.what()).find("Partitioner::Bfs"), std::string::npos) << e.what();
  }
  // A later call with room is unaffected (the killed child is reaped).
  EXPECT_EQ(partition_rows_into(a, 128, Partitioner::Metis, 600.0).method, "metis");
}

TEST(Partition, BudgetIsCheckedBeforeAnyWork) {
  const auto a = generate<double>("lap2d:20");
  for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    for (Partitioner how : {Partitioner::Auto, Partitioner::Bfs, Partitioner::Contiguous}) {
      EXPECT_THROW(partition_rows_into(a, 4, how, bad), InvalidArgumentError) << bad;
      EXPECT_THROW(partition_rows(a, 100, how, bad), InvalidArgumentError) << bad;
    }
    ConvertOptions o;
    o.partition_budget_seconds = bad;
    EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, o), InvalidArgumentError) << bad;
    EXPECT_THROW(Matrix<double>::convert(a, Format::Pkt, o), InvalidArgumentError) << bad;
  }
}

TEST(Partition, BfsPartsHoldPktsBound) {
  const auto a = generate<double>("lap3d:20");
  const auto p = partition_rows(a, 500, Partitioner::Bfs, 0.0);
  EXPECT_EQ(p.method, "bfs");
  expect_valid(p, a.nrows, p.part_start.size() - 1, 500, "bfs packets");
  ConvertOptions o;
  o.partitioner = Partitioner::Bfs;
  o.pkt_rows = 500;
  const auto m = Matrix<double>::convert(a, Format::Pkt, o);
  std::map<std::string, std::string> props;
  for (const auto& [k, v] : m.properties()) props[k] = v;
  EXPECT_EQ(props["partitioner"], "bfs");
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 2.0, -1.0));
}

// The host build's Auto (kspmv::Matrix builds EHYB on the device with
// cells instead).
TEST(Partition, EhybPastTheBudgetUsesBfsPartsAndSaysSo) {
  if (!have_metis()) GTEST_SKIP() << "built without METIS";
  const auto a = generate<double>("lap3d:40");
  ConvertOptions o;
  o.ehyb_shared_bytes = 4096;
  o.partition_budget_seconds = 1e-3;
  const auto host_built = to_ehyb<double, Kokkos::DefaultExecutionSpace>(a, o);
  EXPECT_EQ(host_built.report.partitioner, "bfs");
  EXPECT_NE(host_built.report.partition_note.find("budget"), std::string::npos) << host_built.report.partition_note;
  o.partitioner = Partitioner::Metis;
  EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, o), LimitError);
}

namespace {
// A 3D stencil in a random row order: no locality left in the numbering.
HostCsr<double> scrambled_lap3d(int n, std::uint64_t seed) {
  const auto lap = generate<double>("lap3d:" + std::to_string(n));
  std::vector<ordinal_t> perm(static_cast<std::size_t>(lap.nrows));
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(seed);
  for (std::size_t i = perm.size() - 1; i > 0; --i)
    std::swap(perm[i], perm[static_cast<std::size_t>(rng.uniform() * double(i + 1)) % (i + 1)]);
  HostCoo<double> c(lap.nrows, lap.ncols);
  for (ordinal_t i = 0; i < lap.nrows; ++i)
    for (auto k = lap.row_ptr[i]; k < lap.row_ptr[i + 1]; ++k) c.add(perm[i], perm[lap.col_idx[k]], lap.values[k]);
  return to_csr(c);
}
std::vector<int> labels_of(const DevicePartition<Kokkos::DefaultExecutionSpace>& p) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.part_of);
  return std::vector<int>(h.data(), h.data() + h.extent(0));
}
}  // namespace

// Cells on the matrix's execution space: every row in a part, parts within
// 3% of their share, most entries inside (a scrambled stencil: contiguous
// blocks keep almost none, RCM's a half), the same parts on every run.
TEST(Partition, CellsAreBalancedLocalAndRepeatable) {
  using E = Kokkos::DefaultExecutionSpace;
  const auto a = scrambled_lap3d(24, 11);
  const auto d = upload_csr<double, E>(a);
  const int nparts = 24;
  const auto p = cell_partition(E(), d.row_ptr, d.col_idx, a.nrows, nparts, a.nrows);
  const auto label = labels_of(p);
  std::vector<std::int64_t> rows(nparts, 0);
  for (int l : label) {
    ASSERT_GE(l, 0);
    ASSERT_LT(l, nparts);
    ++rows[l];
  }
  EXPECT_EQ(rows, p.part_rows);
  const double share = double(a.nrows) / nparts;
  for (std::int64_t r : rows) EXPECT_LE(r, static_cast<std::int64_t>(share * 1.03) + 64) << r;
  EXPECT_GT(p.in_part, 0.75);
  const auto rcm = partition_rows_into(a, nparts, Partitioner::Rcm, 0.0);
  const auto host = partition_rows_into(a, nparts, Partitioner::Cells, 0.0);
  EXPECT_EQ(host.method, "cells");
  EXPECT_NE(host.note.find("in-part share"), std::string::npos) << host.note;
  // The host's partition of the same pattern is the same one.
  std::vector<int> host_label(label.size());
  for (std::size_t q = 0; q + 1 < host.part_start.size(); ++q)
    for (ordinal_t r = host.part_start[q]; r < host.part_start[q + 1]; ++r) host_label[host.new_to_old[r]] = static_cast<int>(q);
  EXPECT_EQ(host_label, label);
  std::vector<int> rcm_label(label.size());
  for (std::size_t q = 0; q + 1 < rcm.part_start.size(); ++q)
    for (ordinal_t r = rcm.part_start[q]; r < rcm.part_start[q + 1]; ++r) rcm_label[rcm.new_to_old[r]] = static_cast<int>(q);
  std::int64_t rcm_in = 0;
  for (ordinal_t i = 0; i < a.nrows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) rcm_in += rcm_label[a.col_idx[k]] == rcm_label[i];
  EXPECT_GT(p.in_part, double(rcm_in) / double(a.nnz()) + 0.2);
  EXPECT_EQ(labels_of(cell_partition(E(), d.row_ptr, d.col_idx, a.nrows, nparts, a.nrows)), label);
}

// Rows no wave reaches (a diagonal matrix: no edges at all) and a hub that
// reaches every row in one wave still give valid, balanced parts; a
// max_rows below the share is kept where cells allow.
TEST(Partition, CellsWithoutEdgesOrAroundAHub) {
  using E = Kokkos::DefaultExecutionSpace;
  HostCoo<double> hub(5000, 5000);
  for (ordinal_t i = 0; i < 5000; ++i) {
    hub.add(i, i, 4.0);
    if (i > 0) {
      hub.add(0, i, -1.0);
      hub.add(i, 0, -1.0);
    }
  }
  for (const auto& a : {generate<double>("dense:1:1"), to_csr(hub), generate<double>("blockdiag:5000:1")}) {
    const auto d = upload_csr<double, E>(a);
    const int nparts = std::min<int>(16, a.nrows);
    const auto p = cell_partition(E(), d.row_ptr, d.col_idx, a.nrows, nparts, std::max<std::int64_t>(1, a.nrows / 8));
    std::int64_t total = 0;
    for (std::int64_t r : p.part_rows) {
      total += r;
      EXPECT_LE(r, std::max<std::int64_t>(1, a.nrows / 8)) << a.nrows;
    }
    EXPECT_EQ(total, a.nrows);
    for (int l : labels_of(p)) EXPECT_TRUE(l >= 0 && l < nparts);
  }
}

// Random columns: most entries join two cells, so the cells are joined in
// order (no cell graph) and the notes say so; the parts stay equal.
TEST(Partition, CellsOnAPatternWithoutLocality) {
  using E = Kokkos::DefaultExecutionSpace;
  const auto a = generate<double>("uniform:20000:5:15:seed=4");
  const auto d = upload_csr<double, E>(a);
  const auto p = cell_partition(E(), d.row_ptr, d.col_idx, a.nrows, 16, a.nrows);
  EXPECT_TRUE(p.no_locality);
  std::int64_t total = 0;
  for (std::int64_t r : p.part_rows) {
    total += r;
    EXPECT_LE(r, a.nrows / 16 + 2 * 64) << r;
  }
  EXPECT_EQ(total, a.nrows);
  const auto host = partition_rows_into(a, 16, Partitioner::Cells, 0.0);
  EXPECT_NE(host.note.find("no locality"), std::string::npos) << host.note;
  EXPECT_NE(p.note().find("no locality (cells joined in order)"), std::string::npos) << p.note();
  const auto mesh = scrambled_lap3d(16, 5);
  const auto dm = upload_csr<double, E>(mesh);
  const auto pm = cell_partition(E(), dm.row_ptr, dm.col_idx, mesh.nrows, 16, mesh.nrows);
  EXPECT_FALSE(pm.no_locality);
  // The note a conversion report carries: the cells, levels and share.
  const std::string expected = "on the device: " + std::to_string(pm.cells) + " cells, " +
                               std::to_string(pm.levels) + " levels; in-part share ";
  EXPECT_EQ(pm.note().rfind(expected, 0), 0u) << pm.note();
  EXPECT_EQ(pm.note().back(), '%') << pm.note();
}

TEST(Partition, CellsAndGroupCellsRejectBadArguments) {
  using E = Kokkos::DefaultExecutionSpace;
  const auto a = generate<double>("lap2d:10");
  const auto d = upload_csr<double, E>(a);
  EXPECT_THROW(cell_partition(E(), d.row_ptr, d.col_idx, a.nrows, 0, 10), InvalidArgumentError);
  EXPECT_THROW(cell_partition(E(), d.row_ptr, d.col_idx, a.nrows, 4, 0), InvalidArgumentError);
  EXPECT_THROW(group_cells({0, 1}, {0, 0}, {1}, {3}, 2, 10), InvalidArgumentError);  // adj and weight differ
  EXPECT_THROW(group_cells({0, 0}, {}, {}, {3}, 0, 10), InvalidArgumentError);
  const auto one = group_cells({0, 0}, {}, {}, {3}, 2, 10);
  EXPECT_EQ(one.size(), 1u);
}

namespace {
// A PKT build's packing against a plain reading of its rule, on the host,
// from the build's own partition (new_to_old, packet_start) and threads:
// each packet's rows, most in-packet entries first (ties: the row
// order), each to the thread with the fewest entries so far (ties: the
// lowest thread), a thread's entries in its rows' order at slots base +
// i x T + t, the packet padded to its widest thread; every entry outside
// its row's packet in the remainder, by internal row, in the CSR's order.
template <class Scalar, class Space>
void expect_plain_packing(const HostCsr<Scalar>& a, const PktDevice<Scalar, Space>& p, OutputOrder order,
                          const std::string& what) {
  using kspmv_test::host_copy;
  using P = PktDevice<Scalar, Space>;
  const auto new_to_old = host_copy<int>(p.new_to_old);
  const auto start = host_copy<int>(p.packet_start);
  const ordinal_t n = a.nrows;
  const int T = p.threads;
  ASSERT_EQ(new_to_old.size(), static_cast<std::size_t>(n)) << what;
  ASSERT_EQ(start.size(), static_cast<std::size_t>(p.packets) + 1) << what;
  ASSERT_EQ(start.front(), 0) << what;
  ASSERT_EQ(start.back(), n) << what;
  std::vector<int> old_to_new(static_cast<std::size_t>(n), -1);
  for (ordinal_t r = 0; r < n; ++r) old_to_new[new_to_old[r]] = r;
  ASSERT_EQ(std::count(old_to_new.begin(), old_to_new.end(), -1), 0) << what << ": new_to_old is not a permutation";
  for (int q = 0; q < p.packets; ++q) {
    EXPECT_LT(start[q], start[q + 1]) << what << ": empty packet " << q;
    EXPECT_LE(start[q + 1] - start[q], p.packet_rows) << what << ", packet " << q;
  }
  std::vector<std::uint32_t> index;
  std::vector<Scalar> value;
  std::vector<std::int64_t> offset(1, 0);
  for (int q = 0; q < p.packets; ++q) {
    const int s = start[q], e = start[q + 1];
    auto inside = [&](ordinal_t col) { return old_to_new[col] >= s && old_to_new[col] < e; };
    std::vector<int> rows, count(static_cast<std::size_t>(e - s), 0);
    for (int r = s; r < e; ++r) {
      rows.push_back(r);
      for (auto k = a.row_ptr[new_to_old[r]]; k < a.row_ptr[new_to_old[r] + 1]; ++k) count[r - s] += inside(a.col_idx[k]);
    }
    std::stable_sort(rows.begin(), rows.end(), [&](int u, int v) { return count[u - s] > count[v - s]; });
    std::vector<std::int64_t> load(static_cast<std::size_t>(T), 0);
    std::vector<int> thread(static_cast<std::size_t>(e - s)), slot(static_cast<std::size_t>(e - s));
    for (int r : rows) {
      const int t = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      thread[r - s] = t;
      slot[r - s] = static_cast<int>(load[t]);
      load[t] += count[r - s];
    }
    const std::int64_t base = offset.back(), width = *std::max_element(load.begin(), load.end());
    index.resize(static_cast<std::size_t>(base + width * T), P::padding);
    value.resize(static_cast<std::size_t>(base + width * T), Scalar(0));
    for (int r = s; r < e; ++r) {
      std::int64_t i = slot[r - s];
      for (auto k = a.row_ptr[new_to_old[r]]; k < a.row_ptr[new_to_old[r] + 1]; ++k) {
        if (!inside(a.col_idx[k])) continue;
        const auto pos = static_cast<std::size_t>(base + i++ * T + thread[r - s]);
        index[pos] = (static_cast<std::uint32_t>(r - s) << 16) | static_cast<std::uint32_t>(old_to_new[a.col_idx[k]] - s);
        value[pos] = a.values[k];
      }
    }
    offset.push_back(base + width * T);
  }
  std::vector<int> rrow, rcol;
  std::vector<Scalar> rval;
  for (int q = 0; q < p.packets; ++q)
    for (int r = start[q]; r < start[q + 1]; ++r)
      for (auto k = a.row_ptr[new_to_old[r]]; k < a.row_ptr[new_to_old[r] + 1]; ++k) {
        const int col = old_to_new[a.col_idx[k]];
        if (col >= start[q] && col < start[q + 1]) continue;
        rrow.push_back(r);
        rcol.push_back(order == OutputOrder::Caller ? a.col_idx[k] : col);
        rval.push_back(a.values[k]);
      }
  EXPECT_EQ(host_copy<std::int64_t>(p.packet_offset), offset) << what;
  EXPECT_EQ(host_copy<std::uint32_t>(p.index), index) << what;
  EXPECT_EQ(host_copy<Scalar>(p.value), value) << what;
  EXPECT_EQ(p.packet_nnz, a.nnz() - static_cast<std::int64_t>(rval.size())) << what;
  EXPECT_EQ(p.remainder.nnz, static_cast<std::int64_t>(rval.size())) << what;
  EXPECT_EQ(host_copy<int>(p.remainder.row), rrow) << what;
  EXPECT_EQ(host_copy<int>(p.remainder.col), rcol) << what;
  EXPECT_EQ(host_copy<Scalar>(p.remainder.val), rval) << what;
}

template <class Scalar>
void check_pkt_packing(const HostCsr<Scalar>& a, const std::string& spec) {
  using Space = Kokkos::DefaultExecutionSpace;
  const auto d_csr = upload_csr<Scalar, Space>(a);
  std::vector<Partitioner> hows = {Partitioner::Auto, Partitioner::Cells, Partitioner::Contiguous, Partitioner::Bfs,
                                   Partitioner::Rcm};
  if (have_metis()) hows.push_back(Partitioner::Metis);
  for (Partitioner how : hows)
    for (int rows : {0, 300, 64})
      for (OutputOrder order : {OutputOrder::Caller, OutputOrder::Internal}) {
        ConvertOptions o;
        o.partitioner = how;
        o.pkt_rows = rows;
        o.output_order = order;
        const std::string what = spec + " partitioner " + std::to_string(int(how)) + " pkt_rows " +
                                 std::to_string(rows) + " order " + std::to_string(int(order));
        const auto from_host = to_pkt<Scalar, Space>(a, o);
        expect_plain_packing(a, from_host, order, what + " (host CSR)");
        const auto from_device = to_pkt<Scalar, Space>(d_csr, o);
        expect_plain_packing(a, from_device, order, what + " (device CSR)");
        // The device partitioners on both entries give the same cells.
        if (how == Partitioner::Cells || how == Partitioner::Contiguous) {
          EXPECT_EQ(from_host.partitioner, from_device.partitioner) << what;
          EXPECT_EQ(kspmv_test::host_copy<int>(from_host.new_to_old), kspmv_test::host_copy<int>(from_device.new_to_old))
              << what;
        }
      }
}
}  // namespace

// Every PKT build, from a host or a device CSR and whichever partitioner
// made its parts (cells and contiguous parts on the device; METIS, BFS and
// RCM on the host), packs on the matrix's execution space: its arrays are
// those of the rule read plainly (expect_plain_packing), packet padding,
// remainder and the threads' deal included (a host build's packet has one
// thread; on a GPU many). Rows of one length (a stencil), power-law rows
// (a deal that must balance), a band, empty rows and a row holding a fifth
// of the entries, an empty matrix.
TEST(Pkt, PackingFollowsThePlainRule) {
  for (const char* spec : {"lap3d:12", "powerlaw:3000:8:seed=2", "banded:1500:9"})
    check_pkt_packing(generate<double>(spec), spec);
  check_pkt_packing(generate<float>("powerlaw:2000:6:seed=4"), "powerlaw float");
  {
    // Empty rows and one long row.
    std::vector<std::tuple<int, int, double>> t;
    const int n = 900;
    for (int i = 0; i < n; ++i)
      if (i % 7 != 3) t.emplace_back(i, i, 2.0 + i);
    for (int j = 1; j < n; j += 2) t.emplace_back(450, j, 0.25 + j);
    for (int i = 1; i < n; i += 3)
      if (i != 450) t.emplace_back(i, (i * 37 + 1) % n, -1.0);
    check_pkt_packing(kspmv_test::from_triplets<double>(n, n, t), "empty rows and a long row");
  }
  check_pkt_packing(HostCsr<double>(0, 0), "empty");
}

// The deal's order (by packet, then in-packet entries descending, then
// row): its one sort of a combined key and its two stable sorts (taken
// where that key overflows) against std::stable_sort.
TEST(Pkt, DealOrderOneSortOrTwo) {
  using Space = Kokkos::DefaultExecutionSpace;
  using Mem = Space::memory_space;
  for (int n : {0, 1, 37, 5000}) {
    const int packets = std::max(1, n / 40);
    std::vector<int> packet_of(static_cast<std::size_t>(n)), count(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      packet_of[r] = static_cast<int>((std::int64_t(r) * packets) / std::max(n, 1));
      count[r] = static_cast<int>((r * 2654435761u) % 97u) % 13;  // ties and zeros
    }
    std::vector<int> expect(static_cast<std::size_t>(n));
    std::iota(expect.begin(), expect.end(), 0);
    std::stable_sort(expect.begin(), expect.end(), [&](int u, int v) {
      return packet_of[u] != packet_of[v] ? packet_of[u] < packet_of[v] : count[u] > count[v];
    });
    const auto d_packet = detail::upload<int, Mem>(packet_of, "packet_of");
    const auto d_count = detail::upload<int, Mem>(count, "count");
    const std::int64_t most = n ? *std::max_element(count.begin(), count.end()) : 0;
    for (bool two : {false, true}) {
      detail::ScratchSet<Space> temps{Space()};
      const auto order = detail::pkt_deal_order(Space(), d_packet, d_count, packets, most, temps, two);
      EXPECT_EQ(kspmv_test::host_copy<int>(order), expect) << "n " << n << (two ? ", two sorts" : ", one sort");
    }
  }
}

// The device build's deal of a packet's rows to its threads against a
// plain reading of the rule: each row, most entries first, to the thread
// with the least entries so far, the lowest of equals. Packets of one
// row, of more rows than threads and of fewer, rows of 0 entries, ties.
TEST(Pkt, DealGivesEachRowTheLeastLoadedThread) {
  using Space = Kokkos::DefaultExecutionSpace;
  using Mem = Space::memory_space;
  const std::vector<int> start = {0, 1, 40, 41, 300, 305};
  const int n = start.back(), packets = static_cast<int>(start.size()) - 1;
  std::vector<int> count(n);
  for (int r = 0; r < n; ++r) count[r] = static_cast<int>((r * 7919u) % 23u) % 9;  // ties and zeros
  // Order: by packet, entries descending, row.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (int q = 0; q < packets; ++q)
    std::stable_sort(order.begin() + start[q], order.begin() + start[q + 1],
                     [&](int u, int v) { return count[u] > count[v]; });
  for (int T : {1, 3, 7, 128}) {
    std::vector<int> thread(n), slot(n);
    std::vector<std::int64_t> size(packets);
    for (int q = 0; q < packets; ++q) {
      std::vector<std::int64_t> load(T, 0);
      for (int pos = start[q]; pos < start[q + 1]; ++pos) {
        const int r = order[pos];
        const int t = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
        thread[r] = t;
        slot[r] = static_cast<int>(load[t]);
        load[t] += count[r];
      }
      size[q] = *std::max_element(load.begin(), load.end()) * T;
    }
    const auto d_start = detail::upload<int, Mem>(start, "start");
    const auto d_order = detail::upload<int, Mem>(order, "order");
    const auto d_count = detail::upload<int, Mem>(count, "count");
    Kokkos::View<int*, Mem> d_thread("thread", n), d_slot("slot", n);
    Kokkos::View<std::int64_t*, Mem> d_size("size", packets);
    detail::pkt_deal(Space(), packets, T, d_start, d_order, d_count, d_thread, d_slot, d_size);
    EXPECT_EQ(kspmv_test::host_copy<int>(d_thread), thread) << T;
    EXPECT_EQ(kspmv_test::host_copy<int>(d_slot), slot) << T;
    EXPECT_EQ(kspmv_test::host_copy<std::int64_t>(d_size), size) << T;
  }
}
