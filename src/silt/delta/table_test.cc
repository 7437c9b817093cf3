#include "silt/delta/table.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "silt/delta/protocol.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::delta {
namespace {

constexpr std::string_view kSchemaJson =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
    R"({"name":"p","type":"string","nullable":true,"metadata":{}}]})";

Metadata TestMetadata(std::map<std::string, std::string> configuration = {}) {
  Metadata m;
  m.id = "table-id";
  m.schema_string = std::string(kSchemaJson);
  m.partition_columns = {"p"};
  m.configuration = std::move(configuration);
  m.created_time = 1;
  return m;
}

AddFile Add(std::string path, std::optional<std::string> p = "x") {
  AddFile a;
  a.path = std::move(path);
  a.partition_values = {{"p", std::move(p)}};
  a.size = 100;
  a.modification_time = 5;
  return a;
}

RemoveFile Remove(std::string path) {
  RemoveFile r;
  r.path = std::move(path);
  r.deletion_timestamp = 7;
  return r;
}

class DeltaTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    ASSERT_OK_AND_ASSIGN(table_, DeltaTable::Open(fs_, "/t"));
  }

  void WriteCommit(int64_t version, const CommitActions& actions) {
    ASSERT_OK(fs_->WriteFile("/t/_delta_log/" + CommitFileName(version), SerializeCommit(actions)));
  }

  void WriteVersion0(Protocol protocol = Protocol()) {
    CommitActions c;
    c.commit_info_json = R"({"timestamp":1000,"operation":"WRITE"})";
    c.protocol = protocol;
    c.metadata = TestMetadata();
    WriteCommit(0, c);
  }

  fs::FileSystemPtr fs_;
  std::unique_ptr<DeltaTable> table_;
};

std::vector<std::string> Paths(const Snapshot& s) {
  std::vector<std::string> out;
  for (const AddFile& a : s.files()) out.push_back(a.path);
  return out;
}

TEST_F(DeltaTableTest, ReplayReconcilesFilesTxnsAndMetadata) {
  CommitActions v0;
  v0.commit_info_json = R"({"timestamp":1000})";
  v0.protocol = Protocol();
  v0.metadata = TestMetadata();
  v0.adds = {Add("p=x/a.parquet"), Add("p=x/b.parquet")};
  v0.txns = {Txn{"app1", 0, 1}};
  WriteCommit(0, v0);

  CommitActions v1;
  v1.commit_info_json = R"({"timestamp":2000})";
  v1.removes = {Remove("p=x/a.parquet")};
  v1.adds = {Add("p=x/c.parquet")};
  v1.txns = {Txn{"app1", 1, 2}, Txn{"app2", 5, 2}};
  WriteCommit(1, v1);

  CommitActions v2;
  v2.commit_info_json = R"({"timestamp":3000,"inCommitTimestamp":3500})";
  v2.metadata = TestMetadata({{"delta.appendOnly", "true"}});
  // The same file named by an absolute URI and with URI escapes.
  v2.removes = {Remove("file:/t/p%3Dx/b.parquet")};
  v2.adds = {Add("p=y/d%20e.parquet", "y")};
  WriteCommit(2, v2);

  CommitActions v3;
  v3.adds = {Add("p=x/a.parquet")};  // re-added after its removal
  v3.txns = {Txn{"app2", 3, 4}};     // txn versions need not grow
  WriteCommit(3, v3);

  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest, table_->LatestSnapshot());
  EXPECT_EQ(latest->version(), 3);
  EXPECT_EQ(Paths(*latest),
            (std::vector<std::string>{"p=x/a.parquet", "p=x/c.parquet", "p=y/d%20e.parquet"}));
  EXPECT_EQ(latest->TxnVersion("app1"), 1);
  EXPECT_EQ(latest->TxnVersion("app2"), 3);
  EXPECT_EQ(latest->TxnVersion("app3"), std::nullopt);
  EXPECT_EQ(latest->metadata().configuration.at("delta.appendOnly"), "true");
  ASSERT_NE(latest->schema(), nullptr);
  EXPECT_EQ(latest->schema()->num_fields(), 2);
  EXPECT_EQ(latest->partition_columns(), std::vector<std::string>{"p"});

  ASSERT_OK_AND_ASSIGN(SnapshotPtr v1_snapshot, table_->SnapshotAt(1));
  EXPECT_EQ(v1_snapshot->version(), 1);
  EXPECT_EQ(Paths(*v1_snapshot), (std::vector<std::string>{"p=x/b.parquet", "p=x/c.parquet"}));
  EXPECT_TRUE(v1_snapshot->metadata().configuration.empty());
  EXPECT_EQ(v1_snapshot->timestamp_ms(), 2000);
  EXPECT_EQ(v1_snapshot->TxnVersion("app2"), 5);

  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2_snapshot, table_->SnapshotAt(2));
  EXPECT_EQ(v2_snapshot->timestamp_ms(), 3500);  // inCommitTimestamp wins

  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_EQ(versions, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_OK_AND_ASSIGN(bool exists, table_->Exists());
  EXPECT_TRUE(exists);
}

