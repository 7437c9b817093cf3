#include "silt/stream/metrics/query_metrics.h"

#include <algorithm>
#include <cmath>

#include "silt/base/logging.h"

namespace silt::stream {

namespace {

double Seconds(int64_t micros) { return static_cast<double>(micros) / 1e6; }

// "IO error" -> "IOError", "Invalid argument" -> "InvalidArgument": the
// error class as a label value without spaces.
std::string CodeLabel(StatusCode code) {
  std::string out;
  bool upper = true;
  for (char c : StatusCodeName(code)) {
    if (c == ' ') {
      upper = true;
      continue;
    }
    out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

}  // namespace

QueryMetrics::QueryMetrics(const JobSpec& job, metrics::Registry* registry, Clock* clock)
    : job_(job),
      clock_(clock),
      info_(registry->AddGauge("silt_query_info",
                               "The running query: 1, labelled with its id and run id.",
                               {"query", "query_id", "run_id"})),
      up_(registry->AddGauge("silt_query_up", "1 while the query runs, 0 once it stopped.",
                             {"query"})),
      batches_(registry->AddCounter("silt_batches_total", "Micro-batches completed.", {"query"})),
      source_rows_(registry->AddCounter("silt_source_rows_total",
                                        "Rows read from the source (numInputRows).",
                                        {"query", "source"})),
      sink_rows_(registry->AddCounter(
          "silt_sink_rows_total",
          "Rows committed to the sink (numOutputRows; a re-run batch the table already holds "
          "adds none).",
          {"query", "sink"})),
      batch_duration_(registry->AddHistogram(
          "silt_batch_duration_seconds",
          "Wall time of a micro-batch, from its trigger to commits/N (triggerExecution).",
          {"query"})),
      commit_duration_(registry->AddHistogram(
          "silt_commit_duration_seconds",
          "Wall time of the sink's commit of a batch (the Delta transaction).", {"query", "sink"})),
      trigger_lateness_(registry->AddHistogram(
          "silt_trigger_lateness_seconds",
          "processingTime triggers: how long after its interval boundary a batch started.",
          {"query"})),
      last_batch_id_(
          registry->AddGauge("silt_last_batch_id", "Id of the last completed batch.", {"query"})),
      last_batch_time_(registry->AddGauge(
          "silt_last_batch_timestamp_seconds",
          "When the last batch completed, in seconds since the epoch.", {"query"})),
      input_rate_(registry->AddGauge(
          "silt_input_rows_per_second",
          "Rows per second arriving at the source over the last trigger interval "
          "(inputRowsPerSecond).",
          {"query", "source"})),
      processed_rate_(
          registry->AddGauge("silt_processed_rows_per_second",
                             "Rows per second the last batch processed (processedRowsPerSecond).",
                             {"query", "source"})),
      watermark_(registry->AddGauge("silt_watermark_timestamp_seconds",
                                    "The event-time watermark of the last batch, in seconds "
                                    "since the epoch (queries with withWatermark).",
                                    {"query"})),
      watermark_delay_(registry->AddGauge(
          "silt_watermark_delay_seconds",
          "How far the watermark was behind the last batch's trigger time.", {"query"})),
      event_time_delay_(registry->AddGauge(
          "silt_event_time_delay_seconds",
          "How far the newest event time of the last batch was behind its trigger time.",
          {"query"})),
      state_rows_(registry->AddGauge("silt_state_rows",
                                     "Rows in a stateful operator's state (numRowsTotal).",
                                     {"query", "operator"})),
      state_memory_(
          registry->AddGauge("silt_state_memory_bytes",
                             "Memory a stateful operator's state store uses (memoryUsedBytes).",
                             {"query", "operator"})),
      state_dropped_(
          registry->AddCounter("silt_state_rows_dropped_by_watermark_total",
                               "Rows a stateful operator dropped as later than the watermark "
                               "(numRowsDroppedByWatermark).",
                               {"query", "operator"})),
      kafka_lag_(registry->AddGauge(
          "silt_kafka_lag_records",
          "Records of a Kafka partition the query has not committed yet: the broker's end "
          "offset less the query's committed offset.",
          {"query", "topic", "partition"})),
      kafka_end_(registry->AddGauge("silt_kafka_end_offset",
                                    "The broker's end offset (high watermark) of a partition.",
                                    {"query", "topic", "partition"})),
      kafka_committed_(registry->AddGauge(
          "silt_kafka_committed_offset",
          "The next offset the query reads in a partition (end of its last committed batch).",
          {"query", "topic", "partition"})),
      errors_(registry->AddCounter(
          "silt_errors_total",
          "Errors by kind: query (the error that stopped the query), kafka_lag (a failed "
          "lag lookup); code is the error's class.",
          {"query", "kind", "code"})),
      dead_letters_(registry->AddCounter(
          "silt_dead_letters_total",
          "Rows committed to the deadLetter table, by reason (malformed_json, ansi_cast, "
          "late_row, sink_refused); a re-run batch the table already holds adds none.",
          {"query", "reason"})) {
  started_mono_ = clock_->MonotonicMicros();
  status_.name = job.name;
}

QueryMetrics::~QueryMetrics() { lag_poller_.reset(); }

Result<std::unique_ptr<QueryMetrics>> QueryMetrics::Make(const JobSpec& job,
                                                         metrics::Registry* registry,
                                                         Clock* clock) {
  std::unique_ptr<QueryMetrics> self(new QueryMetrics(job, registry, clock));
  if (job.source.format == "kafka") {
    const int64_t interval =
        job.metrics ? job.metrics->lag_interval_micros : MetricsSpec().lag_interval_micros;
    QueryMetrics* raw = self.get();
    SILT_ASSIGN_OR_RETURN(
        self->lag_poller_,
        KafkaLagPoller::Make(job.source, interval,
                             [raw](std::vector<monitor::LagRow> rows, const Status& status) {
                               raw->PublishLag(std::move(rows), status);
                             }));
  }
  return self;
}

void QueryMetrics::OnQueryStarted(const std::string& query_id, const std::string& run_id,
                                  const std::string& source_description,
                                  const std::string& sink_description) {
  std::lock_guard<std::mutex> lock(mutex_);
  query_label_ = job_.name.empty() ? query_id : job_.name;
  source_label_ = source_description;
  sink_label_ = sink_description;
  status_.id = query_id;
  status_.run_id = run_id;
  status_.source = source_description;
  status_.sink = sink_description;
  status_.state = monitor::QueryState::kRunning;
  status_.message = "Waiting for data to arrive";
  info_.WithLabels({query_label_, query_id, run_id}).Set(1);
  up_.WithLabels({query_label_}).Set(1);
  // Zero series from the start, so that rate() and increase() see the
  // first batch's rows.
  batches_.WithLabels({query_label_});
  source_rows_.WithLabels({query_label_, source_label_});
  sink_rows_.WithLabels({query_label_, sink_label_});
  if (job_.dead_letter) {
    for (const char* reason : {"malformed_json", "ansi_cast", "late_row", "sink_refused"}) {
      dead_letters_.WithLabels({query_label_, reason});
    }
  }
}

void QueryMetrics::OnNoNewData() {
  std::lock_guard<std::mutex> lock(mutex_);
  last_progress_mono_ = clock_->MonotonicMicros();
  status_.message = "Waiting for data to arrive";
  status_.is_data_available = false;
  status_.is_trigger_active = false;
}

void QueryMetrics::OnBatchStarted(int64_t batch_id) {
  (void)batch_id;
  std::lock_guard<std::mutex> lock(mutex_);
  status_.message = "Processing new data";
  status_.is_data_available = true;
  status_.is_trigger_active = true;
}

void QueryMetrics::OnBatchCompleted(const BatchProgress& progress) {
  const QueryProgress& record = progress.record;
  const int64_t now_wall = clock_->NowMicros();
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string& q = query_label_;
  batches_.WithLabels({q}).Increment();
  source_rows_.WithLabels({q, source_label_}).Increment(static_cast<double>(record.num_input_rows));
  sink_rows_.WithLabels({q, sink_label_})
      .Increment(static_cast<double>(progress.skipped_duplicate ? 0 : progress.num_output_rows));
  batch_duration_.WithLabels({q}).Observe(static_cast<double>(record.batch_duration) / 1000.0);
  commit_duration_.WithLabels({q, sink_label_}).Observe(Seconds(progress.sink_commit_micros));
  if (record.dead_letters) {
    for (const auto& [reason, rows] : record.dead_letters->by_reason) {
      dead_letters_.WithLabels({q, reason}).Increment(static_cast<double>(rows));
    }
  }
  if (job_.trigger.kind == TriggerKind::kProcessingTime && job_.trigger.interval_micros > 0) {
    const int64_t interval = job_.trigger.interval_micros;
    const int64_t boundary = record.timestamp_micros / interval * interval;
    trigger_lateness_.WithLabels({q}).Observe(Seconds(record.timestamp_micros - boundary));
  }
  last_batch_id_.WithLabels({q}).Set(static_cast<double>(record.batch_id));
  last_batch_time_.WithLabels({q}).Set(Seconds(now_wall));
  if (std::isfinite(record.input_rows_per_second)) {
    input_rate_.WithLabels({q, source_label_}).Set(record.input_rows_per_second);
  }
  if (std::isfinite(record.processed_rows_per_second)) {
    processed_rate_.WithLabels({q, source_label_}).Set(record.processed_rows_per_second);
  }
  if (record.event_time) {
    const double trigger_seconds = Seconds(record.timestamp_micros);
    const double watermark = static_cast<double>(record.event_time->watermark_ms) / 1000.0;
    watermark_.WithLabels({q}).Set(watermark);
    // Spark's watermark is 0 until the first batch with event times.
    if (record.event_time->watermark_ms > 0) {
      watermark_delay_.WithLabels({q}).Set(trigger_seconds - watermark);
    }
    if (record.event_time->stats) {
      event_time_delay_.WithLabels({q}).Set(
          trigger_seconds - static_cast<double>(record.event_time->stats->max_ms) / 1000.0);
    }
  }
  for (const StateOperatorProgress& op : record.state_operators) {
    state_rows_.WithLabels({q, op.operator_name}).Set(static_cast<double>(op.num_rows_total));
    state_memory_.WithLabels({q, op.operator_name}).Set(static_cast<double>(op.memory_used_bytes));
    state_dropped_.WithLabels({q, op.operator_name})
        .Increment(static_cast<double>(op.num_rows_dropped_by_watermark));
  }

  monitor::BatchRow row;
  row.batch_id = record.batch_id;
  row.timestamp_micros = record.timestamp_micros;
  row.input_rows = record.num_input_rows;
  row.output_rows = progress.skipped_duplicate ? 0 : progress.num_output_rows;
  row.duration_ms = record.batch_duration;
  row.input_rows_per_second = record.input_rows_per_second;
  row.processed_rows_per_second = record.processed_rows_per_second;
  row.table_version = progress.table_version;
  row.skipped_duplicate = progress.skipped_duplicate;
  batch_rows_.push_back(row);
  while (batch_rows_.size() > kPageBatches) batch_rows_.pop_front();
  recent_progress_.push_back(progress.json);
  while (recent_progress_.size() > kRecentProgress) recent_progress_.pop_front();
  last_progress_mono_ = clock_->MonotonicMicros();
  status_.message = "Waiting for next trigger";
  status_.is_trigger_active = false;
  if (lag_poller_ != nullptr && !progress.end_offset_json.empty()) {
    lag_poller_->SetCommitted(progress.end_offset_json);
  }
}

void QueryMetrics::OnOffsetsChanged(const std::string& offsets_json) {
  if (lag_poller_ != nullptr && !offsets_json.empty()) lag_poller_->SetCommitted(offsets_json);
}

void QueryMetrics::OnQueryStopped(const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A query that failed before it started has no id: its name labels the
  // error (empty for a job without one).
  if (query_label_.empty()) query_label_ = job_.name;
  status_.is_trigger_active = false;
  status_.is_data_available = false;
  if (status.ok()) {
    status_.state = monitor::QueryState::kStopped;
    status_.message = "Stopped";
  } else {
    status_.state = monitor::QueryState::kFailed;
    status_.message = "Terminated with exception: " + status.message();
    status_.last_error = status.message();
    status_.last_error_micros = clock_->NowMicros();
    errors_.WithLabels({query_label_, "query", CodeLabel(status.code())}).Increment();
  }
  if (!query_label_.empty()) up_.WithLabels({query_label_}).Set(0);
}

void QueryMetrics::PublishLag(std::vector<monitor::LagRow> rows, const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string& q = query_label_;
  if (!status.ok()) {
    // The last known lag stays (with its time); the error is counted and
    // shown, and logged once per failure streak.
    errors_.WithLabels({q, "kafka_lag", CodeLabel(status.code())}).Increment();
    status_.last_error = "looking up the Kafka end offsets: " + status.message();
    status_.last_error_micros = clock_->NowMicros();
    if (!lag_failing_) {
      SILT_LOG_WARN("metrics", status_.last_error, " (the lag shown is the last known)");
    }
    lag_failing_ = true;
    return;
  }
  if (lag_failing_) SILT_LOG_INFO("metrics", "Kafka end offsets answer again");
  lag_failing_ = false;
  // Partitions the query no longer reads drop out.
  for (const monitor::LagRow& old : status_.lag) {
    const bool kept = std::any_of(rows.begin(), rows.end(), [&](const monitor::LagRow& row) {
      return row.topic == old.topic && row.partition == old.partition;
    });
    if (kept) continue;
    const std::vector<std::string> labels = {q, old.topic, std::to_string(old.partition)};
    kafka_lag_.Remove(labels);
    kafka_end_.Remove(labels);
    kafka_committed_.Remove(labels);
  }
  for (const monitor::LagRow& row : rows) {
    const std::vector<std::string> labels = {q, row.topic, std::to_string(row.partition)};
    kafka_lag_.WithLabels(labels).Set(static_cast<double>(row.lag));
    kafka_end_.WithLabels(labels).Set(static_cast<double>(row.end_offset));
    kafka_committed_.WithLabels(labels).Set(static_cast<double>(row.committed_offset));
  }
  status_.lag = std::move(rows);
  status_.lag_micros = clock_->NowMicros();
}

monitor::QueryStatus QueryMetrics::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  monitor::QueryStatus out = status_;
  out.batches.assign(batch_rows_.begin(), batch_rows_.end());
  out.recent_progress_json.assign(recent_progress_.begin(), recent_progress_.end());
  monitor::HealthInputs inputs;
  inputs.state = status_.state;
  inputs.started_micros = started_mono_;
  inputs.last_progress_micros = last_progress_mono_;
  inputs.timeout_micros =
      job_.metrics ? job_.metrics->health_timeout_micros : MetricsSpec().health_timeout_micros;
  out.health = monitor::EvaluateHealth(inputs, clock_->MonotonicMicros());
  return out;
}

}  // namespace silt::stream
