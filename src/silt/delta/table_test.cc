#include "silt/delta/table.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "silt/columnar/builder.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/data_skipping.h"
#include "silt/delta/protocol.h"
#include "silt/parquet/file_writer.h"
#include "silt/testing/conformance.h"
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

TEST_F(DeltaTableTest, UpdateAppliesOnlyNewCommitsAndEqualsAFullReplay) {
  CommitActions v0;
  v0.commit_info_json = R"({"timestamp":1000})";
  v0.protocol = Protocol();
  v0.metadata = TestMetadata();
  v0.adds = {Add("p=x/a.parquet"), Add("p=x/b.parquet")};
  v0.txns = {Txn{"app1", 0, 1}};
  WriteCommit(0, v0);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr base, table_->LatestSnapshot());
  const Snapshot* base_object = base.get();

  // Nothing new: the same snapshot, not a rebuilt one.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr same, table_->Update(base));
  EXPECT_EQ(same.get(), base_object);

  CommitActions v1;
  v1.commit_info_json = R"({"timestamp":2000})";
  v1.removes = {Remove("p=x/a.parquet")};
  v1.adds = {Add("p=y/c.parquet", "y")};
  v1.txns = {Txn{"app1", 1, 2}};
  WriteCommit(1, v1);
  CommitActions v2;
  v2.commit_info_json = R"({"timestamp":3000})";
  v2.metadata = TestMetadata({{"delta.appendOnly", "true"}});
  v2.adds = {Add("p=x/a.parquet")};
  WriteCommit(2, v2);

  // A shared base stays intact; a handed-over one is consumed.
  ASSERT_OK_AND_ASSIGN(SnapshotPtr updated, table_->Update(base));
  EXPECT_EQ(Paths(*base), (std::vector<std::string>{"p=x/a.parquet", "p=x/b.parquet"}));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr full, table_->LatestSnapshot());
  for (const SnapshotPtr& s : {updated, full}) {
    EXPECT_EQ(s->version(), 2);
    EXPECT_EQ(s->timestamp_ms(), 3000);
    EXPECT_EQ(Paths(*s),
              (std::vector<std::string>{"p=x/a.parquet", "p=x/b.parquet", "p=y/c.parquet"}));
    ASSERT_EQ(s->tombstones().size(), 0u);  // a.parquet was re-added
    EXPECT_EQ(s->TxnVersion("app1"), 1);
    EXPECT_EQ(s->metadata().configuration.at("delta.appendOnly"), "true");
  }
  ASSERT_OK_AND_ASSIGN(SnapshotPtr moved, table_->Update(std::move(full)));
  EXPECT_EQ(moved->version(), 2);

  CommitActions v3;
  v3.removes = {Remove("p=y/c.parquet")};
  WriteCommit(3, v3);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr v3_snapshot, table_->Update(std::move(moved)));
  EXPECT_EQ(v3_snapshot->version(), 3);
  EXPECT_EQ(Paths(*v3_snapshot), (std::vector<std::string>{"p=x/a.parquet", "p=x/b.parquet"}));
  ASSERT_EQ(v3_snapshot->tombstones().size(), 1u);
  EXPECT_EQ(v3_snapshot->tombstones()[0].path, "p=y/c.parquet");

  // A scan's view of chosen files carries no tombstones (decision 192); the
  // state it came from keeps its own.
  SnapshotPtr one = v3_snapshot->WithFiles({v3_snapshot->files()[1]});
  EXPECT_EQ(Paths(*one), (std::vector<std::string>{"p=x/b.parquet"}));
  EXPECT_EQ(one->version(), 3);
  EXPECT_EQ(one->TxnVersion("app1"), 1);
  EXPECT_TRUE(one->tombstones().empty());
  EXPECT_EQ(v3_snapshot->tombstones().size(), 1u);
}

