// What binding and evaluating an expression depend on besides its inputs:
// EvalOptions (Spark session settings, fixed at bind time) and EvalContext
// (per batch). Plain values, safe to copy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace silt::expr {

class TimeZone;

struct EvalOptions {
  bool ansi = false;
  // Session time zone offset for zone-less timestamp strings (UTC = 0).
  int64_t session_zone_offset_micros = 0;
  // The session time zone by name (spark.sql.session.timeZone), with DST;
  // when null, the fixed offset above. Used by date_format, from_unixtime,
  // unix_timestamp, date_trunc, months_between and from/to_utc_timestamp.
  std::shared_ptr<const TimeZone> session_zone;
  // Set by WindowExpansion::options(): the input column holding each row's
  // window, which every window() call then reads. -1 (the default):
  // window() computes the tumbling window of its time (see WindowExpansion).
  int window_column = -1;
};

// Per-batch context: the value of current_timestamp() is fixed per batch, as
// in Spark (the batch's trigger time).
struct EvalContext {
  int64_t current_timestamp_micros = 0;
  // input_file_name(): the file the rows came from (file sources), else "".
  std::string input_file_name;
};

}  // namespace silt::expr
