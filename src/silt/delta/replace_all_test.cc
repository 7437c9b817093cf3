#include "silt/delta/replace_all.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include "silt/columnar/types.h"
#include "silt/testing/gtest_util.h"

namespace silt::delta {
namespace {

Metadata NewTableMetadata() {
  Metadata m;
  m.schema = columnar::DataType::Struct({columnar::Field{"id", columnar::DataType::Long()},
                                         columnar::Field{"p", columnar::DataType::String()}});
  m.partition_columns = {"p"};
  return m;
}

AddFile Add(std::string path, int64_t rows = 1) {
  AddFile a;
  a.path = std::move(path);
  a.partition_values = {{"p", "x"}};
  a.size = 10 + rows;
  a.modification_time = 1;
  a.stats = R"({"numRecords":)" + std::to_string(rows) + "}";
  return a;
}

CommitRequest Batch(std::vector<AddFile> adds, int64_t batch_id) {
  CommitRequest r;
  r.operation = "STREAMING UPDATE";
  r.operation_parameters = {
      {"outputMode", "Complete"}, {"queryId", "q"}, {"epochId", std::to_string(batch_id)}};
  r.adds = std::move(adds);
  r.txn = Txn{"q", batch_id, std::nullopt};
  return r;
}

class ReplaceAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  }

  // A table at version 1 holding a.parquet and b.parquet (b with a deletion
  // vector), committed by plain appends.
  SnapshotPtr TwoFiles() {
    CommitRequest create;
    create.new_metadata = NewTableMetadata();
    create.adds = {Add("p=x/a.parquet", 2)};
    EXPECT_TRUE(Commit(table_.get(), nullptr, create).ok());
    Result<SnapshotPtr> v0 = table_->LatestSnapshot();
    EXPECT_TRUE(v0.ok());
    CommitRequest append;
    AddFile b = Add("p=x/b.parquet", 3);
    DeletionVectorDescriptor dv;
    dv.storage_type = "u";
    dv.path_or_inline_dv = "ab^-aqEH.-t@S}K{vb[*k^";
    dv.offset = 4;
    dv.size_in_bytes = 40;
    dv.cardinality = 1;
    b.deletion_vector = dv;
    append.adds = {b};
    EXPECT_TRUE(Commit(table_.get(), *v0, append).ok());
    Result<SnapshotPtr> v1 = table_->LatestSnapshot();
    EXPECT_TRUE(v1.ok());
    return v1.ok() ? *v1 : nullptr;
  }

  fs::FileSystemPtr fs_;
  std::unique_ptr<DeltaTable> table_;
};

TEST_F(ReplaceAllTest, TheNewVersionHoldsExactlyTheAddedFiles) {
  SnapshotPtr v1 = TwoFiles();
  ASSERT_NE(v1, nullptr);
  ASSERT_OK_AND_ASSIGN(CommitResult result,
                       CommitReplacingAllFiles(table_.get(), v1, Batch({Add("p=x/c.parquet")}, 0),
                                               /*deletion_timestamp_ms=*/777));
  EXPECT_EQ(result.version, 2);
  EXPECT_FALSE(result.skipped_duplicate);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2, table_->LatestSnapshot());
  ASSERT_EQ(v2->files().size(), 1u);
  EXPECT_EQ(v2->files()[0].path, "p=x/c.parquet");
  EXPECT_EQ(v2->TxnVersion("q"), 0);
  ASSERT_EQ(v2->tombstones().size(), 2u);
  // Time travel still sees the old contents.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr old, table_->SnapshotAt(1));
  EXPECT_EQ(old->files().size(), 2u);
}

TEST_F(ReplaceAllTest, RemovesAreWrittenAsDeltaSparkWritesThem) {
  SnapshotPtr v1 = TwoFiles();
  ASSERT_NE(v1, nullptr);
  ASSERT_OK(
      CommitReplacingAllFiles(table_.get(), v1, Batch({Add("p=x/c.parquet")}, 0), 777).status());
  ASSERT_OK_AND_ASSIGN(CommitActions c, table_->ReadCommit(2));
  std::vector<std::string> removes;
  for (const std::string& line : c.raw_lines) {
    if (line.rfind(R"({"remove":)", 0) == 0) removes.push_back(line);
  }
  ASSERT_EQ(removes.size(), 2u);
  EXPECT_EQ(removes[0],
            R"({"remove":{"path":"p=x/a.parquet","deletionTimestamp":777,"dataChange":true,)"
            R"("extendedFileMetadata":true,"partitionValues":{"p":"x"},"size":12}})");
  EXPECT_EQ(removes[1],
            R"({"remove":{"path":"p=x/b.parquet","deletionTimestamp":777,"dataChange":true,)"
            R"("extendedFileMetadata":true,"partitionValues":{"p":"x"},"size":13,)"
            R"("deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^",)"
            R"("offset":4,"sizeInBytes":40,"cardinality":1}}})");
  ASSERT_EQ(c.txns.size(), 1u);
  EXPECT_EQ(c.txns[0].app_id, "q");
  EXPECT_EQ(c.txns[0].version, 0);

  simdjson::dom::parser parser;
  simdjson::dom::element info;
  ASSERT_TRUE(c.commit_info_json.has_value());
  ASSERT_EQ(parser.parse(*c.commit_info_json).get(info), simdjson::SUCCESS);
  EXPECT_EQ(info["operation"].get_string().value(), "STREAMING UPDATE");
  EXPECT_EQ(info["operationParameters"]["outputMode"].get_string().value(), "Complete");
  EXPECT_FALSE(info["isBlindAppend"].get_bool().value());
  EXPECT_EQ(info["readVersion"].get_int64().value(), 1);
  EXPECT_EQ(info["operationMetrics"]["numRemovedFiles"].get_string().value(), "2");
}