TEST_F(DeltaTableTest, ReadCommitReturnsOneVersionsActions) {
  WriteVersion0();
  ASSERT_OK_AND_ASSIGN(CommitActions c, table_->ReadCommit(0));
  EXPECT_EQ(c.version, 0);
  EXPECT_TRUE(c.protocol.has_value());
  EXPECT_EQ(c.commit_timestamp_ms, 1000);
  auto missing = table_->ReadCommit(4);
  ASSERT_RAISES(NotFound, missing);
  EXPECT_NE(missing.status().message().find("version 4"), std::string::npos);
}

TEST_F(DeltaTableTest, EmptyDirectoryIsNotATable) {
  ASSERT_OK_AND_ASSIGN(bool exists, table_->Exists());
  EXPECT_FALSE(exists);
  auto snapshot = table_->LatestSnapshot();
  ASSERT_RAISES(NotFound, snapshot);
  EXPECT_NE(snapshot.status().message().find("is not a Delta table"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table_->ListVersions());
  EXPECT_TRUE(versions.empty());
}

TEST_F(DeltaTableTest, SnapshotAtUnknownVersionNamesTheRange) {
  WriteVersion0();
  auto r = table_->SnapshotAt(9);
  ASSERT_RAISES(NotFound, r);
  EXPECT_NE(r.status().message().find("version 9"), std::string::npos);
  EXPECT_NE(r.status().message().find("0 to 0"), std::string::npos) << r.status().ToString();
}

TEST_F(DeltaTableTest, MissingCommitIsCorruption) {
  WriteVersion0();
  WriteCommit(2, CommitActions());
  auto r = table_->LatestSnapshot();
  ASSERT_RAISES(Corruption, r);
  EXPECT_NE(r.status().message().find(CommitFileName(1)), std::string::npos);
}

TEST_F(DeltaTableTest, UnreadableCheckpointWithoutCommitZeroIsCorruption) {
  ASSERT_OK(fs_->WriteFile("/t/_delta_log/00000000000000000010.checkpoint.parquet", "PAR1"));
  ASSERT_OK(fs_->WriteFile("/t/_delta_log/_last_checkpoint", R"({"version":10,"size":3})"));
  CommitActions c;
  c.adds = {Add("f.parquet")};
  WriteCommit(11, c);
  auto r = table_->LatestSnapshot();
  ASSERT_RAISES(Corruption, r);
  EXPECT_NE(r.status().message().find("00000000000000000010.checkpoint.parquet"),
            std::string::npos)
      << r.status().ToString();
}

TEST_F(DeltaTableTest, IncompleteMultiPartCheckpointIsIgnored) {
  WriteVersion0();
  // Part 2 of 2 is missing, so the checkpoint does not count; the bogus part
  // is never read and the commits replay from 0.
  ASSERT_OK(fs_->WriteFile(
      "/t/_delta_log/00000000000000000000.checkpoint.0000000001.0000000002.parquet", "junk"));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, table_->LatestSnapshot());
  EXPECT_EQ(s->version(), 0);
}

TEST_F(DeltaTableTest, MissingProtocolOrMetadataIsCorruption) {
  CommitActions c;
  c.metadata = TestMetadata();
  WriteCommit(0, c);
  ASSERT_RAISES(Corruption, table_->LatestSnapshot());
  CommitActions p;
  p.protocol = Protocol();
  ASSERT_OK(fs_->WriteFile("/t/_delta_log/" + CommitFileName(0), SerializeCommit(p)));
  ASSERT_RAISES(Corruption, table_->LatestSnapshot());
}

