#include "silt/stream/progress.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"

namespace silt::stream {

namespace {

// Spark's progress numbers: one decimal, omitted when NaN or infinite.
void WriteRate(JsonWriter* w, std::string_view key, double value) {
  if (!std::isfinite(value)) return;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", value);
  w->Key(key);
  w->Raw(buf);
}

void WriteOffset(JsonWriter* w, std::string_view key, const std::optional<std::string>& offset) {
  w->Key(key);
  if (!offset || offset->empty() || *offset == "-") {
    w->Null();
  } else {
    w->Raw(*offset);
  }
}

void WriteDurations(JsonWriter* w, const ProgressDurations& d) {
  w->Key("durationMs");
  w->BeginObject();
  w->Member("addBatch", d.add_batch);
  w->Member("commitOffsets", d.commit_offsets);
  w->Member("getBatch", d.get_batch);
  if (d.latest_offset) {
    w->Member("latestOffset", *d.latest_offset);
  }
  w->Member("queryPlanning", d.query_planning);
  w->Member("triggerExecution", d.trigger_execution);
  if (d.wal_commit) {
    w->Member("walCommit", *d.wal_commit);
  }
  w->EndObject();
}

void WriteEventTime(JsonWriter* w, const EventTimeProgress& event_time) {
  w->Key("eventTime");
  w->BeginObject();
  if (event_time.stats) {
    w->Member("avg", FormatTimestampMillisUtc(event_time.stats->avg_ms * 1000));
    w->Member("max", FormatTimestampMillisUtc(event_time.stats->max_ms * 1000));
    w->Member("min", FormatTimestampMillisUtc(event_time.stats->min_ms * 1000));
  }
  w->Member("watermark", FormatTimestampMillisUtc(event_time.watermark_ms * 1000));
  w->EndObject();
}

void WriteSource(JsonWriter* w, const SourceProgress& source) {
  w->BeginObject();
  w->Member("description", source.description);
  WriteOffset(w, "startOffset", source.start_offset);
  WriteOffset(w, "endOffset", source.end_offset);
  WriteOffset(w, "latestOffset", source.latest_offset);
  w->Member("numInputRows", source.num_input_rows);
  WriteRate(w, "inputRowsPerSecond", source.input_rows_per_second);
  WriteRate(w, "processedRowsPerSecond", source.processed_rows_per_second);
  w->EndObject();
}

void WriteStateOperator(JsonWriter* w, const StateOperatorProgress& op) {
  w->BeginObject();
  w->Member("operatorName", op.operator_name);
  w->Member("numRowsTotal", op.num_rows_total);
  w->Member("numRowsUpdated", op.num_rows_updated);
  w->Member("allUpdatesTimeMs", op.all_updates_time_ms);
  w->Member("numRowsRemoved", op.num_rows_removed);
  w->Member("allRemovalsTimeMs", op.all_removals_time_ms);
  w->Member("commitTimeMs", op.commit_time_ms);
  w->Member("memoryUsedBytes", op.memory_used_bytes);
  w->Member("numRowsDroppedByWatermark", op.num_rows_dropped_by_watermark);
  w->Member("numShufflePartitions", op.num_shuffle_partitions);
  w->Member("numStateStoreInstances", op.num_state_store_instances);
  w->Key("customMetrics");
  w->BeginObject();
  if (op.num_dropped_duplicate_rows >= 0) {
    w->Member("numDroppedDuplicateRows", op.num_dropped_duplicate_rows);
  }
  w->EndObject();
  w->EndObject();
}

}  // namespace

std::string ProgressToJson(const QueryProgress& progress) {
  JsonWriter w;
  w.BeginObject();
  w.Member("id", progress.id);
  w.Member("runId", progress.run_id);
  w.Key("name");
  if (progress.name) {
    w.String(*progress.name);
  } else {
    w.Null();
  }
  w.Member("timestamp", FormatTimestampMillisUtc(progress.timestamp_micros));
  w.Member("batchId", progress.batch_id);
  w.Member("batchDuration", progress.batch_duration);
  w.Member("numInputRows", progress.num_input_rows);
  WriteRate(&w, "inputRowsPerSecond", progress.input_rows_per_second);
  WriteRate(&w, "processedRowsPerSecond", progress.processed_rows_per_second);
  WriteDurations(&w, progress.duration_ms);
  if (progress.event_time) WriteEventTime(&w, *progress.event_time);
  w.Key("stateOperators");
  w.BeginArray();
  for (const StateOperatorProgress& op : progress.state_operators) WriteStateOperator(&w, op);
  w.EndArray();
  w.Key("sources");
  w.BeginArray();
  for (const SourceProgress& source : progress.sources) WriteSource(&w, source);
  w.EndArray();
  w.Key("sink");
  w.BeginObject();
  w.Member("description", progress.sink.description);
  w.Member("numOutputRows", progress.sink.num_output_rows);
  if (!progress.sink.sinks.empty()) {
    w.Key("sinks");
    w.BeginArray();
    for (const SinkProgress::Child& child : progress.sink.sinks) {
      w.BeginObject();
      w.Member("name", child.name);
      w.Member("description", child.description);
      w.Member("numOutputRows", child.num_output_rows);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  if (progress.dead_letters) {
    const DeadLetterProgress& dead = *progress.dead_letters;
    w.Key("deadLetters");
    w.BeginObject();
    w.Member("description", dead.description);
    w.Member("numRows", dead.num_rows);
    w.Key("byReason");
    w.BeginObject();
    for (const auto& [reason, rows] : dead.by_reason) w.Member(reason, rows);
    w.EndObject();
    w.EndObject();
  }
  w.EndObject();
  return w.Take();
}

}  // namespace silt::stream
