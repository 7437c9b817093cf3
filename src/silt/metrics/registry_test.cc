#include "silt/metrics/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "silt/metrics/default_registry.h"
#include "silt/metrics/process_metrics.h"

namespace silt::metrics {
namespace {

TEST(RegistryTest, CountersAndGaugesExposeHelpTypeAndOneLinePerChild) {
  Registry registry;
  CounterFamily& rows = registry.AddCounter("silt_rows_total", "Rows.", {"query", "sink"});
  rows.WithLabels({"q", "b"}).Increment(3);
  rows.WithLabels({"q", "a"}).Increment();
  rows.WithLabels({"q", "a"}).Increment(-5);  // ignored: counters only go up
  registry.AddGauge("silt_lag", "Lag.").WithLabels({}).Set(-2.5);
  EXPECT_EQ(registry.Expose(),
            "# HELP silt_rows_total Rows.\n"
            "# TYPE silt_rows_total counter\n"
            "silt_rows_total{query=\"q\",sink=\"a\"} 1\n"
            "silt_rows_total{query=\"q\",sink=\"b\"} 3\n"
            "# HELP silt_lag Lag.\n"
            "# TYPE silt_lag gauge\n"
            "silt_lag -2.5\n");
}

TEST(RegistryTest, LabelValuesAndHelpAreEscaped) {
  Registry registry;
  registry.AddGauge("g", "a \\ back\nslash", {"l"}).WithLabels({"x\"y\\z\nw"}).Set(1);
  EXPECT_EQ(registry.Expose(),
            "# HELP g a \\\\ back\\nslash\n"
            "# TYPE g gauge\n"
            "g{l=\"x\\\"y\\\\z\\nw\"} 1\n");
}

TEST(RegistryTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry registry;
  HistogramFamily& family = registry.AddHistogram("h_seconds", "H.", {"q"}, {0.1, 1});
  Histogram& h = family.WithLabels({"x"});
  h.Observe(0.05);
  h.Observe(0.1);  // on the bound: le is "less than or equal"
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(registry.Expose(),
            "# HELP h_seconds H.\n"
            "# TYPE h_seconds histogram\n"
            "h_seconds_bucket{q=\"x\",le=\"0.1\"} 2\n"
            "h_seconds_bucket{q=\"x\",le=\"1\"} 3\n"
            "h_seconds_bucket{q=\"x\",le=\"+Inf\"} 4\n"
            "h_seconds_sum{q=\"x\"} 7.65\n"
            "h_seconds_count{q=\"x\"} 4\n");
}

TEST(RegistryTest, EmptyFamilyListsOnlyItsHeader) {
  Registry registry;
  registry.AddCounter("c_total", "C.", {"a"});
  EXPECT_EQ(registry.Expose(), "# HELP c_total C.\n# TYPE c_total counter\n");
}

TEST(RegistryTest, RegisteringANameAgainReturnsTheSameFamily) {
  Registry registry;
  CounterFamily& a = registry.AddCounter("c_total", "C.");
  CounterFamily& b = registry.AddCounter("c_total", "C.");
  EXPECT_EQ(&a, &b);
}

TEST(RegistryTest, RemoveAndClearDropChildren) {
  Registry registry;
  GaugeFamily& g = registry.AddGauge("g", "G.", {"p"});
  g.WithLabels({"0"}).Set(1);
  g.WithLabels({"1"}).Set(2);
  g.Remove({"0"});
  EXPECT_EQ(registry.Expose(), "# HELP g G.\n# TYPE g gauge\ng{p=\"1\"} 2\n");
  g.Clear();
  EXPECT_EQ(registry.Expose(), "# HELP g G.\n# TYPE g gauge\n");
}

TEST(RegistryTest, RefreshersRunBeforeExposition) {
  Registry registry;
  Gauge& g = registry.AddGauge("g", "G.").WithLabels({});
  int calls = 0;
  registry.AddRefresher([&] { g.Set(++calls); });
  EXPECT_EQ(registry.Expose(), "# HELP g G.\n# TYPE g gauge\ng 1\n");
  EXPECT_EQ(registry.Expose(), "# HELP g G.\n# TYPE g gauge\ng 2\n");
}

TEST(RegistryTest, ValuesAreFormattedAsPrometheusReadsThem) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(1234567890123.0), "1234567890123");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(1e300), "1e+300");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
}

TEST(RegistryTest, NamesFollowPrometheusRules) {
  EXPECT_TRUE(ValidMetricName("silt_rows_total"));
  EXPECT_TRUE(ValidMetricName("a:b_c1"));
  EXPECT_FALSE(ValidMetricName("1abc"));
  EXPECT_FALSE(ValidMetricName("a-b"));
  EXPECT_FALSE(ValidMetricName(""));
  EXPECT_TRUE(ValidLabelName("topic"));
  EXPECT_FALSE(ValidLabelName("__name__"));
  EXPECT_FALSE(ValidLabelName("a:b"));
}

TEST(RegistryTest, ConcurrentUpdatesAreAllCounted) {
  Registry registry;
  CounterFamily& c = registry.AddCounter("c_total", "C.", {"t"});
  HistogramFamily& h = registry.AddHistogram("h", "H.", {}, {1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.WithLabels({t % 2 == 0 ? "even" : "odd"}).Increment();
        h.WithLabels({}).Observe(0.5);
        if (i % 1000 == 0) (void)registry.Expose();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(c.WithLabels({"even"}).value(), 20000);
  EXPECT_EQ(c.WithLabels({"odd"}).value(), 20000);
  EXPECT_EQ(h.WithLabels({}).snapshot().count, 40000u);
}

TEST(ProcessMetricsTest, ReadsThisProcess) {
  ProcessStats stats = ReadProcessStats();
  ASSERT_TRUE(stats.ok);
  EXPECT_GT(stats.resident_bytes, 0);
  EXPECT_GE(stats.virtual_bytes, stats.resident_bytes);
  EXPECT_GE(stats.cpu_seconds, 0);
  EXPECT_GT(stats.start_time_seconds, 1.5e9);
  EXPECT_GT(stats.open_fds, 2);  // stdin, stdout, stderr at least
}

TEST(ProcessMetricsTest, ExposedUnderTheStandardNames) {
  Registry registry;
  AddProcessMetrics(&registry);
  std::string text = registry.Expose();
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes "), std::string::npos);
  EXPECT_EQ(text.find("\nprocess_resident_memory_bytes 0\n"), std::string::npos);
  EXPECT_NE(text.find("\nprocess_start_time_seconds "), std::string::npos);
}

TEST(DefaultRegistryTest, RetriesAreCountedByComponentAndOperation) {
  EXPECT_NE(DefaultRegistry().Expose().find("# TYPE silt_retries_total counter\n"),
            std::string::npos);
  CountRetry("s3", "GET");
  CountRetry("s3", "GET");
  CountRetry("kafka", "query_watermarks");
  std::string text = DefaultRegistry().Expose();
  EXPECT_NE(text.find("\nsilt_retries_total{component=\"s3\",operation=\"GET\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("\nsilt_retries_total{component=\"kafka\",operation=\"query_watermarks\"} 1\n"),
      std::string::npos);
}

}  // namespace
}  // namespace silt::metrics