// The per-batch update of a streaming writer looks up only the files the
// new commits name (by path, when every path is plain); whatever spelling
// the commits use, the result must equal a full replay.
TEST_F(DeltaTableTest, UpdateFromPlainPathsEqualsAFullReplayForEverySpelling) {
  CommitActions v0;
  v0.commit_info_json = R"({"timestamp":1000})";
  v0.protocol = Protocol();
  v0.metadata = TestMetadata();
  v0.adds = {Add("p=x/a.parquet"), Add("p=x/b.parquet"), Add("p=x/c.parquet"),
             Add("p=x/d.parquet")};
  WriteCommit(0, v0);
  DeletionVectorDescriptor dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = "ab^-aqEH.-t@S}K{vb[*k^";
  dv.offset = 4;
  dv.size_in_bytes = 40;
  dv.cardinality = 2;
  // v1, plain: b gets a deletion vector (remove + add of the same path),
  // c is removed, e added.
  CommitActions v1;
  v1.removes = {Remove("p=x/b.parquet"), Remove("p=x/c.parquet")};
  AddFile b_dv = Add("p=x/b.parquet");
  b_dv.deletion_vector = dv;
  v1.adds = {b_dv, Add("p=x/e.parquet")};
  // v2, not plain: an absolute spelling of d and an escaped one of e.
  CommitActions v2;
  v2.removes = {Remove("/t/p=x/d.parquet"), Remove("p%3Dx/e.parquet")};
  // v3, plain again: c comes back, and b's DV-less entry (already removed)
  // is removed once more.
  CommitActions v3;
  v3.adds = {Add("p=x/c.parquet")};
  v3.removes = {Remove("p=x/b.parquet")};

  ASSERT_OK_AND_ASSIGN(SnapshotPtr step, table_->LatestSnapshot());
  int64_t version = 0;
  for (const CommitActions* commit : {&v1, &v2, &v3}) {
    WriteCommit(++version, *commit);
    // One commit at a time, as a streaming writer sees them.
    ASSERT_OK_AND_ASSIGN(step, table_->Update(std::move(step)));
    ASSERT_OK_AND_ASSIGN(SnapshotPtr full, table_->LatestSnapshot());
    ASSERT_EQ(step->version(), version);
    std::vector<std::string> step_files;
    std::vector<std::string> full_files;
    for (const AddFile& f : step->files()) {
      step_files.push_back(f.path + (f.deletion_vector ? "+dv" : ""));
    }
    for (const AddFile& f : full->files()) {
      full_files.push_back(f.path + (f.deletion_vector ? "+dv" : ""));
    }
    EXPECT_EQ(step_files, full_files) << "version " << version;
    std::vector<std::string> step_tombstones;
    std::vector<std::string> full_tombstones;
    for (const RemoveFile& r : step->tombstones()) step_tombstones.push_back(r.path);
    for (const RemoveFile& r : full->tombstones()) full_tombstones.push_back(r.path);
    EXPECT_EQ(step_tombstones, full_tombstones) << "version " << version;
  }
  EXPECT_EQ(Paths(*step),
            (std::vector<std::string>{"p=x/a.parquet", "p=x/b.parquet", "p=x/c.parquet"}));
  ASSERT_TRUE(step->files()[1].deletion_vector.has_value());
}

// A writer's own commit applied in memory equals reading it back.
TEST_F(DeltaTableTest, ApplyCommitEqualsReadingTheCommit) {
  WriteVersion0();
  ASSERT_OK_AND_ASSIGN(SnapshotPtr base, table_->LatestSnapshot());
  CommitActions v1;
  v1.commit_info_json = R"({"timestamp":2500})";
  v1.commit_timestamp_ms = 2500;
  v1.adds = {Add("p=x/b.parquet"), Add("p=x/a.parquet")};
  v1.txns = {Txn{"app", 3, 2}};
  v1.version = 1;
  WriteCommit(1, v1);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr applied, table_->ApplyCommit(base, v1, 9999));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr read, table_->LatestSnapshot());
  EXPECT_EQ(applied->version(), 1);
  EXPECT_EQ(applied->timestamp_ms(), read->timestamp_ms());
  EXPECT_EQ(Paths(*applied), Paths(*read));
  EXPECT_EQ(applied->TxnVersion("app"), 3);
  // The shared base is untouched.
  EXPECT_EQ(base->version(), 0);
  EXPECT_TRUE(base->files().empty());
  // Not the next version: refused.
  v1.version = 5;
  EXPECT_TRUE(table_->ApplyCommit(base, v1, 0).status().IsInvalidArgument());
}

