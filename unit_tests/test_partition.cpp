// Row partitioning: METIS under a time budget (in a child process that is
// killed at the deadline), Auto's fallback to BFS parts grown meanwhile, an
// explicit Metis past its budget refused with nothing built, the budget's
// argument checks, and BFS parts for PKT's bounded packets.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

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

TEST(Partition, EhybPastTheBudgetUsesBfsPartsAndSaysSo) {
  if (!have_metis()) GTEST_SKIP() << "built without METIS";
  const auto a = generate<double>("lap3d:40");
  ConvertOptions o;
  o.ehyb_shared_bytes = 4096;
  o.partition_budget_seconds = 1e-3;
  const auto m = Matrix<double>::convert(a, Format::Ehyb, o);
  std::map<std::string, std::string> props;
  for (const auto& [k, v] : m.properties()) props[k] = v;
  EXPECT_EQ(props["partitioner"], "bfs");
  EXPECT_NE(props["partition_note"].find("budget"), std::string::npos) << props["partition_note"];
  EXPECT_TRUE(kspmv_test::matrix_matches_reference(a, m, 1.0, 0.5));
  o.partitioner = Partitioner::Metis;
  EXPECT_THROW(Matrix<double>::convert(a, Format::Ehyb, o), LimitError);
}
