#include "silt/json/json_decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/json/dom_internal.h"
#include "silt/json/flat_object_internal.h"
#include "silt/json/jackson_internal.h"
#include "silt/json/legacy_date_parser_internal.h"
#include "silt/json/text_parse_internal.h"

namespace silt::json {

namespace {

namespace dom = simdjson::dom;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::Field;
using columnar::TypeId;
using columnar::TypePtr;
using internal::ValueKind;

bool IsJsonBlank(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

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
  explicit FieldLookup(const std::vector<Field>& fields) {
    for (const Field& field : fields) names_.push_back(field.name);
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
  TypeId id = TypeId::kNull;
  int precision = 0;
  int scale = 0;
  // Struct: one per field. Array: the element. Map: the value.
  std::vector<std::unique_ptr<Node>> children;
  // Struct only: name lookup, and per object the last member of each field
  // and how often the field occurs (0, 1, or 2 for more than once).
  std::unique_ptr<FieldLookup> lookup;
  std::vector<dom::element> slot_value;
  std::vector<uint8_t> slot_count;
  // Bound at the start of each batch.
  ColumnBuilder* builder = nullptr;
  ColumnBuilder* map_entries = nullptr;
  ColumnBuilder* map_keys = nullptr;
};

TypePtr MakeNullable(const TypePtr& type) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields;
      fields.reserve(type->fields().size());
      for (const Field& field : type->fields()) {
        Field copy = field;
        copy.type = MakeNullable(field.type);
        copy.nullable = true;
        fields.push_back(std::move(copy));
      }
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kArray: return DataType::Array(MakeNullable(type->element_type()), true);
    case TypeId::kMap:
      return DataType::Map(type->key_type(), MakeNullable(type->value_type()), true);
    default: return type;
  }
}

Result<std::unique_ptr<Node>> BuildNode(const TypePtr& type, const std::string& path) {
  auto node = std::make_unique<Node>();
  node->id = type->id();
  node->precision = type->precision();
  node->scale = type->scale();
  switch (type->id()) {
    case TypeId::kStruct: {
      for (const Field& field : type->fields()) {
        std::string child_path = path.empty() ? field.name : path + "." + field.name;
        SILT_ASSIGN_OR_RETURN(auto child, BuildNode(field.type, child_path));
        node->children.push_back(std::move(child));
      }
      node->lookup = std::make_unique<FieldLookup>(type->fields());
      node->slot_value.resize(type->fields().size());
      node->slot_count.resize(type->fields().size());
      break;
    }
    case TypeId::kArray: {
      SILT_ASSIGN_OR_RETURN(auto child, BuildNode(type->element_type(), path + "[]"));
      node->children.push_back(std::move(child));
      break;
    }
    case TypeId::kMap: {
      if (type->key_type()->id() != TypeId::kString) {
        return Status::NotSupported("JSON decoding of map keys of type ", type->key_type()->ToDdl(),
                                    " (field '", path, "' is ", type->ToDdl(),
                                    "; JSON object keys decode to STRING keys only)");
      }
      SILT_ASSIGN_OR_RETURN(auto child, BuildNode(type->value_type(), path + "{}"));
      node->children.push_back(std::move(child));
      break;
    }
    case TypeId::kVariant:
      return Status::NotSupported("JSON decoding into VARIANT (field '", path,
                                  "'); read the text as STRING and use parse_json");
    default: break;
  }
  return node;
}

void BindBuilders(Node* node, ColumnBuilder* builder) {
  node->builder = builder;
  switch (node->id) {
    case TypeId::kStruct:
      for (size_t i = 0; i < node->children.size(); ++i) {
        BindBuilders(node->children[i].get(), builder->child(static_cast<int>(i)));
      }
      break;
    case TypeId::kArray: BindBuilders(node->children[0].get(), builder->child(0)); break;
    case TypeId::kMap:
      node->map_entries = builder->child(0);
      node->map_keys = node->map_entries->child(0);
      BindBuilders(node->children[0].get(), node->map_entries->child(1));
      break;
    default: break;
  }
}

// Java's (float) of a double: round to nearest, overflow to infinity.
// Casting an out-of-range double to float is undefined in C++, so clamp.
float DoubleToFloat(double d) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  constexpr double kHalfUlp = 0x1p103;  // half an ulp of FLT_MAX
  if (std::isfinite(d) && std::fabs(d) > kFloatMax) {
    if (std::fabs(d) < kFloatMax + kHalfUlp) {
      return d > 0 ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
    }
    return d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  }
  return static_cast<float>(d);
}

// Spark's FloatType/DoubleType accepted strings (with allowNonNumericNumbers).
bool SpecialDouble(std::string_view s, double* out) {
  if (s == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "Infinity" || s == "+Infinity" || s == "+INF") {
    *out = std::numeric_limits<double>::infinity();
  } else if (s == "-Infinity" || s == "-INF") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

constexpr int64_t kMicrosPerHour = 3600 * columnar::kMicrosPerSecond;

// Spark's cleanLegacyTimestampStr: "GMT" removed wherever it occurs.
std::string_view WithoutGmt(std::string_view s, std::string* scratch) {
  if (s.find("GMT") == std::string_view::npos) return s;
  scratch->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "GMT") == 0) {
      i += 2;
      continue;
    }
    scratch->push_back(s[i]);
  }
  return *scratch;
}

// How a value fits its type.
enum class Fit : uint8_t { kOk, kPartial, kFail };
Fit Worse(Fit a, Fit b) { return a > b ? a : b; }

bool IsList(TypeId id) { return id == TypeId::kArray || id == TypeId::kMap; }

// What a row gave: a clean row, a bad record (malformed, or a field that
// does not fit: its text goes to the corrupt-record output), or a NULL row
// (no JSON value at all).
// kSplit: a text split into split_rows rows (split_top_level_arrays),
// split_bad telling whether they are bad.
enum class RowResult : uint8_t { kClean, kBad, kNull, kSplit };