TEST_F(DeltaTableTest, UnknownReaderFeatureIsRefusedByName) {
  WriteVersion0(Protocol{3, 7, std::vector<std::string>{"timestampNtz", "fancyNewThing"},
                         std::vector<std::string>{"timestampNtz", "fancyNewThing"}});
  auto r = table_->LatestSnapshot();
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().message().find("fancyNewThing"), std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(r.status().message().find("timestampNtz"), std::string::npos)
      << "implemented features are not listed: " << r.status().ToString();
}

TEST(ProtocolGateTest, ReaderGate) {
  Metadata plain;
  EXPECT_OK(CheckReadSupported(Protocol{1, 2}, plain));
  EXPECT_OK(CheckReadSupported(Protocol{3, 7, std::vector<std::string>{}, {}}, plain));
  EXPECT_OK(CheckReadSupported(
      Protocol{3, 7, std::vector<std::string>{"timestampNtz", "vacuumProtocolCheck"}, {}},
      plain));
  // Reader version 2 means column mapping; harmless while the mode is none.
  EXPECT_OK(CheckReadSupported(Protocol{2, 5}, plain));
  Metadata mapped;
  mapped.configuration["delta.columnMapping.mode"] = "name";
  EXPECT_OK(CheckReadSupported(Protocol{2, 5}, mapped));
  mapped.configuration["delta.columnMapping.mode"] = "id";
  EXPECT_OK(CheckReadSupported(
      Protocol{3, 7, std::vector<std::string>{"columnMapping", "v2Checkpoint"}, {}}, mapped));
  mapped.configuration["delta.columnMapping.mode"] = "fancy";
  Status st = CheckReadSupported(Protocol{2, 5}, mapped);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("column mapping"), std::string::npos) << st.ToString();
  st = CheckReadSupported(
      Protocol{3, 7, std::vector<std::string>{"typeWidening", "columnMapping"}, {}}, mapped);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("typeWidening"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("columnMapping"), std::string::npos) << st.ToString();
  st = CheckReadSupported(Protocol{99, 7}, plain);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("reader version 99"), std::string::npos) << st.ToString();
}

TEST(ProtocolGateTest, WriterGate) {
  Metadata plain;
  EXPECT_OK(CheckWriteSupported(Protocol{1, 2}, plain));
  EXPECT_OK(CheckWriteSupported(Protocol{1, 4}, plain));
  EXPECT_OK(CheckWriteSupported(
      Protocol{3, 7, std::vector<std::string>{}, std::vector<std::string>{"appendOnly",
                                                                          "invariants"}},
      plain));
  Status st = CheckWriteSupported(
      Protocol{3, 7, std::vector<std::string>{}, std::vector<std::string>{"rowTracking"}}, plain);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("rowTracking"), std::string::npos) << st.ToString();
  Metadata constrained;
  constrained.configuration["delta.constraints.positive"] = "id > 0";
  st = CheckWriteSupported(Protocol{1, 3}, constrained);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("delta.constraints.positive"), std::string::npos) << st.ToString();
  ASSERT_RAISES(NotSupported, CheckWriteSupported(Protocol{1, 8}, plain));
}

// Delta's golden tables (written by Spark), read from the shared folder.
class GoldenTableTest : public ::testing::Test {
 protected:
  static std::string Dir() { return std::string(SILT_CONFORMANCE_DIR) + "/delta-golden"; }
  void SetUp() override {
    if (!std::filesystem::exists(Dir())) GTEST_SKIP() << "no conformance data at " << Dir();
  }
  static Result<SnapshotPtr> Latest(const std::string& name) {
    SILT_ASSIGN_OR_RETURN(auto table,
                          DeltaTable::Open(fs::MakeLocalFileSystem(), Dir() + "/" + name));
    return table->LatestSnapshot();
  }
};

