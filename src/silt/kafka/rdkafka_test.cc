// The librdkafka consumer and producer against librdkafka's in-process mock
// cluster (a Kafka-protocol broker inside the test).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "silt/kafka/producer.h"
#include "silt/kafka/rdkafka_consumer.h"
#include "silt/kafka/rdkafka_internal.h"
#include "silt/testing/gtest_util.h"

namespace silt::kafka {
namespace {

class MockCluster {
 public:
  MockCluster() {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[256];
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
    cluster_ = rd_kafka_mock_cluster_new(rk_, 1);
    rd_kafka_mock_topic_create(cluster_, "events", 2, 1);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(rk_);
  }
  std::string bootstraps() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  // The next `count` ListOffsets requests fail with `err`.
  void FailListOffsets(size_t count, rd_kafka_resp_err_t err) {
    constexpr int16_t kListOffsetsApiKey = 2;  // Kafka protocol ApiKey
    std::vector<rd_kafka_resp_err_t> errors(count, err);
    rd_kafka_mock_push_request_errors_array(cluster_, kListOffsetsApiKey, count, errors.data());
  }

 private:
  rd_kafka_t* rk_;
  rd_kafka_mock_cluster_t* cluster_;
};

class RdKafkaTest : public ::testing::Test {
 protected:
  void Produce(int32_t partition, int count) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Producer> producer,
                         Producer::Make({{"bootstrap.servers", cluster_.bootstraps()}}));
    for (int i = 0; i < count; ++i) {
      std::string value = "p" + std::to_string(partition) + "-" + std::to_string(i);
      std::string header = std::to_string(i);
      ASSERT_OK(producer->Send("events", partition, "key", value, 1'700'000'000'000 + i,
                               {{"h", header}}));
    }
    ASSERT_OK(producer->Flush(30'000));
    EXPECT_EQ(producer->delivered(), count);
  }

  std::unique_ptr<Consumer> MakeConsumer(std::string group = "", int retries = 3,
                                         const std::map<std::string, std::string>& extra = {}) {
    ConsumerConfig config;
    config.properties = extra;
    config.fetch_offset_num_retries = retries;
    config.fetch_offset_retry_interval_ms = 10;
    config.properties["bootstrap.servers"] = cluster_.bootstraps();
    if (!group.empty()) config.properties["group.id"] = group;
    Result<std::unique_ptr<Consumer>> consumer = MakeRdKafkaConsumer(config);
    EXPECT_OK(consumer.status());
    return consumer.ok() ? std::move(*consumer) : nullptr;
  }

  // Reads the assigned ranges to their end.
  columnar::RecordBatchPtr ReadAll(Consumer* consumer, bool headers) {
    RecordColumns columns(headers);
    for (int attempt = 0; attempt < 300 && !consumer->AssignmentDone(); ++attempt) {
      Result<int64_t> n = consumer->Poll(&columns, 1000, 100);
      EXPECT_OK(n.status());
      if (!n.ok()) break;
    }
    EXPECT_TRUE(consumer->AssignmentDone());
    return columns.Finish();
  }

  MockCluster cluster_;
};

TEST_F(RdKafkaTest, ReadsExactlyTheAssignedRangesWithHeaders) {
  Produce(0, 10);
  Produce(1, 4);
  std::unique_ptr<Consumer> consumer = MakeConsumer();
  ASSERT_NE(consumer, nullptr);
  ASSERT_OK_AND_ASSIGN(Watermarks marks, consumer->QueryWatermarks({"events", 0}));
  EXPECT_EQ(marks.low, 0);
  EXPECT_EQ(marks.high, 10);
  ASSERT_OK(consumer->Assign({{{"events", 0}, 2, 5}, {{"events", 1}, 0, 4}}));
  columnar::RecordBatchPtr batch = ReadAll(consumer.get(), true);
  ASSERT_EQ(batch->num_rows, 7);
  std::multiset<std::string> values;
  for (int64_t row = 0; row < batch->num_rows; ++row) {
    values.insert(std::string(batch->columns[1]->StringValue(row)));
    EXPECT_EQ(batch->columns[2]->StringValue(row), "events");
    EXPECT_EQ(batch->columns[6]->Value<int32_t>(row), 0);
  }
  EXPECT_EQ(values,
            (std::multiset<std::string>{"p0-2", "p0-3", "p0-4", "p1-0", "p1-1", "p1-2", "p1-3"}));
  ASSERT_EQ(batch->columns.size(), 8u);
  EXPECT_EQ(batch->columns[7]->children[0]->length, 7);

  // A second assignment of the same partition starts over at its range.
  ASSERT_OK(consumer->Assign({{{"events", 0}, 8, 10}}));
  batch = ReadAll(consumer.get(), false);
  ASSERT_EQ(batch->num_rows, 2);
  EXPECT_EQ(batch->columns[4]->Value<int64_t>(0), 8);
  EXPECT_EQ(batch->columns[4]->Value<int64_t>(1), 9);
}

// Poll takes records off librdkafka's queue many at a time; those past the
// caller's limit wait for the next call, in order, and a new assignment (a
// retried batch) starts over at its range without them.
TEST_F(RdKafkaTest, RecordsBeyondTheLimitWaitForTheNextPollInOrder) {
  Produce(0, 50);
  std::unique_ptr<Consumer> consumer = MakeConsumer();
  ASSERT_NE(consumer, nullptr);
  auto offsets_of = [](const columnar::RecordBatch& batch) {
    std::vector<int64_t> out;
    for (int64_t row = 0; row < batch.num_rows; ++row) {
      out.push_back(batch.columns[4]->Value<int64_t>(row));
    }
    return out;
  };
  std::vector<int64_t> all(50);
  for (int64_t i = 0; i < 50; ++i) all[static_cast<size_t>(i)] = i;

  ASSERT_OK(consumer->Assign({{{"events", 0}, 0, 50}}));
  RecordColumns columns(false);
  for (int attempt = 0; attempt < 300 && !consumer->AssignmentDone(); ++attempt) {
    ASSERT_OK_AND_ASSIGN(int64_t n, consumer->Poll(&columns, 3, 100));
    ASSERT_LE(n, 3);
  }
  ASSERT_TRUE(consumer->AssignmentDone());
  EXPECT_EQ(offsets_of(*columns.Finish()), all);

  // Part of the range read, then the same range assigned again.
  ASSERT_OK(consumer->Assign({{{"events", 0}, 0, 50}}));
  int64_t read = 0;
  for (int attempt = 0; attempt < 300 && read == 0; ++attempt) {
    ASSERT_OK_AND_ASSIGN(read, consumer->Poll(&columns, 5, 100));
  }
  ASSERT_EQ(read, 5);
  (void)columns.Finish();
  ASSERT_OK(consumer->Assign({{{"events", 0}, 0, 50}}));
  EXPECT_EQ(offsets_of(*ReadAll(consumer.get(), false)), all);
}

// Consecutive batches over a backlog: each range starts where the previous
// one ended, so the partitions stay assigned and the records librdkafka
// fetched past the previous ranges are the next batch's (not dropped and
// fetched again). Whatever the path, every batch reads exactly its ranges:
// small Poll limits, a range shorter than what was fetched, a gap (a fresh
// assignment), a retried batch and a batch over fewer partitions.
TEST_F(RdKafkaTest, ConsecutiveBatchesReadExactlyTheirRanges) {
  Produce(0, 60);
  Produce(1, 60);
  // librdkafka's default prefetch, and one of 10 records: the queue fills
  // past it at each fetch and the consumer wakes the parked fetcher when
  // half is read (WakeParkedFetcher), many times per batch.
  for (const std::map<std::string, std::string>& extra :
       {std::map<std::string, std::string>{},
        std::map<std::string, std::string>{{"queued.min.messages", "10"}}}) {
    SCOPED_TRACE(extra.empty() ? "default prefetch" : "queued.min.messages 10");
    std::unique_ptr<Consumer> consumer = MakeConsumer("", 3, extra);
    ASSERT_NE(consumer, nullptr);
    auto read = [&](const std::vector<OffsetRange>& ranges, int64_t limit) {
      std::vector<std::string> out;
      EXPECT_OK(consumer->Assign(ranges));
      RecordColumns columns(false);
      for (int attempt = 0; attempt < 300 && !consumer->AssignmentDone(); ++attempt) {
        Result<int64_t> n = consumer->Poll(&columns, limit, 100);
        EXPECT_OK(n.status());
        if (!n.ok()) break;
        EXPECT_LE(*n, limit);
      }
      EXPECT_TRUE(consumer->AssignmentDone());
      columnar::RecordBatchPtr batch = columns.Finish();
      for (int64_t row = 0; row < batch->num_rows; ++row) {
        out.push_back(std::to_string(batch->columns[3]->Value<int32_t>(row)) + ":" +
                      std::to_string(batch->columns[4]->Value<int64_t>(row)) + "=" +
                      std::string(batch->columns[1]->StringValue(row)));
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    auto expected = [](const std::vector<OffsetRange>& ranges) {
      std::vector<std::string> out;
      for (const OffsetRange& range : ranges) {
        for (int64_t offset = range.from; offset < range.until; ++offset) {
          const std::string p = std::to_string(range.partition.partition);
          out.push_back(p + ":" + std::to_string(offset) + "=p" + p + "-" + std::to_string(offset));
        }
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    const std::vector<std::vector<OffsetRange>> batches = {
        {{{"events", 0}, 0, 10}, {{"events", 1}, 0, 7}},
        {{{"events", 0}, 10, 25}, {{"events", 1}, 7, 30}},   // reads on
        {{{"events", 0}, 25, 26}, {{"events", 1}, 30, 31}},  // reads on, one record each
        {{{"events", 0}, 26, 40}, {{"events", 1}, 31, 45}},  // reads on
        {{{"events", 0}, 26, 40}, {{"events", 1}, 31, 45}},  // the same batch again
        {{{"events", 0}, 42, 50}, {{"events", 1}, 45, 50}},  // a gap in partition 0
        {{{"events", 1}, 50, 55}},                           // fewer partitions
        {{{"events", 0}, 50, 60}, {{"events", 1}, 55, 60}},  // to the end
    };
    for (int64_t limit : {int64_t{1000}, int64_t{3}}) {
      for (size_t idx = 0; idx < batches.size(); ++idx) {
        EXPECT_EQ(read(batches[idx], limit), expected(batches[idx]))
            << "batch " << idx << ", limit " << limit;
      }
    }
  }
}

TEST_F(RdKafkaTest, ListsTopicsAndFindsOffsetsForTimes) {
  Produce(0, 5);
  std::unique_ptr<Consumer> consumer = MakeConsumer();
  ASSERT_NE(consumer, nullptr);
  ASSERT_OK_AND_ASSIGN(std::vector<TopicInfo> topics, consumer->ListTopics());
  ASSERT_EQ(topics.size(), 1u);
  EXPECT_EQ(topics[0].name, "events");
  EXPECT_EQ(topics[0].num_partitions, 2);
  // The mock broker answers only Kafka's sentinel timestamps (-1 = latest);
  // real timestamps are covered by the integration tests.
  ASSERT_OK_AND_ASSIGN(std::vector<std::optional<int64_t>> offsets,
                       consumer->OffsetsForTimes({{"events", 0}, {"events", 1}}, -1));
  ASSERT_EQ(offsets.size(), 2u);
  EXPECT_EQ(offsets[0], std::optional<int64_t>(5));
  EXPECT_EQ(offsets[1], std::optional<int64_t>(0));
}

// Right after a topic is created (or during a leader election) offset
// lookups fail with "not leader"; like Spark (fetchOffset.numRetries) silt
// asks again instead of failing the query.
TEST_F(RdKafkaTest, RetriesOffsetLookupsThatFailTransiently) {
  Produce(0, 3);
  std::unique_ptr<Consumer> patient = MakeConsumer("", 3);
  ASSERT_NE(patient, nullptr);
  cluster_.FailListOffsets(2, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  ASSERT_OK_AND_ASSIGN(Watermarks marks, patient->QueryWatermarks({"events", 0}));
  EXPECT_EQ(marks.high, 3);

  std::unique_ptr<Consumer> impatient = MakeConsumer("", 0);
  ASSERT_NE(impatient, nullptr);
  cluster_.FailListOffsets(2, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  Result<Watermarks> failed = impatient->QueryWatermarks({"events", 0});
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(failed.status().retryable()) << failed.status().ToString();
}

TEST_F(RdKafkaTest, CommitNeedsAGroup) {
  std::unique_ptr<Consumer> consumer = MakeConsumer();
  ASSERT_NE(consumer, nullptr);
  ASSERT_RAISES(InvalidArgument, consumer->CommitOffsets({{{"events", 0}, 1}}));
  std::unique_ptr<Consumer> grouped = MakeConsumer("lag-group");
  Produce(0, 3);
  ASSERT_OK(grouped->CommitOffsets({{{"events", 0}, 3}}));
}

// Decision 198: a wake-up is due once after the queue reached the
// threshold and then fell to half of it, and again only after it reaches
// the threshold again.
TEST(ParkedFetcherWakerTest, WakesOnceAfterAFullQueueIsHalfRead) {
  internal::ParkedFetcherWaker waker(100);
  EXPECT_FALSE(waker.Due(0));  // never full: nothing parked
  EXPECT_FALSE(waker.Due(99));
  EXPECT_FALSE(waker.Due(100));
  EXPECT_FALSE(waker.Due(51));
  EXPECT_TRUE(waker.Due(50));
  EXPECT_FALSE(waker.Due(10));  // once per fill
  EXPECT_FALSE(waker.Due(0));
  EXPECT_FALSE(waker.Due(140));
  EXPECT_TRUE(waker.Due(3));
  internal::ParkedFetcherWaker off(0);
  EXPECT_FALSE(off.Due(100));
  EXPECT_FALSE(off.Due(0));
}

TEST(RdKafkaConfigTest, IntPropertyFallsBackWhenUnsetOrNotANumber) {
  const std::map<std::string, std::string> properties = {{"queued.min.messages", "250"},
                                                         {"socket.timeout.ms", "soon"}};
  EXPECT_EQ(internal::IntProperty(properties, "queued.min.messages", 7), 250);
  EXPECT_EQ(internal::IntProperty(properties, "socket.timeout.ms", 7), 7);
  EXPECT_EQ(internal::IntProperty(properties, "fetch.wait.max.ms", 7), 7);
}

TEST(RdKafkaConfigTest, RejectsUnknownProperties) {
  ConsumerConfig config;
  config.properties["no.such.property"] = "1";
  Result<std::unique_ptr<Consumer>> consumer = MakeRdKafkaConsumer(config);
  ASSERT_RAISES(InvalidArgument, consumer.status());
  EXPECT_NE(consumer.status().ToString().find("kafka.no.such.property"), std::string::npos);
}

}  // namespace
}  // namespace silt::kafka