internal::JacksonFeatures FeaturesFor(const JsonParseOptions& options) {
  internal::JacksonFeatures f;
  f.allow_comments = options.allow_comments;
  f.allow_unquoted_field_names = options.allow_unquoted_field_names;
  f.allow_single_quotes = options.allow_single_quotes;
  f.allow_leading_zeros = options.allow_numeric_leading_zeros;
  f.allow_non_numeric_numbers = options.allow_non_numeric_numbers;
  f.allow_backslash_escaping_any = options.allow_backslash_escaping_any_character;
  f.allow_unquoted_control_chars = options.allow_unquoted_control_chars;
  return f;
}

}  // namespace

struct JsonDecoder::Impl {
  TypePtr output_type;
  std::unique_ptr<Node> root;
  std::unique_ptr<ColumnBuilder> root_builder;
  std::unique_ptr<ColumnBuilder> corrupt_builder;
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
  std::vector<int> flat_member;               // per field: its member in scanner, or -1
  std::vector<ColumnBuilder*> flat_builders;  // per field, bound per batch

  template <typename RowText>
  Result<ColumnPtr> Decode(int64_t num_rows, const RowText& row_text, ColumnPtr* corrupt_record,
                           DecodeStats* stats, std::vector<int64_t>* source_rows);
  RowResult DecodeArrayRows(dom::element doc, DecodeStats* stats);
  RowResult DecodeRow(std::string_view text, DecodeStats* stats);
  RowResult DecodeObject(dom::element doc, bool bad, DecodeStats* stats);
  RowResult DecodeValue(dom::element doc, bool bad, DecodeStats* stats);
  RowResult AllNullRow(DecodeStats* stats);
  RowResult DecodeMalformed(DecodeStats* stats);
  // The row scanner.members() describe, when every member of a schema field
  // is a string or null and no field occurs twice: appended as the DOM path
  // appends it (true). False, with nothing appended, otherwise.
  bool DecodeFlat();
  // Spark's converter for `node` over the lexer's tokens, from its current
  // token: appends the value it produces to *out as strict JSON (a struct's
  // fields that failed left out) and returns kPartial when some struct
  // inside lost a field; throws JacksonError where Spark's converter throws
  // (a syntax error, or a value that does not fit).
  Fit Emulate(Node* node, internal::JacksonLexer* lexer, std::string* out);
  void AppendValueJson(std::string_view span, std::string* out);
  void FillSlots(Node* node, dom::object object);
  // For a field occurring more than once in `object`: the occurrence Spark's
  // row keeps (the last one that is JSON null or fits; *none when none
  // does) and whether any occurrence did not fit.
  dom::element ChooseOccurrence(Node* node, size_t field_idx, dom::object object, bool* none,
                                Fit* result);

  // Converts non-null `value` to `node`'s type. kAppend=false only checks
  // how it fits (so a list whose element does not fit can be nulled as a
  // whole before anything is appended); kAppend=true appends the value, or a
  // null where it does not fit, keeping every builder aligned. kPartial: a
  // struct somewhere inside has a field that does not fit (kept as NULL).
  template <bool kAppend>
  Fit Convert(Node* node, dom::element value);
  template <bool kAppend>
  Fit ConvertStruct(Node* node, dom::object object);
  // A struct field's value: a list (array, map) that fails is NULL, and the
  // struct is then partial.
  template <bool kAppend>
  Fit ConvertField(Node* child, dom::element value);
  template <bool kAppend>
  Fit ConvertArray(Node* node, dom::array array);
  template <bool kAppend>
  Fit ConvertMap(Node* node, dom::object object);
  // A string value as Spark's UTF8String.fromString gives it: stand-ins of
  // unpaired surrogates (jackson_internal.h) become '?'.
  void AppendText(ColumnBuilder* builder, std::string_view text) {
    if (!row_lone_surrogates) {
      builder->AppendString(text);
    } else {
      AppendTextWithStandIns(builder, text);
    }
  }
  void AppendTextWithStandIns(ColumnBuilder* builder, std::string_view text);

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

  bool AsInt64(dom::element value, ValueKind kind, int64_t* out) const;
  bool AsDouble(dom::element value, ValueKind kind, double* out) const;
  bool AsDecimal(dom::element value, ValueKind kind, int precision, int scale, __int128* out);
  void AppendAsString(ColumnBuilder* builder, dom::element value, ValueKind kind);
};

template <typename RowText>
Result<ColumnPtr> JsonDecoder::Impl::Decode(int64_t num_rows, const RowText& row_text,
                                            ColumnPtr* corrupt_record, DecodeStats* stats,
                                            std::vector<int64_t>* source_rows) {
  if (source_rows != nullptr) source_rows->clear();
  BindBuilders(root.get(), root_builder.get());
  flat_builders.clear();
  for (const std::unique_ptr<Node>& child : root->children) flat_builders.push_back(child->builder);
  root_builder->Reserve(num_rows);
  const bool want_corrupt = corrupt_record != nullptr;
  if (want_corrupt) corrupt_builder->Reserve(num_rows);
  DecodeStats local;
  for (int64_t row_idx = 0; row_idx < num_rows; ++row_idx) {
    std::string_view text;
    RowResult result = RowResult::kNull;
    if (row_text(row_idx, &text) && !IsJsonBlank(text)) result = DecodeRow(text, &local);
    if (upgrade_error) {
      upgrade_error = false;
      root_builder->Finish();
      if (want_corrupt) corrupt_builder->Finish();
      return Status::InvalidArgument(
          "INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER: cannot read '",
          upgrade_text, "' (row ", row_idx, ") with the pattern '", upgrade_pattern,
          "', which Spark's parser before 3.0 would read, so Spark 3.5 fails here (set "
          "spark.sql.legacy.timeParserPolicy to CORRECTED to read it as NULL, or fix the "
          "pattern)");
    }
    if (result == RowResult::kSplit) {
      for (int64_t k = 0; k < split_rows; ++k) {
        if (want_corrupt) {
          if (split_bad) {
            corrupt_builder->AppendString(text);
          } else {
            corrupt_builder->AppendNull();
          }
        }
        source_rows->push_back(row_idx);
      }
      continue;
    }
    // Spark's file reader gives no row for a line without a JSON value
    // (e.g. only a comment).
    if (result == RowResult::kNull && file_reader) continue;
    if (source_rows != nullptr) source_rows->push_back(row_idx);
    if (result == RowResult::kNull) root_builder->AppendNull();
    if (want_corrupt) {
      if (result == RowResult::kBad) {
        corrupt_builder->AppendString(text);
      } else {
        corrupt_builder->AppendNull();
      }
    }
  }
  ColumnPtr out = root_builder->Finish();
  if (want_corrupt) *corrupt_record = corrupt_builder->Finish();
  if (stats != nullptr) {
    stats->malformed_rows += local.malformed_rows;
    stats->mismatched_fields += local.mismatched_fields;
    stats->partial_rows += local.partial_rows;
  }
  return out;
}

