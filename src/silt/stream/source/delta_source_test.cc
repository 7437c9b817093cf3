#include "silt/stream/source/delta_source.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

constexpr std::string_view kSchemaJson =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";

delta::AddFile Add(std::string path, int64_t mtime, bool data_change = true) {
  delta::AddFile a;
  a.path = std::move(path);
  a.size = 100;
  a.modification_time = mtime;
  a.data_change = data_change;
  return a;
}

delta::RemoveFile Remove(std::string path) {
  delta::RemoveFile r;
  r.path = std::move(path);
  r.deletion_timestamp = 7;
  return r;
}

class DeltaSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_ = fs::MakeMemoryFileSystem(); }

  void WriteCommit(int64_t version, delta::CommitActions actions) {
    if (version == 0) {
      actions.protocol = delta::Protocol();
      delta::Metadata m;
      m.id = "table-id";
      m.schema_string = std::string(kSchemaJson);
      m.created_time = 1;
      if (change_data_feed_) m.configuration["delta.enableChangeDataFeed"] = "true";
      actions.metadata = m;
    }
    actions.commit_info_json = R"({"timestamp":1000,"operation":"WRITE"})";
    ASSERT_OK(fs_->WriteFile("/t/_delta_log/" + delta::CommitFileName(version),
                             delta::SerializeCommit(actions)));
  }

  std::unique_ptr<DeltaSource> Make(std::map<std::string, std::string> options) {
    SourceSpec spec;
    spec.format = "delta";
    spec.options = std::move(options);
    spec.options.emplace("path", "/t");
    Result<DeltaSourceOptions> parsed = DeltaSourceOptions::FromSpec(spec);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    SourceContext context;
    context.checkpoint_fs = fs_;
    context.metadata_dir = "/ckpt/sources/0";
    context.data_fs = fs_;
    Result<std::unique_ptr<DeltaSource>> source = DeltaSource::Make(*parsed, context);
    EXPECT_TRUE(source.ok()) << source.status().ToString();
    auto out = std::move(source).ValueOrDie();
    EXPECT_TRUE(out->Restore(std::nullopt).ok());
    return out;
  }

  // The offsets a query plans from the start until nothing is new, as
  // "version/index/initial" strings.
  std::vector<std::string> PlanAll(DeltaSource* source, std::optional<std::string> start = {}) {
    std::vector<std::string> out;
    for (int i = 0; i < 100; ++i) {
      Result<std::optional<std::string>> next = source->LatestOffset(start, {});
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !*next) break;
      Result<DeltaSourceOffset> parsed = DeltaSourceOffset::Parse(**next);
      EXPECT_TRUE(parsed.ok());
      out.push_back(std::to_string(parsed->reservoir_version) + "/" +
                    std::to_string(parsed->index) + (parsed->is_initial_snapshot ? "/i" : ""));
      start = *next;
    }
    return out;
  }

  fs::FileSystemPtr fs_;
  bool change_data_feed_ = false;
};

TEST(DeltaSourceOffsetTest, SerializesAsDeltaSparkAndParsesItsVersions) {
  DeltaSourceOffset offset{"abc", 4, DeltaSourceOffset::kBaseIndex, false};
  EXPECT_EQ(offset.ToJson(),
            R"({"sourceVersion":1,"reservoirId":"abc","reservoirVersion":4,"index":-1,)"
            R"("isStartingVersion":false})");
  ASSERT_OK_AND_ASSIGN(DeltaSourceOffset back, DeltaSourceOffset::Parse(offset.ToJson()));
  EXPECT_EQ(back, offset);
  ASSERT_OK_AND_ASSIGN(
      DeltaSourceOffset v3,
      DeltaSourceOffset::Parse(R"({"sourceVersion":3,"reservoirId":"abc","reservoirVersion":4,)"
                               R"("index":-100,"isStartingVersion":false})"));
  EXPECT_EQ(v3, offset);
  EXPECT_TRUE(DeltaSourceOffset::Parse(R"({"sourceVersion":3,"reservoirId":"abc",)"
                                       R"("reservoirVersion":4,"index":-20,)"
                                       R"("isStartingVersion":false})")
                  .status()
                  .IsNotSupported());
  EXPECT_FALSE(DeltaSourceOffset::Parse(R"({"sourceVersion":2,"reservoirId":"abc",)"
                                        R"("reservoirVersion":4,"index":1,)"
                                        R"("isStartingVersion":false})")
                   .ok());
  EXPECT_FALSE(DeltaSourceOffset::Parse(R"({"logOffset":3})").ok());
}

