// JsonDecoder's walk of simdjson's DOM against the schema: a row's object,
// repeated fields (Spark's occurrence rules), and the conversion of each
// value to its field's type, nested structs, arrays and maps included.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/json/json_decoder_internal.h"
#include "silt/json/text_parse_internal.h"

namespace silt::json {

namespace dom = simdjson::dom;
using columnar::ColumnBuilder;
using columnar::TypeId;
using internal::Fit;
using internal::Node;
using internal::RowResult;
using internal::ValueKind;

namespace {

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

bool IsList(TypeId id) { return id == TypeId::kArray || id == TypeId::kMap; }

}  // namespace

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

// Spark's converter for a malformed record (json_decoder_malformed.cc)
// checks values with the same conversion.
template Fit JsonDecoder::Impl::Convert<false>(Node* node, dom::element value);
template Fit JsonDecoder::Impl::Convert<true>(Node* node, dom::element value);

}  // namespace silt::json
