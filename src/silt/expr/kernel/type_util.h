// Spark type-coercion rules used by the binder and function binders
// (TypeCoercion.scala, DecimalPrecision.scala, non-ANSI defaults).
//
// Thread safety: pure functions.
#pragma once

#include "silt/columnar/nullability.h"
#include "silt/columnar/types.h"

namespace silt::expr {

using columnar::DataType;
using columnar::TypeId;
using columnar::TypePtr;

bool IsIntegral(const DataType& t);
bool IsFloating(const DataType& t);
bool IsNumeric(const DataType& t);
inline bool IsDecimal(const DataType& t) { return t.id() == TypeId::kDecimal; }
inline bool IsString(const DataType& t) { return t.id() == TypeId::kString; }
inline bool IsNull(const DataType& t) { return t.id() == TypeId::kNull; }
// Not struct, array or map.
inline bool IsAtomic(const DataType& t) { return !t.is_nested() && t.id() != TypeId::kNull; }

// The decimal type that holds every value of an integral type: TINYINT ->
// DECIMAL(3,0), SMALLINT -> (5,0), INT -> (10,0), BIGINT -> (20,0).
TypePtr DecimalForIntegral(const DataType& t);

// DecimalType.bounded: precision and scale capped at 38.
TypePtr BoundedDecimal(int precision, int scale);
// DecimalPrecision.adjustPrecisionScale with precision loss allowed (the
// default): keeps at least min(scale, 6) fractional digits.
TypePtr AdjustedDecimal(int precision, int scale);
// DecimalPrecision.widerDecimalType.
TypePtr WiderDecimal(const DataType& a, const DataType& b);

// TypeCoercion.findTightestCommonType; null when there is none.
TypePtr FindTightestCommonType(const TypePtr& a, const TypePtr& b);
// TypeCoercion.findWiderTypeForTwo (numeric widening incl. decimals, string
// promotion of atomic types); null when there is none.
TypePtr FindWiderTypeForTwo(const TypePtr& a, const TypePtr& b);
// TypeCoercion.findCommonTypeForBinaryComparison, falling back to
// FindWiderTypeForTwo; null when the two cannot be compared.
TypePtr FindCommonTypeForComparison(const TypePtr& a, const TypePtr& b);

// StructType.asNullable, as from_json returns (columnar/nullability.h).
using columnar::AsNullable;

// The SQL name of a type for messages ("INT", "DECIMAL(10,2)").
std::string TypeName(const DataType& t);

// Spark's DataType.simpleString, as typeof() returns it: "int", "bigint",
// "decimal(10,2)", "array<string>", "struct<a:int,b:string>", "void".
std::string SimpleTypeString(const DataType& t);

}  // namespace silt::expr
