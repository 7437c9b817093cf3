// The scale-out worker end to end in one process: librdkafka's mock
// cluster, a memory file system for the table and the records.
#include "silt/stream/scaleout/worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "silt/delta/table.h"
#include "silt/kafka/mock_cluster.h"
#include "silt/kafka/producer.h"
#include "silt/stream/scaleout/worker_record.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

constexpr int32_t kPartitions = 3;
constexpr int kRecordsPerPartition = 50;

class ScaleOutWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_, kafka::MockCluster::Make());
    ASSERT_OK(cluster_->CreateTopic("events", kPartitions));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<kafka::Producer> producer,
                         kafka::Producer::Make({{"bootstrap.servers", cluster_->bootstraps()}}));
    for (int32_t partition = 0; partition < kPartitions; ++partition) {
      for (int i = 0; i < kRecordsPerPartition; ++i) {
        ASSERT_OK(producer->Send("events", partition, std::nullopt, std::to_string(i), 1, {}));
      }
    }
    ASSERT_OK(producer->Flush(30'000));
    fs_ = fs::MakeMemoryFileSystem();
  }

  JobSpec Job() {
    const std::string yaml =
        "name: ingest\n"
        "source: {format: kafka, options: {kafka.bootstrap.servers: '" +
        cluster_->bootstraps() +
        "', subscribe: events, startingOffsets: earliest}}\n"
        "transform: [{select: [partition AS p, offset AS o]}]\n"
        "sink: {format: delta, path: /t}\n"
        "checkpointLocation: /c\n"
        "trigger: {processingTime: 100 milliseconds}\n"
        "scaleOut: {mode: consumerGroup, workerId: w1}\n";
    Result<JobSpec> job = ParseJobYaml(yaml, "job.yaml");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : JobSpec();
  }

  // The next offsets the table records for partitions 0..kPartitions-1.
  std::map<int32_t, int64_t> TableOffsets() {
    std::map<int32_t, int64_t> out;
    Result<std::unique_ptr<delta::DeltaTable>> table = delta::DeltaTable::Open(fs_, "/t");
    if (!table.ok()) return out;
    Result<bool> exists = (*table)->Exists();
    if (!exists.ok() || !*exists) return out;
    Result<delta::SnapshotPtr> snapshot = (*table)->LatestSnapshot();
    if (!snapshot.ok()) return out;
    for (const TablePartitionOffset& offset : TablePartitionOffsets(**snapshot, "ingest")) {
      out[offset.partition.partition] = offset.next_offset;
    }
    return out;
  }

  // Runs the worker until the table records `until` for every partition.
  Result<QueryResult> RunUntil(int64_t until) {
    JobSpec job = Job();
    std::atomic<bool> stop{false};
    QueryOptions options;
    options.stop_flag = &stop;
    options.file_system = fs_;
    Result<QueryResult> result = Status::Internal("not run");
    std::thread worker([&] { result = RunScaleOutWorker(job, options); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      std::map<int32_t, int64_t> offsets = TableOffsets();
      bool done = offsets.size() == kPartitions;
      for (const auto& [p, offset] : offsets) done = done && offset == until;
      if (done) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    stop = true;
    worker.join();
    return result;
  }

  std::vector<std::pair<int32_t, int64_t>> Rows() {
    std::vector<std::pair<int32_t, int64_t>> rows;
    auto table = delta::DeltaTable::Open(fs_, "/t");
    EXPECT_TRUE(table.ok());
    auto snapshot = (*table)->LatestSnapshot();
    EXPECT_TRUE(snapshot.ok());
    auto scan = delta::TableScan::Make(fs_, "/t", *snapshot);
    EXPECT_TRUE(scan.ok());
    while (true) {
      Result<columnar::RecordBatchPtr> batch = (*scan)->Next();
      EXPECT_TRUE(batch.ok());
      if (!batch.ok() || *batch == nullptr) break;
      const columnar::Column& p = *(*batch)->GetColumn("p");
      const columnar::Column& o = *(*batch)->GetColumn("o");
      for (int64_t row = 0; row < (*batch)->num_rows; ++row) {
        rows.emplace_back(p.Value<int32_t>(row), o.Value<int64_t>(row));
      }
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  std::unique_ptr<kafka::MockCluster> cluster_;
  fs::FileSystemPtr fs_;
};

TEST_F(ScaleOutWorkerTest, DrainsEveryPartitionAndRecordsTheOffsetsInTheTable) {
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunUntil(kRecordsPerPartition));
  EXPECT_GE(result.batches_run, 1);
  EXPECT_EQ(result.rows_written, kPartitions * kRecordsPerPartition);
  std::vector<std::pair<int32_t, int64_t>> rows = Rows();
  ASSERT_EQ(rows.size(), static_cast<size_t>(kPartitions * kRecordsPerPartition));
  for (size_t idx = 0; idx < rows.size(); ++idx) {
    EXPECT_EQ(rows[idx], std::make_pair(static_cast<int32_t>(idx / kRecordsPerPartition),
                                        static_cast<int64_t>(idx % kRecordsPerPartition)));
  }
  // The worker's commits name it; its record says it stopped holding nothing.
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(fs_, "/t"));
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> versions, table->ListVersions());
  ASSERT_OK_AND_ASSIGN(delta::CommitActions last, table->ReadCommit(versions.back()));
  ASSERT_TRUE(last.commit_info_json.has_value());
  EXPECT_NE(last.commit_info_json->find("\"siltWorker\":\"w1\""), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::vector<WorkerRecord> records, ReadWorkerRecords(fs_.get(), "/c"));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].worker_id, "w1");
  EXPECT_EQ(records[0].state, "stopped");
  EXPECT_EQ(records[0].rows, kPartitions * kRecordsPerPartition);
  ASSERT_OK_AND_ASSIGN(std::string info, fs_->ReadFile(ScaleOutInfoPath("/c")));
  EXPECT_NE(info.find("\"groupId\":\"silt-ingest\""), std::string::npos) << info;
}