RowResult JsonDecoder::Impl::DecodeRow(std::string_view text, DecodeStats* stats) {
  // Jackson's byte parser (the file reader) skips a UTF-8 byte-order mark.
  if (file_reader && text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    text.remove_prefix(3);
  }
  if (flat_strings && scanner.Scan(text) && DecodeFlat()) return RowResult::kClean;
  dom::element doc;
  internal::ParseOutcome outcome = reader.Parse(text, &doc);
  if (file_reader && reader.replaced_invalid_utf8()) {
    // Jackson's byte parser instead of U+FFFD: rewritten so that the lexer
    // reads, and fails, where it does.
    internal::RewriteLaxUtf8(text, &lax_text);
    outcome = reader.Parse(lax_text, &doc);
  }
  row_lone_surrogates = reader.has_lone_surrogates();
  switch (outcome) {
    case internal::ParseOutcome::kEmpty: return RowResult::kNull;
    case internal::ParseOutcome::kMalformed: return DecodeMalformed(stats);
    case internal::ParseOutcome::kValue: break;
  }
  markers = reader.has_markers();
  if (value_root) return DecodeValue(doc, false, stats);
  if (file_reader && doc.type() == dom::element_type::ARRAY) return DecodeArrayRows(doc, stats);
  return DecodeObject(doc, false, stats);
}

bool JsonDecoder::Impl::DecodeFlat() {
  // Raw pointers: the appends below store bytes, which would otherwise make
  // the compiler reload every vector's data after each one.
  const internal::FlatMember* const members = scanner.members().data();
  const size_t num_members = scanner.members().size();
  int* const slots = flat_member.data();
  const FieldLookup& lookup = *root->lookup;
  // flat_member is all -1 between rows: the loop below resets what it used.
  for (size_t member_idx = 0; member_idx < num_members; ++member_idx) {
    const internal::FlatMember& member = members[member_idx];
    const int field_idx = lookup.Find(member.key, member_idx);
    if (field_idx < 0) continue;
    // Other values are re-printed as text, and a repeated field has Spark's
    // occurrence rules: both left to the DOM path.
    int& slot = slots[field_idx];
    if ((member.kind != internal::FlatKind::kString && member.kind != internal::FlatKind::kNull) ||
        slot >= 0) {
      std::fill(flat_member.begin(), flat_member.end(), -1);
      return false;
    }
    slot = static_cast<int>(member_idx);
  }
  row_lone_surrogates = false;
  markers = false;
  ColumnBuilder* const* const builders = flat_builders.data();
  const size_t num_fields = flat_builders.size();
  for (size_t field_idx = 0; field_idx < num_fields; ++field_idx) {
    ColumnBuilder* builder = builders[field_idx];
    const int slot = slots[field_idx];
    slots[field_idx] = -1;
    if (slot < 0 || members[slot].kind == internal::FlatKind::kNull) {
      builder->AppendNull();
    } else {
      builder->AppendString(members[slot].text);
    }
  }
  root_builder->AppendValid();
  return true;
}

RowResult JsonDecoder::Impl::DecodeArrayRows(dom::element doc, DecodeStats* stats) {
  // Spark converts each element with the row's struct converter; one that
  // is not an object fails the whole text (no partial rows).
  dom::array array = doc.get_array().value_unsafe();
  for (dom::element element : array) {
    if (element.type() != dom::element_type::OBJECT) return AllNullRow(stats);
  }
  split_rows = 0;
  split_bad = false;
  for (dom::element element : array) {
    split_bad |= DecodeObject(element, false, stats) == RowResult::kBad;
    ++split_rows;
  }
  return RowResult::kSplit;
}

RowResult JsonDecoder::Impl::AllNullRow(DecodeStats* stats) {
  // Spark's BadRecordException in PERMISSIVE mode: a row of nulls.
  for (auto& child : root->children) child->builder->AppendNull();
  root_builder->AppendValid();
  ++stats->malformed_rows;
  return RowResult::kBad;
}

RowResult JsonDecoder::Impl::DecodeValue(dom::element doc, bool bad, DecodeStats* stats) {
  Node* child = root->children[0].get();
  if (doc.is_null()) return AllNullRow(stats);
  Fit fit = Fit::kOk;
  field_misfits = 0;
  if (child->id == TypeId::kArray && child->children[0]->id == TypeId::kStruct &&
      doc.type() == dom::element_type::OBJECT) {
    // One object for an array of structs: a one-element array.
    fit = ConvertStruct<true>(child->children[0].get(), doc.get_object().value_unsafe());
    child->builder->CloseList();
  } else {
    fit = Convert<false>(child, doc);
    if (fit == Fit::kFail) return AllNullRow(stats);
    Convert<true>(child, doc);
  }
  root_builder->AppendValid();
  if (fit == Fit::kOk && !bad) return RowResult::kClean;
  stats->mismatched_fields += field_misfits;
  ++stats->partial_rows;
  return RowResult::kBad;
}

RowResult JsonDecoder::Impl::DecodeObject(dom::element doc, bool bad, DecodeStats* stats) {
  if (doc.type() != dom::element_type::OBJECT) return AllNullRow(stats);
  field_misfits = 0;
  const Fit fit = ConvertStruct<true>(root.get(), doc.get_object().value_unsafe());
  if (fit == Fit::kOk && !bad) return RowResult::kClean;
  stats->mismatched_fields += field_misfits;
  ++stats->partial_rows;
  return RowResult::kBad;
}

