#include "silt/delta/optimize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/delta/commit_test_util.h"
#include "silt/delta/partition_utils.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

AddFile File(std::string path, int64_t size, std::string partition = "a") {
  AddFile add;
  add.path = std::move(path);
  add.size = size;
  add.partition_values = {{"p", std::move(partition)}};
  return add;
}

std::vector<std::string> Paths(const OptimizeBin& bin) {
  std::vector<std::string> out;
  for (const AddFile& f : bin.files) out.push_back(f.path);
  return out;
}

TEST(OptimizeBinsTest, PacksSmallFilesSmallestFirstUpToTheTarget) {
  std::vector<AddFile> files = {File("f40", 40), File("f10", 10), File("f30", 30), File("f20", 20),
                                File("big", 1000)};
  std::vector<OptimizeBin> bins = PlanOptimizeBins(files, 60, 2, false);
  // Sorted: 10, 20, 30, 40. 10+20+30 = 60 fits; 40 is alone and left as is.
  ASSERT_EQ(bins.size(), 1u);
  EXPECT_EQ(Paths(bins[0]), (std::vector<std::string>{"f10", "f20", "f30"}));
  EXPECT_EQ(bins[0].bytes, 60);
}

TEST(OptimizeBinsTest, NeverMixesPartitions) {
  std::vector<AddFile> files = {File("a1", 1, "a"), File("b1", 1, "b"), File("a2", 1, "a"),
                                File("b2", 1, "b"), File("c1", 1, "c")};
  std::vector<OptimizeBin> bins = PlanOptimizeBins(files, 100, 2, false);
  ASSERT_EQ(bins.size(), 2u);  // c has one file only
  for (const OptimizeBin& bin : bins) {
    ASSERT_EQ(bin.files.size(), 2u);
    EXPECT_EQ(bin.files[0].partition_values, bin.files[1].partition_values);
  }
}

TEST(OptimizeBinsTest, MinInputFilesAppliesPerPartition) {
  std::vector<AddFile> files = {File("a1", 1, "a"), File("a2", 1, "a"), File("a3", 1, "a"),
                                File("b1", 1, "b"), File("b2", 1, "b")};
  std::vector<OptimizeBin> bins = PlanOptimizeBins(files, 100, 3, false);
  ASSERT_EQ(bins.size(), 1u);
  EXPECT_EQ(bins[0].files.size(), 3u);
}

TEST(OptimizeBinsTest, LoneFileWithDeletionVectorIsRewritten) {
  AddFile dv = File("dv", 10);
  dv.deletion_vector = DeletionVectorDescriptor{"i", "abc", std::nullopt, 1, 1, std::nullopt};
  std::vector<OptimizeBin> bins = PlanOptimizeBins({dv}, 100, 1, false);
  ASSERT_EQ(bins.size(), 1u);
  EXPECT_TRUE(PlanOptimizeBins({File("x", 10)}, 100, 1, false).empty());
}

TEST(OptimizeBinsTest, ZOrderTakesTheWholePartitionWhateverTheSizes) {
  std::vector<AddFile> files = {File("a1", 10), File("a2", 500), File("a3", 20)};
  std::vector<OptimizeBin> bins = PlanOptimizeBins(files, 100, 1, true);
  ASSERT_EQ(bins.size(), 1u);
  EXPECT_EQ(bins[0].files.size(), 3u);
}

class OptimizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
    schema_ = DataType::Struct({Field{"id", DataType::Long()}, Field{"v", DataType::Double()},
                                Field{"p", DataType::String()}});
  }

  // Appends rows [first, first + count) split over partitions "a" and "b"
  // (id % 2) as one commit of two small files.
  void Append(int64_t first, int64_t count) {
    ColumnBuilder id(DataType::Long());
    ColumnBuilder v(DataType::Double());
    ColumnBuilder p(DataType::String());
    for (int64_t i = first; i < first + count; ++i) {
      id.Append<int64_t>(i);
      v.Append<double>(static_cast<double>((i * 7919) % 1000));
      p.AppendString(i % 2 == 0 ? "a" : "b");
    }
    columnar::RecordBatch batch;
    batch.schema = schema_;
    batch.num_rows = count;
    batch.columns = {id.Finish(), v.Finish(), p.Finish()};
    test_util::WriteAndCommit(fs_, table_.get(), batch, {"p"});
  }

  std::vector<int64_t> Ids(SnapshotPtr snapshot) {
    std::vector<int64_t> ids;
    auto scan = TableScan::Make(fs_, "/t", std::move(snapshot), {"id"});
    EXPECT_TRUE(scan.ok());
    while (true) {
      auto batch = (*scan)->Next();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      if (!batch.ok() || *batch == nullptr) break;
      for (int64_t i = 0; i < (*batch)->num_rows; ++i) {
        ids.push_back((*batch)->column(0)->Value<int64_t>(i));
      }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  fs::FileSystemPtr fs_;
  std::unique_ptr<DeltaTable> table_;
  columnar::SchemaPtr schema_;
};

TEST_F(OptimizeTest, CompactsEachPartitionIntoOneFileWithoutChangingData) {
  for (int batch = 0; batch < 10; ++batch) Append(batch * 10, 10);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr before, table_->LatestSnapshot());
  ASSERT_EQ(before->files().size(), 20u);

  ASSERT_OK_AND_ASSIGN(OptimizeResult result, Optimize(table_.get(), OptimizeOptions()));
  EXPECT_EQ(result.version, before->version() + 1);
  EXPECT_EQ(result.num_removed_files, 20);
  EXPECT_EQ(result.num_added_files, 2);
  EXPECT_EQ(result.partitions_optimized, 2);
  EXPECT_EQ(result.rows, 100);

  ASSERT_OK_AND_ASSIGN(SnapshotPtr after, table_->LatestSnapshot());
  EXPECT_EQ(after->files().size(), 2u);
  EXPECT_EQ(Ids(after), Ids(before));
  ASSERT_OK_AND_ASSIGN(CommitActions commit, table_->ReadCommit(result.version));
  ASSERT_EQ(commit.adds.size(), 2u);
  for (const AddFile& add : commit.adds) {
    EXPECT_FALSE(add.data_change);
    ASSERT_TRUE(add.stats.has_value());
    EXPECT_NE(add.stats->find("\"numRecords\":50"), std::string::npos) << *add.stats;
  }
  for (const RemoveFile& remove : commit.removes) EXPECT_FALSE(remove.data_change);
  ASSERT_TRUE(commit.commit_info_json.has_value());
  EXPECT_NE(commit.commit_info_json->find("\"operation\":\"OPTIMIZE\""), std::string::npos);
  EXPECT_NE(commit.commit_info_json->find("\"numRemovedFiles\":\"20\""), std::string::npos);

  // Nothing left to do the second time.
  ASSERT_OK_AND_ASSIGN(OptimizeResult again, Optimize(table_.get(), OptimizeOptions()));
  EXPECT_EQ(again.version, -1);
}

