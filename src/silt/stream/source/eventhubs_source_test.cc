#include "silt/stream/source/eventhubs_source.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"
#include "silt/testing/scripted_consumer.h"

namespace silt::stream {
namespace {

constexpr char kMeta[] = "memory://ckpt/sources/0";
constexpr char kConnection[] =
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
    "SharedAccessKey=c2VjcmV0LWtleQ==;EntityPath=hub";

SourceSpec Spec(std::map<std::string, std::string> options) {
  SourceSpec spec;
  spec.format = "eventhubs";
  spec.key_path = "source";
  spec.options = std::move(options);
  spec.options.emplace("eventhubs.connectionString", kConnection);
  return spec;
}

TEST(EventHubsConnection, ParsesTheKafkaEndpoint) {
  ASSERT_OK_AND_ASSIGN(EventHubsConnection c, EventHubsConnection::Parse(kConnection, "x"));
  EXPECT_EQ(c.host, "ns.servicebus.windows.net");
  EXPECT_EQ(c.port, 9093);
  EXPECT_EQ(c.entity_path, "hub");
  ASSERT_OK_AND_ASSIGN(c, EventHubsConnection::Parse("entitypath=h;ENDPOINT=sb://localhost:19093/;"
                                                     "SharedAccessKeyName=k;SharedAccessKey=v",
                                                     "x"));
  EXPECT_EQ(c.host, "localhost");
  EXPECT_EQ(c.port, 19093);
}

TEST(EventHubsConnection, RejectsWithoutNamingTheKey) {
  Result<EventHubsConnection> r = EventHubsConnection::Parse(
      "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=s3cr3t",
      "source.options.eventhubs.connectionString");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("EntityPath"), std::string::npos);
  EXPECT_NE(r.status().message().find("source.options.eventhubs.connectionString"),
            std::string::npos);
  EXPECT_EQ(r.status().message().find("s3cr3t"), std::string::npos);
  // An EventHubsUtils.encrypt output.
  r = EventHubsConnection::Parse("q83vEjRWeJA0VnhQ4o5jHQ==", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("encrypt"), std::string::npos);
}

TEST(EventHubsPosition, ParsesTheConnectorsJson) {
  ASSERT_OK_AND_ASSIGN(
      EventHubsPosition p,
      EventHubsPosition::FromJson(
          R"({"offset":"-1","seqNo":-1,"enqueuedTime":null,"isInclusive":true})", "x"));
  EXPECT_EQ(p.offset, "-1");
  ASSERT_OK_AND_ASSIGN(
      p, EventHubsPosition::FromJson(R"({"offset":null,"seqNo":100,"enqueuedTime":null})", "x"));
  EXPECT_EQ(p.seq_no, 100);
  ASSERT_OK_AND_ASSIGN(
      p, EventHubsPosition::FromJson(R"({"enqueuedTime":"2024-05-01T00:00:01.500Z"})", "x"));
  EXPECT_EQ(p.enqueued_time_micros, int64_t{1714521601500000});
  EXPECT_FALSE(EventHubsPosition::FromJson(R"({"seqNo":-1})", "x").ok());
  EXPECT_FALSE(EventHubsPosition::FromJson(R"({"offest":"-1"})", "x").ok());
}

TEST(EventHubsSourceOptions, MapsToTheKafkaEndpoint) {
  ASSERT_OK_AND_ASSIGN(EventHubsSourceOptions o,
                       EventHubsSourceOptions::FromSpec(Spec({{"eventhubs.consumerGroup", "g"}})));
  EXPECT_EQ(o.kafka.topics, std::vector<std::string>{"hub"});
  EXPECT_EQ(o.kafka.properties["bootstrap.servers"], "ns.servicebus.windows.net:9093");
  EXPECT_EQ(o.kafka.properties["security.protocol"], "SASL_SSL");
  EXPECT_EQ(o.kafka.properties["sasl.mechanism"], "PLAIN");
  EXPECT_EQ(o.kafka.properties["sasl.username"], "$ConnectionString");
  EXPECT_EQ(o.kafka.properties["sasl.password"], kConnection);
  EXPECT_EQ(o.kafka.properties["group.id"], "g");
  EXPECT_FALSE(o.kafka.max_offsets_per_trigger.has_value());
  EXPECT_EQ(o.kafka.default_max_offsets_per_partition, 1000);

  EXPECT_FALSE(EventHubsSourceOptions::FromSpec(Spec({{"eventhubs.startingPositon", "{}"}})).ok());
  EXPECT_FALSE(EventHubsSourceOptions::FromSpec(Spec({{"kafka.sasl.password", "other"}})).ok());
  EXPECT_FALSE(EventHubsSourceOptions::FromSpec(Spec({{"eventhubs.useAadAuth", "true"}})).ok());
  EXPECT_OK(EventHubsSourceOptions::FromSpec(Spec({{"eventhubs.prefetchCount", "100"}})).status());
}

class EventHubsSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = fs::MakeMemoryFileSystem();
    cluster_.CreateTopic("hub", 2);
  }

  void Fill(int32_t partition, int count) {
    for (int i = 0; i < count; ++i) {
      testing::ScriptedCluster::Record record;
      if (i % 2 == 0) record.key = "k" + std::to_string(i);
      record.value = "p" + std::to_string(partition) + "-" + std::to_string(i);
      record.timestamp_ms = 1000 * (i + 1);
      record.headers = {{"a", "1"}, {"b", std::nullopt}, {"a", "2"}};
      cluster_.Append("hub", partition, std::move(record));
    }
  }

  std::unique_ptr<EventHubsSource> Make(std::map<std::string, std::string> options) {
    Result<EventHubsSourceOptions> parsed = EventHubsSourceOptions::FromSpec(Spec(options));
    EXPECT_OK(parsed.status());
    if (!parsed.ok()) return nullptr;
    SourceContext context;
    context.checkpoint_fs = fs_;
    context.metadata_dir = kMeta;
    Result<std::unique_ptr<EventHubsSource>> source =
        EventHubsSource::Make(std::move(*parsed), context, cluster_.NewConsumer("g"));
    EXPECT_OK(source.status());
    if (!source.ok()) return nullptr;
    EXPECT_OK((*source)->Restore(std::nullopt));
    return std::move(source).ValueOrDie();
  }

  std::vector<columnar::RecordBatchPtr> Read(EventHubsSource* source,
                                             const std::optional<std::string>& start,
                                             const std::string& end) {
    std::vector<columnar::RecordBatchPtr> out;
    Result<std::unique_ptr<BatchReader>> reader = source->GetBatch(start, end);
    EXPECT_OK(reader.status());
    if (!reader.ok()) return out;
    while (true) {
      Result<columnar::RecordBatchPtr> chunk = (*reader)->Next();
      EXPECT_OK(chunk.status());
      if (!chunk.ok() || *chunk == nullptr) break;
      EXPECT_OK(columnar::ValidateBatch(**chunk));
      out.push_back(*chunk);
    }
    return out;
  }

  fs::FileSystemPtr fs_;
  testing::ScriptedCluster cluster_;
};