TEST_F(DeltaSourceTest, SnapshotFirstByModificationTimeThenCommitsWithBoundaries) {
  delta::CommitActions v0;
  v0.adds = {Add("b", 20), Add("a", 20), Add("c", 10)};
  WriteCommit(0, v0);
  auto source = Make({{"maxFilesPerTrigger", "2"}});
  delta::CommitActions v1;
  v1.adds = {Add("d", 30), Add("e", 30, /*data_change=*/false), Add("f", 30)};
  WriteCommit(1, v1);
  delta::CommitActions v2;  // metadata-free, data-free commit
  v2.txns = {{"app", 1, std::nullopt}};
  WriteCommit(2, v2);
  // Snapshot c, a (| b, END, BASE 1, d |), f, END 1, BASE 2, END 2.
  EXPECT_EQ(PlanAll(source.get()), (std::vector<std::string>{"0/1/i", "1/0", "3/-1"}));
}

TEST_F(DeltaSourceTest, RemovesStopTheStreamUnlessAnOptionAllowsThem) {
  delta::CommitActions v0;
  v0.adds = {Add("a", 1)};
  WriteCommit(0, v0);
  // The queries start at version 0; the removes come later.
  auto by_default = Make({});
  auto ignore_deletes = Make({{"ignoreDeletes", "true"}});
  auto skip = Make({{"skipChangeCommits", "true"}});
  auto reread = Make({{"ignoreChanges", "true"}, {"maxFilesPerTrigger", "1"}});
  delta::CommitActions v1;
  v1.removes = {Remove("a")};
  WriteCommit(1, v1);
  delta::CommitActions v2;
  v2.removes = {Remove("b")};
  v2.adds = {Add("b2", 3)};
  WriteCommit(2, v2);

  Status deletes = by_default->LatestOffset(std::nullopt, {}).status();
  EXPECT_TRUE(deletes.IsNotSupported()) << deletes.ToString();
  EXPECT_NE(deletes.message().find("[DELTA_SOURCE_IGNORE_DELETE]"), std::string::npos);
  EXPECT_NE(deletes.message().find("at version 1"), std::string::npos);
  EXPECT_NE(deletes.message().find("'ignoreDeletes'"), std::string::npos);

  Status changes = ignore_deletes->LatestOffset(std::nullopt, {}).status();
  EXPECT_NE(changes.message().find("[DELTA_SOURCE_TABLE_IGNORE_CHANGES]"), std::string::npos)
      << changes.ToString();
  EXPECT_NE(changes.message().find("at version 2"), std::string::npos);
  EXPECT_NE(changes.message().find("'skipChangeCommits'"), std::string::npos);

  EXPECT_EQ(PlanAll(skip.get()), (std::vector<std::string>{"3/-1"}));
  EXPECT_EQ(PlanAll(reread.get()), (std::vector<std::string>{"2/-1", "3/-1"}));
}

TEST_F(DeltaSourceTest, OffsetsOfAnotherTableAreRefused) {
  delta::CommitActions v0;
  v0.adds = {Add("a", 1)};
  WriteCommit(0, v0);
  auto source = Make({});
  Status st = source->Restore(DeltaSourceOffset{"other", 1, -1, false}.ToJson());
  EXPECT_NE(st.message().find("DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE"), std::string::npos)
      << st.ToString();
}

TEST_F(DeltaSourceTest, UnsupportedOptionsAreRefusedNamingThem) {
  SourceSpec spec;
  spec.format = "delta";
  spec.options = {{"path", "/t"}, {"schemaTrackingLocation", "/s"}};
  Status st = DeltaSourceOptions::FromSpec(spec).status();
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("source.options.schemaTrackingLocation"), std::string::npos);
  spec.options = {{"path", "/t"}, {"startingVersion", "1"}, {"startingTimestamp", "2026-01-01"}};
  EXPECT_FALSE(DeltaSourceOptions::FromSpec(spec).ok());
}

delta::AddCdcFile Cdc(std::string path) {
  delta::AddCdcFile c;
  c.path = std::move(path);
  c.size = 100;
  return c;
}