// The writer flushes a row group at row_group_bytes, so a compacted file is
// never held in memory whole (decision 147).
TEST_F(OptimizeTest, RowGroupsOfTheOutputAreBounded) {
  for (int batch = 0; batch < 10; ++batch) Append(batch * 100, 100);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr before, table_->LatestSnapshot());
  OptimizeOptions options;
  options.row_group_bytes = 256;
  ASSERT_OK_AND_ASSIGN(OptimizeResult result, Optimize(table_.get(), options));
  ASSERT_EQ(result.num_added_files, 2);
  ASSERT_EQ(result.added_files.size(), 2u);
  for (const AddFile& add : result.added_files) {
    ASSERT_OK_AND_ASSIGN(std::string relative, UriDecodePath(add.path));
    ASSERT_OK_AND_ASSIGN(auto reader,
                         parquet::ParquetFileReader::Open(fs_.get(), "/t/" + relative));
    EXPECT_GT(reader->num_row_groups(), 1) << add.path;
    EXPECT_EQ(reader->num_rows(), 500);
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr after, table_->LatestSnapshot());
  EXPECT_EQ(Ids(after), Ids(before));
  options.row_group_bytes = 0;
  EXPECT_FALSE(Optimize(table_.get(), options).ok());
}

// A caller's snapshot is optimized as given, without reading the log.
TEST_F(OptimizeTest, UsesTheSnapshotItIsGiven) {
  for (int batch = 0; batch < 4; ++batch) Append(batch * 10, 10);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr two_commits, table_->SnapshotAt(1));
  OptimizeOptions options;
  options.snapshot = two_commits;
  ASSERT_OK_AND_ASSIGN(OptimizeResult result, Optimize(table_.get(), options));
  EXPECT_EQ(result.read_version, 1);
  EXPECT_EQ(result.num_removed_files, 4);  // two commits of two files
  ASSERT_OK_AND_ASSIGN(SnapshotPtr after, table_->LatestSnapshot());
  EXPECT_EQ(after->files().size(), 6u);  // 8 - 4 + 2
}

TEST_F(OptimizeTest, FileFilterSelectsPartitionsAndItsErrorsAreReturned) {
  for (int batch = 0; batch < 4; ++batch) Append(batch * 10, 10);
  OptimizeOptions options;
  options.where = "p = 'a'";
  options.file_filter = [](const Snapshot& snapshot) -> Result<std::vector<AddFile>> {
    std::vector<AddFile> out;
    for (const AddFile& add : snapshot.files()) {
      if (FindPartitionValue(add.partition_values, "p") == "a") out.push_back(add);
    }
    return out;
  };
  ASSERT_OK_AND_ASSIGN(OptimizeResult result, Optimize(table_.get(), options));
  EXPECT_EQ(result.num_removed_files, 4);
  EXPECT_EQ(result.num_added_files, 1);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr after, table_->LatestSnapshot());
  EXPECT_EQ(after->files().size(), 5u);  // b untouched
  ASSERT_OK_AND_ASSIGN(CommitActions commit, table_->ReadCommit(result.version));
  EXPECT_NE(commit.commit_info_json->find(R"("predicate":"[\"p = 'a'\"]")"), std::string::npos)
      << *commit.commit_info_json;

  options.file_filter = [](const Snapshot&) -> Result<std::vector<AddFile>> {
    return Status::InvalidArgument("bad predicate");
  };
  EXPECT_TRUE(Optimize(table_.get(), options).status().IsInvalidArgument());
}

TEST_F(OptimizeTest, ZOrderRewritesAndKeepsRows) {
  for (int batch = 0; batch < 3; ++batch) Append(batch * 10, 10);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr before, table_->LatestSnapshot());
  OptimizeOptions options;
  options.zorder_by = {"v", "id"};
  ASSERT_OK_AND_ASSIGN(OptimizeResult result, Optimize(table_.get(), options));
  EXPECT_EQ(result.num_added_files, 2);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr after, table_->LatestSnapshot());
  EXPECT_EQ(Ids(after), Ids(before));
  ASSERT_OK_AND_ASSIGN(CommitActions commit, table_->ReadCommit(result.version));
  EXPECT_NE(commit.commit_info_json->find(R"("zOrderBy":"[\"v\",\"id\"]")"), std::string::npos)
      << *commit.commit_info_json;

  options.zorder_by = {"p"};
  EXPECT_TRUE(Optimize(table_.get(), options).status().IsInvalidArgument());
}

}  // namespace
}  // namespace silt::delta
