// The parts of JsonDecoder (json_decoder.h) shared by the files that
// implement it, one file per part of the decoder:
//   json_decoder.cc           the schema tree, the row loop, the public API;
//   json_decoder_flat.cc      the flat fast path (STRING schemas over rows
//                             the single-pass scanner reads, decision 145);
//   json_decoder_dom.cc       the walk of simdjson's DOM against the schema
//                             (objects, repeated fields, arrays, maps);
//   json_decoder_malformed.cc Spark's converter over a malformed record's
//                             tokens (what PERMISSIVE keeps of it);
//   json_decoder_convert.cc   the per-type readers: numbers, decimals,
//                             strings, dates and timestamps.
//
// Internal to json. Thread safety and ownership: as JsonDecoder (one decoder
// per thread; Impl owns the schema tree, its builders and scratch).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/columnar/column.h"
#include "silt/json/dom_internal.h"
#include "silt/json/flat_object_internal.h"
#include "silt/json/jackson_internal.h"
#include "silt/json/json_decoder.h"
#include "silt/json/legacy_date_parser_internal.h"

namespace silt::json {

namespace internal {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A struct's field names, matched exactly (Spark's JacksonParser looks JSON
// keys up case-sensitively). Small structs scan linearly (faster than hashing
// for a handful of short names); large ones use a hash map built once. Of
// equal names the first wins.
class FieldLookup {
 public:
  explicit FieldLookup(const std::vector<columnar::Field>& fields) {
    for (const columnar::Field& field : fields) names_.push_back(field.name);
    std::vector<std::string_view> sorted(names_.begin(), names_.end());
    std::sort(sorted.begin(), sorted.end());
    unique_ = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    if (names_.size() > kLinearMax) {
      for (size_t i = 0; i < names_.size(); ++i) index_.emplace(names_[i], static_cast<int>(i));
    }
  }

  const std::string& name(int i) const { return names_[static_cast<size_t>(i)]; }

  // The field index for `key`, or -1.
  int Find(std::string_view key) const {
    if (names_.size() <= kLinearMax) {
      for (size_t i = 0; i < names_.size(); ++i) {
        if (internal::SameKey(names_[i], key)) return static_cast<int>(i);
      }
      return -1;
    }
    auto it = index_.find(key);
    return it == index_.end() ? -1 : it->second;
  }
  // Find(), trying field `expected` first (an object whose members come in
  // schema order, as producers write them, then needs one comparison each).
  int Find(std::string_view key, size_t expected) const {
    // (A schema that repeats a name keeps Find's first-match answer.)
    if (unique_ && expected < names_.size() && internal::SameKey(names_[expected], key)) {
      return static_cast<int>(expected);
    }
    return Find(key);
  }

