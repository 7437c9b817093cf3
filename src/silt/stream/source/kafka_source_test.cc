#include "silt/stream/source/kafka_source.h"

#include <gtest/gtest.h>

#include "silt/testing/forwarding_consumer.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/scripted_consumer.h"

namespace silt::stream {
namespace {

constexpr char kMeta[] = "memory://ckpt/sources/0";

class KafkaSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    cluster_.CreateTopic("events", 2);
  }

  void Fill(int32_t partition, int count) {
    for (int i = 0; i < count; ++i) {
      testing::ScriptedCluster::Record record;
      record.key = "k";
      record.value = "p" + std::to_string(partition) + "-" + std::to_string(i);
      record.timestamp_ms = 1000 * i;
      cluster_.Append("events", partition, std::move(record));
    }
  }

  Result<std::unique_ptr<KafkaSource>> TryMake(std::map<std::string, std::string> options) {
    SourceSpec spec;
    spec.format = "kafka";
    spec.options = std::move(options);
    spec.options.emplace("kafka.bootstrap.servers", "127.0.0.1:1");
    spec.options.emplace("subscribe", "events");
    SILT_ASSIGN_OR_RETURN(KafkaSourceOptions parsed, KafkaSourceOptions::FromSpec(spec));
    SourceContext context;
    context.checkpoint_fs = fs_;
    context.metadata_dir = kMeta;
    context.clock = &clock_;
    std::string group = parsed.properties.count("group.id") ? parsed.properties["group.id"] : "";
    return KafkaSource::Make(std::move(parsed), context, cluster_.NewConsumer(group));
  }

  std::unique_ptr<KafkaSource> Make(std::map<std::string, std::string> options) {
    Result<std::unique_ptr<KafkaSource>> source = TryMake(std::move(options));
    EXPECT_OK(source.status());
    if (!source.ok()) return nullptr;
    EXPECT_OK((*source)->Restore(std::nullopt));
    return std::move(source).ValueOrDie();
  }

  // The values of the batch (start, end], in read order.
  std::vector<std::string> Read(KafkaSource* source, const std::optional<std::string>& start,
                                const std::string& end) {
    std::vector<std::string> out;
    Result<std::unique_ptr<BatchReader>> reader = source->GetBatch(start, end);
    EXPECT_OK(reader.status());
    if (!reader.ok()) return out;
    while (true) {
      Result<columnar::RecordBatchPtr> batch = (*reader)->Next();
      EXPECT_OK(batch.status());
      if (!batch.ok() || *batch == nullptr) break;
      for (int64_t row = 0; row < (*batch)->num_rows; ++row) {
        out.emplace_back((*batch)->columns[1]->StringValue(row));
      }
    }
    return out;
  }

  fs::FileSystemPtr fs_;
  testing::ScriptedCluster cluster_;
  ManualClock clock_{1'700'000'000'000'000};
};

// subscribePattern matches whole topic names (RE2, as Java's
// Pattern.matches), and a pattern RE2 cannot compile fails at Make.
TEST_F(KafkaSourceTest, SubscribePatternMatchesWholeTopicNames) {
  cluster_.CreateTopic("events-a", 1);
  cluster_.CreateTopic("xevents", 1);
  auto make = [&](const std::string& pattern) {
    SourceSpec spec;
    spec.format = "kafka";
    spec.options = {{"kafka.bootstrap.servers", "127.0.0.1:1"},
                    {"subscribePattern", pattern},
                    {"startingOffsets", "earliest"}};
    Result<KafkaSourceOptions> parsed = KafkaSourceOptions::FromSpec(spec);
    EXPECT_OK(parsed.status());
    SourceContext context;
    context.checkpoint_fs = fs_;
    context.metadata_dir = kMeta;
    context.clock = &clock_;
    return KafkaSource::Make(std::move(parsed).ValueOrDie(), context, cluster_.NewConsumer(""));
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KafkaSource> source, make("events(-[a-z])?"));
  EXPECT_EQ(source->Description(), "KafkaV2[SubscribePattern[events(-[a-z])?]]");
  ASSERT_OK(source->Restore(std::nullopt));
  Fill(0, 2);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> latest,
                       source->LatestOffset(std::nullopt, ReadLimit()));
  ASSERT_TRUE(latest.has_value());
  EXPECT_NE(latest->find("\"events\""), std::string::npos) << *latest;
  EXPECT_NE(latest->find("\"events-a\""), std::string::npos) << *latest;
  EXPECT_EQ(latest->find("xevents"), std::string::npos) << *latest;

