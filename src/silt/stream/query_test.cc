#include "silt/stream/query.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <set>

#include "silt/delta/table.h"
#include "silt/stream/checkpoint/checkpoint.h"
#include "silt/stream/checkpoint/checkpoint_lock.h"
#include "silt/testing/fault_injection_fs.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/temp_dir.h"

namespace silt::stream {
namespace {

using testing::FaultInjectionFileSystem;
using testing::FsOp;

// Reads every row of the table's latest snapshot as text "c1|c2|..." (ints,
// longs, strings, doubles; NULL for nulls).
std::vector<std::string> ReadTable(const fs::FileSystemPtr& fs, const std::string& path,
                                   std::vector<std::string> columns) {
  std::vector<std::string> rows;
  Result<std::unique_ptr<delta::DeltaTable>> table = delta::DeltaTable::Open(fs, path);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  Result<delta::SnapshotPtr> snapshot = (*table)->LatestSnapshot();
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  if (!snapshot.ok()) return rows;
  Result<std::unique_ptr<delta::TableScan>> scan =
      delta::TableScan::Make(fs, path, *snapshot, std::move(columns));
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  if (!scan.ok()) return rows;
  while (true) {
    Result<columnar::RecordBatchPtr> batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    for (int64_t row = 0; row < (*batch)->num_rows; ++row) {
      std::string text;
      for (int col = 0; col < (*batch)->num_columns(); ++col) {
        const columnar::Column& column = *(*batch)->column(col);
        if (col > 0) text += "|";
        if (column.IsNull(row)) {
          text += "NULL";
          continue;
        }
        switch (column.type->id()) {
          case columnar::TypeId::kInt:
          case columnar::TypeId::kDate: text += std::to_string(column.Value<int32_t>(row)); break;
          case columnar::TypeId::kLong:
          case columnar::TypeId::kTimestamp:
            text += std::to_string(column.Value<int64_t>(row));
            break;
          case columnar::TypeId::kDouble: text += std::to_string(column.Value<double>(row)); break;
          default: text += std::string(column.StringValue(row));
        }
      }
      rows.push_back(std::move(text));
    }
  }
  return rows;
}

JobSpec ParseJob(const std::string& yaml) {
  Result<JobSpec> job = ParseJobYaml(yaml, "test.yaml");
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? *job : JobSpec();
}

// A generator job: every record's (partition, offset) identifies it, so
// duplicates and gaps are visible in the table.
std::string GeneratorJob(int64_t total_rows, int64_t per_trigger, const std::string& trigger) {
  return R"(
name: gen
source:
  format: generator
  options:
    totalRows: )" +
         std::to_string(total_rows) + R"(
    maxOffsetsPerTrigger: )" +
         std::to_string(per_trigger) + R"(
transform:
  - select:
      - CAST(key AS STRING) AS device_id
      - partition
      - offset
sink:
  path: memory://table
checkpointLocation: memory://ckpt
)" + trigger +
         "\n";
}

// Checks that the table holds each of the first `total` generator records
// exactly once.
void ExpectExactlyOnce(const fs::FileSystemPtr& fs, int64_t total) {
  std::vector<std::string> rows = ReadTable(fs, "memory://table", {"partition", "offset"});
  std::set<std::string> unique(rows.begin(), rows.end());
  EXPECT_EQ(static_cast<int64_t>(rows.size()), total);
  EXPECT_EQ(unique.size(), rows.size()) << "duplicate records in the table";
}

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memory_ = fs::MakeMemoryFileSystem();
    options_.file_system = memory_;
  }
  fs::FileSystemPtr memory_;
  QueryOptions options_;
};