TEST_F(DeltaTableTest, UpdateFallsBackToAFullLoadWhenCommitsAfterTheBaseAreGone) {
  WriteVersion0();
  ASSERT_OK_AND_ASSIGN(SnapshotPtr base, table_->LatestSnapshot());
  CommitActions v1;
  v1.adds = {Add("p=x/a.parquet")};
  WriteCommit(1, v1);
  CommitActions v2;
  v2.adds = {Add("p=x/b.parquet")};
  WriteCommit(2, v2);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr at2, table_->LatestSnapshot());
  // Log cleanup after a checkpoint at 2 removed commits 0 and 1.
  ASSERT_OK(WriteCheckpoint(table_.get(), *at2, 4000).status());
  ASSERT_OK(fs_->DeleteFile("/t/_delta_log/" + CommitFileName(0)));
  ASSERT_OK(fs_->DeleteFile("/t/_delta_log/" + CommitFileName(1)));
  CommitActions v3;
  v3.adds = {Add("p=x/c.parquet")};
  WriteCommit(3, v3);
  ASSERT_OK_AND_ASSIGN(SnapshotPtr updated, table_->Update(base));
  EXPECT_EQ(updated->version(), 3);
  EXPECT_EQ(Paths(*updated),
            (std::vector<std::string>{"p=x/a.parquet", "p=x/b.parquet", "p=x/c.parquet"}));
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
  EXPECT_NE(r.status().message().find("00000000000000000010.checkpoint.parquet"), std::string::npos)
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
  EXPECT_NE(r.status().message().find("fancyNewThing"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().message().find("timestampNtz"), std::string::npos)
      << "implemented features are not listed: " << r.status().ToString();
}

TEST(ProtocolGateTest, ReaderGate) {
  Metadata plain;
  EXPECT_OK(CheckReadSupported(Protocol{1, 2}, plain));
  EXPECT_OK(CheckReadSupported(Protocol{3, 7, std::vector<std::string>{}, {}}, plain));
  EXPECT_OK(CheckReadSupported(
      Protocol{3, 7, std::vector<std::string>{"timestampNtz", "vacuumProtocolCheck"}, {}}, plain));
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
      Protocol{3, 7, std::vector<std::string>{"fancyNewThing", "columnMapping"}, {}}, mapped);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("fancyNewThing"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("columnMapping"), std::string::npos) << st.ToString();
  EXPECT_OK(CheckReadSupported(
      Protocol{3, 7, std::vector<std::string>{"typeWidening", "typeWidening-preview"}, {}}, plain));
  st = CheckReadSupported(Protocol{99, 7}, plain);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("reader version 99"), std::string::npos) << st.ToString();
}

TEST(ProtocolGateTest, VariantFeaturesAreReadAndAppendedToAndAddedForVariantSchemas) {
  Metadata plain;
  const std::vector<std::string> features{"variantType", "variantType-preview", "variantShredding",
                                          "variantShredding-preview"};
  EXPECT_OK(CheckReadSupported(Protocol{3, 7, features, features}, plain));
  EXPECT_OK(CheckWriteSupported(Protocol{3, 7, features, features}, plain));

  auto schema = columnar::DataType::Struct(
      {columnar::Field{"id", columnar::DataType::Long(), true, "{}"},
       columnar::Field{
           "m",
           columnar::DataType::Map(columnar::DataType::String(), columnar::DataType::Variant()),
           true, "{}"}});
  Protocol p{1, 2};
  ASSERT_TRUE(AddSchemaFeatures(*schema, &p));
  EXPECT_EQ(p.min_reader_version, 3);
  EXPECT_EQ(p.min_writer_version, 7);
  EXPECT_EQ(*p.reader_features, (std::vector<std::string>{"variantType"}));
  EXPECT_EQ(*p.writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "variantType"}));
  // Already there (also under the preview name): nothing to change.
  EXPECT_FALSE(AddSchemaFeatures(*schema, &p));
  Protocol preview{3, 7, std::vector<std::string>{"variantType-preview"},
                   std::vector<std::string>{"variantType-preview"}};
  EXPECT_FALSE(AddSchemaFeatures(*schema, &preview));
  Protocol plain_protocol{1, 2};
  auto no_variant =
      columnar::DataType::Struct({columnar::Field{"id", columnar::DataType::Long(), true, "{}"}});
  EXPECT_FALSE(AddSchemaFeatures(*no_variant, &plain_protocol));
  EXPECT_EQ(plain_protocol.min_reader_version, 1);
}

