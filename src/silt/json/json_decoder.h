// JsonDecoder: parses JSON documents (one per row) into typed columns for a
// schema, as Spark 3.5.3's from_json (JacksonParser over jackson-core 2.15,
// default options, spark.sql.json.enablePartialResults=true) does: checked
// against pyspark by tests/integration/test_json_corpus_spark.py.
//
//  - Each text is read as Jackson reads it (JsonParseOptions): only its first
//    JSON value (what follows is ignored: `{"a":1} x` is {"a":1}); single
//    quotes and NaN/Infinity tokens by default, the other extensions when
//    their option is on; bytes that are not UTF-8 become U+FFFD as Java's
//    decoder replaces them; nesting deeper than 1000 or a number longer than
//    1000 digits is malformed. simdjson reads every row it accepts; the
//    others go through a Jackson-compatible lexer (jackson_internal.h).
//  - A null input row, or one without any JSON value (white space): the
//    struct row is NULL (Spark finds no token and returns null).
//  - A text Jackson fails on, or whose first value is not an object: a bad
//    record. Like Spark 3.x the struct row is valid; the fields Spark's
//    converters had produced before the failure are kept (a field whose
//    converter failed is NULL), or none when the failure is outside any
//    converter; the corrupt-record column holds the raw text.
//  - A field whose JSON value does not fit its type: that field is NULL and
//    the rest is kept, at any depth of structs (the record is bad: Spark's
//    partial result); an array or map with an element that does not fit is
//    NULL as a whole (an element struct that lost a field is kept).
//  - Conversions, per target type (JSON null gives NULL for every type):
//      STRING      string -> its value; any other value -> its JSON text
//                  re-serialized compactly as Spark's Jackson generator does
//                  (integers verbatim, other numbers via Java's
//                  Double.toString, e.g. 1.50 -> "1.5", NaN -> "\"NaN\"",
//                  characters outside the BMP escaped as surrogate pairs).
//      BYTE/SHORT/INT/LONG  integers in range only (1.0 and "1" do not fit).
//                  BYTE accepts [-128, 255] and wraps (Jackson's getByteValue).
//      FLOAT/DOUBLE  any number; with allow_non_numeric_numbers the strings
//                  "NaN", "Infinity", "+Infinity", "+INF", "-Infinity",
//                  "-INF" exactly.
//      DECIMAL(p,s)  numbers and number strings (commas removed, BigDecimal
//                  grammar), rounded half-up to s digits; more than p digits
//                  does not fit. Non-integral numbers simdjson reads are
//                  taken through a double (shortest round-trip text): those
//                  with more than 15-17 significant digits may differ from
//                  Spark in the last digits (rows read by the Jackson path
//                  keep the text); integers and strings are exact.
//      BOOLEAN     true/false only.
//      DATE        strings via columnar::ParseDate, else an integer string
//                  as days since the epoch (Spark's 1.5 legacy form).
//      TIMESTAMP   strings via columnar::ParseTimestamp in the session zone;
//                  JSON integers are seconds since the epoch.
//      TIMESTAMP_NTZ  strings without a zone only.
//      BINARY      base64 strings, decoded.
//      STRUCT/ARRAY/MAP  recursively; maps need STRING keys and keep every
//                  member (duplicate keys included) in document order.
//      VOID        always NULL.
//    An empty string does not fit any type but STRING and BINARY.
//  - Field names match exactly (case-sensitively), as Spark's do.
//  - Duplicate keys in an object: each occurrence is converted in turn, as
//    Spark updates its row: the last one that is JSON null or fits wins; one
//    that does not fit leaves the previous value and makes the record bad.
//  - Unknown fields are ignored; missing fields are NULL.
//  - The output type is the schema made nullable at every level (Spark's
//    schema.asNullable): NOT NULL in the schema does not reject rows.
//
// Known differences from Spark, all on rows simdjson rejects or on limits no
// real record reaches: a float literal of more than 1000 characters that
// simdjson accepts is read (Jackson fails it); a string over Jackson's
// 20,000,000-character limit is read; a genuine string starting with U+0000
// '#', or holding U+F0000..U+F07FF, in a row with Jackson-only forms may read
// as a number or an unpaired surrogate (in-band markers, dom_internal.h and
// jackson_internal.h); which characters count as Java identifier characters
// outside Latin-1 (for unquoted names, and for how far Jackson reads a bad
// token before failing) is approximated.
//
// The decoder reuses its simdjson parser, padded scratch buffer and builders
// across batches; no per-row allocation beyond amortized buffer growth on the
// simdjson path.
//
// Thread safety: one decoder per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/column.h"

