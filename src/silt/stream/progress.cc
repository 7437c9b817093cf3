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
  w->Key("addBatch");
  w->Int(d.add_batch);
  w->Key("commitOffsets");
  w->Int(d.commit_offsets);
  w->Key("getBatch");
  w->Int(d.get_batch);
  if (d.latest_offset) {
    w->Key("latestOffset");
    w->Int(*d.latest_offset);
  }
  w->Key("queryPlanning");
  w->Int(d.query_planning);
  w->Key("triggerExecution");
  w->Int(d.trigger_execution);
  if (d.wal_commit) {
    w->Key("walCommit");
    w->Int(*d.wal_commit);
  }
  w->EndObject();
}

void WriteEventTime(JsonWriter* w, const EventTimeProgress& event_time) {
  w->Key("eventTime");
  w->BeginObject();
  if (event_time.stats) {
    w->Key("avg");
    w->String(FormatTimestampMillisUtc(event_time.stats->avg_ms * 1000));
    w->Key("max");
    w->String(FormatTimestampMillisUtc(event_time.stats->max_ms * 1000));
    w->Key("min");
    w->String(FormatTimestampMillisUtc(event_time.stats->min_ms * 1000));
  }
  w->Key("watermark");
  w->String(FormatTimestampMillisUtc(event_time.watermark_ms * 1000));
  w->EndObject();
}

void WriteSource(JsonWriter* w, const SourceProgress& source) {
  w->BeginObject();
  w->Key("description");
  w->String(source.description);
  WriteOffset(w, "startOffset", source.start_offset);
  WriteOffset(w, "endOffset", source.end_offset);
  WriteOffset(w, "latestOffset", source.latest_offset);
  w->Key("numInputRows");
  w->Int(source.num_input_rows);
  WriteRate(w, "inputRowsPerSecond", source.input_rows_per_second);
  WriteRate(w, "processedRowsPerSecond", source.processed_rows_per_second);
  w->EndObject();
}

}  // namespace

std::string ProgressToJson(const QueryProgress& progress) {
  JsonWriter w;
  w.BeginObject();
  w.Key("id");
  w.String(progress.id);
  w.Key("runId");
  w.String(progress.run_id);
  w.Key("name");
  if (progress.name) {
    w.String(*progress.name);
  } else {
    w.Null();
  }
  w.Key("timestamp");
  w.String(FormatTimestampMillisUtc(progress.timestamp_micros));
  w.Key("batchId");
  w.Int(progress.batch_id);
  w.Key("batchDuration");
  w.Int(progress.batch_duration);
  w.Key("numInputRows");
  w.Int(progress.num_input_rows);
  WriteRate(&w, "inputRowsPerSecond", progress.input_rows_per_second);
  WriteRate(&w, "processedRowsPerSecond", progress.processed_rows_per_second);
  WriteDurations(&w, progress.duration_ms);
  if (progress.event_time) WriteEventTime(&w, *progress.event_time);
  w.Key("stateOperators");
  w.BeginArray();
  w.EndArray();
  w.Key("sources");
  w.BeginArray();
  for (const SourceProgress& source : progress.sources) WriteSource(&w, source);
  w.EndArray();
  w.Key("sink");
  w.BeginObject();
  w.Key("description");
  w.String(progress.sink.description);
  w.Key("numOutputRows");
  w.Int(progress.sink.num_output_rows);
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace silt::stream
