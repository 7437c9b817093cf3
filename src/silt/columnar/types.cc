#include "silt/columnar/types.h"

#include <cctype>
#include <string>
#include <utility>

#include "silt/base/strings.h"

namespace silt::columnar {

namespace {

// Names that Spark's DDL parser reads back without backquotes.
bool IsPlainIdentifier(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string QuoteIdentifier(std::string_view name) {
  if (IsPlainIdentifier(name)) return std::string(name);
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';  // a backquote is escaped by doubling it
    out += c;
  }
  out += '`';
  return out;
}

}  // namespace

// The private constructor keeps every DataType behind a factory; the
// shared_ptr therefore cannot come from make_shared.
#define SILT_PRIMITIVE_FACTORY(Name, Id)                  \
  TypePtr DataType::Name() {                              \
    static const TypePtr kType(new DataType(TypeId::Id)); \
    return kType;                                         \
  }

SILT_PRIMITIVE_FACTORY(Null, kNull)
SILT_PRIMITIVE_FACTORY(Boolean, kBoolean)
SILT_PRIMITIVE_FACTORY(Byte, kByte)
SILT_PRIMITIVE_FACTORY(Short, kShort)
SILT_PRIMITIVE_FACTORY(Int, kInt)
SILT_PRIMITIVE_FACTORY(Long, kLong)
SILT_PRIMITIVE_FACTORY(Float, kFloat)
SILT_PRIMITIVE_FACTORY(Double, kDouble)
SILT_PRIMITIVE_FACTORY(String, kString)
SILT_PRIMITIVE_FACTORY(Binary, kBinary)
SILT_PRIMITIVE_FACTORY(Date, kDate)
SILT_PRIMITIVE_FACTORY(Timestamp, kTimestamp)
SILT_PRIMITIVE_FACTORY(TimestampNtz, kTimestampNtz)

#undef SILT_PRIMITIVE_FACTORY

TypePtr DataType::Decimal(int precision, int scale) {
  std::shared_ptr<DataType> t(new DataType(TypeId::kDecimal));
  t->precision_ = precision;
  t->scale_ = scale;
  return t;
}

TypePtr DataType::Struct(std::vector<Field> fields) {
  std::shared_ptr<DataType> t(new DataType(TypeId::kStruct));
  t->fields_ = std::move(fields);
  return t;
}

TypePtr DataType::Array(TypePtr element, bool contains_null) {
  std::shared_ptr<DataType> t(new DataType(TypeId::kArray));
  t->element_ = std::move(element);
  t->contains_null_ = contains_null;
  return t;
}

TypePtr DataType::Map(TypePtr key, TypePtr value, bool value_contains_null) {
  std::shared_ptr<DataType> t(new DataType(TypeId::kMap));
  t->key_ = std::move(key);
  t->value_ = std::move(value);
  t->contains_null_ = value_contains_null;
  std::vector<Field> entry_fields;
  entry_fields.push_back(Field{"key", t->key_, false, "{}"});
  entry_fields.push_back(Field{"value", t->value_, value_contains_null, "{}"});
  t->entries_ = Struct(std::move(entry_fields));
  return t;
}

TypePtr DataType::Variant() {
  static const TypePtr kType = [] {
    std::shared_ptr<DataType> t(new DataType(TypeId::kVariant));
    t->fields_.push_back(Field{"metadata", Binary(), false, "{}"});
    t->fields_.push_back(Field{"value", Binary(), false, "{}"});
    return TypePtr(std::move(t));
  }();
  return kType;
}

int DataType::byte_width() const {
  switch (id_) {
    case TypeId::kByte: return 1;
    case TypeId::kShort: return 2;
    case TypeId::kInt:
    case TypeId::kFloat:
    case TypeId::kDate: return 4;
    case TypeId::kLong:
    case TypeId::kDouble:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return 8;
    case TypeId::kDecimal: return 16;
    case TypeId::kNull:
    case TypeId::kBoolean:
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap:
    case TypeId::kVariant: return 0;
  }
  return 0;
}

int DataType::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (EqualsIgnoreCase(fields_[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

std::string DataType::ToDdl() const {
  switch (id_) {
    case TypeId::kNull: return "VOID";
    case TypeId::kBoolean: return "BOOLEAN";
    case TypeId::kByte: return "TINYINT";
    case TypeId::kShort: return "SMALLINT";
    case TypeId::kInt: return "INT";
    case TypeId::kLong: return "BIGINT";
    case TypeId::kFloat: return "FLOAT";
    case TypeId::kDouble: return "DOUBLE";
    case TypeId::kDecimal:
      return "DECIMAL(" + std::to_string(precision_) + "," + std::to_string(scale_) + ")";
    case TypeId::kString: return "STRING";
    case TypeId::kBinary: return "BINARY";
    case TypeId::kDate: return "DATE";
    case TypeId::kTimestamp: return "TIMESTAMP";
    case TypeId::kTimestampNtz: return "TIMESTAMP_NTZ";
    case TypeId::kStruct: {
      std::string out = "STRUCT<";
      for (size_t i = 0; i < fields_.size(); ++i) {
        if (i > 0) out += ", ";
        out += QuoteIdentifier(fields_[i].name);
        out += ": ";
        out += fields_[i].type->ToDdl();
        if (!fields_[i].nullable) out += " NOT NULL";
      }
      out += ">";
      return out;
    }
    case TypeId::kArray: return "ARRAY<" + element_->ToDdl() + ">";
    case TypeId::kMap: return "MAP<" + key_->ToDdl() + ", " + value_->ToDdl() + ">";
    case TypeId::kVariant: return "VARIANT";
  }
  return "";
}

std::string DataType::JsonTypeName() const {
  switch (id_) {
    case TypeId::kNull: return "void";
    case TypeId::kBoolean: return "boolean";
    case TypeId::kByte: return "byte";
    case TypeId::kShort: return "short";
    case TypeId::kInt: return "integer";
    case TypeId::kLong: return "long";
    case TypeId::kFloat: return "float";
    case TypeId::kDouble: return "double";
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(precision_) + "," + std::to_string(scale_) + ")";
    case TypeId::kString: return "string";
    case TypeId::kBinary: return "binary";
    case TypeId::kDate: return "date";
    case TypeId::kTimestamp: return "timestamp";
    case TypeId::kTimestampNtz: return "timestamp_ntz";
    case TypeId::kStruct: return "struct";
    case TypeId::kArray: return "array";
    case TypeId::kMap: return "map";
    case TypeId::kVariant: return "variant";
  }
  return "";
}

bool DataType::Equals(const DataType& other) const {
  if (this == &other) return true;
  if (id_ != other.id_) return false;
  switch (id_) {
    case TypeId::kDecimal: return precision_ == other.precision_ && scale_ == other.scale_;
    case TypeId::kStruct:
      if (fields_.size() != other.fields_.size()) return false;
      for (size_t i = 0; i < fields_.size(); ++i) {
        const Field& a = fields_[i];
        const Field& b = other.fields_[i];
        if (a.nullable != b.nullable || !EqualsIgnoreCase(a.name, b.name) ||
            !a.type->Equals(*b.type)) {
          return false;
        }
      }
      return true;
    case TypeId::kArray:
      return contains_null_ == other.contains_null_ && element_->Equals(*other.element_);
    case TypeId::kMap:
      return contains_null_ == other.contains_null_ && key_->Equals(*other.key_) &&
             value_->Equals(*other.value_);
    default: return true;
  }
}

}  // namespace silt::columnar