TEST_F(QueryTest, JsonFilesIntoPartitionedDeltaTable) {
  ASSERT_OK(memory_->WriteFile("memory://in/1.json",
                               R"({"device_id":"plug","power":84.3,"ts":"2026-06-22T08:16:00Z"}
{"device_id":"door","power":null,"ts":"2026-06-22T08:21:10Z"}
)"));
  ASSERT_OK(memory_->WriteFile("memory://in/2.json",
                               R"({"device_id":"plug","power":83.9,"ts":"2026-06-22T09:15:50Z"}
garbage line
)"));
  ASSERT_OK(memory_->WriteFile("memory://in/3.json",
                               R"({"device_id":"plug","power":85.0,"ts":"2026-06-23T00:00:05Z"})"));
  JobSpec job = ParseJob(R"(
name: files
source:
  format: json
  schema: device_id STRING, power DOUBLE, ts STRING
  options: {path: "memory://in", maxFilesPerTrigger: 2}
transform:
  - select: [device_id, power, to_timestamp(ts) AS event_time]
  - withWatermark: {eventTime: event_time, delayThreshold: 5 minutes}
  - withColumn: {event_date: to_date(event_time)}
sink:
  format: delta
  path: memory://table
  partitionBy: [event_date]
checkpointLocation: memory://ckpt
trigger: {availableNow: true}
)");
  std::vector<BatchProgress> progress;
  options_.on_progress = [&](const BatchProgress& p) { progress.push_back(p); };
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 2);
  EXPECT_EQ(result.rows_written, 5);  // the garbage line is a row of NULLs (PERMISSIVE)
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_EQ(progress[0].num_input_rows, 4);
  EXPECT_EQ(progress[0].table_version, 0);
  EXPECT_EQ(progress[1].table_version, 1);
  EXPECT_EQ(progress[1].end_offset_json, R"({"logOffset":1})");

  std::vector<std::string> rows = ReadTable(memory_, "memory://table", {"device_id", "power"});
  std::multiset<std::string> got(rows.begin(), rows.end());
  std::multiset<std::string> want = {"plug|84.300000", "door|NULL", "plug|83.900000", "NULL|NULL",
                                     "plug|85.000000"};
  EXPECT_EQ(got, want);

  // Spark's checkpoint layout, with the watermark carried between batches.
  ASSERT_OK_AND_ASSIGN(auto checkpoint, CheckpointDir::Open(memory_, "memory://ckpt"));
  ASSERT_OK_AND_ASSIGN(std::string query_id, checkpoint->ReadQueryId());
  EXPECT_EQ(result.query_id, query_id);
  ASSERT_OK_AND_ASSIGN(OffsetSeq offsets0, checkpoint->ReadOffsets(0));
  EXPECT_EQ(offsets0.batch_watermark_ms, 0);
  EXPECT_EQ(offsets0.conf_json, DefaultOffsetConfJson());
  EXPECT_EQ(offsets0.source_offsets, std::vector<std::string>{R"({"logOffset":0})"});
  const int64_t max_ts_batch0_ms = 1782119750000;  // 2026-06-22T09:15:50Z (file 2 is in batch 0)
  ASSERT_OK_AND_ASSIGN(CommitMark commit0, checkpoint->ReadCommit(0));
  EXPECT_EQ(commit0.next_batch_watermark_ms, max_ts_batch0_ms - 300'000);
  ASSERT_OK_AND_ASSIGN(OffsetSeq offsets1, checkpoint->ReadOffsets(1));
  EXPECT_EQ(offsets1.batch_watermark_ms, max_ts_batch0_ms - 300'000);
  ASSERT_OK_AND_ASSIGN(std::string log0, memory_->ReadFile("memory://ckpt/sources/0/0"));
  EXPECT_EQ(log0.rfind("v1\n{\"path\":\"memory://in/", 0), 0u) << log0;

  // The Delta commit is delta-spark's streaming append with the txn.
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(memory_, "memory://table"));
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  EXPECT_EQ(snapshot->TxnVersion(query_id), 1);
  EXPECT_EQ(snapshot->partition_columns(), std::vector<std::string>{"event_date"});
  ASSERT_OK_AND_ASSIGN(delta::CommitActions commit, table->ReadCommit(1));
  ASSERT_TRUE(commit.commit_info_json.has_value());
  simdjson::dom::parser parser;
  simdjson::dom::element info = parser.parse(*commit.commit_info_json);
  EXPECT_EQ(info["operation"].get_string().value(), "STREAMING UPDATE");
  EXPECT_EQ(info["operationParameters"]["outputMode"].get_string().value(), "Append");
  EXPECT_EQ(info["operationParameters"]["queryId"].get_string().value(), query_id);
  EXPECT_EQ(info["operationParameters"]["epochId"].get_string().value(), "1");
  EXPECT_TRUE(info["isBlindAppend"].get_bool().value());
  ASSERT_EQ(commit.txns.size(), 1u);
  EXPECT_EQ(commit.txns[0].app_id, query_id);
  EXPECT_EQ(commit.txns[0].version, 1);
}

// parallelism: the files of a batch are read, parsed, transformed and
// written on several threads at once; the batch is still one commit with
// every row once, and its watermark is the maximum over all the parts.
TEST_F(QueryTest, ParallelPartsOfABatchCommitOnceWithEveryRow) {
  constexpr int kFiles = 7;
  constexpr int kRowsPerFile = 3000;
  int64_t max_ts_ms = 0;
  for (int file = 0; file < kFiles; ++file) {
    std::string text;
    for (int row = 0; row < kRowsPerFile; ++row) {
      const int id = file * kRowsPerFile + row;
      // Event times spread over a day from noon (two event dates).
      const int64_t ts_ms = 1'782'043'200'000 + static_cast<int64_t>((id * 7919) % 86'400) * 1000;
      max_ts_ms = std::max(max_ts_ms, ts_ms);
      text += R"({"id":)" + std::to_string(id) + R"(,"payload":"{\"power\":)" +
              std::to_string(id % 100) + R"(.5}","ts_ms":)" + std::to_string(ts_ms) + "}\n";
    }
    ASSERT_OK(memory_->WriteFile("memory://in/" + std::to_string(file) + ".json", text));
  }
  JobSpec job = ParseJob(R"(
name: parallel
source:
  format: json
  schema: id BIGINT, payload STRING, ts_ms BIGINT
  options: {path: "memory://in"}
transform:
  - select:
      - id
      - CAST(get_json_object(payload, '$.power') AS DOUBLE) AS power
      - timestamp_millis(ts_ms) AS event_time
  - withWatermark: {eventTime: event_time, delayThreshold: 1 minute}
  - withColumn: {event_date: to_date(event_time)}
sink:
  format: delta
  path: memory://table
  partitionBy: [event_date]
checkpointLocation: memory://ckpt
parallelism: 3
trigger: {availableNow: true}
)");
  std::vector<BatchProgress> progress;
  options_.on_progress = [&](const BatchProgress& p) { progress.push_back(p); };
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 1);
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0].num_input_rows, kFiles * kRowsPerFile);
  EXPECT_EQ(progress[0].num_output_rows, kFiles * kRowsPerFile);

  std::vector<std::string> rows = ReadTable(memory_, "memory://table", {"id", "power"});
  ASSERT_EQ(rows.size(), static_cast<size_t>(kFiles * kRowsPerFile));
  std::set<std::string> want;
  for (int id = 0; id < kFiles * kRowsPerFile; ++id) {
    want.insert(std::to_string(id) + "|" + std::to_string(id % 100 + 0.5));
  }
  EXPECT_EQ(std::set<std::string>(rows.begin(), rows.end()), want);

  // One commit, with the files of every part and the batch's txn.
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(memory_, "memory://table"));
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  EXPECT_EQ(snapshot->version(), 0);
  EXPECT_EQ(snapshot->TxnVersion(result.query_id), 0);
  // Three part writers, each with at most a file per event date: which
  // writer gets which chunks is up to the threads (decision 199), so one
  // may get none.
  EXPECT_GE(snapshot->files().size(), 2u);
  EXPECT_LE(snapshot->files().size(), 6u);
  ASSERT_OK_AND_ASSIGN(auto checkpoint, CheckpointDir::Open(memory_, "memory://ckpt"));
  ASSERT_OK_AND_ASSIGN(CommitMark commit0, checkpoint->ReadCommit(0));
  EXPECT_EQ(commit0.next_batch_watermark_ms, max_ts_ms - 60'000);
}

