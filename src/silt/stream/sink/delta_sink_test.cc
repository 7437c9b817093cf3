#include "silt/stream/sink/delta_sink.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>

#include "silt/columnar/builder.h"
#include "silt/delta/protocol.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;

columnar::SchemaPtr Schema() {
  return DataType::Struct({Field{"device", DataType::String()}, Field{"n", DataType::Long()}});
}

columnar::RecordBatch Rows(const std::vector<std::pair<std::string, int64_t>>& rows,
                           columnar::SchemaPtr schema = Schema()) {
  ColumnBuilder device(DataType::String());
  ColumnBuilder n(DataType::Long());
  for (const auto& [d, v] : rows) {
    device.AppendString(d);
    n.Append<int64_t>(v);
  }
  columnar::RecordBatch batch;
  batch.schema = std::move(schema);
  batch.num_rows = static_cast<int64_t>(rows.size());
  batch.columns = {device.Finish(), n.Finish()};
  return batch;
}

class DeltaSinkTest : public ::testing::Test {
 protected:
  void SetUp() override { fs_ = fs::MakeMemoryFileSystem(); }

  SinkSpec Spec(std::string mode, std::map<std::string, std::string> options = {}) {
    SinkSpec spec;
    spec.format = "delta";
    spec.path = "memory://t";
    spec.output_mode = std::move(mode);
    spec.options = std::move(options);
    return spec;
  }

  std::unique_ptr<DeltaSink> Make(const SinkSpec& spec, columnar::SchemaPtr schema = Schema()) {
    Result<std::unique_ptr<DeltaSink>> sink =
        DeltaSink::Make(spec, std::move(schema), "query-1", fs_, &clock_);
    EXPECT_TRUE(sink.ok()) << sink.status().ToString();
    return sink.ok() ? std::move(*sink) : nullptr;
  }

  // Runs batch `id` through `sink`; returns what Commit reports.
  SinkBatchResult Run(DeltaSink* sink, int64_t id, const columnar::RecordBatch& rows) {
    Result<bool> begun = sink->Begin(id);
    EXPECT_TRUE(begun.ok()) << begun.status().ToString();
    EXPECT_TRUE(sink->Write(rows).ok());
    Result<SinkBatchResult> result = sink->Commit();
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : SinkBatchResult();
  }

