// QueryMetrics: turns a running query's progress into Prometheus metrics
// (docs/metrics.md) and into the status snapshot behind /status, /healthz
// and the / page (monitor/status.h). It is the query's QueryListener: the
// batch loop hands it each finished batch; it updates atomic counters and a
// mutex-guarded snapshot and returns, so a slow scraper never waits on the
// query nor the query on a scraper.
//
// For a Kafka source it also runs a KafkaLagPoller (its own thread and
// broker connection) that publishes the lag per partition.
//
// Thread safety: the listener methods and OnQueryStopped are called from the
// query's thread; Snapshot() from any thread. `registry` and `clock` must
// outlive the object.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "silt/base/clock.h"
#include "silt/base/result.h"
#include "silt/metrics/registry.h"
#include "silt/monitor/status.h"
#include "silt/stream/job.h"
#include "silt/stream/metrics/kafka_lag.h"
#include "silt/stream/query.h"

namespace silt::stream {

class QueryMetrics final : public QueryListener {
 public:
  // Registers the query's metric families in `registry` and, for a Kafka
  // source, starts the lag poller. Errors: those of KafkaLagPoller::Make.
  static Result<std::unique_ptr<QueryMetrics>> Make(const JobSpec& job, metrics::Registry* registry,
                                                    Clock* clock);
  ~QueryMetrics() override;

  void OnQueryStarted(const std::string& query_id, const std::string& run_id,
                      const std::string& source_description,
                      const std::string& sink_description) override;
  void OnNoNewData() override;
  void OnBatchStarted(int64_t batch_id) override;
  void OnBatchCompleted(const BatchProgress& progress) override;
  // The lag poller follows the partitions a scale-out worker holds now.
  void OnOffsetsChanged(const std::string& offsets_json) override;
  // RunQuery returned: OK means stopped (trigger end, signal), an error
  // means failed with it.
  void OnQueryStopped(const Status& status);

  // A copy of the status with the health verdict of now.
  monitor::QueryStatus Snapshot() const;

  // How many progress records /status keeps (Spark's
  // spark.sql.streaming.numRecentProgressUpdates) and batches the page shows.
  static constexpr size_t kRecentProgress = 100;
  static constexpr size_t kPageBatches = 25;

 private:
  QueryMetrics(const JobSpec& job, metrics::Registry* registry, Clock* clock);
  void PublishLag(std::vector<monitor::LagRow> rows, const Status& status);

  const JobSpec& job_;
  Clock* clock_;

  // Families (owned by the registry).
  metrics::GaugeFamily& info_;
  metrics::GaugeFamily& up_;
  metrics::CounterFamily& batches_;
  metrics::CounterFamily& source_rows_;
  metrics::CounterFamily& sink_rows_;
  metrics::HistogramFamily& batch_duration_;
  metrics::HistogramFamily& commit_duration_;
  metrics::HistogramFamily& trigger_lateness_;
  metrics::GaugeFamily& last_batch_id_;
  metrics::GaugeFamily& last_batch_time_;
  metrics::GaugeFamily& input_rate_;
  metrics::GaugeFamily& processed_rate_;
  metrics::GaugeFamily& watermark_;
  metrics::GaugeFamily& watermark_delay_;
  metrics::GaugeFamily& event_time_delay_;
  metrics::GaugeFamily& state_rows_;
  metrics::GaugeFamily& state_memory_;
  metrics::CounterFamily& state_dropped_;
  metrics::GaugeFamily& kafka_lag_;
  metrics::GaugeFamily& kafka_end_;
  metrics::GaugeFamily& kafka_committed_;
  metrics::CounterFamily& errors_;
  metrics::CounterFamily& dead_letters_;

  mutable std::mutex mutex_;  // guards everything below
  std::string query_label_;
  std::string source_label_;
  std::string sink_label_;
  monitor::QueryStatus status_;
  std::deque<monitor::BatchRow> batch_rows_;
  std::deque<std::string> recent_progress_;
  int64_t started_mono_ = 0;
  int64_t last_progress_mono_ = 0;
  bool lag_failing_ = false;

  // Last: stopped (joined) first on destruction, before what it publishes
  // into goes away.
  std::unique_ptr<KafkaLagPoller> lag_poller_;
};

}  // namespace silt::stream
