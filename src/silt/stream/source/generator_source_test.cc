#include "silt/stream/source/generator_source.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <set>

#include "silt/columnar/temporal.h"
#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

std::unique_ptr<GeneratorSource> MakeGenerator(std::map<std::string, std::string> options,
                                               Clock* clock = &SystemClock()) {
  SourceSpec spec;
  spec.format = "generator";
  spec.options = std::move(options);
  Result<GeneratorOptions> parsed = GeneratorOptions::FromSpec(spec);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  Result<std::unique_ptr<GeneratorSource>> source = GeneratorSource::Make(*parsed, clock);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  return std::move(source).ValueOrDie();
}

std::vector<std::string> Rows(const columnar::RecordBatch& batch) {
  std::vector<std::string> rows;
  for (int64_t row = 0; row < batch.num_rows; ++row) {
    rows.push_back(std::string(batch.column(0)->StringValue(row)) + "|" +
                   std::string(batch.column(1)->StringValue(row)) + "|" +
                   std::to_string(batch.column(3)->Value<int32_t>(row)) + "|" +
                   std::to_string(batch.column(4)->Value<int64_t>(row)) + "|" +
                   std::to_string(batch.column(5)->Value<int64_t>(row)));
  }
  return rows;
}

TEST(GeneratorSourceTest, SchemaIsSparksKafkaRecordSchema) {
  auto source = MakeGenerator({});
  EXPECT_EQ(source->schema()->ToDdl(),
            "STRUCT<key: BINARY, value: BINARY, topic: STRING, partition: INT, offset: BIGINT, "
            "timestamp: TIMESTAMP, timestampType: INT>");
}

TEST(GeneratorSourceTest, RowsArePureFunctionsOfSeedAndIndex) {
  auto a = MakeGenerator({{"seed", "7"}, {"numDevices", "5"}});
  auto b = MakeGenerator({{"seed", "7"}, {"numDevices", "5"}});
  std::vector<std::string> whole = Rows(*a->GenerateRows(0, 300));
  EXPECT_EQ(Rows(*b->GenerateRows(0, 300)), whole);
  // Any sub-range equals the same rows of a larger range.
  std::vector<std::string> middle = Rows(*b->GenerateRows(97, 213));
  EXPECT_EQ(middle, std::vector<std::string>(whole.begin() + 97, whole.begin() + 213));
  auto other_seed = MakeGenerator({{"seed", "8"}, {"numDevices", "5"}});
  EXPECT_NE(Rows(*other_seed->GenerateRows(0, 300)), whole);
}