dom::element JsonDecoder::Impl::ChooseOccurrence(Node* node, size_t field_idx, dom::object object,
                                                 bool* none, Fit* result) {
  // Spark converts each occurrence into the row in turn: one that does not
  // fit leaves the previous value (and makes the record bad).
  Node* child = node->children[field_idx].get();
  dom::element chosen;
  *none = true;
  for (dom::key_value_pair member : object) {
    if (node->lookup->Find(member.key) != static_cast<int>(field_idx)) continue;
    const Fit fit = member.value.is_null() ? Fit::kOk : Convert<false>(child, member.value);
    if (fit == Fit::kFail) {
      *result = Fit::kPartial;
      continue;
    }
    if (fit == Fit::kPartial) *result = Fit::kPartial;
    chosen = member.value;
    *none = false;
  }
  return chosen;
}

void JsonDecoder::Impl::FillSlots(Node* node, dom::object object) {
  std::fill(node->slot_count.begin(), node->slot_count.end(), 0);
  for (dom::key_value_pair member : object) {
    const int idx = node->lookup->Find(member.key);
    if (idx < 0) continue;
    uint8_t& count = node->slot_count[static_cast<size_t>(idx)];
    if (count < 2) ++count;
    node->slot_value[static_cast<size_t>(idx)] = member.value;
  }
}

void JsonDecoder::Impl::AppendValueJson(std::string_view span, std::string* out) {
  // The span was read whole without an error: it is one value.
  bool has_markers = false;
  span_lexer.Reset(span);
  span_lexer.NextToken();
  internal::AppendNormalizedValue(&span_lexer, out, &has_markers);
  markers |= has_markers;
  row_lone_surrogates |= span_lexer.saw_lone_surrogates();
}

Fit JsonDecoder::Impl::Emulate(Node* node, internal::JacksonLexer* lexer, std::string* out) {
  using internal::JToken;
  JToken t = lexer->current();
  while (t == JToken::kFieldName) t = lexer->NextToken();
  if (t == JToken::kNone || t == JToken::kNull) {
    out->append("null");
    return Fit::kOk;
  }
  const auto fail = []() { throw internal::JacksonError{"value does not fit the schema"}; };
  switch (node->id) {
    case TypeId::kNull: out->append("null"); return Fit::kOk;
    case TypeId::kStruct: {
      // convertObject: a field whose converter throws is caught (NULL, the
      // record is bad); errors between fields, or while skipping after a
      // failed field, propagate.
      if (t != JToken::kStartObject) fail();
      out->push_back('{');
      Fit result = Fit::kOk;
      bool first = true;
      while (true) {
        t = lexer->NextToken();
        if (t == JToken::kNone || t == JToken::kEndObject) break;
        std::string_view name;
        const int idx = lexer->CurrentName(&name) ? node->lookup->Find(name) : -1;
        if (idx < 0) {
          lexer->SkipChildren();
          continue;
        }
        const size_t mark = out->size();
        if (!first) out->push_back(',');
        out->push_back('"');
        AppendJsonEscaped(out, node->lookup->name(idx));
        out->append("\":");
        try {
          result =
              Worse(result, Emulate(node->children[static_cast<size_t>(idx)].get(), lexer, out));
          first = false;
        } catch (const internal::JacksonError&) {
          out->resize(mark);
          result = Fit::kPartial;
          lexer->SkipChildren();
        }
      }
      out->push_back('}');
      return result;
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      // convertArray / convertMap: an element's partial struct is kept, any
      // other failure fails the whole list.
      const bool is_map = node->id == TypeId::kMap;
      if (t != (is_map ? JToken::kStartObject : JToken::kStartArray)) fail();
      out->push_back(is_map ? '{' : '[');
      Fit result = Fit::kOk;
      bool first = true;
      while (true) {
        t = lexer->NextToken();
        if (t == JToken::kNone || t == (is_map ? JToken::kEndObject : JToken::kEndArray)) break;
        if (!first) out->push_back(',');
        first = false;
        if (is_map) {
          std::string_view key;
          if (!lexer->CurrentName(&key)) key = {};
          out->push_back('"');
          AppendJsonEscaped(out, key);
          out->append("\":");
        }
        result = Worse(result, Emulate(node->children[0].get(), lexer, out));
      }
      out->push_back(is_map ? '}' : ']');
      return result;
    }
    case TypeId::kString:
      // Any token but an end marker is text (a structure is copied whole).
      if (t == JToken::kString) {
        out->push_back('"');
        AppendJsonEscaped(out, lexer->StringValue());
        out->push_back('"');
      } else if (t == JToken::kStartObject || t == JToken::kStartArray) {
        const size_t start = lexer->token_start();
        lexer->SkipChildren();
        AppendValueJson(lexer_input.substr(start, lexer->position() - start), out);
      } else if (t == JToken::kEndObject || t == JToken::kEndArray) {
        fail();
      } else {
        bool has_markers = false;
        internal::AppendNormalizedValue(lexer, out, &has_markers);
        markers |= has_markers;
      }
      return Fit::kOk;
    default: break;
  }
  // A scalar: decide as the DOM conversion does, over the token alone.
  value_json.clear();
  bool has_markers = false;
  switch (t) {
    case JToken::kString:
      // Spark's converters read the text even to fail (its error message
      // quotes it), so a bad string fails here either way.
      value_json.push_back('"');
      AppendJsonEscaped(&value_json, lexer->StringValue());
      value_json.push_back('"');
      break;
    case JToken::kInt:
    case JToken::kFloat:
    case JToken::kTrue:
    case JToken::kFalse: internal::AppendNormalizedValue(lexer, &value_json, &has_markers); break;
    default: fail();
  }
  dom::element value;
  if (!side_reader.ParseNormalized(value_json, has_markers, &value)) fail();
  const bool saved = markers;
  markers = has_markers;
  const Fit fit = Convert<false>(node, value);
  markers = saved || has_markers;
  if (fit != Fit::kOk) fail();
  out->append(value_json);
  return Fit::kOk;
}