// New tables get the protocol delta-spark 4 gives them.
TEST(ProtocolGateTest, ProtocolForNewTables) {
  ASSERT_OK_AND_ASSIGN(Protocol plain, ProtocolForNewTable({}));
  EXPECT_EQ(plain.min_writer_version, 2);
  EXPECT_FALSE(plain.writer_features.has_value());
  ASSERT_OK_AND_ASSIGN(Protocol dv, ProtocolForNewTable({{"delta.enableDeletionVectors", "true"}}));
  EXPECT_EQ(*dv.writer_features, std::vector<std::string>{"deletionVectors"});
  ASSERT_OK_AND_ASSIGN(Protocol clustered,
                       ProtocolForNewTable({{"delta.feature.vacuumProtocolCheck", "supported"}},
                                           /*clustered=*/true));
  EXPECT_EQ(clustered.min_reader_version, 3);
  EXPECT_EQ(*clustered.reader_features, std::vector<std::string>{"vacuumProtocolCheck"});
  EXPECT_EQ(*clustered.writer_features,
            (std::vector<std::string>{"appendOnly", "invariants", "domainMetadata", "clustering",
                                      "vacuumProtocolCheck"}));
  Metadata plain_metadata;
  EXPECT_OK(CheckWriteSupported(clustered, plain_metadata));
}

TEST(ProtocolGateTest, WriterGate) {
  Metadata plain;
  EXPECT_OK(CheckWriteSupported(Protocol{1, 2}, plain));
  EXPECT_OK(CheckWriteSupported(Protocol{1, 4}, plain));
  EXPECT_OK(CheckWriteSupported(Protocol{3, 7, std::vector<std::string>{},
                                         std::vector<std::string>{"appendOnly", "invariants"}},
                                plain));
  Status st = CheckWriteSupported(
      Protocol{3, 7, std::vector<std::string>{}, std::vector<std::string>{"someFutureFeature"}},
      plain);
  ASSERT_RAISES(NotSupported, st);
  EXPECT_NE(st.message().find("someFutureFeature"), std::string::npos) << st.ToString();
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
  static std::string Dir() {
    return silt::testing::ConformanceDir(SILT_CONFORMANCE_DIR) + "/delta-golden";
  }
  void SetUp() override { SILT_REQUIRE_CONFORMANCE_DATA(Dir()); }
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
  ASSERT_OK_AND_ASSIGN(auto table,
                       DeltaTable::Open(fs::MakeLocalFileSystem(), Dir() + "/checkpoint"));
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
  std::string path = silt::testing::ConformanceDir(SILT_CONFORMANCE_DIR) + "/delta-golden/" + name;
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
}

TEST_F(GoldenTableTest, ScansColumnMappedNestedFields) {
  // Struct fields inside structs, arrays of structs and map values are
  // stored under physical names (and field ids); the scan returns logical
  // names at every depth.
  for (const char* name : {"table-with-columnmapping-mode-name", "table-with-columnmapping-mode-id",
                           "table-with-icebegCompatV2Enabled"}) {
    ASSERT_OK_AND_ASSIGN(auto batches, ScanGolden(name));
    ASSERT_EQ(CountRows(batches), 6) << name;
    const columnar::RecordBatch& batch = *batches[0];
    int nested = batch.schema->FieldIndex("nested_struct");
    ASSERT_GE(nested, 0) << name;
    const columnar::Column& column = *batch.column(nested);
    EXPECT_EQ(column.type->ToDdl(), "STRUCT<aa: STRING, ac: STRUCT<aca: INT>>") << name;
    EXPECT_EQ(column.null_count, 0) << name;
    const columnar::Column& aca = *column.children[1]->children[0];
    EXPECT_EQ(aca.null_count, 0) << name;
    int structs = batch.schema->FieldIndex("array_of_structs");
    ASSERT_GE(structs, 0) << name;
    const columnar::Column& elements = *batch.column(structs)->children[0];
    EXPECT_EQ(elements.type->ToDdl(), "STRUCT<ab: INT>") << name;
    EXPECT_EQ(elements.children[0]->null_count, 0) << name;
  }
}

