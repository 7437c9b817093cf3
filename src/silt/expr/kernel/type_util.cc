#include "silt/expr/kernel/type_util.h"

#include <algorithm>

namespace silt::expr {

namespace {

// TypeCoercion.numericPrecedence; -1 for non-primitive-numeric types.
int NumericPrecedence(const DataType& t) {
  switch (t.id()) {
    case TypeId::kByte: return 0;
    case TypeId::kShort: return 1;
    case TypeId::kInt: return 2;
    case TypeId::kLong: return 3;
    case TypeId::kFloat: return 4;
    case TypeId::kDouble: return 5;
    default: return -1;
  }
}

TypePtr PrecedenceType(int index) {
  switch (index) {
    case 0: return DataType::Byte();
    case 1: return DataType::Short();
    case 2: return DataType::Int();
    case 3: return DataType::Long();
    case 4: return DataType::Float();
    default: return DataType::Double();
  }
}

// DecimalType.isWiderThan for integral types.
bool DecimalWiderThanIntegral(const DataType& d, const DataType& integral) {
  TypePtr as_decimal = DecimalForIntegral(integral);
  return d.precision() - d.scale() >= as_decimal->precision() - as_decimal->scale();
}

}  // namespace

bool IsIntegral(const DataType& t) { return t.is_integral(); }
bool IsFloating(const DataType& t) { return t.id() == TypeId::kFloat || t.id() == TypeId::kDouble; }
bool IsNumeric(const DataType& t) { return t.is_numeric(); }

TypePtr DecimalForIntegral(const DataType& t) {
  switch (t.id()) {
    case TypeId::kByte: return DataType::Decimal(3, 0);
    case TypeId::kShort: return DataType::Decimal(5, 0);
    case TypeId::kInt: return DataType::Decimal(10, 0);
    default: return DataType::Decimal(20, 0);
  }
}

TypePtr BoundedDecimal(int precision, int scale) {
  return DataType::Decimal(std::min(precision, 38), std::min(scale, 38));
}

TypePtr AdjustedDecimal(int precision, int scale) {
  if (precision <= 38) return DataType::Decimal(precision, scale);
  int int_digits = precision - scale;
  int min_scale = std::min(scale, 6);
  int adjusted_scale = std::max(38 - int_digits, min_scale);
  return DataType::Decimal(38, adjusted_scale);
}

TypePtr WiderDecimal(const DataType& a, const DataType& b) {
  int scale = std::max(a.scale(), b.scale());
  int range = std::max(a.precision() - a.scale(), b.precision() - b.scale());
  return BoundedDecimal(range + scale, scale);
}

TypePtr FindTightestCommonType(const TypePtr& a, const TypePtr& b) {
  if (a->Equals(*b)) return a;
  if (IsNull(*a)) return b;
  if (IsNull(*b)) return a;
  if (IsIntegral(*a) && IsDecimal(*b) && DecimalWiderThanIntegral(*b, *a)) return b;
  if (IsDecimal(*a) && IsIntegral(*b) && DecimalWiderThanIntegral(*a, *b)) return a;
  int pa = NumericPrecedence(*a);
  int pb = NumericPrecedence(*b);
  if (pa >= 0 && pb >= 0) return PrecedenceType(std::max(pa, pb));
  if ((a->id() == TypeId::kTimestamp && b->id() == TypeId::kDate) ||
      (a->id() == TypeId::kDate && b->id() == TypeId::kTimestamp)) {
    return DataType::Timestamp();
  }
  if ((a->id() == TypeId::kTimestampNtz && b->id() == TypeId::kDate) ||
      (a->id() == TypeId::kDate && b->id() == TypeId::kTimestampNtz)) {
    return DataType::TimestampNtz();
  }
  if ((a->id() == TypeId::kTimestampNtz && b->id() == TypeId::kTimestamp) ||
      (a->id() == TypeId::kTimestamp && b->id() == TypeId::kTimestampNtz)) {
    return DataType::Timestamp();
  }
  return nullptr;
}

TypePtr FindWiderTypeForTwo(const TypePtr& a, const TypePtr& b) {
  if (TypePtr t = FindTightestCommonType(a, b)) return t;
  // findWiderTypeForDecimal.
  if (IsDecimal(*a) && IsDecimal(*b)) return WiderDecimal(*a, *b);
  if (IsDecimal(*a) && IsIntegral(*b)) return WiderDecimal(*a, *DecimalForIntegral(*b));
  if (IsIntegral(*a) && IsDecimal(*b)) return WiderDecimal(*DecimalForIntegral(*a), *b);
  if ((IsDecimal(*a) && IsFloating(*b)) || (IsFloating(*a) && IsDecimal(*b))) {
    return DataType::Double();
  }
  // stringPromotion.
  if (IsString(*a) && IsAtomic(*b) && b->id() != TypeId::kBinary && b->id() != TypeId::kBoolean) {
    return a;
  }
  if (IsString(*b) && IsAtomic(*a) && a->id() != TypeId::kBinary && a->id() != TypeId::kBoolean) {
    return b;
  }
  return nullptr;
}

TypePtr FindCommonTypeForComparison(const TypePtr& a, const TypePtr& b) {
  TypeId ia = a->id();
  TypeId ib = b->id();
  if (ia == TypeId::kString &&
      (ib == TypeId::kDate || ib == TypeId::kTimestamp || ib == TypeId::kTimestampNtz)) {
    return b;
  }
  if (ib == TypeId::kString &&
      (ia == TypeId::kDate || ia == TypeId::kTimestamp || ia == TypeId::kTimestampNtz)) {
    return a;
  }
  if (ia == TypeId::kString && ib == TypeId::kNull) return a;
  if (ia == TypeId::kNull && ib == TypeId::kString) return b;
  if ((ia == TypeId::kTimestamp && ib == TypeId::kDate) ||
      (ia == TypeId::kDate && ib == TypeId::kTimestamp)) {
    return DataType::Timestamp();
  }
  // No decimal type fits a string; Spark compares as double (SPARK-22469).
  if ((ia == TypeId::kDecimal && ib == TypeId::kString) ||
      (ia == TypeId::kString && ib == TypeId::kDecimal)) {
    return DataType::Double();
  }
  if (ia == TypeId::kString && IsAtomic(*b) && ib != TypeId::kString) return b;
  if (ib == TypeId::kString && IsAtomic(*a) && ia != TypeId::kString) return a;
  if (a->Equals(*b)) return a;
  return FindWiderTypeForTwo(a, b);
}

std::string TypeName(const DataType& t) { return t.ToDdl(); }

std::string SimpleTypeString(const DataType& t) {
  switch (t.id()) {
    case TypeId::kNull: return "void";
    case TypeId::kBoolean: return "boolean";
    case TypeId::kByte: return "tinyint";
    case TypeId::kShort: return "smallint";
    case TypeId::kInt: return "int";
    case TypeId::kLong: return "bigint";
    case TypeId::kFloat: return "float";
    case TypeId::kDouble: return "double";
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(t.precision()) + "," + std::to_string(t.scale()) + ")";
    case TypeId::kString: return "string";
    case TypeId::kBinary: return "binary";
    case TypeId::kDate: return "date";
    case TypeId::kTimestamp: return "timestamp";
    case TypeId::kTimestampNtz: return "timestamp_ntz";
    case TypeId::kVariant: return "variant";
    case TypeId::kArray: return "array<" + SimpleTypeString(*t.element_type()) + ">";
    case TypeId::kMap:
      return "map<" + SimpleTypeString(*t.key_type()) + "," + SimpleTypeString(*t.value_type()) +
             ">";
    case TypeId::kStruct: {
      std::string out = "struct<";
      for (int field_idx = 0; field_idx < t.num_fields(); ++field_idx) {
        if (field_idx > 0) out += ",";
        out += t.field(field_idx).name + ":" + SimpleTypeString(*t.field(field_idx).type);
      }
      return out + ">";
    }
  }
  return "unknown";
}

}  // namespace silt::expr