  // The table's rows at `version` (latest when -1) as "device=n", sorted.
  std::vector<std::string> Table(int64_t version = -1) {
    std::vector<std::string> out;
    auto table = delta::DeltaTable::Open(fs_, "memory://t");
    EXPECT_TRUE(table.ok());
    Result<delta::SnapshotPtr> snapshot =
        version < 0 ? (*table)->LatestSnapshot() : (*table)->SnapshotAt(version);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    if (!snapshot.ok()) return out;
    auto scan = delta::TableScan::Make(fs_, "memory://t", *snapshot);
    EXPECT_TRUE(scan.ok());
    while (true) {
      Result<columnar::RecordBatchPtr> batch = (*scan)->Next();
      EXPECT_TRUE(batch.ok());
      if (!batch.ok() || *batch == nullptr) break;
      for (int64_t row = 0; row < (*batch)->num_rows; ++row) {
        const columnar::Column& first = *(*batch)->column(0);
        const columnar::Column& second = *(*batch)->column(1);
        std::string text(first.StringValue(row));
        text += "=";
        text += second.type->id() == columnar::TypeId::kLong
                    ? std::to_string(second.Value<int64_t>(row))
                    : std::string(second.StringValue(row));
        out.push_back(std::move(text));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::FileSystemPtr fs_;
  ManualClock clock_{1'700'000'000'000'000};
};

using Lines = std::vector<std::string>;

TEST_F(DeltaSinkTest, CompleteModeReplacesTheTableEveryBatch) {
  std::unique_ptr<DeltaSink> sink = Make(Spec("complete"));
  ASSERT_NE(sink, nullptr);
  EXPECT_EQ(Run(sink.get(), 0, Rows({{"a", 1}, {"b", 1}})).table_version, 0);
  EXPECT_EQ(Run(sink.get(), 1, Rows({{"a", 2}, {"b", 1}, {"c", 1}})).table_version, 1);
  // An empty result empties the table, and still records the batch.
  EXPECT_EQ(Run(sink.get(), 2, Rows({})).table_version, 2);
  EXPECT_EQ(Run(sink.get(), 3, Rows({{"d", 7}})).table_version, 3);

  EXPECT_EQ(Table(0), (Lines{"a=1", "b=1"}));
  EXPECT_EQ(Table(1), (Lines{"a=2", "b=1", "c=1"}));
  EXPECT_EQ(Table(2), Lines{});
  EXPECT_EQ(Table(), Lines{"d=7"});

  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(fs_, "memory://t"));
  ASSERT_OK_AND_ASSIGN(delta::CommitActions c, table->ReadCommit(1));
  ASSERT_EQ(c.removes.size(), 1u);
  EXPECT_TRUE(c.removes[0].data_change);
  EXPECT_EQ(c.removes[0].deletion_timestamp, 1'700'000'000'000);
  ASSERT_EQ(c.txns.size(), 1u);
  EXPECT_EQ(c.txns[0].app_id, "query-1");
  EXPECT_EQ(c.txns[0].version, 1);
  simdjson::dom::parser parser;
  simdjson::dom::element info;
  ASSERT_EQ(parser.parse(*c.commit_info_json).get(info), simdjson::SUCCESS);
  EXPECT_EQ(info["operation"].get_string().value(), "STREAMING UPDATE");
  EXPECT_EQ(info["operationParameters"]["outputMode"].get_string().value(), "Complete");
  EXPECT_EQ(info["operationParameters"]["queryId"].get_string().value(), "query-1");
  EXPECT_EQ(info["operationParameters"]["epochId"].get_string().value(), "1");
  EXPECT_FALSE(info["isBlindAppend"].get_bool().value());
  EXPECT_EQ(info["operationMetrics"]["numRemovedFiles"].get_string().value(), "1");
  EXPECT_EQ(info["operationMetrics"]["numAddedFiles"].get_string().value(), "1");
  EXPECT_EQ(info["operationMetrics"]["numOutputRows"].get_string().value(), "3");
}

TEST_F(DeltaSinkTest, CompleteModeSkipsABatchTheTableHolds) {
  std::unique_ptr<DeltaSink> first = Make(Spec("complete"));
  ASSERT_NE(first, nullptr);
  Run(first.get(), 0, Rows({{"a", 1}}));
  Run(first.get(), 1, Rows({{"a", 2}}));
  // A re-run of batch 1 (crash before commits/1) writes nothing.
  std::unique_ptr<DeltaSink> rerun = Make(Spec("complete"));
  ASSERT_OK_AND_ASSIGN(bool run, rerun->Begin(1));
  EXPECT_FALSE(run);
  ASSERT_OK(rerun->Write(Rows({{"zzz", 9}})));
  ASSERT_OK_AND_ASSIGN(SinkBatchResult result, rerun->Commit());
  EXPECT_TRUE(result.skipped_duplicate);
  EXPECT_EQ(Table(), Lines{"a=2"});
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(fs_, "memory://t"));
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table->ListVersions());
  EXPECT_EQ(versions.back(), 1);
}

TEST_F(DeltaSinkTest, CompleteModeReplacesAnAppendedTable) {
  std::unique_ptr<DeltaSink> append = Make(Spec("append"));
  Run(append.get(), 0, Rows({{"a", 1}}));
  Run(append.get(), 1, Rows({{"b", 1}}));
  std::unique_ptr<DeltaSink> complete = Make(Spec("complete"));
  Run(complete.get(), 2, Rows({{"c", 3}}));
  EXPECT_EQ(Table(), Lines{"c=3"});
}

TEST_F(DeltaSinkTest, CompleteModeKeepsTheSchemaUnlessOverwriteSchemaIsSet) {
  std::unique_ptr<DeltaSink> sink = Make(Spec("complete"));
  Run(sink.get(), 0, Rows({{"a", 1}}));
  // The query's `n` is now a string: refused, as for appends, when the sink
  // is made (before a query creates its checkpoint) ...
  columnar::SchemaPtr changed =
      DataType::Struct({Field{"device", DataType::String()}, Field{"n", DataType::String()}});
  ASSERT_RAISES(InvalidArgument,
                DeltaSink::Make(Spec("complete"), changed, "query-1", fs_, &clock_).status());
  // ... unless overwriteSchema lets complete mode replace the schema.
  std::unique_ptr<DeltaSink> overwrite =
      Make(Spec("complete", {{"overwriteSchema", "true"}}), changed);
  ASSERT_OK_AND_ASSIGN(bool run, overwrite->Begin(1));
  ASSERT_TRUE(run);
  ColumnBuilder device(DataType::String());
  ColumnBuilder n(DataType::String());
  device.AppendString("x");
  n.AppendString("many");
  columnar::RecordBatch batch;
  batch.schema = changed;
  batch.num_rows = 1;
  batch.columns = {device.Finish(), n.Finish()};
  ASSERT_OK(overwrite->Write(batch));
  ASSERT_OK(overwrite->Commit().status());
  EXPECT_EQ(Table(), Lines{"x=many"});
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(fs_, "memory://t"));
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr latest, table->LatestSnapshot());
  EXPECT_EQ(latest->schema()->field(1).type->id(), columnar::TypeId::kString);
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr first, table->SnapshotAt(0));
  EXPECT_EQ(latest->metadata().id, first->metadata().id);
}

