#include "silt/delta/type_widening.h"

#include "silt/base/json_writer.h"
#include "silt/delta/field_metadata.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

namespace {

using columnar::Column;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypeId;
using columnar::TypePtr;

// Digits left of the decimal point a decimal needs to hold every value of
// an integral type, as delta-spark counts them: byte, short and int are all
// stored as INT32, so each needs the 10 of an int (DecimalType.isWiderThan).
int IntegralDigits(TypeId id) {
  switch (id) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt: return 10;
    default: return 20;
  }
}

int IntegralWidth(TypeId id) {
  switch (id) {
    case TypeId::kByte: return 1;
    case TypeId::kShort: return 2;
    case TypeId::kInt: return 4;
    default: return 8;
  }
}

template <typename From, typename To, typename Fn>
BufferPtr ConvertValues(const Column& in, Fn fn) {
  auto out = std::make_shared<Buffer>();
  out->Resize(in.length * static_cast<int64_t>(sizeof(To)));
  if (in.length == 0) return out;
  const From* src = in.raw_values<From>();
  To* dst = out->mutable_data_as<To>();
  for (int64_t i = 0; i < in.length; ++i) dst[i] = fn(src[i]);
  return out;
}

// Applies `fn` (a generic lambda over the stored integer) to every value of
// an integral column.
template <typename To, typename Fn>
BufferPtr ConvertIntegral(const Column& in, Fn fn) {
  switch (in.type->id()) {
    case TypeId::kByte: return ConvertValues<int8_t, To>(in, fn);
    case TypeId::kShort: return ConvertValues<int16_t, To>(in, fn);
    case TypeId::kInt: return ConvertValues<int32_t, To>(in, fn);
    default: return ConvertValues<int64_t, To>(in, fn);
  }
}

unsigned __int128 Pow10(int n) {
  unsigned __int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// Multiplies with two's-complement wrap-around: values of null slots are
// unspecified and must not overflow into undefined behaviour; valid values
// fit by construction (CanReadWidened).
__int128 ScaleUp(__int128 v, unsigned __int128 factor) {
  return static_cast<__int128>(static_cast<unsigned __int128>(v) * factor);
}

}  // namespace

ColumnPtr WidenColumn(const Column& in, const TypePtr& want) {
  if (in.type->id() == TypeId::kNull) return columnar::MakeNullColumn(want, in.length);
  auto out = std::make_shared<Column>();
  out->type = want;
  out->length = in.length;
  out->null_count = in.null_count;
  out->validity = in.validity;
  const TypeId from = in.type->id();
  switch (want->id()) {
    case TypeId::kShort:
      out->values = ConvertIntegral<int16_t>(in, [](auto v) { return static_cast<int16_t>(v); });
      break;
    case TypeId::kInt:
      out->values = ConvertIntegral<int32_t>(in, [](auto v) { return static_cast<int32_t>(v); });
      break;
    case TypeId::kLong:
      out->values = ConvertIntegral<int64_t>(in, [](auto v) { return static_cast<int64_t>(v); });
      break;
    case TypeId::kDouble:
      if (from == TypeId::kFloat) {
        out->values = ConvertValues<float, double>(in, [](float v) { return double{v}; });
      } else {
        out->values = ConvertIntegral<double>(in, [](auto v) { return static_cast<double>(v); });
      }
      break;
    case TypeId::kDecimal: {
      if (from == TypeId::kDecimal) {
        const unsigned __int128 factor = Pow10(want->scale() - in.type->scale());
        out->values = ConvertValues<__int128, __int128>(
            in, [factor](__int128 v) { return ScaleUp(v, factor); });
      } else {
        const unsigned __int128 factor = Pow10(want->scale());
        out->values = ConvertIntegral<__int128>(
            in, [factor](auto v) { return ScaleUp(static_cast<__int128>(v), factor); });
      }
      break;
    }
    case TypeId::kTimestampNtz: {
      constexpr uint64_t kMicrosPerDay = 86400ULL * 1000 * 1000;
      out->values = ConvertValues<int32_t, int64_t>(in, [](int32_t days) {
        return static_cast<int64_t>(static_cast<uint64_t>(static_cast<int64_t>(days)) *
                                    kMicrosPerDay);
      });
      break;
    }
    default: break;  // unreachable: IsTypeChangeSupported admits nothing else
  }
  return out;
}

bool CanReadWidened(const DataType& from_type, const DataType& to_type) {
  if (IsTypeChangeSupported(from_type, to_type)) return true;
  if (!from_type.is_integral() || to_type.id() != TypeId::kDecimal) return false;
  int digits = 19;
  switch (from_type.id()) {
    case TypeId::kByte: digits = 3; break;
    case TypeId::kShort: digits = 5; break;
    case TypeId::kInt: digits = 10; break;
    default: break;
  }
  return to_type.precision() - to_type.scale() >= digits;
}

bool IsTypeChangeSupported(const DataType& from_type, const DataType& to_type) {
  const TypeId from = from_type.id();
  const TypeId to = to_type.id();
  if (from_type.is_integral()) {
    if (to_type.is_integral()) return IntegralWidth(to) > IntegralWidth(from);
    if (to == TypeId::kDouble) return from != TypeId::kLong;
    if (to == TypeId::kDecimal)
      return to_type.precision() - to_type.scale() >= IntegralDigits(from);
    return false;
  }
  if (from == TypeId::kFloat) return to == TypeId::kDouble;
  if (from == TypeId::kDecimal && to == TypeId::kDecimal) {
    if (from_type.Equals(to_type)) return false;
    return to_type.scale() >= from_type.scale() &&
           to_type.precision() - to_type.scale() >= from_type.precision() - from_type.scale();
  }
  if (from == TypeId::kDate) return to == TypeId::kTimestampNtz;
  return false;
}

Result<columnar::Field> AppendTypeChanges(const columnar::Field& field,
                                          const std::vector<TypeChange>& changes) {
  if (changes.empty()) return field;
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> existing,
                        FieldMetadataJson(field, kTypeChangesKey));
  JsonWriter list;
  list.BeginArray();
  if (existing && existing->size() > 2 && existing->front() == '[' && existing->back() == ']') {
    list.Raw(std::string_view(*existing).substr(1, existing->size() - 2));
  }
  for (const TypeChange& change : changes) {
    // delta-spark's member order (a Scala map of two entries).
    list.BeginObject();
    list.Member("toType", change.to->JsonTypeName());
    list.Member("fromType", change.from->JsonTypeName());
    if (!change.field_path.empty()) list.Member("fieldPath", change.field_path);
    list.EndObject();
  }
  list.EndArray();
  return WithFieldMetadata(field, kTypeChangesKey, list.str());
}

Result<bool> TypeWideningEnabled(const Protocol& protocol, const Metadata& metadata) {
  SILT_ASSIGN_OR_RETURN(bool enabled, EnableTypeWidening(metadata.configuration));
  if (!enabled) return false;
  if (SupportsWriterFeature(protocol, "typeWidening")) return true;
  if (SupportsWriterFeature(protocol, "typeWidening-preview")) {
    return Status::NotSupported(
        "widening a column type of a table with the Delta table feature typeWidening-preview "
        "(Delta 3.2's preview, whose type change records name the commit version) is not "
        "supported yet");
  }
  return Status::NotSupported(
      "the table sets delta.enableTypeWidening but its protocol lacks the "
      "typeWidening table feature");
}

}  // namespace silt::delta
