// What binding and evaluating an expression depend on besides its inputs:
// EvalOptions (Spark session settings, fixed at bind time) and EvalContext
// (per batch). Plain values, safe to copy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace silt::expr {

class TimeZone;

// spark.sql.legacy.timeParserPolicy (read by from_json and the JSON file
// source; see json::TimeParserPolicy).
enum class TimeParserPolicy : uint8_t { kException, kCorrected, kLegacy };

struct EvalOptions {
  bool ansi = false;
  TimeParserPolicy time_parser_policy = TimeParserPolicy::kException;
  // spark.sql.json.enableDateTimeParsingFallback, when set.
  std::optional<bool> json_datetime_fallback;
  // Session time zone offset for zone-less timestamp strings (UTC = 0).
  int64_t session_zone_offset_micros = 0;
  // The session time zone by name (spark.sql.session.timeZone), with DST;
  // when null, the fixed offset above. Used by date_format, from_unixtime,
  // unix_timestamp, date_trunc, months_between and from/to_utc_timestamp.
  std::shared_ptr<const TimeZone> session_zone;
  // The job writes bad rows to a dead-letter table: from_json accepts mode
  // DEADLETTER, and ANSI cast failures become row errors (RowErrors below)
  // instead of failing the batch, when the context carries a RowErrors.
  bool dead_letter = false;
  // Set by WindowExpansion::options(): the input column holding each row's
  // window, which every window() call then reads. -1 (the default):
  // window() computes the tumbling window of its time (see WindowExpansion).
  int window_column = -1;
};

// Why a row went to the dead-letter table (the `reason` column).
enum class RowErrorKind : uint8_t {
  kMalformedJson,  // from_json in mode DEADLETTER
  kAnsiCast,       // a cast that fails under ANSI
  kLateRow,        // older than the watermark at a stateful step
  kSinkRefused,    // the sink would refuse it (NOT NULL)
};

// "malformed_json", "ansi_cast", "late_row", "sink_refused".
inline const char* RowErrorKindName(RowErrorKind kind) {
  switch (kind) {
    case RowErrorKind::kMalformedJson: return "malformed_json";
    case RowErrorKind::kAnsiCast: return "ansi_cast";
    case RowErrorKind::kLateRow: return "late_row";
    case RowErrorKind::kSinkRefused: return "sink_refused";
  }
  return "unknown";
}

// The error vector kernels fill instead of failing the batch (dead-letter
// mode): one entry per failing row, by index into the batch the kernel ran
// over. Kernels only append; the stream transform maps the indices back to
// source records and removes the rows. Strings are built for failing rows
// only, so a clean batch costs nothing. Not thread-safe (one per query).
struct RowErrors {
  std::vector<int64_t> rows;
  std::vector<RowErrorKind> kinds;
  std::vector<std::string> messages;  // what failed, naming the expression

  void Add(int64_t row, RowErrorKind kind, std::string message) {
    rows.push_back(row);
    kinds.push_back(kind);
    messages.push_back(std::move(message));
  }
  bool empty() const { return rows.empty(); }
  size_t size() const { return rows.size(); }
  void Clear() {
    rows.clear();
    kinds.clear();
    messages.clear();
  }
};

// Per-batch context: the value of current_timestamp() is fixed per batch, as
// in Spark (the batch's trigger time).
struct EvalContext {
  int64_t current_timestamp_micros = 0;
  // input_file_name(): the file the rows came from (file sources), else "".
  std::string input_file_name;
  // Dead-letter mode: where kernels report failing rows (not owned; null:
  // rows fail the batch as usual).
  RowErrors* row_errors = nullptr;
};

}  // namespace silt::expr
