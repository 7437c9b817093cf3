#include "silt/delta/table.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "silt/delta/protocol.h"
#include "silt/testing/gtest_util.h"

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

TEST_F(DeltaTableTest, LogStartingAtACheckpointIsNotSupportedYet) {
  ASSERT_OK(fs_->WriteFile("/t/_delta_log/00000000000000000010.checkpoint.parquet", "PAR1"));
  ASSERT_OK(fs_->WriteFile("/t/_delta_log/_last_checkpoint", R"({"version":10,"size":3})"));
  CommitActions c;
  c.adds = {Add("f.parquet")};
  WriteCommit(11, c);
  auto r = table_->LatestSnapshot();
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().message().find("00000000000000000010.checkpoint.parquet"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("checkpoints"), std::string::npos);
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
  Status st = CheckReadSupported(Protocol{2, 5}, mapped);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("column mapping"), std::string::npos) << st.ToString();
  st = CheckReadSupported(
      Protocol{3, 7, std::vector<std::string>{"deletionVectors", "columnMapping"}, {}}, mapped);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("deletionVectors"), std::string::npos) << st.ToString();
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

TEST_F(GoldenTableTest, BrokenOrUnsupportedTablesFailClearly) {
  ASSERT_RAISES(Corruption, Latest("versions-not-contiguous"));
  ASSERT_RAISES(NotSupported, Latest("deltalog-invalid-protocol-version"));
  ASSERT_RAISES(Corruption, Latest("deltalog-state-reconstruction-without-metadata"));
  ASSERT_RAISES(Corruption, Latest("deltalog-state-reconstruction-without-protocol"));
  ASSERT_RAISES(NotFound, Latest("no-delta-log-folder"));
  auto mapped = Latest("table-with-columnmapping-mode-name");
  ASSERT_RAISES(NotSupported, mapped);
  EXPECT_NE(mapped.status().message().find("column mapping"), std::string::npos);
  auto dv = Latest("dv-with-columnmapping");
  ASSERT_RAISES(NotSupported, dv);
  EXPECT_NE(dv.status().message().find("deletionVectors"), std::string::npos);
  auto widening = Latest("type-widening");
  ASSERT_RAISES(NotSupported, widening);
  EXPECT_NE(widening.status().message().find("typeWidening-preview"), std::string::npos);
}

}  // namespace
}  // namespace silt::delta