TEST_F(GoldenTableTest, ReplaysAddsAndRemovesOfSparkTables) {
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, Latest("snapshot-data2-deleted"));
  EXPECT_EQ(s->version(), 4);
  EXPECT_EQ(s->files().size(), 3u);
  EXPECT_EQ(s->timestamp_ms(), 1603723974057);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr special, Latest("log-replay-special-characters-a"));
  EXPECT_TRUE(special->files().empty());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr readd, Latest("delete-re-add-same-file-different-transactions"));
  EXPECT_EQ(Paths(*readd), (std::vector<std::string>{"bar", "foo"}));
  EXPECT_EQ(readd->files()[1].modification_time, 1700000000000);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr latest_protocol, Latest("log-replay-latest-metadata-protocol"));
  EXPECT_EQ(latest_protocol->protocol().min_reader_version, 3);
  EXPECT_EQ(latest_protocol->schema()->num_fields(), 2);
  // Commit files are all there, so the checkpoint is not needed.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr restored, Latest("basic-with-inserts-overwrite-restore"));
  EXPECT_EQ(restored->version(), 3);
}

TEST_F(GoldenTableTest, ReadsTablesWithImplementedReaderFeatures) {
  ASSERT_OK_AND_ASSIGN(SnapshotPtr ntz, Latest("data-reader-timestamp_ntz"));
  EXPECT_EQ(ntz->protocol().min_reader_version, 3);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr vacuum, Latest("basic-with-vacuum-protocol-check-feature"));
  EXPECT_EQ(vacuum->files().size(), 2u);
}

TEST_F(GoldenTableTest, StartsFromClassicCheckpoints) {
  // Commits 0..14 with a checkpoint at 10; the snapshot must match a replay
  // from commit 0.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, Latest("checkpoint"));
  EXPECT_EQ(s->version(), 14);
  ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(fs::MakeLocalFileSystem(),
                                                    Dir() + "/checkpoint"));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr at10, table->SnapshotAt(10));
  EXPECT_EQ(at10->version(), 10);
  EXPECT_FALSE(at10->files().empty());
  EXPECT_FALSE(at10->schema() == nullptr);
}

TEST_F(GoldenTableTest, StartsFromMultiPartAndV2Checkpoints) {
  ASSERT_OK_AND_ASSIGN(SnapshotPtr multi, Latest("multi-part-checkpoint"));
  EXPECT_EQ(multi->version(), 1);
  EXPECT_FALSE(multi->files().empty());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2_json, Latest("v2-checkpoint-json"));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v2_parquet, Latest("v2-checkpoint-parquet"));
  EXPECT_EQ(v2_json->version(), 2);
  EXPECT_EQ(Paths(*v2_json).size(), Paths(*v2_parquet).size());
  EXPECT_FALSE(v2_json->files().empty());
}

TEST_F(GoldenTableTest, CheckpointSnapshotsEqualFullReplays) {
  // Hiding the commits before a checkpoint must not change the snapshot.
  for (const char* name : {"checkpoint", "multi-part-checkpoint", "v2-checkpoint-parquet",
                           "v2-checkpoint-json", "only-checkpoint-files"}) {
    ASSERT_OK_AND_ASSIGN(SnapshotPtr full, Latest(name));
    testing::TempDir dir;
    std::string copy = dir.path() + "/t";
    std::filesystem::copy(Dir() + "/" + name, copy, std::filesystem::copy_options::recursive);
    std::filesystem::remove(copy + "/_delta_log/" + CommitFileName(0));
    ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(fs::MakeLocalFileSystem(), copy));
    ASSERT_OK_AND_ASSIGN(SnapshotPtr from_checkpoint, table->LatestSnapshot());
    EXPECT_EQ(from_checkpoint->version(), full->version()) << name;
    EXPECT_EQ(Paths(*from_checkpoint), Paths(*full)) << name;
    EXPECT_EQ(from_checkpoint->metadata().id, full->metadata().id) << name;
    EXPECT_EQ(from_checkpoint->metadata().schema_string, full->metadata().schema_string) << name;
    EXPECT_EQ(from_checkpoint->partition_columns(), full->partition_columns()) << name;
    for (size_t i = 0; i < full->files().size() && i < from_checkpoint->files().size(); ++i) {
      EXPECT_EQ(from_checkpoint->files()[i].partition_values, full->files()[i].partition_values)
          << name;
      EXPECT_EQ(from_checkpoint->files()[i].size, full->files()[i].size) << name;
    }
  }
}

