#include "silt/stream/sink/kafka_sink.h"

#include <gtest/gtest.h>

#include "silt/kafka/mock_cluster.h"
#include "silt/kafka/rdkafka_consumer.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

class KafkaSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(cluster_, kafka::MockCluster::Make());
    ASSERT_OK(cluster_->CreateTopic("out", 2));
    ASSERT_OK(cluster_->CreateTopic("other", 1));
  }

  SinkSpec Spec(std::map<std::string, std::string> options) {
    SinkSpec spec;
    spec.format = "kafka";
    spec.options = std::move(options);
    spec.options.emplace("kafka.bootstrap.servers", cluster_->bootstraps());
    return spec;
  }

  // Every record of `topic`-`partition`, in Spark's record layout.
  columnar::RecordBatchPtr ReadBack(const std::string& topic, int32_t partition) {
    kafka::ConsumerConfig config;
    config.properties["bootstrap.servers"] = cluster_->bootstraps();
    Result<std::unique_ptr<kafka::Consumer>> consumer = kafka::MakeRdKafkaConsumer(config);
    EXPECT_OK(consumer.status());
    Result<kafka::Watermarks> marks = (*consumer)->QueryWatermarks({topic, partition});
    EXPECT_OK(marks.status());
    kafka::RecordColumns columns(true);
    EXPECT_OK((*consumer)->Assign({{{topic, partition}, marks->low, marks->high}}));
    while (!(*consumer)->AssignmentDone()) {
      Result<int64_t> n = (*consumer)->Poll(&columns, 1000, 1000);
      EXPECT_OK(n.status());
      if (!n.ok()) break;
    }
    return columns.Finish();
  }

  std::unique_ptr<kafka::MockCluster> cluster_;
};

TEST_F(KafkaSinkTest, WritesKeysValuesHeadersAndPartitionsFromColumns) {
  // The Kafka source's own layout has every column the sink reads.
  kafka::RecordColumns in(true);
  in.Append("k1", "v1", "out", 1, 0, 0, 0);
  in.AddHeader("trace", "abc");
  in.AddHeader("empty", std::nullopt);
  in.EndHeaders();
  in.Append(std::nullopt, "v2", "out", 0, 1, 0, 0);
  in.NoHeaders();
  in.Append("k3", std::nullopt, "other", 0, 2, 0, 0);  // a tombstone to another topic
  in.NoHeaders();
  columnar::RecordBatchPtr batch = in.Finish();

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KafkaSink> sink, KafkaSink::Make(Spec({}), batch->schema));
  EXPECT_EQ(sink->Description(), "KafkaSink[topic column]");
  ASSERT_OK_AND_ASSIGN(bool write, sink->Begin(0));
  EXPECT_TRUE(write);
  ASSERT_OK(sink->Write(*batch));
  ASSERT_OK_AND_ASSIGN(SinkBatchResult result, sink->Commit());
  EXPECT_EQ(result.rows_written, 3);

  columnar::RecordBatchPtr p1 = ReadBack("out", 1);
  ASSERT_EQ(p1->num_rows, 1);
  EXPECT_EQ(p1->columns[0]->StringValue(0), "k1");
  EXPECT_EQ(p1->columns[1]->StringValue(0), "v1");
  const columnar::Column& headers = *p1->columns[7];
  ASSERT_TRUE(headers.IsValid(0));
  ASSERT_EQ(headers.offsets()[1] - headers.offsets()[0], 2);
  EXPECT_EQ(headers.children[0]->children[0]->StringValue(0), "trace");
  EXPECT_EQ(headers.children[0]->children[1]->StringValue(0), "abc");
  EXPECT_EQ(headers.children[0]->children[0]->StringValue(1), "empty");
  EXPECT_TRUE(headers.children[0]->children[1]->IsNull(1));

  columnar::RecordBatchPtr p0 = ReadBack("out", 0);
  ASSERT_EQ(p0->num_rows, 1);
  EXPECT_TRUE(p0->columns[0]->IsNull(0));
  EXPECT_EQ(p0->columns[1]->StringValue(0), "v2");

  columnar::RecordBatchPtr other = ReadBack("other", 0);
  ASSERT_EQ(other->num_rows, 1);
  EXPECT_EQ(other->columns[0]->StringValue(0), "k3");
  EXPECT_TRUE(other->columns[1]->IsNull(0));
}

