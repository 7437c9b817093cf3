// JsonReadOptions: Spark 3.5's JSON reading options (JSONOptions) that
// change what a JSON text turns into, shared by from_json's options map and
// the JSON file source (stream/source/file_source), so both read JSON
// through the same json::JsonDecoder settings:
//
//   allowComments, allowUnquotedFieldNames, allowSingleQuotes,
//   allowNumericLeadingZeros, allowNonNumericNumbers,
//   allowBackslashEscapingAnyCharacter, allowUnquotedControlChars
//                        Jackson's extensions, "true"/"false"
//   timestampFormat, timestampNTZFormat, dateFormat
//                        Spark 3.5 datetime patterns (DateTimeFormat) for
//                        TIMESTAMP / TIMESTAMP_NTZ / DATE fields
//   enableDateTimeParsingFallback  "true"/"false"
//   timeZone             the zone of zone-less timestamp texts (default the
//                        session time zone)
//   locale               en-US (Spark's default) or en: month and day names
//                        are English; other locales are NotSupported
//
// plus the session's spark.sql.legacy.timeParserPolicy and
// spark.sql.json.enableDateTimeParsingFallback (EvalOptions).
// Option names compare case-insensitively, as Spark's do.
//
// Thread safety: a builder per call site; the options it builds are
// immutable and shareable.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/expr/eval_options.h"
#include "silt/json/json_decoder.h"

namespace silt::expr {

// Reads spark.sql.legacy.timeParserPolicy (EXCEPTION, CORRECTED, LEGACY,
// any case) and spark.sql.json.enableDateTimeParsingFallback from a job's
// Spark confs into *options. Errors: InvalidArgument naming the key for
// another value.
Status ApplyDateTimeSparkConf(const std::map<std::string, std::string>& conf, EvalOptions* options);

// The Jackson switch an allow* option names (`lower_key` lower-cased), or
// nullptr.
bool* JsonParserFlag(json::JsonParseOptions* options, std::string_view lower_key);

class JsonReadOptions {
 public:
  explicit JsonReadOptions(const EvalOptions& session);

  // Applies `key` = `value` when `key` is one of the options above: true.
  // false when it is not (the caller handles mode, columnNameOfCorruptRecord
  // and the rest). Errors: InvalidArgument naming `where` and the key for a
  // malformed value (a flag that is not true/false, a pattern that does not
  // compile, an unknown zone); NotSupported for a locale silt does not read
  // or a pattern letter DateTimeFormat does not parse.
  Result<bool> Set(std::string_view key, std::string_view value, std::string_view where);

  // The decoder options (the session zone unless timeZone was set).
  const json::JsonDecodeOptions& decode_options() const { return decode_; }

 private:
  json::JsonDecodeOptions decode_;
};

}  // namespace silt::expr