TEST_F(GoldenTableTest, IdModeMatchesParquetFieldIdsNotNames) {
  // Renaming every physical name in the log leaves the field ids: in id
  // mode the data is still found, at every depth.
  testing::TempDir dir;
  std::string copy = dir.path() + "/t";
  std::filesystem::copy(Dir() + "/table-with-columnmapping-mode-id", copy,
                        std::filesystem::copy_options::recursive);
  std::string log = copy + "/_delta_log/" + CommitFileName(0);
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  std::string commit = text.str();
  for (size_t pos = commit.find("col-"); pos != std::string::npos; pos = commit.find("col-", pos)) {
    commit.replace(pos, 4, "renamed-");
  }
  std::ofstream(log, std::ios::trunc) << commit;
  ASSERT_OK_AND_ASSIGN(auto table, DeltaTable::Open(fs::MakeLocalFileSystem(), copy));
  ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, table->LatestSnapshot());
  ASSERT_OK_AND_ASSIGN(auto scan, TableScan::Make(table->file_system(), copy, snapshot));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr batch, scan->Next());
  ASSERT_NE(batch, nullptr);
  int byte_col = batch->schema->FieldIndex("ByteType");
  int nested = batch->schema->FieldIndex("nested_struct");
  ASSERT_GE(byte_col, 0);
  ASSERT_GE(nested, 0);
  EXPECT_EQ(batch->column(byte_col)->null_count, 0);
  EXPECT_EQ(batch->column(nested)->children[0]->null_count, 0);
  EXPECT_EQ(batch->column(nested)->children[1]->children[0]->null_count, 0);
}

TEST_F(GoldenTableTest, ScansWidenedColumnsInTheTableType) {
  ASSERT_OK_AND_ASSIGN(auto batches, ScanGolden("type-widening"));
  ASSERT_EQ(CountRows(batches), 2);
  for (const char* name : {"type-widening", "type-widening-nested"}) {
    ASSERT_OK_AND_ASSIGN(SnapshotPtr snapshot, Latest(name));
    ASSERT_OK_AND_ASSIGN(auto scanned, ScanGolden(name));
    for (const auto& batch : scanned) {
      EXPECT_TRUE(batch->schema->Equals(*snapshot->schema())) << name;
      for (int i = 0; i < batch->num_columns(); ++i) {
        EXPECT_TRUE(batch->column(i)->type->Equals(*snapshot->schema()->field(i).type)) << name;
      }
    }
  }
}

// Writes `batch` as Parquet file `path` on `fs`; returns its AddFile.
Result<AddFile> WriteDataFile(const fs::FileSystemPtr& fs, const std::string& table,
                              const std::string& name, const columnar::RecordBatch& batch) {
  SILT_ASSIGN_OR_RETURN(
      auto writer, parquet::ParquetFileWriter::Open(fs.get(), table + "/" + name, batch.schema));
  SILT_RETURN_NOT_OK(writer->WriteBatch(batch));
  SILT_ASSIGN_OR_RETURN(parquet::WriteResult written, writer->Close());
  AddFile add;
  add.path = name;
  add.size = written.file_size;
  add.modification_time = 1;
  return add;
}

columnar::RecordBatchPtr MakeBatch(columnar::SchemaPtr schema,
                                   std::vector<columnar::ColumnPtr> columns) {
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = std::move(schema);
  batch->num_rows = columns.empty() ? 0 : columns[0]->length;
  batch->columns = std::move(columns);
  return batch;
}

Result<columnar::RecordBatchPtr> ScanOnly(const fs::FileSystemPtr& fs, DeltaTable* table) {
  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table->LatestSnapshot());
  SILT_ASSIGN_OR_RETURN(auto scan, TableScan::Make(fs, table->path(), snapshot));
  SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, scan->Next());
  if (batch == nullptr) return Status::Internal("the scan returned no rows");
  return batch;
}

__int128 DecimalAt(const columnar::Column& column, int64_t row) {
  __int128 v;
  std::memcpy(&v, column.values->data() + row * 16, 16);
  return v;
}