  Result<std::unique_ptr<KafkaSource>> bad = make("(events");
  ASSERT_RAISES(InvalidArgument, bad.status());
  EXPECT_NE(bad.status().message().find("subscribePattern: invalid pattern '(events': "),
            std::string::npos)
      << bad.status().message();
}

// Forwards to a consumer and counts the offset queries made through it.
class CountingConsumer final : public testing::ForwardingConsumer {
 public:
  using ForwardingConsumer::ForwardingConsumer;
  Result<std::vector<kafka::TopicInfo>> ListTopics() override {
    ++list_topics;
    return ForwardingConsumer::ListTopics();
  }
  Result<kafka::Watermarks> QueryWatermarks(const kafka::TopicPartition& tp) override {
    ++query_watermarks;
    return ForwardingConsumer::QueryWatermarks(tp);
  }
  Result<std::map<kafka::TopicPartition, int64_t>> ListOffsets(
      const std::vector<kafka::TopicPartition>& partitions, OffsetSpec spec) override {
    ++(spec == OffsetSpec::kEarliest ? list_earliest : list_latest);
    return ForwardingConsumer::ListOffsets(partitions, spec);
  }
  void Reset() { list_topics = query_watermarks = list_earliest = list_latest = 0; }

  int list_topics = 0;
  int query_watermarks = 0;
  int list_earliest = 0;
  int list_latest = 0;
};

// Issue #22: a batch asks the broker once for the latest offsets of all
// partitions (planning) and once for their earliest offsets (the data-loss
// check before reading), not once per partition and phase.
TEST_F(KafkaSourceTest, ABatchQueriesEachKindOfOffsetOnceForAllPartitions) {
  Fill(0, 3);
  Fill(1, 2);
  SourceSpec spec;
  spec.format = "kafka";
  spec.options = {{"kafka.bootstrap.servers", "127.0.0.1:1"},
                  {"subscribe", "events"},
                  {"startingOffsets", "earliest"}};
  ASSERT_OK_AND_ASSIGN(KafkaSourceOptions parsed, KafkaSourceOptions::FromSpec(spec));
  SourceContext context;
  context.checkpoint_fs = fs_;
  context.metadata_dir = kMeta;
  context.clock = &clock_;
  auto counting = std::make_unique<CountingConsumer>(cluster_.NewConsumer(""));
  CountingConsumer* counts = counting.get();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KafkaSource> source,
                       KafkaSource::Make(std::move(parsed), context, std::move(counting)));
  ASSERT_OK(source->Restore(std::nullopt));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> first, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(Read(source.get(), std::nullopt, *first).size(), 5u);

  Fill(0, 2);
  Fill(1, 1);
  counts->Reset();
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> second, source->LatestOffset(first, {}));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, R"({"events":{"0":5,"1":3}})");
  EXPECT_EQ(counts->list_latest, 1);
  EXPECT_EQ(counts->list_earliest, 0);
  EXPECT_EQ(Read(source.get(), first, *second), (std::vector<std::string>{"p0-0", "p0-1", "p1-0"}));
  EXPECT_EQ(counts->list_latest, 1);
  EXPECT_EQ(counts->list_earliest, 1);
  EXPECT_EQ(counts->query_watermarks, 0);
  EXPECT_EQ(counts->list_topics, 1);
}

// The records a planned batch covers.
int64_t BatchSize(const std::optional<std::string>& start, const std::string& end) {
  KafkaOffsets from;
  if (start) from = KafkaOffsetsFromJson(*start, "start", false).ValueOrDie();
  KafkaOffsets until = KafkaOffsetsFromJson(end, "end", false).ValueOrDie();
  int64_t n = 0;
  for (const auto& [tp, offset] : until) {
    auto it = from.find(tp);
    n += offset - (it == from.end() ? 0 : it->second);
  }
  return n;
}