TEST_F(EventHubsSourceTest, DefaultsToTheEndOfTheStream) {
  Fill(0, 3);
  std::unique_ptr<EventHubsSource> source = Make({});
  ASSERT_NE(source, nullptr);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  EXPECT_FALSE(end.has_value());
  ASSERT_OK_AND_ASSIGN(std::string initial, fs_->ReadFile(std::string(kMeta) + "/0"));
  EXPECT_EQ(initial, std::string("\0v1\n", 4) + R"({"hub":{"0":3,"1":0}})");
}

TEST_F(EventHubsSourceTest, ReadsTheConnectorsColumns) {
  Fill(0, 3);
  Fill(1, 2);
  std::unique_ptr<EventHubsSource> source =
      Make({{"eventhubs.startingPosition", R"({"offset":"-1","seqNo":-1,"enqueuedTime":null})"},
            {"eventhubs.startingPositions",
             R"({"{\"ehName\":\"hub\",\"partitionId\":1}":{"seqNo":1}})"}});
  ASSERT_NE(source, nullptr);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(*end, R"({"hub":{"0":3,"1":2}})");
  std::vector<columnar::RecordBatchPtr> chunks = Read(source.get(), std::nullopt, *end);
  ASSERT_EQ(chunks.size(), 1u);
  const columnar::RecordBatch& b = *chunks[0];
  ASSERT_EQ(b.num_rows, 4);  // partition 0: 0..2, partition 1: 1
  EXPECT_EQ(b.schema->field(0).name, "body");
  EXPECT_EQ(b.schema->field(8).name, "systemProperties");
  for (int64_t i = 0; i < b.num_rows; ++i) {
    const std::string partition(b.GetColumn("partition")->StringValue(i));
    const int64_t seq = b.GetColumn("sequenceNumber")->Value<int64_t>(i);
    EXPECT_EQ(b.GetColumn("body")->StringValue(i), "p" + partition + "-" + std::to_string(seq));
    EXPECT_EQ(b.GetColumn("offset")->StringValue(i), std::to_string(seq));
    EXPECT_EQ(b.GetColumn("enqueuedTime")->Value<int64_t>(i), (seq + 1) * 1000 * 1000);
    EXPECT_TRUE(b.GetColumn("publisher")->IsNull(i));
    const columnar::Column& key = *b.GetColumn("partitionKey");
    const columnar::Column& system = *b.GetColumn("systemProperties");
    if (seq % 2 == 0) {
      EXPECT_EQ(key.StringValue(i), "k" + std::to_string(seq));
      ASSERT_EQ(system.offsets()[i + 1] - system.offsets()[i], 1);
      const columnar::Column& entries = *system.children[0];
      EXPECT_EQ(entries.children[0]->StringValue(system.offsets()[i]), "x-opt-kafka-key");
      EXPECT_EQ(entries.children[1]->StringValue(system.offsets()[i]),
                "[107," + std::to_string(48 + seq) + "]");
    } else {
      EXPECT_TRUE(key.IsNull(i));
      EXPECT_EQ(system.offsets()[i + 1] - system.offsets()[i], 0);
    }
    // Headers a=1, b=null, a=2: a keeps its last value.
    const columnar::Column& properties = *b.GetColumn("properties");
    const columnar::Column& entries = *properties.children[0];
    ASSERT_EQ(properties.offsets()[i + 1] - properties.offsets()[i], 2);
    const int32_t first = properties.offsets()[i];
    EXPECT_EQ(entries.children[0]->StringValue(first), "b");
    EXPECT_TRUE(entries.children[1]->IsNull(first));
    EXPECT_EQ(entries.children[0]->StringValue(first + 1), "a");
    EXPECT_EQ(entries.children[1]->StringValue(first + 1), "2");
  }
  EXPECT_EQ(source->DescribeRow(b, 0), "Event Hubs hub partition 0 sequence number 0");
}

TEST_F(EventHubsSourceTest, MaxEventsPerTriggerCapsEachBatch) {
  Fill(0, 10);
  std::unique_ptr<EventHubsSource> source =
      Make({{"eventhubs.startingPosition", R"({"offset":"-1"})"}, {"maxEventsPerTrigger", "4"}});
  ASSERT_NE(source, nullptr);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(*end, R"({"hub":{"0":4,"1":0}})");
}

TEST_F(EventHubsSourceTest, EnqueuedTimeStartsStrictlyAfter) {
  Fill(0, 5);  // timestamps 1 s .. 5 s
  std::unique_ptr<EventHubsSource> source =
      Make({{"eventhubs.startingPosition", R"({"enqueuedTime":"1970-01-01T00:00:02.000Z"})"}});
  ASSERT_NE(source, nullptr);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(std::nullopt, {}));
  ASSERT_OK_AND_ASSIGN(std::string initial, fs_->ReadFile(std::string(kMeta) + "/0"));
  // The event at 2 s (offset 1) is not after 2 s; partition 1 has none.
  EXPECT_EQ(initial.substr(4), R"({"hub":{"0":2,"1":0}})");
}

}  // namespace
}  // namespace silt::stream
