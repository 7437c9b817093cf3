#include "silt/stream/progress.h"

#include <gtest/gtest.h>

#include <limits>

namespace silt::stream {
namespace {

TEST(ProgressTest, FirstBatchWithoutNameOrWatermark) {
  QueryProgress p;
  p.id = "q";
  p.run_id = "r";
  p.timestamp_micros = 1'700'000'000'123'456;
  p.batch_id = 0;
  p.batch_duration = 12;
  p.num_input_rows = 3;
  p.input_rows_per_second = 0;
  p.processed_rows_per_second = 250;
  p.duration_ms.add_batch = 7;
  p.duration_ms.get_batch = 1;
  p.duration_ms.latest_offset = 2;
  p.duration_ms.trigger_execution = 12;
  p.duration_ms.wal_commit = 1;
  SourceProgress source;
  source.description = "RateStreamV2";
  source.end_offset = "{\"t\":{\"0\":3}}";
  source.latest_offset = "";
  source.num_input_rows = 3;
  source.input_rows_per_second = 0;
  source.processed_rows_per_second = 250;
  p.sources.push_back(source);
  p.sink = {"DeltaSink[/t]", 3};
  EXPECT_EQ(
      ProgressToJson(p),
      "{\"id\":\"q\",\"runId\":\"r\",\"name\":null,\"timestamp\":\"2023-11-14T22:13:20.123Z\","
      "\"batchId\":0,\"batchDuration\":12,\"numInputRows\":3,\"inputRowsPerSecond\":0.0,"
      "\"processedRowsPerSecond\":250.0,\"durationMs\":{\"addBatch\":7,\"commitOffsets\":0,"
      "\"getBatch\":1,\"latestOffset\":2,\"queryPlanning\":0,\"triggerExecution\":12,"
      "\"walCommit\":1},\"stateOperators\":[],\"sources\":[{\"description\":"
      "\"RateStreamV2\",\"startOffset\":null,\"endOffset\":{\"t\":{\"0\":3}},"
      "\"latestOffset\":null,\"numInputRows\":3,\"inputRowsPerSecond\":0.0,"
      "\"processedRowsPerSecond\":250.0}],\"sink\":{\"description\":\"DeltaSink[/t]\","
      "\"numOutputRows\":3}}");
}

TEST(ProgressTest, RecoveredBatchWithWatermarkLeavesOutNonFiniteRates) {
  QueryProgress p;
  p.id = "q";
  p.run_id = "r";
  p.name = "job";
  p.processed_rows_per_second = std::numeric_limits<double>::quiet_NaN();
  p.input_rows_per_second = std::numeric_limits<double>::infinity();
  EventTimeProgress event_time;
  event_time.stats = EventTimeStatsMs{1500, 2000, 1000};
  event_time.watermark_ms = 500;
  p.event_time = event_time;
  const std::string json = ProgressToJson(p);
  EXPECT_NE(json.find("\"name\":\"job\""), std::string::npos);
  EXPECT_EQ(json.find("RowsPerSecond"), std::string::npos);
  EXPECT_EQ(json.find("latestOffset"), std::string::npos);
  EXPECT_EQ(json.find("walCommit"), std::string::npos);
  EXPECT_NE(json.find("\"eventTime\":{\"avg\":\"1970-01-01T00:00:01.500Z\","
                      "\"max\":\"1970-01-01T00:00:02.000Z\",\"min\":\"1970-01-01T00:00:01.000Z\","
                      "\"watermark\":\"1970-01-01T00:00:00.500Z\"}"),
            std::string::npos);
  EXPECT_NE(json.find("\"sources\":[]"), std::string::npos);
}

}  // namespace
}  // namespace silt::stream
