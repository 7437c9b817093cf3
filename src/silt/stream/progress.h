// QueryProgress: what one micro-batch reports, shaped as Spark's
// StreamingQueryProgress (the fields silt emits today), and its JSON form.
// The JSON is what `silt run --progress-json` prints and what tests compare
// with Spark's output, so the serializer keeps Spark's key order and number
// formats: a field's presence and spelling are part of the contract.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace silt::stream {

// durationMs, in milliseconds. Spark leaves latestOffset and walCommit out
// of a batch that re-runs a planned (recovered) batch.
struct ProgressDurations {
  int64_t add_batch = 0;
  int64_t commit_offsets = 0;
  int64_t get_batch = 0;
  std::optional<int64_t> latest_offset;
  int64_t query_planning = 0;
  int64_t trigger_execution = 0;
  std::optional<int64_t> wal_commit;
};

// The rows' event time in the batch (milliseconds since the epoch).
struct EventTimeStatsMs {
  int64_t avg_ms = 0;
  int64_t max_ms = 0;
  int64_t min_ms = 0;
};

// eventTime: present when the query has a watermark.
struct EventTimeProgress {
  // Absent when the batch had no rows with an event time.
  std::optional<EventTimeStatsMs> stats;
  int64_t watermark_ms = 0;
};

struct SourceProgress {
  std::string description;
  // Offsets are the source's own JSON texts, written as they are; empty,
  // "-" or nullopt is written as null.
  std::optional<std::string> start_offset;
  std::optional<std::string> end_offset;
  std::optional<std::string> latest_offset;
  int64_t num_input_rows = 0;
  // Rates: written with one decimal; left out when NaN or infinite.
  double input_rows_per_second = 0;
  double processed_rows_per_second = 0;
};

struct SinkProgress {
  std::string description;
  int64_t num_output_rows = 0;
  // `sinks:` (silt's extension; Spark's progress has one sink): per entry,
  // its name, description and the rows routed to it (0 when it skipped the
  // batch as already committed), written as "sinks": [...] inside "sink".
  struct Child {
    std::string name;
    std::string description;
    int64_t num_output_rows = 0;
  };
  std::vector<Child> sinks;
};

// One entry of stateOperators, as Spark reports it (StateOperatorProgress).
struct StateOperatorProgress {
  std::string operator_name;  // "stateStoreSave", "dedupe", "dedupeWithinWatermark"
  int64_t num_rows_total = 0;
  int64_t num_rows_updated = 0;
  int64_t all_updates_time_ms = 0;
  int64_t num_rows_removed = 0;
  int64_t all_removals_time_ms = 0;
  int64_t commit_time_ms = 0;
  int64_t memory_used_bytes = 0;
  int64_t num_rows_dropped_by_watermark = 0;
  int64_t num_shuffle_partitions = 1;
  int64_t num_state_store_instances = 1;
  // customMetrics.numDroppedDuplicateRows (deduplication); -1: not written.
  int64_t num_dropped_duplicate_rows = -1;
};

// deadLetters (silt's extension, present when the job has a deadLetter
// table): the rows the batch sent there (0 when the table already held the
// batch), in total and by reason ("malformed_json", "ansi_cast",
// "late_row", "sink_refused"; only reasons that occurred).
struct DeadLetterProgress {
  std::string description;
  int64_t num_rows = 0;
  std::vector<std::pair<std::string, int64_t>> by_reason;
};
struct QueryProgress {
  std::string id;
  std::string run_id;
  std::optional<std::string> name;  // null when the job has none
  int64_t timestamp_micros = 0;     // the trigger's start (wall clock)
  int64_t batch_id = 0;
  int64_t batch_duration = 0;
  int64_t num_input_rows = 0;
  double input_rows_per_second = 0;
  double processed_rows_per_second = 0;
  ProgressDurations duration_ms;
  std::optional<EventTimeProgress> event_time;
  std::vector<StateOperatorProgress> state_operators;
  std::vector<SourceProgress> sources;
  SinkProgress sink;
  std::optional<DeadLetterProgress> dead_letters;
};

// Spark's StreamingQueryProgress.json, in its key order.
std::string ProgressToJson(const QueryProgress& progress);

}  // namespace silt::stream