TEST(GeneratorSourceTest, EmitsTheSeedsSensorEvents) {
  auto source = MakeGenerator({{"startTimestamp", "2026-06-22T08:00:00Z"}});
  columnar::RecordBatchPtr batch = source->GenerateRows(0, 1100);
  simdjson::dom::parser parser;
  simdjson::dom::parser payload_parser;
  std::map<std::string, int64_t> per_type;
  std::map<std::string, int32_t> partition_of;
  int64_t previous_time = 0;
  std::vector<int64_t> plug_times;
  for (int64_t row = 0; row < batch->num_rows; ++row) {
    std::string value(batch->column(1)->StringValue(row));
    simdjson::dom::element doc = parser.parse(value);
    std::string device_id(doc["device_id"].get_string().value());
    std::string device_type(doc["device_type"].get_string().value());
    std::string ingested_at(doc["ingested_at"].get_string().value());
    std::string payload(doc["payload"].get_string().value());  // a JSON *string*
    ++per_type[device_type];
    EXPECT_EQ(batch->column(0)->StringValue(row), device_id);
    EXPECT_EQ(batch->column(2)->StringValue(row), "sensor-events");
    EXPECT_EQ(batch->column(6)->Value<int32_t>(row), 0);
    int64_t timestamp = batch->column(5)->Value<int64_t>(row);
    // ingested_at is the record timestamp in ISO-8601 UTC with millis.
    EXPECT_EQ(ingested_at, columnar::FormatTimestampUtc(timestamp, 3));
    EXPECT_EQ(ingested_at.size(), 24u);
    EXPECT_GE(timestamp, previous_time);
    previous_time = timestamp;
    // A device always lands on the same partition.
    int32_t partition = batch->column(3)->Value<int32_t>(row);
    auto [it, inserted] = partition_of.emplace(device_id, partition);
    EXPECT_EQ(it->second, partition);

    simdjson::dom::element p = payload_parser.parse(payload);
    if (device_type == "smart_plug") {
      EXPECT_EQ(device_id, "smart-plug-01");
      double power = p["power"].get_double().value();
      double voltage = p["voltage"].get_double().value();
      EXPECT_GE(voltage, 228.0);
      EXPECT_LE(voltage, 232.0);
      EXPECT_GE(power, 0.0);
      EXPECT_TRUE(p["current"].is_number());
      EXPECT_TRUE(p["energy"].is_number());
      std::string_view state = p["state"].get_string().value();
      EXPECT_TRUE(state == "ON" || state == "OFF");
      EXPECT_TRUE(p["linkquality"].is_int64());
      plug_times.push_back(timestamp);
    } else {
      ASSERT_EQ(device_type, "door_window");
      EXPECT_EQ(device_id, "door-sensor-01");
      EXPECT_TRUE(p["contact"].is_bool());
      EXPECT_TRUE(p["battery"].is_int64());
      EXPECT_TRUE(p["linkquality"].is_int64());
    }
  }
  // One plug every 10 s, one door message per 10 plug messages.
  EXPECT_EQ(per_type["smart_plug"], 1000);
  EXPECT_EQ(per_type["door_window"], 100);
  EXPECT_GE(plug_times.front(), *columnar::ParseTimestamp("2026-06-22T08:00:00Z"));
  EXPECT_LT(plug_times.front(), *columnar::ParseTimestamp("2026-06-22T08:00:01Z"));
  for (size_t i = 1; i < plug_times.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(plug_times[i] - plug_times[i - 1]), 10e6, 1e6);
  }
  // As in the seed: the plug and the door sensor hash to different partitions.
  EXPECT_NE(partition_of["smart-plug-01"], partition_of["door-sensor-01"]);
}

TEST(GeneratorSourceTest, OffsetsAreKafkaJsonAndRecoverTheIndex) {
  auto source = MakeGenerator({{"numDevices", "6"}, {"numPartitions", "4"}});
  columnar::RecordBatchPtr batch = source->GenerateRows(0, 500);
  for (int64_t index : {0, 1, 17, 33, 250, 499, 500}) {
    std::string json = source->OffsetJson(index);
    ASSERT_OK_AND_ASSIGN(int64_t back, source->ParseOffset(json));
    EXPECT_EQ(back, index) << json;
    // The per-partition values are the next Kafka offset of each partition.
    simdjson::dom::parser parser;
    simdjson::dom::element doc = parser.parse(json);
    std::map<int32_t, int64_t> next;
    for (int64_t row = 0; row < index; ++row) {
      next[batch->column(3)->Value<int32_t>(row)] = batch->column(4)->Value<int64_t>(row) + 1;
    }
    for (int32_t p = 0; p < 4; ++p) {
      int64_t value = doc["sensor-events"][std::to_string(p)].get_int64().value();
      EXPECT_EQ(value, next.count(p) ? next[p] : 0) << json << " partition " << p;
    }
  }
  EXPECT_EQ(source->OffsetJson(0), R"({"sensor-events":{"0":0,"1":0,"2":0,"3":0}})");
  ASSERT_RAISES(InvalidArgument, source->ParseOffset(R"({"other":{"0":0,"1":0,"2":0,"3":0}})"));
  ASSERT_RAISES(InvalidArgument, source->ParseOffset(R"({"sensor-events":{"0":0,"1":0}})"));
  // Counts that no prefix of the sequence produces.
  ASSERT_RAISES(InvalidArgument,
                source->ParseOffset(R"({"sensor-events":{"0":5,"1":0,"2":0,"3":0}})"));
}