TEST(KafkaOffsetsJsonTest, RoundTripsSparksForm) {
  KafkaOffsets offsets{{{"b", 10}, 3}, {{"b", 2}, 7}, {{"a", 0}, 15}};
  std::string json = KafkaOffsetsToJson(offsets);
  EXPECT_EQ(json, R"({"a":{"0":15},"b":{"2":7,"10":3}})");
  ASSERT_OK_AND_ASSIGN(KafkaOffsets parsed, KafkaOffsetsFromJson(json, "test", false));
  EXPECT_EQ(parsed, offsets);
  ASSERT_RAISES(InvalidArgument, KafkaOffsetsFromJson(R"({"a":{"0":-2}})", "test", false));
  ASSERT_OK_AND_ASSIGN(KafkaOffsets special,
                       KafkaOffsetsFromJson(R"({"a":{"0":-2,"1":-1}})", "test", true));
  EXPECT_EQ(special.at({"a", 1}), -1);
}

TEST_F(KafkaSourceTest, RejectsOptionsSparkRejects) {
  ASSERT_RAISES(InvalidArgument, TryMake({{"kafka.auto.offset.reset", "earliest"}}));
  ASSERT_RAISES(InvalidArgument, TryMake({{"kafka.enable.auto.commit", "true"}}));
  ASSERT_RAISES(InvalidArgument, TryMake({{"kafka.value.deserializer", "x"}}));
  ASSERT_RAISES(InvalidArgument, TryMake({{"assign", R"({"events":[0]})"}}));
  ASSERT_RAISES(InvalidArgument, TryMake({{"startingOffsets", "{bad"}}));
  SourceSpec spec;
  spec.format = "kafka";
  spec.options = {{"subscribe", "events"}};
  Result<KafkaSourceOptions> no_servers = KafkaSourceOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, no_servers.status());
  EXPECT_NE(no_servers.status().ToString().find("kafka.bootstrap.servers"), std::string::npos);
}

// A misspelled option would make Spark start at `latest` and skip the
// backlog; silt refuses it and names the option meant.
TEST_F(KafkaSourceTest, UnknownOptionsAreErrorsNamingTheClosestKnownOne) {
  SourceSpec spec;
  spec.format = "kafka";
  spec.key_path = "source";
  spec.options = {{"kafka.bootstrap.servers", "b:9092"},
                  {"subscribe", "events"},
                  {"startingOffset", "earliest"}};
  Result<KafkaSourceOptions> typo = KafkaSourceOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, typo.status());
  EXPECT_NE(typo.status().message().find("source.options.startingOffset: unknown option of the "
                                         "Kafka source; did you mean startingOffsets?"),
            std::string::npos)
      << typo.status().ToString();

  spec.options.erase("startingOffset");
  spec.options["STARTINGOFFSETS"] = "earliest";  // case-insensitive, as Spark
  spec.options["minPartitions"] = "8";           // inert: accepted
  spec.options["kafka.fetch.max.bytes"] = "1000000";
  ASSERT_OK_AND_ASSIGN(KafkaSourceOptions ok, KafkaSourceOptions::FromSpec(spec));
  EXPECT_EQ(ok.start, KafkaSourceOptions::Start::kEarliest);
  EXPECT_EQ(ok.properties.at("fetch.max.bytes"), "1000000");

  spec.options["endingTimestamp"] = "1700000000000";
  ASSERT_RAISES(InvalidArgument, KafkaSourceOptions::FromSpec(spec).status());
  spec.options.erase("endingTimestamp");
  spec.options["nothingLikeAnyOption"] = "1";
  Result<KafkaSourceOptions> far = KafkaSourceOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, far.status());
  EXPECT_EQ(far.status().message().find("did you mean"), std::string::npos);
}