 private:
  static constexpr size_t kLinearMax = 12;
  std::vector<std::string> names_;
  bool unique_ = true;
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> index_;
};

// One node per type in the schema tree, mirroring the builder tree.
struct Node {
  columnar::TypeId id = columnar::TypeId::kNull;
  int precision = 0;
  int scale = 0;
  // Struct: one per field. Array: the element. Map: the value.
  std::vector<std::unique_ptr<Node>> children;
  // Struct only: name lookup, and per object the last member of each field
  // and how often the field occurs (0, 1, or 2 for more than once).
  std::unique_ptr<FieldLookup> lookup;
  std::vector<simdjson::dom::element> slot_value;
  std::vector<uint8_t> slot_count;
  // Bound at the start of each batch.
  columnar::ColumnBuilder* builder = nullptr;
  columnar::ColumnBuilder* map_entries = nullptr;
  columnar::ColumnBuilder* map_keys = nullptr;
};

// How a value fits its type.
enum class Fit : uint8_t { kOk, kPartial, kFail };
inline Fit Worse(Fit a, Fit b) { return a > b ? a : b; }

// What a row gave: a clean row, a bad record (malformed, or a field that
// does not fit: its text goes to the corrupt-record output), or a NULL row
// (no JSON value at all).
// kSplit: a text split into split_rows rows (split_top_level_arrays),
// split_bad telling whether they are bad.
enum class RowResult : uint8_t { kClean, kBad, kNull, kSplit };

}  // namespace internal

struct JsonDecoder::Impl {
  columnar::TypePtr output_type;
  std::unique_ptr<internal::Node> root;
  std::unique_ptr<columnar::ColumnBuilder> root_builder;
  std::unique_ptr<columnar::ColumnBuilder> corrupt_builder;
  internal::DomReader reader;
  // Malformed rows only: parses scalars and the fields Spark still converts.
  internal::DomReader side_reader;
  internal::JacksonLexer span_lexer{internal::JacksonFeatures()};
  internal::JacksonFeatures features;
  internal::JsonGen gen;
  std::string scratch;
  std::string gmt_scratch;
  std::string lax_text;
  std::string partial_json;
  std::string value_json;
  std::string_view lexer_input;
  int64_t zone_offset_micros = 0;
  std::function<int64_t(int64_t)> local_to_utc;
  // DATE/TIMESTAMP/TIMESTAMP_NTZ reading (JsonDateTimeOptions).
  JsonDateTimeOptions datetime;
  bool timestamp_fallback = true;
  bool date_fallback = true;
  // Spark 2's parser for each type: the check under EXCEPTION, the parser
  // under LEGACY (TIMESTAMP_NTZ: the check, with a pattern only).
  std::optional<internal::LegacyDateParser> legacy_timestamp;
  std::optional<internal::LegacyDateParser> legacy_date;
  std::optional<internal::LegacyDateParser> legacy_ntz;
  // The first text of the current call that Spark fails the query on.
  bool upgrade_error = false;
  std::string upgrade_text;
  std::string upgrade_pattern;
  bool allow_non_numeric = true;
  bool value_root = false;
  bool file_reader = false;
  int64_t split_rows = 0;
  bool split_bad = false;
  // Whether the current document carries big-number markers, and stand-ins
  // of unpaired surrogates (jackson_internal.h).
  bool markers = false;
  bool row_lone_surrogates = false;
  // Fields (at any depth) appended as NULL because their value did not fit.
  int64_t field_misfits = 0;
  // A schema of STRING fields only (the seed's envelope), read from rows,
  // not files: flat objects of string and null members take DecodeFlat.
  bool flat_strings = false;
  internal::FlatObjectScanner scanner;
  std::vector<int> flat_member;                         // per field: its member in scanner, or -1
  std::vector<columnar::ColumnBuilder*> flat_builders;  // per field, bound per batch

  template <typename RowText>
  Result<columnar::ColumnPtr> Decode(int64_t num_rows, const RowText& row_text,
                                     columnar::ColumnPtr* corrupt_record, DecodeStats* stats,
                                     std::vector<int64_t>* source_rows);
  internal::RowResult DecodeArrayRows(simdjson::dom::element doc, DecodeStats* stats);
  internal::RowResult DecodeRow(std::string_view text, DecodeStats* stats);
  internal::RowResult DecodeObject(simdjson::dom::element doc, bool bad, DecodeStats* stats);
  internal::RowResult DecodeValue(simdjson::dom::element doc, bool bad, DecodeStats* stats);
  internal::RowResult AllNullRow(DecodeStats* stats);
  internal::RowResult DecodeMalformed(DecodeStats* stats);
  // The row scanner.members() describe, when every member of a schema field
  // is a string or null and no field occurs twice: appended as the DOM path
  // appends it (true). False, with nothing appended, otherwise.
  bool DecodeFlat();
  // Spark's converter for `node` over the lexer's tokens, from its current
  // token: appends the value it produces to *out as strict JSON (a struct's
  // fields that failed left out) and returns kPartial when some struct
  // inside lost a field; throws JacksonError where Spark's converter throws
  // (a syntax error, or a value that does not fit).
  internal::Fit Emulate(internal::Node* node, internal::JacksonLexer* lexer, std::string* out);
  void AppendValueJson(std::string_view span, std::string* out);
  void FillSlots(internal::Node* node, simdjson::dom::object object);
  // For a field occurring more than once in `object`: the occurrence Spark's
  // row keeps (the last one that is JSON null or fits; *none when none
  // does) and whether any occurrence did not fit.
  simdjson::dom::element ChooseOccurrence(internal::Node* node, size_t field_idx,
                                          simdjson::dom::object object, bool* none,
                                          internal::Fit* result);