TEST_F(DeltaTableTest, ScansNestedFieldsByPhysicalNameUnderColumnMapping) {
  using columnar::ColumnBuilder;
  // Data file columns and fields carry physical names.
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr file_schema,
                       columnar::ParseDdlSchema("c1 STRUCT<p_a: INT, p_dropped: INT>, "
                                                "c2 ARRAY<STRUCT<p_x: STRING>>, "
                                                "c3 MAP<STRING, STRUCT<p_y: BIGINT>>"));
  ColumnBuilder c1(file_schema->field(0).type);
  c1.child(0)->Append<int32_t>(7);
  c1.child(1)->Append<int32_t>(8);
  c1.AppendValid();
  ColumnBuilder c2(file_schema->field(1).type);
  c2.child(0)->child(0)->AppendString("x0");
  c2.child(0)->AppendValid();
  c2.CloseList();
  ColumnBuilder c3(file_schema->field(2).type);
  c3.child(0)->child(0)->AppendString("k");
  c3.child(0)->child(1)->child(0)->Append<int64_t>(42);
  c3.child(0)->child(1)->AppendValid();
  c3.child(0)->AppendValid();
  c3.CloseList();
  ASSERT_OK_AND_ASSIGN(
      AddFile add, WriteDataFile(fs_, "/t", "part-0.parquet",
                                 *MakeBatch(file_schema, {c1.Finish(), c2.Finish(), c3.Finish()})));
  auto meta = [](const char* physical) {
    return std::string(R"({"delta.columnMapping.physicalName":")") + physical + "\"}";
  };
  std::string schema =
      R"({"type":"struct","fields":[)"
      R"({"name":"s","type":{"type":"struct","fields":[)"
      R"({"name":"a","type":"integer","nullable":true,"metadata":)" +
      meta("p_a") + "}," + R"({"name":"b","type":"integer","nullable":true,"metadata":)" +
      meta("p_b") + "}]}," + R"("nullable":true,"metadata":)" + meta("c1") + "}," +
      R"({"name":"arr","type":{"type":"array","elementType":{"type":"struct","fields":[)"
      R"({"name":"x","type":"string","nullable":true,"metadata":)" +
      meta("p_x") + "}]}," + R"("containsNull":true},"nullable":true,"metadata":)" + meta("c2") +
      "}," +
      R"({"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"struct",)"
      R"("fields":[{"name":"y","type":"long","nullable":true,"metadata":)" +
      meta("p_y") + "}]}," + R"("valueContainsNull":true},"nullable":true,"metadata":)" +
      meta("c3") + "}]}";
  CommitActions v0;
  v0.commit_info_json = R"({"timestamp":1000})";
  v0.protocol = Protocol{2, 5};
  v0.metadata = TestMetadata({{"delta.columnMapping.mode", "name"}});
  v0.metadata->schema_string = schema;
  v0.metadata->partition_columns.clear();
  v0.adds = {add};
  WriteCommit(0, v0);

  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr batch, ScanOnly(fs_, table_.get()));
  ASSERT_OK(columnar::ValidateBatch(*batch));
  ASSERT_EQ(batch->num_rows, 1);
  const columnar::Column& s = *batch->column(0);
  EXPECT_EQ(s.type->ToDdl(), "STRUCT<a: INT, b: INT>");
  EXPECT_EQ(s.children[0]->Value<int32_t>(0), 7);
  EXPECT_TRUE(s.children[1]->IsNull(0)) << "a field the file lacks reads as null";
  const columnar::Column& arr = *batch->column(1);
  EXPECT_EQ(arr.type->ToDdl(), "ARRAY<STRUCT<x: STRING>>");
  EXPECT_EQ(arr.children[0]->children[0]->StringValue(0), "x0");
  const columnar::Column& m = *batch->column(2);
  EXPECT_EQ(m.type->ToDdl(), "MAP<STRING, STRUCT<y: BIGINT>>");
  EXPECT_EQ(m.children[0]->children[0]->StringValue(0), "k");
  EXPECT_EQ(m.children[0]->children[1]->children[0]->Value<int64_t>(0), 42);
}

TEST_F(DeltaTableTest, IdModeRefusesDataFilesWithoutFieldIds) {
  using columnar::ColumnBuilder;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr file_schema, columnar::ParseDdlSchema("c1 INT"));
  ColumnBuilder c1(file_schema->field(0).type);
  c1.Append<int32_t>(1);
  ASSERT_OK_AND_ASSIGN(AddFile add, WriteDataFile(fs_, "/t", "part-0.parquet",
                                                  *MakeBatch(file_schema, {c1.Finish()})));
  CommitActions v0;
  v0.commit_info_json = R"({"timestamp":1000})";
  v0.protocol = Protocol{2, 5};
  v0.metadata = TestMetadata({{"delta.columnMapping.mode", "id"}});
  v0.metadata->schema_string =
      R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":)"
      R"({"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"c1"}}]})";
  v0.metadata->partition_columns.clear();
  v0.adds = {add};
  WriteCommit(0, v0);
  auto r = ScanOnly(fs_, table_.get());
  ASSERT_RAISES(Corruption, r);
  EXPECT_NE(r.status().message().find("field ids"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("part-0.parquet"), std::string::npos)
      << r.status().ToString();
}