// A part that fails stops the batch: nothing is committed, and the error
// is the transform's, as on the serial path.
TEST_F(QueryTest, AFailingParallelPartFailsTheBatchWithoutACommit) {
  for (int file = 0; file < 4; ++file) {
    std::string text;
    for (int row = 0; row < 100; ++row) {
      text += R"({"x":")" + std::string(file == 2 && row == 50 ? "bad" : "1") + "\"}\n";
    }
    ASSERT_OK(memory_->WriteFile("memory://in/" + std::to_string(file) + ".json", text));
  }
  JobSpec job = ParseJob(R"(
name: parallel-fail
source:
  format: json
  schema: x STRING
  options: {path: "memory://in"}
transform:
  - select: [CAST(x AS INT) AS x]
sink:
  format: delta
  path: memory://table
checkpointLocation: memory://ckpt
parallelism: 4
ansi: true
trigger: {availableNow: true}
)");
  Result<QueryResult> result = RunQuery(job, options_);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("'bad'"), std::string::npos)
      << result.status().ToString();
  ASSERT_OK_AND_ASSIGN(bool exists,
                       memory_->Exists("memory://table/_delta_log/" + delta::CommitFileName(0)));
  EXPECT_FALSE(exists);
}

TEST_F(QueryTest, ProgressRecordHasSparksFields) {
  JobSpec job = ParseJob(GeneratorJob(30, 30, "trigger: {once: true}"));
  std::string json;
  options_.on_progress = [&](const BatchProgress& p) { json = p.json; };
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json);
  EXPECT_EQ(doc["id"].get_string().value(), result.query_id);
  EXPECT_TRUE(doc["runId"].is_string());
  EXPECT_EQ(doc["name"].get_string().value(), "gen");
  EXPECT_TRUE(doc["timestamp"].is_string());
  EXPECT_EQ(doc["batchId"].get_int64().value(), 0);
  EXPECT_EQ(doc["numInputRows"].get_int64().value(), 30);
  EXPECT_TRUE(doc["durationMs"]["triggerExecution"].is_int64());
  EXPECT_TRUE(doc["durationMs"]["walCommit"].is_int64());
  EXPECT_EQ(doc["stateOperators"].get_array().size(), 0u);
  simdjson::dom::element source = doc["sources"].at(0);
  EXPECT_TRUE(source["startOffset"].is_null());
  EXPECT_EQ(source["endOffset"]["sensor-events"]["1"].get_int64().value() +
                source["endOffset"]["sensor-events"]["2"].get_int64().value(),
            30);
  EXPECT_EQ(source["numInputRows"].get_int64().value(), 30);
  EXPECT_EQ(doc["sink"]["description"].get_string().value(), "DeltaSink[memory://table]");
  EXPECT_EQ(doc["sink"]["numOutputRows"].get_int64().value(), 30);
}

