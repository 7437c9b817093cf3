// What `/status` and the `/` page show about a running query: Spark's
// `query.status` (message, isDataAvailable, isTriggerActive) and
// `query.recentProgress` (the last progress records), plus the health
// verdict, the Kafka lag per partition and the last error. The query side
// (stream/metrics/query_metrics.h) fills a QueryStatus; this module only
// renders it, so it knows nothing of streams.
//
// Nothing secret goes in here: the query side puts in progress records and
// descriptions, which name topics and table paths but never options.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "silt/monitor/health.h"

namespace silt::monitor {

// One finished batch, for the page's table.
struct BatchRow {
  int64_t batch_id = 0;
  int64_t timestamp_micros = 0;  // the trigger's start (wall clock)
  int64_t input_rows = 0;
  int64_t output_rows = 0;
  int64_t duration_ms = 0;
  double input_rows_per_second = 0;  // NaN/inf when Spark would leave it out
  double processed_rows_per_second = 0;
  int64_t table_version = -1;  // -1: nothing committed
  bool skipped_duplicate = false;
};

// Lag of one Kafka partition: the broker's end offset (high watermark) less
// the next offset the query will read.
struct LagRow {
  std::string topic;
  int32_t partition = 0;
  int64_t committed_offset = 0;
  int64_t end_offset = 0;
  int64_t lag = 0;
};

struct QueryStatus {
  std::string id;
  std::string run_id;
  std::string name;
  std::string source;  // the source's description
  std::string sink;    // the sink's description
  QueryState state = QueryState::kStarting;
  // Spark's StreamingQueryStatus.
  std::string message = "Initializing sources";
  bool is_data_available = false;
  bool is_trigger_active = false;
  Health health;
  // The last error (a failed query, a failed lag lookup), for a person.
  std::string last_error;
  int64_t last_error_micros = 0;
  // Kafka lag, when the source is Kafka and the broker answered; empty
  // otherwise. lag_micros: when it was fetched (wall clock), 0: never.
  std::vector<LagRow> lag;
  int64_t lag_micros = 0;
  // Newest last.
  std::vector<BatchRow> batches;
  std::vector<std::string> recent_progress_json;
};

// {"id", "runId", "name", "state", "status": {message, isDataAvailable,
// isTriggerActive}, "health": {healthy, reason}, "lastError", "kafkaLag":
// [...], "recentProgress": [<progress records>]}.
std::string StatusToJson(const QueryStatus& status);

// A self-contained HTML page (inline CSS, no scripts or external assets)
// that reloads itself every `refresh_seconds`: the query, its health and
// last error, rows per second, the lag table and the recent batches
// (newest first).
std::string StatusPageHtml(const QueryStatus& status, int refresh_seconds = 5);

// &, <, >, " and ' as entities.
std::string EscapeHtml(std::string_view text);

}  // namespace silt::monitor
