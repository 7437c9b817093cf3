#include "silt/stream/scaleout/worker_record.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

TEST(WorkerRecordTest, PartitionAppIdsSplitBackFromTheRight) {
  const kafka::TopicPartition tp{"sensor.events-v2", 11};
  EXPECT_EQ(PartitionAppId("ingest:eu", tp), "ingest:eu:sensor.events-v2:11");
  // The prefix may hold ':' itself; topics cannot.
  EXPECT_EQ(ParsePartitionAppId("ingest:eu", "ingest:eu:sensor.events-v2:11"), tp);
  EXPECT_EQ(ParsePartitionAppId("ingest", "ingest:eu:sensor.events-v2:11"), std::nullopt);
  EXPECT_EQ(ParsePartitionAppId("ingest:eu", "ingest:eu:t:x"), std::nullopt);
  EXPECT_EQ(ParsePartitionAppId("ingest:eu", "ingest:eu:t:-1"), std::nullopt);
  EXPECT_EQ(ParsePartitionAppId("ingest:eu", "ingest:eu::3"), std::nullopt);
  EXPECT_EQ(ParsePartitionAppId("ingest:eu", "ingest:eux:t:3"), std::nullopt);
  // A single query's appId (its UUID) is never taken for a partition.
  EXPECT_EQ(ParsePartitionAppId("ingest", "3f2c9a1e-8b7d-4c6e-9f0a-1b2c3d4e5f60"), std::nullopt);
}

TEST(WorkerRecordTest, RecordsRoundTripThroughJson) {
  WorkerRecord record;
  record.worker_id = "host-1/worker 2";
  record.host = "host-1";
  record.pid = 4242;
  record.member_id = "rdkafka-abc";
  record.run_id = "run";
  record.started_ms = 1000;
  record.updated_ms = 2000;
  record.partitions = {{{"t", 0}, 15}, {{"t", 3}, std::nullopt}};
  record.batches = 7;
  record.rows = 700;
  record.discarded = 1;
  ASSERT_OK_AND_ASSIGN(WorkerRecord back,
                       WorkerRecordFromJson(WorkerRecordToJson(record), "record"));
  EXPECT_EQ(back.worker_id, record.worker_id);
  EXPECT_EQ(back.pid, 4242);
  EXPECT_EQ(back.member_id, "rdkafka-abc");
  EXPECT_EQ(back.updated_ms, 2000);
  EXPECT_EQ(back.state, "running");
  ASSERT_EQ(back.partitions.size(), 2u);
  EXPECT_EQ(back.partitions[0].partition, (kafka::TopicPartition{"t", 0}));
  EXPECT_EQ(back.partitions[0].next_offset, 15);
  EXPECT_EQ(back.partitions[1].next_offset, std::nullopt);
  EXPECT_EQ(back.batches, 7);
  EXPECT_EQ(back.rows, 700);
  EXPECT_EQ(back.discarded, 1);
  EXPECT_EQ(WorkerRecordFileName(record.worker_id), "host-1_worker_2.json");
  EXPECT_EQ(WorkerRecordFileName(".."), "_...json");
  ASSERT_RAISES(Corruption, WorkerRecordFromJson("{\"host\":\"h\"}", "record"));

  ScaleOutInfo info{"ingest", "silt-ingest", "/data/t", "subscribe: a,b"};
  ASSERT_OK_AND_ASSIGN(ScaleOutInfo info_back,
                       ScaleOutInfoFromJson(ScaleOutInfoToJson(info), "info"));
  EXPECT_EQ(info_back.app_id, "ingest");
  EXPECT_EQ(info_back.group_id, "silt-ingest");
  EXPECT_EQ(info_back.table, "/data/t");
  EXPECT_EQ(info_back.subscription, "subscribe: a,b");
}

TEST(WorkerRecordTest, ReadingSkipsUnreadableRecords) {
  fs::FileSystemPtr fs = fs::MakeMemoryFileSystem();
  WorkerRecord a;
  a.worker_id = "a";
  WorkerRecord b;
  b.worker_id = "b";
  ASSERT_OK(fs->WriteFile("/c/workers/b.json", WorkerRecordToJson(b)));
  ASSERT_OK(fs->WriteFile("/c/workers/a.json", WorkerRecordToJson(a)));
  ASSERT_OK(fs->WriteFile("/c/workers/torn.json", "{\"workerId\":"));
  ASSERT_OK_AND_ASSIGN(std::vector<WorkerRecord> records, ReadWorkerRecords(fs.get(), "/c"));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].worker_id, "a");
  EXPECT_EQ(records[1].worker_id, "b");
  ASSERT_OK_AND_ASSIGN(std::vector<WorkerRecord> none, ReadWorkerRecords(fs.get(), "/missing"));
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace silt::stream