TEST_F(QueryTest, AvailableNowDrainsTheSourceInCappedBatchesAndStops) {
  JobSpec job = ParseJob(GeneratorJob(95, 30, "trigger: {availableNow: true}"));
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 4);
  EXPECT_EQ(result.rows_written, 95);
  ExpectExactlyOnce(memory_, 95);
  // Nothing new: a second run does nothing.
  ASSERT_OK_AND_ASSIGN(QueryResult again, RunQuery(job, options_));
  EXPECT_EQ(again.batches_run, 0);
  EXPECT_EQ(again.query_id, result.query_id);
}

TEST_F(QueryTest, OnceTakesEverythingAvailableInOneBatch) {
  JobSpec job = ParseJob(GeneratorJob(95, 30, "trigger: {once: true}"));
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 1);
  EXPECT_EQ(result.rows_written, 95);
}

TEST_F(QueryTest, RestartContinuesAfterTheLastCommittedBatch) {
  JobSpec job = ParseJob(GeneratorJob(100, 25, "maxBatches: 2"));
  ASSERT_OK_AND_ASSIGN(QueryResult first, RunQuery(job, options_));
  EXPECT_EQ(first.batches_run, 2);
  std::vector<int64_t> batch_ids;
  options_.on_progress = [&](const BatchProgress& p) { batch_ids.push_back(p.batch_id); };
  ASSERT_OK_AND_ASSIGN(QueryResult second, RunQuery(job, options_));
  EXPECT_EQ(batch_ids, (std::vector<int64_t>{2, 3}));
  ExpectExactlyOnce(memory_, 100);
}

// The seed sets spark.sql.shuffle.partitions to 2: offsets/N records it as
// Spark does, and on restart the checkpoint's value wins over the job's.
TEST_F(QueryTest, SparkSqlConfsAreRecordedInOffsetsAndTheCheckpointsWinOnRestart) {
  JobSpec job = ParseJob(GeneratorJob(100, 25, "maxBatches: 1\nspark.sql.shuffle.partitions: 2"));
  ASSERT_OK(RunQuery(job, options_).status());
  ASSERT_OK_AND_ASSIGN(auto checkpoint, CheckpointDir::Open(memory_, "memory://ckpt"));
  ASSERT_OK_AND_ASSIGN(OffsetSeq offsets0, checkpoint->ReadOffsets(0));
  EXPECT_EQ(offsets0.conf_json, OffsetConfJson({{"spark.sql.shuffle.partitions", "2"}}));
  EXPECT_NE(offsets0.conf_json.find(R"("spark.sql.shuffle.partitions":"2")"), std::string::npos);
  EXPECT_NE(offsets0.conf_json, DefaultOffsetConfJson());

  JobSpec later = ParseJob(GeneratorJob(100, 25, "maxBatches: 1\nspark.sql.shuffle.partitions: 8"));
  ASSERT_OK(RunQuery(later, options_).status());
  ASSERT_OK_AND_ASSIGN(OffsetSeq offsets1, checkpoint->ReadOffsets(1));
  EXPECT_EQ(offsets1.conf_json, offsets0.conf_json);
}