RowResult JsonDecoder::Impl::DecodeMalformed(DecodeStats* stats) {
  // Spark's converters over Jackson's tokens (Emulate): what they produce
  // before a record is given up (the fields converted, the partial structs)
  // is written out as strict JSON and decoded as a clean document would be,
  // as a bad record. An error no converter catches loses the whole row.
  using internal::JToken;
  lexer_input = reader.jackson_input();
  internal::JacksonLexer* lexer = reader.lexer();
  markers = false;
  partial_json.clear();
  try {
    lexer->Reset(lexer_input);
    const JToken t = lexer->NextToken();
    if (!value_root) {
      if (t != JToken::kStartObject) return AllNullRow(stats);
      Emulate(root.get(), lexer, &partial_json);
    } else {
      Node* child = root->children[0].get();
      if (t == JToken::kNone || t == JToken::kNull) return AllNullRow(stats);
      if (child->id == TypeId::kArray && child->children[0]->id == TypeId::kStruct &&
          t == JToken::kStartObject) {
        partial_json.push_back('[');
        Emulate(child->children[0].get(), lexer, &partial_json);
        partial_json.push_back(']');
      } else {
        Emulate(child, lexer, &partial_json);
      }
    }
  } catch (const internal::JacksonError&) {
    return AllNullRow(stats);
  }
  row_lone_surrogates |= lexer->saw_lone_surrogates();
  dom::element doc;
  if (!side_reader.ParseNormalized(partial_json, markers, &doc)) return AllNullRow(stats);
  // Whatever was read, the record is bad: Jackson failed on it.
  return value_root ? DecodeValue(doc, true, stats) : DecodeObject(doc, true, stats);
}

bool JsonDecoder::Impl::AsInt64(dom::element value, ValueKind kind, int64_t* out) const {
  // Jackson's getLongValue/getIntValue: integral tokens only; anything beyond
  // int64 (uint64 range, big integers) overflows.
  if (kind != ValueKind::kInt64) return false;
  *out = value.get_int64().value_unsafe();
  return true;
}

bool JsonDecoder::Impl::AsDouble(dom::element value, ValueKind kind, double* out) const {
  switch (kind) {
    case ValueKind::kInt64:
      *out = static_cast<double>(value.get_int64().value_unsafe());
      return true;
    case ValueKind::kUint64:
      *out = static_cast<double>(value.get_uint64().value_unsafe());
      return true;
    case ValueKind::kDouble: *out = value.get_double().value_unsafe(); return true;
    case ValueKind::kBigNumber:
      *out = internal::TextToDouble(internal::BigNumberText(value));
      return true;
    case ValueKind::kString:
      return allow_non_numeric && SpecialDouble(internal::StringOf(value), out);
    default: return false;
  }
}

bool JsonDecoder::Impl::AsDecimal(dom::element value, ValueKind kind, int precision, int scale,
                                  __int128* out) {
  char buf[64];
  switch (kind) {
    case ValueKind::kInt64: {
      auto res = std::to_chars(buf, buf + sizeof(buf), value.get_int64().value_unsafe());
      return internal::ParseDecimalText(std::string_view(buf, static_cast<size_t>(res.ptr - buf)),
                                        precision, scale, out);
    }
    case ValueKind::kUint64: {
      auto res = std::to_chars(buf, buf + sizeof(buf), value.get_uint64().value_unsafe());
      return internal::ParseDecimalText(std::string_view(buf, static_cast<size_t>(res.ptr - buf)),
                                        precision, scale, out);
    }
    case ValueKind::kDouble: {
      // The shortest text that round-trips is the JSON text for every number
      // with up to 15 significant digits, so rounding sees the written value.
      auto res = std::to_chars(buf, buf + sizeof(buf), value.get_double().value_unsafe());
      return internal::ParseDecimalText(std::string_view(buf, static_cast<size_t>(res.ptr - buf)),
                                        precision, scale, out);
    }
    case ValueKind::kBigNumber:
      return internal::ParseDecimalText(internal::BigNumberText(value), precision, scale, out);
    case ValueKind::kString: {
      // Spark's en-US decimal parser drops grouping commas first.
      std::string_view s = internal::StringOf(value);
      if (s.find(',') == std::string_view::npos) {
        return internal::ParseDecimalText(s, precision, scale, out);
      }
      scratch.clear();
      for (char c : s) {
        if (c != ',') scratch.push_back(c);
      }
      return internal::ParseDecimalText(scratch, precision, scale, out);
    }
    default: return false;
  }
}

void JsonDecoder::Impl::AppendTextWithStandIns(ColumnBuilder* builder, std::string_view text) {
  scratch.clear();
  internal::AppendWithoutStandIns(text, &scratch);
  builder->AppendString(scratch);
}

void JsonDecoder::Impl::AppendAsString(ColumnBuilder* builder, dom::element value, ValueKind kind) {
  if (kind == ValueKind::kString) {
    AppendText(builder, internal::StringOf(value));
    return;
  }
  scratch.clear();
  gen.Reset(&scratch);
  gen.set_lone_surrogates(row_lone_surrogates);
  internal::CopyValue(value, markers, &gen);
  builder->AppendString(scratch);
}

Status JsonDecoder::Impl::SetDateTime(const JsonDateTimeOptions& options) {
  datetime = options;
  const bool legacy = options.policy == TimeParserPolicy::kLegacy;
  timestamp_fallback = options.parsing_fallback.value_or(legacy || !options.timestamp_format);
  date_fallback = options.parsing_fallback.value_or(legacy || !options.date_format);
  // Spark 2's patterns: the user's, else its defaults (for parsing under
  // LEGACY, for the check under EXCEPTION).
  auto pattern_of = [](const std::shared_ptr<const DateTimePattern>& p, std::string_view dflt) {
    return p != nullptr ? std::string(p->pattern()) : std::string(dflt);
  };
  const std::string ts_pattern = pattern_of(
      options.timestamp_format, legacy ? "yyyy-MM-dd'T'HH:mm:ss.SSSXXX" : "yyyy-MM-dd HH:mm:ss");
  const std::string date_pattern = pattern_of(options.date_format, "yyyy-MM-dd");
  legacy_timestamp = internal::LegacyDateParser::Compile(ts_pattern);
  legacy_date = internal::LegacyDateParser::Compile(date_pattern);
  if (options.timestamp_ntz_format != nullptr) {
    legacy_ntz = internal::LegacyDateParser::Compile(options.timestamp_ntz_format->pattern());
  }
  if (legacy) {
    internal::LegacyDateParser::Fields probe;
    for (const auto& [parser, pattern, key] :
         {std::tuple(&legacy_timestamp, &ts_pattern, "timestampFormat"),
          std::tuple(&legacy_date, &date_pattern, "dateFormat")}) {
      if (!parser->has_value() || !(*parser)->LocalMicros(probe).has_value()) {
        return Status::NotSupported(
            key, " '", *pattern,
            "' under spark.sql.legacy.timeParserPolicy LEGACY (silt's Spark 2 parser reads "
            "y M d H k K h m s S a X Z and literals)");
      }
    }
  }
  return Status::OK();
}

