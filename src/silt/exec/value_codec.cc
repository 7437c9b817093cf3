// The value encoding: one loop per column (and per struct field), writing
// tags and values at the column's physical width.

#include <cmath>
#include <limits>
#include <vector>

#include "silt/exec/value_codec_internal.h"

namespace silt::exec::internal {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::TypeId;

constexpr char kNullTag = 0;
constexpr char kValueTag = 1;

template <typename T>
void EncodeFixed(const Column& c, const uint8_t* active, int64_t rows, std::string* out) {
  const T* values = c.raw_values<T>();
  for (int64_t i = 0; i < rows; ++i) {
    if (active != nullptr && !active[i]) continue;
    std::string& o = out[i];
    if (c.IsNull(i)) {
      o.push_back(kNullTag);
      continue;
    }
    o.push_back(kValueTag);
    o.append(reinterpret_cast<const char*>(&values[i]), sizeof(T));
  }
}

// Spark's NormalizeFloatingNumbers: one NaN, and -0.0 as 0.0.
template <typename T>
void EncodeFloat(const Column& c, const uint8_t* active, int64_t rows, std::string* out) {
  const T* values = c.raw_values<T>();
  for (int64_t i = 0; i < rows; ++i) {
    if (active != nullptr && !active[i]) continue;
    std::string& o = out[i];
    if (c.IsNull(i)) {
      o.push_back(kNullTag);
      continue;
    }
    T v = values[i];
    if (std::isnan(v)) v = std::numeric_limits<T>::quiet_NaN();
    if (v == 0) v = 0;
    o.push_back(kValueTag);
    o.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
}

void EncodeBool(const Column& c, const uint8_t* active, int64_t rows, std::string* out) {
  for (int64_t i = 0; i < rows; ++i) {
    if (active != nullptr && !active[i]) continue;
    std::string& o = out[i];
    if (c.IsNull(i)) {
      o.push_back(kNullTag);
      continue;
    }
    o.push_back(kValueTag);
    o.push_back(c.BoolValue(i) ? 1 : 0);
  }
}

void EncodeStrings(const Column& c, const uint8_t* active, int64_t rows, std::string* out) {
  for (int64_t i = 0; i < rows; ++i) {
    if (active != nullptr && !active[i]) continue;
    std::string& o = out[i];
    if (c.IsNull(i)) {
      o.push_back(kNullTag);
      continue;
    }
    o.push_back(kValueTag);
    PutBytes(&o, c.StringValue(i));
  }
}

void EncodeStruct(const Column& c, bool normalize, const uint8_t* active, int64_t rows,
                  std::string* out) {
  // The fields are encoded only for rows whose struct is present.
  std::vector<uint8_t> present(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    if (active != nullptr && !active[i]) continue;
    const bool valid = c.IsValid(i);
    out[i].push_back(valid ? kValueTag : kNullTag);
    present[static_cast<size_t>(i)] = valid ? 1 : 0;
  }
  for (const columnar::ColumnPtr& child : c.children) {
    EncodeColumn(*child, normalize, present.data(), rows, out);
  }
}

template <typename T>
bool DecodeFixed(std::string_view* in, ColumnBuilder* b) {
  T v;
  if (!GetFixed(in, &v)) return false;
  b->Append<T>(v);
  return true;
}

}  // namespace

bool EncodableType(const DataType& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return true;
    case TypeId::kStruct:
      for (const columnar::Field& f : type.fields()) {
        if (!EncodableType(*f.type)) return false;
      }
      return true;
    default: return false;
  }
}