  // Converts non-null `value` to `node`'s type. kAppend=false only checks
  // how it fits (so a list whose element does not fit can be nulled as a
  // whole before anything is appended); kAppend=true appends the value, or a
  // null where it does not fit, keeping every builder aligned. kPartial: a
  // struct somewhere inside has a field that does not fit (kept as NULL).
  template <bool kAppend>
  internal::Fit Convert(internal::Node* node, simdjson::dom::element value);
  template <bool kAppend>
  internal::Fit ConvertStruct(internal::Node* node, simdjson::dom::object object);
  // A struct field's value: a list (array, map) that fails is NULL, and the
  // struct is then partial.
  template <bool kAppend>
  internal::Fit ConvertField(internal::Node* child, simdjson::dom::element value);
  template <bool kAppend>
  internal::Fit ConvertArray(internal::Node* node, simdjson::dom::array array);
  template <bool kAppend>
  internal::Fit ConvertMap(internal::Node* node, simdjson::dom::object object);
  // A string value as Spark's UTF8String.fromString gives it: stand-ins of
  // unpaired surrogates (jackson_internal.h) become '?'.
  void AppendText(columnar::ColumnBuilder* builder, std::string_view text) {
    if (!row_lone_surrogates) {
      builder->AppendString(text);
    } else {
      AppendTextWithStandIns(builder, text);
    }
  }
  void AppendTextWithStandIns(columnar::ColumnBuilder* builder, std::string_view text);

  // The converters of DATE, TIMESTAMP and TIMESTAMP_NTZ strings (non-empty):
  // false when the text does not fit (and flags upgrade_error when Spark
  // fails the query on it).
  bool ReadTimestamp(std::string_view s, int64_t* out);
  bool ReadTimestampNtz(std::string_view s, int64_t* out);
  bool ReadDate(std::string_view s, int32_t* out);
  // Spark's CAST-rule readings (the defaults and the fallbacks).
  bool DefaultTimestamp(std::string_view s, int64_t* out) const;
  static bool DefaultDate(std::string_view s, int32_t* out);
  // Spark 2's parser reading `s` to a UTC timestamp (policy LEGACY).
  bool LegacyTimestamp(const internal::LegacyDateParser& parser, std::string_view s,
                       int64_t* out) const;
  int64_t LocalToUtc(int64_t local_micros) const {
    return local_to_utc ? local_to_utc(local_micros) : local_micros - zone_offset_micros;
  }
  // Under policy EXCEPTION, whether Spark 2's `parser` reads `s`; if so the
  // call fails (the first such text is kept for the error).
  void CheckUpgrade(const std::optional<internal::LegacyDateParser>& parser, std::string_view s);
  // Compiles Spark 2's parsers the options need. NotSupported under LEGACY
  // for a pattern whose fields silt does not resolve.
  Status SetDateTime(const JsonDateTimeOptions& options);

  bool AsInt64(simdjson::dom::element value, internal::ValueKind kind, int64_t* out) const;
  bool AsDouble(simdjson::dom::element value, internal::ValueKind kind, double* out) const;
  bool AsDecimal(simdjson::dom::element value, internal::ValueKind kind, int precision, int scale,
                 __int128* out);
  void AppendAsString(columnar::ColumnBuilder* builder, simdjson::dom::element value,
                      internal::ValueKind kind);
};

}  // namespace silt::json