// The stateful-operator confs silt honours take true or false in any case;
// another value fails the query before anything is written.
TEST_F(QueryTest, StatefulOperatorConfsTakeTrueOrFalse) {
  for (const char* key : {"spark.sql.streaming.statefulOperator.checkCorrectness.enabled",
                          "spark.sql.streaming.statefulOperator.allowMultiple"}) {
    JobSpec bad = ParseJob(GeneratorJob(10, 10, std::string("maxBatches: 1\n") + key + ": yes"));
    Result<QueryResult> refused = RunQuery(bad, options_);
    ASSERT_RAISES(InvalidArgument, refused);
    EXPECT_NE(refused.status().message().find(key), std::string::npos)
        << refused.status().ToString();
    EXPECT_NE(refused.status().message().find("expected true or false, got 'yes'"),
              std::string::npos)
        << refused.status().ToString();
    EXPECT_FALSE(*memory_->Exists("memory://ckpt/metadata"));
  }
  JobSpec good =
      ParseJob(GeneratorJob(10, 10,
                            "maxBatches: 1\n"
                            "spark.sql.streaming.statefulOperator.checkCorrectness.enabled: FALSE\n"
                            "spark.sql.streaming.statefulOperator.allowMultiple: True"));
  ASSERT_OK(RunQuery(good, options_).status());
}

// A table that lost the commit of a batch the checkpoint calls committed
// would silently miss its rows on restart: silt reports it instead.
TEST_F(QueryTest, RestartReportsATableMissingCommittedBatches) {
  JobSpec job = ParseJob(GeneratorJob(100, 25, "maxBatches: 2"));
  ASSERT_OK(RunQuery(job, options_).status());
  ASSERT_OK(memory_->DeleteFile("memory://table/_delta_log/00000000000000000001.json"));
  Result<QueryResult> lost = RunQuery(job, options_);
  ASSERT_RAISES(Corruption, lost);
  EXPECT_NE(lost.status().message().find("checkpoint memory://ckpt: the checkpoint records "
                                         "batches up to 1 as committed, but the table "
                                         "memory://table (version 0) holds batches of this "
                                         "query only up to 0"),
            std::string::npos)
      << lost.status().ToString();

  ASSERT_OK(memory_->DeleteFile("memory://table/_delta_log/00000000000000000000.json"));
  Result<QueryResult> gone = RunQuery(job, options_);
  ASSERT_RAISES(Corruption, gone);
  EXPECT_NE(gone.status().message().find("does not exist"), std::string::npos)
      << gone.status().ToString();
}

TEST_F(QueryTest, CrashBetweenDeltaCommitAndCommitsFileReRunsTheBatchWithoutDuplicates) {
  auto faulty = std::make_shared<FaultInjectionFileSystem>(memory_);
  options_.file_system = faulty;
  faulty->FailWhenPathContains(FsOp::kPutIfAbsent, "ckpt/commits/1",
                               Status::IOError("injected: process died"));
  JobSpec job = ParseJob(GeneratorJob(100, 30, "trigger: {availableNow: true}"));
  Result<QueryResult> crashed = RunQuery(job, options_);
  ASSERT_RAISES(IOError, crashed);
  EXPECT_NE(crashed.status().message().find("batch 1: writing commits/1"), std::string::npos)
      << crashed.status().message();
  // Batch 1 is in the table although the checkpoint does not know it.
  ExpectExactlyOnce(memory_, 60);

  faulty->ClearFaults();
  std::vector<BatchProgress> progress;
  options_.on_progress = [&](const BatchProgress& p) { progress.push_back(p); };
  ASSERT_OK_AND_ASSIGN(QueryResult restarted, RunQuery(job, options_));
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_EQ(progress[0].batch_id, 1);
  EXPECT_TRUE(progress[0].skipped_duplicate);
  EXPECT_FALSE(progress[1].skipped_duplicate);
  ExpectExactlyOnce(memory_, 100);
  ASSERT_OK_AND_ASSIGN(auto checkpoint, CheckpointDir::Open(memory_, "memory://ckpt"));
  ASSERT_OK_AND_ASSIGN(std::optional<int64_t> committed, checkpoint->LatestCommitBatch());
  EXPECT_EQ(committed, 3);
}

