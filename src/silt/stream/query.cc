// The trigger loop of a streaming query (RunQuery) and the progress report
// of each batch it runs; the rest of QueryRunner lives under query/
// (query/runner_internal.h).
#include "silt/stream/query.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "silt/base/logging.h"
#include "silt/stream/query/runner_internal.h"

namespace silt::stream {

namespace query_internal {

namespace {

// Default trigger with nothing new: look again after Spark's
// spark.sql.streaming.pollingDelay (10 ms), so a record waits at most that long
// before its batch starts.
constexpr int64_t kPollMicros = 10'000;
constexpr int64_t kMaxSleepMicros = 100'000;  // stop flag latency during waits

}  // namespace

Result<QueryResult> QueryRunner::Run() {
  SILT_RETURN_NOT_OK(Open());
  SILT_RETURN_NOT_OK(Restore());
  QueryResult result;
  result.query_id = query_id_;
  SILT_LOG_INFO("stream", "query ", query_id_, " (run ", run_id_, ") starting at batch ",
                next_batch_id_, pending_ ? " (re-running the uncommitted batch)" : "",
                "; checkpoint ", checkpoint_path_, ", table ", sink_->target());
  if (options_.listener) {
    options_.listener->OnQueryStarted(query_id_, run_id_, source_->Description(),
                                      sink_->Description());
  }
  const bool once = job_.trigger.kind == TriggerKind::kOnce;
  const bool available_now = job_.trigger.kind == TriggerKind::kAvailableNow;
  ReadLimit limit;
  limit.all_available = once;
  while (!StopRequested()) {
    if (job_.max_batches && result.batches_run >= *job_.max_batches) break;
    const int64_t trigger_wall = clock_->NowMicros();
    const int64_t trigger_mono = clock_->MonotonicMicros();
    ProgressDurations durations;
    OffsetSeq seq;
    if (pending_) {
      seq = std::move(*pending_);
      pending_.reset();
    } else {
      int64_t t0 = clock_->MonotonicMicros();
      Result<std::optional<std::string>> latest = source_->LatestOffset(start_offset_, limit);
      if (!latest.ok()) {
        return latest.status().WithContextParts("batch ", next_batch_id_,
                                                ": planning the source offsets");
      }
      durations.latest_offset = (clock_->MonotonicMicros() - t0) / 1000;
      // Spark's no-data batch: nothing new, but the watermark moved far
      // enough for a stateful step to emit or evict; the batch re-records
      // the previous end offsets with the new watermark.
      std::optional<std::string> planned = *latest;
      if (!planned && !once && start_offset_ && transform_->WantsNoDataBatch(watermark_ms_)) {
        planned = *start_offset_;
      }
      if (!planned) {
        if (options_.listener) options_.listener->OnNoNewData();
        if (once || available_now) break;
        if (job_.trigger.kind == TriggerKind::kProcessingTime) {
          WaitForNextInterval(trigger_wall);
        } else {
          WaitUntilMono(clock_->MonotonicMicros() + kPollMicros);
        }
        continue;
      }
      seq.batch_id = next_batch_id_;
      seq.batch_watermark_ms = watermark_ms_;
      seq.batch_timestamp_ms = trigger_wall / 1000;
      seq.conf_json = conf_json_;
      seq.source_offsets = {*planned};
      t0 = clock_->MonotonicMicros();
      Status wal = checkpoint_->WriteOffsets(seq);
      if (!wal.ok()) {
        return wal.WithContextParts("batch ", seq.batch_id, ": writing offsets/", seq.batch_id);
      }
      durations.wal_commit = (clock_->MonotonicMicros() - t0) / 1000;
      if (seq.batch_id > kMinBatchesToRetain) {
        Status purge = checkpoint_->Purge(seq.batch_id - kMinBatchesToRetain);
        if (!purge.ok()) {
          SILT_LOG_WARN("stream", "purging old checkpoint files: ", purge.ToString());
        }
      }
    }
    BatchProgress progress;
    if (options_.listener) options_.listener->OnBatchStarted(seq.batch_id);
    SILT_RETURN_NOT_OK(RunBatch(seq, trigger_wall, trigger_mono, &durations, &progress));
    ++result.batches_run;
    result.rows_written += progress.skipped_duplicate ? 0 : progress.num_output_rows;
    if (options_.on_progress) options_.on_progress(progress);
    if (options_.listener) options_.listener->OnBatchCompleted(progress);
    if (once) break;
    if (job_.max_batches && result.batches_run >= *job_.max_batches) break;
    if (job_.trigger.kind == TriggerKind::kProcessingTime) WaitForNextInterval(trigger_wall);
  }
  return result;
}

void QueryRunner::WaitUntilMono(int64_t deadline) {
  while (!StopRequested()) {
    int64_t now = clock_->MonotonicMicros();
    if (now >= deadline) return;
    clock_->SleepMicros(std::min(kMaxSleepMicros, deadline - now));
  }
}

void QueryRunner::WaitForNextInterval(int64_t trigger_wall) {
  const int64_t interval = job_.trigger.interval_micros;
  if (interval <= 0) return;
  const int64_t next = (trigger_wall / interval + 1) * interval;
  while (!StopRequested()) {
    int64_t now = clock_->NowMicros();
    if (now >= next) return;
    clock_->SleepMicros(std::min(kMaxSleepMicros, next - now));
  }
}

QueryProgress QueryRunner::MakeProgress(const OffsetSeq& seq, int64_t trigger_wall,
                                        int64_t trigger_mono, const ProgressDurations& durations,
                                        const BatchProgress& batch) const {
  const double rows = static_cast<double>(batch.num_input_rows);
  // The first trigger has no previous one: Spark divides by infinity.
  const double input_seconds = !last_trigger_mono_
                                   ? std::numeric_limits<double>::infinity()
                                   : static_cast<double>(trigger_mono - *last_trigger_mono_) / 1e6;
  const double input_rate = rows / input_seconds;
  const double processed_rate = rows / (static_cast<double>(durations.trigger_execution) / 1000.0);

  QueryProgress progress;
  progress.id = query_id_;
  progress.run_id = run_id_;
  if (!job_.name.empty()) progress.name = job_.name;
  progress.timestamp_micros = trigger_wall;
  progress.batch_id = seq.batch_id;
  progress.batch_duration = durations.trigger_execution;
  progress.num_input_rows = batch.num_input_rows;
  progress.input_rows_per_second = input_rate;
  progress.processed_rows_per_second = processed_rate;
  progress.duration_ms = durations;
  if (transform_->has_watermark()) {
    EventTimeProgress event_time;
    if (std::optional<EventTimeStats> stats = transform_->batch_event_time_stats()) {
      event_time.stats = EventTimeStatsMs{
          static_cast<int64_t>(std::llround(stats->sum_ms / static_cast<double>(stats->count))),
          stats->max_ms, stats->min_ms};
    }
    event_time.watermark_ms = seq.batch_watermark_ms;
    progress.event_time = event_time;
  }
  progress.state_operators = transform_->state_progress();
  SourceProgress source;
  source.description = source_->Description();
  source.start_offset = start_offset_;
  source.end_offset = seq.source_offsets[0];
  source.latest_offset = source_->ReportLatestOffset();
  source.num_input_rows = batch.num_input_rows;
  source.input_rows_per_second = input_rate;
  source.processed_rows_per_second = processed_rate;
  progress.sources.push_back(std::move(source));
  progress.sink.description = sink_->Description();
  progress.sink.num_output_rows = batch.num_output_rows;
  progress.sink.sinks = sink_->ChildProgress();
  return progress;
}

}  // namespace query_internal

Result<QueryResult> RunQuery(const JobSpec& job, const QueryOptions& options) {
  query_internal::QueryRunner runner(job, options);
  return runner.Run();
}

}  // namespace silt::stream
