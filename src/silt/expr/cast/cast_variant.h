// Conversions between VARIANT and the other Spark types, shared by CAST and
// the variant functions (variant_get, try_variant_get, to_variant_object,
// to_json on variants); internal to expr.
//
// From a variant (Spark 4's VariantGet.cast): a variant null is SQL NULL; an
// object or array casts only to STRING (its JSON) or to a STRUCT / MAP<STRING,
// _> / ARRAY of castable types, member by member; a scalar is taken as its
// natural Spark type (BIGINT, DOUBLE, DECIMAL(p,s) of the value without
// trailing zeros, STRING, BOOLEAN, DATE, TIMESTAMP, TIMESTAMP_NTZ, FLOAT,
// BINARY) and converted with Spark's ANSI cast rules, a failing conversion
// being an invalid cast instead of an error; BIGINT and DECIMAL seconds
// convert to TIMESTAMP exactly or not at all. An invalid cast is an error
// ([INVALID_VARIANT_CAST]) or, with fail_on_error false, NULL at that place
// (an element, a field, a row).
//
// To a variant (castToVariant): atomic values, arrays of them and, for
// to_variant_object, structs and string-keyed maps (as objects).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/columnar/variant.h"
#include "silt/expr/value/time_zone.h"

namespace silt::expr {

// One variant to convert: `value` read through metadata `metadata`
// (an index into the caller's metadata vector); `missing` for no value
// (a path that found nothing, a SQL NULL).
struct VariantItem {
  columnar::VariantValue value;
  int32_t metadata = -1;
  bool missing = true;
};

struct VariantCastArgs {
  bool fail_on_error = true;
  // The session time zone for timestamps (never null).
  const TimeZone* zone = nullptr;
  // The expression, for error messages.
  std::string_view context;
};

// Whether Spark allows CAST(variant AS to) (variant_get's target types).
bool CanCastFromVariant(const columnar::DataType& to);
// Whether Spark allows CAST(from AS VARIANT); `structs_and_maps` as
// to_variant_object allows them.
bool CanCastToVariant(const columnar::DataType& from, bool structs_and_maps);

// The column of `items` converted to `to`. Errors: InvalidArgument
// "[INVALID_VARIANT_CAST] ..." for the first invalid cast when
// fail_on_error; Corruption "[MALFORMED_VARIANT]" for unreadable bytes.
Result<columnar::ColumnPtr> VariantItemsToType(const std::vector<VariantItem>& items,
                                               const std::vector<columnar::VariantMetadata>& metas,
                                               const columnar::TypePtr& to,
                                               const VariantCastArgs& args);

// CAST(variant column AS to): the rows of `input` (a VARIANT column).
Result<columnar::ColumnPtr> CastVariantColumn(const columnar::Column& input,
                                              const columnar::TypePtr& to,
                                              const VariantCastArgs& args);

// CAST(input AS VARIANT), NULL rows staying NULL and NULLs inside becoming
// variant nulls. REQUIRES: CanCastToVariant(*input.type, true).
// Errors: InvalidArgument for a duplicate map key / the size limit.
Result<columnar::ColumnPtr> CastToVariantColumn(const columnar::Column& input);

// The JSON text of every row of a VARIANT column as Spark's to_json prints
// a variant (Variant.toJson in `zone`); NULL rows stay NULL.
// Errors: Corruption "[MALFORMED_VARIANT]" naming the row.
Result<columnar::ColumnPtr> VariantColumnToJson(const columnar::Column& input,
                                                const TimeZone& zone);
// Appends the JSON of row `row` (REQUIRES: valid). False when malformed.
bool AppendVariantRowJson(const columnar::Column& variant, int64_t row, const TimeZone& zone,
                          std::string* out);

// Offsets of `zone` for columnar::VariantJsonOptions.
columnar::VariantJsonOptions VariantJsonOptionsFor(const TimeZone& zone);

}  // namespace silt::expr