bool JsonDecoder::Impl::DefaultTimestamp(std::string_view s, int64_t* out) const {
  std::optional<int64_t> micros = columnar::ParseTimestamp(s, zone_offset_micros);
  if (!micros.has_value()) return false;
  if (local_to_utc) {
    // Zone-less text moves with the default offset; text with a zone does
    // not.
    std::optional<int64_t> shifted = columnar::ParseTimestamp(s, zone_offset_micros + 1);
    if (shifted && *shifted == *micros - 1) micros = local_to_utc(*micros + zone_offset_micros);
  }
  *out = *micros;
  return true;
}

bool JsonDecoder::Impl::DefaultDate(std::string_view s, int32_t* out) {
  std::optional<int32_t> days = columnar::ParseDate(s);
  if (!days.has_value()) return false;
  *out = *days;
  return true;
}

bool JsonDecoder::Impl::LegacyTimestamp(const internal::LegacyDateParser& parser,
                                        std::string_view s, int64_t* out) const {
  internal::LegacyDateParser::Fields fields;
  if (!parser.Parse(s, &fields)) return false;
  std::optional<int64_t> local = parser.LocalMicros(fields);
  if (!local.has_value()) return false;
  *out = fields.has_offset ? *local - fields.offset_seconds * columnar::kMicrosPerSecond
                           : LocalToUtc(*local);
  return true;
}

void JsonDecoder::Impl::CheckUpgrade(const std::optional<internal::LegacyDateParser>& parser,
                                     std::string_view s) {
  if (upgrade_error || datetime.policy != TimeParserPolicy::kException || !parser.has_value()) {
    return;
  }
  internal::LegacyDateParser::Fields fields;
  if (!parser->Parse(s, &fields)) return;
  upgrade_error = true;
  upgrade_text = std::string(s);
  upgrade_pattern = parser->pattern();
}

bool JsonDecoder::Impl::ReadTimestamp(std::string_view s, int64_t* out) {
  bool ok = false;
  if (datetime.policy == TimeParserPolicy::kLegacy) {
    ok = LegacyTimestamp(*legacy_timestamp, s, out);
  } else if (datetime.timestamp_format == nullptr) {
    ok = DefaultTimestamp(s, out);
  } else {
    bool has_offset = false;
    int64_t offset_seconds = 0;
    ok = datetime.timestamp_format->Parse(s, out, &has_offset, &offset_seconds);
    if (ok) {
      *out = has_offset ? *out - offset_seconds * columnar::kMicrosPerSecond : LocalToUtc(*out);
    }
  }
  if (ok) return true;
  // Spark raises the upgrade error from the formatter, then its fallback
  // may still read the text; the error stands only when it does not.
  const bool was_flagged = upgrade_error;
  CheckUpgrade(legacy_timestamp, s);
  if (timestamp_fallback && DefaultTimestamp(WithoutGmt(s, &gmt_scratch), out)) {
    if (!was_flagged) upgrade_error = false;
    return true;
  }
  return false;
}

bool JsonDecoder::Impl::ReadDate(std::string_view s, int32_t* out) {
  bool ok = false;
  if (datetime.policy == TimeParserPolicy::kLegacy) {
    int64_t micros = 0;
    internal::LegacyDateParser::Fields fields;
    if (legacy_date->Parse(s, &fields)) {
      std::optional<int64_t> local = legacy_date->LocalMicros(fields);
      if (local.has_value()) {
        micros = *local;
        ok = true;
      }
    }
    if (ok) *out = columnar::DaysFromMicros(micros);
  } else if (datetime.date_format == nullptr) {
    ok = DefaultDate(s, out);
  } else {
    // The local date as written, whatever offset the text names.
    int64_t micros = 0;
    bool has_offset = false;
    int64_t offset_seconds = 0;
    ok = datetime.date_format->Parse(s, &micros, &has_offset, &offset_seconds);
    if (ok) *out = columnar::DaysFromMicros(micros);
  }
  if (ok) return true;
  const bool was_flagged = upgrade_error;
  CheckUpgrade(legacy_date, s);
  if (date_fallback &&
      (DefaultDate(WithoutGmt(s, &gmt_scratch), out) || internal::ParseJavaInt(s, out))) {
    if (!was_flagged) upgrade_error = false;
    return true;
  }
  return false;
}

bool JsonDecoder::Impl::ReadTimestampNtz(std::string_view s, int64_t* out) {
  if (datetime.timestamp_ntz_format != nullptr) {
    bool has_offset = false;
    int64_t offset_seconds = 0;
    if (datetime.timestamp_ntz_format->Parse(s, out, &has_offset, &offset_seconds) && !has_offset) {
      return true;
    }
    CheckUpgrade(legacy_ntz, s);
    return false;
  }
  std::optional<int64_t> micros = columnar::ParseTimestamp(s, 0);
  if (!micros.has_value()) return false;
  // A text that names its zone reads the same under any default zone;
  // Spark rejects those for TIMESTAMP_NTZ.
  std::optional<int64_t> shifted = columnar::ParseTimestamp(s, kMicrosPerHour);
  if (shifted.has_value() && *shifted == *micros) return false;
  *out = *micros;
  return true;
}

