#include "silt/monitor/status.h"

#include <gtest/gtest.h>

namespace silt::monitor {
namespace {

QueryStatus Sample() {
  QueryStatus s;
  s.id = "id-1";
  s.run_id = "run-1";
  s.name = "<sensor & co>";
  s.source = "KafkaV2[Subscribe[events]]";
  s.sink = "DeltaSink[/t]";
  s.state = QueryState::kRunning;
  s.message = "Waiting for data to arrive";
  s.health = {true, "last progress 1.0 s ago"};
  s.lag = {{"events", 0, 10, 15, 5}, {"events", 1, 7, 7, 0}};
  s.lag_micros = 1'700'000'000'000'000;
  BatchRow row;
  row.batch_id = 4;
  row.timestamp_micros = 1'700'000'000'000'000;
  row.input_rows = 100;
  row.output_rows = 100;
  row.duration_ms = 50;
  row.processed_rows_per_second = 2000;
  row.input_rows_per_second = 12.25;
  row.table_version = 4;
  s.batches.push_back(row);
  row.batch_id = 5;
  row.table_version = 5;
  s.batches.push_back(row);
  s.recent_progress_json = {"{\"batchId\":4}", "{\"batchId\":5}"};
  return s;
}

TEST(StatusTest, JsonCarriesSparkStatusHealthLagAndRecentProgress) {
  EXPECT_EQ(StatusToJson(Sample()),
            "{\"id\":\"id-1\",\"runId\":\"run-1\",\"name\":\"<sensor & co>\",\"state\":"
            "\"running\",\"status\":{\"message\":\"Waiting for data to arrive\","
            "\"isDataAvailable\":false,\"isTriggerActive\":false},\"health\":{\"healthy\":true,"
            "\"reason\":\"last progress 1.0 s ago\"},\"lastError\":null,\"kafkaLag\":[{\"topic\":"
            "\"events\",\"partition\":0,\"committedOffset\":10,\"endOffset\":15,\"lag\":5},"
            "{\"topic\":\"events\",\"partition\":1,\"committedOffset\":7,\"endOffset\":7,"
            "\"lag\":0}],\"recentProgress\":[{\"batchId\":4},{\"batchId\":5}]}");
}

TEST(StatusTest, JsonNamesTheLastError) {
  QueryStatus s = Sample();
  s.name.clear();
  s.last_error = "batch 3: reading the source: broker down";
  s.last_error_micros = 1'700'000'000'123'000;
  std::string json = StatusToJson(s);
  EXPECT_NE(json.find("\"name\":null"), std::string::npos);
  EXPECT_NE(json.find("\"lastError\":{\"message\":\"batch 3: reading the source: broker down\","
                      "\"timestamp\":\"2023-11-14T22:13:20.123Z\"}"),
            std::string::npos);
}

TEST(StatusTest, PageShowsBatchesNewestFirstLagAndEscapesText) {
  std::string html = StatusPageHtml(Sample());
  EXPECT_NE(html.find("&lt;sensor &amp; co&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<sensor"), std::string::npos);
  EXPECT_LT(html.find("<tr class=\"batch\"><td>5</td>"),
            html.find("<tr class=\"batch\"><td>4</td>"));
  EXPECT_NE(html.find("<td class=\"lag\">5</td>"), std::string::npos);
  EXPECT_NE(html.find("<b id=\"total-lag\">5</b>"), std::string::npos);
  EXPECT_NE(html.find("<b id=\"rate\">2000.0</b>"), std::string::npos);
  EXPECT_NE(html.find("class=\"ok\">healthy"), std::string::npos);
  // Self-contained: no scripts, no external stylesheets or images.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
}

TEST(StatusTest, PageWithoutLagOrBatchesSaysSo) {
  QueryStatus s;
  s.health = {false, "the query has stopped"};
  std::string html = StatusPageHtml(s);
  EXPECT_NE(html.find("not known yet"), std::string::npos);
  EXPECT_NE(html.find("class=\"bad\">unhealthy: the query has stopped"), std::string::npos);
}

TEST(StatusTest, EscapeHtml) { EXPECT_EQ(EscapeHtml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;"); }

}  // namespace
}  // namespace silt::monitor
