#include "silt/stream/metrics/query_metrics.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "silt/stream/metrics/kafka_lag.h"
#include "silt/testing/forwarding_consumer.h"
#include "silt/testing/gtest_util.h"
#include "silt/testing/scripted_consumer.h"

namespace silt::stream {
namespace {

constexpr int64_t kSecond = 1'000'000;

JobSpec GeneratorJob() {
  JobSpec job;
  job.name = "sensors";
  job.source.format = "generator";
  job.trigger.kind = TriggerKind::kProcessingTime;
  job.trigger.interval_micros = 10 * kSecond;
  job.metrics = MetricsSpec();
  job.metrics->health_timeout_micros = 60 * kSecond;
  return job;
}

BatchProgress Batch(int64_t id, int64_t rows, int64_t trigger_micros) {
  BatchProgress p;
  p.batch_id = id;
  p.num_input_rows = rows;
  p.num_output_rows = rows;
  p.table_version = id;
  p.sink_commit_micros = 20'000;
  p.json = "{\"batchId\":" + std::to_string(id) + "}";
  p.record.batch_id = id;
  p.record.num_input_rows = rows;
  p.record.batch_duration = 250;
  p.record.timestamp_micros = trigger_micros;
  p.record.input_rows_per_second = 100;
  p.record.processed_rows_per_second = 4000;
  EventTimeProgress event_time;
  event_time.watermark_ms = trigger_micros / 1000 - 300'000;
  event_time.stats = EventTimeStatsMs{0, trigger_micros / 1000 - 2'000, 0};
  p.record.event_time = event_time;
  StateOperatorProgress op;
  op.operator_name = "dedupe";
  op.num_rows_total = 42;
  op.memory_used_bytes = 4096;
  op.num_rows_dropped_by_watermark = 3;
  p.record.state_operators.push_back(op);
  return p;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(QueryMetricsTest, BatchesBecomeCountersHistogramsAndGauges) {
  JobSpec job = GeneratorJob();
  metrics::Registry registry;
  ManualClock clock(1'700'000'000 * kSecond);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<QueryMetrics> m, QueryMetrics::Make(job, &registry, &clock));
  m->OnQueryStarted("id-1", "run-1", "Generator", "DeltaSink[/t]");
  // The trigger started 1.5 s after its 10 s boundary.
  const int64_t trigger = 1'700'000'010 * kSecond + 1'500'000;
  m->OnBatchStarted(0);
  m->OnBatchCompleted(Batch(0, 1000, trigger));
  m->OnBatchStarted(1);
  BatchProgress again = Batch(1, 500, trigger + 10 * kSecond);
  again.skipped_duplicate = true;  // already in the table: no output rows
  m->OnBatchCompleted(again);

  std::string text = registry.Expose();
  EXPECT_TRUE(Has(text, "silt_query_info{query=\"sensors\",query_id=\"id-1\",run_id=\"run-1\"} 1"));
  EXPECT_TRUE(Has(text, "silt_query_up{query=\"sensors\"} 1"));
  EXPECT_TRUE(Has(text, "silt_batches_total{query=\"sensors\"} 2"));
  EXPECT_TRUE(Has(text, "silt_source_rows_total{query=\"sensors\",source=\"Generator\"} 1500"));
  EXPECT_TRUE(Has(text, "silt_sink_rows_total{query=\"sensors\",sink=\"DeltaSink[/t]\"} 1000"));
  EXPECT_TRUE(Has(text, "silt_batch_duration_seconds_bucket{query=\"sensors\",le=\"0.25\"} 2"));
  EXPECT_TRUE(Has(text, "silt_batch_duration_seconds_bucket{query=\"sensors\",le=\"0.1\"} 0"));
  EXPECT_TRUE(
      Has(text, "silt_commit_duration_seconds_sum{query=\"sensors\",sink=\"DeltaSink[/t]\"} 0.04"));
  EXPECT_TRUE(Has(text, "silt_trigger_lateness_seconds_sum{query=\"sensors\"} 3"));
  EXPECT_TRUE(Has(text, "silt_last_batch_id{query=\"sensors\"} 1"));
  EXPECT_TRUE(Has(text, "silt_watermark_delay_seconds{query=\"sensors\"} 300"));
  EXPECT_TRUE(Has(text, "silt_event_time_delay_seconds{query=\"sensors\"} 2"));
  EXPECT_TRUE(Has(text, "silt_state_rows{query=\"sensors\",operator=\"dedupe\"} 42"));
  EXPECT_TRUE(Has(text, "silt_state_memory_bytes{query=\"sensors\",operator=\"dedupe\"} 4096"));
  EXPECT_TRUE(Has(
      text, "silt_state_rows_dropped_by_watermark_total{query=\"sensors\",operator=\"dedupe\"} 6"));
  EXPECT_TRUE(
      Has(text, "silt_processed_rows_per_second{query=\"sensors\",source=\"Generator\"} 4000"));

  monitor::QueryStatus status = m->Snapshot();
  EXPECT_EQ(status.id, "id-1");
  EXPECT_EQ(status.state, monitor::QueryState::kRunning);
  EXPECT_EQ(status.message, "Waiting for next trigger");
  ASSERT_EQ(status.batches.size(), 2u);
  EXPECT_EQ(status.batches[0].output_rows, 1000);
  EXPECT_EQ(status.batches[1].output_rows, 0);
  EXPECT_TRUE(status.batches[1].skipped_duplicate);
  EXPECT_EQ(status.recent_progress_json,
            (std::vector<std::string>{"{\"batchId\":0}", "{\"batchId\":1}"}));
  EXPECT_TRUE(status.health.healthy);
}

TEST(QueryMetricsTest, HealthFollowsProgressIdleTriggersAndTheEnd) {
  JobSpec job = GeneratorJob();
  metrics::Registry registry;
  ManualClock clock(1'000 * kSecond);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<QueryMetrics> m, QueryMetrics::Make(job, &registry, &clock));
  m->OnQueryStarted("id-1", "run-1", "Generator", "DeltaSink[/t]");
  EXPECT_TRUE(m->Snapshot().health.healthy);
  clock.Advance(61 * kSecond);  // no trigger finished since the start
  EXPECT_FALSE(m->Snapshot().health.healthy);
  m->OnNoNewData();  // an idle trigger is progress
  EXPECT_TRUE(m->Snapshot().health.healthy);
  clock.Advance(30 * kSecond);
  m->OnBatchStarted(0);
  clock.Advance(40 * kSecond);  // a batch running for longer than the timeout
  monitor::QueryStatus stuck = m->Snapshot();
  EXPECT_FALSE(stuck.health.healthy);
  EXPECT_TRUE(stuck.is_trigger_active);
  m->OnBatchCompleted(Batch(0, 10, clock.NowMicros()));
  EXPECT_TRUE(m->Snapshot().health.healthy);

  m->OnQueryStopped(Status::IOError("batch 1: reading the source: broker down"));
  monitor::QueryStatus failed = m->Snapshot();
  EXPECT_FALSE(failed.health.healthy);
  EXPECT_EQ(failed.state, monitor::QueryState::kFailed);
  EXPECT_EQ(failed.last_error, "batch 1: reading the source: broker down");
  std::string text = registry.Expose();
  EXPECT_TRUE(Has(text, "silt_errors_total{query=\"sensors\",kind=\"query\",code=\"IOError\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "silt_query_up{query=\"sensors\"} 0"));
}

// Collects what a poller publishes.
struct Published {
  std::mutex mutex;
  std::condition_variable cv;
  int calls = 0;
  std::vector<monitor::LagRow> rows;
  Status status;
  KafkaLagPoller::Publish Callback() {
    return [this](std::vector<monitor::LagRow> r, const Status& s) {
      std::lock_guard<std::mutex> lock(mutex);
      rows = std::move(r);
      status = s;
      ++calls;
      cv.notify_all();
    };
  }
  void WaitFor(int n) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return calls >= n; });
  }
};

TEST(KafkaLagPollerTest, LagIsTheEndOffsetLessTheCommittedOne) {
  testing::ScriptedCluster cluster;
  cluster.CreateTopic("events", 2);
  for (int i = 0; i < 5; ++i) cluster.Append("events", 0, {std::nullopt, "x", 0, {}});
  for (int i = 0; i < 3; ++i) cluster.Append("events", 1, {std::nullopt, "x", 0, {}});
  SourceSpec source;
  source.format = "kafka";
  Published published;
  // An hour between lookups: only the first SetCommitted and PollOnce poll.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<KafkaLagPoller> poller,
      KafkaLagPoller::Make(source, 3600 * kSecond, published.Callback(), cluster.NewConsumer()));
  poller->SetCommitted("{\"events\":{\"0\":2,\"1\":3}}");
  published.WaitFor(1);
  {
    std::lock_guard<std::mutex> lock(published.mutex);
    ASSERT_OK(published.status);
    ASSERT_EQ(published.rows.size(), 2u);
    EXPECT_EQ(published.rows[0].topic, "events");
    EXPECT_EQ(published.rows[0].partition, 0);
    EXPECT_EQ(published.rows[0].committed_offset, 2);
    EXPECT_EQ(published.rows[0].end_offset, 5);
    EXPECT_EQ(published.rows[0].lag, 3);
    EXPECT_EQ(published.rows[1].lag, 0);
  }
  poller->SetCommitted("{\"events\":{\"0\":5,\"1\":3}}");
  cluster.FailNextCall(Status::IOError("broker down").WithRetryable(true));
  poller->PollOnce();
  {
    std::lock_guard<std::mutex> lock(published.mutex);
    EXPECT_EQ(published.calls, 2);
    EXPECT_TRUE(published.rows.empty());
    EXPECT_FALSE(published.status.ok());
  }
  poller->PollOnce();
  std::lock_guard<std::mutex> lock(published.mutex);
  ASSERT_OK(published.status);
  ASSERT_EQ(published.rows.size(), 2u);
  EXPECT_EQ(published.rows[0].lag, 0);
}

// A consumer whose watermark lookups hang until released, as librdkafka's
// do while the broker is down.
class HangingConsumer final : public testing::ForwardingConsumer {
 public:
  using ForwardingConsumer::ForwardingConsumer;
  void Hang(bool hang) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      hang_ = hang;
    }
    cv_.notify_all();
  }
  Result<kafka::Watermarks> QueryWatermarks(const kafka::TopicPartition& partition) override {
    Wait();
    return ForwardingConsumer::QueryWatermarks(partition);
  }
  Result<std::map<kafka::TopicPartition, int64_t>> ListOffsets(
      const std::vector<kafka::TopicPartition>& partitions, OffsetSpec spec) override {
    Wait();
    return ForwardingConsumer::ListOffsets(partitions, spec);
  }