TEST_F(KafkaSourceTest, StartsAtEarliestAndRecordsInitialOffsetsLikeSpark) {
  Fill(0, 3);
  Fill(1, 2);
  cluster_.DeleteBefore("events", 0, 1);
  std::unique_ptr<KafkaSource> source = Make({{"startingOffsets", "earliest"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(*end, R"({"events":{"0":3,"1":2}})");
  ASSERT_OK_AND_ASSIGN(std::string initial, fs_->ReadFile(std::string(kMeta) + "/0"));
  EXPECT_EQ(initial, std::string("\0v1\n", 4) + R"({"events":{"0":1,"1":0}})");
  EXPECT_EQ(Read(source.get(), std::nullopt, *end),
            (std::vector<std::string>{"p0-1", "p0-2", "p1-0", "p1-1"}));
  // Nothing new: no batch.
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> none, source->LatestOffset(end, {}));
  EXPECT_FALSE(none.has_value());
}

TEST_F(KafkaSourceTest, InitialOffsetsFileWinsOverStartingOffsetsOnRestart) {
  Fill(0, 4);
  {
    std::unique_ptr<KafkaSource> first = Make({{"startingOffsets", "latest"}});
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, first->LatestOffset(std::nullopt, {}));
    EXPECT_FALSE(end.has_value());
  }
  Fill(0, 2);
  std::unique_ptr<KafkaSource> second = Make({{"startingOffsets", "earliest"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, second->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(Read(second.get(), std::nullopt, *end), (std::vector<std::string>{"p0-0", "p0-1"}));
}

TEST_F(KafkaSourceTest, StartingOffsetsJsonResolvesEarliestAndLatest) {
  Fill(0, 5);
  Fill(1, 5);
  std::unique_ptr<KafkaSource> source = Make({{"startingOffsets", R"({"events":{"0":3,"1":-1}})"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(*end, R"({"events":{"0":5,"1":5}})");
  EXPECT_EQ(Read(source.get(), std::nullopt, *end), (std::vector<std::string>{"p0-3", "p0-4"}));
  Fill(1, 1);  // value "p1-0" again, at offset 5
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> next, source->LatestOffset(end, {}));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(Read(source.get(), end, *next), (std::vector<std::string>{"p1-0"}));
}

TEST_F(KafkaSourceTest, MaxOffsetsPerTriggerSplitsByBacklogLikeSpark) {
  Fill(0, 90);
  Fill(1, 3);
  std::unique_ptr<KafkaSource> source =
      Make({{"startingOffsets", "earliest"}, {"maxOffsetsPerTrigger", "10"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  // 10 * 90/93 = 9.67 -> 9; 10 * 3/93 = 0.32 -> 1 (never starved).
  EXPECT_EQ(*end, R"({"events":{"0":9,"1":1}})");
  ReadLimit all;
  all.all_available = true;
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> rest, source->LatestOffset(end, all));
  EXPECT_EQ(*rest, R"({"events":{"0":90,"1":3}})");
}

TEST_F(KafkaSourceTest, MaxOffsetsPerTriggerBoundsEveryBatch) {
  // Spark's rounding gives each of the small partitions one record, which
  // would make 11 > 10; silt takes the excess off the largest share.
  cluster_.CreateTopic("events", 3);
  Fill(0, 1000);
  Fill(1, 1);
  Fill(2, 1);
  std::unique_ptr<KafkaSource> source =
      Make({{"startingOffsets", "earliest"}, {"maxOffsetsPerTrigger", "10"}});
  std::optional<std::string> start;
  int64_t total = 0;
  int batches = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(start, {}));
    if (!end) break;
    const int64_t size = BatchSize(start, *end);
    EXPECT_LE(size, 10) << *end;
    EXPECT_GT(size, 0) << *end;
    total += size;
    start = end;
    ++batches;
  }
  EXPECT_EQ(total, 1002);
  EXPECT_EQ(batches, 101);
  // Fewer records allowed than partitions with data: still bounded, and
  // every partition drains.
  cluster_.CreateTopic("other", 3);
  for (int32_t p = 0; p < 3; ++p) {
    for (int i = 0; i < 2; ++i) cluster_.Append("other", p, {});
  }
  SourceSpec spec;
  spec.format = "kafka";
  spec.options = {{"kafka.bootstrap.servers", "x:1"},
                  {"subscribe", "other"},
                  {"startingOffsets", "earliest"},
                  {"maxOffsetsPerTrigger", "1"}};
  ASSERT_OK_AND_ASSIGN(KafkaSourceOptions options, KafkaSourceOptions::FromSpec(spec));
  SourceContext context;
  context.checkpoint_fs = fs_;
  context.metadata_dir = "memory://ckpt2/sources/0";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KafkaSource> one,
                       KafkaSource::Make(std::move(options), context, cluster_.NewConsumer("")));
  start.reset();
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, one->LatestOffset(start, {}));
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(BatchSize(start, *end), 1) << *end;
    start = end;
  }
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> done, one->LatestOffset(start, {}));
  EXPECT_FALSE(done.has_value());
}

TEST_F(KafkaSourceTest, MinOffsetsPerTriggerWaitsUntilMaxTriggerDelay) {
  Fill(0, 3);
  std::unique_ptr<KafkaSource> source = Make(
      {{"startingOffsets", "earliest"}, {"minOffsetsPerTrigger", "5"}, {"maxTriggerDelay", "30s"}});
  // As in Spark, the first trigger of a process does not wait.
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> first, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(BatchSize(std::nullopt, *first), 3);
  Fill(0, 2);
  clock_.Advance(10'000'000);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> wait, source->LatestOffset(first, {}));
  EXPECT_FALSE(wait.has_value());  // 2 < 5 and only 10 s since the last batch
  Fill(1, 3);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> enough, source->LatestOffset(first, {}));
  ASSERT_TRUE(enough.has_value());  // 5 new records
  EXPECT_EQ(BatchSize(first, *enough), 5);
  Fill(1, 1);
  clock_.Advance(29'000'000);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> still, source->LatestOffset(enough, {}));
  EXPECT_FALSE(still.has_value());
  clock_.Advance(1'000'000);  // 30 s since the last batch: go with what is there
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> late, source->LatestOffset(enough, {}));
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(BatchSize(enough, *late), 1);
  // availableNow drains without waiting.
  Fill(0, 1);
  ASSERT_OK(source->PrepareForAvailableNow());
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> now, source->LatestOffset(late, {}));
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(BatchSize(late, *now), 1);
}

