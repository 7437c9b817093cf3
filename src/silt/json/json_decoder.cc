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

#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/json/dom_internal.h"
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

bool IsNested(TypeId id) {
  return id == TypeId::kStruct || id == TypeId::kArray || id == TypeId::kMap;
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A struct's field names, looked up exactly first and then ASCII
// case-insensitively. Small structs scan linearly (faster than hashing for a
// handful of short names); large ones use hash maps built once.
class FieldLookup {
 public:
  explicit FieldLookup(const std::vector<Field>& fields) {
    for (const Field& field : fields) names_.push_back(field.name);
    if (names_.size() > kLinearMax) {
      for (size_t i = 0; i < names_.size(); ++i) {
        std::string lower = AsciiLower(names_[i]);
        // emplace keeps the first of equal names, like the linear scan.
        exact_.emplace(names_[i], static_cast<int>(i));
        lower_.emplace(std::move(lower), static_cast<int>(i));
      }
    }
  }

  // The field index for `key`, or -1; *exact says how it matched.
  int Find(std::string_view key, bool* exact) {
    if (names_.size() <= kLinearMax) {
      for (size_t i = 0; i < names_.size(); ++i) {
        if (names_[i] == key) {
          *exact = true;
          return static_cast<int>(i);
        }
      }
      for (size_t i = 0; i < names_.size(); ++i) {
        if (EqualsIgnoreCase(names_[i], key)) {
          *exact = false;
          return static_cast<int>(i);
        }
      }
      return -1;
    }
    auto it = exact_.find(key);
    if (it != exact_.end()) {
      *exact = true;
      return it->second;
    }
    lower_key_.assign(key);
    AsciiLowerInPlace(&lower_key_);
    it = lower_.find(std::string_view(lower_key_));
    if (it == lower_.end()) return -1;
    *exact = false;
    return it->second;
  }

 private:
  static constexpr size_t kLinearMax = 12;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> exact_;
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> lower_;
  std::string lower_key_;
};

// One node per type in the schema tree, mirroring the builder tree.
struct Node {
  TypeId id = TypeId::kNull;
  int precision = 0;
  int scale = 0;
  // Struct: one per field. Array: the element. Map: the value.
  std::vector<std::unique_ptr<Node>> children;
  // Struct only: name lookup and the per-object member chosen for each field
  // (rank 0 = absent, 1 = case-insensitive match, 2 = exact match).
  std::unique_ptr<FieldLookup> lookup;
  std::vector<dom::element> slot_value;
  std::vector<uint8_t> slot_rank;
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
      node->slot_rank.resize(type->fields().size());
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

// Spark's FloatType/DoubleType accepted strings (allowNonNumericNumbers).
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

}  // namespace

struct JsonDecoder::Impl {
  TypePtr output_type;
  std::unique_ptr<Node> root;
  std::unique_ptr<ColumnBuilder> root_builder;
  std::unique_ptr<ColumnBuilder> corrupt_builder;
  internal::DomReader reader;
  internal::JsonGen gen;
  std::string scratch;
  int64_t zone_offset_micros = 0;
  std::function<int64_t(int64_t)> local_to_utc;
  // Whether the current document carries big-number markers.
  bool markers = false;

  template <typename RowText>
  Result<ColumnPtr> Decode(int64_t num_rows, const RowText& row_text, ColumnPtr* corrupt_record,
                           DecodeStats* stats);
  bool DecodeRow(std::string_view text, DecodeStats* stats);
  void FillSlots(Node* node, dom::object object);

  // Converts non-null `value` to `node`'s type. kAppend=false only checks
  // that it fits (so a nested value that does not fit can be nulled as a
  // whole before anything is appended); kAppend=true appends the value, or a
  // null where it does not fit, keeping every builder aligned.
  template <bool kAppend>
  bool Convert(Node* node, dom::element value);
  template <bool kAppend>
  bool ConvertStruct(Node* node, dom::object object);
  template <bool kAppend>
  bool ConvertArray(Node* node, dom::array array);
  template <bool kAppend>
  bool ConvertMap(Node* node, dom::object object);

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
    if (!row_text(row_idx, &text) || IsJsonBlank(text)) {
      root_builder->AppendNull();
      if (want_corrupt) corrupt_builder->AppendNull();
      continue;
    }
    bool clean = DecodeRow(text, &local);
    if (want_corrupt) {
      if (clean) {
        corrupt_builder->AppendNull();
      } else {
        corrupt_builder->AppendString(text);
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

bool JsonDecoder::Impl::DecodeRow(std::string_view text, DecodeStats* stats) {
  dom::element doc;
  if (!reader.Parse(text, &doc) || doc.type() != dom::element_type::OBJECT) {
    // Spark's BadRecordException in PERMISSIVE mode: a row of nulls.
    for (auto& child : root->children) child->builder->AppendNull();
    root_builder->AppendValid();
    ++stats->malformed_rows;
    return false;
  }
  markers = reader.has_markers();
  FillSlots(root.get(), doc.get_object().value_unsafe());
  int64_t mismatches = 0;
  for (size_t field_idx = 0; field_idx < root->children.size(); ++field_idx) {
    Node* child = root->children[field_idx].get();
    dom::element value = root->slot_value[field_idx];
    if (root->slot_rank[field_idx] == 0 || value.is_null()) {
      child->builder->AppendNull();
      continue;
    }
    if (IsNested(child->id) && !Convert<false>(child, value)) {
      child->builder->AppendNull();
      ++mismatches;
      continue;
    }
    if (!Convert<true>(child, value)) ++mismatches;
  }
  root_builder->AppendValid();
  if (mismatches == 0) return true;
  stats->mismatched_fields += mismatches;
  ++stats->partial_rows;
  return false;
}

void JsonDecoder::Impl::FillSlots(Node* node, dom::object object) {
  std::fill(node->slot_rank.begin(), node->slot_rank.end(), 0);
  for (dom::key_value_pair member : object) {
    bool exact = false;
    int idx = node->lookup->Find(member.key, &exact);
    if (idx < 0) continue;
    uint8_t rank = exact ? 2 : 1;
    if (rank >= node->slot_rank[static_cast<size_t>(idx)]) {
      node->slot_rank[static_cast<size_t>(idx)] = rank;
      node->slot_value[static_cast<size_t>(idx)] = member.value;
    }
  }
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
    case ValueKind::kString: return SpecialDouble(internal::StringOf(value), out);
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

void JsonDecoder::Impl::AppendAsString(ColumnBuilder* builder, dom::element value, ValueKind kind) {
  if (kind == ValueKind::kString) {
    builder->AppendString(internal::StringOf(value));
    return;
  }
  scratch.clear();
  gen.Reset(&scratch);
  internal::CopyValue(value, markers, &gen);
  builder->AppendString(scratch);
}

template <bool kAppend>
bool JsonDecoder::Impl::Convert(Node* node, dom::element value) {
  const ValueKind kind = internal::KindOf(value, markers);
  ColumnBuilder* builder = node->builder;
  auto fail = [builder]() {
    if constexpr (kAppend) builder->AppendNull();
    return false;
  };
  switch (node->id) {
    case TypeId::kNull:
      if constexpr (kAppend) builder->AppendNull();
      return true;
    case TypeId::kBoolean:
      if (kind != ValueKind::kBool) return fail();
      if constexpr (kAppend) builder->AppendBool(value.get_bool().value_unsafe());
      return true;
    case TypeId::kByte: {
      // Jackson's getByteValue accepts [-128, 255] and narrows.
      int64_t v = 0;
      if (!AsInt64(value, kind, &v) || v < -128 || v > 255) return fail();
      if constexpr (kAppend) builder->Append<int8_t>(static_cast<int8_t>(static_cast<uint8_t>(v)));
      return true;
    }
    case TypeId::kShort: {
      int64_t v = 0;
      if (!AsInt64(value, kind, &v) || v < INT16_MIN || v > INT16_MAX) return fail();
      if constexpr (kAppend) builder->Append<int16_t>(static_cast<int16_t>(v));
      return true;
    }
    case TypeId::kInt: {
      int64_t v = 0;
      if (!AsInt64(value, kind, &v) || v < INT32_MIN || v > INT32_MAX) return fail();
      if constexpr (kAppend) builder->Append<int32_t>(static_cast<int32_t>(v));
      return true;
    }
    case TypeId::kLong: {
      int64_t v = 0;
      if (!AsInt64(value, kind, &v)) return fail();
      if constexpr (kAppend) builder->Append<int64_t>(v);
      return true;
    }
    case TypeId::kFloat: {
      double v = 0;
      if (!AsDouble(value, kind, &v)) return fail();
      if constexpr (kAppend) builder->Append<float>(DoubleToFloat(v));
      return true;
    }
    case TypeId::kDouble: {
      double v = 0;
      if (!AsDouble(value, kind, &v)) return fail();
      if constexpr (kAppend) builder->Append<double>(v);
      return true;
    }
    case TypeId::kDecimal: {
      __int128 v = 0;
      if (!AsDecimal(value, kind, node->precision, node->scale, &v)) return fail();
      if constexpr (kAppend) builder->Append<__int128>(v);
      return true;
    }
    case TypeId::kString:
      if constexpr (kAppend) AppendAsString(builder, value, kind);
      return true;
    case TypeId::kBinary:
      if (kind != ValueKind::kString ||
          !internal::DecodeBase64(internal::StringOf(value), &scratch)) {
        return fail();
      }
      if constexpr (kAppend) builder->AppendString(scratch);
      return true;
    case TypeId::kDate: {
      if (kind != ValueKind::kString) return fail();
      std::string_view s = internal::StringOf(value);
      if (s.empty()) return fail();
      std::optional<int32_t> days = columnar::ParseDate(s);
      int32_t legacy_days = 0;
      if (!days.has_value() && internal::ParseJavaInt(s, &legacy_days)) days = legacy_days;
      if (!days.has_value()) return fail();
      if constexpr (kAppend) builder->Append<int32_t>(*days);
      return true;
    }
    case TypeId::kTimestamp: {
      if (kind == ValueKind::kInt64) {
        // Seconds since the epoch; Java's long multiply wraps on overflow.
        uint64_t seconds = static_cast<uint64_t>(value.get_int64().value_unsafe());
        int64_t micros = static_cast<int64_t>(seconds * static_cast<uint64_t>(1000000));
        if constexpr (kAppend) builder->Append<int64_t>(micros);
        return true;
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
      return true;
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
      return true;
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
bool JsonDecoder::Impl::ConvertStruct(Node* node, dom::object object) {
  FillSlots(node, object);
  for (size_t field_idx = 0; field_idx < node->children.size(); ++field_idx) {
    Node* child = node->children[field_idx].get();
    dom::element value = node->slot_value[field_idx];
    if (node->slot_rank[field_idx] == 0 || value.is_null()) {
      if constexpr (kAppend) child->builder->AppendNull();
      continue;
    }
    if (!Convert<kAppend>(child, value) && !kAppend) return false;
  }
  if constexpr (kAppend) node->builder->AppendValid();
  return true;
}

template <bool kAppend>
bool JsonDecoder::Impl::ConvertArray(Node* node, dom::array array) {
  Node* element_node = node->children[0].get();
  for (dom::element element : array) {
    if (element.is_null()) {
      if constexpr (kAppend) element_node->builder->AppendNull();
      continue;
    }
    if (!Convert<kAppend>(element_node, element) && !kAppend) return false;
  }
  if constexpr (kAppend) node->builder->CloseList();
  return true;
}

template <bool kAppend>
bool JsonDecoder::Impl::ConvertMap(Node* node, dom::object object) {
  Node* value_node = node->children[0].get();
  for (dom::key_value_pair member : object) {
    if constexpr (kAppend) node->map_keys->AppendString(member.key);
    if (member.value.is_null()) {
      if constexpr (kAppend) value_node->builder->AppendNull();
    } else if (!Convert<kAppend>(value_node, member.value) && !kAppend) {
      return false;
    }
    if constexpr (kAppend) node->map_entries->AppendValid();
  }
  if constexpr (kAppend) node->builder->CloseList();
  return true;
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