namespace silt::json {

// Counts added to (not reset) by each decode call.
struct DecodeStats {
  int64_t malformed_rows = 0;     // not JSON / not an object
  int64_t mismatched_fields = 0;  // field present but of the wrong type
  // Rows kept with at least one mismatched field (their raw text also goes
  // to the corrupt-record column).
  int64_t partial_rows = 0;
};

// Spark's JSON parser options (JSONOptions), with Spark's defaults. They
// decide which of Jackson's extensions a text may use.
struct JsonParseOptions {
  bool allow_comments = false;
  bool allow_unquoted_field_names = false;
  bool allow_single_quotes = true;
  bool allow_numeric_leading_zeros = false;
  // Also gates the strings "NaN", "Infinity", ... for FLOAT/DOUBLE fields.
  bool allow_non_numeric_numbers = true;
  bool allow_backslash_escaping_any_character = false;
  bool allow_unquoted_control_chars = false;
};

struct JsonDecodeOptions {
  JsonParseOptions parse;
  // The schema has one field and each text is that field's value, not an
  // object of fields: from_json with an ARRAY or MAP schema. A text that does
  // not give the value (NULL, malformed, not of the type) is a bad record:
  // the field is NULL and the corrupt-record output holds the text. A JSON
  // object read for an ARRAY<STRUCT> field is a one-element array (Spark's
  // SPARK-19595 rule).
  bool value_root = false;
  // Offset of the session time zone, applied to timestamp strings without a
  // zone (Spark's spark.sql.session.timeZone as a fixed offset); 0 = UTC.
  int64_t default_zone_offset_micros = 0;
  // When set, the session time zone with its DST rules instead: maps a
  // zone-less timestamp text's local date-time (micros since the local
  // epoch) to UTC micros.
  std::function<int64_t(int64_t)> local_to_utc;
};

class JsonDecoder {
 public:
  // `schema` must be a struct type. Errors: InvalidArgument when it is not a
  // struct; NotSupported naming a field whose type cannot be decoded (a map
  // whose key type is not STRING).
  static Result<std::unique_ptr<JsonDecoder>> Make(columnar::SchemaPtr schema);
  static Result<std::unique_ptr<JsonDecoder>> Make(columnar::SchemaPtr schema,
                                                   const JsonDecodeOptions& options);
  ~JsonDecoder();

  // The type of the decoded struct column: the schema, nullable everywhere.
  const columnar::TypePtr& output_type() const;

  // Decodes `input` (string or binary column, may contain nulls) into a
  // struct column of output_type(); a null input row gives a null struct.
  // When `corrupt_record` is non-null it receives one string per row: the
  // raw text for malformed rows and rows with a mismatched field, null
  // otherwise. One Status per call: errors only for internal failures (an
  // input column that is not string/binary is InvalidArgument), never for
  // bad rows.
  Result<columnar::ColumnPtr> DecodeColumn(const columnar::Column& input,
                                           columnar::ColumnPtr* corrupt_record = nullptr,
                                           DecodeStats* stats = nullptr);

  // Decodes newline-free JSON texts given as views (JSON-lines file source)
  // into a struct column of output_type(), as DecodeColumn does; the caller
  // flattens the struct's children into top-level columns. A blank text gives
  // a null struct row (Spark's file source skips blank lines; callers that
  // mirror that drop them before decoding).
  Result<columnar::ColumnPtr> DecodeViews(const std::string_view* rows, int64_t num_rows,
                                          columnar::ColumnPtr* corrupt_record = nullptr,
                                          DecodeStats* stats = nullptr);

 private:
  JsonDecoder();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Spark 3.5's schema_of_json(json[, options]) (JsonInferSchema with default
// inference options): the SQL type of the text's first JSON value, read as
// Jackson reads it under `options`. Numbers without a fraction or exponent
// are BIGINT, or DECIMAL(p,0) beyond a long, DOUBLE past 38 digits; others
// (NaN/Infinity too) DOUBLE; objects STRUCTs with their fields sorted by
// name; arrays the common type of their elements; NULL and "" STRING. No
// value at all is STRING. Errors: InvalidArgument naming the text when
// Jackson fails on it (Spark's query fails).
Result<std::string> InferJsonSchemaDdl(std::string_view text, const JsonParseOptions& options);

// Spark's get_json_object(json, path) over a string column with a constant
// path. Each text's first JSON value is read as Hive's factory in Spark
// reads it (single quotes and raw control characters allowed, NaN/Infinity
// not; invalid UTF-8 as U+FFFD; what follows the value ignored). Path grammar (Spark's
// JsonPathParser): `$` followed by any of
// `.name`, `['name']`, `[index]`, `[*]`, `.*`, `['*']`; names match
// case-sensitively. Results, as Spark 3.5 produces them:
//  - a string reached without a `[*]` on the way: its value, unquoted;
//  - anything else: compact JSON as Jackson re-serializes it (numbers
//    re-printed: 1.50 -> "1.5", integers verbatim; strings quoted);
//  - `[*]` collects matches into a JSON array, unwrapped when exactly one
//    element matched; `[*][*]` flattens (Hive's behaviour);
//  - a field whose value is JSON null, a missing path, a null input or
//    malformed JSON: NULL. (`.*` / `['*']` parse but never match in Spark,
//    so they give NULL too.)
// Errors: InvalidArgument for a malformed path, naming the path and the
// position (Spark would return NULL for every row; silt reports it at bind
// time instead — callers may choose to map it to all-NULL).
//
// Thread safety: one evaluator per thread.
class JsonPathEvaluator {
 public:
  static Result<std::unique_ptr<JsonPathEvaluator>> Make(std::string_view path);
  ~JsonPathEvaluator();
  // `json_strings`: a string or binary column. Returns a string column of the
  // same length. Errors: InvalidArgument for another input type.
  Result<columnar::ColumnPtr> Evaluate(const columnar::Column& json_strings);

 private:
  JsonPathEvaluator();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace silt::json