TEST_F(GoldenTableTest, CorruptCheckpointFallsBackToCommits) {
  testing::TempDir dir;
  std::string copy = dir.path() + "/t";
  std::filesystem::copy(Dir() + "/checkpoint", copy, std::filesystem::copy_options::recursive);
  std::string checkpoint = copy + "/_delta_log/00000000000000000010.checkpoint.parquet";
  std::filesystem::resize_file(checkpoint, std::filesystem::file_size(checkpoint) / 2);
  ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(fs::MakeLocalFileSystem(), copy));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr s, table->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(SnapshotPtr full, Latest("checkpoint"));
  EXPECT_EQ(Paths(*s), Paths(*full));
  // Without commit 0 there is nothing to fall back to: Corruption.
  std::filesystem::remove(copy + "/_delta_log/" + CommitFileName(0));
  ASSERT_RAISES(Corruption, table->LatestSnapshot());
}

// All rows of the latest snapshot of golden table `name`.
Result<std::vector<columnar::RecordBatchPtr>> ScanGolden(const std::string& name) {
  std::string path = std::string(SILT_CONFORMANCE_DIR) + "/delta-golden/" + name;
  SILT_ASSIGN_OR_RETURN(auto table, DeltaTable::Open(fs::MakeLocalFileSystem(), path));
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table->LatestSnapshot());
  SILT_ASSIGN_OR_RETURN(auto scan, TableScan::Make(table->file_system(), path, snapshot));
  std::vector<columnar::RecordBatchPtr> batches;
  while (true) {
    SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    batches.push_back(std::move(batch));
  }
  return batches;
}

int64_t CountRows(const std::vector<columnar::RecordBatchPtr>& batches) {
  int64_t rows = 0;
  for (const auto& batch : batches) rows += batch->num_rows;
  return rows;
}

TEST_F(GoldenTableTest, ScansDropRowsOfDeletionVectors) {
  // 50 records; the latest deletion vector (on disk, after an add/remove
  // pair keyed by path and vector id) deletes 3 of them.
  ASSERT_OK_AND_ASSIGN(auto batches, ScanGolden("log-replay-dv-key-cases"));
  EXPECT_EQ(CountRows(batches), 47);
  // Deletion vectors on a partitioned table read through a checkpoint.
  ASSERT_OK_AND_ASSIGN(auto partitioned, ScanGolden("dv-partitioned-with-checkpoint"));
  EXPECT_EQ(CountRows(partitioned), 35);
}

TEST_F(GoldenTableTest, ScansReadColumnMappedColumnsByPhysicalName) {
  for (const char* name : {"data-skipping-basic-stats-all-types-columnmapping-name",
                           "data-skipping-basic-stats-all-types-columnmapping-id"}) {
    ASSERT_OK_AND_ASSIGN(auto batches, ScanGolden(name));
    ASSERT_EQ(CountRows(batches), 1) << name;
    const columnar::RecordBatch& batch = *batches[0];
    int as_int = batch.schema->FieldIndex("as_int");
    ASSERT_GE(as_int, 0) << name;
    EXPECT_EQ(batch.column(as_int)->null_count, 0) << name;
    EXPECT_EQ(batch.column(as_int)->Value<int32_t>(0), 0) << name;
    int as_string = batch.schema->FieldIndex("as_string");
    ASSERT_GE(as_string, 0) << name;
    EXPECT_EQ(batch.column(as_string)->StringValue(0), "0") << name;
  }
}

TEST_F(GoldenTableTest, BrokenOrUnsupportedTablesFailClearly) {
  ASSERT_RAISES(Corruption, Latest("versions-not-contiguous"));
  ASSERT_RAISES(NotSupported, Latest("deltalog-invalid-protocol-version"));
  ASSERT_RAISES(Corruption, Latest("deltalog-state-reconstruction-without-metadata"));
  ASSERT_RAISES(Corruption, Latest("deltalog-state-reconstruction-without-protocol"));
  ASSERT_RAISES(NotFound, Latest("no-delta-log-folder"));
  auto widening = Latest("type-widening");
  ASSERT_RAISES(NotSupported, widening);
  EXPECT_NE(widening.status().message().find("typeWidening-preview"), std::string::npos);
}

}  // namespace
}  // namespace silt::delta
