// Variant columns in Parquet (VariantEncoding.md / VariantShredding.md):
// a variant is stored as a group with a binary `metadata`, a binary `value`
// and, when shredded, a `typed_value` holding parts of the value as typed
// Parquet columns. ParquetFileReader returns such a group as the struct it
// is; VariantFromParquet turns that struct into a VARIANT column, putting
// shredded objects, arrays and scalars back into the binary encoding.
//
// Thread safety: stateless functions.
#pragma once

#include "silt/base/result.h"
#include "silt/columnar/column.h"

namespace silt::parquet {

// Whether `type` (a struct as the reader maps a Parquet group) has the shape
// of a stored variant: a binary `metadata`, a binary `value` and/or a
// `typed_value` field, nothing else (fields matched by name).
bool IsVariantStorage(const columnar::DataType& type);

// The VARIANT column of a stored variant struct: NULL where the group is
// null; a row whose value and typed_value are both null is a variant null.
// Shredded fields are merged with the fields of a partially shredded
// object's `value`; a shredded field missing in a row is left out.
// Errors: Corruption naming the row when the bytes or the shredding are
// malformed (a typed_value of a type the encoding has no place for, a
// `value` that is not an object beside a shredded object).
// REQUIRES: IsVariantStorage(*storage.type).
Result<columnar::ColumnPtr> VariantFromParquet(const columnar::Column& storage);

}  // namespace silt::parquet