TEST_F(KafkaSourceTest, MinOffsetsPerTriggerOptionsAreChecked) {
  ASSERT_RAISES(InvalidArgument,
                TryMake({{"minOffsetsPerTrigger", "10"}, {"maxOffsetsPerTrigger", "5"}}));
  ASSERT_RAISES(InvalidArgument, TryMake({{"minOffsetsPerTrigger", "0"}}));
  ASSERT_RAISES(InvalidArgument,
                TryMake({{"minOffsetsPerTrigger", "1"}, {"maxTriggerDelay", "soon"}}));
  ASSERT_OK(TryMake({{"minOffsetsPerTrigger", "1"}, {"maxTriggerDelay", "1500"}}).status());
}

TEST_F(KafkaSourceTest, AvailableNowStopsAtTheOffsetsSeenAtStart) {
  Fill(0, 2);
  std::unique_ptr<KafkaSource> source = Make({{"startingOffsets", "earliest"}});
  ASSERT_OK(source->PrepareForAvailableNow());
  Fill(0, 5);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  EXPECT_EQ(*end, R"({"events":{"0":2,"1":0}})");
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> next, source->LatestOffset(end, {}));
  EXPECT_FALSE(next.has_value());
}

TEST_F(KafkaSourceTest, FailOnDataLossNamesTheLostRange) {
  Fill(0, 10);
  std::unique_ptr<KafkaSource> source = Make({{"startingOffsets", "earliest"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  cluster_.DeleteBefore("events", 0, 4);
  Result<std::unique_ptr<BatchReader>> reader = source->GetBatch(std::nullopt, *end);
  ASSERT_RAISES(NotFound, reader.status());
  EXPECT_NE(reader.status().ToString().find("events-0: offsets 0 to 3"), std::string::npos)
      << reader.status().ToString();
}

TEST_F(KafkaSourceTest, WithoutFailOnDataLossSkipsDeletedRecords) {
  Fill(0, 10);
  std::unique_ptr<KafkaSource> source =
      Make({{"startingOffsets", "earliest"}, {"failOnDataLoss", "false"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  cluster_.DeleteBefore("events", 0, 8);
  EXPECT_EQ(Read(source.get(), std::nullopt, *end), (std::vector<std::string>{"p0-8", "p0-9"}));
}

TEST_F(KafkaSourceTest, NewPartitionsStartAtEarliest) {
  Fill(0, 1);
  std::unique_ptr<KafkaSource> source = Make({{"startingOffsets", "latest"}});
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> none, source->LatestOffset(std::nullopt, {}));
  EXPECT_FALSE(none.has_value());
  cluster_.CreateTopic("events", 3);
  Fill(2, 2);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(*end, R"({"events":{"0":1,"1":0,"2":2}})");
  EXPECT_EQ(Read(source.get(), std::nullopt, *end), (std::vector<std::string>{"p2-0", "p2-1"}));
}

TEST_F(KafkaSourceTest, CommitsBatchEndsToTheConsumerGroup) {
  Fill(0, 3);
  std::unique_ptr<KafkaSource> source =
      Make({{"startingOffsets", "earliest"}, {"kafka.group.id", "lag"}});
  source->OnBatchCommitted(R"({"events":{"0":3,"1":0}})");
  EXPECT_EQ(cluster_.committed().at({"events", 0}), 3);
  // Best effort: a failing commit does not surface.
  cluster_.FailNextCall(Status::IOError("broker down"));
  source->OnBatchCommitted(R"({"events":{"0":4,"1":0}})");
  EXPECT_EQ(cluster_.committed().at({"events", 0}), 3);
}

// What the extra consumers of GetBatchParts went through.
struct PartConsumerLog {
  int made = 0;
  int live = 0;
  // Each Assign call's number of ranges, over all extra consumers.
  std::vector<size_t> assigns;
  bool fail_unassign = false;  // Assign({}) fails
};

class LoggedConsumer final : public testing::ForwardingConsumer {
 public:
  LoggedConsumer(std::unique_ptr<kafka::Consumer> inner, PartConsumerLog* log)
      : ForwardingConsumer(std::move(inner)), log_(log) {
    ++log_->made;
    ++log_->live;
  }
  ~LoggedConsumer() override { --log_->live; }
  Status Assign(const std::vector<kafka::OffsetRange>& ranges) override {
    log_->assigns.push_back(ranges.size());
    if (ranges.empty() && log_->fail_unassign) return Status::IOError("broker gone");
    return ForwardingConsumer::Assign(ranges);
  }

 private:
  PartConsumerLog* log_;
};

// Reads every part of the batch (start, end]; returns the records read.
int64_t ReadParts(KafkaSource* source, const std::optional<std::string>& start,
                  const std::string& end, size_t expected_parts) {
  Result<BatchParts> parts = source->GetBatchParts(start, end, /*max_parts=*/2);
  EXPECT_OK(parts.status());
  if (!parts.ok()) return -1;
  EXPECT_EQ(parts->readers.size(), expected_parts);
  int64_t rows = 0;
  for (const std::unique_ptr<BatchReader>& part : parts->readers) {
    while (true) {
      Result<columnar::RecordBatchPtr> batch = part->Next();
      EXPECT_OK(batch.status());
      if (!batch.ok() || *batch == nullptr) break;
      rows += (*batch)->num_rows;
    }
  }
  return rows;
}

// Sources whose extra consumers go through a PartConsumerLog, after a
// first batch of kMinRecordsPerPart records in each of two partitions read
// in two parts (one extra consumer made and assigned).
class KafkaSourceSplitTest : public KafkaSourceTest {
 protected:
  std::unique_ptr<KafkaSource> SplitOnce(std::string* first) {
    std::unique_ptr<KafkaSource> source = Make({{"startingOffsets", "earliest"}});
    source->set_consumer_factory([this]() -> Result<std::unique_ptr<kafka::Consumer>> {
      return std::unique_ptr<kafka::Consumer>(
          std::make_unique<LoggedConsumer>(cluster_.NewConsumer(), &log_));
    });
    Fill(0, static_cast<int>(kPerPart));
    Fill(1, static_cast<int>(kPerPart));
    Result<std::optional<std::string>> end = source->LatestOffset(std::nullopt, {});
    EXPECT_OK(end.status());
    if (!end.ok() || !end->has_value()) return nullptr;
    *first = **end;
    EXPECT_EQ(ReadParts(source.get(), std::nullopt, *first, 2), 2 * kPerPart);
    EXPECT_EQ(log_.made, 1);
    EXPECT_EQ(log_.assigns, (std::vector<size_t>{1}));
    return source;
  }

  static constexpr int64_t kPerPart = KafkaSource::kMinRecordsPerPart;
  PartConsumerLog log_;
};

// Issue #22: an extra consumer made for a split batch kept its partitions
// assigned when later batches did not need it, and librdkafka went on
// prefetching the topic into it (54-60 MB in workload B). Now a batch that
// does not use it unassigns it, and one unused for kReleaseIdleMicros is
// closed; a later split batch makes a new one.
TEST_F(KafkaSourceSplitTest, AnUnusedExtraConsumerIsUnassignedAndThenClosed) {
  std::string first;
  std::unique_ptr<KafkaSource> source = SplitOnce(&first);
  ASSERT_NE(source, nullptr);

  // A small batch: one part; the extra consumer gives up its partition.
  Fill(0, 5);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> second, source->LatestOffset(first, {}));
  EXPECT_EQ(ReadParts(source.get(), first, *second, 1), 5);
  EXPECT_EQ(log_.assigns, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(source->part_consumers(), 1);
  EXPECT_EQ(log_.live, 1);

  // Still unused but not for long enough: kept, not assigned again.
  clock_.Advance(KafkaSource::kReleaseIdleMicros - 1);
  Fill(1, 3);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> third, source->LatestOffset(second, {}));
  EXPECT_EQ(ReadParts(source.get(), second, *third, 1), 3);
  EXPECT_EQ(log_.assigns, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(log_.live, 1);

  clock_.Advance(1);
  Fill(0, 2);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> fourth, source->LatestOffset(third, {}));
  EXPECT_EQ(ReadParts(source.get(), third, *fourth, 1), 2);
  EXPECT_EQ(source->part_consumers(), 0);
  EXPECT_EQ(log_.live, 0);

  // Split again: a new extra consumer reads its part.
  Fill(0, static_cast<int>(kPerPart));
  Fill(1, static_cast<int>(kPerPart));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> fifth, source->LatestOffset(fourth, {}));
  EXPECT_EQ(ReadParts(source.get(), fourth, *fifth, 2), 2 * kPerPart);
  EXPECT_EQ(log_.made, 2);
  EXPECT_EQ(log_.live, 1);
}

// Unassigning is housekeeping between batches: when it fails the extra
// consumer is closed and the batch still reads.
TEST_F(KafkaSourceSplitTest, AnExtraConsumerThatCannotBeUnassignedIsClosed) {
  log_.fail_unassign = true;
  std::string first;
  std::unique_ptr<KafkaSource> source = SplitOnce(&first);
  ASSERT_NE(source, nullptr);
  Fill(0, 5);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> second, source->LatestOffset(first, {}));
  EXPECT_EQ(ReadParts(source.get(), first, *second, 1), 5);
  EXPECT_EQ(log_.assigns, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(source->part_consumers(), 0);
  EXPECT_EQ(log_.live, 0);
}

// Threads are counted by records, consumers by partitions: one partition
// that holds the batch is one consumer read by up to max_parts threads
// (query/shared_readers.h), and no extra client is made for it.
TEST_F(KafkaSourceSplitTest, OneBigPartitionIsOneConsumerForSeveralThreads) {
  std::unique_ptr<KafkaSource> source = Make({{"startingOffsets", "earliest"}});
  source->set_consumer_factory([this]() -> Result<std::unique_ptr<kafka::Consumer>> {
    return std::unique_ptr<kafka::Consumer>(
        std::make_unique<LoggedConsumer>(cluster_.NewConsumer(), &log_));
  });
  Fill(0, static_cast<int>(2 * kPerPart - 1));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> first, source->LatestOffset(std::nullopt, {}));
  ASSERT_OK_AND_ASSIGN(BatchParts small, source->GetBatchParts(std::nullopt, *first, 4));
  EXPECT_EQ(small.readers.size(), 1u);
  EXPECT_EQ(small.threads, 1u);
  EXPECT_EQ(ReadParts(source.get(), std::nullopt, *first, 1), 2 * kPerPart - 1);

  Fill(0, static_cast<int>(3 * kPerPart));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> second, source->LatestOffset(first, {}));
  ASSERT_OK_AND_ASSIGN(BatchParts big, source->GetBatchParts(first, *second, 4));
  EXPECT_EQ(big.readers.size(), 1u);
  EXPECT_EQ(big.threads, 3u);
  EXPECT_EQ(log_.made, 0);
  int64_t rows = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr chunk, big.readers[0]->Next());
    if (chunk == nullptr) break;
    rows += chunk->num_rows;
  }
  EXPECT_EQ(rows, 3 * kPerPart);
}

TEST_F(KafkaSourceTest, HeadersColumnWhenIncluded) {
  testing::ScriptedCluster::Record record;
  record.value = "v";
  record.headers = {{"trace", "abc"}};
  cluster_.Append("events", 0, record);
  std::unique_ptr<KafkaSource> source =
      Make({{"startingOffsets", "earliest"}, {"includeHeaders", "true"}});
  ASSERT_EQ(source->schema()->num_fields(), 8);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<BatchReader> reader, source->GetBatch(std::nullopt, *end));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr batch, reader->Next());
  ASSERT_EQ(batch->num_rows, 1);
  const columnar::Column& headers = *batch->columns[7];
  ASSERT_TRUE(headers.IsValid(0));
  EXPECT_EQ(headers.children[0]->children[0]->StringValue(0), "trace");
  EXPECT_EQ(headers.children[0]->children[1]->StringValue(0), "abc");
}

}  // namespace
}  // namespace silt::stream