 private:
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !hang_; });
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  bool hang_ = false;
};

TEST(KafkaLagPollerTest, ALookupWithoutAnswerIsReportedAsAFailureUntilItReturns) {
  testing::ScriptedCluster cluster;
  cluster.CreateTopic("events", 1);
  for (int i = 0; i < 4; ++i) cluster.Append("events", 0, {std::nullopt, "x", 0, {}});
  SourceSpec source;
  source.format = "kafka";
  Published published;
  auto consumer = std::make_unique<HangingConsumer>(cluster.NewConsumer());
  HangingConsumer* hanging = consumer.get();
  hanging->Hang(true);
  // Lookups every 50 ms, 100 ms without an answer is a failure.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<KafkaLagPoller> poller,
      KafkaLagPoller::Make(source, 50'000, published.Callback(), std::move(consumer), 100'000));
  poller->SetCommitted("{\"events\":{\"0\":1}}");
  // The hung lookup is reported as failed, more than once while it hangs.
  published.WaitFor(2);
  {
    std::lock_guard<std::mutex> lock(published.mutex);
    EXPECT_TRUE(published.rows.empty());
    EXPECT_TRUE(published.status.IsIOError()) << published.status.ToString();
    EXPECT_NE(published.status.message().find("no answer from the Kafka broker"),
              std::string::npos);
  }
  hanging->Hang(false);
  const int before = [&] {
    std::lock_guard<std::mutex> lock(published.mutex);
    return published.calls;
  }();
  // Once it answers, the lag is published again.
  for (int n = before + 1;; ++n) {
    published.WaitFor(n);
    std::lock_guard<std::mutex> lock(published.mutex);
    if (published.status.ok()) {
      ASSERT_EQ(published.rows.size(), 1u);
      EXPECT_EQ(published.rows[0].lag, 3);
      break;
    }
  }
}

}  // namespace
}  // namespace silt::stream