TEST_F(ReplaceAllTest, AnEmptyReplacementEmptiesTheTable) {
  SnapshotPtr v1 = TwoFiles();
  ASSERT_NE(v1, nullptr);
  ASSERT_OK(CommitReplacingAllFiles(table_.get(), v1, Batch({}, 0), 1).status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2, table_->LatestSnapshot());
  EXPECT_EQ(v2->version(), 2);
  EXPECT_TRUE(v2->files().empty());
  EXPECT_EQ(v2->TxnVersion("q"), 0);
}

TEST_F(ReplaceAllTest, WithoutATableItCreatesOneHoldingTheAdds) {
  CommitRequest create = Batch({Add("p=x/a.parquet")}, 0);
  create.new_metadata = NewTableMetadata();
  ASSERT_OK_AND_ASSIGN(CommitResult result,
                       CommitReplacingAllFiles(table_.get(), nullptr, create, 1));
  EXPECT_EQ(result.version, 0);
  ASSERT_OK_AND_ASSIGN(CommitActions c, table_->ReadCommit(0));
  EXPECT_TRUE(c.removes.empty());
  simdjson::dom::parser parser;
  simdjson::dom::element info;
  ASSERT_EQ(parser.parse(*c.commit_info_json).get(info), simdjson::SUCCESS);
  // delta-spark's complete mode reads the (empty) table even at version 0.
  EXPECT_FALSE(info["isBlindAppend"].get_bool().value());
  EXPECT_EQ(info["operationMetrics"]["numRemovedFiles"].get_string().value(), "0");
}

TEST_F(ReplaceAllTest, ABatchTheTableAlreadyRecordsIsSkipped) {
  SnapshotPtr v1 = TwoFiles();
  ASSERT_NE(v1, nullptr);
  ASSERT_OK(
      CommitReplacingAllFiles(table_.get(), v1, Batch({Add("p=x/c.parquet")}, 3), 1).status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2, table_->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(
      CommitResult again,
      CommitReplacingAllFiles(table_.get(), v2, Batch({Add("p=x/d.parquet")}, 3), 2));
  EXPECT_TRUE(again.skipped_duplicate);
  // The run that lost the race to its own earlier run is skipped too.
  ASSERT_OK_AND_ASSIGN(
      CommitResult racing,
      CommitReplacingAllFiles(table_.get(), v1, Batch({Add("p=x/e.parquet")}, 3), 3));
  EXPECT_TRUE(racing.skipped_duplicate);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions.back(), 2);
}

TEST_F(ReplaceAllTest, AConcurrentAppendMakesItConflictRatherThanLoseRows) {
  SnapshotPtr v1 = TwoFiles();
  ASSERT_NE(v1, nullptr);
  CommitRequest other;
  other.adds = {Add("p=x/other.parquet")};
  ASSERT_OK(Commit(table_.get(), v1, other).status());
  Result<CommitResult> result =
      CommitReplacingAllFiles(table_.get(), v1, Batch({Add("p=x/c.parquet")}, 0), 1);
  ASSERT_RAISES(Conflict, result);
  EXPECT_NE(result.status().message().find("concurrent data change"), std::string::npos)
      << result.status().ToString();
}

TEST_F(ReplaceAllTest, RefusesAnAppendOnlyTableAndARequestWithRemoves) {
  SnapshotPtr v1 = TwoFiles();
  ASSERT_NE(v1, nullptr);
  CommitRequest with_removes = Batch({}, 0);
  with_removes.removes.push_back(RemoveOf(v1->files()[0], 1));
  ASSERT_RAISES(InvalidArgument, CommitReplacingAllFiles(table_.get(), v1, with_removes, 1));

  CommitRequest set_append_only;
  Metadata m = v1->metadata();
  m.configuration["delta.appendOnly"] = "true";
  set_append_only.new_metadata = m;
  ASSERT_OK(Commit(table_.get(), v1, set_append_only).status());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2, table_->LatestSnapshot());
  Result<CommitResult> refused = CommitReplacingAllFiles(table_.get(), v2, Batch({}, 0), 1);
  ASSERT_RAISES(InvalidArgument, refused);
  EXPECT_NE(refused.status().message().find("append-only"), std::string::npos);
}

}  // namespace
}  // namespace silt::delta