TEST_F(ScaleOutWorkerTest, StartsWhereTheTableSaysNotWhereTheGroupOrStartingOffsetsSay) {
  // Another worker wrote offsets 0..29 of every partition before.
  ASSERT_OK_AND_ASSIGN(auto table, delta::DeltaTable::Open(fs_, "/t"));
  delta::CommitRequest first;
  delta::Metadata metadata;
  metadata.schema = columnar::DataType::Struct(
      {{"p", columnar::DataType::Int(), true}, {"o", columnar::DataType::Long(), true}});
  first.new_metadata = metadata;
  for (int32_t partition = 0; partition < kPartitions; ++partition) {
    first.expected_txns.push_back(
        {delta::Txn{PartitionAppId("ingest", {"events", partition}), 30, {}}, std::nullopt});
  }
  ASSERT_OK(delta::Commit(table.get(), nullptr, first).status());
  ASSERT_OK_AND_ASSIGN(QueryResult result, RunUntil(kRecordsPerPartition));
  EXPECT_EQ(result.rows_written, kPartitions * (kRecordsPerPartition - 30));
  std::vector<std::pair<int32_t, int64_t>> rows = Rows();
  ASSERT_EQ(rows.size(), static_cast<size_t>(kPartitions * (kRecordsPerPartition - 30)));
  for (const auto& [p, o] : rows) EXPECT_GE(o, 30) << p;
}

TEST_F(ScaleOutWorkerTest, AScaleOutJobRefusesASingleQuerysCheckpoint) {
  ASSERT_OK(fs_->WriteFile("/c/offsets/0", "v1\n{}\n{}\n"));
  JobSpec job = Job();
  QueryOptions options;
  options.file_system = fs_;
  Result<QueryResult> result = RunScaleOutWorker(job, options);
  ASSERT_RAISES(InvalidArgument, result);
  EXPECT_NE(result.status().message().find("checkpoint of a single query"), std::string::npos);
}

}  // namespace
}  // namespace silt::stream