template <bool kAppend>
Fit JsonDecoder::Impl::Convert(Node* node, dom::element value) {
  const ValueKind kind = internal::KindOf(value, markers);
  ColumnBuilder* builder = node->builder;
  auto fail = [builder]() {
    if constexpr (kAppend) builder->AppendNull();
    return Fit::kFail;
  };
  switch (node->id) {
    case TypeId::kNull:
      if constexpr (kAppend) builder->AppendNull();
      return Fit::kOk;
    case TypeId::kBoolean:
      if (kind != ValueKind::kBool) return fail();
      if constexpr (kAppend) builder->AppendBool(value.get_bool().value_unsafe());
      return Fit::kOk;
    case TypeId::kByte: {
      // Jackson's getByteValue accepts [-128, 255] and narrows.
      int64_t v = 0;
      if (!AsInt64(value, kind, &v) || v < -128 || v > 255) return fail();
      if constexpr (kAppend) builder->Append<int8_t>(static_cast<int8_t>(static_cast<uint8_t>(v)));
      return Fit::kOk;
    }
    case TypeId::kShort: {
      int64_t v = 0;
      if (!AsInt64(value, kind, &v) || v < INT16_MIN || v > INT16_MAX) return fail();
      if constexpr (kAppend) builder->Append<int16_t>(static_cast<int16_t>(v));
      return Fit::kOk;
    }
    case TypeId::kInt: {
      int64_t v = 0;
      if (!AsInt64(value, kind, &v) || v < INT32_MIN || v > INT32_MAX) return fail();
      if constexpr (kAppend) builder->Append<int32_t>(static_cast<int32_t>(v));
      return Fit::kOk;
    }
    case TypeId::kLong: {
      int64_t v = 0;
      if (!AsInt64(value, kind, &v)) return fail();
      if constexpr (kAppend) builder->Append<int64_t>(v);
      return Fit::kOk;
    }
    case TypeId::kFloat: {
      double v = 0;
      if (!AsDouble(value, kind, &v)) return fail();
      if constexpr (kAppend) builder->Append<float>(DoubleToFloat(v));
      return Fit::kOk;
    }
    case TypeId::kDouble: {
      double v = 0;
      if (!AsDouble(value, kind, &v)) return fail();
      if constexpr (kAppend) builder->Append<double>(v);
      return Fit::kOk;
    }
    case TypeId::kDecimal: {
      __int128 v = 0;
      if (!AsDecimal(value, kind, node->precision, node->scale, &v)) return fail();
      if constexpr (kAppend) builder->Append<__int128>(v);
      return Fit::kOk;
    }
    case TypeId::kString:
      if constexpr (kAppend) AppendAsString(builder, value, kind);
      return Fit::kOk;
    case TypeId::kBinary:
      if (kind != ValueKind::kString ||
          !internal::DecodeBase64(internal::StringOf(value), &scratch)) {
        return fail();
      }
      if constexpr (kAppend) builder->AppendString(scratch);
      return Fit::kOk;
    case TypeId::kDate: {
      if (kind != ValueKind::kString) return fail();
      std::string_view s = internal::StringOf(value);
      int32_t days = 0;
      if (s.empty() || !ReadDate(s, &days)) return fail();
      if constexpr (kAppend) builder->Append<int32_t>(days);
      return Fit::kOk;
    }
    case TypeId::kTimestamp: {
      if (kind == ValueKind::kInt64) {
        // Seconds since the epoch; Java's long multiply wraps on overflow.
        uint64_t seconds = static_cast<uint64_t>(value.get_int64().value_unsafe());
        int64_t micros = static_cast<int64_t>(seconds * static_cast<uint64_t>(1000000));
        if constexpr (kAppend) builder->Append<int64_t>(micros);
        return Fit::kOk;
      }
      if (kind != ValueKind::kString) return fail();
      std::string_view s = internal::StringOf(value);
      int64_t micros = 0;
      if (s.empty() || !ReadTimestamp(s, &micros)) return fail();
      if constexpr (kAppend) builder->Append<int64_t>(micros);
      return Fit::kOk;
    }
    case TypeId::kTimestampNtz: {
      if (kind != ValueKind::kString) return fail();
      std::string_view s = internal::StringOf(value);
      int64_t micros = 0;
      if (s.empty() || !ReadTimestampNtz(s, &micros)) return fail();
      if constexpr (kAppend) builder->Append<int64_t>(micros);
      return Fit::kOk;
    }
    case TypeId::kStruct:
      if (kind != ValueKind::kObject) return fail();
      return ConvertStruct<kAppend>(node, value.get_object().value_unsafe());
    case TypeId::kArray:
      if (kind != ValueKind::kArray) return fail();
      return ConvertArray<kAppend>(node, value.get_array().value_unsafe());
    case TypeId::kMap:
      if (kind != ValueKind::kObject) return fail();
      return ConvertMap<kAppend>(node, value.get_object().value_unsafe());
    case TypeId::kVariant: return fail();  // refused by BuildNode
  }
  return fail();
}

template <bool kAppend>
Fit JsonDecoder::Impl::ConvertStruct(Node* node, dom::object object) {
  // Spark 3.5 (spark.sql.json.enablePartialResults) keeps a struct whose
  // fields do not all fit: such a field is NULL and the record is bad.
  FillSlots(node, object);
  Fit result = Fit::kOk;
  for (size_t field_idx = 0; field_idx < node->children.size(); ++field_idx) {
    Node* child = node->children[field_idx].get();
    const uint8_t count = node->slot_count[field_idx];
    dom::element value = node->slot_value[field_idx];
    if (count > 1) {
      bool none = false;
      value = ChooseOccurrence(node, field_idx, object, &none, &result);
      if (none) {
        if constexpr (kAppend) child->builder->AppendNull();
        continue;
      }
    }
    if (count == 0 || value.is_null()) {
      if constexpr (kAppend) child->builder->AppendNull();
      continue;
    }
    result = Worse(result, ConvertField<kAppend>(child, value));
  }
  if constexpr (kAppend) node->builder->AppendValid();
  return result;
}