TEST_F(DeltaTableTest, ScansFilesWrittenBeforeATypeWideningInTheNewType) {
  using columnar::ColumnBuilder;
  ASSERT_OK_AND_ASSIGN(
      columnar::SchemaPtr file_schema,
      columnar::ParseDdlSchema("i INT, f FLOAT, d DATE, dec DECIMAL(5,2), s STRUCT<a: SMALLINT>, "
                               "arr ARRAY<INT>, m MAP<INT, INT>, b TINYINT"));
  ColumnBuilder i(file_schema->field(0).type);
  i.Append<int32_t>(-7);
  i.AppendNull();
  ColumnBuilder f(file_schema->field(1).type);
  f.Append<float>(1.5f);
  f.Append<float>(-0.25f);
  ColumnBuilder d(file_schema->field(2).type);
  d.Append<int32_t>(19000);
  d.Append<int32_t>(-1);
  ColumnBuilder dec(file_schema->field(3).type);
  dec.Append<__int128>(12345);  // 123.45
  dec.Append<__int128>(-1);     // -0.01
  ColumnBuilder s(file_schema->field(4).type);
  for (int16_t v : {int16_t{-3}, int16_t{4}}) {
    s.child(0)->Append<int16_t>(v);
    s.AppendValid();
  }
  ColumnBuilder arr(file_schema->field(5).type);
  arr.child(0)->Append<int32_t>(1);
  arr.child(0)->Append<int32_t>(2);
  arr.CloseList();
  arr.CloseList();
  ColumnBuilder m(file_schema->field(6).type);
  m.child(0)->child(0)->Append<int32_t>(5);
  m.child(0)->child(1)->Append<int32_t>(6);
  m.child(0)->AppendValid();
  m.CloseList();
  m.AppendNull();
  ColumnBuilder b(file_schema->field(7).type);
  b.Append<int8_t>(-128);
  b.Append<int8_t>(127);
  ASSERT_OK_AND_ASSIGN(
      AddFile add,
      WriteDataFile(fs_, "/t", "part-0.parquet",
                    *MakeBatch(file_schema, {i.Finish(), f.Finish(), d.Finish(), dec.Finish(),
                                             s.Finish(), arr.Finish(), m.Finish(), b.Finish()})));
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr table_schema,
                       columnar::ParseDdlSchema(
                           "i BIGINT, f DOUBLE, d TIMESTAMP_NTZ, dec DECIMAL(8,3), "
                           "s STRUCT<a: BIGINT>, arr ARRAY<DOUBLE>, m MAP<BIGINT, DECIMAL(12,2)>, "
                           "b DECIMAL(5,1)"));
  CommitActions v0;
  v0.commit_info_json = R"({"timestamp":1000})";
  v0.protocol = Protocol{3, 7, std::vector<std::string>{"typeWidening"},
                         std::vector<std::string>{"typeWidening"}};
  v0.metadata = TestMetadata({{"delta.enableTypeWidening", "true"}});
  v0.metadata->schema_string = columnar::SchemaToJson(*table_schema);
  v0.metadata->partition_columns.clear();
  v0.adds = {add};
  WriteCommit(0, v0);

  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr batch, ScanOnly(fs_, table_.get()));
  ASSERT_OK(columnar::ValidateBatch(*batch));
  ASSERT_EQ(batch->num_rows, 2);
  for (int c = 0; c < batch->num_columns(); ++c) {
    EXPECT_TRUE(batch->column(c)->type->Equals(*table_schema->field(c).type))
        << table_schema->field(c).name << ": " << batch->column(c)->type->ToDdl();
  }
  EXPECT_EQ(batch->column(0)->Value<int64_t>(0), -7);
  EXPECT_TRUE(batch->column(0)->IsNull(1));
  EXPECT_EQ(batch->column(1)->Value<double>(0), 1.5);
  EXPECT_EQ(batch->column(1)->Value<double>(1), -0.25);
  EXPECT_EQ(batch->column(2)->Value<int64_t>(0), 19000LL * 86400 * 1000000);
  EXPECT_EQ(batch->column(2)->Value<int64_t>(1), -86400LL * 1000000);
  EXPECT_TRUE(DecimalAt(*batch->column(3), 0) == 123450);
  EXPECT_TRUE(DecimalAt(*batch->column(3), 1) == -10);
  EXPECT_EQ(batch->column(4)->children[0]->Value<int64_t>(0), -3);
  EXPECT_EQ(batch->column(4)->children[0]->Value<int64_t>(1), 4);
  EXPECT_EQ(batch->column(5)->children[0]->Value<double>(1), 2.0);
  const columnar::Column& entries = *batch->column(6)->children[0];
  EXPECT_EQ(entries.children[0]->Value<int64_t>(0), 5);
  EXPECT_TRUE(DecimalAt(*entries.children[1], 0) == 600);
  EXPECT_TRUE(batch->column(6)->IsNull(1));
  EXPECT_TRUE(DecimalAt(*batch->column(7), 0) == -1280);
  EXPECT_TRUE(DecimalAt(*batch->column(7), 1) == 1270);
}

