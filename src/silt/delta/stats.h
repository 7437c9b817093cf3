// Per-file statistics for `add.stats` (FORMATS.md A5), built from the column
// statistics the Parquet writer gathered while writing the file:
//
//   {"numRecords":3,"minValues":{"a":1,"s":"abc"},"maxValues":{"a":9,"s":"xyz"},
//    "nullCount":{"a":0,"s":1}}
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "silt/columnar/types.h"
#include "silt/parquet/file_writer.h"

namespace silt::delta {

// Delta's default for delta.dataSkippingNumIndexedCols.
inline constexpr int kDefaultNumIndexedCols = 32;
// Delta's default for spark.databricks.io.skipping.stringPrefixLength.
inline constexpr int kDefaultStringPrefixLength = 32;

// The add.stats JSON for one data file. `data_schema` is the file's schema
// (the table schema without partition columns) and `result` what the Parquet
// writer returned for it. Stats cover the first `num_indexed_cols` leaf
// columns (negative = all), counted depth-first as delta-spark does:
// nullCount for each of them, minValues/maxValues for numeric, date,
// timestamp, timestamp_ntz and string columns that have a non-null value.
// Strings are truncated to `string_prefix_length` UTF-16 units with Delta's
// tie-breaker for max; timestamps are written as yyyy-MM-ddTHH:mm:ss.SSSZ
// truncated to milliseconds; NaN and infinite bounds are omitted (no bound is
// a valid bound), and so are the string bounds of a column whose min or max
// is not valid UTF-8 (its nullCount stays). Nested columns are counted but
// have no stats. The result is always valid UTF-8.
std::string EncodeStats(const parquet::WriteResult& result, const columnar::Schema& data_schema,
                        int num_indexed_cols = kDefaultNumIndexedCols,
                        int string_prefix_length = kDefaultStringPrefixLength);

// numRecords from an add.stats JSON text; nullopt when absent or malformed.
std::optional<int64_t> StatsNumRecords(std::string_view stats_json);

// Delta's min-string truncation: the first `prefix_length` UTF-16 units of
// `s` (one more when that would split a surrogate pair). `s` is UTF-8.
std::string TruncateMinString(std::string_view s, int prefix_length);
// Delta's max-string truncation: `s` itself when it is at most
// `prefix_length` UTF-16 units; otherwise a prefix followed by U+007F (when
// the next character is below it) or U+10FFFF, extending the prefix past
// embedded U+10FFFF characters up to 2 * prefix_length units; nullopt when no
// such bound exists.
std::optional<std::string> TruncateMaxString(std::string_view s, int prefix_length);

}  // namespace silt::delta