// Decision 157: commits/N is written unsynced, so a crash of the machine
// can leave the newest ones empty or cut short. The restart deletes them,
// re-runs the newest planned batch (which the table's txn skips) and writes
// its commits file again: no duplicates, no gaps, no error.
TEST_F(QueryTest, TornCommitsFilesAfterAMachineCrashReRunTheBatchWithoutDuplicates) {
  JobSpec job = ParseJob(GeneratorJob(90, 30, "trigger: {availableNow: true}"));
  ASSERT_OK_AND_ASSIGN(QueryResult first, RunQuery(job, options_));
  EXPECT_EQ(first.batches_run, 3);
  // What ext4 can leave of unsynced files after a power loss: commits/2
  // empty, commits/1 cut short.
  ASSERT_OK(memory_->DeleteFile("memory://ckpt/commits/2"));
  ASSERT_OK(memory_->PutIfAbsent("memory://ckpt/commits/2", ""));
  ASSERT_OK(memory_->DeleteFile("memory://ckpt/commits/1"));
  ASSERT_OK(memory_->PutIfAbsent("memory://ckpt/commits/1", "v1\n{\"nextBatchWat"));

  std::vector<BatchProgress> progress;
  options_.on_progress = [&](const BatchProgress& p) { progress.push_back(p); };
  ASSERT_OK_AND_ASSIGN(QueryResult restarted, RunQuery(job, options_));
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0].batch_id, 2);
  EXPECT_TRUE(progress[0].skipped_duplicate);
  ExpectExactlyOnce(memory_, 90);
  ASSERT_OK_AND_ASSIGN(auto checkpoint, CheckpointDir::Open(memory_, "memory://ckpt"));
  ASSERT_OK_AND_ASSIGN(std::optional<int64_t> committed, checkpoint->LatestCommitBatch());
  EXPECT_EQ(committed, 2);
  ASSERT_OK(checkpoint->ReadCommit(2).status());
  ASSERT_OK_AND_ASSIGN(bool torn_kept, memory_->Exists("memory://ckpt/commits/1"));
  EXPECT_FALSE(torn_kept);
}

TEST_F(QueryTest, CrashBeforeTheDeltaCommitReRunsTheBatch) {
  auto faulty = std::make_shared<FaultInjectionFileSystem>(memory_);
  options_.file_system = faulty;
  // Data files of batch 1 are written, its commit file is not.
  faulty->FailWhenPathContains(FsOp::kPutIfAbsent, "_delta_log/00000000000000000001.json",
                               Status::IOError("injected: process died"));
  JobSpec job = ParseJob(GeneratorJob(90, 30, "trigger: {availableNow: true}"));
  Result<QueryResult> crashed = RunQuery(job, options_);
  ASSERT_RAISES(IOError, crashed);
  EXPECT_NE(crashed.status().message().find("batch 1: committing to memory://table"),
            std::string::npos)
      << crashed.status().message();
  faulty->ClearFaults();
  ASSERT_OK_AND_ASSIGN(QueryResult restarted, RunQuery(job, options_));
  EXPECT_EQ(restarted.batches_run, 2);
  ExpectExactlyOnce(memory_, 90);
}

TEST_F(QueryTest, CrashWhileWritingOffsetsPlansTheBatchAgain) {
  auto faulty = std::make_shared<FaultInjectionFileSystem>(memory_);
  options_.file_system = faulty;
  faulty->CrashMidWrite("ckpt/offsets/2");
  JobSpec job = ParseJob(GeneratorJob(90, 30, "trigger: {availableNow: true}"));
  ASSERT_RAISES(IOError, RunQuery(job, options_));
  ASSERT_OK_AND_ASSIGN(bool exists, memory_->Exists("memory://ckpt/offsets/2"));
  EXPECT_FALSE(exists);
  ASSERT_OK_AND_ASSIGN(QueryResult restarted, RunQuery(job, options_));
  EXPECT_EQ(restarted.batches_run, 1);
  ExpectExactlyOnce(memory_, 90);
}

TEST_F(QueryTest, CrashAfterFileLogBeforeOffsetsLosesNoFile) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(memory_->WriteFile("memory://in/" + std::to_string(i) + ".json",
                                 "{\"v\":" + std::to_string(i) + "}\n"));
  }
  auto faulty = std::make_shared<FaultInjectionFileSystem>(memory_);
  options_.file_system = faulty;
  faulty->CrashMidWrite("ckpt/offsets/1");
  JobSpec job = ParseJob(R"(
source:
  format: json
  schema: v INT
  options: {path: "memory://in", maxFilesPerTrigger: 1}
sink: {path: "memory://table"}
checkpointLocation: memory://ckpt
trigger: {availableNow: true}
)");
  ASSERT_RAISES(IOError, RunQuery(job, options_));
  // sources/0/1 names a file that offsets/1 never recorded.
  ASSERT_OK_AND_ASSIGN(bool logged, memory_->Exists("memory://ckpt/sources/0/1"));
  EXPECT_TRUE(logged);
  ASSERT_OK_AND_ASSIGN(QueryResult restarted, RunQuery(job, options_));
  EXPECT_EQ(restarted.batches_run, 2);
  std::vector<std::string> rows = ReadTable(memory_, "memory://table", {"v"});
  std::multiset<std::string> got(rows.begin(), rows.end());
  EXPECT_EQ(got, (std::multiset<std::string>{"0", "1", "2"}));
}

