// Schema enforcement and evolution for appends (PROTOCOL.md "Schema
// Serialization Format"; Spark's mergeSchema write option): what a table's
// schema becomes when data of another schema is appended to it.
//
// Thread safety: pure functions.
#pragma once

#include "silt/base/result.h"
#include "silt/columnar/nullability.h"
#include "silt/columnar/types.h"

namespace silt::delta {

// AsNullable (columnar/nullability.h): a new table's schema, as delta-spark
// writes schema.asNullable.
using columnar::AsNullable;

// Whether `a` and `b` are the same type once nullability (of struct fields,
// array elements and map values, at any depth) is ignored; field names
// compare case-insensitively. Data whose nested nullability differs from a
// table column's is written to it as is: a nested NOT NULL is not enforced
// (top-level NOT NULL columns are, by AppendWriter).
bool SameTypeIgnoringNullability(const columnar::DataType& a, const columnar::DataType& b);

// The table schema after appending data of schema `incoming` to a table of
// schema `table`. Columns match by name, case-insensitively. Table columns
// keep their order, names and types (data whose types differ only in
// nullability fits them); table columns the data lacks stay (they read as
// null). With `merge_schema`, columns only the data has are appended
// at the end (and fields only a nested struct of the data has are appended
// to that struct), as nullable; without it they are an error.
// Returns `table` itself when nothing changes.
// Errors: InvalidArgument naming the column (dotted path) and both types
// when a column's type differs, or naming a new column when merge_schema is
// off ("set mergeSchema to add it").
Result<columnar::SchemaPtr> MergeSchemaForAppend(const columnar::SchemaPtr& table,
                                                 const columnar::Schema& incoming,
                                                 bool merge_schema);

}  // namespace silt::delta