TEST_F(DeltaSinkTest, CompleteModeIgnoresAutoCompact) {
  // A compaction between a batch's snapshot and its commit would make the
  // batch conflict, and there is nothing to compact in a rewritten table.
  std::unique_ptr<DeltaSink> sink = Make(Spec("complete", {{"autoCompact", "true"},
                                                           {"autoCompact.everyNCommits", "1"},
                                                           {"autoCompact.minNumFiles", "2"}}));
  ASSERT_NE(sink, nullptr);
  for (int64_t batch = 0; batch < 3; ++batch) Run(sink.get(), batch, Rows({{"a", batch}}));
  sink.reset();
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(fs_, "memory://t"));
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table->ListVersions());
  EXPECT_EQ(versions, (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(DeltaSinkTest, UpdateModeIsRefusedAtCreation) {
  Result<std::unique_ptr<DeltaSink>> sink =
      DeltaSink::Make(Spec("update"), Schema(), "q", fs_, &clock_);
  ASSERT_RAISES(InvalidArgument, sink.status());
  EXPECT_EQ(sink.status().message().rfind("sink.outputMode: update mode on a Delta sink is not "
                                          "supported yet",
                                          0),
            0u)
      << sink.status().ToString();
}

TEST_F(DeltaSinkTest, ComputesGeneratedAndIdentityColumnsAcrossPartWriters) {
  SinkSpec spec = Spec("append");
  spec.generated_columns = {{"tag", "concat(device, '#', n)"}};
  spec.identity_columns = {{"id", "GENERATED ALWAYS AS IDENTITY (START WITH 5 INCREMENT BY 2)"}};
  std::unique_ptr<DeltaSink> sink = Make(spec);
  ASSERT_NE(sink, nullptr);
  for (int64_t batch = 0; batch < 2; ++batch) {
    ASSERT_OK_AND_ASSIGN(bool begun, sink->Begin(batch));
    ASSERT_TRUE(begun);
    ASSERT_OK_AND_ASSIGN(auto part_a, sink->OpenPartWriter());
    ASSERT_OK_AND_ASSIGN(auto part_b, sink->OpenPartWriter());
    ASSERT_OK(part_a->Write(Rows({{"a", batch}, {"b", batch}})));
    ASSERT_OK(part_b->Write(Rows({{"c", batch}})));
    ASSERT_OK(sink->Write(Rows({{"d", batch}})));
    ASSERT_OK(part_a->Close());
    ASSERT_OK(part_b->Close());
    ASSERT_OK(sink->Commit().status());
  }
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(fs_, "memory://t"));
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  const columnar::Schema& schema = *snapshot->schema();
  ASSERT_EQ(schema.ToDdl(), "STRUCT<id: BIGINT, device: STRING, n: BIGINT, tag: STRING>");
  EXPECT_EQ(schema.field(0).metadata_json,
            "{\"delta.identity.step\":2,\"delta.identity.allowExplicitInsert\":false,"
            "\"delta.identity.start\":5,\"delta.identity.highWaterMark\":19}");
  EXPECT_EQ(schema.field(3).metadata_json,
            "{\"delta.generationExpression\":\"concat(device, '#', n)\"}");
  EXPECT_TRUE(delta::SupportsWriterFeature(snapshot->protocol(), "generatedColumns"));
  EXPECT_TRUE(delta::SupportsWriterFeature(snapshot->protocol(), "identityColumns"));
  ASSERT_OK_AND_ASSIGN(auto scan, delta::TableScan::Make(fs_, "memory://t", snapshot));
  std::vector<int64_t> ids;
  Lines tags;
  while (true) {
    ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr batch, scan->Next());
    if (batch == nullptr) break;
    for (int64_t row = 0; row < batch->num_rows; ++row) {
      ids.push_back(batch->column(0)->Value<int64_t>(row));
      tags.emplace_back(batch->column(3)->StringValue(row));
    }
  }
  std::sort(ids.begin(), ids.end());
  std::sort(tags.begin(), tags.end());
  EXPECT_EQ(ids, (std::vector<int64_t>{5, 7, 9, 11, 13, 15, 17, 19}));
  EXPECT_EQ(tags, (Lines{"a#0", "a#1", "b#0", "b#1", "c#0", "c#1", "d#0", "d#1"}));
}

TEST_F(DeltaSinkTest, RefusesAGeneratedValueThatDiffersFromItsExpression) {
  SinkSpec spec = Spec("append");
  spec.generated_columns = {{"n", "length(device)"}};
  std::unique_ptr<DeltaSink> sink = Make(spec);
  ASSERT_NE(sink, nullptr);
  Run(sink.get(), 0, Rows({{"ab", 2}}));
  ASSERT_OK_AND_ASSIGN(bool begun, sink->Begin(1));
  ASSERT_TRUE(begun);
  Status refused = sink->Write(Rows({{"abc", 3}, {"x", 7}}));
  ASSERT_TRUE(refused.IsInvalidArgument()) << refused.ToString();
  EXPECT_NE(refused.message().find("DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"), std::string::npos);
  EXPECT_NE(refused.message().find("violated by row 1 of batch 1: n = 7, the expression gives 1"),
            std::string::npos)
      << refused.ToString();
  sink->Abort();
}

}  // namespace
}  // namespace silt::stream
