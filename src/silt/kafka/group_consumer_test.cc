// The group consumer against librdkafka's in-process mock cluster: members
// of one group split the partitions (cooperative-sticky), start them where
// on_assigned says, and hand them over on a rebalance.
#include "silt/kafka/group_consumer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "silt/kafka/mock_cluster.h"
#include "silt/kafka/producer.h"
#include "silt/testing/gtest_util.h"

namespace silt::kafka {
namespace {

constexpr int32_t kPartitions = 4;
constexpr int kRecordsPerPartition = 20;

class GroupConsumerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_, MockCluster::Make());
    ASSERT_OK(cluster_->CreateTopic("events", kPartitions));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Producer> producer,
                         Producer::Make({{"bootstrap.servers", cluster_->bootstraps()}}));
    for (int32_t partition = 0; partition < kPartitions; ++partition) {
      for (int i = 0; i < kRecordsPerPartition; ++i) {
        ASSERT_OK(producer->Send("events", partition, std::nullopt, std::to_string(i), 1, {}));
      }
    }
    ASSERT_OK(producer->Flush(30'000));
  }

  // A member that starts each partition at `start_offset` and records what
  // it was given and what it lost.
  struct Member {
    std::set<TopicPartition> assigned;
    std::set<TopicPartition> revoked;
    RecordColumns records{false};
    // Last: destroyed first, while its callbacks' targets are still there.
    std::unique_ptr<GroupConsumer> consumer;
  };

  std::unique_ptr<Member> Join(int64_t start_offset,
                               const std::map<std::string, std::string>& extra = {}) {
    auto member = std::make_unique<Member>();
    GroupConsumerConfig config;
    config.properties = {{"bootstrap.servers", cluster_->bootstraps()},
                         {"group.id", "workers"},
                         {"session.timeout.ms", "6000"},
                         {"heartbeat.interval.ms", "200"}};
    config.properties.insert(extra.begin(), extra.end());
    config.topics = {"events"};
    config.request_timeout_ms = 10'000;
    Member* raw = member.get();
    config.on_assigned = [raw, start_offset](const std::vector<TopicPartition>& partitions)
        -> Result<std::map<TopicPartition, int64_t>> {
      std::map<TopicPartition, int64_t> starts;
      for (const TopicPartition& tp : partitions) {
        raw->assigned.insert(tp);
        starts[tp] = start_offset;
      }
      return starts;
    };
    config.on_revoked = [raw](const std::vector<TopicPartition>& partitions, bool) {
      for (const TopicPartition& tp : partitions) raw->revoked.insert(tp);
    };
    Result<std::unique_ptr<GroupConsumer>> consumer = MakeRdKafkaGroupConsumer(std::move(config));
    EXPECT_TRUE(consumer.ok()) << consumer.status().ToString();
    if (consumer.ok()) member->consumer = std::move(*consumer);
    return member;
  }

  // Polls every member until `done` or 30 s.
  template <typename Done>
  void PollUntil(const std::vector<Member*>& members, Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      for (Member* member : members) {
        ASSERT_OK(member->consumer->Poll(&member->records, 1000, 50).status());
      }
    }
    ASSERT_TRUE(done()) << "timed out";
  }

  std::unique_ptr<MockCluster> cluster_;
};

TEST_F(GroupConsumerTest, OneMemberReadsEveryPartitionFromTheOffsetsItChose) {
  std::unique_ptr<Member> member = Join(5);
  ASSERT_NE(member->consumer, nullptr);
  PollUntil({member.get()}, [&] {
    if (member->consumer->positions().size() != kPartitions) return false;
    for (const auto& [tp, position] : member->consumer->positions()) {
      if (!position.at_end) return false;
    }
    return true;
  });
  EXPECT_EQ(member->assigned.size(), static_cast<size_t>(kPartitions));
  for (const auto& [tp, position] : member->consumer->positions()) {
    EXPECT_EQ(position.next, kRecordsPerPartition) << tp.ToString();
  }
  columnar::RecordBatchPtr batch = member->records.Finish();
  EXPECT_EQ(batch->num_rows, kPartitions * (kRecordsPerPartition - 5));
  // The first record of every partition is offset 5, as on_assigned said.
  const columnar::Column& offsets = *batch->GetColumn("offset");
  for (int64_t row = 0; row < batch->num_rows; ++row) {
    EXPECT_GE(offsets.Value<int64_t>(row), 5);
  }
  EXPECT_TRUE(member->consumer->TakeRebalanced());
  EXPECT_FALSE(member->consumer->TakeRebalanced());
  EXPECT_FALSE(member->consumer->member_id().empty());

  // A seek back re-reads; the group offsets are committed only when asked.
  ASSERT_OK(member->consumer->Seek({{{"events", 0}, 18}}));
  EXPECT_EQ(member->consumer->positions().at({"events", 0}).next, 18);
  PollUntil({member.get()}, [&] { return member->consumer->positions().at({"events", 0}).at_end; });
  EXPECT_EQ(member->records.Finish()->num_rows, 2);
  ASSERT_OK(member->consumer->CommitOffsets({{{"events", 0}, 20}}));
  ASSERT_OK(member->consumer->Close());
  EXPECT_EQ(member->revoked.size(), static_cast<size_t>(kPartitions));
}