TEST_F(DeltaTableTest, NarrowingATypeIsRefusedNamingTheColumn) {
  using columnar::ColumnBuilder;
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr file_schema,
                       columnar::ParseDdlSchema("s STRUCT<a: BIGINT>"));
  ColumnBuilder s(file_schema->field(0).type);
  s.child(0)->Append<int64_t>(1);
  s.AppendValid();
  ASSERT_OK_AND_ASSIGN(AddFile add, WriteDataFile(fs_, "/t", "part-0.parquet",
                                                  *MakeBatch(file_schema, {s.Finish()})));
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr table_schema,
                       columnar::ParseDdlSchema("s STRUCT<a: INT>"));
  CommitActions v0;
  v0.commit_info_json = R"({"timestamp":1000})";
  v0.protocol = Protocol();
  v0.metadata = TestMetadata();
  v0.metadata->schema_string = columnar::SchemaToJson(*table_schema);
  v0.metadata->partition_columns.clear();
  v0.adds = {add};
  WriteCommit(0, v0);
  auto r = ScanOnly(fs_, table_.get());
  ASSERT_RAISES(NotSupported, r);
  EXPECT_NE(r.status().message().find("'s.a'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("part-0.parquet"), std::string::npos)
      << r.status().ToString();
}

TEST(FileSkipperTest, NestedStatsUsePhysicalNamesAndSkipWidenedFields) {
  // Stats of a column-mapped table are keyed by physical names at every
  // depth; stats of a widened field may hold the old type and are not used.
  Metadata m;
  m.configuration = {{"delta.columnMapping.mode", "name"}};
  ASSERT_OK_AND_ASSIGN(
      m.schema, columnar::SchemaFromJson(
                    R"({"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[)"
                    R"({"name":"a","type":"integer","nullable":true,)"
                    R"("metadata":{"delta.columnMapping.physicalName":"p_a"}},)"
                    R"({"name":"w","type":"double","nullable":true,"metadata":{)"
                    R"("delta.columnMapping.physicalName":"p_w","delta.typeChanges":)"
                    R"([{"fromType":"float","toType":"double","tableVersion":1}]}}]},)"
                    R"("nullable":true,"metadata":{"delta.columnMapping.physicalName":"c1"}}]})"));
  AddFile file;
  file.path = "x.parquet";
  file.stats = R"({"numRecords":3,"minValues":{"c1":{"p_a":10,"p_w":-3.4}},)"
               R"("maxValues":{"c1":{"p_a":20,"p_w":-3.4}},"nullCount":{"c1":{"p_a":0,"p_w":0}}})";
  columnar::PredicateValue five;
  five.i64 = 5;
  columnar::ColumnPredicate below{
      "s.a", columnar::DataType::Int(), columnar::PredicateOp::kLt, {five}};
  EXPECT_EQ(FileSkipper::Make(m, {below}).Decide(file), SkipDecision::kSkipByStats);
  columnar::PredicateValue bound;
  bound.f64 = -3.4;
  // -3.4f widened is -3.4000000953674316 < -3.4, below the float stats' min.
  columnar::ColumnPredicate widened{
      "s.w", columnar::DataType::Double(), columnar::PredicateOp::kLt, {bound}};
  EXPECT_EQ(FileSkipper::Make(m, {widened}).Decide(file), SkipDecision::kKeep);
}

}  // namespace
}  // namespace silt::delta