TEST_F(KafkaSinkTest, TopicOptionWinsOverTheColumn) {
  kafka::RecordColumns in(false);
  in.Append("k", "v", "other", 0, 0, 0, 0);
  columnar::RecordBatchPtr batch = in.Finish();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KafkaSink> sink,
                       KafkaSink::Make(Spec({{"topic", "out"}}), batch->schema));
  EXPECT_EQ(sink->Description(), "KafkaSink[out]");
  ASSERT_OK(sink->Begin(0).status());
  ASSERT_OK(sink->Write(*batch));
  ASSERT_OK(sink->Commit().status());
  EXPECT_EQ(ReadBack("out", 0)->num_rows, 1);
  EXPECT_EQ(ReadBack("other", 0)->num_rows, 0);
}

TEST_F(KafkaSinkTest, EveryOutputModeSendsTheBatchRows) {
  // As Spark's Kafka sink: the mode changes which rows a query emits, not
  // how they are sent.
  for (std::string mode : {"append", "complete", "update"}) {
    kafka::RecordColumns in(false);
    in.Append("k", "v-" + mode, "out", 0, 0, 0, 0);
    columnar::RecordBatchPtr batch = in.Finish();
    SinkSpec spec = Spec({{"topic", "other"}});
    spec.output_mode = mode;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<KafkaSink> sink, KafkaSink::Make(spec, batch->schema));
    ASSERT_OK(sink->Begin(0).status());
    ASSERT_OK(sink->Write(*batch));
    ASSERT_OK(sink->Commit().status());
  }
  EXPECT_EQ(ReadBack("other", 0)->num_rows, 3);
}

TEST_F(KafkaSinkTest, RejectsSchemasAndOptionsSparkRejects) {
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr no_value, columnar::ParseDdlSchema("key STRING"));
  ASSERT_RAISES(InvalidArgument, KafkaSink::Make(Spec({{"topic", "out"}}), no_value));
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr int_value, columnar::ParseDdlSchema("value INT"));
  ASSERT_RAISES(InvalidArgument, KafkaSink::Make(Spec({{"topic", "out"}}), int_value));
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr no_topic, columnar::ParseDdlSchema("value STRING"));
  Result<std::unique_ptr<KafkaSink>> missing = KafkaSink::Make(Spec({}), no_topic);
  ASSERT_RAISES(InvalidArgument, missing.status());
  EXPECT_NE(missing.status().ToString().find("topic option required"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr bad_headers,
                       columnar::ParseDdlSchema("value STRING, headers ARRAY<STRING>"));
  ASSERT_RAISES(InvalidArgument, KafkaSink::Make(Spec({{"topic", "out"}}), bad_headers));
  ASSERT_RAISES(
      InvalidArgument,
      KafkaSink::Make(Spec({{"topic", "out"}, {"kafka.value.serializer", "x"}}), no_topic));
  SinkSpec no_servers;
  no_servers.format = "kafka";
  no_servers.options = {{"topic", "out"}};
  ASSERT_RAISES(InvalidArgument, KafkaSink::Make(no_servers, no_topic));
}

TEST_F(KafkaSinkTest, NullTopicIsAnErrorNamingTheRow) {
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr schema,
                       columnar::ParseDdlSchema("topic STRING, value STRING"));
  columnar::ColumnBuilder topic(schema->field(0).type);
  columnar::ColumnBuilder value(schema->field(1).type);
  topic.AppendString("out");
  value.AppendString("a");
  topic.AppendNull();
  value.AppendString("b");
  auto batch = std::make_shared<columnar::RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 2;
  batch->columns = {topic.Finish(), value.Finish()};
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KafkaSink> sink, KafkaSink::Make(Spec({}), schema));
  ASSERT_OK(sink->Begin(0).status());
  Status st = sink->Write(*batch);
  ASSERT_RAISES(InvalidArgument, st);
  EXPECT_NE(st.ToString().find("row 1"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace silt::stream