// A prefetch of 5 records: the consumer queue fills past it at every
// fetch, and Poll wakes the parked fetcher (decision 198) many times; every
// record still comes once, in order per partition.
TEST_F(GroupConsumerTest, AMemberThatWakesItsParkedFetcherReadsEveryRecordOnce) {
  std::unique_ptr<Member> member = Join(0, {{"queued.min.messages", "5"}});
  ASSERT_NE(member->consumer, nullptr);
  auto done = [&] {
    if (member->consumer->positions().size() != kPartitions) return false;
    for (const auto& [tp, position] : member->consumer->positions()) {
      if (!position.at_end) return false;
    }
    return true;
  };
  // Three records a call, so the queue is seen full (a fetch brings a
  // partition's 20) and then half read between calls.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_OK(member->consumer->Poll(&member->records, 3, 50).status());
  }
  ASSERT_TRUE(done()) << "timed out";
  columnar::RecordBatchPtr batch = member->records.Finish();
  ASSERT_EQ(batch->num_rows, kPartitions * kRecordsPerPartition);
  const columnar::Column& partitions = *batch->GetColumn("partition");
  const columnar::Column& offsets = *batch->GetColumn("offset");
  std::map<int32_t, int64_t> next;
  for (int64_t row = 0; row < batch->num_rows; ++row) {
    const int32_t partition = partitions.Value<int32_t>(row);
    EXPECT_EQ(offsets.Value<int64_t>(row), next[partition]) << "partition " << partition;
    next[partition] = offsets.Value<int64_t>(row) + 1;
  }
  ASSERT_OK(member->consumer->Close());
}

TEST_F(GroupConsumerTest, ASecondMemberTakesOverHalfThePartitionsCooperatively) {
  std::unique_ptr<Member> first = Join(0);
  ASSERT_NE(first->consumer, nullptr);
  PollUntil({first.get()}, [&] { return first->consumer->positions().size() == kPartitions; });
  std::unique_ptr<Member> second = Join(0);
  ASSERT_NE(second->consumer, nullptr);
  PollUntil({first.get(), second.get()}, [&] {
    return first->consumer->positions().size() == kPartitions / 2 &&
           second->consumer->positions().size() == kPartitions / 2;
  });
  // Only the partitions that moved were revoked from the first member, and
  // the two now own disjoint halves.
  EXPECT_EQ(first->revoked.size(), static_cast<size_t>(kPartitions / 2));
  for (const auto& [tp, position] : second->consumer->positions()) {
    EXPECT_TRUE(first->revoked.count(tp)) << tp.ToString();
    EXPECT_FALSE(first->consumer->positions().count(tp)) << tp.ToString();
  }
  // When the second leaves, its partitions come back to the first.
  ASSERT_OK(second->consumer->Close());
  PollUntil({first.get()}, [&] { return first->consumer->positions().size() == kPartitions; });
}

TEST_F(GroupConsumerTest, AnAssignmentThatCannotStartIsReportedByPoll) {
  GroupConsumerConfig config;
  config.properties = {{"bootstrap.servers", cluster_->bootstraps()}, {"group.id", "broken"}};
  config.topics = {"events"};
  config.on_assigned =
      [](const std::vector<TopicPartition>&) -> Result<std::map<TopicPartition, int64_t>> {
    return Status::IOError("table unreadable");
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<GroupConsumer> consumer,
                       MakeRdKafkaGroupConsumer(std::move(config)));
  RecordColumns records(false);
  Status seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (seen.ok() && std::chrono::steady_clock::now() < deadline) {
    seen = consumer->Poll(&records, 100, 50).status();
  }
  ASSERT_RAISES(IOError, seen);
  EXPECT_NE(seen.message().find("table unreadable"), std::string::npos);
  EXPECT_EQ(records.num_rows(), 0);
}

TEST_F(GroupConsumerTest, MissingGroupIdIsRefused) {
  GroupConsumerConfig config;
  config.properties = {{"bootstrap.servers", cluster_->bootstraps()}};
  config.topics = {"events"};
  config.on_assigned =
      [](const std::vector<TopicPartition>&) -> Result<std::map<TopicPartition, int64_t>> {
    return std::map<TopicPartition, int64_t>();
  };
  ASSERT_RAISES(InvalidArgument, MakeRdKafkaGroupConsumer(std::move(config)));
}

}  // namespace
}  // namespace silt::kafka