TEST_F(QueryTest, ProcessingTimeStartsBatchesOnIntervalBoundaries) {
  ManualClock clock(1'782'115'205'000'000);  // 2026-06-22T08:00:05Z
  options_.clock = &clock;
  JobSpec job = ParseJob(GeneratorJob(1000, 10,
                                      "trigger: {processingTime: 60 seconds}\n"
                                      "maxBatches: 3"));
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 3);
  ASSERT_OK_AND_ASSIGN(auto checkpoint, CheckpointDir::Open(memory_, "memory://ckpt"));
  ASSERT_OK_AND_ASSIGN(OffsetSeq b0, checkpoint->ReadOffsets(0));
  ASSERT_OK_AND_ASSIGN(OffsetSeq b1, checkpoint->ReadOffsets(1));
  ASSERT_OK_AND_ASSIGN(OffsetSeq b2, checkpoint->ReadOffsets(2));
  EXPECT_EQ(b0.batch_timestamp_ms, 1'782'115'205'000);
  EXPECT_EQ(b1.batch_timestamp_ms, 1'782'115'260'000);
  EXPECT_EQ(b2.batch_timestamp_ms, 1'782'115'320'000);
}

TEST_F(QueryTest, StopFlagEndsTheQueryBetweenBatches) {
  ManualClock clock(0);
  options_.clock = &clock;
  std::atomic<bool> stop{false};
  options_.stop_flag = &stop;
  options_.on_progress = [&](const BatchProgress&) { stop = true; };
  JobSpec job = ParseJob(GeneratorJob(1000, 10, ""));
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 1);
}

TEST_F(QueryTest, DefaultTriggerPollsWhileIdleUntilStopped) {
  ManualClock clock(0);
  options_.clock = &clock;
  std::atomic<bool> stop{false};
  options_.stop_flag = &stop;
  // rowsPerSecond 1 with a manual clock: data only appears as the clock
  // advances through the query's own polling sleeps.
  JobSpec job = ParseJob(R"(
source:
  format: generator
  options: {rowsPerSecond: 1, maxOffsetsPerTrigger: 5}
sink: {path: "memory://table"}
checkpointLocation: memory://ckpt
)");
  int64_t rows = 0;
  options_.on_progress = [&](const BatchProgress& p) {
    rows += p.num_output_rows;
    if (rows >= 12) stop = true;
  };
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_GE(result.rows_written, 12);
  EXPECT_GE(clock.NowMicros(), 12'000'000);
}

TEST_F(QueryTest, ExistingTableWithOtherSchemaIsAClearError) {
  JobSpec first = ParseJob(GeneratorJob(10, 10, "trigger: {once: true}"));
  ASSERT_OK(RunQuery(first, options_));
  JobSpec other = ParseJob(R"(
source: {format: generator, options: {totalRows: 10}}
transform:
  - select: [CAST(key AS STRING) AS device_id, timestamp]
sink: {path: "memory://table"}
checkpointLocation: memory://ckpt2
trigger: {once: true}
)");
  Result<QueryResult> result = RunQuery(other, options_);
  ASSERT_RAISES(InvalidArgument, result);
  EXPECT_NE(result.status().message().find("memory://table"), std::string::npos);
  EXPECT_NE(result.status().message().find("timestamp"), std::string::npos)
      << result.status().message();
}

TEST_F(QueryTest, BatchWithoutOutputRowsStillRecordsItsTxn) {
  JobSpec job = ParseJob(R"(
source: {format: generator, options: {totalRows: 20, maxOffsetsPerTrigger: 10}}
transform:
  - select: [partition, offset]
  - where: offset < 0
sink: {path: "memory://table"}
checkpointLocation: memory://ckpt
trigger: {availableNow: true}
)");
  std::vector<BatchProgress> progress;
  options_.on_progress = [&](const BatchProgress& p) { progress.push_back(p); };
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_EQ(progress[1].num_input_rows, 10);
  EXPECT_EQ(progress[1].num_output_rows, 0);
  EXPECT_EQ(progress[1].table_version, 1);
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(memory_, "memory://table"));
  ASSERT_OK_AND_ASSIGN(delta::SnapshotPtr snapshot, table->LatestSnapshot());
  EXPECT_EQ(snapshot->TxnVersion(result.query_id), 1);
  EXPECT_TRUE(snapshot->files().empty());
  ASSERT_OK_AND_ASSIGN(bool committed, memory_->Exists("memory://ckpt/commits/1"));
  EXPECT_TRUE(committed);
}