void EncodeColumn(const Column& c, bool normalize, const uint8_t* active, int64_t rows,
                  std::string* out) {
  switch (c.type->id()) {
    case TypeId::kBoolean: EncodeBool(c, active, rows, out); return;
    case TypeId::kByte: EncodeFixed<int8_t>(c, active, rows, out); return;
    case TypeId::kShort: EncodeFixed<int16_t>(c, active, rows, out); return;
    case TypeId::kInt:
    case TypeId::kDate: EncodeFixed<int32_t>(c, active, rows, out); return;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: EncodeFixed<int64_t>(c, active, rows, out); return;
    case TypeId::kFloat:
      if (normalize) {
        EncodeFloat<float>(c, active, rows, out);
      } else {
        EncodeFixed<float>(c, active, rows, out);
      }
      return;
    case TypeId::kDouble:
      if (normalize) {
        EncodeFloat<double>(c, active, rows, out);
      } else {
        EncodeFixed<double>(c, active, rows, out);
      }
      return;
    case TypeId::kDecimal: EncodeFixed<__int128>(c, active, rows, out); return;
    case TypeId::kString:
    case TypeId::kBinary: EncodeStrings(c, active, rows, out); return;
    case TypeId::kStruct: EncodeStruct(c, normalize, active, rows, out); return;
    default: return;  // excluded by EncodableType
  }
}

bool DecodeValue(const DataType& type, std::string_view* in, ColumnBuilder* b) {
  if (in->empty()) return false;
  const char tag = in->front();
  in->remove_prefix(1);
  if (tag == kNullTag) {
    b->AppendNull();
    return true;
  }
  if (tag != kValueTag) return false;
  switch (type.id()) {
    case TypeId::kBoolean: {
      uint8_t v;
      if (!GetFixed(in, &v) || v > 1) return false;
      b->AppendBool(v != 0);
      return true;
    }
    case TypeId::kByte: return DecodeFixed<int8_t>(in, b);
    case TypeId::kShort: return DecodeFixed<int16_t>(in, b);
    case TypeId::kInt:
    case TypeId::kDate: return DecodeFixed<int32_t>(in, b);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return DecodeFixed<int64_t>(in, b);
    case TypeId::kFloat: return DecodeFixed<float>(in, b);
    case TypeId::kDouble: return DecodeFixed<double>(in, b);
    case TypeId::kDecimal: return DecodeFixed<__int128>(in, b);
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view bytes;
      if (!GetBytes(in, &bytes)) return false;
      b->AppendString(bytes);
      return true;
    }
    case TypeId::kStruct:
      for (int f = 0; f < type.num_fields(); ++f) {
        if (!DecodeValue(*type.field(f).type, in, b->child(f))) return false;
      }
      b->AppendValid();
      return true;
    default: return false;
  }
}

bool NormalizeValue(const DataType& type, std::string_view* in, std::string* out) {
  if (in->empty()) return false;
  const char tag = in->front();
  in->remove_prefix(1);
  out->push_back(tag);
  if (tag == kNullTag) return true;
  if (tag != kValueTag) return false;
  auto copy = [&](size_t n) {
    if (in->size() < n) return false;
    out->append(in->data(), n);
    in->remove_prefix(n);
    return true;
  };
  switch (type.id()) {
    case TypeId::kBoolean:
    case TypeId::kByte: return copy(1);
    case TypeId::kShort: return copy(2);
    case TypeId::kInt:
    case TypeId::kDate: return copy(4);
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return copy(8);
    case TypeId::kDecimal: return copy(16);
    case TypeId::kFloat: {
      float v;
      if (!GetFixed(in, &v)) return false;
      if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
      if (v == 0) v = 0;
      PutFixed(out, v);
      return true;
    }
    case TypeId::kDouble: {
      double v;
      if (!GetFixed(in, &v)) return false;
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      if (v == 0) v = 0;
      PutFixed(out, v);
      return true;
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view bytes;
      if (!GetBytes(in, &bytes)) return false;
      PutBytes(out, bytes);
      return true;
    }
    case TypeId::kStruct:
      for (const columnar::Field& f : type.fields()) {
        if (!NormalizeValue(*f.type, in, out)) return false;
      }
      return true;
    default: return false;
  }
}

}  // namespace silt::exec::internal