template <bool kAppend>
Fit JsonDecoder::Impl::ConvertField(Node* child, dom::element value) {
  Fit fit = Fit::kOk;
  if (IsList(child->id)) {
    // A list fails as a whole: find out before appending any element.
    fit = Convert<false>(child, value);
    if (fit == Fit::kFail) {
      if constexpr (kAppend) child->builder->AppendNull();
    } else if constexpr (kAppend) {
      Convert<true>(child, value);
    }
  } else {
    fit = Convert<kAppend>(child, value);
  }
  if (fit == Fit::kFail) {
    if constexpr (kAppend) ++field_misfits;
    return Fit::kPartial;
  }
  return fit;
}

template <bool kAppend>
Fit JsonDecoder::Impl::ConvertArray(Node* node, dom::array array) {
  Node* element_node = node->children[0].get();
  Fit result = Fit::kOk;
  for (dom::element element : array) {
    if (element.is_null()) {
      if constexpr (kAppend) element_node->builder->AppendNull();
      continue;
    }
    const Fit fit = Convert<kAppend>(element_node, element);
    if (fit == Fit::kFail && !kAppend) return Fit::kFail;
    result = Worse(result, fit);
  }
  if constexpr (kAppend) node->builder->CloseList();
  return result;
}

template <bool kAppend>
Fit JsonDecoder::Impl::ConvertMap(Node* node, dom::object object) {
  Node* value_node = node->children[0].get();
  Fit result = Fit::kOk;
  for (dom::key_value_pair member : object) {
    if constexpr (kAppend) AppendText(node->map_keys, member.key);
    if (member.value.is_null()) {
      if constexpr (kAppend) value_node->builder->AppendNull();
    } else {
      const Fit fit = Convert<kAppend>(value_node, member.value);
      if (fit == Fit::kFail && !kAppend) return Fit::kFail;
      result = Worse(result, fit);
    }
    if constexpr (kAppend) node->map_entries->AppendValid();
  }
  if constexpr (kAppend) node->builder->CloseList();
  return result;
}

JsonDecoder::JsonDecoder() : impl_(std::make_unique<Impl>()) {}
JsonDecoder::~JsonDecoder() = default;

Result<std::unique_ptr<JsonDecoder>> JsonDecoder::Make(columnar::SchemaPtr schema) {
  return Make(std::move(schema), JsonDecodeOptions());
}

Result<std::unique_ptr<JsonDecoder>> JsonDecoder::Make(columnar::SchemaPtr schema,
                                                       const JsonDecodeOptions& options) {
  if (schema == nullptr || schema->id() != TypeId::kStruct) {
    return Status::InvalidArgument("JSON decoder schema must be a STRUCT, got ",
                                   schema == nullptr ? std::string("null") : schema->ToDdl());
  }
  std::unique_ptr<JsonDecoder> decoder(new JsonDecoder());
  Impl& impl = *decoder->impl_;
  SILT_ASSIGN_OR_RETURN(impl.root, BuildNode(schema, ""));
  impl.output_type = MakeNullable(schema);
  impl.root_builder = std::make_unique<ColumnBuilder>(impl.output_type);
  impl.corrupt_builder = std::make_unique<ColumnBuilder>(DataType::String());
  impl.zone_offset_micros = options.default_zone_offset_micros;
  impl.local_to_utc = options.local_to_utc;
  impl.features = FeaturesFor(options.parse);
  impl.reader.set_features(impl.features);
  impl.side_reader.set_features(impl.features);
  internal::JacksonFeatures span_features = impl.features;
  span_features.max_nesting_depth = std::numeric_limits<int>::max();
  span_features.max_number_length = std::numeric_limits<int>::max();
  impl.span_lexer = internal::JacksonLexer(span_features);
  impl.allow_non_numeric = options.parse.allow_non_numeric_numbers;
  impl.value_root = options.value_root;
  impl.file_reader = options.file_reader && !options.value_root;
  if (impl.file_reader) {
    impl.features.byte_parser = true;
    impl.reader.set_features(impl.features);
    impl.side_reader.set_features(impl.features);
  }
  SILT_RETURN_NOT_OK(impl.SetDateTime(options.datetime));
  impl.flat_strings =
      !impl.value_root && !impl.file_reader &&
      std::all_of(impl.root->children.begin(), impl.root->children.end(),
                  [](const std::unique_ptr<Node>& child) { return child->id == TypeId::kString; });
  impl.flat_member.assign(impl.root->children.size(), -1);
  if (impl.value_root && schema->num_fields() != 1) {
    return Status::InvalidArgument("JSON decoder with value_root needs a schema of one field, got ",
                                   schema->ToDdl());
  }
  return decoder;
}

const columnar::TypePtr& JsonDecoder::output_type() const { return impl_->output_type; }

Result<ColumnPtr> JsonDecoder::DecodeColumn(const columnar::Column& input,
                                            ColumnPtr* corrupt_record, DecodeStats* stats) {
  if (input.type == nullptr ||
      (input.type->id() != TypeId::kString && input.type->id() != TypeId::kBinary)) {
    return Status::InvalidArgument(
        "JSON decoder input must be a STRING or BINARY column, got ",
        input.type == nullptr ? std::string("null") : input.type->ToDdl());
  }
  if (impl_->file_reader) {
    return Status::InvalidArgument("JSON decoder splitting arrays reads views (DecodeViews)");
  }
  auto row_text = [&input](int64_t row_idx, std::string_view* text) {
    if (input.IsNull(row_idx)) return false;
    *text = input.StringValue(row_idx);
    return true;
  };
  return impl_->Decode(input.length, row_text, corrupt_record, stats, nullptr);
}

Result<ColumnPtr> JsonDecoder::DecodeViews(const std::string_view* rows, int64_t num_rows,
                                           ColumnPtr* corrupt_record, DecodeStats* stats,
                                           std::vector<int64_t>* source_rows) {
  if (impl_->file_reader && source_rows == nullptr) {
    return Status::InvalidArgument("JSON decoder splitting arrays needs source_rows");
  }
  auto row_text = [rows](int64_t row_idx, std::string_view* text) {
    *text = rows[row_idx];
    return true;
  };
  return impl_->Decode(num_rows, row_text, corrupt_record, stats, source_rows);
}

}  // namespace silt::json