TEST_F(QueryTest, CompleteOutputModeWithoutAnAggregationIsRefused) {
  JobSpec job = ParseJob(GeneratorJob(10, 10, "trigger: {once: true}"));
  job.sink.output_mode = "complete";
  ASSERT_RAISES(InvalidArgument, RunQuery(job, options_));
}

TEST_F(QueryTest, CompleteOutputModeLeavesTheWholeResultOfTheLastBatchInTheTable) {
  JobSpec job = ParseJob(GeneratorJob(20, 10, "trigger: {availableNow: true}"));
  job.sink.output_mode = "complete";
  TransformStep count;
  count.kind = "groupBy";
  count.key_path = "transform[0]";
  count.aggs = {"count(*) AS n"};
  job.transforms = {count};
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 2);
  EXPECT_EQ(ReadTable(memory_, "memory://table", {"n"}).size(), 1u);
}

// Spark's rule: without an aggregation, update mode is append.
TEST_F(QueryTest, UpdateOutputModeWithoutAggregationAppends) {
  JobSpec job = ParseJob(GeneratorJob(10, 10, "trigger: {once: true}"));
  job.sink.output_mode = "update";
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.rows_written, 10);
}

// Update mode over an aggregation upserts the changed groups: the table
// holds one row per group, with the latest count.
TEST_F(QueryTest, UpdateOutputModeMergesTheChangedGroups) {
  JobSpec job = ParseJob(GeneratorJob(10, 4, ""));
  job.sink.output_mode = "update";
  TransformStep count;
  count.kind = "groupBy";
  count.exprs = {"offset % 3 AS k"};
  count.aggs = {"count(*) AS n"};
  count.key_path = "transform[0]";
  job.transforms = {count};
  job.max_batches = 3;
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunQuery(job, options_));
  EXPECT_EQ(result.batches_run, 3);
  std::vector<std::string> rows = ReadTable(memory_, "memory://table", {"k", "n"});
  std::set<std::string> keys;
  int64_t total = 0;
  for (const std::string& row : rows) {
    keys.insert(row.substr(0, row.find('|')));
    total += std::stoll(row.substr(row.find('|') + 1));
  }
  EXPECT_EQ(keys.size(), rows.size());  // one row per group, not one per batch
  EXPECT_EQ(total, 10);                 // the latest counts cover every input row
}

TEST_F(QueryTest, TransformErrorsStopTheQueryBeforeAnyBatch) {
  JobSpec job = ParseJob(R"(
source: {format: generator}
transform:
  - select: [value]
  - select: [nope]
sink: {path: "memory://table"}
checkpointLocation: memory://ckpt
)");
  Result<QueryResult> result = RunQuery(job, options_);
  ASSERT_RAISES(InvalidArgument, result);
  EXPECT_EQ(result.status().message().rfind("transform[1].select[0]", 0), 0u)
      << result.status().message();
  ASSERT_OK_AND_ASSIGN(bool planned, memory_->Exists("memory://ckpt/offsets/0"));
  EXPECT_FALSE(planned);
}

TEST(QueryLockTest, SecondQueryOnALockedCheckpointFails) {
  testing::TempDir dir;
  std::string checkpoint = dir.path() + "/ckpt";
  ASSERT_OK_AND_ASSIGN(auto held, CheckpointLock::Acquire(checkpoint));
  JobSpec job = ParseJob(
      "source: {format: generator, options: {totalRows: 5}}\n"
      "sink: {path: \"" +
      dir.path() +
      "/table\"}\n"
      "checkpointLocation: " +
      checkpoint +
      "\n"
      "trigger: {once: true}\n");
  Result<QueryResult> second = RunQuery(job, QueryOptions());
  ASSERT_RAISES(Conflict, second);
  EXPECT_EQ(second.status().message(), "checkpoint " + checkpoint +
                                           " is in use by another silt process (pid " +
                                           std::to_string(::getpid()) + ")");
  held.reset();
  ASSERT_OK_AND_ASSIGN(QueryResult ok, RunQuery(job, QueryOptions()));
  EXPECT_EQ(ok.rows_written, 5);
}

}  // namespace
}  // namespace silt::stream
