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
// schema `table`. Columns match by name, case-insensitively, at every
// depth (struct fields, array elements, map keys and values). Table columns
// keep their order, names and types (data whose types differ only in
// nullability fits them, and so does data of a narrower type that widens
// to the column's, type_widening.h: the writer converts it); table columns
// the data lacks stay (they read as null). With `merge_schema`, columns
// only the data has are appended at the end (and fields only a nested
// struct of the data has are appended to that struct), as nullable;
// without it they are an error. With `merge_schema` and `type_widening`
// (the table's delta.enableTypeWidening), a column or nested field whose
// data type is a supported widening of its type (IsTypeChangeSupported)
// takes the data's type, and the change is appended to the
// delta.typeChanges metadata of its nearest struct field, as delta-spark 4
// records it. Returns `table` itself when nothing changes.
// Errors: InvalidArgument naming the column (dotted path) and both types
// when a column's type differs otherwise (saying what would widen it when
// the change is a supported widening), or naming a new column when
// merge_schema is off ("set mergeSchema to add it").
Result<columnar::SchemaPtr> MergeSchemaForAppend(const columnar::SchemaPtr& table,
                                                 const columnar::Schema& incoming,
                                                 bool merge_schema, bool type_widening = false);

}  // namespace silt::delta
