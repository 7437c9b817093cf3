#include "silt/json/json_decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/json/dom_internal.h"
#include "silt/json/jackson_internal.h"
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
    if (names_.size() > kLinearMax) {
      for (size_t i = 0; i < names_.size(); ++i) index_.emplace(names_[i], static_cast<int>(i));
    }
  }

  const std::string& name(int i) const { return names_[static_cast<size_t>(i)]; }

  // The field index for `key`, or -1.
  int Find(std::string_view key) const {
    if (names_.size() <= kLinearMax) {
      for (size_t i = 0; i < names_.size(); ++i) {
        if (names_[i] == key) return static_cast<int>(i);
      }
      return -1;
    }
    auto it = index_.find(key);
    return it == index_.end() ? -1 : it->second;
  }

 private:
  static constexpr size_t kLinearMax = 12;
  std::vector<std::string> names_;
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

// How a value fits its type.
enum class Fit : uint8_t { kOk, kPartial, kFail };
Fit Worse(Fit a, Fit b) { return a > b ? a : b; }

bool IsList(TypeId id) { return id == TypeId::kArray || id == TypeId::kMap; }

// What a row gave: a clean row, a bad record (malformed, or a field that
// does not fit: its text goes to the corrupt-record output), or a NULL row
// (no JSON value at all).
enum class RowResult : uint8_t { kClean, kBad, kNull };

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
  std::string partial_json;
  std::string value_json;
  std::string_view lexer_input;
  int64_t zone_offset_micros = 0;
  std::function<int64_t(int64_t)> local_to_utc;
  bool allow_non_numeric = true;
  bool value_root = false;
  // Whether the current document carries big-number markers, and stand-ins
  // of unpaired surrogates (jackson_internal.h).
  bool markers = false;
  bool row_lone_surrogates = false;
  // Fields (at any depth) appended as NULL because their value did not fit.
  int64_t field_misfits = 0;

  template <typename RowText>
  Result<ColumnPtr> Decode(int64_t num_rows, const RowText& row_text, ColumnPtr* corrupt_record,
                           DecodeStats* stats);
  RowResult DecodeRow(std::string_view text, DecodeStats* stats);
  RowResult DecodeObject(dom::element doc, bool bad, DecodeStats* stats);
  RowResult DecodeValue(dom::element doc, bool bad, DecodeStats* stats);
  RowResult AllNullRow(DecodeStats* stats);
  RowResult DecodeMalformed(DecodeStats* stats);
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

  bool AsInt64(dom::element value, ValueKind kind, int64_t* out) const;
  bool AsDouble(dom::element value, ValueKind kind, double* out) const;
  bool AsDecimal(dom::element value, ValueKind kind, int precision, int scale, __int128* out);
  void AppendAsString(ColumnBuilder* builder, dom::element value, ValueKind kind);
};

template <typename RowText>
Result<ColumnPtr> JsonDecoder::Impl::Decode(int64_t num_rows, const RowText& row_text,
                                            ColumnPtr* corrupt_record, DecodeStats* stats) {
  BindBuilders(root.get(), root_builder.get());
  root_builder->Reserve(num_rows);
  const bool want_corrupt = corrupt_record != nullptr;
  if (want_corrupt) corrupt_builder->Reserve(num_rows);
  DecodeStats local;
  for (int64_t row_idx = 0; row_idx < num_rows; ++row_idx) {
    std::string_view text;
    RowResult result = RowResult::kNull;
    if (row_text(row_idx, &text) && !IsJsonBlank(text)) result = DecodeRow(text, &local);
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
  dom::element doc;
  const internal::ParseOutcome outcome = reader.Parse(text, &doc);
  row_lone_surrogates = reader.has_lone_surrogates();
  switch (outcome) {
    case internal::ParseOutcome::kEmpty: return RowResult::kNull;
    case internal::ParseOutcome::kMalformed: return DecodeMalformed(stats);
    case internal::ParseOutcome::kValue: break;
  }
  markers = reader.has_markers();
  return value_root ? DecodeValue(doc, false, stats) : DecodeObject(doc, false, stats);
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
      if (s.empty()) return fail();
      std::optional<int32_t> days = columnar::ParseDate(s);
      int32_t legacy_days = 0;
      if (!days.has_value() && internal::ParseJavaInt(s, &legacy_days)) days = legacy_days;
      if (!days.has_value()) return fail();
      if constexpr (kAppend) builder->Append<int32_t>(*days);
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
      if (s.empty()) return fail();
      std::optional<int64_t> micros = columnar::ParseTimestamp(s, zone_offset_micros);
      if (!micros.has_value()) return fail();
      if (local_to_utc) {
        // Zone-less text moves with the default offset; text with a zone
        // does not.
        std::optional<int64_t> shifted = columnar::ParseTimestamp(s, zone_offset_micros + 1);
        if (shifted && *shifted == *micros - 1) micros = local_to_utc(*micros + zone_offset_micros);
      }
      if constexpr (kAppend) builder->Append<int64_t>(*micros);
      return Fit::kOk;
    }
    case TypeId::kTimestampNtz: {
      if (kind != ValueKind::kString) return fail();
      std::string_view s = internal::StringOf(value);
      if (s.empty()) return fail();
      std::optional<int64_t> micros = columnar::ParseTimestamp(s, 0);
      if (!micros.has_value()) return fail();
      // A text that names its zone reads the same under any default zone;
      // Spark rejects those for TIMESTAMP_NTZ.
      std::optional<int64_t> shifted = columnar::ParseTimestamp(s, kMicrosPerHour);
      if (shifted.has_value() && *shifted == *micros) return fail();
      if constexpr (kAppend) builder->Append<int64_t>(*micros);
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
  auto row_text = [&input](int64_t row_idx, std::string_view* text) {
    if (input.IsNull(row_idx)) return false;
    *text = input.StringValue(row_idx);
    return true;
  };
  return impl_->Decode(input.length, row_text, corrupt_record, stats);
}

Result<ColumnPtr> JsonDecoder::DecodeViews(const std::string_view* rows, int64_t num_rows,
                                           ColumnPtr* corrupt_record, DecodeStats* stats) {
  auto row_text = [rows](int64_t row_idx, std::string_view* text) {
    *text = rows[row_idx];
    return true;
  };
  return impl_->Decode(num_rows, row_text, corrupt_record, stats);
}

}  // namespace silt::json