TEST(GeneratorSourceTest, LatestOffsetHonoursCapsAndTotal) {
  auto source = MakeGenerator({{"maxOffsetsPerTrigger", "40"}, {"totalRows", "100"}});
  ASSERT_OK(source->Restore(std::nullopt));
  std::optional<std::string> start;
  std::vector<int64_t> ends;
  while (true) {
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(start, {}));
    if (!end) break;
    ASSERT_OK_AND_ASSIGN(int64_t index, source->ParseOffset(*end));
    ends.push_back(index);
    start = end;
  }
  EXPECT_EQ(ends, (std::vector<int64_t>{40, 80, 100}));
  // Trigger.Once ignores the per-trigger cap.
  ReadLimit all;
  all.all_available = true;
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> once, source->LatestOffset(std::nullopt, all));
  EXPECT_EQ(*source->ParseOffset(*once), 100);
}

TEST(GeneratorSourceTest, GetBatchReturnsTheRecordedRange) {
  auto source = MakeGenerator({});
  ASSERT_OK(source->Restore(std::nullopt));
  ASSERT_OK_AND_ASSIGN(auto reader,
                       source->GetBatch(source->OffsetJson(10), source->OffsetJson(25)));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr batch, reader->Next());
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(Rows(*batch), Rows(*source->GenerateRows(10, 25)));
  ASSERT_OK_AND_ASSIGN(columnar::RecordBatchPtr end, reader->Next());
  EXPECT_EQ(end, nullptr);
}

TEST(GeneratorSourceTest, RowsPerSecondFollowsTheClock) {
  ManualClock clock(1'000'000'000);
  auto source = MakeGenerator({{"rowsPerSecond", "10"}}, &clock);
  ASSERT_OK(source->Restore(std::nullopt));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> nothing, source->LatestOffset(std::nullopt, {}));
  EXPECT_FALSE(nothing.has_value());
  clock.Advance(2'500'000);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> some, source->LatestOffset(std::nullopt, {}));
  ASSERT_TRUE(some.has_value());
  EXPECT_EQ(*source->ParseOffset(*some), 25);
}

TEST(GeneratorSourceTest, AvailableNowStopsAtTheSnapshot) {
  ManualClock clock(0);
  auto source = MakeGenerator({{"rowsPerSecond", "100"}, {"maxOffsetsPerTrigger", "30"}}, &clock);
  ASSERT_OK(source->Restore(std::nullopt));
  clock.Advance(1'000'000);
  ASSERT_OK(source->PrepareForAvailableNow());
  clock.Advance(10'000'000);  // rows produced after the snapshot are not taken
  std::optional<std::string> start;
  int64_t last = 0;
  int batches = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(std::optional<std::string> end, source->LatestOffset(start, {}));
    if (!end) break;
    last = *source->ParseOffset(*end);
    start = end;
    ++batches;
  }
  EXPECT_EQ(last, 100);
  EXPECT_EQ(batches, 4);
}

TEST(GeneratorSourceTest, RejectsUnknownAndInvalidOptions) {
  SourceSpec spec;
  spec.format = "generator";
  spec.options = {{"numDevice", "3"}};
  Result<GeneratorOptions> unknown = GeneratorOptions::FromSpec(spec);
  ASSERT_RAISES(InvalidArgument, unknown);
  EXPECT_NE(unknown.status().message().find("source.options.numDevice"), std::string::npos);
  spec.options = {{"numPartitions", "0"}};
  ASSERT_RAISES(InvalidArgument, GeneratorOptions::FromSpec(spec));
  spec.options = {{"startTimestamp", "yesterday"}};
  ASSERT_RAISES(InvalidArgument, GeneratorOptions::FromSpec(spec));
  spec.options = {};
  spec.schema_ddl = "a INT";
  ASSERT_RAISES(InvalidArgument, GeneratorOptions::FromSpec(spec));
}

}  // namespace
}  // namespace silt::stream