TEST_F(DeltaSourceTest, ChangeFeedAdmitsChangeFilesAndDeletionVectorCommitsWhole) {
  change_data_feed_ = true;
  delta::CommitActions v0;
  v0.adds = {Add("a", 1), Add("b", 2)};
  WriteCommit(0, v0);
  auto source = Make({{"readChangeFeed", "true"}, {"maxFilesPerTrigger", "2"}});
  ASSERT_EQ(source->schema()->num_fields(), 4);
  EXPECT_EQ(source->schema()->field(1).name, "_change_type");
  EXPECT_EQ(source->schema()->field(3).type->id(), columnar::TypeId::kTimestamp);
  delta::CommitActions v1;  // an append: file by file
  v1.adds = {Add("c", 3), Add("d", 3), Add("e", 3)};
  WriteCommit(1, v1);
  delta::CommitActions v2;  // an UPDATE with change files: whole
  v2.cdc_files = {Cdc("_change_data/x"), Cdc("_change_data/y"), Cdc("_change_data/z")};
  v2.removes = {Remove("c")};
  v2.adds = {Add("c2", 4)};
  WriteCommit(2, v2);
  {
    // Without limits (Trigger.Once) a change-file commit has its start and
    // end steps: the offset moves on to the next version.
    auto once = Make({{"readChangeFeed", "true"}, {"startingVersion", "2"}});
    ReadLimit all;
    all.all_available = true;
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, once->LatestOffset(std::nullopt, all));
    ASSERT_TRUE(end.has_value());
    ASSERT_OK_AND_ASSIGN(DeltaSourceOffset offset, DeltaSourceOffset::Parse(*end));
    EXPECT_EQ(offset.reservoir_version, 3);
    EXPECT_EQ(offset.index, DeltaSourceOffset::kBaseIndex);
  }
  delta::CommitActions v3;  // a DELETE by deletion vector: whole
  v3.removes = {Remove("d")};
  delta::AddFile dv = Add("d", 3);
  dv.deletion_vector = delta::DeletionVectorDescriptor{};
  dv.deletion_vector->storage_type = "i";
  dv.deletion_vector->path_or_inline_dv = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L";
  dv.deletion_vector->size_in_bytes = 40;
  dv.deletion_vector->cardinality = 1;
  v3.adds = {dv};
  WriteCommit(3, v3);
  // Snapshot a, b, END (the end placeholder is always admitted); c, d |
  // e, END 1 (x y z do not fit) | x y z (a batch's first commit always
  // fits; ends at z) | v3 whole.
  EXPECT_EQ(PlanAll(source.get()),
            (std::vector<std::string>{"1/-1", "1/1", "2/-1", "2/2", "4/-1"}));
}

TEST_F(DeltaSourceTest, ChangeFeedSkipsMergesThatChangedNoRowAndDropsExcludedFiles) {
  change_data_feed_ = true;
  delta::CommitActions v0;
  WriteCommit(0, v0);
  auto source = Make({{"readChangeFeed", "true"},
                      {"startingVersion", "1"},
                      {"maxFilesPerTrigger", "1"},
                      {"excludeRegex", "skip-me"}});
  delta::CommitActions v1;
  v1.adds = {Add("a", 1), Add("skip-me", 1), Add("b", 1)};
  WriteCommit(1, v1);
  delta::CommitActions v2;
  v2.removes = {Remove("a")};
  v2.adds = {Add("a2", 2)};
  v2.commit_info_json = R"({"operation":"MERGE","operationMetrics":{"numTargetRowsInserted":"0",)"
                        R"("numTargetRowsUpdated":"0","numTargetRowsDeleted":"0"}})";
  ASSERT_OK(
      fs_->WriteFile("/t/_delta_log/" + delta::CommitFileName(2), delta::SerializeCommit(v2)));
  // a | b (skip-me is not a step), END 1 | v2's files are not steps.
  EXPECT_EQ(PlanAll(source.get()), (std::vector<std::string>{"1/0", "2/-1", "3/-1"}));
}

TEST_F(DeltaSourceTest, ChangeFeedBatchNeedsTheFeedOnAtItsStartVersion) {
  delta::CommitActions v0;
  v0.adds = {Add("a", 1)};
  WriteCommit(0, v0);
  auto source = Make({{"readChangeFeed", "true"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  Status st = source->GetBatch(std::nullopt, *end).status();
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("[DELTA_MISSING_CHANGE_DATA]"), std::string::npos);
  EXPECT_NE(st.message().find("not recorded for version [0]"), std::string::npos);
}

}  // namespace
}  // namespace silt::stream
